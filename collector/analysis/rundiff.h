/*
 * `proftrace diff A... -- B...`: runs A and runs B compared, for the run
 * as a whole and for each key, with a verdict that says whether a change
 * is beyond the noise that repeated runs show.  For every figure: the
 * median of each side, the change of median (B - A), and its 95 %
 * percentile-bootstrap interval (2000 resamples, seeded from the key, so
 * that the output is the same on every run of proftrace).
 *
 * A key's change is beyond noise ("slower" or "faster") when all hold:
 *  - its interval excludes zero;
 *  - its Benjamini-Hochberg q-value is under 0.05 among all the keys
 *    tested: the p-value of a t test on log times, whose noise is the
 *    key's own spread pooled with the typical spread of all keys (four
 *    prior degrees of freedom), so that three runs a side can be tested
 *    and a build of thousands of keys does not turn up chance hits;
 *  - it is at least min_rel of the key's median in A and min_wall of the
 *    runs' median wall time (a minimum effect: a 2 ms program twice as
 *    slow is noise to a build).
 * The run's wall and CPU time are tested alone (no FDR) with their own
 * spread and a minimum change of min_run.  With fewer than two runs on
 * both sides there is no spread to test against: no verdicts.
 * doc/man/proftrace-diff.1.scd is the manual.
 */
#ifndef PT_RUNDIFF_H
#define PT_RUNDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/diff.h"
#include "analysis/runs.h"

enum pt_verdict {
	PT_V_UNTESTED = 0,      /* not enough runs to tell */
	PT_V_NOISE,             /* within noise */
	PT_V_SLOWER,
	PT_V_FASTER,
};

struct pt_rdiff_row {
	uint32_t key;                   /* UINT32_MAX for run-level rows */
	size_t n[2];                    /* runs of A, B where it occurs */
	double med[2], lo[2], hi[2];    /* seconds: median, min, max */
	double delta, ci_lo, ci_hi;     /* seconds */
	double pct;                     /* delta in % of med[0] (0 if 0) */
	double p, q;                    /* 1 when untested */
	double cp_effect;               /* change of median own time on the
					 * critical path, seconds */
	size_t cp[2];                   /* runs where on the critical path */
	enum pt_verdict verdict;
};

struct pt_rdiff {
	const struct pt_runs *r;
	size_t na, nb;                  /* runs [0, na) are A, then B */
	enum pt_diff_weight weight;
	double min_rel, min_wall, min_run;      /* fractions */
	int testable;                   /* pooled noise was known */

	struct pt_rdiff_row wall, cpu, execs;   /* the run as a whole */
	/* Keys in both sides: beyond noise first, by their effect on the
	 * wall time (critical-path change, then change), the rest by the
	 * size of the change. */
	struct pt_rdiff_row *rows;
	size_t nrows, nbeyond;
	/* Keys on one side only, by median time. */
	struct pt_rdiff_row *only[2];
	size_t nonly[2];
};

/* Compare runs [0, na) with [na, r->nruns) under weight. */
void pt_rdiff_compute(struct pt_rdiff *d, const struct pt_runs *r, size_t na,
		      enum pt_diff_weight weight);
void pt_rdiff_free(struct pt_rdiff *d);

/* "slower", "faster", "within noise", "?" */
const char *pt_verdict_name(enum pt_verdict v);

#endif
