/* The report's figures; see report.h. */
#include "analysis/report.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

#define NONE UINT32_MAX

double pt_report_pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

static void captures(struct pt_report *r)
{
	const struct pt_model *m = r->m;
	size_t i;

	r->caps = pt_xcalloc(m->ncaptures + 1, sizeof *r->caps);
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		struct pt_report_capture *c = &r->caps[e->capture];

		if (!c->count++ || e->start_ns < c->first)
			c->first = e->start_ns;
		if (e->end_ns > c->last)
			c->last = e->end_ns;
	}
}

static void summary(struct pt_report *r)
{
	const struct pt_model *m = r->m;
	size_t i;

	r->rss_kb = -1;
	r->rss_id = NONE;
	r->failures = pt_xcalloc(m->n ? m->n : 1, sizeof *r->failures);
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];

		if (e->signal > 0)
			r->killed++;
		else if (e->exit_code > 0)
			r->failed++;
		if (e->signal > 0 || e->exit_code > 0)
			r->failures[r->nfailures++] = (uint32_t)i;
		if (e->flags & PT_EXF_UNTRACED)
			r->untraced++;
		if (e->utime_us < 0 && e->stime_us < 0)
			r->nocpu++;
		r->user_us += pt_cpu_part_us(e->utime_us);
		r->sys_us += pt_cpu_part_us(e->stime_us);
		if (e->maxrss_kb > r->rss_kb) {
			r->rss_kb = e->maxrss_kb;
			r->rss_id = (uint32_t)i;
		}
	}
}

/* ---- programs ---- */

static int cmp_self(const void *x, const void *y)
{
	const struct pt_report_group *a = x, *b = y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_total(const void *x, const void *y)
{
	const struct pt_report_group *a = x, *b = y;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Total time of a group is the wall time of its executions that have no
 * ancestor in the same group: make running make counts once, as perf's
 * "children" column counts a recursive function once.
 */
static void group_totals(const struct pt_model *m, const uint32_t *gid,
			 struct pt_report_group *g, size_t ng)
{
	uint32_t *open = pt_xcalloc(ng ? ng : 1, sizeof *open);
	size_t i;

#define ENTER(x) do { \
		if (!open[gid[(x)->id]]++) \
			g[gid[(x)->id]].total += (x)->end_ns - (x)->start_ns; \
	} while (0)
#define LEAVE(x) (open[gid[(x)->id]]--)
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *x = m->execs[i];

		if (x->parent)
			continue;
		ENTER(x);
		for (;;) {
			if (x->first_child) {
				x = x->first_child;
				ENTER(x);
				continue;
			}
			while (x->parent && !x->next_sibling) {
				LEAVE(x);
				x = x->parent;
			}
			LEAVE(x);
			if (!x->parent)
				break;
			x = x->next_sibling;
			ENTER(x);
		}
	}
#undef ENTER
#undef LEAVE
	free(open);
}

static void programs(struct pt_report *r, struct pt_sb *tmp)
{
	const struct pt_model *m = r->m;
	struct pt_report_group *g;
	uint32_t *gid;
	size_t i, ng;

	pt_strtab_init(&r->names);
	gid = pt_xcalloc(m->n ? m->n : 1, sizeof *gid);
	for (i = 0; i < m->n; i++) {
		pt_sb_reset(tmp);
		pt_group_key(&r->group, m->execs[i], tmp);
		gid[i] = pt_strtab_intern(&r->names, tmp->buf, tmp->len, NULL);
	}
	ng = r->names.n;
	g = pt_xcalloc(ng ? ng : 1, sizeof *g);
	for (i = 0; i < ng; i++)
		g[i].id = (uint32_t)i;
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		struct pt_report_group *x = &g[gid[i]];

		x->self += r->a.self_ns[i];
		x->cpu_us += pt_exec_cpu_us(e);
		x->count++;
		r->self_sum += r->a.self_ns[i];
	}
	group_totals(m, gid, g, ng);
	r->ngroups = ng;
	r->by_total = pt_xcalloc(ng ? ng : 1, sizeof *g);
	memcpy(r->by_total, g, ng * sizeof *g);
	qsort(g, ng, sizeof *g, cmp_self);
	qsort(r->by_total, ng, sizeof *g, cmp_total);
	r->by_self = g;
	free(gid);
}

/* ---- critical path ---- */

struct cp_pick {
	size_t step;
	int64_t span;
	uint32_t depth;
};

static int cmp_pick_span(const void *x, const void *y)
{
	const struct cp_pick *a = x, *b = y;

	if (a->span != b->span)
		return a->span > b->span ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->step < b->step ? -1 : a->step > b->step;
}

static int cmp_pick_step(const void *x, const void *y)
{
	const struct cp_pick *a = x, *b = y;

	return a->step < b->step ? -1 : a->step > b->step;
}

/*
 * The steps worth a line: the longest spans (which include every shown
 * step's ancestors), at most 3 * top of them and none under 1 % of the
 * run.
 */
static void critical(struct pt_report *r, struct pt_sb *tmp)
{
	const struct pt_analysis *a = &r->a;
	struct cp_pick *p;
	struct pt_report_group *g;
	size_t np = 0, i, shown, maxlines = 3 * r->top;
	int64_t min_span = r->wall / 100;

	pt_strtab_init(&r->cp_names);
	if (!a->ncp)
		return;
	p = pt_xcalloc(a->ncp, sizeof *p);
	for (i = 0; i < a->ncp; i++) {
		if (a->cp[i].exec == NONE) {
			r->cp_idle += a->cp[i].own;
			continue;
		}
		p[np].step = i;
		p[np].span = a->cp[i].to - a->cp[i].from;
		p[np].depth = a->cp[i].depth;
		np++;
	}
	qsort(p, np, sizeof *p, cmp_pick_span);
	for (shown = 0; shown < np && shown < maxlines &&
	     p[shown].span >= min_span; shown++)
		;
	for (i = shown; i < np; i++)
		r->cp_hidden_own += a->cp[p[i].step].own;
	qsort(p, shown, sizeof *p, cmp_pick_step);
	r->cp_shown = pt_xcalloc(shown ? shown : 1, sizeof *r->cp_shown);
	for (i = 0; i < shown; i++)
		r->cp_shown[i] = p[i].step;
	r->ncp_shown = shown;
	r->ncp_steps = np;
	free(p);

	/* The path's own time by group: what to make faster.  There are
	 * no more groups than steps. */
	g = pt_xcalloc(a->ncp, sizeof *g);
	for (i = 0; i < a->ncp; i++) {
		uint32_t id;

		if (a->cp[i].exec == NONE || !a->cp[i].own)
			continue;
		pt_sb_reset(tmp);
		pt_group_key(&r->group, r->m->execs[a->cp[i].exec], tmp);
		id = pt_strtab_intern(&r->cp_names, tmp->buf, tmp->len, NULL);
		g[id].id = id;
		g[id].self += a->cp[i].own;
		g[id].count++;
	}
	r->ncp_groups = r->cp_names.n;
	qsort(g, r->ncp_groups, sizeof *g, cmp_self);
	r->cp_groups = g;
}

/* ---- parallelism ---- */

static void parallelism(struct pt_report *r)
{
	const struct pt_analysis *a = &r->a;
	size_t k, i, n;

	r->levels = pt_xcalloc(a->nlevels + 1, sizeof *r->levels);
	/* One row per level up to 8, then rows of doubling width. */
	for (k = 0; k < a->nlevels && k < 8; k++)
		r->levels[r->nlevels++] = (struct pt_report_level){
			k, k, a->level_ns[k] };
	for (; k < a->nlevels; k *= 2) {
		int64_t ns = 0;
		size_t hi = 2 * k - 1;

		if (hi > a->nlevels - 1)
			hi = a->nlevels - 1;
		for (i = k; i <= hi; i++)
			ns += a->level_ns[i];
		r->levels[r->nlevels++] = (struct pt_report_level){ k, hi, ns };
	}
	/* Only stretches worth a look: half a percent of the run or more. */
	for (n = 0; n < a->nalone; n++) {
		int64_t len = a->alone[n].to - a->alone[n].from;

		if (len <= 0 || len * 200 < r->wall)
			break;
	}
	r->nalone_shown = n;
}

void pt_report_compute(struct pt_report *r, const struct pt_model *m,
		       const struct pt_group_by *g, size_t top)
{
	struct pt_sb tmp = PT_SB_INIT;

	memset(r, 0, sizeof *r);
	r->m = m;
	r->group = *g;
	r->top = top;
	pt_analyze(&r->a, m, top < 5 ? top : 5);
	r->wall = r->a.t1 - r->a.t0;
	captures(r);
	summary(r);
	programs(r, &tmp);
	critical(r, &tmp);
	parallelism(r);
	pt_inside_compute(&r->inside, m, top);
	pt_sb_release(&tmp);
}

void pt_report_free(struct pt_report *r)
{
	free(r->caps);
	free(r->failures);
	free(r->by_self);
	free(r->by_total);
	pt_strtab_free(&r->names);
	free(r->cp_shown);
	free(r->cp_groups);
	pt_strtab_free(&r->cp_names);
	free(r->levels);
	pt_inside_free(&r->inside);
	pt_analysis_free(&r->a);
	memset(r, 0, sizeof *r);
}
