/* report --runs as Markdown; see runsum.h.  Numbers as the text's. */
#include "views/runsum.h"

#include <errno.h>
#include <string.h>

#include "views/md.h"
#include "views/report-md.h"

static void figure(struct pt_md *md, const char *name,
		   const struct pt_runsum_stat *s, int prec)
{
	pt_md_line(md, "| %s | %.*f | %.*f-%.*f |", name, prec, s->med, prec,
		   s->lo, prec, s->hi);
}

int pt_runsum_md_write(const struct pt_runsum *s, size_t top, FILE *f)
{
	static const char *const run_cols[] = { "<run", "median", "min-max" };
	static const char *const path_cols[] = { "own s", "runs" };
	static const char *const cols[] = {
		"median s", "min-max s", "spread", "self s", "cpu s", "rss MB",
		"runs",
	};
	const struct pt_runs *r = s->r;
	struct pt_md md;
	size_t i, rows = top < PT_MD_MAX_ROWS ? top : PT_MD_MAX_ROWS;
	char what[64];

	pt_md_init(&md, f);
	pt_md_line(&md, "## proftrace report --runs: %zu run%s", r->nruns,
		   r->nruns == 1 ? "" : "s");
	pt_md_header(&md, run_cols, 3, NULL);
	figure(&md, "wall s", &s->wall, 3);
	figure(&md, "cpu s", &s->cpu, 3);
	figure(&md, "parallelism", &s->parallel, 2);
	figure(&md, "executions", &s->execs, 0);
	figure(&md, "failed", &s->failed, 0);
	figure(&md, "peak memory MB", &s->rss, 1);

	pt_md_line(&md, "\n### Critical path met most often (%zu of %zu runs)",
		   s->path_count, r->nruns);
	if (s->npath)
		pt_md_header(&md, path_cols, 2, pt_group_name(&r->group));
	for (i = 0; i < s->npath && i < PT_MD_MAX_ROWS; i++) {
		pt_sb_addf(&md.out, "| %.3f | %zu | ", s->path[i].cp_own,
			   s->path[i].n);
		pt_md_code_str(&md, pt_runs_key(r, s->path[i].key));
		pt_md_line(&md, " |");
	}

	pt_md_line(&md, "\n### By median duration, per %s (%zu of them)",
		   pt_group_name(&r->group), s->nrows);
	pt_md_header(&md, cols, 7, pt_group_name(&r->group));
	for (i = 0; i < s->nrows && i < rows; i++) {
		const struct pt_runsum_row *x = &s->rows[i];

		pt_sb_addf(&md.out, "| %.3f | %.3f-%.3f | %.0f%% | %.3f | %.3f "
			   "| %.1f | %zu | ", x->wall.med, x->wall.lo,
			   x->wall.hi, x->spread, x->self.med, x->cpu.med,
			   x->rss.med, x->n);
		pt_md_code_str(&md, pt_runs_key(r, x->key));
		pt_md_line(&md, " |");
	}
	snprintf(what, sizeof what, "%ss", pt_group_name(&r->group));
	pt_md_left_out(&md, s->nrows > rows ? s->nrows - rows : 0, what);
	return pt_md_end(&md);
}
