/*
 * Export to OpenTelemetry: the executions of a capture as spans, sent to
 * an OTLP/HTTP receiver (POST /v1/traces).
 *
 *   otlp-config.c  where to send and how: URL, OTEL_* environment
 *   otlp-ids.c     trace and span ids: derived, never random
 *   otlp-spans.c   the model as spans: folding, attributes, batches
 *   otlp-enc.c     a batch as protobuf or JSON (the OTLP encodings)
 *   otlp-http.c    the requests: gzip, retries, the overall deadline
 *
 * Typical use (cli/cmd-export.c):
 *   pt_otlp_opts_init(&o);  ...options...;  pt_otlp_config_env(&o, url);
 *   s = pt_otlp_sender_new(&o);
 *   pt_otlp_export_model(&o, s, &model, red, &summary);  (each capture)
 *   pt_otlp_sender_free(s);
 * A failing receiver never makes these abort or hang beyond the deadline:
 * they return -1 after one warning line.
 */
#ifndef PT_OTLP_H
#define PT_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "model/model.h"

enum pt_otlp_proto { PT_OTLP_PROTOBUF, PT_OTLP_JSON };

/* One "key=value" of OTEL_EXPORTER_OTLP_HEADERS or _RESOURCE_ATTRIBUTES. */
struct pt_otlp_kv {
	char *key, *value;
};

struct pt_otlp_opts {
	char *url;                      /* the full URL, .../v1/traces */
	enum pt_otlp_proto proto;
	int proto_set;                  /* by an option: the environment's
					 * OTEL_EXPORTER_OTLP_PROTOCOL yields */
	int gzip;                       /* Content-Encoding: gzip (default) */
	/* Headers to send: never printed, never stored. */
	struct pt_otlp_kv *headers;
	size_t nheaders;
	struct pt_otlp_kv *resource;    /* OTEL_RESOURCE_ATTRIBUTES */
	size_t nresource;
	const char *service_name;       /* NULL: resource's, or "proftrace" */
	const char *trace_id;           /* --trace-id, or NULL */
	long timeout_ms;                /* one request (OTEL_EXPORTER_OTLP_TIMEOUT) */
	long deadline_ms;               /* the whole export */
	int64_t min_duration_ns;        /* shorter executions are folded */
	size_t max_spans;               /* per capture, the root included;
					 * 0: no limit */
	size_t attr_max;                /* bytes of a string attribute, and
					 * of the command line's in all */
	size_t batch_spans, batch_bytes; /* a request's bounds */
	int quiet;
};

/* Defaults: protobuf, gzip, 10 s a request, 60 s in all, ... */
void pt_otlp_opts_init(struct pt_otlp_opts *o);

/*
 * Fill what the environment decides: the URL (url if not NULL, else
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT + "/v1/traces", else http://localhost:4318
 * + "/v1/traces"), the headers, the timeout, the service name and the
 * resource attributes.  Returns 0, or -1 after a one-line error (a URL
 * that is not http:// or https://, a malformed variable).  The values of
 * the headers never appear in a message.
 */
int pt_otlp_config_env(struct pt_otlp_opts *o, const char *url);

/*
 * The options every command that exports shares: --otlp[=URL] (URL also
 * as the next argument when it starts with http:// or https://),
 * --otlp-protocol, --otlp-min-duration MS, --otlp-max-spans N,
 * --otlp-deadline SECONDS, --trace-id ID.  If argv[*i] is one, consume it
 * (and its value, advancing *i) and return 1; 0 if it is not one; -1
 * after a one-line error for a bad value.  *enabled is set by --otlp,
 * *url to its URL (or left NULL).
 */
int pt_otlp_cli_option(struct pt_otlp_opts *o, int argc, char **argv,
		       int *i, int *enabled, const char **url);

/* The --help lines of those options. */
extern const char pt_otlp_cli_help[];

/*
 * OTEL_EXPORTER_OTLP_TRACES_NAME if set and not empty, else
 * OTEL_EXPORTER_OTLP_NAME, else NULL: the SDKs' order.
 */
const char *pt_otlp_env(const char *name);

/* Free what pt_otlp_config_env() allocated. */
void pt_otlp_opts_free(struct pt_otlp_opts *o);

/*
 * Parse "k1=v1,k2=v2" (the W3C baggage-like form of the OTEL_ variables,
 * values percent-decoded, blanks around keys and values trimmed) into
 * *out.  Returns the number of pairs, or -1 if an entry has no '='.
 */
long pt_otlp_parse_kv(const char *s, struct pt_otlp_kv **out);

/* ---- ids (otlp-ids.c) ---- */

/* Lowercase hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
void pt_otlp_hex(const uint8_t *b, size_t n, char *out);

/* Parse exactly 2n hex digits into b.  Returns 0 or -1. */
int pt_otlp_unhex(const char *s, uint8_t *b, size_t n);

/* 16 bytes from a name: the same name, the same id; never all zero. */
void pt_otlp_id128(const char *name, size_t n, uint8_t out[16]);

/* 8 bytes from a name and a number: never all zero. */
void pt_otlp_id64(const uint8_t seed[16], const char *name, uint64_t a,
		  uint64_t b, uint8_t out[8]);

/*
 * 16 bytes that name capture c of m alone (its host and start clocks):
 * the seed of its span ids, and its trace id outside CI.
 */
void pt_otlp_capture_seed(const struct pt_model *m, size_t c,
			  uint8_t out[16]);

/*
 * A W3C traceparent ("00-TRACEID-PARENTID-FLAGS"): returns 0 and the ids,
 * or -1 if s is not one (or holds all-zero ids).
 */
int pt_otlp_traceparent(const char *s, uint8_t trace[16], uint8_t parent[8]);

/*
 * The trace id of capture c of m, and how it was chosen ("--trace-id",
 * "TRACEPARENT", "CI_PIPELINE_ID", "GITHUB_RUN_ID" or "capture"), and the
 * parent of the run's root span from TRACEPARENT (*has_parent).
 * Returns -1 after a one-line error if user_id is neither 32 hex digits
 * nor a usable name.
 */
int pt_otlp_trace_id(const struct pt_model *m, size_t c, const char *user_id,
		     uint8_t trace[16], uint8_t parent[8], int *has_parent,
		     const char **how);

/* ---- spans as an encoding (otlp-enc.c) ---- */

enum pt_otlp_vtype { PT_OV_STR, PT_OV_INT, PT_OV_BOOL, PT_OV_STRS };

struct pt_otlp_attr {
	const char *key;
	enum pt_otlp_vtype type;
	const char *s;                  /* PT_OV_STR */
	size_t slen;
	int64_t i;                      /* PT_OV_INT, PT_OV_BOOL */
	const char *const *strs;        /* PT_OV_STRS: n strings, lens[] */
	const size_t *lens;
	size_t n;
};

struct pt_otlp_span {
	uint8_t trace_id[16], span_id[8], parent_id[8];
	int has_parent;
	const char *name;
	int64_t start_ns, end_ns;
	int error;                      /* status ERROR, with status_msg */
	const char *status_msg;
	const struct pt_otlp_attr *attrs;
	size_t nattrs;
};

/* A request's body as three parts, so that spans are written once. */
struct pt_otlp_batch {
	struct pt_sb head, spans, tail;
	size_t nspans;
	struct pt_sb tmp;               /* the encoders' scratch */
};

#define PT_OTLP_BATCH_INIT { PT_SB_INIT, PT_SB_INIT, PT_SB_INIT, 0, PT_SB_INIT }

/* Append one span to b->spans.  Strings are made valid UTF-8. */
void pt_otlp_enc_span(enum pt_otlp_proto p, struct pt_otlp_batch *b,
		      const struct pt_otlp_span *s);

/*
 * Write b->head and b->tail around the spans: one ResourceSpans with the
 * resource's attributes and one ScopeSpans of scope "proftrace".
 */
void pt_otlp_enc_wrap(enum pt_otlp_proto p, struct pt_otlp_batch *b,
		      const struct pt_otlp_attr *res, size_t nres);

/* Empty b for the next batch (keeping its memory). */
void pt_otlp_batch_reset(struct pt_otlp_batch *b);

/* Release b's memory. */
void pt_otlp_batch_free(struct pt_otlp_batch *b);

/* ---- sending (otlp-http.c) ---- */

struct pt_otlp_sender;

/* A sender for o (which must outlive it); starts the overall deadline. */
struct pt_otlp_sender *pt_otlp_sender_new(const struct pt_otlp_opts *o);

/*
 * POST b (gzip'd unless o->gzip is 0), retrying 429, 502, 503, 504 and
 * failed connections with backoff (Retry-After honoured) until the
 * request succeeds, fails for good, or the deadline passes.  The request
 * is made by the sender's thread while the caller goes on: b's contents
 * are taken, and b is left with buffers to reuse (pt_otlp_batch_reset()
 * it).  Returns -1 if an earlier request has failed, else 0: call
 * pt_otlp_sender_wait() for the outcome of the last.  The first failure
 * prints one warning line, and later calls return -1 at once (the
 * receiver is not hammered for each batch).
 */
int pt_otlp_post(struct pt_otlp_sender *s, struct pt_otlp_batch *b);

/* Wait for the request under way; 0, or -1 if any request failed. */
int pt_otlp_sender_wait(struct pt_otlp_sender *s);

/* Requests made (retries included), and retries. */
void pt_otlp_sender_counts(const struct pt_otlp_sender *s,
			   unsigned long *requests, unsigned long *retries,
			   uint64_t *bytes);

void pt_otlp_sender_free(struct pt_otlp_sender *s);

/* ---- the model as spans (otlp-spans.c) ---- */

struct pt_otlp_summary {
	uint64_t executions, spans, folded_short, folded_over, batches;
	int64_t threshold_ns;           /* of the --otlp-max-spans fold */
	int failed;                     /* some batch was not delivered */
	char trace_hex[33];             /* the last capture's trace id */
	const char *trace_how;          /* and where it came from */
};

/*
 * Send every execution of m as spans through s, capture by capture,
 * adding to *sum.  A lean model's command lines (pt_model_set_lean) are
 * read again from each capture's "file" as the spans go, and masked with
 * red (NULL: not masked); a full model's were masked when it was loaded.
 * Returns 0, or -1 if a batch could not be delivered (warned; the rest is
 * not tried) or an option was bad.
 */
struct pt_redact;
int pt_otlp_export_model(const struct pt_otlp_opts *o,
			 struct pt_otlp_sender *s, const struct pt_model *m,
			 const struct pt_redact *red,
			 struct pt_otlp_summary *sum);

/* ---- a run's end (otlp-run.c) ---- */

/*
 * "proftrace: NAME: N executions sent as N spans in trace ... (from
 * ...); folded ...", one line through pt_warn().
 */
void pt_otlp_print_summary(const struct pt_otlp_opts *o, const char *name,
			   const struct pt_otlp_summary *s);

/*
 * record --otlp / daemon --otlp: send m (the finished, redacted run) to
 * url (NULL: the OTEL_ variables decide) with the defaults of export.
 * Returns 0 even when the receiver failed, after one warning line: the
 * run itself went well, and its capture is kept for proftrace export.
 * -1 only for a bad configuration (after a one-line error).
 */
int pt_otlp_finish(const struct pt_model *m, const char *url);

/*
 * What pt_otlp_finish(m, url) will find of its configuration, checked
 * before the run: 0, or -1 after the one-line error it would give.
 */
int pt_otlp_config_check(const char *url);

#endif
