/*
 * A sweep over time: the executions running and busy at each moment, and
 * from it the parallelism profile and the serial stretches.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/util.h"

/* ---- the sweep ---- */

void pt_sweep_init(struct pt_sweep *s, const struct pt_analysis *a)
{
	size_t n = a->m->n, nc = a->m->ncaptures ? a->m->ncaptures : 1;

	memset(s, 0, sizeof *s);
	s->a = a;
	s->cap_running = pt_xcalloc(nc, sizeof *s->cap_running);
	s->cap_busy = pt_xcalloc(nc, sizeof *s->cap_busy);
	s->dirty = pt_xcalloc(nc, sizeof *s->dirty);
	s->dirty_flag = pt_xcalloc(nc, 1);
	s->busy_set = pt_xcalloc(n, sizeof *s->busy_set);
	s->run = pt_xcalloc(n, 1);
	s->active_children = pt_xcalloc(n, sizeof *s->active_children);
	s->busy_pos = pt_xcalloc(n, sizeof *s->busy_pos);
}

void pt_sweep_free(struct pt_sweep *s)
{
	free(s->cap_running);
	free(s->cap_busy);
	free(s->dirty);
	free(s->dirty_flag);
	free(s->busy_set);
	free(s->run);
	free(s->active_children);
	free(s->busy_pos);
	memset(s, 0, sizeof *s);
}

static void mark(struct pt_sweep *s, uint32_t cap)
{
	if (!s->dirty_flag[cap]) {
		s->dirty_flag[cap] = 1;
		s->dirty[s->ndirty++] = cap;
	}
}

static void busy_add(struct pt_sweep *s, const struct pt_exec *x)
{
	s->busy_set[s->busy] = x->id;
	s->busy_pos[x->id] = ++s->busy;
	s->cap_busy[x->capture]++;
	mark(s, x->capture);
}

static void busy_del(struct pt_sweep *s, const struct pt_exec *x)
{
	uint32_t pos = s->busy_pos[x->id] - 1, last = s->busy_set[--s->busy];

	s->busy_set[pos] = last;
	s->busy_pos[last] = pos + 1;
	s->busy_pos[x->id] = 0;
	s->cap_busy[x->capture]--;
	mark(s, x->capture);
}

/*
 * "Active" = running, or with an active child.  active_children[x] counts
 * x's active children; x is busy when it runs and counts none.  A change
 * of x's activity climbs only until an ancestor whose own activity does
 * not change, so a start or end costs O(1) but for chains of exited
 * ancestors.
 */
static void became_active(struct pt_sweep *s, const struct pt_exec *p)
{
	for (; p; p = p->parent) {
		if (s->active_children[p->id]++)
			return;
		if (s->run[p->id]) {
			busy_del(s, p);
			return;
		}
	}
}

static void became_inactive(struct pt_sweep *s, const struct pt_exec *p)
{
	for (; p; p = p->parent) {
		if (--s->active_children[p->id])
			return;
		if (s->run[p->id]) {
			busy_add(s, p);
			return;
		}
	}
}

static void start(struct pt_sweep *s, const struct pt_exec *x)
{
	s->run[x->id] = 1;
	s->running++;
	s->cap_running[x->capture]++;
	mark(s, x->capture);
	if (!s->active_children[x->id]) {
		busy_add(s, x);
		became_active(s, x->parent);
	}
}

static void end(struct pt_sweep *s, const struct pt_exec *x)
{
	s->run[x->id] = 0;
	s->running--;
	s->cap_running[x->capture]--;
	mark(s, x->capture);
	if (!s->active_children[x->id]) {
		busy_del(s, x);
		became_inactive(s, x->parent);
	}
}

static int zero_length(const struct pt_exec *x)
{
	return x->end_ns <= x->start_ns;
}

int pt_sweep_next(struct pt_sweep *s)
{
	const struct pt_model *m = s->a->m;
	const uint32_t *by_end = s->a->by_end;
	size_t n = m->n, i;
	int64_t t;

	for (i = 0; i < s->ndirty; i++)
		s->dirty_flag[s->dirty[i]] = 0;
	s->ndirty = 0;
	while (s->si < n && zero_length(m->execs[s->si]))
		s->si++;
	while (s->ei < n && zero_length(m->execs[by_end[s->ei]]))
		s->ei++;
	if (s->si >= n && s->ei >= n)
		return 0;
	t = s->si < n ? m->execs[s->si]->start_ns : INT64_MAX;
	if (s->ei < n && m->execs[by_end[s->ei]]->end_ns < t)
		t = m->execs[by_end[s->ei]]->end_ns;
	s->t = t;
	/* Ends first: a job that ends as the next starts never counts
	 * twice, not even for an instant. */
	while (s->ei < n && m->execs[by_end[s->ei]]->end_ns == t) {
		const struct pt_exec *x = m->execs[by_end[s->ei++]];

		if (!zero_length(x))
			end(s, x);
	}
	while (s->si < n && m->execs[s->si]->start_ns == t) {
		const struct pt_exec *x = m->execs[s->si++];

		if (!zero_length(x))
			start(s, x);
	}
	return 1;
}

/* ---- parallelism profile ---- */

static void add_level(struct pt_analysis *a, uint32_t level, int64_t dt,
		      size_t *cap)
{
	if (dt <= 0)
		return;
	if (level >= *cap) {
		size_t nc = *cap ? *cap : 16;

		while (nc <= level)
			nc *= 2;
		a->level_ns = pt_xrealloc(a->level_ns,
					  nc * sizeof *a->level_ns);
		memset(a->level_ns + *cap, 0,
		       (nc - *cap) * sizeof *a->level_ns);
		*cap = nc;
	}
	a->level_ns[level] += dt;
	if (level + 1 > a->nlevels)
		a->nlevels = level + 1;
	if (level > a->peak)
		a->peak = level;
}

/* Keep the `max` longest stretches, longest first (earlier on ties). */
static void keep_stretch(struct pt_analysis *a, size_t max,
			 const struct pt_stretch *st)
{
	int64_t len = st->to - st->from;
	size_t i;

	if (len <= 0 || !max)
		return;
	if (a->nalone == max &&
	    a->alone[max - 1].to - a->alone[max - 1].from >= len)
		return;
	i = a->nalone < max ? a->nalone++ : max - 1;
	while (i > 0 && a->alone[i - 1].to - a->alone[i - 1].from < len) {
		a->alone[i] = a->alone[i - 1];
		i--;
	}
	a->alone[i] = *st;
}

void pt_sweep_profile(struct pt_analysis *a, size_t nalone)
{
	struct pt_sweep s;
	struct pt_stretch cur = { NONE, 0, 0 };
	size_t cap = 0;
	int64_t prev = a->t0, weighted = 0;
	uint32_t busy = 0;

	a->alone = pt_xcalloc(nalone ? nalone : 1, sizeof *a->alone);
	pt_sweep_init(&s, a);
	while (pt_sweep_next(&s)) {
		/* [prev, s.t) had `busy` busy executions: the state the
		 * previous instant left, which `cur` describes when one
		 * execution ran alone. */
		add_level(a, busy, s.t - prev, &cap);
		weighted += (int64_t)busy * (s.t - prev);
		if (cur.exec != NONE)
			cur.to = s.t;
		prev = s.t;
		busy = s.busy;
		if (busy == 1 && cur.exec == s.busy_set[0])
			continue;       /* still the same one alone */
		if (cur.exec != NONE)
			keep_stretch(a, nalone, &cur);
		cur.exec = busy == 1 ? s.busy_set[0] : NONE;
		cur.from = cur.to = s.t;
	}
	pt_sweep_free(&s);
	if (cur.exec != NONE)
		keep_stretch(a, nalone, &cur);
	add_level(a, 0, a->t1 - prev, &cap);
	a->average = a->t1 > a->t0 ? (double)weighted / (double)(a->t1 - a->t0)
				   : 0;
}
