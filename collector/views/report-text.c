/*
 * The report (report.h) as text for a terminal or a CI log: the
 * captures, a summary, programs by self and by total time, the process
 * tree, the critical path, the parallelism profile, the failed
 * executions and what the programs said about themselves.  Every line is
 * cut to the width (line.h).  doc/man/proftrace-report.1.scd defines every
 * number.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/report.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "model/model.h"
#include "views/line.h"
#include "views/table.h"
#include "views/report-text.h"

#define NONE UINT32_MAX
#define MAX_INDENT 12             /* critical path levels indented */

struct report {
	const struct pt_model *m;
	const struct pt_report *d;      /* the figures */
	struct pt_report_text_opts o;
	FILE *f;
	struct pt_sb line, tmp;
	size_t keep, keep_end;          /* the line's label: never cut */
	struct pt_table tab;            /* rows of the table being made */
	int in_table;
};

/* ---- output helpers ---- */

/* Print r->line cut to the width, its label whole (views/line.h); reset
 * it. */
static void emit(struct report *r)
{
	if (r->in_table)
		pt_table_add(&r->tab, &r->line, r->keep, r->keep_end);
	else
		pt_line_emit_keep(&r->line, r->keep, r->keep_end, r->o.width,
				  r->f);
	r->keep = r->keep_end = 0;
}

/* From here to table_end(), lines are rows of one table (table.h): if
 * one row's label goes below its figures, every row's does. */
static void table_begin(struct report *r)
{
	r->in_table = 1;
}

static void table_end(struct report *r)
{
	pt_table_end(&r->tab, r->o.width, r->f);
	r->in_table = 0;
}

/* Append s to the line as its label (what the row is about, or the
 * title of the labels' column), which emit() never cuts. */
static void add_label(struct report *r, const char *s)
{
	r->keep = r->line.len;
	pt_sb_addstr(&r->line, s);
	r->keep_end = r->line.len;
}

static void heading(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void heading(struct report *r, const char *fmt, ...)
{
	va_list ap;

	fputc('\n', r->f);
	va_start(ap, fmt);
	pt_sb_vaddf(&r->line, fmt, ap);
	va_end(ap);
	emit(r);
}

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

#define pct pt_report_pct

/* Label of an execution (cleaned, short) into r->tmp. */
static const char *label(struct report *r, uint32_t id)
{
	pt_sb_reset(&r->tmp);
	pt_exec_label(r->m->execs[id], &r->tmp);
	return r->tmp.buf;
}

/* ---- captures and summary ---- */

static void captures(struct report *r)
{
	const struct pt_model *m = r->m;
	const struct pt_report_capture *cap = r->d->caps;
	size_t c;
	struct pt_sb iso = PT_SB_INIT;

	heading(r, "Captures");
	for (c = 0; c < m->ncaptures; c++) {
		const char *host = pt_model_meta(m, c, "host");
		const char *cmd = pt_model_meta(m, c, "command");
		const char *job = pt_model_meta(m, c, "CI_JOB_NAME");

		if (!job)
			job = pt_model_meta(m, c, "GITHUB_JOB");
		pt_sb_reset(&iso);
		if (cap[c].count)
			pt_sb_add_iso8601(&iso, cap[c].first);
		else
			pt_sb_addstr(&iso, "-");
		pt_sb_addf(&r->line, "  #%zu  %s  %s  %9.3f s  %zu execution%s",
			   c + 1, host ? host : "?", iso.buf,
			   cap[c].count ? secs(cap[c].last - cap[c].first) : 0.0,
			   cap[c].count, cap[c].count == 1 ? "" : "s");
		if (job)
			pt_sb_addf(&r->line, "  job %s", job);
		if (cmd)
			pt_sb_addf(&r->line, "  %s", cmd);
		emit(r);
	}
	pt_sb_release(&iso);
}

static void summary(struct report *r)
{
	const struct pt_model *m = r->m;
	const struct pt_report *d = r->d;
	struct pt_sb iso = PT_SB_INIT;

	heading(r, "Summary");
	if (m->n)
		pt_sb_add_iso8601(&iso, d->a.t0);
	pt_sb_addf(&r->line, "  wall time     %10.3f s   from %s",
		   secs(d->wall), m->n ? iso.buf : "-");
	emit(r);
	pt_sb_addf(&r->line, "  executions    %10zu     %zu failed, %zu "
		   "killed by a signal, %zu untraced", m->n, d->failed,
		   d->killed, d->untraced);
	emit(r);
	pt_sb_addf(&r->line, "  CPU time      %10.3f s   user %.3f s, "
		   "system %.3f s", (double)(d->user_us + d->sys_us) / 1e6,
		   (double)d->user_us / 1e6, (double)d->sys_us / 1e6);
	if (d->wall > 0)
		pt_sb_addf(&r->line, "; %.2f x wall",
			   (double)(d->user_us + d->sys_us) * 1e3 /
			   (double)d->wall);
	if (d->nocpu)
		pt_sb_addf(&r->line, "; %zu without CPU data", d->nocpu);
	emit(r);
	pt_sb_addf(&r->line, "  parallelism   %10.2f     busy executions on "
		   "average, peak %u", d->a.average, d->a.peak);
	emit(r);
	if (d->rss_id != NONE) {
		pt_sb_addf(&r->line, "  peak memory   %10.1f MB  ",
			   (double)d->rss_kb / 1024.0);
		add_label(r, label(r, d->rss_id));
		emit(r);
	}
	if (m->damaged || m->lost_frames || m->bad_frames) {
		pt_sb_addf(&r->line, "  warning: damaged input (%llu frames "
			   "lost, %llu bad): the numbers cover what was intact",
			   (unsigned long long)m->lost_frames,
			   (unsigned long long)m->bad_frames);
		emit(r);
	}
	pt_sb_release(&iso);
}

/* ---- programs ---- */

static void group_table(struct report *r, const struct pt_report_group *g)
{
	const struct pt_report *d = r->d;
	size_t i, ng = d->ngroups;

	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %6s %10s %6s %10s %7s  ", "self s",
		   "%self", "total s", "%total", "cpu s", "count");
	add_label(r, pt_group_name(&r->o.group));
	emit(r);
	for (i = 0; i < ng && i < (size_t)r->o.top; i++) {
		pt_sb_addf(&r->line,
			   "  %10.3f %5.1f%% %10.3f %5.1f%% %10.3f %7zu  ",
			   secs(g[i].self), pct(g[i].self, d->self_sum),
			   secs(g[i].total), pct(g[i].total, d->self_sum),
			   (double)g[i].cpu_us / 1e6, g[i].count);
		add_label(r, pt_strtab_str(&d->names, g[i].id));
		emit(r);
	}
	if (ng > (size_t)r->o.top) {
		pt_sb_addf(&r->line, "  ... %zu more", ng - (size_t)r->o.top);
		emit(r);
	}
	table_end(r);
}

static void programs(struct report *r)
{
	heading(r, "Programs by self time (wall time not waiting for "
		   "children)");
	group_table(r, r->d->by_self);
	heading(r, "Programs by total time (self time with all they started, "
		   "each execution once)");
	group_table(r, r->d->by_total);
}

/* ---- process tree ---- */

struct tree_ctx {
	struct report *r;
	int64_t min_ns;                 /* smaller subtrees are folded */
	size_t hidden;                  /* executions not shown */
	struct pt_sb prefix;
	uint32_t *kids;                 /* scratch, one slice per level */
	size_t nkids, capkids;
	uint32_t *roots;                /* executions without a parent */
	size_t nroots;
};

static int64_t subtree_span(const struct pt_analysis *a,
			    const struct pt_exec *x)
{
	return a->sub_end[x->id] - x->start_ns;
}

static int cmp_span(const void *x, const void *y, void *ctx)
{
	const struct pt_analysis *a = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int64_t si = a->sub_end[i] - a->m->execs[i]->start_ns;
	int64_t sj = a->sub_end[j] - a->m->execs[j]->start_ns;

	if (si != sj)
		return si > sj ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static void tree_line(struct tree_ctx *t, const struct pt_exec *x,
		      const char *branch, size_t below)
{
	struct report *r = t->r;
	size_t keep;

	pt_sb_addf(&r->line, "  %10.3f %10.3f  ",
		   secs(x->end_ns - x->start_ns), secs(r->d->a.self_ns[x->id]));
	/* The branches go with the label, which keeps its place in the
	 * tree when it wraps. */
	keep = r->line.len;
	pt_sb_addf(&r->line, "%s%s", t->prefix.buf, branch);
	add_label(r, label(r, x->id));
	r->keep = keep;
	if (x->signal > 0)
		pt_sb_addf(&r->line, "  [signal %d]", x->signal);
	else if (x->exit_code > 0)
		pt_sb_addf(&r->line, "  [exit %d]", x->exit_code);
	if (x->flags & PT_EXF_SPAWN_FAILED)
		pt_sb_addf(&r->line, "  [spawn failed: %s]",
			   strerror(x->spawn_errno));
	if (x->flags & PT_EXF_END_UNKNOWN)
		pt_sb_addstr(&r->line, "  [unfinished]");
	if (below)
		pt_sb_addf(&r->line, "  [+%zu below, not shown]", below);
	emit(r);
}

/*
 * Choose which of a set of sibling subtrees to show: those spanning at
 * least min_ns, at most `top` of them (the longest), in start order.  The
 * chosen ids go to the end of t->kids; returns how many.  *hid_n and
 * *hid_ns get the executions and the time of the rest.
 */
static size_t choose(struct tree_ctx *t, const struct pt_exec *first,
		     int roots, uint32_t capture, size_t *hid_n,
		     int64_t *hid_ns)
{
	struct report *r = t->r;
	const struct pt_model *m = r->m;
	size_t beg = t->nkids, n, i, keep;
	const struct pt_exec *c;

	*hid_n = 0;
	*hid_ns = 0;
#define CONSIDER(c) do { \
		if (subtree_span(&r->d->a, (c)) >= t->min_ns) { \
			if (t->nkids == t->capkids) { \
				t->capkids = t->capkids ? 2 * t->capkids \
							: 256; \
				t->kids = pt_xrealloc(t->kids, t->capkids * \
						      sizeof *t->kids); \
			} \
			t->kids[t->nkids++] = (c)->id; \
		} else { \
			*hid_n += r->d->a.sub_n[(c)->id]; \
			*hid_ns += (c)->end_ns - (c)->start_ns; \
		} \
	} while (0)
	if (roots) {
		for (i = 0; i < t->nroots; i++)
			if (m->execs[t->roots[i]]->capture == capture)
				CONSIDER(m->execs[t->roots[i]]);
	} else {
		for (c = first; c; c = c->next_sibling)
			CONSIDER(c);
	}
#undef CONSIDER
	n = t->nkids - beg;
	keep = n < (size_t)r->o.top ? n : (size_t)r->o.top;
	if (keep < n) {
		/* cmp_span only reads the analysis. */
		qsort_r(t->kids + beg, n, sizeof *t->kids, cmp_span,
			(void *)&r->d->a);
		for (i = keep; i < n; i++) {
			const struct pt_exec *x = m->execs[t->kids[beg + i]];

			*hid_n += r->d->a.sub_n[x->id];
			*hid_ns += x->end_ns - x->start_ns;
		}
		t->nkids = beg + keep;
		/* Ids are in start order. */
		qsort(t->kids + beg, keep, sizeof *t->kids, cmp_u32);
	}
	return keep;
}

static void tree_level(struct tree_ctx *t, const struct pt_exec *first,
		       int roots, uint32_t capture, int depth)
{
	struct report *r = t->r;
	size_t beg = t->nkids, n, i, hid_n, plen = t->prefix.len;
	int64_t hid_ns;

	n = choose(t, first, roots, capture, &hid_n, &hid_ns);
	for (i = 0; i < n; i++) {
		const struct pt_exec *x = r->m->execs[t->kids[beg + i]];
		int last = i + 1 == n && !hid_n;
		size_t below = 0, kbeg = t->nkids, kn = 0, khid_n = 0;
		int64_t khid_ns;

		/* Children to show, chosen now so that a node none of whose
		 * children shows says so on its own line. */
		if (x->first_child && depth < r->o.depth) {
			kn = choose(t, x->first_child, 0, capture, &khid_n,
				    &khid_ns);
			t->nkids = kbeg;
		}
		if (x->first_child && !kn) {
			below = r->d->a.sub_n[x->id] - 1;
			t->hidden += below;
		}
		tree_line(t, x, roots ? "" : last ? "`- " : "|- ", below);
		if (!kn)
			continue;
		if (!roots)
			pt_sb_addstr(&t->prefix, last ? "   " : "|  ");
		tree_level(t, x->first_child, 0, capture, depth + 1);
		t->prefix.len = plen;
		t->prefix.buf[plen] = '\0';
	}
	t->nkids = beg;
	if (hid_n) {
		t->hidden += hid_n;
		pt_sb_addf(&r->line, "  %10s %10s  %s%s(%zu more, %.3f s)", "",
			   "", t->prefix.buf, roots ? "" : "`- ", hid_n,
			   secs(hid_ns));
		emit(r);
	}
}

static void tree(struct report *r)
{
	struct tree_ctx t;
	size_t c;

	memset(&t, 0, sizeof t);
	t.r = r;
	t.min_ns = r->d->wall / 100;
	t.roots = pt_xcalloc(r->m->n ? r->m->n : 1, sizeof *t.roots);
	for (c = 0; c < r->m->n; c++)
		if (!r->m->execs[c]->parent)
			t.roots[t.nroots++] = (uint32_t)c;
	pt_sb_init(&t.prefix);
	heading(r, "Process tree (depth %d, %d children each, subtrees under "
		   "1%% folded)", r->o.depth, r->o.top);
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %10s  ", "total s", "self s");
	add_label(r, "execution");
	emit(r);
	for (c = 0; c < r->m->ncaptures; c++) {
		if (r->m->ncaptures > 1) {
			const char *host = pt_model_meta(r->m, c, "host");

			pt_sb_addf(&r->line, "  capture #%zu (%s)", c + 1,
				   host ? host : "?");
			emit(r);
		}
		tree_level(&t, NULL, 1, (uint32_t)c, 0);
	}
	if (t.hidden) {
		pt_sb_addf(&r->line, "  %zu of %zu executions not shown",
			   t.hidden, r->m->n);
		emit(r);
	}
	table_end(r);
	pt_sb_release(&t.prefix);
	free(t.kids);
	free(t.roots);
}

/* ---- critical path ---- */

static void critical(struct report *r)
{
	const struct pt_report *d = r->d;
	const struct pt_analysis *a = &d->a;
	size_t i;

	if (!a->ncp)
		return;
	heading(r, "Critical path (what the end of the run waited for)");
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %10s %6s %10s %6s  ", "at s", "span s",
		   "%wall", "own s", "%wall");
	add_label(r, "execution");
	emit(r);
	for (i = 0; i < d->ncp_shown; i++) {
		const struct pt_cp_step *st = &a->cp[d->cp_shown[i]];
		uint32_t dep;
		size_t keep;

		pt_sb_addf(&r->line, "  %10.3f %10.3f %5.1f%% %10.3f %5.1f%%  ",
			   secs(st->from - a->t0), secs(st->to - st->from),
			   pct(st->to - st->from, d->wall), secs(st->own),
			   pct(st->own, d->wall));
		/* Indent by depth, but keep deep chains readable; the
		 * indentation goes with the label when it wraps. */
		keep = r->line.len;
		for (dep = 1; dep < st->depth && dep <= MAX_INDENT; dep++)
			pt_sb_addstr(&r->line, "  ");
		if (st->depth > MAX_INDENT + 1)
			pt_sb_addf(&r->line, "[%u] ", st->depth - 1);
		add_label(r, label(r, st->exec));
		r->keep = keep;
		emit(r);
	}
	if (d->ncp_shown < d->ncp_steps) {
		pt_sb_addf(&r->line, "  ... %zu shorter steps, own %.3f s "
			   "(%.1f%%)", d->ncp_steps - d->ncp_shown,
			   secs(d->cp_hidden_own), pct(d->cp_hidden_own, d->wall));
		emit(r);
	}
	if (d->cp_idle > 0) {
		pt_sb_addf(&r->line, "  off the path: %.3f s (%.1f%%): nothing "
			   "ran, or nothing the path waited for",
			   secs(d->cp_idle), pct(d->cp_idle, d->wall));
		emit(r);
	}
	table_end(r);

	if (!d->ncp_groups)
		return;
	heading(r, "Critical path by %s", pt_group_name(&r->o.group));
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %6s %7s  ", "own s", "%wall", "steps");
	add_label(r, pt_group_name(&r->o.group));
	emit(r);
	for (i = 0; i < d->ncp_groups && i < (size_t)r->o.top; i++) {
		const struct pt_report_group *g = &d->cp_groups[i];

		pt_sb_addf(&r->line, "  %10.3f %5.1f%% %7zu  ", secs(g->self),
			   pct(g->self, d->wall), g->count);
		add_label(r, pt_strtab_str(&d->cp_names, g->id));
		emit(r);
	}
	table_end(r);
}

/* ---- parallelism ---- */

static void level_row(struct report *r, const struct pt_report_level *l)
{
	int barw = r->o.width - 34;
	int bar = barw > 0 ? (int)(pct(l->ns, r->d->wall) * barw / 100.0 +
				   0.5) : 0;
	char range[32];

	if (l->lo == l->hi)
		snprintf(range, sizeof range, "%zu", l->lo);
	else
		snprintf(range, sizeof range, "%zu-%zu", l->lo, l->hi);
	pt_sb_addf(&r->line, "  %9s %10.3f %5.1f%%  ", range, secs(l->ns),
		   pct(l->ns, r->d->wall));
	while (bar-- > 0)
		pt_sb_addch(&r->line, '#');
	emit(r);
}

static void parallelism(struct report *r)
{
	const struct pt_report *d = r->d;
	const struct pt_analysis *a = &d->a;
	size_t i;

	heading(r, "Parallelism (busy = running, with no running descendant)");
	pt_sb_addf(&r->line, "  %9s %10s %6s", "busy", "time s", "%wall");
	emit(r);
	for (i = 0; i < d->nlevels; i++)
		level_row(r, &d->levels[i]);
	pt_sb_addf(&r->line, "  average %.2f busy, peak %u", a->average,
		   a->peak);
	emit(r);
	if (!d->nalone_shown)
		return;
	heading(r, "Longest stretches with a single busy execution");
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %10s %6s  ", "length s", "at s", "%wall");
	add_label(r, "execution");
	emit(r);
	for (i = 0; i < d->nalone_shown; i++) {
		const struct pt_stretch *s = &a->alone[i];

		pt_sb_addf(&r->line, "  %10.3f %10.3f %5.1f%%  ",
			   secs(s->to - s->from), secs(s->from - a->t0),
			   pct(s->to - s->from, d->wall));
		add_label(r, label(r, s->exec));
		emit(r);
	}
	table_end(r);
}

/* ---- failures ---- */

static void failures(struct report *r)
{
	const struct pt_report *d = r->d;
	size_t i;

	if (!d->nfailures)
		return;
	heading(r, "Failed executions (in start order)");
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %10s  %-10s  ", "at s", "wall s",
		   "status");
	add_label(r, "execution");
	emit(r);
	for (i = 0; i < d->nfailures && i < (size_t)r->o.top; i++) {
		const struct pt_exec *e = r->m->execs[d->failures[i]];
		char status[32];

		if (e->signal > 0)
			snprintf(status, sizeof status, "signal %d", e->signal);
		else
			snprintf(status, sizeof status, "exit %d", e->exit_code);
		pt_sb_addf(&r->line, "  %10.3f %10.3f  %-10s  ",
			   secs(e->start_ns - d->a.t0),
			   secs(e->end_ns - e->start_ns), status);
		add_label(r, label(r, e->id));
		emit(r);
	}
	if (d->nfailures > (size_t)r->o.top) {
		pt_sb_addf(&r->line, "  ... %zu more",
			   d->nfailures - (size_t)r->o.top);
		emit(r);
	}
	table_end(r);
}

/* ---- inside the programs ---- */

static void inside_row(struct report *r, const struct pt_inside_row *row,
		       int subject)
{
	pt_sb_addf(&r->line, "  %10.3f %7zu  ", secs(row->total_ns),
		   row->count);
	add_label(r, row->name);
	if (subject) {
		pt_sb_addstr(&r->line, "  ");
		pt_sb_addstr(&r->line, row->detail);
		r->keep_end = r->line.len;
	}
	emit(r);
}

static void inside(struct report *r)
{
	const struct pt_inside *in = &r->d->inside;
	struct pt_sb note = PT_SB_INIT;
	size_t i;

	if (!in->events && !pt_sub_stats_line(r->m, &note))
		return;
	heading(r, "Inside the programs (events they wrote about themselves)");
	pt_sb_addf(&r->line, "  %zu events from %u executions", in->events,
		   in->execs);
	emit(r);
	if (note.len) {
		pt_sb_addf(&r->line, "  %s", note.buf);
		emit(r);
	}
	pt_sb_release(&note);
	if (!in->events)
		return;
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %7s  ", "total s", "count");
	add_label(r, "event");
	emit(r);
	for (i = 0; i < in->nby_name; i++)
		inside_row(r, &in->by_name[i], 0);
	if (in->kinds > in->nby_name) {
		pt_sb_addf(&r->line, "  ... %zu more", in->kinds - in->nby_name);
		emit(r);
	}
	table_end(r);
	if (!in->nby_subject)
		return;
	heading(r, "Inside the programs: what the costliest events were about");
	table_begin(r);
	pt_sb_addf(&r->line, "  %10s %7s  ", "total s", "count");
	add_label(r, "event  subject");
	emit(r);
	for (i = 0; i < in->nby_subject; i++)
		inside_row(r, &in->by_subject[i], 1);
	table_end(r);
}

int pt_report_text_write(const struct pt_model *m, const struct pt_report *d,
			 const struct pt_report_text_opts *o,
			 char *const *paths, size_t npaths,
			 const char *aligned, FILE *f)
{
	struct report r;
	size_t i;

	memset(&r, 0, sizeof r);
	r.m = m;
	r.d = d;
	r.o = *o;
	r.f = f;
	pt_sb_init(&r.line);
	pt_sb_init(&r.tmp);
	pt_sb_addstr(&r.line, "proftrace report:");
	for (i = 0; i < npaths; i++)
		pt_sb_addf(&r.line, " %s", paths[i]);
	emit(&r);
	if (aligned) {
		pt_sb_addf(&r.line, "  %s", aligned);
		emit(&r);
	}
	captures(&r);
	summary(&r);
	if (m->n) {
		programs(&r);
		tree(&r);
		critical(&r);
		parallelism(&r);
		failures(&r);
		inside(&r);
	}
	pt_sb_release(&r.line);
	pt_sb_release(&r.tmp);
	return ferror(f) ? -1 : 0;
}
