/* The runs diff as Markdown; see rundiff.h.  Numbers as the text's. */
#include "views/rundiff.h"

#include <errno.h>
#include <string.h>

#include "views/md.h"
#include "views/report-md.h"

static void figure(struct pt_md *md, const char *name,
		   const struct pt_rdiff_row *r, int integer)
{
	int prec = integer ? 0 : 3, k;

	pt_sb_addf(&md->out, "| %s", name);
	for (k = 0; k < 2; k++)
		pt_sb_addf(&md->out, " | %.*f | %.*f-%.*f", prec, r->med[k],
			   prec, r->lo[k], prec, r->hi[k]);
	pt_sb_addf(&md->out, " | %+.3f | %+.1f%% | ", r->delta, r->pct);
	if (r->n[0] > 1 || r->n[1] > 1)
		pt_sb_addf(&md->out, "[%+.3f, %+.3f]", r->ci_lo, r->ci_hi);
	pt_md_line(md, " | %s |", r->verdict != PT_V_UNTESTED ?
		   pt_verdict_name(r->verdict) : "");
}

static void rows(struct pt_md *md, const struct pt_rdiff *d,
		 const struct pt_rdiff_row *r, size_t n, int side)
{
	static const char *const cols[] = {
		"A s", "B s", "change", "%", "<95% interval", "q", "path",
		"<verdict",
	};
	static const char *const only_cols[] = { "median s", "runs" };
	size_t i;

	if (side < 0)
		pt_md_header(md, cols, 8, pt_group_name(&d->r->group));
	else
		pt_md_header(md, only_cols, 2, pt_group_name(&d->r->group));
	for (i = 0; i < n; i++) {
		if (side < 0) {
			pt_sb_addf(&md->out, "| %.3f | %.3f | %+.3f | %+.0f%% | ",
				   r[i].med[0], r[i].med[1], r[i].delta,
				   r[i].pct);
			if (r[i].n[0] > 1 || r[i].n[1] > 1)
				pt_sb_addf(&md->out, "[%+.3f, %+.3f] | ",
					   r[i].ci_lo, r[i].ci_hi);
			else
				pt_sb_addstr(&md->out, "- | ");
			if (r[i].verdict == PT_V_UNTESTED)
				pt_sb_addstr(&md->out, "- | ");
			else
				pt_sb_addf(&md->out, "%.2g | ", r[i].q);
			pt_sb_addf(&md->out, "%zu/%zu | %s | ", r[i].cp[0],
				   r[i].cp[1], pt_verdict_name(r[i].verdict));
		} else
			pt_sb_addf(&md->out, "| %.3f | %zu | ",
				   r[i].med[side], r[i].n[side]);
		pt_md_code_str(md, pt_runs_key(d->r, r[i].key));
		pt_md_line(md, " |");
	}
}

int pt_rdiff_md_write(const struct pt_rdiff *d,
		      const struct pt_rdiff_view *v, FILE *f)
{
	static const char *const run_cols[] = {
		"<run", "A median", "A min-max", "B median", "B min-max",
		"change", "%", "<95% interval", "<verdict",
	};
	struct pt_md md;
	struct pt_sb method = PT_SB_INIT;
	const char *warn = pt_rdiff_warning(d);
	size_t top = v->top < PT_MD_MAX_ROWS ? v->top : PT_MD_MAX_ROWS;
	size_t list, shown, k;
	char what[64];

	pt_md_init(&md, f);
	pt_md_line(&md, "## proftrace diff: %zu run%s (A) against %zu run%s "
		   "(B)", d->na, d->na == 1 ? "" : "s", d->nb,
		   d->nb == 1 ? "" : "s");
	if (warn)
		pt_md_line(&md, "\n**Warning:** %s", warn);
	pt_md_header(&md, run_cols, 9, NULL);
	figure(&md, "wall s", &d->wall, 0);
	figure(&md, "cpu s", &d->cpu, 0);
	figure(&md, "executions", &d->execs, 1);

	list = v->all || !d->testable ? d->nrows : d->nbeyond;
	shown = list < top ? list : top;
	if (d->testable && !v->all)
		pt_md_line(&md, "\n### Changes beyond noise in %s, per %s: "
			   "%zu of %zu", pt_diff_weight_name(d->weight),
			   pt_group_name(&d->r->group), d->nbeyond, d->nrows);
	else
		pt_md_line(&md, "\n### Changes in %s, per %s seen on both "
			   "sides (%zu of them)", pt_diff_weight_name(d->weight),
			   pt_group_name(&d->r->group), d->nrows);
	snprintf(what, sizeof what, "%ss", pt_group_name(&d->r->group));
	if (!shown && d->testable) {
		pt_md_line(&md, "\nNo change beyond noise.");
	} else {
		rows(&md, d, d->rows, shown, -1);
		pt_md_left_out(&md, list - shown, what);
	}
	pt_rdiff_method(d, &method);
	pt_md_line(&md, "\n%s", method.buf);
	for (k = 0; k < 2; k++) {
		size_t n = d->nonly[k];

		pt_md_line(&md, "\n### Only in %c: %zu %s%s", k ? 'B' : 'A', n,
			   pt_group_name(&d->r->group), n == 1 ? "" : "s");
		if (!n)
			continue;
		rows(&md, d, d->only[k], n < top ? n : top, (int)k);
		pt_md_left_out(&md, n > top ? n - top : 0, what);
	}
	pt_sb_release(&method);
	return pt_md_end(&md);
}
