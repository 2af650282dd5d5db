/*
 * A table of a text view whose rows end in a label, what the row is
 * about ("cc1 src/parse.c"), or a key with its label (keyfit.h): the
 * label is never cut.  Rows are held until the table ends; if any row's
 * label would not fit after its figures, every row's label goes on a
 * line of its own below its figures, indented, so that the table reads
 * the same way all down.  What else a line holds is cut to the width.
 */
#ifndef PT_TABLE_H
#define PT_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "base/strbuf.h"

struct pt_table_row;

struct pt_table {
	struct pt_table_row *rows;
	size_t n, cap;
};

#define PT_TABLE_INIT { NULL, 0, 0 }

/*
 * Add line as a row whose label is bytes [keep, keep_end) (keep ==
 * keep_end: none, as in "... 3 more"); line is reset.
 */
void pt_table_add(struct pt_table *t, struct pt_sb *line, size_t keep,
		  size_t keep_end);

/*
 * Add line, the row's figures, followed by key as pt_key_fit() shows it
 * in the room left (key and label must live until pt_table_end); line
 * is reset.
 */
void pt_table_add_key(struct pt_table *t, struct pt_sb *line,
		      const char *key, const char *label);

/* Print t's rows to f in width columns and empty t. */
void pt_table_end(struct pt_table *t, int width, FILE *f);

#endif
