/*
 * What if (analysis/whatif.h).  The graph the build's tools would run:
 * each job, and per scope (a tool that ran jobs) a start and an end
 * node, and per job a finish node after its own work and the scopes it
 * holds.  Edges: the file dependencies, the order each tool declared or
 * ran its jobs in (deps' decl), a job's own work before the tools it
 * runs, two tools of one job one after the other as they ran.  The
 * prediction is the recorded wall plus what the change moves the
 * schedule of the same graph: what the schedule does not explain (the
 * unrecorded, the overheads) stays as it was.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/depsched.h"
#include "analysis/whatif.h"
#include "base/strbuf.h"
#include "base/util.h"

/* A saving one recording cannot tell from noise, at least: run-to-run
 * spread of a build is rarely below this share of its wall. */
#define SPREAD_MIN_SHARE 0.02

struct plan {
	const struct pt_deps *d;
	size_t nj, ns;                  /* jobs, scopes */
	size_t n;                       /* nodes */
	uint64_t *e;
	size_t ne, ce;
	struct pt_depsched_node *nd;
};

static size_t node_start(const struct plan *p, size_t s)
{
	return p->nj + 2 * s;
}

static size_t node_end(const struct plan *p, size_t s)
{
	return p->nj + 2 * s + 1;
}

static size_t node_finish(const struct plan *p, size_t j)
{
	return p->nj + 2 * p->ns + j;
}

static void edge(struct plan *p, size_t x, size_t y)
{
	if (p->ne == p->ce) {
		p->ce = p->ce ? 2 * p->ce : 256;
		p->e = pt_xrealloc(p->e, p->ce * sizeof *p->e);
	}
	p->e[p->ne++] = (uint64_t)x << 32 | y;
}

static size_t parent_of(const struct pt_deps *d, size_t j)
{
	return d->scope[d->job[j].scope].parent_job;
}

/* Does job a hold job j, through the tools it runs? */
static int holds(const struct pt_deps *d, size_t a, size_t j)
{
	size_t k;

	for (k = 0; k < 64 && (j = parent_of(d, j)) != SIZE_MAX; k++)
		if (j == a)
			return 1;
	return 0;
}

/* The graph's edges: all, or without the declared order (serial_free). */
static void plan_edges(struct plan *p, int serial_free)
{
	const struct pt_deps *d = p->d;
	size_t i, s, t;

	for (i = 0; i < p->nj; i++) {
		edge(p, i, node_finish(p, i));
		s = d->job[i].scope;
		edge(p, node_start(p, s), i);
		edge(p, node_finish(p, i), node_end(p, s));
	}
	for (s = 0; s < p->ns; s++) {
		size_t par = d->scope[s].parent_job;

		if (par == SIZE_MAX)
			continue;
		edge(p, par, node_start(p, s));
		edge(p, node_end(p, s), node_finish(p, par));
		/* two tools of one job: one after the other, as they ran */
		for (t = 0; t < p->ns && !serial_free; t++)
			if (t != s && d->scope[t].parent_job == par &&
			    d->scope[s].end_ns <= d->scope[t].start_ns)
				edge(p, node_end(p, s), node_start(p, t));
	}
	for (i = 0; i < d->ndecl && !serial_free; i++)
		edge(p, node_finish(p, d->decl[i] >> 32),
		     (uint32_t)d->decl[i]);
	for (i = 0; i < d->nedges; i++) {
		size_t x = d->edge[i].from, y = d->edge[i].to;

		if (holds(d, y, x))
			continue;       /* inside y's own span */
		/* After x's tools too, unless y started before they ended
		 * (x's own processes wrote it): after x's own work. */
		if (holds(d, x, y) || d->job[x].end_ns > d->job[y].start_ns)
			edge(p, x, y);
		else
			edge(p, node_finish(p, x), y);
	}
}

/* The recorded build's job slots: the largest -j of its makes and
 * ninjas (ninja's default where it has none), at least as many as ran
 * at once. */
static size_t recorded_slots(const struct pt_deps *d, int *any)
{
	size_t s, i, best = 0, k;
	int unlimited = 0;

	*any = 0;
	for (s = 0; s < d->nscopes; s++) {
		const struct pt_exec *e = d->scope[s].e;
		size_t n = 0;
		int got = 0;

		if (!e || d->scope[s].kind == PT_DEPS_SEQ)
			continue;
		*any = 1;
		for (i = 1; i < e->argc && !got; i++) {
			const char *a = pt_exec_arg(e, i), *v = NULL;
			const char *j = strchr(a, 'j');

			if (!strcmp(a, "--jobs") || !strncmp(a, "--jobs=", 7)) {
				v = a[6] ? a + 7 : NULL;
			} else if (a[0] == '-' && a[1] != '-' && j &&
				   /* -j4, -sj4: options without a value, then j */
				   strspn(a + 1, "BbeiknqrsStvw") ==
				   (size_t)(j - a - 1)) {
				v = j + 1;
			} else {
				continue;
			}
			got = 1;
			if ((!v || !*v) && i + 1 < e->argc &&
			    strspn(pt_exec_arg(e, i + 1), "0123456789") ==
			    strlen(pt_exec_arg(e, i + 1)) &&
			    *pt_exec_arg(e, i + 1))
				v = pt_exec_arg(e, i + 1);
			if (!v || !*v)
				unlimited = 1;
			else
				n = (size_t)strtoul(v, NULL, 10);
		}
		if (!got && d->scope[s].kind == PT_DEPS_NINJA)
			n = d->machine_cpus > 2 ? (size_t)d->machine_cpus + 2 :
			    d->machine_cpus == 2 ? 3 : 2;
		if (!got && d->scope[s].kind == PT_DEPS_MAKE)
			n = 1;
		/* opam's default: one CPU left to itself */
		if (!got && d->scope[s].kind == PT_DEPS_OPAM)
			n = d->machine_cpus > 1 ? (size_t)d->machine_cpus - 1 : 1;
		if (n > best)
			best = n;
	}
	if (unlimited)
		return 0;
	/* At least what ran at once (MAKEFLAGS, a jobserver's -j). */
	{
		int64_t *ends = pt_xmalloc((d->njobs + 1) * sizeof *ends);
		size_t ne = 0;

		for (i = 0; i < d->njobs; i++) {
			if (d->container[i] ||
			    d->scope[d->job[i].scope].kind == PT_DEPS_SEQ)
				continue;
			for (k = 0; k < ne;)
				if (ends[k] <= d->job[i].start_ns)
					ends[k] = ends[--ne];
				else
					k++;
			ends[ne++] = d->job[i].end_ns;
			if (ne > best)
				best = ne;
		}
		free(ends);
	}
	return best ? best : 1;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* pat against the whole of s (a glob, or the same text). */
static int match_whole(const char *pat, const char *s)
{
	if (!s || !*s)
		return 0;
	return has_glob(pat) ? !fnmatch(pat, s, 0) : !strcmp(pat, s);
}

static int match(const char *pat, const char *s)
{
	if (!s || !*s)
		return 0;
	return has_glob(pat) ? !fnmatch(pat, s, 0) : strstr(s, pat) != NULL;
}

static const char *base_name(const char *s)
{
	const char *b = s ? strrchr(s, '/') : NULL;

	return b ? b + 1 : s;
}

/* Does job i or a program it ran match pat: how (see mark())? */
static int job_match(const struct pt_deps *d, const char *pat, size_t i,
		     int how)
{
	const struct pt_deps_job *j = &d->job[i];

	if (how == 0 && j->target &&
	    d->scope[j->scope].kind == PT_DEPS_OPAM) {
		/* a package, by its name with or without its version: each
		 * of its phases (a.1, a.1 install) */
		char pkg[256];
		size_t n = strcspn(j->target, " ");

		snprintf(pkg, sizeof pkg, "%.*s", (int)n, j->target);
		if (match_whole(pat, pkg))
			return 1;
		pkg[strcspn(pkg, ".")] = 0;
		return match_whole(pat, pkg);
	}
	if (how == 0)
		return match_whole(pat, j->target) ||
		       match_whole(pat, base_name(j->target));
	if (how == 1 && d->container[i])
		return 0;
	return match(pat, j->target) || match(pat, j->cmd);
}

/*
 * Mark the jobs c matches, the closest sense first: a job's target or a
 * program it ran named by the whole pattern (check, cc1); else the
 * pattern in a target, a command or a program's path (src/, -O3); a job
 * that runs a build tool by its command only when nothing else matched
 * (what it runs is much more than its command says).  The jobs a
 * matched job runs are matched with it.
 */
static size_t mark(const struct pt_deps *d, const struct pt_model *m,
		   const struct pt_whatif_change *c, uint8_t *hit)
{
	size_t i, n = 0;
	int how;

	memset(hit, 0, d->njobs ? d->njobs : 1);
	if (!c->pattern) {
		hit[c->job] = 1;
		n = 1;
	}
	for (how = 0; how < 3 && !n; how++) {
		for (i = 0; i < d->njobs; i++)
			if (job_match(d, c->pattern, i, how)) {
				hit[i] = 1;
				n++;
			}
		for (i = 0; i < m->n && i < d->nexecs; i++) {
			const struct pt_exec *e = m->execs[i];
			uint32_t j = d->job_of[e->id];
			struct pt_sb sb = PT_SB_INIT;
			int ok;

			if (j == UINT32_MAX || hit[j] ||
			    (how == 1 && d->container[j]))
				continue;
			if (how == 0) {
				ok = match_whole(c->pattern, pt_exec_prog(e));
			} else {
				pt_exec_quote(e, &sb);
				ok = match(c->pattern, e->exe) ||
				     match(c->pattern, sb.buf);
				pt_sb_release(&sb);
			}
			if (ok) {
				hit[j] = 1;
				n++;
			}
		}
	}
	/* a job that runs a tool: what it runs too */
	for (i = 0, n = 0; i < d->njobs; i++) {
		if (!hit[i] && parent_of(d, i) != SIZE_MAX && hit[parent_of(d, i)])
			hit[i] = 1;
		n += hit[i];
	}
	return n;
}

static const char *name_of(const struct pt_deps *d, size_t j)
{
	return d->job[j].target ? d->job[j].target : d->job[j].cmd;
}

/*
 * Drop the jobs in gone and what only they needed: a job whose
 * dependents the tool declared (a make prerequisite, a ninja input) are
 * all gone, as are the jobs that read its files and those of the tools
 * it runs (an instrumented build that only the profile run needs).  A
 * job nothing declared to need it, or that a goal wants (the build's
 * products: all), stays, as do a script's steps.  -1 with *err when a job not dropped reads a file of
 * one dropped.
 */
static int drop(const struct pt_deps *d, uint8_t *gone, const uint8_t *hit,
		struct pt_whatif *w, char **err)
{
	size_t i, k, n = d->njobs, *kept = pt_xcalloc(d->nscopes + 1, sizeof *kept);
	uint64_t *e = pt_xmalloc((d->ndecl + d->nedges + d->nscopes + 1) * sizeof *e);
	struct pt_depsched_graph need, file, held;
	size_t ne = 0;

	/* Each job's tool-declared dependents, file readers and scopes. */
	for (k = 0; k < d->ndecl; k++)
		if (d->decl_tool[k])
			e[ne++] = d->decl[k];
	pt_depsched_graph_make(&need, n, e, ne);
	for (k = 0, ne = 0; k < d->nedges; k++)
		e[ne++] = (uint64_t)d->edge[k].from << 32 | d->edge[k].to;
	pt_depsched_graph_make(&file, n, e, ne);
	for (k = 1, ne = 0; k < d->nscopes; k++)
		if (d->scope[k].parent_job != SIZE_MAX)
			e[ne++] = (uint64_t)d->scope[k].parent_job << 32 | k;
	/* nodes: jobs and scopes both (a graph counts what edges reach) */
	pt_depsched_graph_make(&held, n > d->nscopes ? n : d->nscopes, e, ne);
	free(e);
	for (i = 0; i < n; i++)
		kept[d->job[i].scope] += !gone[i];
	/* Dependents come later: a job's are decided before it. */
	for (i = n; i-- > 0;) {
		size_t want = 0, needed = 0;

		if (gone[i])
			continue;
		for (k = need.succ_first[i]; k < need.succ_first[i + 1]; k++) {
			want++;
			needed += !gone[need.succ[k]];
		}
		for (k = file.succ_first[i]; k < file.succ_first[i + 1]; k++)
			if (!holds(d, i, file.succ[k]))
				needed += !gone[file.succ[k]];
		for (k = held.succ_first[i]; k < held.succ_first[i + 1]; k++) {
			want++;
			needed += kept[held.succ[k]];
		}
		if (!want || needed || d->wanted[i])
			continue;
		gone[i] = 1;
		kept[d->job[i].scope]--;
		w->taken = pt_xrealloc(w->taken, (w->ntaken + 1) *
				       sizeof *w->taken);
		w->taken[w->ntaken++] = i;
	}
	pt_depsched_graph_free(&need);
	pt_depsched_graph_free(&file);
	pt_depsched_graph_free(&held);
	free(kept);
	for (k = 0; k < d->nedges; k++) {
		size_t x = d->edge[k].from, y = d->edge[k].to;

		if (hit[x] && !gone[y] && !holds(d, y, x)) {
			*err = pt_sb_dupf("--drop: %s reads %s, which %s "
					  "writes: drop it too, or use --cached",
					  name_of(d, y), d->edge[k].path,
					  name_of(d, x));
			return -1;
		}
	}
	return 0;
}

/* The chain of jobs that made the schedule as long as it is, first to
 * last: from the node that ended last, back through the predecessor
 * that ended last or, where a node waited for a slot, the job whose end
 * freed it. */
static void critical(const struct plan *pl, const struct pt_depsched_graph *g,
		     const int64_t *start, const int64_t *end,
		     struct pt_whatif *w)
{
	struct pt_depsched_graph pred;  /* g's edges reversed */
	uint64_t *r = pt_xmalloc((pl->ne + 1) * sizeof *r);
	size_t cur = SIZE_MAX, i, steps;

	for (i = 0; i < pl->ne; i++)
		r[i] = (pl->e[i] << 32) | (pl->e[i] >> 32);
	pt_depsched_graph_make(&pred, g->n, r, pl->ne);
	free(r);
	for (i = 0; i < g->n; i++)
		if (cur == SIZE_MAX || end[i] > end[cur])
			cur = i;
	for (steps = 0; cur != SIZE_MAX && steps <= g->n; steps++) {
		size_t next = SIZE_MAX, k;

		if (cur < pl->nj && pl->nd[cur].dur > 0) {
			w->crit = pt_xrealloc(w->crit, (w->ncrit + 1) *
					      sizeof *w->crit);
			w->crit_ns = pt_xrealloc(w->crit_ns, (w->ncrit + 1) *
						 sizeof *w->crit_ns);
			w->crit_ns[w->ncrit] = end[cur] - start[cur];
			w->crit[w->ncrit++] = cur;
		}
		for (k = pred.succ_first[cur]; k < pred.succ_first[cur + 1]; k++)
			if (next == SIZE_MAX || end[pred.succ[k]] > end[next])
				next = pred.succ[k];
		if (next != SIZE_MAX && end[next] + 1000 < start[cur]) {
			/* it waited for a slot, not for them */
			size_t z = SIZE_MAX;

			for (i = 0; i < pl->nj; i++)
				if (i != cur && pl->nd[i].slot &&
				    pl->nd[i].dur > 0 &&
				    end[i] <= start[cur] + 1000 &&
				    end[i] + 1000 >= start[cur])
					z = i;
			if (z != SIZE_MAX)
				next = z;
		}
		cur = next;
	}
	for (i = 0; i < w->ncrit / 2; i++) {
		size_t t = w->crit[i];
		int64_t tn = w->crit_ns[i];

		w->crit[i] = w->crit[w->ncrit - 1 - i];
		w->crit[w->ncrit - 1 - i] = t;
		w->crit_ns[i] = w->crit_ns[w->ncrit - 1 - i];
		w->crit_ns[w->ncrit - 1 - i] = tn;
	}
	pt_depsched_graph_free(&pred);
}

/* The makespan of pl on its graph (with the critical path into w), or
 * -1 on a cycle. */
static int64_t schedule(struct plan *pl, size_t slots, double cpus,
			struct pt_whatif *w)
{
	struct pt_depsched_graph g;
	int64_t *st = NULL, *en = NULL, span;

	pt_depsched_graph_make(&g, pl->n, pl->e, pl->ne);
	if (w) {
		st = pt_xmalloc((pl->n + 1) * sizeof *st);
		en = pt_xmalloc((pl->n + 1) * sizeof *en);
	}
	span = pt_depsched_run(&g, pl->nd, slots, cpus, st, en);
	if (w && span >= 0)
		critical(pl, &g, st, en, w);
	free(st);
	free(en);
	pt_depsched_graph_free(&g);
	return span;
}

static void plan_init(struct plan *pl, const struct pt_deps *d)
{
	size_t i;

	memset(pl, 0, sizeof *pl);
	pl->d = d;
	pl->nj = d->njobs;
	pl->ns = d->nscopes;
	pl->n = 2 * pl->nj + 2 * pl->ns;
	pl->nd = pt_xcalloc(pl->n + 1, sizeof *pl->nd);
	for (i = 0; i < pl->nj; i++) {
		int k = d->scope[d->job[i].scope].kind;

		pl->nd[i].dur = d->dur[i];
		pl->nd[i].cpu = d->dur[i] > 0 ?
				(double)d->job[i].cpu_ns / (double)d->dur[i] : 0;
		pl->nd[i].slot = k != PT_DEPS_SEQ;
	}
}

static void plan_free(struct plan *pl)
{
	free(pl->e);
	free(pl->nd);
}

static const char cycle_msg[] =
	"the recorded order has a cycle: is this capture one build?";

int pt_whatif_predict(const struct pt_deps *d, const struct pt_model *m,
		      struct pt_whatif_change *c, size_t nc,
		      struct pt_whatif *w, char **err)
{
	struct plan pl;
	uint8_t *hit = pt_xmalloc(d->njobs + 1), *gone, *dropped;
	size_t i, k;
	int serial_free = 0, any_drop = 0, rc = -1;

	memset(w, 0, sizeof *w);
	*err = NULL;
	w->now_ns = d->wall_ns;
	w->files = d->accesses > 0;
	w->cpus = w->new_cpus = d->machine_cpus > 0 ? d->machine_cpus : 0;
	w->slots = w->new_slots = recorded_slots(d, &w->has_slots);
	plan_init(&pl, d);
	gone = pt_xcalloc(d->njobs + 1, 1);
	dropped = pt_xcalloc(d->njobs + 1, 1);
	for (i = 0; i < nc; i++) {
		switch (c[i].kind) {
		case PT_WHATIF_CPUS:
			w->new_cpus = c[i].n;
			if (w->has_slots)
				w->new_slots = (size_t)c[i].n;
			continue;
		case PT_WHATIF_JOBS:
			w->new_slots = (size_t)c[i].n;
			continue;
		case PT_WHATIF_SERIAL_FREE:
			if (!w->files) {
				*err = pt_sb_dupf("--serial-free needs the "
						  "files the jobs read and wrote: "
						  "record the build with --files");
				goto out;
			}
			serial_free = 1;
			continue;
		default:
			break;
		}
		c[i].matched = mark(d, m, &c[i], hit);
		if (!c[i].matched) {
			*err = pt_sb_dupf("'%s' matches no job of the build "
					  "(a part of a target, command or "
					  "program, or a glob)", c[i].pattern);
			goto out;
		}
		for (k = 0; k < d->njobs; k++) {
			if (!hit[k])
				continue;
			if (c[i].kind == PT_WHATIF_FASTER) {
				pl.nd[k].dur = (int64_t)((double)pl.nd[k].dur /
							 c[i].factor + 0.5);
			} else if (c[i].kind == PT_WHATIF_CACHED) {
				pl.nd[k].dur = parent_of(d, k) != SIZE_MAX &&
					       hit[parent_of(d, k)] ? 0 :
					       c[i].fetch_ns;
				pl.nd[k].cpu = 0;
			} else {
				gone[k] = 1;
			}
		}
		if (c[i].kind == PT_WHATIF_DROP)
			for (k = 0, any_drop = 1; k < d->njobs; k++)
				dropped[k] |= hit[k];
	}
	/* All drops at once: what one drops may be what another reads. */
	if (any_drop && drop(d, gone, dropped, w, err) < 0)
		goto out;
	for (k = 0; k < d->njobs; k++)
		if (gone[k])
			pl.nd[k].dur = 0;
	{
		struct plan base;

		plan_init(&base, d);
		plan_edges(&base, 0);
		w->base_ns = schedule(&base, w->slots, w->cpus, NULL);
		plan_free(&base);
	}
	plan_edges(&pl, serial_free);
	w->changed_ns = schedule(&pl, w->new_slots, w->new_cpus, w);
	if (w->base_ns < 0 || w->changed_ns < 0) {
		*err = pt_sb_dupf("%s", cycle_msg);
		goto out;
	}
	w->base_ns += d->lead_ns + d->tail_ns;
	w->changed_ns += d->lead_ns + d->tail_ns;
	/* The wall the recording lost to other load: the jobs' run-queue
	 * wait, spread over the jobs that ran at once. */
	w->lost_ns = 0;
	if (d->wait_ns > 0 && d->work_ns > 0)
		w->lost_ns = (int64_t)((double)d->wait_ns *
				       (double)d->wall_ns / (double)d->work_ns);
	if (w->lost_ns > w->now_ns)
		w->lost_ns = w->now_ns;
	w->free_ns = w->now_ns - w->lost_ns;
	w->predicted_ns = w->free_ns + w->changed_ns - w->base_ns;
	if (w->predicted_ns < 0)
		w->predicted_ns = 0;
	/* What the schedule does not explain of the recording, and the
	 * load taken off, is what one recording can tell: on a loaded
	 * machine the jobs' CPU time grows too, which no wait shows. */
	w->spread_ns = (w->free_ns > w->base_ns ? w->free_ns - w->base_ns :
			w->base_ns - w->free_ns) + w->lost_ns;
	if (w->spread_ns < (int64_t)(SPREAD_MIN_SHARE * (double)w->free_ns))
		w->spread_ns = (int64_t)(SPREAD_MIN_SHARE * (double)w->free_ns);
	rc = 0;
out:
	plan_free(&pl);
	free(hit);
	free(gone);
	free(dropped);
	return rc;
}

void pt_whatif_free(struct pt_whatif *w)
{
	free(w->crit);
	free(w->crit_ns);
	free(w->taken);
	memset(w, 0, sizeof *w);
}

/* ---- hints ---- */

static void hint_add(struct pt_whatif_hint *h, size_t *n, size_t max,
		     char *change, char *why, const struct pt_whatif *w)
{
	struct pt_whatif_hint x = { change, why, w->predicted_ns,
				    w->free_ns - w->predicted_ns };
	size_t i;

	if (x.saving_ns <= 0) {
		free(change);
		free(why);
		return;
	}
	/* keep the best max, by saving */
	for (i = *n; i > 0 && h[i - 1].saving_ns < x.saving_ns; i--)
		if (i < max)
			h[i] = h[i - 1];
		else {
			free(h[i - 1].change);
			free(h[i - 1].why);
		}
	if (i < max) {
		h[i] = x;
		if (*n < max)
			(*n)++;
	} else {
		free(change);
		free(why);
	}
}

size_t pt_whatif_hints(const struct pt_deps *d, const struct pt_model *m,
		       struct pt_whatif_hint *h, size_t max,
		       int64_t *now_ns, int64_t *spread_ns)
{
	struct pt_whatif w, base;
	struct pt_whatif_change c;
	size_t n = 0, i, best = SIZE_MAX;
	char *err;
	int cpus;

	*now_ns = d->wall_ns;
	*spread_ns = 0;
	if (pt_whatif_predict(d, m, NULL, 0, &base, &err) < 0) {
		free(err);
		return 0;
	}
	*now_ns = base.free_ns;
	*spread_ns = base.spread_ns;
	/* twice the CPUs */
	cpus = base.cpus > 0 ? 2 * (int)base.cpus : 2 * (int)(base.slots ?
								base.slots : 1);
	c = (struct pt_whatif_change){ .kind = PT_WHATIF_CPUS, .n = cpus };
	if (pt_whatif_predict(d, m, &c, 1, &w, &err) == 0)
		hint_add(h, &n, max, pt_sb_dupf("--cpus %d", cpus),
			 pt_sb_dupf("%d CPUs, the build at -j%d", cpus, cpus),
			 &w);
	else
		free(err);
	pt_whatif_free(&w);
	/* the serializations gone */
	if (base.files && d->nser) {
		c = (struct pt_whatif_change){ .kind = PT_WHATIF_SERIAL_FREE };
		if (pt_whatif_predict(d, m, &c, 1, &w, &err) == 0)
			hint_add(h, &n, max, pt_sb_dupf("--serial-free"),
				 pt_sb_dupf("the orders with no file dependency "
					    "under them gone, %s first",
					    d->ser[0].why), &w);
		else
			free(err);
		pt_whatif_free(&w);
	}
	/* the costliest job of the critical path, twice as fast */
	for (i = 0; i < base.ncrit; i++)
		if (best == SIZE_MAX || d->dur[base.crit[i]] > d->dur[best])
			best = base.crit[i];
	if (best != SIZE_MAX) {
		c = (struct pt_whatif_change){ .kind = PT_WHATIF_FASTER,
					       .job = best, .factor = 2 };
		if (pt_whatif_predict(d, m, &c, 1, &w, &err) == 0)
			hint_add(h, &n, max,
				 pt_sb_dupf("--faster '%s=2'",
					    name_of(d, best)),
				 pt_sb_dupf("the longest job on the critical "
					    "path (%.2f s) twice as fast",
					    (double)d->dur[best] / 1e9), &w);
		else
			free(err);
		pt_whatif_free(&w);
	}
	pt_whatif_free(&base);
	return n;
}

void pt_whatif_hints_free(struct pt_whatif_hint *h, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(h[i].change);
		free(h[i].why);
	}
}
