/* The runs diff as text; see rundiff.h. */
#include "views/rundiff.h"

#include <errno.h>
#include <string.h>

#include "views/keyfit.h"
#include "views/line.h"
#include "views/table.h"

/* Words wrapped to the width, indented by two. */
static void paragraph(struct pt_text *o, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strlen(p), cut = n;

		if (n + 2 > (size_t)o->width) {
			cut = (size_t)o->width - 2;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (!cut)
				cut = strcspn(p, " ");
		}
		pt_sb_addstr(&o->line, "  ");
		pt_sb_add(&o->line, p, cut);
		pt_text_emit(o);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

static void figure(struct pt_text *o, const char *name,
		   const struct pt_rdiff_row *r, int integer)
{
	int prec = integer ? 0 : 3, k;
	char med[2][32], range[2][64];

	for (k = 0; k < 2; k++) {
		snprintf(med[k], sizeof med[k], "%.*f", prec, r->med[k]);
		snprintf(range[k], sizeof range[k], "%.*f-%.*f", prec,
			 r->lo[k], prec, r->hi[k]);
	}
	pt_sb_addf(&o->line, "  %-10s %9s %17s %9s %17s %+9.3f %+7.1f%%",
		   name, med[0], range[0], med[1], range[1], r->delta, r->pct);
	if (r->n[0] > 1 || r->n[1] > 1)
		pt_sb_addf(&o->line, "  [%+.3f, %+.3f]", r->ci_lo, r->ci_hi);
	if (r->verdict != PT_V_UNTESTED)
		pt_sb_addf(&o->line, "  %s", pt_verdict_name(r->verdict));
	pt_text_emit(o);
}

static void key_row(struct pt_text *o, struct pt_table *tab,
		    const struct pt_rdiff *d, const struct pt_rdiff_row *r)
{
	char ci[64], path[32], q[16];

	/* One value a side: a resampled interval would be a point. */
	if (r->n[0] < 2 && r->n[1] < 2)
		snprintf(ci, sizeof ci, "-");
	else
		snprintf(ci, sizeof ci, "[%+.3f, %+.3f]", r->ci_lo, r->ci_hi);
	if (r->verdict == PT_V_UNTESTED)
		snprintf(q, sizeof q, "-");
	else
		snprintf(q, sizeof q, "%.2g", r->q);
	snprintf(path, sizeof path, "%zu/%zu", r->cp[0], r->cp[1]);
	pt_sb_addf(&o->line, "  %9.3f %9.3f %+9.3f %+7.0f%%  %-22s %6s "
		   "%5s  %-12s  ", r->med[0], r->med[1], r->delta, r->pct, ci,
		   q, path, pt_verdict_name(r->verdict));
	pt_table_add_key(tab, &o->line, pt_runs_key(d->r, r->key),
			 pt_runs_label(d->r, r->key));
}

static void only(struct pt_text *o, const struct pt_rdiff *d, int side,
		 size_t top)
{
	const struct pt_rdiff_row *rows = d->only[side];
	struct pt_table tab = PT_TABLE_INIT;
	size_t i, n = d->nonly[side];

	fprintf(o->f, "\nOnly in %c: %zu %s%s (median s, runs)\n",
		side ? 'B' : 'A', n, pt_group_name(&d->r->group),
		n == 1 ? "" : "s");
	for (i = 0; i < n && i < top; i++) {
		pt_sb_addf(&o->line, "  %9.3f %5zu  ", rows[i].med[side],
			   rows[i].n[side]);
		pt_table_add_key(&tab, &o->line, pt_runs_key(d->r, rows[i].key),
				 pt_runs_label(d->r, rows[i].key));
	}
	if (n > top) {
		pt_sb_addf(&o->line, "  ... %zu more", n - top);
		pt_table_add(&tab, &o->line, 0, 0);
	}
	pt_table_end(&tab, o->width, o->f);
}

int pt_rdiff_text_write(const struct pt_rdiff *d,
			const struct pt_rdiff_view *v, FILE *f)
{
	struct pt_text o = { f, v->width, PT_SB_INIT };
	struct pt_sb method = PT_SB_INIT;
	const char *warn = pt_rdiff_warning(d);
	size_t i, shown, list;

	pt_sb_addf(&o.line, "proftrace diff: %zu run%s (A) against %zu run%s "
		   "(B)", d->na, d->na == 1 ? "" : "s", d->nb,
		   d->nb == 1 ? "" : "s");
	pt_text_emit(&o);
	for (i = 0; i < d->na + d->nb && !v->brief; i++) {
		pt_sb_addf(&o.line, "  %c  %s", i < d->na ? 'A' : 'B',
			   d->r->run[i].path);
		pt_text_emit(&o);
	}
	if (warn) {
		fputc('\n', f);
		pt_sb_addstr(&method, "warning: ");
		pt_sb_addstr(&method, warn);
		paragraph(&o, method.buf);
		pt_sb_reset(&method);
	}
	fputc('\n', f);
	pt_sb_addf(&o.line, "  %-10s %9s %17s %9s %17s %9s %8s  %s",
		   "run", "A median", "A min-max", "B median", "B min-max",
		   "change", "%", "95% interval, verdict");
	pt_text_emit(&o);
	figure(&o, "wall s", &d->wall, 0);
	figure(&o, "cpu s", &d->cpu, 0);
	figure(&o, "executions", &d->execs, 1);

	list = v->all || !d->testable ? d->nrows : d->nbeyond;
	shown = list < v->top ? list : v->top;
	if (d->testable && !v->all)
		fprintf(f, "\nChanges beyond noise in %s, per %s: %zu of %zu\n",
			pt_diff_weight_name(d->weight),
			pt_group_name(&d->r->group), d->nbeyond, d->nrows);
	else
		fprintf(f, "\nChanges in %s, per %s seen on both sides "
			"(%zu of them)\n", pt_diff_weight_name(d->weight),
			pt_group_name(&d->r->group), d->nrows);
	if (!shown && d->testable) {
		pt_sb_addf(&o.line, "  No change beyond noise.");
		pt_text_emit(&o);
	} else {
		struct pt_table tab = PT_TABLE_INIT;
		size_t keep;

		pt_sb_addf(&o.line, "  %9s %9s %9s %8s  %-22s %6s %5s  "
			   "%-12s  ", "A s", "B s", "change", "%",
			   "95% interval", "q", "path", "verdict");
		keep = o.line.len;
		pt_sb_addstr(&o.line, pt_group_name(&d->r->group));
		pt_table_add(&tab, &o.line, keep, o.line.len);
		for (i = 0; i < shown; i++)
			key_row(&o, &tab, d, &d->rows[i]);
		if (list > shown) {
			pt_sb_addf(&o.line, "  ... %zu more", list - shown);
			pt_table_add(&tab, &o.line, 0, 0);
		}
		pt_table_end(&tab, o.width, o.f);
	}
	fputc('\n', f);
	if (v->brief)
		pt_sb_addstr(&method, "Intervals, verdicts: see "
			     "proftrace-diff(1).");
	else
		pt_rdiff_method(d, &method);
	paragraph(&o, method.buf);
	only(&o, d, 0, v->top);
	only(&o, d, 1, v->top);
	pt_sb_release(&method);
	return pt_text_end(&o);
}

const char *pt_rdiff_warning(const struct pt_rdiff *d)
{
	if (d->testable)
		return NULL;
	if (d->na == 1 && d->nb == 1)
		return "one run on each side: proftrace cannot tell noise from "
		       "change, so these are raw changes without verdicts; "
		       "record each side three times or more for intervals "
		       "and verdicts.";
	return "no key occurred in two runs of one side: proftrace cannot "
	       "tell noise from change, so these are raw changes without "
	       "verdicts.";
}

void pt_rdiff_method(const struct pt_rdiff *d, struct pt_sb *sb)
{
	pt_sb_addstr(sb, "Interval: 95 % percentile bootstrap of the change "
		     "of median (2000 resamples, seeded from the data: the "
		     "same captures give the same output). ");
	if (!d->testable) {
		pt_sb_addstr(sb, "No verdicts: see the warning above.");
		return;
	}
	pt_sb_addf(sb, "Beyond noise: the interval excludes 0, the "
		   "false-discovery rate is under 5 %% (Benjamini-Hochberg "
		   "q over the %zu %ss compared; p of a t test on log times "
		   "with each %s's noise pooled with the typical noise of "
		   "all), and the change is at least %.0f %% of the %s's "
		   "median in A and %.0f %% of the run's median wall time. "
		   "path: in how many runs of A/B the %s was on the "
		   "critical path; listed by change of time on the critical "
		   "path first (the wall time's share), then by change.",
		   d->nrows, pt_group_name(&d->r->group),
		   pt_group_name(&d->r->group), 100 * d->min_rel,
		   pt_group_name(&d->r->group), 100 * d->min_wall,
		   pt_group_name(&d->r->group));
}
