/* report --runs as text; see runsum.h. */
#include "views/runsum.h"

#include <errno.h>
#include <string.h>

#include "views/keyfit.h"
#include "views/table.h"
#include "views/line.h"

static void figure(struct pt_text *o, const char *name, const char *unit,
		   const struct pt_runsum_stat *s, int prec)
{
	char range[64];

	snprintf(range, sizeof range, "%.*f-%.*f", prec, s->lo, prec, s->hi);
	pt_sb_addf(&o->line, "  %-14s %10.*f %-3s %s", name, prec, s->med, unit,
		   range);
	pt_text_emit(o);
}

static void key(struct pt_text *o, struct pt_table *tab,
		const struct pt_runsum *s, uint32_t k)
{
	pt_table_add_key(tab, &o->line, pt_runs_key(s->r, k),
			 pt_runs_label(s->r, k));
}

/* The line, ending in a column's title, as a row of tab. */
static void title(struct pt_text *o, struct pt_table *tab, const char *t)
{
	size_t keep = o->line.len;

	pt_sb_addstr(&o->line, t);
	pt_table_add(tab, &o->line, keep, o->line.len);
}

int pt_runsum_text_write(const struct pt_runsum *s, size_t top, int width,
			 FILE *f)
{
	struct pt_text o = { f, width, PT_SB_INIT };
	const struct pt_runs *r = s->r;
	struct pt_sb iso = PT_SB_INIT;
	struct pt_table tab = PT_TABLE_INIT;
	size_t i;

	pt_sb_addf(&o.line, "proftrace report --runs: %zu run%s of one build, "
		   "summarized", r->nruns, r->nruns == 1 ? "" : "s");
	pt_text_emit(&o);
	for (i = 0; i < r->nruns; i++) {
		pt_sb_reset(&iso);
		pt_sb_add_iso8601(&iso, r->run[i].t0);
		pt_sb_addf(&o.line, "  #%zu  %s  %9.3f s  %zu executions  %s",
			   i + 1, iso.buf, (double)r->run[i].wall / 1e9,
			   r->run[i].n, r->run[i].path);
		pt_text_emit(&o);
	}
	fprintf(f, "\nRuns (median, min-max over the runs)\n");
	figure(&o, "wall time", "s", &s->wall, 3);
	figure(&o, "CPU time", "s", &s->cpu, 3);
	figure(&o, "parallelism", "", &s->parallel, 2);
	figure(&o, "executions", "", &s->execs, 0);
	figure(&o, "failed", "", &s->failed, 0);
	figure(&o, "peak memory", "MB", &s->rss, 1);

	fprintf(f, "\nCritical path met most often (%zu of %zu runs: #%zu's; "
		"steps holding 1%% of the wall time or more)\n",
		s->path_count, r->nruns, s->path_run + 1);
	pt_sb_addf(&o.line, "  %10s %6s  ", "own s", "runs");
	title(&o, &tab, pt_group_name(&r->group));
	for (i = 0; i < s->npath; i++) {
		pt_sb_addf(&o.line, "  %10.3f %6zu  ", s->path[i].cp_own,
			   s->path[i].n);
		key(&o, &tab, s, s->path[i].key);
	}
	if (!s->npath) {
		pt_sb_addstr(&o.line, "  (no step holds 1% of the wall time)");
		pt_table_add(&tab, &o.line, 0, 0);
	}
	pt_table_end(&tab, o.width, o.f);

	fprintf(f, "\nBy median duration, per %s (%zu of them; spread = "
		"(max - min) / median)\n", pt_group_name(&r->group), s->nrows);
	pt_sb_addf(&o.line, "  %9s %17s %7s %9s %9s %8s %5s  ", "median s",
		   "min-max s", "spread", "self s", "cpu s", "rss MB", "runs");
	title(&o, &tab, pt_group_name(&r->group));
	for (i = 0; i < s->nrows && i < top; i++) {
		const struct pt_runsum_row *x = &s->rows[i];
		char range[64];

		snprintf(range, sizeof range, "%.3f-%.3f", x->wall.lo,
			 x->wall.hi);
		pt_sb_addf(&o.line, "  %9.3f %17s %6.0f%% %9.3f %9.3f %8.1f "
			   "%5zu  ", x->wall.med, range, x->spread,
			   x->self.med, x->cpu.med, x->rss.med, x->n);
		key(&o, &tab, s, x->key);
	}
	if (s->nrows > top) {
		pt_sb_addf(&o.line, "  ... %zu more", s->nrows - top);
		pt_table_add(&tab, &o.line, 0, 0);
	}
	pt_table_end(&tab, o.width, o.f);
	pt_sb_release(&iso);
	return pt_text_end(&o);
}
