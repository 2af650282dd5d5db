/*
 * How long a running build has left, from earlier runs of it: each
 * earlier run's executions are matched with the live run's by key, as
 * `diff` matches them (pt_exec_key, the second of a key numbered "#2"),
 * and the point an earlier run had reached when it had done what the
 * live run has done is where the live run stands in it; what that run
 * still took from there, at the live run's pace (its finished
 * executions' durations over the same executions' in that run, the
 * latest weighing most), is one
 * guess, and the guesses of all the runs give the estimate and its
 * spread.  A live run past every earlier run's end is overdue.
 */
#ifndef PT_ETA_H
#define PT_ETA_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

/* One earlier run: for each key id, its execution's start and end, ns
 * from the run's start (-1: the key is not in that run). */
struct pt_eta_run {
	int64_t wall;
	int64_t *start, *end;
	size_t nkeys;
};

struct pt_eta {
	struct pt_strtab keys;
	struct pt_eta_run *run;
	size_t nruns;
};

struct pt_eta_guess {
	int have;                       /* 0: no earlier run matched */
	int64_t left_ns;                /* mean of the runs' guesses */
	int64_t spread_ns;              /* half their range */
	size_t nruns;
	/* The earlier runs' work is all done or under way, and this run
	 * goes on past the end they foretold, by overdue_ns. */
	int overdue;
	int64_t overdue_ns;
	int64_t at_real;                /* when: the now_real it was made for */
};

/* The most earlier runs read: the newest. */
#define PT_ETA_RUNS 10

/*
 * Read the captures (*.ptcap) in dir, the newest PT_ETA_RUNS by name (as
 * --keep names them).  Returns how many runs were read (0: none, the
 * directory missing included); unreadable captures are skipped silently.
 */
size_t pt_eta_load(struct pt_eta *h, const char *dir);

/*
 * Guess the time left of the run whose capture, still being written, is
 * at live (now_real: CLOCK_REALTIME, ns; the guess is as of now_real
 * plus the time the capture took to read, in g->at_real).  g->have is 0 when there is no
 * history or the live capture cannot be read yet.
 */
void pt_eta_guess(struct pt_eta *h, const char *live, int64_t now_real,
		  struct pt_eta_guess *g);

void pt_eta_free(struct pt_eta *h);

#endif
