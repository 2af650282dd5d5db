/*
 * Writing GitHub-flavoured Markdown: code spans that keep any text from
 * a capture inert and inside its table cell, table headers, lines.  Used
 * by the Markdown views (report-md.c, diff-md.c).
 *
 * Output collects in `out` and goes to `f` at the end of each line; a
 * write error shows in ferror(f).
 */
#ifndef PT_MD_H
#define PT_MD_H

#include <stddef.h>
#include <stdio.h>

#include "base/strbuf.h"

/* Longest text from a capture in one cell, in bytes. */
#define PT_MD_CELL_MAX 200

struct pt_md {
	FILE *f;
	struct pt_sb out, tmp;
};

void pt_md_init(struct pt_md *md, FILE *f);
void pt_md_release(struct pt_md *md);

/*
 * Release md and flush its stream: 0, or -1 with errno (EIO when the
 * stream kept none) if anything written to it failed.
 */
int pt_md_end(struct pt_md *md);

/*
 * Append s (len bytes) to md->out as a code span: invalid UTF-8 as
 * U+FFFD, control characters as '?' (as in the text views), no spaces at
 * either end, cut to
 * PT_MD_CELL_MAX bytes (with "..."), fenced by more backticks than any
 * run inside, every '|' escaped so that a table cell stays whole.  Inside
 * a code span nothing is markup, a link, a mention or HTML.
 */
void pt_md_code(struct pt_md *md, const char *s, size_t len);
void pt_md_code_str(struct pt_md *md, const char *s);

/* Append the formatted text and a newline, and write out the line. */
void pt_md_line(struct pt_md *md, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A blank line and a table header of n columns: a name starting with '<'
 * is left-aligned (the '<' is not shown), any other right-aligned; then,
 * unless `last` is NULL, one more column named `last`, left-aligned (the
 * groups' column: "program", "package", a variable's name).
 */
void pt_md_header(struct pt_md *md, const char *const *cols, size_t n,
		  const char *last);

/* "*N more WHAT not shown*" after a table, when n > 0. */
void pt_md_left_out(struct pt_md *md, size_t n, const char *what);

#endif
