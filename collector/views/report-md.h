/*
 * The report (report.h) as GitHub-flavoured Markdown, for
 * $GITHUB_STEP_SUMMARY, a GitLab merge-request note or any page that
 * renders CommonMark with GFM tables: the captures, the summary, programs
 * by self and by total time, the critical path and its time by program,
 * parallelism, the longest single-busy stretches and the failed
 * executions, with the same numbers as the text report.
 *
 * Every text that comes from the capture (labels, commands, hosts, group
 * names) is a code span (md.h): no markup, link, mention or HTML of a
 * command line takes effect, and a table cell stays one cell.  Tables have at most PT_MD_MAX_ROWS rows (the
 * critical path three times that), and say how many rows were left out,
 * so that the output stays far below the 1 MiB a step summary may hold,
 * whatever the run.
 */
#ifndef PT_REPORT_MD_H
#define PT_REPORT_MD_H

#include <stdio.h>

#include "analysis/report.h"

#define PT_MD_MAX_ROWS 100

/* Write r to f.  Returns 0, or -1 if a write failed. */
int pt_report_md_write(const struct pt_report *r, FILE *f);

#endif
