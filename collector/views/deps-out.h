/* proftrace deps's outputs: text, Markdown, JSON, DOT (analysis/deps.h). */
#ifndef PT_DEPS_OUT_H
#define PT_DEPS_OUT_H

#include <stdio.h>

#include "analysis/deps.h"
#include "base/strbuf.h"

/* Each writes d to f; 0, or -1 if a write failed.  width: the text's
 * columns (lines longer are cut, "..." at the end). */
int pt_deps_write_text(const struct pt_deps *d, int width, FILE *f);
int pt_deps_write_md(const struct pt_deps *d, FILE *f);
int pt_deps_write_json(const struct pt_deps *d, FILE *f);
int pt_deps_write_dot(const struct pt_deps *d, FILE *f);

/* Job j's label: its target and directory where known (the directory
 * relative to the build's), else its command. */
void pt_deps_label(const struct pt_deps *d, size_t j, struct pt_sb *sb);

/*
 * The few lines of "What it could have been" for the report and the
 * Markdown summary: the ideal on the machine's CPUs and on unlimited,
 * the costliest serialization and the races' count.  md: as Markdown.
 */
void pt_deps_summary(const struct pt_deps *d, int md, FILE *f);

#endif
