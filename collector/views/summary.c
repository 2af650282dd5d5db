/* The summary `proftrace record` prints; see summary.h. */
#include "views/summary.h"

#include "analysis/analysis.h"
#include "base/quote.h"
#include "base/strbuf.h"

#define SUMMARY_TOP 5
#define SUMMARY_WIDTH 100

/* The command as a person reads it: an empty argv names the program. */
static void summary_command(const struct pt_exec *e, struct pt_sb *cmd)
{
	pt_sb_reset(cmd);
	if (e->argc)
		pt_exec_quote(e, cmd);
	else
		pt_quote_shell(cmd, e->exe);
}

/* Cut s to about `width` bytes, not inside a UTF-8 sequence. */
static void shorten(struct pt_sb *sb, size_t width)
{
	size_t n = width;

	if (sb->len <= width)
		return;
	while (n > 0 && ((unsigned char)sb->buf[n] & 0xc0) == 0x80)
		n--;
	sb->len = n;
	sb->buf[n] = '\0';
	pt_sb_addstr(sb, "...");
}

static int64_t duration(const struct pt_exec *e)
{
	return e->end_ns - e->start_ns;
}

void pt_summary_print(const struct pt_model *m, FILE *f)
{
	const struct pt_exec *top[SUMMARY_TOP];
	struct pt_sb cmd = PT_SB_INIT;
	int64_t first = 0, last = 0;
	double cpu_us = 0;      /* a sum of untrusted values must not overflow */
	size_t ntop = 0, i, j;

	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		int64_t d = duration(e);

		if (!i || e->start_ns < first)
			first = e->start_ns;
		if (!i || e->end_ns > last)
			last = e->end_ns;
		if (e->utime_us > 0)
			cpu_us += (double)e->utime_us;
		if (e->stime_us > 0)
			cpu_us += (double)e->stime_us;
		/* Keep the slowest few, slowest first. */
		for (j = ntop; j > 0 && duration(top[j - 1]) < d; j--)
			if (j < SUMMARY_TOP)
				top[j] = top[j - 1];
		if (j < SUMMARY_TOP) {
			top[j] = e;
			if (ntop < SUMMARY_TOP)
				ntop++;
		}
	}
	fprintf(f, "proftrace: %zu execution%s, wall %.3f s, CPU %.3f s\n",
		m->n, m->n == 1 ? "" : "s", (double)(last - first) / 1e9,
		cpu_us / 1e6);
	if (m->lost_frames)
		fprintf(f, "proftrace: %llu frames were lost; the record is "
			   "incomplete\n", (unsigned long long)m->lost_frames);
	if (!ntop)
		return;
	fprintf(f, "slowest commands:\n");
	for (i = 0; i < ntop; i++) {
		summary_command(top[i], &cmd);
		/* One line per command, as in report: a newline or other
		 * control byte inside an argument prints as '?'. */
		for (j = 0; j < cmd.len; j++)
			if ((unsigned char)cmd.buf[j] < 0x20 || cmd.buf[j] == 0x7f)
				cmd.buf[j] = '?';
		shorten(&cmd, SUMMARY_WIDTH);
		fprintf(f, "  %9.3f s  %s%s\n",
			(double)(top[i]->end_ns - top[i]->start_ns) / 1e9,
			cmd.buf, top[i]->flags & PT_EXF_END_UNKNOWN ?
			"  [unfinished]" : "");
	}
	pt_sb_release(&cmd);
}
