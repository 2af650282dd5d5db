/*
 * The diff of two runs (diff.h) as text for a terminal or a CI log, each
 * line cut to a width: both runs' totals, the largest changes, what ran
 * in one run only.
 */
#ifndef PT_DIFF_TEXT_H
#define PT_DIFF_TEXT_H

#include <stdio.h>

#include "analysis/diff.h"

/* Write d, comparing the captures at paths a and b, to f, each line cut
 * to width; tables keep to d->top rows.  Returns 0, or -1 if a write
 * failed. */
int pt_diff_text_write(const struct pt_diff *d, const char *a, const char *b,
		       int width, FILE *f);

#endif
