/* proftrace deps's outputs: text, Markdown, JSON (analysis/deps.h). */
#ifndef PT_DEPS_OUT_H
#define PT_DEPS_OUT_H

#include <stdio.h>

#include "analysis/deps.h"

/* Each writes d to f; 0, or -1 if a write failed. */
int pt_deps_write_text(const struct pt_deps *d, FILE *f);
int pt_deps_write_md(const struct pt_deps *d, FILE *f);
int pt_deps_write_json(const struct pt_deps *d, FILE *f);

/*
 * The few lines of "What it could have been" for the report and the
 * Markdown summary: the ideal on the machine's CPUs and on unlimited,
 * the costliest serialization and the races' count.  md: as Markdown.
 */
void pt_deps_summary(const struct pt_deps *d, int md, FILE *f);

#endif
