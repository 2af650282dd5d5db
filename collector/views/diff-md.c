/* The diff as Markdown; see diff-md.h.  Numbers as the text prints them. */
#include "views/diff-md.h"

#include <errno.h>
#include <string.h>

#include "views/md.h"

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

static void totals(struct pt_md *md, const struct pt_diff *d, const char *pa,
		   const char *pb)
{
	static const char *const cols[] = { "<", "A", "B", "B - A" };
	const struct pt_diff_side *a = &d->s[0], *b = &d->s[1];
	int64_t wa = a->a.t1 - a->a.t0, wb = b->a.t1 - b->a.t0;

	pt_md_line(md, "## proftrace diff");
	pt_md_header(md, cols, 4, NULL);
	pt_sb_addstr(&md->out, "| capture | ");
	pt_md_code_str(md, pa);
	pt_sb_addstr(&md->out, " | ");
	pt_md_code_str(md, pb);
	pt_md_line(md, " |  |");
	pt_sb_addf(&md->out, "| wall s | %.3f | %.3f | %+.3f", secs(wa),
		   secs(wb), secs(wb - wa));
	if (wa > 0)
		pt_sb_addf(&md->out, " (%+.1f%%)",
			   100.0 * (double)(wb - wa) / (double)wa);
	pt_md_line(md, " |");
	pt_md_line(md, "| cpu s | %.3f | %.3f | %+.3f |",
		   (double)a->cpu_us / 1e6, (double)b->cpu_us / 1e6,
		   (double)(b->cpu_us - a->cpu_us) / 1e6);
	pt_md_line(md, "| executions | %zu | %zu | %+lld |", a->m.n, b->m.n,
		   (long long)b->m.n - (long long)a->m.n);
	pt_md_line(md, "| failed | %zu | %zu | %+lld |", a->failed, b->failed,
		   (long long)b->failed - (long long)a->failed);
}

static void changes(struct pt_md *md, const struct pt_diff *d, size_t rows)
{
	static const char *const cols[] = {
		"A s", "B s", "B - A s", "change", "n A", "n B",
	};
	char name[64];
	size_t i;

	pt_md_line(md, "\n### Largest changes in %s, per %s seen in both runs "
		   "(%zu of them)", pt_diff_weight_name(d->weight),
		   pt_group_name(&d->group), d->nboth);
	pt_md_header(md, cols, 6, pt_group_name(&d->group));
	for (i = 0; i < d->nchanged && i < rows; i++) {
		const struct pt_diff_row *r = &d->both[i];

		pt_sb_addf(&md->out, "| %.3f | %.3f | %+.3f | ", secs(r->t[0]),
			   secs(r->t[1]), secs(r->t[1] - r->t[0]));
		if (r->t[0] > 0)
			pt_sb_addf(&md->out, "%+.0f%%", 100.0 *
				   (double)(r->t[1] - r->t[0]) /
				   (double)r->t[0]);
		else
			pt_sb_addstr(&md->out, "new");
		pt_sb_addf(&md->out, " | %zu | %zu | ", r->n[0], r->n[1]);
		pt_md_code_str(md, pt_strtab_str(&d->keys, r->id));
		pt_md_line(md, " |");
	}
	i = d->nchanged < rows ? d->nchanged : rows;
	snprintf(name, sizeof name, "%ss", pt_group_name(&d->group));
	pt_md_left_out(md, d->nboth - i, name);
}

static void only(struct pt_md *md, const struct pt_diff *d, int side,
		 size_t rows)
{
	const char *const cols[] = { side ? "B s" : "A s",
				     side ? "n B" : "n A" };
	const struct pt_diff_row *r = d->only[side];
	size_t i, n = d->nonly[side];
	char name[64];

	pt_md_line(md, "\n### Only in %c: %zu %s%s, %zu execution%s, %.3f s "
		   "of %s", side ? 'B' : 'A', n, pt_group_name(&d->group),
		   n == 1 ? "" : "s", d->only_runs[side],
		   d->only_runs[side] == 1 ? "" : "s",
		   secs(d->only_total[side]), pt_diff_weight_name(d->weight));
	if (!n)
		return;
	pt_md_header(md, cols, 2, pt_group_name(&d->group));
	for (i = 0; i < n && i < rows; i++) {
		pt_sb_addf(&md->out, "| %.3f | %zu | ", secs(r[i].t[side]),
			   r[i].n[side]);
		pt_md_code_str(md, pt_strtab_str(&d->keys, r[i].id));
		pt_md_line(md, " |");
	}
	snprintf(name, sizeof name, "%ss", pt_group_name(&d->group));
	pt_md_left_out(md, n > rows ? n - rows : 0, name);
}

int pt_diff_md_write(const struct pt_diff *d, const char *a, const char *b,
		     FILE *f)
{
	struct pt_md md;
	size_t rows = d->top < PT_MD_MAX_ROWS ? d->top : PT_MD_MAX_ROWS;

	pt_md_init(&md, f);
	totals(&md, d, a, b);
	changes(&md, d, rows);
	only(&md, d, 0, rows);
	only(&md, d, 1, rows);
	return pt_md_end(&md);
}
