/*
 * The OTLP encodings of a batch of spans (opentelemetry-proto, trace/v1
 * and collector/trace/v1): protobuf, the default, and the JSON mapping
 * of OTLP/HTTP, which differs from protobuf's canonical JSON in two
 * ways that receivers insist on: trace and span ids are hex, not base64,
 * and enums are numbers.  64-bit integers are strings in both mappings.
 *
 * A body is ExportTraceServiceRequest { ResourceSpans { Resource,
 * ScopeSpans { InstrumentationScope, Span... } } }; the spans are
 * written as they come (b->spans) and the head and tail around them once
 * the batch is complete, so no span is copied to nest it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/pbuf.h"
#include "base/quote.h"
#include "base/utf8.h"
#include "export/otlp.h"
#include "pt-config.h"

/* Field numbers of opentelemetry-proto (v1). */
enum {
	REQ_RESOURCE_SPANS = 1,
	RS_RESOURCE = 1, RS_SCOPE_SPANS = 2,
	RES_ATTRIBUTES = 1,
	SS_SCOPE = 1, SS_SPANS = 2,
	SCOPE_NAME = 1, SCOPE_VERSION = 2,
	SPAN_TRACE_ID = 1, SPAN_SPAN_ID = 2, SPAN_PARENT_SPAN_ID = 4,
	SPAN_NAME = 5, SPAN_KIND = 6, SPAN_START = 7, SPAN_END = 8,
	SPAN_ATTRIBUTES = 9, SPAN_STATUS = 15,
	STATUS_MESSAGE = 2, STATUS_CODE = 3,
	KV_KEY = 1, KV_VALUE = 2,
	AV_STRING = 1, AV_BOOL = 2, AV_INT = 3, AV_ARRAY = 5,
	ARRAY_VALUES = 1,
};

#define SPAN_KIND_INTERNAL 1
#define STATUS_CODE_ERROR 2

/* ---- UTF-8: protobuf strings must be valid (Go receivers reject the
 * whole request otherwise); each stray byte becomes U+FFFD, as in the
 * JSON views. ---- */

static void pb_text(struct pt_sb *sb, uint32_t field, const char *s,
		    size_t n, struct pt_sb *tmp)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;

	while (i < n && (l = pt_utf8_len(p + i, n - i)))
		i += l;
	if (i == n) {
		pt_pb_bytes(sb, field, s, n);
		return;
	}
	pt_sb_reset(tmp);
	pt_sb_add(tmp, s, i);
	while (i < n) {
		l = pt_utf8_len(p + i, n - i);
		if (l) {
			pt_sb_add(tmp, p + i, l);
			i += l;
		} else {
			pt_sb_add(tmp, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	pt_pb_bytes(sb, field, tmp->buf, tmp->len);
}

/* ---- protobuf (base/pbuf.h) ---- */

static void pb_attr(struct pt_sb *sb, uint32_t field,
		    const struct pt_otlp_attr *a, struct pt_sb *scratch)
{
	size_t kv, value, array, item, i;

	kv = pt_pb_open(sb, field);
	pt_pb_str(sb, KV_KEY, a->key);
	value = pt_pb_open(sb, KV_VALUE);
	switch (a->type) {
	case PT_OV_STR:
		pb_text(sb, AV_STRING, a->s, a->slen, scratch);
		break;
	case PT_OV_INT:
		pt_pb_int(sb, AV_INT, a->i);
		break;
	case PT_OV_BOOL:
		pt_pb_uint(sb, AV_BOOL, a->i != 0);
		break;
	case PT_OV_STRS:
		array = pt_pb_open(sb, AV_ARRAY);
		for (i = 0; i < a->n; i++) {
			item = pt_pb_open(sb, ARRAY_VALUES);
			pb_text(sb, AV_STRING, a->strs[i], a->lens[i], scratch);
			pt_pb_close(sb, item);
		}
		pt_pb_close(sb, array);
		break;
	}
	pt_pb_close(sb, value);
	pt_pb_close(sb, kv);
}

static void pb_span(struct pt_otlp_batch *b, const struct pt_otlp_span *s)
{
	struct pt_sb *sb = &b->spans, *scratch = &b->tmp;
	size_t span, status, i;

	span = pt_pb_open(sb, SS_SPANS);
	pt_pb_bytes(sb, SPAN_TRACE_ID, s->trace_id, 16);
	pt_pb_bytes(sb, SPAN_SPAN_ID, s->span_id, 8);
	if (s->has_parent)
		pt_pb_bytes(sb, SPAN_PARENT_SPAN_ID, s->parent_id, 8);
	pb_text(sb, SPAN_NAME, s->name, strlen(s->name), scratch);
	pt_pb_uint(sb, SPAN_KIND, SPAN_KIND_INTERNAL);
	pt_pb_fixed64(sb, SPAN_START, (uint64_t)s->start_ns);
	pt_pb_fixed64(sb, SPAN_END, (uint64_t)s->end_ns);
	for (i = 0; i < s->nattrs; i++)
		pb_attr(sb, SPAN_ATTRIBUTES, &s->attrs[i], scratch);
	if (s->error) {
		status = pt_pb_open(sb, SPAN_STATUS);
		if (s->status_msg)
			pb_text(sb, STATUS_MESSAGE, s->status_msg,
				strlen(s->status_msg), scratch);
		pt_pb_uint(sb, STATUS_CODE, STATUS_CODE_ERROR);
		pt_pb_close(sb, status);
	}
	pt_pb_close(sb, span);
}

/* The tag and length of a field whose n bytes are written elsewhere. */
static void pb_len_prefix(struct pt_sb *sb, uint32_t field, size_t n)
{
	pt_pb_tag(sb, field, PT_PB_LEN);
	pt_pb_raw_varint(sb, n);
}

static void pb_wrap(struct pt_otlp_batch *b, const struct pt_otlp_attr *res,
		    size_t nres)
{
	struct pt_sb resource = PT_SB_INIT, scope = PT_SB_INIT;
	size_t i, mark, scope_spans, resource_spans;

	mark = pt_pb_open(&resource, RS_RESOURCE);
	for (i = 0; i < nres; i++)
		pb_attr(&resource, RES_ATTRIBUTES, &res[i], &b->tmp);
	pt_pb_close(&resource, mark);
	mark = pt_pb_open(&scope, SS_SCOPE);
	pt_pb_str(&scope, SCOPE_NAME, "proftrace");
	pt_pb_str(&scope, SCOPE_VERSION, PT_VERSION);
	pt_pb_close(&scope, mark);
	/* The lengths of the two enclosing messages, spans included. */
	scope_spans = scope.len + b->spans.len;
	resource_spans = resource.len + 1 + pt_pb_varint_len(scope_spans) +
			 scope_spans;
	pt_sb_reset(&b->head);
	pb_len_prefix(&b->head, REQ_RESOURCE_SPANS, resource_spans);
	pt_sb_add(&b->head, resource.buf, resource.len);
	pb_len_prefix(&b->head, RS_SCOPE_SPANS, scope_spans);
	pt_sb_add(&b->head, scope.buf, scope.len);
	pt_sb_reset(&b->tail);
	pt_sb_release(&resource);
	pt_sb_release(&scope);
}

/* ---- JSON ---- */

static void js_str(struct pt_sb *sb, const char *s, size_t n)
{
	pt_quote_json(sb, s, n, PT_JSON_TEXT);
}

static void js_attr(struct pt_sb *sb, const struct pt_otlp_attr *a)
{
	size_t i;

	pt_sb_addstr(sb, "{\"key\":");
	js_str(sb, a->key, strlen(a->key));
	pt_sb_addstr(sb, ",\"value\":{");
	switch (a->type) {
	case PT_OV_STR:
		pt_sb_addstr(sb, "\"stringValue\":");
		js_str(sb, a->s, a->slen);
		break;
	case PT_OV_INT:
		pt_sb_addf(sb, "\"intValue\":\"%" PRId64 "\"", a->i);
		break;
	case PT_OV_BOOL:
		pt_sb_addstr(sb, a->i ? "\"boolValue\":true" :
					"\"boolValue\":false");
		break;
	case PT_OV_STRS:
		pt_sb_addstr(sb, "\"arrayValue\":{\"values\":[");
		for (i = 0; i < a->n; i++) {
			pt_sb_addstr(sb, i ? ",{\"stringValue\":" :
					     "{\"stringValue\":");
			js_str(sb, a->strs[i], a->lens[i]);
			pt_sb_addch(sb, '}');
		}
		pt_sb_addstr(sb, "]}");
		break;
	}
	pt_sb_addstr(sb, "}}");
}

static void js_attrs(struct pt_sb *sb, const struct pt_otlp_attr *a,
		     size_t n)
{
	size_t i;

	pt_sb_addstr(sb, "\"attributes\":[");
	for (i = 0; i < n; i++) {
		if (i)
			pt_sb_addch(sb, ',');
		js_attr(sb, &a[i]);
	}
	pt_sb_addch(sb, ']');
}

static void js_span(struct pt_otlp_batch *b, const struct pt_otlp_span *s)
{
	struct pt_sb *sb = &b->spans;
	char hex[33];

	if (b->nspans)
		pt_sb_addch(sb, ',');
	pt_otlp_hex(s->trace_id, 16, hex);
	pt_sb_addf(sb, "{\"traceId\":\"%s\"", hex);
	pt_otlp_hex(s->span_id, 8, hex);
	pt_sb_addf(sb, ",\"spanId\":\"%s\"", hex);
	if (s->has_parent) {
		pt_otlp_hex(s->parent_id, 8, hex);
		pt_sb_addf(sb, ",\"parentSpanId\":\"%s\"", hex);
	}
	pt_sb_addstr(sb, ",\"name\":");
	js_str(sb, s->name, strlen(s->name));
	pt_sb_addf(sb, ",\"kind\":%d,\"startTimeUnixNano\":\"%" PRId64
		   "\",\"endTimeUnixNano\":\"%" PRId64 "\",",
		   SPAN_KIND_INTERNAL, s->start_ns, s->end_ns);
	js_attrs(sb, s->attrs, s->nattrs);
	if (s->error) {
		pt_sb_addstr(sb, ",\"status\":{");
		if (s->status_msg) {
			pt_sb_addstr(sb, "\"message\":");
			js_str(sb, s->status_msg, strlen(s->status_msg));
			pt_sb_addch(sb, ',');
		}
		pt_sb_addf(sb, "\"code\":%d}", STATUS_CODE_ERROR);
	}
	pt_sb_addch(sb, '}');
}

static void js_wrap(struct pt_otlp_batch *b, const struct pt_otlp_attr *res,
		    size_t nres)
{
	pt_sb_reset(&b->head);
	pt_sb_addstr(&b->head, "{\"resourceSpans\":[{\"resource\":{");
	js_attrs(&b->head, res, nres);
	pt_sb_addstr(&b->head, "},\"scopeSpans\":[{\"scope\":{\"name\":"
		     "\"proftrace\",\"version\":\"" PT_VERSION "\"},"
		     "\"spans\":[");
	pt_sb_reset(&b->tail);
	pt_sb_addstr(&b->tail, "]}]}]}");
}

/* ---- both ---- */

void pt_otlp_enc_span(enum pt_otlp_proto p, struct pt_otlp_batch *b,
		      const struct pt_otlp_span *s)
{
	if (p == PT_OTLP_JSON)
		js_span(b, s);
	else
		pb_span(b, s);
	b->nspans++;
}

void pt_otlp_enc_wrap(enum pt_otlp_proto p, struct pt_otlp_batch *b,
		      const struct pt_otlp_attr *res, size_t nres)
{
	if (p == PT_OTLP_JSON)
		js_wrap(b, res, nres);
	else
		pb_wrap(b, res, nres);
}

void pt_otlp_batch_reset(struct pt_otlp_batch *b)
{
	pt_sb_reset(&b->head);
	pt_sb_reset(&b->spans);
	pt_sb_reset(&b->tail);
	b->nspans = 0;
}

void pt_otlp_batch_free(struct pt_otlp_batch *b)
{
	pt_sb_release(&b->head);
	pt_sb_release(&b->spans);
	pt_sb_release(&b->tail);
	pt_sb_release(&b->tmp);
	b->nspans = 0;
}
