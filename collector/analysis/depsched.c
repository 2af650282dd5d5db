/*
 * proftrace deps's schedules (analysis/depsched.h): list scheduling of
 * jobs under their dependencies, and the longest paths it goes by.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/depsched.h"
#include "base/strbuf.h"

/* ---- the graph and the schedule ---- */

void pt_depsched_graph_make(struct pt_depsched_graph *g, size_t n, const uint64_t *e,
		       size_t ne)
{
	size_t i;

	g->n = n;
	g->succ_first = pt_xcalloc(n + 2, sizeof *g->succ_first);
	g->succ = pt_xmalloc((ne ? ne : 1) * sizeof *g->succ);
	g->npred = pt_xcalloc(n ? n : 1, sizeof *g->npred);
	for (i = 0; i < ne; i++)
		g->succ_first[(e[i] >> 32) + 1]++;
	for (i = 0; i < n; i++)
		g->succ_first[i + 1] += g->succ_first[i];
	{
		size_t *at = pt_xmalloc((n + 1) * sizeof *at);

		memcpy(at, g->succ_first, (n + 1) * sizeof *at);
		for (i = 0; i < ne; i++) {
			g->succ[at[e[i] >> 32]++] = (uint32_t)e[i];
			g->npred[(uint32_t)e[i]]++;
		}
		free(at);
	}
}

void pt_depsched_graph_free(struct pt_depsched_graph *g)
{
	free(g->succ_first);
	free(g->succ);
	free(g->npred);
}

/* Longest path from each node to the end (its own duration included),
 * in a topological order. */
void pt_depsched_levels(const struct pt_depsched_graph *g, const int64_t *dur, int64_t *level)
{
	uint32_t *order = pt_xmalloc((g->n + 1) * sizeof *order);
	uint32_t *left = pt_xmalloc((g->n + 1) * sizeof *left);
	size_t i, k, head = 0, tail = 0;

	memcpy(left, g->npred, g->n * sizeof *left);
	for (i = 0; i < g->n; i++)
		if (!left[i])
			order[tail++] = (uint32_t)i;
	while (head < tail) {
		uint32_t j = order[head++];

		for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++)
			if (!--left[g->succ[k]])
				order[tail++] = g->succ[k];
	}
	for (i = tail; i-- > 0;) {
		uint32_t j = order[i];
		int64_t best = 0;

		for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++)
			if (level[g->succ[k]] > best)
				best = level[g->succ[k]];
		level[j] = dur[j] + best;
	}
	free(order);
	free(left);
}

/* ---- heaps for the schedule ---- */

void pt_depsched_heap_push(struct pt_depsched_heap *h, int64_t key, uint32_t val)
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

void pt_depsched_heap_pop(struct pt_depsched_heap *h)
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
 * end.  Nodes from `instant` on are barriers: done as soon as ready,
 * on no CPU.  Returns the makespan.
 */
int64_t pt_depsched_schedule(const struct pt_depsched_graph *g, const int64_t *dur,
			const int64_t *level, size_t cpus, size_t instant,
			int64_t *start, int *cpu)
{
	/* With start and cpu: where each job went, CPUs numbered from 0. */
	int *free_cpu = pt_xmalloc((g->n + 1) * sizeof *free_cpu), nfree;
	struct pt_depsched_heap ready = { pt_xmalloc((g->n + 1) * sizeof(int64_t)),
			      pt_xmalloc((g->n + 1) * sizeof(uint32_t)), 0 };
	struct pt_depsched_heap run = { pt_xmalloc((g->n + 1) * sizeof(int64_t)),
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
			pt_depsched_heap_push(&ready, i >= instant ? INT64_MIN : -level[i],
				  (uint32_t)i);
	while (done < g->n) {
		while (ready.n && (run.n < cpus || ready.val[0] >= instant)) {
			uint32_t j = ready.val[0];

			pt_depsched_heap_pop(&ready);
			if (j >= instant) {
				done++;
				for (k = g->succ_first[j];
				     k < g->succ_first[j + 1]; k++)
					if (!--left[g->succ[k]])
						pt_depsched_heap_push(&ready, g->succ[k] >=
							  instant ? INT64_MIN :
							  -level[g->succ[k]],
							  g->succ[k]);
				continue;
			}
			pt_depsched_heap_push(&run, t + dur[j], j);
			if (start) {
				start[j] = t;
				cpu[j] = free_cpu[--nfree];
			}
		}
		if (!run.n)
			break;          /* done, or a cycle (none) */
		t = run.key[0];
		while (run.n && run.key[0] == t) {
			uint32_t j = run.val[0];

			pt_depsched_heap_pop(&run);
			done++;
			if (start)
				free_cpu[nfree++] = cpu[j];
			for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++)
				if (!--left[g->succ[k]])
					pt_depsched_heap_push(&ready, g->succ[k] >= instant ?
						  INT64_MIN : -level[g->succ[k]],
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


/* ---- the build as its tools would run it ---- */

static void ready_push(struct pt_depsched_heap *slotted, uint32_t *now,
		       size_t *nnow, const struct pt_depsched_node *nd,
		       uint32_t j)
{
	if (nd[j].slot && nd[j].dur > 0)
		pt_depsched_heap_push(slotted, (int64_t)j, j);
	else
		now[(*nnow)++] = j;
}

int64_t pt_depsched_run(const struct pt_depsched_graph *g,
			const struct pt_depsched_node *nd, size_t slots,
			double cpus, int64_t *start, int64_t *end)
{
	size_t n = g->n, i, k, nrun = 0, nnow = 0, done = 0, busy = 0;
	uint32_t *left = pt_xmalloc((n + 1) * sizeof *left);
	uint32_t *now = pt_xmalloc((n + 1) * sizeof *now);
	uint32_t *run = pt_xmalloc((n + 1) * sizeof *run);
	double *rem = pt_xmalloc((n + 1) * sizeof *rem), t = 0, span = 0;
	struct pt_depsched_heap slotted = {
		pt_xmalloc((n + 1) * sizeof(int64_t)),
		pt_xmalloc((n + 1) * sizeof(uint32_t)), 0 };

	memcpy(left, g->npred, n * sizeof *left);
	for (i = 0; i < n; i++)
		if (!left[i])
			ready_push(&slotted, now, &nnow, nd, (uint32_t)i);
	for (;;) {
		double demand = 0, rate = 1, dt = -1;

		/* Start what may start: nodes of no slot at once, the
		 * others in index order while slots are free. */
		while (nnow || (slotted.n && (!slots || busy < slots))) {
			uint32_t j;

			if (nnow) {
				j = now[--nnow];
			} else {
				j = slotted.val[0];
				pt_depsched_heap_pop(&slotted);
				busy++;
			}
			if (start)
				start[j] = (int64_t)(t + 0.5);
			if (nd[j].dur > 0) {
				rem[j] = (double)nd[j].dur;
				run[nrun++] = j;
				continue;
			}
			/* nothing to do: done as soon as started */
			if (end)
				end[j] = (int64_t)(t + 0.5);
			done++;
			for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++)
				if (!--left[g->succ[k]])
					ready_push(&slotted, now, &nnow, nd,
						   g->succ[k]);
		}
		if (!nrun)
			break;
		/* Running nodes share the CPUs: each at the same rate. */
		for (i = 0; i < nrun; i++)
			demand += nd[run[i]].cpu;
		if (cpus > 0 && demand > cpus)
			rate = cpus / demand;
		for (i = 0; i < nrun; i++)
			if (dt < 0 || rem[run[i]] / rate < dt)
				dt = rem[run[i]] / rate;
		t += dt;
		for (i = 0; i < nrun;) {
			uint32_t j = run[i];

			rem[j] -= dt * rate;
			if (rem[j] > 0.5) {
				i++;
				continue;
			}
			run[i] = run[--nrun];
			if (end)
				end[j] = (int64_t)(t + 0.5);
			if (nd[j].slot)
				busy--;
			done++;
			for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++)
				if (!--left[g->succ[k]])
					ready_push(&slotted, now, &nnow, nd,
						   g->succ[k]);
		}
		span = t;
	}
	free(left);
	free(now);
	free(run);
	free(rem);
	free(slotted.key);
	free(slotted.val);
	return done == n ? (int64_t)(span + 0.5) : -1;
}
