/*
 * Folded stacks; see folded.h.
 *
 * A depth-first walk of the stacks' trie (analysis/stacks.h) prints each
 * stack once, building the line as it goes down, so the output costs its
 * own size and no stack is built twice.
 */
#include "views/folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

#define NONE PT_STACKS_NONE

static int print(const struct pt_stacks *t, FILE *f)
{
	struct pt_sb line = PT_SB_INIT;
	size_t *saved = NULL, depth = 0, cap = 0;
	uint32_t id;
	int rc = 0;

	for (id = 0; id < t->n; id++) {
		uint32_t x;

		if (t->parent[id] != NONE)
			continue;
		/* Depth-first from this top node; `saved` holds the line's
		 * length before each node's label went on. */
		x = id;
		for (;;) {
			int64_t v = t->weight[x];
			size_t llen;
			const char *lab = pt_stacks_label(t, x, &llen);

			if (depth == cap) {
				cap = cap ? 2 * cap : 64;
				saved = pt_xrealloc(saved, cap * sizeof *saved);
			}
			saved[depth++] = line.len;
			if (depth > 1)
				pt_sb_addch(&line, ';');
			pt_sb_add(&line, lab, llen);
			if (v > 0) {
				size_t keep = line.len;

				pt_sb_addf(&line, " %lld\n", (long long)v);
				if (fwrite(line.buf, 1, line.len, f) !=
				    line.len)
					rc = -1;
				line.len = keep;
				line.buf[keep] = '\0';
			}
			if (t->first[x] != NONE) {
				x = t->first[x];
				continue;
			}
			/* Climb until a node with a next sibling. */
			while (depth && t->next[x] == NONE) {
				line.len = saved[--depth];
				x = t->parent[x];
				if (!depth || x == NONE)
					break;
			}
			if (!depth || x == NONE)
				break;
			line.len = saved[--depth];
			x = t->next[x];
		}
		depth = 0;
		pt_sb_reset(&line);
	}
	free(saved);
	pt_sb_release(&line);
	return rc;
}

int pt_folded_write(const struct pt_model *m, FILE *f,
		    enum pt_stacks_weight w)
{
	struct pt_stacks t;
	int rc;

	pt_stacks_build(&t, m, w);
	rc = print(&t, f);
	if (fflush(f) != 0)
		rc = -1;
	pt_stacks_free(&t);
	if (rc < 0 && !errno)
		errno = EIO;
	return rc;
}

int pt_folded_write_wall(const struct pt_model *m, FILE *f)
{
	return pt_folded_write(m, f, PT_STACKS_WALL);
}

int pt_folded_write_cpu(const struct pt_model *m, FILE *f)
{
	return pt_folded_write(m, f, PT_STACKS_CPU);
}
