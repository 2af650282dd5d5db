/*
 * Inside analysis/: the graphs and schedules of proftrace deps
 * (analysis/depsched.c, for analysis/deps.c).
 */
#ifndef PT_DEPSCHED_H
#define PT_DEPSCHED_H

#include <stddef.h>
#include <stdint.h>

struct pt_depsched_graph {
	size_t n;
	size_t *succ_first;             /* [n + 1] */
	uint32_t *succ;
	uint32_t *npred;
};

struct pt_depsched_heap {
	int64_t *key;
	uint32_t *val;
	size_t n;
};

/* g: n nodes and the ne edges e (from << 32 | to), in any order. */
void pt_depsched_graph_make(struct pt_depsched_graph *g, size_t n,
			    const uint64_t *e, size_t ne);

void pt_depsched_graph_free(struct pt_depsched_graph *g);

/* level[i]: the longest path from node i to the end, its own duration
 * included (g has no cycle). */
void pt_depsched_levels(const struct pt_depsched_graph *g,
			const int64_t *dur, int64_t *level);

/* A binary min-heap of keys with values; the arrays hold n + 1. */
void pt_depsched_heap_push(struct pt_depsched_heap *h, int64_t key,
			   uint32_t val);
void pt_depsched_heap_pop(struct pt_depsched_heap *h);

/*
 * List scheduling on cpus CPUs (0: as many as there are nodes): whenever
 * a CPU is free, it takes the ready node with the longest path to the
 * end.  Nodes from `instant` on are barriers: done as soon as ready, on
 * no CPU.  With start and cpu (or NULL): where each node went, CPUs
 * numbered from 0.  Returns the makespan.
 */
int64_t pt_depsched_schedule(const struct pt_depsched_graph *g,
			     const int64_t *dur, const int64_t *level,
			     size_t cpus, size_t instant, int64_t *start,
			     int *cpu);

#endif
