/*
 * The report (report.h) as text for a terminal or a CI log, each line
 * cut to a width: the captures, the summary, programs by self and by
 * total time, the process tree, the critical path, parallelism, the
 * failed executions and "Inside the programs".
 */
#ifndef PT_REPORT_TEXT_H
#define PT_REPORT_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/report.h"
#include "model/model.h"

struct pt_report_text_opts {
	struct pt_group_by group;       /* what the group tables are by */
	int depth;                      /* process tree depth */
	int top;                        /* rows per table, children per node */
	int width;                      /* line width */
};

/*
 * Write d (computed from m) to f, headed by the capture paths and, when
 * the captures were aligned, the sentence that says how.  Returns 0, or
 * -1 if a write failed.
 */
int pt_report_text_write(const struct pt_model *m, const struct pt_report *d,
			 const struct pt_report_text_opts *o,
			 char *const *paths, size_t npaths,
			 const char *aligned, FILE *f);

#endif
