/*
 * The critical path: the chain of executions, from the root down, that
 * ended last at each level, and each step's own time on it.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/util.h"

/* ---- critical path ---- */

struct cp_frame {
	uint32_t exec;                  /* NONE: the whole run */
	uint32_t step;
	int64_t lo, cursor;
	size_t k, kend, kbeg;
};

static int cmp_by_sub_end(const void *x, const void *y, void *ctx)
{
	const struct pt_analysis *a = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int64_t si, sj;

	/* Latest subtree end first; on a tie the one that started first
	 * (it covers more of the path), then the lower id. */
	if (a->sub_end[i] != a->sub_end[j])
		return a->sub_end[i] > a->sub_end[j] ? -1 : 1;
	si = a->m->execs[i]->start_ns;
	sj = a->m->execs[j]->start_ns;
	if (si != sj)
		return si < sj ? -1 : 1;
	return i < j ? -1 : i > j;
}

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

static void u32_push(struct u32vec *v, uint32_t x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->v = pt_xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = x;
}

/* Push x's children that have time on the path (sorted) onto pool. */
static void push_children(struct pt_analysis *a, struct u32vec *pool,
			  const struct pt_exec *x)
{
	const struct pt_model *m = a->m;
	size_t beg = pool->n, i;

	if (x) {
		const struct pt_exec *c;

		for (c = x->first_child; c; c = c->next_sibling)
			if (a->sub_end[c->id] > c->start_ns)
				u32_push(pool, c->id);
	} else {
		for (i = 0; i < m->n; i++)
			if (!m->execs[i]->parent &&
			    a->sub_end[i] > m->execs[i]->start_ns)
				u32_push(pool, (uint32_t)i);
	}
	qsort_r(pool->v + beg, pool->n - beg, sizeof *pool->v, cmp_by_sub_end,
		a);
}

static uint32_t add_step(struct pt_analysis *a, size_t *cap, uint32_t exec,
			 uint32_t depth, int64_t from, int64_t to)
{
	struct pt_cp_step *st;

	if (a->ncp == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		a->cp = pt_xrealloc(a->cp, *cap * sizeof *a->cp);
	}
	st = &a->cp[a->ncp];
	st->exec = exec;
	st->depth = depth;
	st->from = from;
	st->to = to;
	st->own = 0;
	return (uint32_t)a->ncp++;
}

static int cmp_step(const void *x, const void *y)
{
	const struct pt_cp_step *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/*
 * The critical path, walked backwards from the end of the run.  In the
 * window [lo, cursor] of an execution (or of the whole run), the child
 * that finished last, at or before cursor, is the one it waited for: the
 * time between that child's end and cursor is the execution's own, the
 * walk descends into the child over [max(child start, lo), child end],
 * and continues in the parent from the child's start.  Children still
 * running at cursor did not hold anything up and are passed over.  When
 * no child is left, the rest of the window back to lo is the
 * execution's own.  A child's "end" is that of its whole subtree, so an
 * orphan that outlives its parent still leads the path to it.  The own
 * times of all steps, plus the time nothing ran, add up to the wall time.
 */
void pt_critical_path(struct pt_analysis *a)
{
	const struct pt_model *m = a->m;
	struct cp_frame *stack = NULL;
	struct u32vec pool = { NULL, 0, 0 };
	size_t depth = 0, scap = 0, cpcap = 0;

	if (!m->n)
		return;
	stack = pt_xmalloc(16 * sizeof *stack);
	scap = 16;
	stack[0].exec = NONE;
	stack[0].lo = a->t0;
	stack[0].cursor = a->t1;
	stack[0].kbeg = stack[0].k = 0;
	push_children(a, &pool, NULL);
	stack[0].kend = pool.n;
	stack[0].step = add_step(a, &cpcap, NONE, 0, a->t0, a->t1);
	depth = 1;
	while (depth) {
		struct cp_frame *f = &stack[depth - 1];
		const struct pt_exec *c;
		int64_t clo, cend;
		uint32_t cid;

		while (f->k < f->kend && a->sub_end[pool.v[f->k]] > f->cursor)
			f->k++;
		if (f->k == f->kend || a->sub_end[pool.v[f->k]] <= f->lo) {
			a->cp[f->step].own += f->cursor - f->lo;
			pool.n = f->kbeg;
			depth--;
			continue;
		}
		cid = pool.v[f->k++];
		c = m->execs[cid];
		cend = a->sub_end[cid];
		clo = c->start_ns > f->lo ? c->start_ns : f->lo;
		a->cp[f->step].own += f->cursor - cend;
		f->cursor = clo;
		if (depth == scap) {
			scap *= 2;
			stack = pt_xrealloc(stack, scap * sizeof *stack);
			f = &stack[depth - 1];
		}
		stack[depth].exec = cid;
		stack[depth].lo = clo;
		stack[depth].cursor = cend;
		stack[depth].kbeg = stack[depth].k = pool.n;
		push_children(a, &pool, c);
		stack[depth].kend = pool.n;
		stack[depth].step = add_step(a, &cpcap, cid, (uint32_t)depth,
					     clo, cend);
		depth++;
	}
	free(stack);
	free(pool.v);
	qsort(a->cp, a->ncp, sizeof *a->cp, cmp_step);
}
