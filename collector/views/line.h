/*
 * One line of a text view: printed cut to a width, with the control
 * characters of recorded commands made harmless.
 */
#ifndef PT_LINE_H
#define PT_LINE_H

#include <stdio.h>

#include "base/strbuf.h"

/*
 * Print line to f cut to width columns (UTF-8 characters), control
 * characters as '?' (a recorded newline or escape sequence must not break
 * the layout or drive the terminal), trailing spaces dropped, then a
 * newline; reset line.
 */
void pt_line_emit(struct pt_sb *line, int width, FILE *f);

/* Columns of n bytes of s: UTF-8 characters, each one column. */
size_t pt_line_cols(const char *s, size_t n);

/* Columns a label moved below its row is indented by. */
#define PT_LINE_WRAP_INDENT 4

/*
 * Print bytes [0, keep) of line as a line of its own (none if they are
 * blank), then the rest on the next, indented by PT_LINE_WRAP_INDENT
 * (less if that makes the label, bytes [keep, keep_end), fit), cut to
 * the width but for the label, which is printed whole however wide;
 * reset line.
 */
void pt_line_emit_below(struct pt_sb *line, size_t keep, size_t keep_end,
			int width, FILE *f);

/*
 * pt_line_emit(), but bytes [keep, keep_end) of line (the label that
 * says what a row is about) are never cut: where they would be, the
 * line is printed as pt_line_emit_below() does.  keep == keep_end: no
 * label.
 */
void pt_line_emit_keep(struct pt_sb *line, size_t keep, size_t keep_end,
		       int width, FILE *f);

/* A text view's output: its stream, width and the line being made. */
struct pt_text {
	FILE *f;
	int width;
	struct pt_sb line;
};

/*
 * Release t's line and flush its stream: 0, or -1 with errno (EIO when
 * the stream kept none) if anything written failed.
 */
int pt_text_end(struct pt_text *t);

/* pt_line_emit() of t's line. */
static inline void pt_text_emit(struct pt_text *t)
{
	pt_line_emit(&t->line, t->width, t->f);
}

#endif
