/* Tables whose labels are never cut; see table.h. */
#include "views/table.h"

#include <stdlib.h>
#include <string.h>

#include "views/keyfit.h"
#include "views/line.h"

struct pt_table_row {
	char *text;                     /* the row; a key row's figures */
	size_t len, keep, keep_end;
	const char *key, *label;        /* a key row; else NULL */
};

static struct pt_table_row *add_row(struct pt_table *t, struct pt_sb *line)
{
	struct pt_table_row *r;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 32;
		t->rows = pt_xrealloc(t->rows, t->cap * sizeof *t->rows);
	}
	r = &t->rows[t->n++];
	memset(r, 0, sizeof *r);
	r->text = pt_xmalloc(line->len + 1);
	memcpy(r->text, line->buf ? line->buf : "", line->len);
	r->text[line->len] = '\0';
	r->len = line->len;
	pt_sb_reset(line);
	return r;
}

void pt_table_add(struct pt_table *t, struct pt_sb *line, size_t keep,
		  size_t keep_end)
{
	struct pt_table_row *r;

	if (keep_end > line->len)
		keep_end = line->len;
	if (keep > keep_end)
		keep = keep_end;
	r = add_row(t, line);
	r->keep = keep;
	r->keep_end = keep_end;
}

void pt_table_add_key(struct pt_table *t, struct pt_sb *line,
		      const char *key, const char *label)
{
	struct pt_table_row *r = add_row(t, line);

	r->key = key;
	r->label = label;
}

/* Does r's label fit after its figures in width columns? */
static int fits(const struct pt_table_row *r, size_t width)
{
	size_t lc;

	if (!r->key)
		return r->keep == r->keep_end ||
		       pt_line_cols(r->text, r->keep_end) <= width;
	/* The whole key where it is shorter than its label. */
	lc = pt_line_cols(r->label, strlen(r->label));
	if (pt_line_cols(r->key, strlen(r->key)) < lc)
		lc = pt_line_cols(r->key, strlen(r->key));
	return pt_line_cols(r->text, r->len) + lc <= width;
}

static void emit_key_row(const struct pt_table_row *r, int below,
			 size_t width, struct pt_sb *line, FILE *f)
{
	size_t used, keep, i;

	pt_sb_add(line, r->text, r->len);
	if (below) {
		if (strspn(r->text, " ") < r->len)
			pt_line_emit(line, (int)width, f);
		pt_sb_reset(line);
		for (i = 0; i < PT_LINE_WRAP_INDENT; i++)
			pt_sb_addch(line, ' ');
	}
	used = pt_line_cols(line->buf, line->len);
	keep = line->len;
	pt_key_fit(line, r->key, r->label, used < width ? width - used : 0);
	/* pt_key_fit keeps the label whole: so does the line. */
	pt_line_emit_keep(line, keep, line->len, (int)width, f);
}

void pt_table_end(struct pt_table *t, int width, FILE *f)
{
	struct pt_sb line = PT_SB_INIT;
	size_t w = width > 0 ? (size_t)width : 1, i;
	int below = 0;

	for (i = 0; i < t->n && !below; i++)
		below = !fits(&t->rows[i], w);
	for (i = 0; i < t->n; i++) {
		const struct pt_table_row *r = &t->rows[i];

		if (r->key) {
			emit_key_row(r, below, w, &line, f);
		} else {
			pt_sb_add(&line, r->text, r->len);
			if (below && r->keep < r->keep_end)
				pt_line_emit_below(&line, r->keep, r->keep_end,
						   (int)w, f);
			else
				pt_line_emit(&line, (int)w, f);
		}
		free(r->text);
	}
	pt_sb_release(&line);
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
}
