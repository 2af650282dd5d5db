/*
 * A small bounded JSON parser, for files that others write (the Chrome
 * trace files of collect/tracefile.h): values are parsed one at a time
 * into a pool of nodes that the caller empties between values, so a file
 * of a million events needs the memory of one.  Nothing is trusted:
 * nesting, the nodes of one value and the bytes of its strings are
 * bounded, and any error stops the parser with a message and the offset
 * where it was found; running out of input is told apart (a file cut
 * short), so a caller can keep what came before.
 *
 * Typical use:
 *   pt_jp_init(&jp, buf, len);
 *   if (pt_jp_open(&jp, '['))
 *       for (seen = 0; pt_jp_next(&jp, ']', &seen);) { v = pt_jp_value(&jp); ... }
 *   pt_jp_free(&jp);
 */
#ifndef PT_JSONP_H
#define PT_JSONP_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

enum pt_jtype { PT_J_NULL, PT_J_FALSE, PT_J_TRUE, PT_J_NUM, PT_J_STR,
		PT_J_ARR, PT_J_OBJ };

#define PT_J_NONE UINT32_MAX    /* no node */

/* One value.  Members of an array or object are linked by next; an
 * object's members carry their key. */
struct pt_jnode {
	enum pt_jtype type;
	uint32_t first, next;           /* first member, next sibling */
	uint32_t key, str;              /* offsets into the string pool */
	uint32_t keylen, len;           /* bytes (strings may hold NULs) */
	double num;
};

struct pt_jp {
	const char *p, *end, *start;
	struct pt_jnode *node;
	uint32_t nnode, cnode;
	struct pt_sb strs;              /* unescaped strings, NUL-ended */
	const char *err;                /* NULL while all is well */
	size_t err_at;                  /* byte offset of the error */
	int cut;                        /* the error is the input's end */
	int depth;
};

void pt_jp_init(struct pt_jp *jp, const char *buf, size_t len);
void pt_jp_free(struct pt_jp *jp);

/* Empty the pool: nodes and strings of earlier values become invalid. */
void pt_jp_reset(struct pt_jp *jp);

/* Parse the next value; returns its node, or PT_J_NONE with jp->err. */
uint32_t pt_jp_value(struct pt_jp *jp);

/*
 * Walk a container without parsing it whole.  pt_jp_open(jp, '[' or
 * '{') enters one (returns 0 if what follows is not that); then
 * pt_jp_next(jp, ']' or '}', &seen), with seen = 0 before the first
 * call, empties the pool and returns 1 before each member (for an
 * object, after its key, which pt_jp_key() gives), 0 after the last one
 * or on an error.  Parse each member with pt_jp_value() or skip it with
 * pt_jp_skip(); containers walked this way nest.
 */
int pt_jp_open(struct pt_jp *jp, char open);
int pt_jp_next(struct pt_jp *jp, char close, unsigned *seen);
const char *pt_jp_key(struct pt_jp *jp);        /* NUL-terminated */
void pt_jp_skip(struct pt_jp *jp);

/* Is the rest of the input only white space? */
int pt_jp_at_end(struct pt_jp *jp);

static inline const struct pt_jnode *pt_jp_node(const struct pt_jp *jp,
						uint32_t i)
{
	return i == PT_J_NONE ? NULL : &jp->node[i];
}

static inline const char *pt_jp_str(const struct pt_jp *jp,
				    const struct pt_jnode *n)
{
	return jp->strs.buf + n->str;
}

/* Member key of object obj, or NULL. */
const struct pt_jnode *pt_jp_get(const struct pt_jp *jp, uint32_t obj,
				 const char *key);

/* Write value i as compact JSON to sb (strings escaped again, as
 * pt_quote_json()'s PT_JSON_AS_READ). */
void pt_jp_write(const struct pt_jp *jp, uint32_t i, struct pt_sb *sb);

#endif
