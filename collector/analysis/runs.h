/*
 * Many runs of one build: each capture read as one run, its executions
 * matched with the other runs' by key (pt_group_key; for command keys,
 * executions with the same key in one run are numbered in start order:
 * the second is "KEY #2"), and per key and run the figures that
 * `report --runs` summarizes and `diff A... -- B...` compares.  Each
 * capture's model is freed once its figures are taken, so that many runs
 * of a large build fit in memory.
 */
#ifndef PT_RUNS_H
#define PT_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "model/redact.h"

/* One key in one run (n == 0: the key did not occur in that run). */
struct pt_run_val {
	int64_t wall, self;             /* ns, summed over its executions */
	int64_t cpu_us;
	int64_t rss_kb;                 /* the largest; -1 if unknown */
	int64_t cp_own;                 /* own time on the critical path, ns */
	uint32_t n;
};

/* One run: one capture. */
struct pt_run {
	const char *path;
	int64_t t0, wall;               /* first start, ns; length, ns */
	int64_t cpu_us;
	int64_t rss_kb;                 /* peak of any execution, -1 none */
	double parallel;                /* busy executions on average */
	size_t n, failed;
	int damaged;
	uint32_t *cp;                   /* critical path: the keys of its
					 * steps holding >= 1 % of the wall
					 * time, in time order */
	size_t ncp;
	int64_t cp_main;                /* those steps' own time, ns */
	const char *pipeline;           /* CI pipeline id, or NULL */
};

struct pt_runs {
	struct pt_group_by group;
	struct pt_run *run;
	size_t nruns, maxruns;
	struct pt_strtab keys;          /* key id -> key */
	struct pt_strtab labels;        /* label[key] -> short label */
	uint32_t *label;
	struct pt_run_val *v;           /* v[key * maxruns + run] */
	size_t capkeys;
};

/* Ready r for up to maxruns runs matched under g. */
void pt_runs_init(struct pt_runs *r, const struct pt_group_by *g,
		  size_t maxruns);

/*
 * Read the capture at path as the next run.  Returns 0, 1 if it was
 * damaged (what was intact counts; a warning was printed), -1 if it
 * could not be read (a message was printed; the run is not added).
 */
int pt_runs_add(struct pt_runs *r, const char *path, struct pt_redact *red);

/* The figures of key in run. */
static inline const struct pt_run_val *pt_runs_val(const struct pt_runs *r,
						   uint32_t key, size_t run)
{
	return &r->v[(size_t)key * r->maxruns + run];
}

static inline size_t pt_runs_nkeys(const struct pt_runs *r)
{
	return r->keys.n;
}

static inline const char *pt_runs_key(const struct pt_runs *r, uint32_t key)
{
	return pt_strtab_str(&r->keys, key);
}

static inline const char *pt_runs_label(const struct pt_runs *r, uint32_t key)
{
	return pt_strtab_str(&r->labels, r->label[key]);
}

/*
 * The critical path met most often among runs [from, to): the index of a
 * run that has it, and in *count how many runs share it (steps compared
 * by key).
 */
size_t pt_runs_common_path(const struct pt_runs *r, size_t from, size_t to,
			   size_t *count);

/*
 * Do runs [0, n) look like jobs of one pipeline (the same CI pipeline id,
 * or time ranges that overlap) rather than repeated runs of one build?
 * *why gets a short reason for the output.
 */
int pt_runs_one_pipeline(const struct pt_run *run, size_t n,
			 const char **why);

void pt_runs_free(struct pt_runs *r);

#endif
