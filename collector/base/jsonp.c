/* A small bounded JSON parser; see jsonp.h. */
#include "base/jsonp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quote.h"

#define MAX_DEPTH  64
#define MAX_NODES  (1u << 16)           /* per value */
#define MAX_STRS   (4u << 20)           /* string bytes per value */

void pt_jp_init(struct pt_jp *jp, const char *buf, size_t len)
{
	memset(jp, 0, sizeof *jp);
	jp->p = jp->start = buf;
	jp->end = buf + len;
	pt_sb_init(&jp->strs);
}

void pt_jp_free(struct pt_jp *jp)
{
	free(jp->node);
	pt_sb_release(&jp->strs);
	jp->node = NULL;
}

void pt_jp_reset(struct pt_jp *jp)
{
	jp->nnode = 0;
	pt_sb_reset(&jp->strs);
}

static void fail(struct pt_jp *jp, const char *why)
{
	if (jp->err)
		return;
	jp->err = jp->p >= jp->end ? "the file ends inside a value" : why;
	jp->cut = jp->p >= jp->end;
	jp->err_at = (size_t)(jp->p - jp->start);
}

static void ws(struct pt_jp *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\n' ||
				   *jp->p == '\r' || *jp->p == '\t'))
		jp->p++;
}

static int peek(struct pt_jp *jp)
{
	ws(jp);
	return jp->p < jp->end ? (unsigned char)*jp->p : -1;
}

static int eat(struct pt_jp *jp, char c)
{
	if (peek(jp) != (unsigned char)c)
		return 0;
	jp->p++;
	return 1;
}

static uint32_t new_node(struct pt_jp *jp, enum pt_jtype type)
{
	if (jp->nnode >= MAX_NODES) {
		fail(jp, "a value with too many members");
		return PT_J_NONE;
	}
	if (jp->nnode == jp->cnode) {
		jp->cnode = jp->cnode ? 2 * jp->cnode : 64;
		jp->node = pt_xrealloc(jp->node, jp->cnode * sizeof *jp->node);
	}
	memset(&jp->node[jp->nnode], 0, sizeof *jp->node);
	jp->node[jp->nnode].type = type;
	jp->node[jp->nnode].first = jp->node[jp->nnode].next = PT_J_NONE;
	return jp->nnode++;
}

static int hex4(const char *p, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if ((c | 32) >= 'a' && (c | 32) <= 'f')
			*v |= (unsigned)((c | 32) - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

static void put_utf8(struct pt_sb *sb, unsigned c)
{
	char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	pt_sb_add(sb, b, n);
}

/* A string at jp->p (after its quote) into the pool; -1 on error. */
static int string(struct pt_jp *jp, uint32_t *off, uint32_t *len)
{
	struct pt_sb *sb = &jp->strs;
	size_t at = sb->len;

	for (;;) {
		const char *q = jp->p;
		unsigned c, lo;

		while (q < jp->end && *q != '"' && *q != '\\' &&
		       (unsigned char)*q >= 0x20)
			q++;
		pt_sb_add(sb, jp->p, (size_t)(q - jp->p));
		jp->p = q;
		if (sb->len - at > MAX_STRS) {
			fail(jp, "strings too long");
			return -1;
		}
		if (q >= jp->end || (unsigned char)*q < 0x20) {
			fail(jp, "a control character in a string");
			return -1;
		}
		jp->p++;
		if (*q == '"')
			break;
		if (jp->p >= jp->end) {
			fail(jp, "");
			return -1;
		}
		switch (*jp->p++) {
		case '"':  pt_sb_addch(sb, '"'); break;
		case '\\': pt_sb_addch(sb, '\\'); break;
		case '/':  pt_sb_addch(sb, '/'); break;
		case 'b':  pt_sb_addch(sb, '\b'); break;
		case 'f':  pt_sb_addch(sb, '\f'); break;
		case 'n':  pt_sb_addch(sb, '\n'); break;
		case 'r':  pt_sb_addch(sb, '\r'); break;
		case 't':  pt_sb_addch(sb, '\t'); break;
		case 'u':
			if (jp->end - jp->p < 4 || hex4(jp->p, &c) < 0) {
				fail(jp, "a bad \\u escape");
				return -1;
			}
			jp->p += 4;
			/* A surrogate pair is one character; a lone half
			 * becomes U+FFFD. */
			if (c >= 0xd800 && c < 0xdc00 && jp->end - jp->p >= 6 &&
			    jp->p[0] == '\\' && jp->p[1] == 'u' &&
			    hex4(jp->p + 2, &lo) == 0 && lo >= 0xdc00 &&
			    lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				jp->p += 6;
			} else if (c >= 0xd800 && c < 0xe000) {
				c = 0xfffd;
			}
			put_utf8(sb, c);
			break;
		default:
			jp->p--;
			fail(jp, "a bad escape");
			return -1;
		}
	}
	*off = (uint32_t)at;
	*len = (uint32_t)(sb->len - at);
	pt_sb_addch(sb, '\0');
	return 0;
}

static int number(struct pt_jp *jp, double *v)
{
	char buf[64], *end;
	const char *q = jp->p;
	size_t n;

	while (q < jp->end && ((*q >= '0' && *q <= '9') || *q == '-' ||
			       *q == '+' || *q == '.' || *q == 'e' || *q == 'E'))
		q++;
	n = (size_t)(q - jp->p);
	if (n == 0 || n >= sizeof buf || q >= jp->end) {
		/* A number that ends the input may have lost digits. */
		if (q >= jp->end)
			jp->p = q;
		fail(jp, "a bad number");
		return -1;
	}
	memcpy(buf, jp->p, n);
	buf[n] = '\0';
	*v = strtod(buf, &end);
	if (end != buf + n) {
		fail(jp, "a bad number");
		return -1;
	}
	jp->p = q;
	return 0;
}

static int word(struct pt_jp *jp, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, w, n)) {
		if ((size_t)(jp->end - jp->p) < n &&
		    !memcmp(jp->p, w, (size_t)(jp->end - jp->p)))
			jp->p = jp->end;
		fail(jp, "an unknown word");
		return -1;
	}
	jp->p += n;
	return 0;
}

uint32_t pt_jp_value(struct pt_jp *jp)
{
	uint32_t i = PT_J_NONE, last = PT_J_NONE, kid, koff = 0, klen = 0;
	int c = peek(jp), obj;

	if (jp->err)
		return PT_J_NONE;
	switch (c) {
	case '{':
	case '[':
		obj = c == '{';
		if (++jp->depth > MAX_DEPTH) {
			fail(jp, "nested too deep");
			return PT_J_NONE;
		}
		jp->p++;
		if ((i = new_node(jp, obj ? PT_J_OBJ : PT_J_ARR)) == PT_J_NONE)
			return PT_J_NONE;
		if (eat(jp, obj ? '}' : ']')) {
			jp->depth--;
			return i;
		}
		do {
			if (obj) {
				if (!eat(jp, '"') || string(jp, &koff, &klen) < 0 ||
				    !eat(jp, ':')) {
					fail(jp, "a bad object key");
					return PT_J_NONE;
				}
			}
			if ((kid = pt_jp_value(jp)) == PT_J_NONE)
				return PT_J_NONE;
			jp->node[kid].key = koff;
			jp->node[kid].keylen = obj ? klen : 0;
			if (last == PT_J_NONE)
				jp->node[i].first = kid;
			else
				jp->node[last].next = kid;
			last = kid;
			jp->node[i].len++;
		} while (eat(jp, ','));
		if (!eat(jp, obj ? '}' : ']')) {
			fail(jp, obj ? "expected , or }" : "expected , or ]");
			return PT_J_NONE;
		}
		jp->depth--;
		return i;
	case '"':
		jp->p++;
		if (string(jp, &koff, &klen) < 0 ||
		    (i = new_node(jp, PT_J_STR)) == PT_J_NONE)
			return PT_J_NONE;
		jp->node[i].str = koff;
		jp->node[i].len = klen;
		return i;
	case 't':
		return word(jp, "true") < 0 ? PT_J_NONE : new_node(jp, PT_J_TRUE);
	case 'f':
		return word(jp, "false") < 0 ? PT_J_NONE : new_node(jp, PT_J_FALSE);
	case 'n':
		return word(jp, "null") < 0 ? PT_J_NONE : new_node(jp, PT_J_NULL);
	default: {
		double v;

		if (c != '-' && (c < '0' || c > '9')) {
			fail(jp, "expected a value");
			return PT_J_NONE;
		}
		if (number(jp, &v) < 0 ||
		    (i = new_node(jp, PT_J_NUM)) == PT_J_NONE)
			return PT_J_NONE;
		jp->node[i].num = v;
		return i;
	}
	}
}

void pt_jp_skip(struct pt_jp *jp)
{
	size_t n = jp->nnode, s = jp->strs.len;

	pt_jp_value(jp);
	jp->nnode = (uint32_t)n;
	jp->strs.len = s;
	jp->strs.buf[s] = '\0';
}

int pt_jp_open(struct pt_jp *jp, char open)
{
	return !jp->err && eat(jp, open);
}

int pt_jp_next(struct pt_jp *jp, char close, unsigned *seen)
{
	uint32_t off, len;

	if (jp->err)
		return 0;
	pt_jp_reset(jp);
	if ((*seen)++ == 0) {
		if (eat(jp, close))
			return 0;
	} else if (!eat(jp, ',')) {
		if (!eat(jp, close))
			fail(jp, close == ']' ? "expected , or ]"
					      : "expected , or }");
		return 0;
	}
	if (close == '}') {
		if (!eat(jp, '"') || string(jp, &off, &len) < 0 ||
		    !eat(jp, ':')) {
			fail(jp, "a bad object key");
			return 0;
		}
	}
	return 1;
}

const char *pt_jp_key(struct pt_jp *jp)
{
	return jp->strs.buf;
}

int pt_jp_at_end(struct pt_jp *jp)
{
	return peek(jp) < 0;
}

const struct pt_jnode *pt_jp_get(const struct pt_jp *jp, uint32_t obj,
				 const char *key)
{
	size_t n = strlen(key);
	uint32_t k;

	if (obj == PT_J_NONE || jp->node[obj].type != PT_J_OBJ)
		return NULL;
	for (k = jp->node[obj].first; k != PT_J_NONE; k = jp->node[k].next)
		if (jp->node[k].keylen == n &&
		    !memcmp(jp->strs.buf + jp->node[k].key, key, n))
			return &jp->node[k];
	return NULL;
}

void pt_jp_write(const struct pt_jp *jp, uint32_t i, struct pt_sb *sb)
{
	const struct pt_jnode *n = &jp->node[i];
	uint32_t k;

	switch (n->type) {
	case PT_J_NULL:  pt_sb_addstr(sb, "null"); break;
	case PT_J_FALSE: pt_sb_addstr(sb, "false"); break;
	case PT_J_TRUE:  pt_sb_addstr(sb, "true"); break;
	case PT_J_NUM:
		/* JSON has no NaN or infinities. */
		if (n->num != n->num || n->num > 1e300 || n->num < -1e300)
			pt_sb_addstr(sb, "null");
		else
			pt_sb_addf(sb, "%.17g", n->num);
		break;
	case PT_J_STR:
		pt_quote_json(sb, jp->strs.buf + n->str, n->len,
			      PT_JSON_AS_READ);
		break;
	case PT_J_ARR:
	case PT_J_OBJ:
		pt_sb_addch(sb, n->type == PT_J_OBJ ? '{' : '[');
		for (k = n->first; k != PT_J_NONE; k = jp->node[k].next) {
			if (k != n->first)
				pt_sb_addch(sb, ',');
			if (n->type == PT_J_OBJ) {
				pt_quote_json(sb, jp->strs.buf +
					      jp->node[k].key,
					      jp->node[k].keylen,
					      PT_JSON_AS_READ);
				pt_sb_addch(sb, ':');
			}
			pt_jp_write(jp, k, sb);
		}
		pt_sb_addch(sb, n->type == PT_J_OBJ ? '}' : ']');
		break;
	}
}
