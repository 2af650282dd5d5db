/*
 * The figures of `proftrace report`, computed once for every rendering of
 * it (the text for a terminal in cmd-report.c, Markdown in
 * views/report-md.c), so that the renderings say the same numbers:
 * the captures, the summary, programs by self and by total time, the
 * critical path and its time by program, the parallelism profile, the
 * longest single-busy stretches and the failed executions.  What each
 * table shows (the first `top` rows, the steps of the path worth a line)
 * is chosen here too; the renderings only format.  The process tree is
 * the text's alone and reads `a` directly.
 * doc/man/proftrace-report.1.scd defines every number.
 */
#ifndef PT_REPORT_H
#define PT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/inside.h"
#include "model/model.h"

/* One capture's executions. */
struct pt_report_capture {
	int64_t first, last;            /* earliest start, latest end */
	size_t count;
};

/* A group of executions (a program, a package...): times in ns. */
struct pt_report_group {
	int64_t self, total, cpu_us;
	size_t count;
	uint32_t id;                    /* its name's id in names/cp_names */
};

/* A row of the parallelism table: time with lo..hi busy executions. */
struct pt_report_level {
	size_t lo, hi;
	int64_t ns;
};

struct pt_report {
	const struct pt_model *m;
	struct pt_analysis a;
	struct pt_group_by group;
	size_t top;                     /* rows per table */
	int64_t wall;                   /* a.t1 - a.t0 */

	struct pt_report_capture *caps; /* m->ncaptures of them */

	/* Summary. */
	size_t failed, killed, untraced, nocpu;
	int64_t user_us, sys_us;
	int64_t rss_kb;                 /* peak, -1 if none known */
	uint32_t rss_id;                /* whose, UINT32_MAX if none */

	/* Programs: every group, by self and by total time. */
	struct pt_strtab names;
	struct pt_report_group *by_self, *by_total;
	size_t ngroups;
	int64_t self_sum;

	/* Critical path: the steps worth a line (indices into a.cp, in
	 * time order), how many steps with an execution there are in all,
	 * the own time of those not shown, the time off the path, and the
	 * path's own time by group (by_self order, only .self and .count
	 * set). */
	size_t *cp_shown, ncp_shown, ncp_steps;
	int64_t cp_hidden_own, cp_idle;
	struct pt_strtab cp_names;
	struct pt_report_group *cp_groups;
	size_t ncp_groups;

	/* Parallelism: rows, then the stretches worth a line (a.alone's
	 * first nalone_shown). */
	struct pt_report_level *levels;
	size_t nlevels, nalone_shown;

	/* Failed and killed executions, in start order. */
	uint32_t *failures;
	size_t nfailures;

	/* Inside the programs: their own events, added up. */
	struct pt_inside inside;
};

/*
 * Compute the report of m (after pt_model_finish) grouped by g, with
 * `top` rows per table.  Free it with pt_report_free().
 */
void pt_report_compute(struct pt_report *r, const struct pt_model *m,
		       const struct pt_group_by *g, size_t top);
void pt_report_free(struct pt_report *r);

/* 100 * part / whole, 0 when whole is not positive. */
double pt_report_pct(int64_t part, int64_t whole);

#endif
