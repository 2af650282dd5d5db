/*
 * Where and how to export: the URL and the OpenTelemetry SDK's
 * environment variables, read the way the SDKs read them, so that a CI
 * job that already sets them for its other exporters needs nothing more.
 */
#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "export/otlp.h"

#define DEFAULT_ENDPOINT "http://localhost:4318"

void pt_otlp_opts_init(struct pt_otlp_opts *o)
{
	memset(o, 0, sizeof *o);
	o->proto = PT_OTLP_PROTOBUF;
	o->gzip = 1;
	o->timeout_ms = 10000;          /* the SDKs' default */
	o->deadline_ms = 60000;
	o->min_duration_ns = 0;
	o->max_spans = 10000;           /* Jaeger's UI slows past ~15,000 */
	o->attr_max = 2048;             /* Tempo truncates beyond 2 KB */
	o->batch_spans = 2048;
	o->batch_bytes = 4u << 20;      /* receivers take 4 MiB (gRPC's cap) */
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s[0..n) trimmed of blanks and percent-decoded, as a new string. */
static char *decode(const char *s, size_t n)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	for (i = 0; i < n; i++) {
		int h, l;

		if (s[i] == '%' && i + 2 < n &&
		    (h = hexval(s[i + 1])) >= 0 &&
		    (l = hexval(s[i + 2])) >= 0) {
			pt_sb_addch(&sb, (char)(h << 4 | l));
			i += 2;
		} else {
			pt_sb_addch(&sb, s[i]);
		}
	}
	return pt_sb_detach(&sb, NULL);
}

static void kv_free(struct pt_otlp_kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

long pt_otlp_parse_kv(const char *s, struct pt_otlp_kv **out)
{
	struct pt_otlp_kv *kv = NULL;
	size_t n = 0;

	*out = NULL;
	while (s && *s) {
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);
		size_t blank = strspn(s, " \t");

		if (blank < len) {
			if (!eq) {
				kv_free(kv, n);
				return -1;
			}
			kv = pt_xrealloc(kv, (n + 1) * sizeof *kv);
			kv[n].key = decode(s, (size_t)(eq - s));
			kv[n].value = decode(eq + 1, len - (size_t)(eq - s) - 1);
			n++;
		}
		s += len;
		if (*s == ',')
			s++;
	}
	*out = kv;
	return (long)n;
}

const char *pt_otlp_env(const char *name)
{
	char var[64];
	const char *v;

	snprintf(var, sizeof var, "OTEL_EXPORTER_OTLP_TRACES_%s", name);
	v = getenv(var);
	if (v && *v)
		return v;
	snprintf(var, sizeof var, "OTEL_EXPORTER_OTLP_%s", name);
	v = getenv(var);
	return v && *v ? v : NULL;
}

/* A positive integer (milliseconds, bytes). */
static int parse_pos(const char *name, const char *v, const char *what,
		     long *out)
{
	char *end;
	long ms;

	ms = strtol(v, &end, 10);
	if (end == v || *end || ms <= 0) {
		pt_warn("%s: '%s' is not %s", name, v, what);
		return -1;
	}
	*out = ms;
	return 0;
}

static int is_http_url(const char *u)
{
	return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8);
}

static int set_protocol(struct pt_otlp_opts *o, const char *v)
{
	if (!strcmp(v, "http/protobuf"))
		o->proto = PT_OTLP_PROTOBUF;
	else if (!strcmp(v, "http/json"))
		o->proto = PT_OTLP_JSON;
	else {
		pt_warn("OTLP protocol '%s' is not supported (known: "
			"http/protobuf, http/json)", v);
		return -1;
	}
	return 0;
}

/* Whether u names a path beyond its host ("http://h:4318/x"). */
static int has_path(const char *u)
{
	const char *host = strstr(u, "://") + 3;
	const char *slash = strchr(host, '/');

	return slash && slash[1];
}

/* The URL to post to: the signal-specific variable is used as it is,
 * the generic one (and the default) gets the path /v1/traces, and so
 * does --otlp's URL when it has no path of its own. */
static char *endpoint(const char *url)
{
	const char *v;
	struct pt_sb sb = PT_SB_INIT;

	if (url && (!is_http_url(url) || has_path(url)))
		return pt_xstrdup(url);
	v = url;
	if (v)
		goto generic;
	v = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	if (v && *v)
		return pt_xstrdup(v);  /* as it is: no path added */
	v = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!v || !*v)
		v = DEFAULT_ENDPOINT;
generic:
	pt_sb_addstr(&sb, v);
	while (sb.len && sb.buf[sb.len - 1] == '/')
		sb.buf[--sb.len] = '\0';
	pt_sb_addstr(&sb, "/v1/traces");
	return pt_sb_detach(&sb, NULL);
}

/* A "k=v,..." variable into *out; the message never quotes the value,
 * which may hold a key. */
static int kv_var(const char *name, const char *v, struct pt_otlp_kv **out,
		  size_t *n)
{
	long r = pt_otlp_parse_kv(v, out);

	if (r < 0) {
		pt_warn("%s: an entry has no '=' (expected name=value,...)",
			name);
		return -1;
	}
	*n = (size_t)r;
	return 0;
}

/*
 * Headers go onto the request as "name: value" lines: a name that is not
 * an HTTP token, or a control character in a value (a CR LF decoded from
 * %0d%0a), would add lines of its own.  The value is never printed: it
 * is typically a key.
 */
static int headers_ok(const struct pt_otlp_kv *kv, size_t n)
{
	static const char *const seps = "()<>@,;:\\\"/[]?={} \t";

	for (size_t i = 0; i < n; i++) {
		const unsigned char *c;

		for (c = (const unsigned char *)kv[i].key; *c; c++)
			if (*c <= 32 || *c >= 127 || strchr(seps, *c))
				break;
		if (*c || !*kv[i].key) {
			pt_warn("OTEL_EXPORTER_OTLP_HEADERS: a header name that "
				"is not an HTTP token");
			return 0;
		}
		for (c = (const unsigned char *)kv[i].value; *c; c++)
			if ((*c < 32 && *c != '\t') || *c == 127) {
				pt_warn("OTEL_EXPORTER_OTLP_HEADERS: the value of "
					"%s holds a control character",
					kv[i].key);
				return 0;
			}
	}
	return 1;
}

int pt_otlp_config_env(struct pt_otlp_opts *o, const char *url)
{
	const char *v;

	o->url = endpoint(url);
	if (!is_http_url(o->url)) {
		pt_warn("OTLP endpoint '%s' is not an http:// or https:// URL",
			o->url);
		return -1;
	}
	if (kv_var("OTEL_EXPORTER_OTLP_HEADERS", pt_otlp_env("HEADERS"),
		   &o->headers, &o->nheaders) < 0 ||
	    !headers_ok(o->headers, o->nheaders))
		return -1;
	v = pt_otlp_env("TIMEOUT");
	if (v && parse_pos("OTEL_EXPORTER_OTLP_TIMEOUT", v,
				 "a timeout in milliseconds", &o->timeout_ms) < 0)
		return -1;
	if (kv_var("OTEL_RESOURCE_ATTRIBUTES", getenv("OTEL_RESOURCE_ATTRIBUTES"),
		   &o->resource, &o->nresource) < 0)
		return -1;
	v = pt_otlp_env("PROTOCOL");
	if (v && !o->proto_set && set_protocol(o, v) < 0)
		return -1;
	v = pt_otlp_env("COMPRESSION");
	if (v && !strcmp(v, "none"))
		o->gzip = 0;
	else if (v && strcmp(v, "gzip")) {
		pt_warn("OTEL_EXPORTER_OTLP_COMPRESSION: '%s' is not gzip or "
			"none", v);
		return -1;
	}
	v = getenv("OTEL_SERVICE_NAME");
	if (v && *v)
		o->service_name = v;
	v = getenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT");
	if (v && *v) {
		long lim;

		if (parse_pos("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", v,
			      "a number of bytes", &lim) < 0)
			return -1;
		o->attr_max = (size_t)lim;
	}
	return 0;
}

void pt_otlp_opts_free(struct pt_otlp_opts *o)
{
	free(o->url);
	kv_free(o->headers, o->nheaders);
	kv_free(o->resource, o->nresource);
	o->url = NULL;
	o->headers = o->resource = NULL;
	o->nheaders = o->nresource = 0;
}

const char pt_otlp_cli_help[] =
	"  --otlp[=URL]          send to an OTLP/HTTP receiver (default: the\n"
	"                        OTEL_EXPORTER_OTLP_* variables, else\n"
	"                        http://localhost:4318)\n"
	"  --otlp-protocol P     http/protobuf (default) or http/json\n"
	"  --otlp-min-duration MS  fold executions shorter than MS\n"
	"                        milliseconds into their parent (default 0)\n"
	"  --otlp-max-spans N    at most N spans a run, the shortest folded\n"
	"                        (default 10000; 0: no limit)\n"
	"  --otlp-deadline S     give up after S seconds in all (default 60)\n"
	"  --trace-id ID         the trace: 32 hex digits, or a name to derive\n"
	"                        it from (default: from the CI pipeline)\n";

/* "--name VALUE" or "--name=VALUE": the value, or NULL if argv[*i] is
 * not the option; *bad when the value is missing. */
static const char *long_value(int argc, char **argv, int *i,
			      const char *name, int *bad)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc) {
		pt_warn("%s needs a value", name);
		*bad = 1;
		return NULL;
	}
	return argv[++*i];
}

/* A whole number of [min, max]: the bound keeps the unit's conversion
 * (ms to ns, s to ms) within its type. */
static int whole(const char *name, const char *v, long long min,
		 long long max, long long *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (end == v || *end || errno || n < min || n > max) {
		pt_warn("%s: '%s' is not a whole number from %lld to %lld",
			name, v, min, max);
		return -1;
	}
	*out = n;
	return 0;
}

int pt_otlp_cli_option(struct pt_otlp_opts *o, int argc, char **argv,
		       int *i, int *enabled, const char **url)
{
	const char *a = argv[*i], *v;
	long long n;
	int bad = 0;

	if (!strcmp(a, "--otlp") || !strncmp(a, "--otlp=", 7)) {
		*enabled = 1;
		if (a[6] == '=')
			*url = a + 7;
		else if (*i + 1 < argc && is_http_url(argv[*i + 1]))
			*url = argv[++*i];
		if (*url && !is_http_url(*url)) {
			pt_warn("--otlp: '%s' is not an http:// or https:// "
				"URL", *url);
			return -1;
		}
		return 1;
	}
	if ((v = long_value(argc, argv, i, "--otlp-protocol", &bad))) {
		o->proto_set = 1;
		return set_protocol(o, v) < 0 ? -1 : 1;
	}
	if (!bad && (v = long_value(argc, argv, i, "--otlp-min-duration",
				    &bad))) {
		if (whole("--otlp-min-duration", v, 0, 1000000000, &n) < 0)
			return -1;
		o->min_duration_ns = (int64_t)n * 1000000;
		return 1;
	}
	if (!bad && (v = long_value(argc, argv, i, "--otlp-max-spans", &bad))) {
		if (whole("--otlp-max-spans", v, 0, 1000000000000, &n) < 0)
			return -1;
		if (n == 1) {
			pt_warn("--otlp-max-spans: at least 2 (the run's own "
				"span and one more), or 0 for no limit");
			return -1;
		}
		o->max_spans = (size_t)n;
		return 1;
	}
	if (!bad && (v = long_value(argc, argv, i, "--otlp-deadline", &bad))) {
		if (whole("--otlp-deadline", v, 1, 1000000, &n) < 0)
			return -1;
		o->deadline_ms = (long)n * 1000;
		return 1;
	}
	if (!bad && (v = long_value(argc, argv, i, "--trace-id", &bad))) {
		if (!*v) {
			pt_warn("--trace-id: empty");
			return -1;
		}
		o->trace_id = v;
		return 1;
	}
	return bad ? -1 : 0;
}
