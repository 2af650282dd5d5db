/*
 * `proftrace diff A... -- B...` rendered: as text for a terminal or CI
 * log (rundiff-text.c) and as GitHub-flavoured Markdown (rundiff-md.c),
 * the same figures (analysis/rundiff.h) in both.
 */
#ifndef PT_VIEWS_RUNDIFF_H
#define PT_VIEWS_RUNDIFF_H

#include <stdio.h>

#include "analysis/rundiff.h"

struct pt_rdiff_view {
	size_t top;             /* rows per table */
	int all;                /* list changes within noise too */
	int width;              /* text: line width */
	int brief;              /* text: no list of files, no method */
};

/* Write d to f.  Returns 0, or -1 with errno if writing failed. */
int pt_rdiff_text_write(const struct pt_rdiff *d,
			const struct pt_rdiff_view *o, FILE *f);
int pt_rdiff_md_write(const struct pt_rdiff *d,
		      const struct pt_rdiff_view *o, FILE *f);

/* The sentences both renderings print: how intervals and verdicts were
 * made, and the warning when they could not be. */
void pt_rdiff_method(const struct pt_rdiff *d, struct pt_sb *sb);
const char *pt_rdiff_warning(const struct pt_rdiff *d);

#endif
