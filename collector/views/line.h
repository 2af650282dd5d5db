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
