/*
 * The report as Markdown; see report-md.h.  The numbers are printed with
 * the text report's precision (seconds to the millisecond, shares to a
 * tenth of a percent), so that both say the same.
 */
#include "views/report-md.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/strbuf.h"
#include "views/md.h"

#define NONE UINT32_MAX
#define BAR_MAX 40              /* parallelism bar at 100 %, characters */

struct md {
	const struct pt_report *r;
	size_t rows;                    /* rows per table */
	struct pt_md m;
};

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

#define pct pt_report_pct

/* The label of execution id, as a code span. */
static void label(struct md *d, uint32_t id)
{
	struct pt_sb l = PT_SB_INIT;

	pt_exec_label(d->r->m->execs[id], &l);
	pt_md_code(&d->m, l.buf, l.len);
	pt_sb_release(&l);
}

/* ---- sections ---- */

static void title(struct md *d)
{
	const struct pt_model *m = d->r->m;
	const char *cmd = m->ncaptures ? pt_model_meta(m, 0, "command") : NULL;

	pt_sb_addstr(&d->m.out, "## proftrace report");
	if (cmd) {
		pt_sb_addstr(&d->m.out, ": ");
		pt_md_code_str(&d->m, cmd);
	}
	pt_md_line(&d->m, "%s", "");
}

static void captures(struct md *d)
{
	static const char *const cols[] = {
		"#", "<host", "<start", "wall s", "executions", "<job",
		"<command",
	};
	const struct pt_model *m = d->r->m;
	size_t c;

	pt_md_line(&d->m, "\n### Captures");
	pt_md_header(&d->m, cols, 7, NULL);
	for (c = 0; c < m->ncaptures && c < d->rows; c++) {
		const struct pt_report_capture *cap = &d->r->caps[c];
		const char *host = pt_model_meta(m, c, "host");
		const char *cmd = pt_model_meta(m, c, "command");
		const char *job = pt_model_meta(m, c, "CI_JOB_NAME");

		if (!job)
			job = pt_model_meta(m, c, "GITHUB_JOB");
		pt_sb_addf(&d->m.out, "| %zu | ", c + 1);
		pt_md_code_str(&d->m, host ? host : "?");
		pt_sb_addstr(&d->m.out, " | ");
		if (cap->count)
			pt_sb_add_iso8601(&d->m.out, cap->first);
		else
			pt_sb_addstr(&d->m.out, "-");
		pt_sb_addf(&d->m.out, " | %.3f | %zu | ", cap->count ?
			   secs(cap->last - cap->first) : 0.0, cap->count);
		if (job)
			pt_md_code_str(&d->m, job);
		pt_sb_addstr(&d->m.out, " | ");
		if (cmd)
			pt_md_code_str(&d->m, cmd);
		pt_md_line(&d->m, " |");
	}
	pt_md_left_out(&d->m, m->ncaptures > d->rows ? m->ncaptures - d->rows : 0,
		 "captures");
}

static void summary(struct md *d)
{
	static const char *const cols[] = { "<measure", "<value" };
	const struct pt_report *r = d->r;
	const struct pt_model *m = r->m;

	pt_md_line(&d->m, "\n### Summary");
	pt_md_header(&d->m, cols, 2, NULL);
	pt_sb_addf(&d->m.out, "| wall time | %.3f s from ", secs(r->wall));
	if (m->n)
		pt_sb_add_iso8601(&d->m.out, r->a.t0);
	else
		pt_sb_addstr(&d->m.out, "-");
	pt_md_line(&d->m, " |");
	pt_md_line(&d->m, "| executions | %zu: %zu failed, %zu killed by a signal, %zu "
	     "untraced |", m->n, r->failed, r->killed, r->untraced);
	pt_sb_addf(&d->m.out, "| CPU time | %.3f s: user %.3f s, system %.3f s",
		   (double)(r->user_us + r->sys_us) / 1e6,
		   (double)r->user_us / 1e6, (double)r->sys_us / 1e6);
	if (r->wall > 0)
		pt_sb_addf(&d->m.out, "; %.2f x wall",
			   (double)(r->user_us + r->sys_us) * 1e3 /
			   (double)r->wall);
	if (r->nocpu)
		pt_sb_addf(&d->m.out, "; %zu without CPU data", r->nocpu);
	pt_md_line(&d->m, " |");
	pt_md_line(&d->m, "| parallelism | %.2f busy executions on average, peak %u |",
	     r->a.average, r->a.peak);
	if (r->rss_id != NONE) {
		pt_sb_addf(&d->m.out, "| peak memory | %.1f MB ",
			   (double)r->rss_kb / 1024.0);
		label(d, r->rss_id);
		pt_md_line(&d->m, " |");
	}
	if (m->damaged || m->lost_frames || m->bad_frames)
		pt_md_line(&d->m, "\n> **Warning**: damaged input (%llu frames lost, %llu "
		     "bad): the numbers cover what was intact",
		     (unsigned long long)m->lost_frames,
		     (unsigned long long)m->bad_frames);
}

static void groups(struct md *d, const char *heading,
		   const struct pt_report_group *g)
{
	const struct pt_report *r = d->r;
	static const char *const cols[] = {
		"self s", "%self", "total s", "%wall", "cpu s", "count",
	};
	size_t i;

	pt_md_line(&d->m, "\n### %s", heading);
	pt_md_header(&d->m, cols, 6, pt_group_name(&r->group));
	for (i = 0; i < r->ngroups && i < d->rows; i++) {
		pt_sb_addf(&d->m.out, "| %.3f | %.1f%% | %.3f | %.1f%% | %.3f | "
			   "%zu | ", secs(g[i].self), pct(g[i].self, r->self_sum),
			   secs(g[i].total), pct(g[i].total, r->wall),
			   (double)g[i].cpu_us / 1e6, g[i].count);
		pt_md_code_str(&d->m, pt_strtab_str(&r->names, g[i].id));
		pt_md_line(&d->m, " |");
	}
	pt_md_left_out(&d->m, r->ngroups > d->rows ? r->ngroups - d->rows : 0,
		 "groups");
}

static void critical(struct md *d)
{
	static const char *const cols[] = {
		"at s", "span s", "%wall", "own s", "%wall", "depth",
		"<execution",
	};
	const struct pt_report *r = d->r;
	const struct pt_analysis *a = &r->a;
	static const char *const gcols[] = { "own s", "%wall", "steps" };
	size_t i, rows = 3 * d->rows;

	if (!a->ncp)
		return;
	pt_md_line(&d->m, "\n### Critical path\n\nWhat the end of the run waited for; "
	     "*own* is a step's time not covered by a later step.");
	pt_md_header(&d->m, cols, 7, NULL);
	for (i = 0; i < r->ncp_shown && i < rows; i++) {
		const struct pt_cp_step *st = &a->cp[r->cp_shown[i]];

		pt_sb_addf(&d->m.out, "| %.3f | %.3f | %.1f%% | %.3f | %.1f%% | "
			   "%u | ", secs(st->from - a->t0),
			   secs(st->to - st->from),
			   pct(st->to - st->from, r->wall), secs(st->own),
			   pct(st->own, r->wall), st->depth);
		label(d, st->exec);
		pt_md_line(&d->m, " |");
	}
	if (r->ncp_shown > rows)        /* not with the report's own caps */
		pt_md_line(&d->m, "\n*%zu more steps not shown*", r->ncp_shown - rows);
	if (r->ncp_shown < r->ncp_steps)
		pt_md_line(&d->m, "\n*%zu shorter steps not shown, own %.3f s (%.1f%%)*",
		     r->ncp_steps - r->ncp_shown, secs(r->cp_hidden_own),
		     pct(r->cp_hidden_own, r->wall));
	if (r->cp_idle > 0)
		pt_md_line(&d->m, "\n*Off the path: %.3f s (%.1f%%): nothing ran, or "
		     "nothing the path waited for*", secs(r->cp_idle),
		     pct(r->cp_idle, r->wall));

	if (!r->ncp_groups)
		return;
	pt_md_line(&d->m, "\n### Critical path by %s", pt_group_name(&r->group));
	pt_md_header(&d->m, gcols, 3, pt_group_name(&r->group));
	for (i = 0; i < r->ncp_groups && i < d->rows; i++) {
		const struct pt_report_group *g = &r->cp_groups[i];

		pt_sb_addf(&d->m.out, "| %.3f | %.1f%% | %zu | ", secs(g->self),
			   pct(g->self, r->wall), g->count);
		pt_md_code_str(&d->m, pt_strtab_str(&r->cp_names, g->id));
		pt_md_line(&d->m, " |");
	}
	pt_md_left_out(&d->m, r->ncp_groups > d->rows ? r->ncp_groups - d->rows : 0,
		 "groups");
}

static void parallelism(struct md *d)
{
	static const char *const cols[] = { "busy", "time s", "%wall", "<" };
	static const char *const scols[] = {
		"length s", "at s", "%wall", "<execution",
	};
	const struct pt_report *r = d->r;
	const struct pt_analysis *a = &r->a;
	size_t i;

	pt_md_line(&d->m, "\n### Parallelism\n\nHow long exactly so many executions "
	     "were busy (running, with no running descendant).");
	pt_md_header(&d->m, cols, 4, NULL);
	for (i = 0; i < r->nlevels; i++) {
		const struct pt_report_level *l = &r->levels[i];
		int bar = (int)(pct(l->ns, r->wall) * BAR_MAX / 100.0 + 0.5);

		if (l->lo == l->hi)
			pt_sb_addf(&d->m.out, "| %zu", l->lo);
		else
			pt_sb_addf(&d->m.out, "| %zu-%zu", l->lo, l->hi);
		pt_sb_addf(&d->m.out, " | %.3f | %.1f%% | ", secs(l->ns),
			   pct(l->ns, r->wall));
		while (bar-- > 0)
			pt_sb_addstr(&d->m.out, "\xe2\x96\x88");  /* U+2588 */
		pt_md_line(&d->m, " |");
	}
	pt_md_line(&d->m, "\nAverage %.2f busy, peak %u.", a->average, a->peak);
	if (!r->nalone_shown)
		return;
	pt_md_line(&d->m, "\n### Longest stretches with a single busy execution");
	pt_md_header(&d->m, scols, 4, NULL);
	for (i = 0; i < r->nalone_shown; i++) {
		const struct pt_stretch *s = &a->alone[i];

		pt_sb_addf(&d->m.out, "| %.3f | %.3f | %.1f%% | ",
			   secs(s->to - s->from), secs(s->from - a->t0),
			   pct(s->to - s->from, r->wall));
		label(d, s->exec);
		pt_md_line(&d->m, " |");
	}
}

static void failures(struct md *d)
{
	static const char *const cols[] = {
		"at s", "wall s", "<status", "<execution", "<command",
	};
	const struct pt_report *r = d->r;
	struct pt_sb q = PT_SB_INIT;
	size_t i;

	if (!r->nfailures)
		return;
	pt_md_line(&d->m, "\n### Failed executions");
	pt_md_header(&d->m, cols, 5, NULL);
	for (i = 0; i < r->nfailures && i < d->rows; i++) {
		const struct pt_exec *e = r->m->execs[r->failures[i]];

		pt_sb_addf(&d->m.out, "| %.3f | %.3f | ",
			   secs(e->start_ns - r->a.t0),
			   secs(e->end_ns - e->start_ns));
		if (e->signal > 0)
			pt_sb_addf(&d->m.out, "signal %d | ", e->signal);
		else
			pt_sb_addf(&d->m.out, "exit %d | ", e->exit_code);
		label(d, e->id);
		pt_sb_addstr(&d->m.out, " | ");
		pt_sb_reset(&q);
		pt_exec_quote(e, &q);
		pt_md_code(&d->m, q.buf, q.len);
		pt_md_line(&d->m, " |");
	}
	pt_sb_release(&q);
	pt_md_left_out(&d->m, r->nfailures > d->rows ? r->nfailures - d->rows : 0,
		 "failed executions");
}

/* What the programs' own traces add up to (analysis/inside.h). */
static void inside(struct md *d)
{
	static const char *const kinds[] = { "total s", "count", "<event" };
	static const char *const subj[] = { "total s", "count", "<event",
					    "<subject" };
	const struct pt_inside *in = &d->r->inside;
	struct pt_sb note = PT_SB_INIT;
	size_t i;

	if (!in->events && !pt_sub_stats_line(d->r->m, &note))
		return;
	pt_md_line(&d->m, "\n### Inside the programs (events they wrote about "
		   "themselves)\n");
	pt_md_line(&d->m, "%zu events from %u executions.", in->events,
		   in->execs);
	if (note.len) {
		pt_sb_addstr(&d->m.out, "\nNot all went in: ");
		pt_md_code(&d->m, note.buf, note.len);
		pt_md_line(&d->m, "%s", ".");
	}
	pt_sb_release(&note);
	if (!in->events)
		return;
	pt_md_header(&d->m, kinds, 3, NULL);
	for (i = 0; i < in->nby_name && i < d->rows; i++) {
		pt_sb_addf(&d->m.out, "| %.3f | %zu | ",
			   secs(in->by_name[i].total_ns), in->by_name[i].count);
		pt_md_code_str(&d->m, in->by_name[i].name);
		pt_md_line(&d->m, " |");
	}
	if (!in->nby_subject)
		return;
	pt_md_line(&d->m, "\n### Inside the programs: what the costliest "
		   "events were about");
	pt_md_header(&d->m, subj, 4, NULL);
	for (i = 0; i < in->nby_subject; i++) {
		pt_sb_addf(&d->m.out, "| %.3f | %zu | ",
			   secs(in->by_subject[i].total_ns),
			   in->by_subject[i].count);
		pt_md_code_str(&d->m, in->by_subject[i].name);
		pt_sb_addstr(&d->m.out, " | ");
		pt_md_code_str(&d->m, in->by_subject[i].detail);
		pt_md_line(&d->m, " |");
	}
}

int pt_report_md_write(const struct pt_report *r, FILE *f)
{
	struct md d;

	memset(&d, 0, sizeof d);
	d.r = r;
	d.rows = r->top < PT_MD_MAX_ROWS ? r->top : PT_MD_MAX_ROWS;
	pt_md_init(&d.m, f);
	title(&d);
	captures(&d);
	summary(&d);
	if (r->m->n) {
		groups(&d, "Programs by self time (wall time not waiting for "
		       "children)", r->by_self);
		groups(&d, "Programs by total time (including children; "
		       "nested runs once)", r->by_total);
		critical(&d);
		parallelism(&d);
		failures(&d);
		inside(&d);
	}
	pt_md_release(&d.m);
	if (fflush(f) != 0 || ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
