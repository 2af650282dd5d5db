/*
 * The diff of two runs (diff.h) as GitHub-flavoured Markdown, for a CI
 * job summary or a merge-request note: both runs' totals, the largest
 * changes, what ran in one run only, with the text's numbers.  Keys from
 * the captures are code spans (md.h); tables keep to the diff's top rows
 * (at most PT_MD_MAX_ROWS) and say how many were left out.
 */
#ifndef PT_DIFF_MD_H
#define PT_DIFF_MD_H

#include <stdio.h>

#include "analysis/diff.h"
#include "views/report-md.h"

/* Write d, comparing the captures at paths a and b, to f.  Returns 0, or
 * -1 if a write failed. */
int pt_diff_md_write(const struct pt_diff *d, const char *a, const char *b,
		     FILE *f);

#endif
