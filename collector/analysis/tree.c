/*
 * The process tree: each execution's children, its self time (the part of
 * its life no child covers) and its subtree's totals.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/util.h"

/* ---- the tree: depth, subtree end and size, self time ---- */

struct end_key {
	int64_t end;
	uint32_t id;
};

static int cmp_end_key(const void *x, const void *y)
{
	const struct end_key *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Wall time of x covered by the union of its direct children. */
static int64_t children_cover(const struct pt_exec *x)
{
	const struct pt_exec *c;
	int64_t cover = 0, from = 0, to = 0;
	int open = 0;

	/* Children come in start order: one sweep merges their intervals. */
	for (c = x->first_child; c; c = c->next_sibling) {
		int64_t s = c->start_ns > x->start_ns ? c->start_ns
						      : x->start_ns;
		int64_t e = c->end_ns < x->end_ns ? c->end_ns : x->end_ns;

		if (e <= s)
			continue;
		if (open && s <= to) {
			if (e > to)
				to = e;
			continue;
		}
		if (open)
			cover += to - from;
		from = s;
		to = e;
		open = 1;
	}
	if (open)
		cover += to - from;
	return cover;
}

void pt_analyze_tree(struct pt_analysis *a, const struct pt_model *m)
{
	size_t n = m->n, i;
	struct end_key *ek;

	memset(a, 0, sizeof *a);
	a->m = m;
	a->self_ns = pt_xcalloc(n, sizeof *a->self_ns);
	a->sub_end = pt_xcalloc(n, sizeof *a->sub_end);
	a->sub_n = pt_xcalloc(n, sizeof *a->sub_n);
	a->depth = pt_xcalloc(n, sizeof *a->depth);
	a->by_end = pt_xcalloc(n, sizeof *a->by_end);
	if (!n)
		return;
	a->t0 = m->execs[0]->start_ns;
	a->t1 = m->execs[0]->end_ns;
	for (i = 0; i < n; i++) {
		const struct pt_exec *e = m->execs[i];

		if (e->start_ns < a->t0)
			a->t0 = e->start_ns;
		if (e->end_ns > a->t1)
			a->t1 = e->end_ns;
		a->sub_end[i] = e->end_ns;
		a->sub_n[i] = 1;
		a->self_ns[i] = e->end_ns - e->start_ns - children_cover(e);
	}
	/*
	 * Depth-first over each root's tree through the child/sibling links:
	 * depth on the way down, subtree end and size on the way up.  Only
	 * roots start a walk, so a (corrupt) parent cycle is never entered.
	 */
	for (i = 0; i < n; i++) {
		const struct pt_exec *x = m->execs[i];

		if (x->parent)
			continue;
		for (;;) {
			if (x->first_child) {
				x = x->first_child;
				a->depth[x->id] = a->depth[x->parent->id] + 1;
				continue;
			}
			/* Leaving x: fold it into its parent, climb. */
			while (x->parent && !x->next_sibling) {
				const struct pt_exec *p = x->parent;

				if (a->sub_end[x->id] > a->sub_end[p->id])
					a->sub_end[p->id] = a->sub_end[x->id];
				a->sub_n[p->id] += a->sub_n[x->id];
				x = p;
			}
			if (!x->parent)
				break;
			if (a->sub_end[x->id] > a->sub_end[x->parent->id])
				a->sub_end[x->parent->id] = a->sub_end[x->id];
			a->sub_n[x->parent->id] += a->sub_n[x->id];
			x = x->next_sibling;
			a->depth[x->id] = a->depth[x->parent->id] + 1;
		}
	}
	ek = pt_xmalloc(n * sizeof *ek);
	for (i = 0; i < n; i++) {
		ek[i].end = m->execs[i]->end_ns;
		ek[i].id = (uint32_t)i;
	}
	qsort(ek, n, sizeof *ek, cmp_end_key);
	for (i = 0; i < n; i++)
		a->by_end[i] = ek[i].id;
	free(ek);
}
