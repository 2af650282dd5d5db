/*
 * The diff of two runs (diff.h) as text for a terminal or a CI log, each
 * line cut to the width (line.h): both runs' totals, the largest changes
 * per key, then what ran in one run only.  doc/man/proftrace-diff.1.scd
 * defines every number.
 */
#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/diff.h"
#include "base/strbuf.h"
#include "views/diff-text.h"
#include "views/keyfit.h"
#include "views/line.h"
#include "views/table.h"

struct dtext {
	const struct pt_diff *d;        /* the figures */
	int width;
	FILE *f;
	struct pt_sb line;
	struct pt_table tab;            /* the table being made */
};

static void emit(struct dtext *d)
{
	pt_line_emit(&d->line, d->width, d->f);
}

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

/* The line, then key id, as a row of the table. */
static void add_key(struct dtext *d, uint32_t id)
{
	const struct pt_diff *f = d->d;

	pt_table_add_key(&d->tab, &d->line, pt_strtab_str(&f->keys, id),
			 pt_strtab_str(&f->labels, f->label[id]));
}

/* The line, ending in a column's title, as a row of the table. */
static void add_title(struct dtext *d, const char *title)
{
	size_t keep = d->line.len;

	pt_sb_addstr(&d->line, title);
	pt_table_add(&d->tab, &d->line, keep, d->line.len);
}

/* The line as a row of the table, with no label. */
static void add_row(struct dtext *d)
{
	pt_table_add(&d->tab, &d->line, 0, 0);
}

static void summary(struct dtext *d, const char *pa, const char *pb)
{
	const struct pt_diff_side *a = &d->d->s[0], *b = &d->d->s[1];
	int64_t wa = a->a.t1 - a->a.t0, wb = b->a.t1 - b->a.t0;

	pt_sb_addf(&d->line, "proftrace diff: A = %s, B = %s", pa, pb);
	emit(d);
	fputc('\n', d->f);
	pt_sb_addf(&d->line, "  %-12s %12s %12s %12s", "", "A", "B", "B - A");
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12.3f %12.3f %+12.3f", "wall s",
		   secs(wa), secs(wb), secs(wb - wa));
	if (wa > 0)
		pt_sb_addf(&d->line, "  (%+.1f%%)",
			   100.0 * (double)(wb - wa) / (double)wa);
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12.3f %12.3f %+12.3f", "cpu s",
		   (double)a->cpu_us / 1e6, (double)b->cpu_us / 1e6,
		   (double)(b->cpu_us - a->cpu_us) / 1e6);
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12zu %12zu %+12lld", "executions",
		   a->m.n, b->m.n, (long long)b->m.n - (long long)a->m.n);
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12zu %12zu %+12lld", "failed",
		   a->failed, b->failed,
		   (long long)b->failed - (long long)a->failed);
	emit(d);
}

static void changes(struct dtext *d)
{
	const struct pt_diff *f = d->d;
	size_t i;

	fprintf(d->f, "\nLargest changes in %s, per %s seen in both runs "
		"(%zu of them)\n", pt_diff_weight_name(f->weight),
		pt_group_name(&f->group), f->nboth);
	pt_sb_addf(&d->line, "  %10s %10s %10s %7s %6s %6s  ", "A s", "B s",
		   "B - A s", "change", "n A", "n B");
	add_title(d, pt_group_name(&f->group));
	for (i = 0; i < f->nchanged; i++) {
		const struct pt_diff_row *r = &f->both[i];

		pt_sb_addf(&d->line, "  %10.3f %10.3f %+10.3f ", secs(r->t[0]),
			   secs(r->t[1]), secs(r->t[1] - r->t[0]));
		if (r->t[0] > 0)
			pt_sb_addf(&d->line, "%+6.0f%%", 100.0 *
				   (double)(r->t[1] - r->t[0]) /
				   (double)r->t[0]);
		else
			pt_sb_addf(&d->line, "%7s", "new");
		pt_sb_addf(&d->line, " %6zu %6zu  ", r->n[0], r->n[1]);
		add_key(d, r->id);
	}
	if (f->nboth > f->nchanged) {
		pt_sb_addf(&d->line, "  ... %zu more", f->nboth - f->nchanged);
		add_row(d);
	}
	pt_table_end(&d->tab, d->width, d->f);
}

static void only(struct dtext *d, int side)
{
	const struct pt_diff *f = d->d;
	const struct pt_diff_row *rows = f->only[side];
	size_t i, n = f->nonly[side];

	fprintf(d->f, "\nOnly in %c: %zu %s%s, %zu execution%s, "
		"%.3f s of %s\n", side ? 'B' : 'A', n, pt_group_name(&f->group),
		n == 1 ? "" : "s", f->only_runs[side],
		f->only_runs[side] == 1 ? "" : "s", secs(f->only_total[side]),
		pt_diff_weight_name(f->weight));
	for (i = 0; i < n && i < d->d->top; i++) {
		pt_sb_addf(&d->line, "  %10.3f %6zu  ", secs(rows[i].t[side]),
			   rows[i].n[side]);
		add_key(d, rows[i].id);
	}
	if (n > d->d->top) {
		pt_sb_addf(&d->line, "  ... %zu more", n - d->d->top);
		add_row(d);
	}
	pt_table_end(&d->tab, d->width, d->f);
}

int pt_diff_text_write(const struct pt_diff *d, const char *a, const char *b,
		       int width, FILE *f)
{
	struct dtext t;

	t.d = d;
	t.width = width;
	t.f = f;
	pt_sb_init(&t.line);
	t.tab = (struct pt_table)PT_TABLE_INIT;
	summary(&t, a, b);
	changes(&t);
	only(&t, 0);
	only(&t, 1);
	pt_sb_release(&t.line);
	return ferror(f) ? -1 : 0;
}
