/*
 * `proftrace report --runs` rendered: text (runsum-text.c) and
 * GitHub-flavoured Markdown (runsum-md.c), the figures of
 * analysis/runsum.h in both.
 */
#ifndef PT_VIEWS_RUNSUM_H
#define PT_VIEWS_RUNSUM_H

#include <stdio.h>

#include "analysis/runsum.h"

/* Write s with `top` rows per table (text: `width` columns).  Returns 0,
 * or -1 with errno if writing failed. */
int pt_runsum_text_write(const struct pt_runsum *s, size_t top, int width,
			 FILE *f);
int pt_runsum_md_write(const struct pt_runsum *s, size_t top, FILE *f);

#endif
