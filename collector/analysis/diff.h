/*
 * The figures of `proftrace diff`, computed once for every rendering (the
 * text in cmd-diff.c, Markdown in views/diff-md.c): both runs' totals,
 * the time per key (pt_group_key) in each run, the keys seen in both runs
 * by the size of their change, and those seen in one run only.
 * doc/man/proftrace-diff.1.scd is the manual.
 */
#ifndef PT_DIFF_H
#define PT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "model/model.h"
#include "model/redact.h"

enum pt_diff_weight { PT_DIFF_WALL, PT_DIFF_SELF, PT_DIFF_CPU };

struct pt_diff_side {
	struct pt_model m;
	struct pt_analysis a;
	int64_t cpu_us;
	size_t failed;
};

struct pt_diff_row {
	int64_t t[2];                   /* ns of the chosen weight, A and B */
	size_t n[2];                    /* executions in A and in B */
	uint32_t id;                    /* the key's id in keys */
};

struct pt_diff {
	struct pt_diff_side s[2];
	struct pt_group_by group;
	enum pt_diff_weight weight;
	size_t top;                     /* rows per table */
	struct pt_strtab keys;
	struct pt_strtab labels;        /* label[key id]: a short label */
	uint32_t *label;

	/* Keys in both runs, largest change first; the first nchanged
	 * are worth a line (at most top, and none that did not change
	 * unless it is the first). */
	struct pt_diff_row *both;
	size_t nboth, nchanged;
	/* Keys in one run only (side 0: A), longest first, with their
	 * executions and time. */
	struct pt_diff_row *only[2];
	size_t nonly[2], only_runs[2];
	int64_t only_total[2];
};

/*
 * Load the capture at path into side (0: A, 1: B).  Returns 0, 1 if it
 * was damaged, -1 if it could not be read (a message was printed; the
 * side holds nothing to free).
 */
int pt_diff_load(struct pt_diff *d, int side, const char *path,
		 struct pt_redact *red);

/* Compare the loaded sides under d->group, d->weight and d->top. */
void pt_diff_compute(struct pt_diff *d);

/* Free what pt_diff_load() (for each side loaded) and compute made. */
void pt_diff_free(struct pt_diff *d, int sides);

/* "wall time", "self time" or "CPU time". */
const char *pt_diff_weight_name(enum pt_diff_weight w);

#endif
