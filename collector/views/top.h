/*
 * What `proftrace top` draws, and `record --progress`'s line: a status
 * snapshot (model/status.h) as plain text lines of at most `width`
 * columns.  The caller adds the terminal's control sequences, if any.
 */
#ifndef PT_VIEW_TOP_H
#define PT_VIEW_TOP_H

#include <stdint.h>

#include "analysis/eta.h"
#include "base/strbuf.h"
#include "model/status.h"

enum pt_top_sort { PT_TOP_SORT_TIME, PT_TOP_SORT_PID, PT_TOP_SORT_COMMAND,
		   PT_TOP_SORT_N };

struct pt_top_view {
	int width;                      /* columns */
	int height;                     /* lines; 0: as many as needed */
	uint64_t now_mono;              /* the viewer's CLOCK_MONOTONIC */
	int64_t now_real;               /* and CLOCK_REALTIME */
	enum pt_top_sort sort;
	int tree;                       /* running ones under their parents */
	int collapse;                   /* tree: the top two levels and
					 * the leaves (the jobs) */
	int paused;
	int keys;                       /* show the keys line */
	int ncpu;                       /* the machine's CPUs */
	const struct pt_eta_guess *eta; /* NULL or !have: no estimate */
	const char *note;               /* a line to show, or NULL */
};

/* The name of a sort order, for the keys line and --sort. */
const char *pt_top_sort_name(enum pt_top_sort s);

/* Draw s into out, one line each ending in '\n'. */
void pt_top_draw(const struct pt_status_snap *s, const struct pt_top_view *v,
		 struct pt_sb *out);

/* The longest --progress line, in bytes. */
#define PT_TOP_PROGRESS_MAX 100

/*
 * record --progress's line, without its newline: elapsed, running,
 * finished, failed, the longest-running execution, and the estimate
 * (eta may be NULL).
 */
void pt_top_progress(const struct pt_status_snap *s, uint64_t now_mono,
		     const struct pt_eta_guess *eta, struct pt_sb *out);

/* "CPU 1.9 of 2 in use, 14.2 s used so far" (ncpu 0: "of" left out),
 * or that it is not measured yet. */
void pt_top_cpu(const struct pt_status_snap *s, int ncpu, struct pt_sb *out);

/* "the run ended: exit status 3" (or the signal that killed it). */
void pt_top_end(const struct pt_status_snap *s, struct pt_sb *out);

/* The estimate: "about 3.1 s left (+/- 0.4 s, from 2 earlier runs)",
 * "overdue by 1.2 s (...)", as of now_real (CLOCK_REALTIME ns: the time
 * since the guess was made counts down); long 0: --progress's shorter
 * "3.1 s left +/- 0.4 s". */
void pt_top_estimate(const struct pt_eta_guess *g, int64_t now_real,
		     int long_form, struct pt_sb *out);

/* A duration for people: "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min". */
void pt_top_duration(struct pt_sb *out, int64_t ns);

#endif
