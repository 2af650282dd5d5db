/*
 * `proftrace report --runs`: N runs of one build summarized as one.  For
 * the run: median and range (min-max) of wall time, CPU time,
 * parallelism, executions, failures, peak memory and the critical path's
 * main steps; the critical path met most often.  Per key (runs.h): the
 * median, range and spread of its duration, and the median of its self
 * time, CPU time and peak memory, over the runs where it occurs.
 * doc/man/proftrace-report.1.scd is the manual.
 */
#ifndef PT_RUNSUM_H
#define PT_RUNSUM_H

#include <stddef.h>

#include "analysis/runs.h"

struct pt_runsum_stat {
	double med, lo, hi;
};

struct pt_runsum_row {
	uint32_t key;
	size_t n;                       /* runs where it occurs */
	struct pt_runsum_stat wall, self, cpu, rss;     /* s, s, s, MB */
	double spread;                  /* (max - min) / median, % */
	double cp_own;                  /* median own time on the path, s */
};

struct pt_runsum {
	const struct pt_runs *r;
	struct pt_runsum_stat wall, cpu, parallel, execs, failed, rss;
	struct pt_runsum_row *rows;     /* by median duration, longest first */
	size_t nrows;
	size_t path_run, path_count;    /* a run with the most frequent
					 * critical path, and how many share it */
	struct pt_runsum_row *path;     /* its main steps, in time order */
	size_t npath;
};

void pt_runsum_compute(struct pt_runsum *s, const struct pt_runs *r);
void pt_runsum_free(struct pt_runsum *s);

#endif
