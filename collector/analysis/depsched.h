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

struct pt_depsched_node {
	int64_t dur;                    /* ns of work, at full speed */
	double cpu;                     /* the CPUs it keeps busy meanwhile */
	int slot;                       /* it takes one of the tools' job
					 * slots (make -jN, ninja -jN) */
};

/*
 * The build as its tools would run it: a node starts once every node
 * before it in g is done, those that take a slot in index order (the
 * order the recorded tools took them in) while fewer than slots run (0:
 * no limit); the nodes running at once share cpus CPUs, each at
 * min(1, cpus / the CPUs they would use together) of its speed.  With
 * start and end (or NULL): each node's times.  Returns the makespan, or
 * -1 when some node never became ready (g has a cycle).
 */
int64_t pt_depsched_run(const struct pt_depsched_graph *g,
			const struct pt_depsched_node *nd, size_t slots,
			double cpus, int64_t *start, int64_t *end);

#endif
