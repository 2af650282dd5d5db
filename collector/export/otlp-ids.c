/*
 * Trace and span ids.  Every id is derived from names the capture holds,
 * never drawn at random: the jobs of one CI pipeline, exported separately
 * on separate runners, land in one trace, and exporting a capture again
 * sends the same spans with the same ids, which backends store once
 * rather than as a second copy of the run.
 */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "export/otlp.h"

void pt_otlp_hex(const uint8_t *b, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int pt_otlp_unhex(const char *s, uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int h = hexdigit(s[2 * i]), l = h < 0 ? -1 : hexdigit(s[2 * i + 1]);

		if (h < 0 || l < 0)
			return -1;
		b[i] = (uint8_t)(h << 4 | l);
	}
	return s[2 * n] ? -1 : 0;
}

static int all_zero(const uint8_t *b, size_t n)
{
	while (n--)
		if (b[n])
			return 0;
	return 1;
}

/* FNV-1a over the bytes, then a strong finalizer (splitmix64's): ids need
 * spreading, not secrecy. */
static uint64_t hash64(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

static void put64(uint8_t *out, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)(v >> (56 - 8 * i));
}

void pt_otlp_id128(const char *name, size_t n, uint8_t out[16])
{
	put64(out, hash64(0xcbf29ce484222325ull, name, n));
	put64(out + 8, hash64(0x84222325cbf29ce4ull, name, n));
	if (all_zero(out, 16))
		out[15] = 1;
}

void pt_otlp_id64(const uint8_t seed[16], const char *name, uint64_t a,
		  uint64_t b, uint8_t out[8])
{
	uint64_t h = hash64(0xcbf29ce484222325ull, seed, 16);

	h = hash64(h, name, strlen(name));
	h = hash64(h, &a, sizeof a);
	h = hash64(h, &b, sizeof b);
	put64(out, h ? h : 1);
}

int pt_otlp_traceparent(const char *s, uint8_t trace[16], uint8_t parent[8])
{
	char t[33], p[17];

	/* version 00: exactly 55 characters; a later version may append
	 * fields after a '-', which are ignored. */
	if (!s || strlen(s) < 55 || s[2] != '-' || s[35] != '-' ||
	    s[52] != '-' || (s[55] && s[55] != '-') || !strncmp(s, "ff", 2))
		return -1;
	memcpy(t, s + 3, 32);
	t[32] = '\0';
	memcpy(p, s + 36, 16);
	p[16] = '\0';
	if (pt_otlp_unhex(t, trace, 16) < 0 || pt_otlp_unhex(p, parent, 8) < 0 ||
	    all_zero(trace, 16) || all_zero(parent, 8))
		return -1;
	return 0;
}

void pt_otlp_capture_seed(const struct pt_model *m, size_t c,
			  uint8_t out[16])
{
	static const char *const keys[] = { "host", "start_realtime_ns",
					    "start_monotonic_ns" };
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	pt_sb_addstr(&sb, "run");
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = pt_model_meta(m, c, keys[i]);

		pt_sb_addf(&sb, ":%s", v ? v : "");
	}
	pt_otlp_id128(sb.buf, sb.len, out);
	pt_sb_release(&sb);
}

/* The id of "kind:a" or "kind:a:b". */
static void named_id(uint8_t trace[16], const char *kind, const char *a,
		     const char *b)
{
	struct pt_sb sb = PT_SB_INIT;

	pt_sb_addf(&sb, "%s:%s", kind, a);
	if (b)
		pt_sb_addf(&sb, ":%s", b);
	pt_otlp_id128(sb.buf, sb.len, trace);
	pt_sb_release(&sb);
}

int pt_otlp_trace_id(const struct pt_model *m, size_t c, const char *user_id,
		     uint8_t trace[16], uint8_t parent[8], int *has_parent,
		     const char **how)
{
	const char *tp = pt_model_meta(m, c, "TRACEPARENT");
	const char *v;

	*has_parent = 0;
	if (user_id) {
		*how = "--trace-id";
		if (strlen(user_id) == 32 && !pt_otlp_unhex(user_id, trace, 16)) {
			if (all_zero(trace, 16)) {
				pt_warn("--trace-id: the all-zero id is invalid");
				return -1;
			}
		} else if (!*user_id) {
			pt_warn("--trace-id: empty");
			return -1;
		} else {
			named_id(trace, "user", user_id, NULL);
		}
		return 0;
	}
	if (!pt_otlp_traceparent(tp, trace, parent)) {
		*how = "TRACEPARENT";
		*has_parent = 1;
		return 0;
	}
	if ((v = pt_model_meta(m, c, "CI_PIPELINE_ID")) && *v) {
		*how = "CI_PIPELINE_ID";
		named_id(trace, "gitlab-pipeline", v, NULL);
		return 0;
	}
	if ((v = pt_model_meta(m, c, "GITHUB_RUN_ID")) && *v) {
		const char *attempt = pt_model_meta(m, c, "GITHUB_RUN_ATTEMPT");

		*how = "GITHUB_RUN_ID";
		named_id(trace, "github-run", v,
			 attempt && *attempt ? attempt : "1");
		return 0;
	}
	/* Outside CI: one trace per run, the same at every export. */
	*how = "capture";
	pt_otlp_capture_seed(m, c, trace);
	return 0;
}
