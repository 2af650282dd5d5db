/*
 * The build's dependency graph from the files its jobs read and wrote,
 * and what an ideal schedule of its jobs would take (analysis/deps.h).
 *
 * Jobs: the children of the build's driver, the first execution from
 * the root down that started more than one program (make, ninja, a
 * shell script); a child that is itself a build tool (a recursive make)
 * stands for its children.  Each job is its whole subtree.
 *
 * An edge A -> B when B read, probed or executed a path that A wrote
 * (wrote, made, renamed or linked to, made a directory of) before B
 * first read it.  Jobs are ordered by start and edges go forward only,
 * so the graph has no cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/deps.h"
#include "base/strbuf.h"

/* Pairs of jobs looked at for one path, at most: a log every job
 * appends to would otherwise cost jobs squared. */
#define PAIRS_PER_PATH 200000u
#define SER_MAX 20
#define RACE_MAX 50

static int is_tool(const struct pt_exec *e)
{
	static const char *const tools[] = { "make", "gmake", "ninja",
		"dune", "opam", "cargo", "samu", NULL };
	const char *p = pt_exec_prog(e);
	size_t i;

	for (i = 0; tools[i]; i++)
		if (!strcmp(p, tools[i]))
			return 1;
	return 0;
}

static size_t nchildren(const struct pt_exec *e)
{
	size_t n = 0;

	for (e = e->first_child; e; e = e->next_sibling)
		n++;
	return n;
}

struct jobs {
	struct pt_deps_job *j;
	size_t n, cap;
};

static void span(const struct pt_exec *e, int64_t *s, int64_t *end)
{
	if (e->start_ns < *s)
		*s = e->start_ns;
	if (e->end_ns > *end)
		*end = e->end_ns;
	for (e = e->first_child; e; e = e->next_sibling)
		span(e, s, end);
}

static void add_jobs(struct jobs *js, const struct pt_exec *parent, int depth)
{
	const struct pt_exec *c;

	for (c = parent->first_child; c; c = c->next_sibling) {
		if (depth < 8 && is_tool(c) && c->first_child) {
			add_jobs(js, c, depth + 1);
			continue;
		}
		if (js->n == js->cap) {
			js->cap = js->cap ? 2 * js->cap : 64;
			js->j = pt_xrealloc(js->j, js->cap * sizeof *js->j);
		}
		memset(&js->j[js->n], 0, sizeof *js->j);
		js->j[js->n].e = c;
		js->j[js->n].start_ns = c->start_ns;
		js->j[js->n].end_ns = c->end_ns;
		span(c, &js->j[js->n].start_ns, &js->j[js->n].end_ns);
		js->n++;
	}
}

static int cmp_job(const void *x, const void *y)
{
	const struct pt_deps_job *a = x, *b = y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->e->id < b->e->id ? -1 : a->e->id > b->e->id;
}

/* ---- paths: who wrote and who read each, first time per job ---- */

struct touch {
	uint32_t job;
	int64_t t;
	uint8_t write;                  /* 1: wrote; 0: read (2: really read,
					 * not probed: what a race needs) */
	uint8_t strong;
};

struct pathent {
	const char *path;
	struct touch *t;
	size_t n, cap;
};

struct pathtab {
	struct pathent *e;
	size_t n, cap;                  /* cap: a power of two */
};

static struct pathent *path_get(struct pathtab *pt, const char *path)
{
	size_t h, i;

	if (2 * (pt->n + 1) > pt->cap) {
		struct pathtab nt = { NULL, 0, pt->cap ? 2 * pt->cap : 4096 };

		nt.e = pt_xcalloc(nt.cap, sizeof *nt.e);
		for (i = 0; i < pt->cap; i++)
			if (pt->e[i].path) {
				h = ((uintptr_t)pt->e[i].path >> 3) * 0x9e3779b97f4a7c15ull;
				for (h &= nt.cap - 1; nt.e[h].path;
				     h = (h + 1) & (nt.cap - 1))
					;
				nt.e[h] = pt->e[i];
			}
		nt.n = pt->n;
		free(pt->e);
		*pt = nt;
	}
	h = ((uintptr_t)path >> 3) * 0x9e3779b97f4a7c15ull;
	for (h &= pt->cap - 1; pt->e[h].path; h = (h + 1) & (pt->cap - 1))
		if (pt->e[h].path == path)
			return &pt->e[h];
	pt->e[h].path = path;
	pt->n++;
	return &pt->e[h];
}

static void touch(struct pathtab *pt, const char *path, uint32_t job,
		  int64_t t, int write, int strong)
{
	struct pathent *pe;
	size_t i;

	/* Devices and the kernel's files carry no build's data. */
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
	    !strncmp(path, "/sys/", 5) || !strcmp(path, "/dev"))
		return;
	pe = path_get(pt, path);
	/* The job's own touches are last: its first of each sort is kept. */
	for (i = pe->n; i-- > 0 && pe->t[i].job == job;)
		if (pe->t[i].write == write) {
			if (t < pe->t[i].t)
				pe->t[i].t = t;
			pe->t[i].strong |= (uint8_t)strong;
			return;
		}
	if (pe->n == pe->cap) {
		pe->cap = pe->cap ? 2 * pe->cap : 4;
		pe->t = pt_xrealloc(pe->t, pe->cap * sizeof *pe->t);
	}
	pe->t[pe->n++] = (struct touch){ job, t, (uint8_t)write,
					 (uint8_t)strong };
}

static void gather(const struct pt_model *m, struct pathtab *pt,
		   const struct pt_exec *e, uint32_t job)
{
	const struct pt_file_access *a;
	const struct pt_exec *c;
	size_t n, i;

	if (e->type == PT_EXEC_EXEC && e->exe[0] == '/' &&
	    !(e->flags & PT_EXF_UNTRACED))
		/* Interned in the same table: the same string, the same pointer. */
		touch(pt, e->exe, job, e->start_ns,
		      0, 1);
	a = pt_model_files(m, e, &n);
	for (i = 0; i < n; i++) {
		int w = a[i].kind == 'w' || a[i].kind == 'n' ||
			a[i].kind == 'k';
		int r = a[i].kind == 'r' || a[i].kind == 'p';

		if (w || r)
			touch(pt, a[i].path, job, a[i].time_ns, w,
			      a[i].kind == 'r');
	}
	for (c = e->first_child; c; c = c->next_sibling)
		gather(m, pt, c, job);
}

/* ---- the graph ---- */

struct graph {
	size_t n;
	size_t *succ_first;             /* [n + 1] */
	uint32_t *succ;
	uint32_t *npred;
};

static int cmp_edge(const void *x, const void *y)
{
	const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* ---- heaps for the schedule ---- */

struct heap {
	int64_t *key;
	uint32_t *val;
	size_t n;
};

static void heap_push(struct heap *h, int64_t key, uint32_t val)
{
	size_t i = h->n++;

	while (i) {
		size_t p = (i - 1) / 2;

		if (h->key[p] <= key)
			break;
		h->key[i] = h->key[p];
		h->val[i] = h->val[p];
		i = p;
	}
	h->key[i] = key;
	h->val[i] = val;
}

static void heap_pop(struct heap *h)
{
	int64_t key = h->key[--h->n];
	uint32_t val = h->val[h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->key[c + 1] < h->key[c])
			c++;
		if (key <= h->key[c])
			break;
		h->key[i] = h->key[c];
		h->val[i] = h->val[c];
		i = c;
	}
	if (h->n) {
		h->key[i] = key;
		h->val[i] = val;
	}
}

/*
 * List scheduling on cpus CPUs (0: as many as there are jobs): whenever
 * a CPU is free, it takes the ready job with the longest path to the
 * end.  Returns the makespan.
 */
static int64_t schedule(const struct graph *g, const int64_t *dur,
			const int64_t *level, size_t cpus, int64_t *start,
			int *cpu)
{
	/* With start and cpu: where each job went, CPUs numbered from 0. */
	int *free_cpu = pt_xmalloc((g->n + 1) * sizeof *free_cpu), nfree;
	struct heap ready = { pt_xmalloc((g->n + 1) * sizeof(int64_t)),
			      pt_xmalloc((g->n + 1) * sizeof(uint32_t)), 0 };
	struct heap run = { pt_xmalloc((g->n + 1) * sizeof(int64_t)),
			    pt_xmalloc((g->n + 1) * sizeof(uint32_t)), 0 };
	uint32_t *left = pt_xmalloc((g->n + 1) * sizeof *left);
	int64_t t = 0, end = 0;
	size_t i, k, done = 0;

	if (!cpus)
		cpus = g->n ? g->n : 1;
	for (nfree = 0; (size_t)nfree < cpus && (size_t)nfree <= g->n; nfree++)
		free_cpu[nfree] = (int)(cpus - 1 - (size_t)nfree);
	memcpy(left, g->npred, g->n * sizeof *left);
	for (i = 0; i < g->n; i++)
		if (!left[i])
			heap_push(&ready, -level[i], (uint32_t)i);
	while (done < g->n) {
		while (run.n < cpus && ready.n) {
			uint32_t j = ready.val[0];

			heap_pop(&ready);
			heap_push(&run, t + dur[j], j);
			if (start) {
				start[j] = t;
				cpu[j] = free_cpu[--nfree];
			}
		}
		if (!run.n)
			break;          /* cannot happen: no cycles */
		t = run.key[0];
		while (run.n && run.key[0] == t) {
			uint32_t j = run.val[0];

			heap_pop(&run);
			done++;
			if (start)
				free_cpu[nfree++] = cpu[j];
			for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++)
				if (!--left[g->succ[k]])
					heap_push(&ready, -level[g->succ[k]],
						  g->succ[k]);
		}
		end = t;
	}
	free(ready.key);
	free(ready.val);
	free(run.key);
	free(run.val);
	free(left);
	free(free_cpu);
	return end;
}

/* Is there a path from a to b (a < b)? */
static int reaches(const struct graph *g, size_t a, size_t b, uint8_t *seen,
		   uint32_t *stack)
{
	size_t sp = 0, k;
	int found = 0;

	memset(seen, 0, g->n);
	stack[sp++] = (uint32_t)a;
	seen[a] = 1;
	while (sp && !found) {
		uint32_t j = stack[--sp];

		for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++) {
			uint32_t s = g->succ[k];

			if (s == b) {
				found = 1;
				break;
			}
			if (s < b && !seen[s]) {
				seen[s] = 1;
				stack[sp++] = s;
			}
		}
	}
	return found;
}

static int cmp_ser(const void *x, const void *y)
{
	const struct pt_deps_ser *a = x, *b = y;

	if (a->gain_ns != b->gain_ns)
		return a->gain_ns > b->gain_ns ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static const struct pt_exec *find_driver(const struct pt_model *m)
{
	const struct pt_exec *root = NULL, *e;
	size_t i;

	/* The root that spans the longest (a daemon's capture has many). */
	for (i = 0; i < m->n; i++) {
		e = m->execs[i];
		if (!e->parent && (!root || e->end_ns - e->start_ns >
					    root->end_ns - root->start_ns))
			root = e;
	}
	for (e = root; e && nchildren(e) == 1; e = e->first_child)
		;
	return e && nchildren(e) >= 2 ? e : NULL;
}

int pt_deps_build(const struct pt_model *m, struct pt_deps *d,
		  const char **why)
{
	struct jobs js = { 0 };
	struct pathtab pt = { 0 };
	uint64_t *edge = NULL;
	size_t nedge = 0, cedge = 0, i, k, a, b;
	struct graph g = { 0 };
	int64_t *dur, *level, first = INT64_MAX, last = INT64_MIN;
	const char *cpus;
	int conc = 0;

	memset(d, 0, sizeof *d);
	d->accesses = pt_model_files_count(m, &d->dropped);
	if (!d->accesses) {
		*why = "the capture holds no file accesses: record it with "
		       "proftrace record --files";
		return -1;
	}
	if (!(d->driver = find_driver(m))) {
		*why = "no execution started more than one program: there are "
		       "no jobs to schedule";
		return -1;
	}
	add_jobs(&js, d->driver, 0);
	qsort(js.j, js.n, sizeof *js.j, cmp_job);
	d->job = js.j;
	d->njobs = js.n;
	for (i = 0; i < js.n; i++) {
		struct pt_sb sb = PT_SB_INIT;

		if (js.j[i].e->argc)
			pt_exec_quote(js.j[i].e, &sb);
		d->job[i].cmd = pt_sb_detach(&sb, NULL);
		gather(m, &pt, js.j[i].e, (uint32_t)i);
		if (js.j[i].start_ns < first)
			first = js.j[i].start_ns;
		if (js.j[i].end_ns > last)
			last = js.j[i].end_ns;
	}
	d->wall_ns = d->driver->end_ns - d->driver->start_ns;
	{
		/* The whole build: from its root's start to its end. */
		const struct pt_exec *r = d->driver;

		while (r->parent)
			r = r->parent;
		d->wall_ns = r->end_ns - r->start_ns;
		d->lead_ns = first > r->start_ns ? first - r->start_ns : 0;
		d->tail_ns = r->end_ns > last ? r->end_ns - last : 0;
	}

	/* Edges and races, path by path. */
	for (i = 0; i < pt.cap; i++) {
		struct pathent *pe = &pt.e[i];
		size_t pairs = 0;

		if (!pe->path)
			continue;
		for (a = 0; a < pe->n && pairs < PAIRS_PER_PATH; a++) {
			const struct touch *w = &pe->t[a];

			if (!w->write)
				continue;
			for (b = 0; b < pe->n && pairs < PAIRS_PER_PATH; b++) {
				const struct touch *r = &pe->t[b];
				const struct pt_deps_job *wj = &d->job[w->job];
				const struct pt_deps_job *rj = &d->job[r->job];
				int overlap;

				if (r->write || r->job == w->job)
					continue;
				pairs++;
				overlap = wj->start_ns < rj->end_ns &&
					  rj->start_ns < wj->end_ns;
				if (w->t < r->t && w->job < r->job) {
					if (nedge == cedge) {
						cedge = cedge ? 2 * cedge : 256;
						edge = pt_xrealloc(edge, cedge *
								   sizeof *edge);
					}
					edge[nedge++] = (uint64_t)w->job << 32 |
							r->job;
				}
				if (overlap && r->strong &&
				    (r->t < w->t || r->t < wj->end_ns) &&
				    d->nrace < RACE_MAX) {
					d->race = pt_xrealloc(d->race,
						(d->nrace + 1) * sizeof *d->race);
					d->race[d->nrace++] =
						(struct pt_deps_race){ pe->path,
							w->job, r->job };
				}
			}
		}
	}
	qsort(edge, nedge, sizeof *edge, cmp_edge);
	for (i = k = 0; i < nedge; i++)
		if (!k || edge[i] != edge[k - 1])
			edge[k++] = edge[i];
	nedge = k;
	d->nedges = nedge;
	g.n = js.n;
	g.succ_first = pt_xcalloc(g.n + 1, sizeof *g.succ_first);
	g.succ = pt_xmalloc((nedge ? nedge : 1) * sizeof *g.succ);
	g.npred = pt_xcalloc(g.n ? g.n : 1, sizeof *g.npred);
	for (i = 0; i < nedge; i++) {
		g.succ_first[(edge[i] >> 32) + 1]++;
		g.succ[i] = (uint32_t)edge[i];
		g.npred[(uint32_t)edge[i]]++;
	}
	for (i = 0; i < g.n; i++)
		g.succ_first[i + 1] += g.succ_first[i];

	/* Longest path from each job to the end, in reverse start order. */
	dur = pt_xmalloc((g.n ? g.n : 1) * sizeof *dur);
	level = pt_xmalloc((g.n ? g.n : 1) * sizeof *level);
	for (i = 0; i < g.n; i++)
		dur[i] = d->job[i].end_ns > d->job[i].start_ns ?
			 d->job[i].end_ns - d->job[i].start_ns : 0;
	for (i = g.n; i-- > 0;) {
		int64_t best = 0;

		for (k = g.succ_first[i]; k < g.succ_first[i + 1]; k++)
			if (level[g.succ[k]] > best)
				best = level[g.succ[k]];
		level[i] = dur[i] + best;
	}
	{
		size_t at = SIZE_MAX;
		int64_t best = -1;

		for (i = 0; i < g.n; i++)
			if (!g.npred[i] && level[i] > best) {
				best = level[i];
				at = i;
			}
		while (at != SIZE_MAX) {
			size_t next = SIZE_MAX;

			d->crit = pt_xrealloc(d->crit,
					      (d->ncrit + 1) * sizeof *d->crit);
			d->crit[d->ncrit++] = at;
			for (k = g.succ_first[at]; k < g.succ_first[at + 1]; k++)
				if (level[g.succ[k]] == level[at] - dur[at])
					next = g.succ[k];
			at = next;
		}
	}

	/* The most jobs that ran at once: the recorded schedule is one of
	 * the candidates on that many CPUs or more. */
	{
		struct heap h = { pt_xmalloc((g.n + 1) * sizeof(int64_t)),
				  pt_xmalloc((g.n + 1) * sizeof(uint32_t)), 0 };

		for (i = 0; i < g.n; i++) {
			while (h.n && h.key[0] <= d->job[i].start_ns)
				heap_pop(&h);
			heap_push(&h, d->job[i].end_ns, (uint32_t)i);
			if ((int)h.n > conc)
				conc = (int)h.n;
		}
		free(h.key);
		free(h.val);
	}
	cpus = pt_model_meta(m, 0, "cpus");
	d->machine_cpus = cpus ? atoi(cpus) : 0;
	{
		int64_t unl = d->lead_ns + (g.n ? level[d->crit[0]] : 0) +
			      d->tail_ns, prev = INT64_MAX;
		int p;

		for (p = 1; d->nideal + 1 < sizeof d->ideal / sizeof *d->ideal;
		     p *= 2) {
			int64_t w = d->lead_ns + schedule(&g, dur, level,
							  (size_t)p, NULL,
							  NULL) +
				    d->tail_ns;

			/* More CPUs never make a schedule worse; the recorded
			 * one fits on as many as ran at once. */
			if (w > prev)
				w = prev;
			if (p >= conc && w > d->wall_ns)
				w = d->wall_ns;
			if (w < unl)
				w = unl;
			d->ideal[d->nideal++] = (struct pt_deps_ideal){ p, w };
			prev = w;
			if ((w <= unl && p >= d->machine_cpus) ||
			    (size_t)p >= g.n)
				break;
		}
		if (unl > prev)
			unl = prev;
		d->ideal[d->nideal++] = (struct pt_deps_ideal){ 0, unl };
	}
	/* The schedule on this machine's CPUs, to be drawn. */
	d->sched_cpus = d->machine_cpus > 0 ? d->machine_cpus : 2;
	d->sched = pt_xcalloc(g.n ? g.n : 1, sizeof *d->sched);
	{
		int64_t *st = pt_xmalloc((g.n ? g.n : 1) * sizeof *st);
		int *cp = pt_xmalloc((g.n ? g.n : 1) * sizeof *cp);

		d->sched_span_ns = d->lead_ns + schedule(&g, dur, level,
					(size_t)d->sched_cpus, st, cp) +
				   d->tail_ns;
		for (i = 0; i < g.n; i++)
			d->sched[i] = (struct pt_deps_slot){ cp[i],
				d->lead_ns + st[i], d->lead_ns + st[i] + dur[i], 0 };
		for (i = 0; i < d->ncrit; i++)
			d->sched[d->crit[i]].critical = 1;
		free(st);
		free(cp);
	}

	/* Serializations: a job that started once the one before it had
	 * ended, with nothing else running, and no path between them. */
	{
		uint8_t *seen = pt_xmalloc(g.n ? g.n : 1);
		uint32_t *stack = pt_xmalloc((g.n ? g.n : 1) * sizeof *stack);

		for (b = 1; b < g.n; b++) {
			size_t prev = SIZE_MAX;
			int busy = 0;

			for (a = 0; a < b; a++) {
				if (d->job[a].end_ns > d->job[b].start_ns) {
					busy = 1;
					break;
				}
				if (prev == SIZE_MAX ||
				    d->job[a].end_ns > d->job[prev].end_ns)
					prev = a;
			}
			if (busy || prev == SIZE_MAX ||
			    reaches(&g, prev, b, seen, stack))
				continue;
			d->ser = pt_xrealloc(d->ser,
					     (d->nser + 1) * sizeof *d->ser);
			d->ser[d->nser++] = (struct pt_deps_ser){ prev, b,
				dur[prev] < dur[b] ? dur[prev] : dur[b] };
		}
		free(seen);
		free(stack);
		qsort(d->ser, d->nser, sizeof *d->ser, cmp_ser);
		if (d->nser > SER_MAX)
			d->nser = SER_MAX;
	}

	for (i = 0; i < pt.cap; i++)
		free(pt.e[i].t);
	free(pt.e);
	free(edge);
	free(g.succ_first);
	free(g.succ);
	free(g.npred);
	free(dur);
	free(level);
	return 0;
}

void pt_deps_free(struct pt_deps *d)
{
	size_t i;

	for (i = 0; i < d->njobs; i++)
		free(d->job[i].cmd);
	free(d->job);
	free(d->crit);
	free(d->sched);
	free(d->ser);
	free(d->race);
	memset(d, 0, sizeof *d);
}
