/*
 * The report as Markdown; see report-md.h.  The numbers are printed with
 * the text report's precision (seconds to the millisecond, shares to a
 * tenth of a percent), so that both say the same.
 */
#include "report-md.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "../analysis.h"
#include "../strbuf.h"

#define NONE UINT32_MAX
#define BAR_MAX 40              /* parallelism bar at 100 %, characters */

struct md {
	const struct pt_report *r;
	FILE *f;
	size_t rows;                    /* rows per table */
	struct pt_sb out, tmp;
};

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

#define pct pt_report_pct

/*
 * Append s (len bytes) as a code span: invalid UTF-8 as U+FFFD, control
 * characters as spaces, no spaces at either end, cut to PT_MD_CELL_MAX
 * bytes (with "..."), a fence
 * longer than any run of backticks inside, '|' escaped for the table.
 */
static void code(struct md *d, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct pt_sb *c = &d->tmp;
	size_t i = 0, run = 0, longest = 0, k;

	pt_sb_reset(c);
	while (i < len) {
		size_t l = pt_utf8_len(p + i, len - i);

		if (c->len + 4 > PT_MD_CELL_MAX) {
			pt_sb_addstr(c, "...");
			break;
		}
		if (!l) {
			pt_sb_addstr(c, "\xef\xbf\xbd");
			i++;
		} else if (l == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
			pt_sb_addch(c, ' ');
			i++;
		} else {
			pt_sb_add(c, p + i, l);
			i += l;
		}
	}
	/* Spaces at either end, as the text report's line ends, go. */
	while (c->len && c->buf[c->len - 1] == ' ')
		c->buf[--c->len] = '\0';
	for (k = 0; k < c->len && c->buf[k] == ' '; k++)
		;
	memmove(c->buf, c->buf + k, c->len - k + 1);
	c->len -= k;
	for (i = 0; i < c->len; i++) {
		run = c->buf[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (k = 0; k <= longest; k++)
		pt_sb_addch(&d->out, '`');
	/* One space each side, which the span drops: the content may
	 * start or end with a backtick. */
	pt_sb_addch(&d->out, ' ');
	for (i = 0; i < c->len; i++) {
		if (c->buf[i] == '|')
			pt_sb_addch(&d->out, '\\');
		pt_sb_addch(&d->out, c->buf[i]);
	}
	pt_sb_addch(&d->out, ' ');
	for (k = 0; k <= longest; k++)
		pt_sb_addch(&d->out, '`');
}

static void code_str(struct md *d, const char *s)
{
	code(d, s, strlen(s));
}

/* The label of execution id, as a code span. */
static void label(struct md *d, uint32_t id)
{
	struct pt_sb l = PT_SB_INIT;

	pt_exec_label(d->r->m->execs[id], &l);
	code(d, l.buf, l.len);
	pt_sb_release(&l);
}

static void flush(struct md *d)
{
	fwrite(d->out.buf, 1, d->out.len, d->f);
	pt_sb_reset(&d->out);
}

static void line(struct md *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line(struct md *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_sb_vaddf(&d->out, fmt, ap);
	va_end(ap);
	pt_sb_addch(&d->out, '\n');
	flush(d);
}

/* A table's header: "|"-separated names, right-aligned unless they
 * start with '<'. */
static void header(struct md *d, const char *const *cols, size_t n)
{
	size_t i;

	pt_sb_addch(&d->out, '\n');
	for (i = 0; i < n; i++)
		pt_sb_addf(&d->out, "| %s ", cols[i] + (cols[i][0] == '<'));
	pt_sb_addstr(&d->out, "|\n");
	for (i = 0; i < n; i++)
		pt_sb_addstr(&d->out, cols[i][0] == '<' ? "|---" : "|---:");
	pt_sb_addstr(&d->out, "|\n");
	flush(d);
}

static void left_out(struct md *d, size_t n, const char *what)
{
	if (n)
		line(d, "\n*%zu more %s not shown*", n, what);
}

/* ---- sections ---- */

static void title(struct md *d)
{
	const struct pt_model *m = d->r->m;
	const char *cmd = m->ncaptures ? pt_model_meta(m, 0, "command") : NULL;

	pt_sb_addstr(&d->out, "## proftrace report");
	if (cmd) {
		pt_sb_addstr(&d->out, ": ");
		code_str(d, cmd);
	}
	pt_sb_addch(&d->out, '\n');
	flush(d);
}

static void captures(struct md *d)
{
	static const char *const cols[] = {
		"#", "<host", "<start", "wall s", "executions", "<job",
		"<command",
	};
	const struct pt_model *m = d->r->m;
	size_t c;

	line(d, "\n### Captures");
	header(d, cols, 7);
	for (c = 0; c < m->ncaptures && c < d->rows; c++) {
		const struct pt_report_capture *cap = &d->r->caps[c];
		const char *host = pt_model_meta(m, c, "host");
		const char *cmd = pt_model_meta(m, c, "command");
		const char *job = pt_model_meta(m, c, "CI_JOB_NAME");

		if (!job)
			job = pt_model_meta(m, c, "GITHUB_JOB");
		pt_sb_addf(&d->out, "| %zu | ", c + 1);
		code_str(d, host ? host : "?");
		pt_sb_addstr(&d->out, " | ");
		if (cap->count)
			pt_sb_add_iso8601(&d->out, cap->first);
		else
			pt_sb_addstr(&d->out, "-");
		pt_sb_addf(&d->out, " | %.3f | %zu | ", cap->count ?
			   secs(cap->last - cap->first) : 0.0, cap->count);
		if (job)
			code_str(d, job);
		pt_sb_addstr(&d->out, " | ");
		if (cmd)
			code_str(d, cmd);
		line(d, " |");
	}
	left_out(d, m->ncaptures > d->rows ? m->ncaptures - d->rows : 0,
		 "captures");
}

static void summary(struct md *d)
{
	static const char *const cols[] = { "<measure", "<value" };
	const struct pt_report *r = d->r;
	const struct pt_model *m = r->m;

	line(d, "\n### Summary");
	header(d, cols, 2);
	pt_sb_addf(&d->out, "| wall time | %.3f s from ", secs(r->wall));
	if (m->n)
		pt_sb_add_iso8601(&d->out, r->a.t0);
	else
		pt_sb_addstr(&d->out, "-");
	line(d, " |");
	line(d, "| executions | %zu: %zu failed, %zu killed by a signal, %zu "
	     "untraced |", m->n, r->failed, r->killed, r->untraced);
	pt_sb_addf(&d->out, "| CPU time | %.3f s: user %.3f s, system %.3f s",
		   (double)(r->user_us + r->sys_us) / 1e6,
		   (double)r->user_us / 1e6, (double)r->sys_us / 1e6);
	if (r->wall > 0)
		pt_sb_addf(&d->out, "; %.2f x wall",
			   (double)(r->user_us + r->sys_us) * 1e3 /
			   (double)r->wall);
	if (r->nocpu)
		pt_sb_addf(&d->out, "; %zu without CPU data", r->nocpu);
	line(d, " |");
	line(d, "| parallelism | %.2f busy executions on average, peak %u |",
	     r->a.average, r->a.peak);
	if (r->rss_id != NONE) {
		pt_sb_addf(&d->out, "| peak memory | %.1f MB ",
			   (double)r->rss_kb / 1024.0);
		label(d, r->rss_id);
		line(d, " |");
	}
	if (m->damaged || m->lost_frames || m->bad_frames)
		line(d, "\n> **Warning**: damaged input (%llu frames lost, %llu "
		     "bad): the numbers cover what was intact",
		     (unsigned long long)m->lost_frames,
		     (unsigned long long)m->bad_frames);
}

static void groups(struct md *d, const char *heading,
		   const struct pt_report_group *g)
{
	const struct pt_report *r = d->r;
	const char *cols[] = { "self s", "%self", "total s", "%wall", "cpu s",
			       "count", NULL };
	char name[64];
	size_t i;

	snprintf(name, sizeof name, "<%s", pt_group_name(&r->group));
	cols[6] = name;
	line(d, "\n### %s", heading);
	header(d, cols, 7);
	for (i = 0; i < r->ngroups && i < d->rows; i++) {
		pt_sb_addf(&d->out, "| %.3f | %.1f%% | %.3f | %.1f%% | %.3f | "
			   "%zu | ", secs(g[i].self), pct(g[i].self, r->self_sum),
			   secs(g[i].total), pct(g[i].total, r->wall),
			   (double)g[i].cpu_us / 1e6, g[i].count);
		code_str(d, pt_strtab_str(&r->names, g[i].id));
		line(d, " |");
	}
	left_out(d, r->ngroups > d->rows ? r->ngroups - d->rows : 0,
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
	const char *gcols[] = { "own s", "%wall", "steps", NULL };
	char name[64];
	size_t i, rows = 3 * d->rows;

	if (!a->ncp)
		return;
	line(d, "\n### Critical path\n\nWhat the end of the run waited for; "
	     "*own* is a step's time not covered by a later step.");
	header(d, cols, 7);
	for (i = 0; i < r->ncp_shown && i < rows; i++) {
		const struct pt_cp_step *st = &a->cp[r->cp_shown[i]];

		pt_sb_addf(&d->out, "| %.3f | %.3f | %.1f%% | %.3f | %.1f%% | "
			   "%u | ", secs(st->from - a->t0),
			   secs(st->to - st->from),
			   pct(st->to - st->from, r->wall), secs(st->own),
			   pct(st->own, r->wall), st->depth);
		label(d, st->exec);
		line(d, " |");
	}
	if (r->ncp_shown > rows)        /* not with the report's own caps */
		line(d, "\n*%zu more steps not shown*", r->ncp_shown - rows);
	if (r->ncp_shown < r->ncp_steps)
		line(d, "\n*%zu shorter steps not shown, own %.3f s (%.1f%%)*",
		     r->ncp_steps - r->ncp_shown, secs(r->cp_hidden_own),
		     pct(r->cp_hidden_own, r->wall));
	if (r->cp_idle > 0)
		line(d, "\n*Off the path: %.3f s (%.1f%%): nothing ran, or "
		     "nothing the path waited for*", secs(r->cp_idle),
		     pct(r->cp_idle, r->wall));

	if (!r->ncp_groups)
		return;
	snprintf(name, sizeof name, "<%s", pt_group_name(&r->group));
	gcols[3] = name;
	line(d, "\n### Critical path by %s", pt_group_name(&r->group));
	header(d, gcols, 4);
	for (i = 0; i < r->ncp_groups && i < d->rows; i++) {
		const struct pt_report_group *g = &r->cp_groups[i];

		pt_sb_addf(&d->out, "| %.3f | %.1f%% | %zu | ", secs(g->self),
			   pct(g->self, r->wall), g->count);
		code_str(d, pt_strtab_str(&r->cp_names, g->id));
		line(d, " |");
	}
	left_out(d, r->ncp_groups > d->rows ? r->ncp_groups - d->rows : 0,
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

	line(d, "\n### Parallelism\n\nHow long exactly so many executions "
	     "were busy (running, with no running descendant).");
	header(d, cols, 4);
	for (i = 0; i < r->nlevels; i++) {
		const struct pt_report_level *l = &r->levels[i];
		int bar = (int)(pct(l->ns, r->wall) * BAR_MAX / 100.0 + 0.5);

		if (l->lo == l->hi)
			pt_sb_addf(&d->out, "| %zu", l->lo);
		else
			pt_sb_addf(&d->out, "| %zu-%zu", l->lo, l->hi);
		pt_sb_addf(&d->out, " | %.3f | %.1f%% | ", secs(l->ns),
			   pct(l->ns, r->wall));
		while (bar-- > 0)
			pt_sb_addstr(&d->out, "\xe2\x96\x88");  /* U+2588 */
		line(d, " |");
	}
	line(d, "\nAverage %.2f busy, peak %u.", a->average, a->peak);
	if (!r->nalone_shown)
		return;
	line(d, "\n### Longest stretches with a single busy execution");
	header(d, scols, 4);
	for (i = 0; i < r->nalone_shown; i++) {
		const struct pt_stretch *s = &a->alone[i];

		pt_sb_addf(&d->out, "| %.3f | %.3f | %.1f%% | ",
			   secs(s->to - s->from), secs(s->from - a->t0),
			   pct(s->to - s->from, r->wall));
		label(d, s->exec);
		line(d, " |");
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
	line(d, "\n### Failed executions");
	header(d, cols, 5);
	for (i = 0; i < r->nfailures && i < d->rows; i++) {
		const struct pt_exec *e = r->m->execs[r->failures[i]];

		pt_sb_addf(&d->out, "| %.3f | %.3f | ",
			   secs(e->start_ns - r->a.t0),
			   secs(e->end_ns - e->start_ns));
		if (e->signal > 0)
			pt_sb_addf(&d->out, "signal %d | ", e->signal);
		else
			pt_sb_addf(&d->out, "exit %d | ", e->exit_code);
		label(d, e->id);
		pt_sb_addstr(&d->out, " | ");
		pt_sb_reset(&q);
		pt_exec_quote(e, &q);
		code(d, q.buf, q.len);
		line(d, " |");
	}
	pt_sb_release(&q);
	left_out(d, r->nfailures > d->rows ? r->nfailures - d->rows : 0,
		 "failed executions");
}

int pt_report_md_write(const struct pt_report *r, FILE *f)
{
	struct md d;

	memset(&d, 0, sizeof d);
	d.r = r;
	d.f = f;
	d.rows = r->top < PT_MD_MAX_ROWS ? r->top : PT_MD_MAX_ROWS;
	pt_sb_init(&d.out);
	pt_sb_init(&d.tmp);
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
	}
	pt_sb_release(&d.out);
	pt_sb_release(&d.tmp);
	if (fflush(f) != 0 || ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
