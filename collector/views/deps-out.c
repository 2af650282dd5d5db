/* proftrace deps's outputs (doc/proftrace-deps.1.md). */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/strbuf.h"
#include "views/deps-out.h"
#include "views/json.h"
#include "views/md.h"

static double sec(int64_t ns)
{
	return (double)ns / 1e9;
}

/* A command or a path for a terminal: control bytes as '?', cut. */
static void plain(struct pt_sb *sb, const char *s, size_t max)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n && i < max; i++)
		pt_sb_addch(sb, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ?
				'?' : s[i]);
	if (n > max)
		pt_sb_addstr(sb, "...");
}

static const char *cpus_label(int cpus, char *buf, size_t n)
{
	if (!cpus)
		snprintf(buf, n, "unlimited CPUs");
	else
		snprintf(buf, n, "%d CPU%s", cpus, cpus == 1 ? "" : "s");
	return buf;
}

static int finish(FILE *f)
{
	return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

int pt_deps_write_text(const struct pt_deps *d, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	char lab[32];
	size_t i;

	pt_sb_addf(&sb, "%zu jobs run by ", d->njobs);
	plain(&sb, pt_exec_prog(d->driver), 60);
	pt_sb_addf(&sb, ", %zu dependencies between them, from %zu file "
		   "accesses", d->nedges, d->accesses);
	if (d->dropped)
		pt_sb_addf(&sb, " (%llu more not kept)",
			   (unsigned long long)d->dropped);
	fprintf(f, "%s\n\n", sb.buf);
	fprintf(f, "  %-22s %9.2f s\n", "wall time now", sec(d->wall_ns));
	for (i = 0; i < d->nideal; i++)
		fprintf(f, "  ideal on %-14s %8.2f s%s\n",
			cpus_label(d->ideal[i].cpus, lab, sizeof lab),
			sec(d->ideal[i].wall_ns),
			d->ideal[i].cpus && d->ideal[i].cpus == d->machine_cpus ?
			"  (this machine)" : "");
	if (d->ncrit) {
		pt_sb_reset(&sb);
		for (i = 0; i < d->ncrit && i < 8; i++) {
			pt_sb_addstr(&sb, i ? " -> " : "");
			plain(&sb, d->job[d->crit[i]].cmd, 50);
		}
		if (d->ncrit > 8)
			pt_sb_addf(&sb, " -> ... (%zu jobs)", d->ncrit);
		fprintf(f, "\ncritical path: %s\n", sb.buf);
	}
	fprintf(f, "\nserializations that cost most:%s\n",
		d->nser ? "" : " none");
	for (i = 0; i < d->nser; i++) {
		pt_sb_reset(&sb);
		plain(&sb, d->job[d->ser[i].first].cmd, 60);
		pt_sb_addstr(&sb, "  then  ");
		plain(&sb, d->job[d->ser[i].then].cmd, 60);
		fprintf(f, "  %8.2f s  %s\n", sec(d->ser[i].gain_ns), sb.buf);
	}
	fprintf(f, "\nraces:%s\n", d->nrace ? "" : " none");
	for (i = 0; i < d->nrace; i++) {
		pt_sb_reset(&sb);
		plain(&sb, d->race[i].path, 200);
		pt_sb_addstr(&sb, "\n      written by ");
		plain(&sb, d->job[d->race[i].writer].cmd, 100);
		pt_sb_addstr(&sb, "\n      read by    ");
		plain(&sb, d->job[d->race[i].reader].cmd, 100);
		fprintf(f, "  %s\n", sb.buf);
	}
	pt_sb_release(&sb);
	return finish(f);
}

int pt_deps_write_md(const struct pt_deps *d, FILE *f)
{
	static const char *const ideal_cols[] = { "<CPUs", "wall (s)" };
	static const char *const ser_cols[] = { "gain (s)", "<first",
						"<then" };
	static const char *const race_cols[] = { "<path", "<writer",
						 "<reader" };
	struct pt_md md;
	char lab[32];
	size_t i;

	pt_md_init(&md, f);
	pt_md_line(&md, "## What it could have been");
	pt_md_line(&md, "%s", "");
	pt_md_code_str(&md, pt_exec_prog(d->driver));
	pt_md_line(&md, " ran %zu jobs, with %zu dependencies between them "
		   "found in %zu file accesses.", d->njobs, d->nedges,
		   d->accesses);
	pt_md_header(&md, ideal_cols, 2, NULL);
	pt_md_line(&md, "| now | %.2f |", sec(d->wall_ns));
	for (i = 0; i < d->nideal; i++)
		pt_md_line(&md, "| ideal on %s%s | %.2f |",
			   cpus_label(d->ideal[i].cpus, lab, sizeof lab),
			   d->ideal[i].cpus &&
			   d->ideal[i].cpus == d->machine_cpus ?
			   " (this machine)" : "",
			   sec(d->ideal[i].wall_ns));
	if (d->ncrit) {
		pt_md_line(&md, "%s", "");
		pt_sb_addstr(&md.out, "Critical path:");
		for (i = 0; i < d->ncrit && i < 8; i++) {
			pt_sb_addstr(&md.out, i ? " \xe2\x86\x92 " : " ");
			pt_md_code_str(&md, d->job[d->crit[i]].cmd);
		}
		if (d->ncrit > 8)
			pt_sb_addf(&md.out, " \xe2\x86\x92 ... (%zu jobs)",
				   d->ncrit);
		pt_md_line(&md, "%s", "");
	}
	pt_md_line(&md, "%s", "");
	pt_md_line(&md, "### Serializations that cost most");
	if (!d->nser) {
		pt_md_line(&md, "%s", "");
		pt_md_line(&md, "None.");
	} else {
		pt_md_header(&md, ser_cols, 3, NULL);
		for (i = 0; i < d->nser; i++) {
			pt_sb_addf(&md.out, "| %.2f | ",
				   sec(d->ser[i].gain_ns));
			pt_md_code_str(&md, d->job[d->ser[i].first].cmd);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->job[d->ser[i].then].cmd);
			pt_md_line(&md, " |");
		}
	}
	pt_md_line(&md, "%s", "");
	pt_md_line(&md, "### Races");
	if (!d->nrace) {
		pt_md_line(&md, "%s", "");
		pt_md_line(&md, "None.");
	} else {
		pt_md_header(&md, race_cols, 3, NULL);
		for (i = 0; i < d->nrace; i++) {
			pt_sb_addstr(&md.out, "| ");
			pt_md_code_str(&md, d->race[i].path);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->job[d->race[i].writer].cmd);
			pt_sb_addstr(&md.out, " | ");
			pt_md_code_str(&md, d->job[d->race[i].reader].cmd);
			pt_md_line(&md, " |");
		}
	}
	return pt_md_end(&md);
}

static void jstr(struct pt_sb *sb, const char *s)
{
	pt_sb_addch(sb, '"');
	pt_json_escape(sb, s, strlen(s));
	pt_sb_addch(sb, '"');
}

int pt_deps_write_json(const struct pt_deps *d, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t i;
	int rc;

	pt_sb_addf(&sb, "{\"wall\": %.6f, \"jobs\": %zu, \"edges\": %zu, "
		   "\"accesses\": %zu, \"dropped\": %llu, \"machine_cpus\": ",
		   sec(d->wall_ns), d->njobs, d->nedges, d->accesses,
		   (unsigned long long)d->dropped);
	if (d->machine_cpus)
		pt_sb_addf(&sb, "%d", d->machine_cpus);
	else
		pt_sb_addstr(&sb, "null");
	pt_sb_addstr(&sb, ", \"driver\": ");
	jstr(&sb, pt_exec_prog(d->driver));
	pt_sb_addstr(&sb, ",\n \"ideal\": [");
	for (i = 0; i < d->nideal; i++) {
		pt_sb_addstr(&sb, i ? ", " : "");
		if (d->ideal[i].cpus)
			pt_sb_addf(&sb, "{\"cpus\": %d, ", d->ideal[i].cpus);
		else
			pt_sb_addstr(&sb, "{\"cpus\": null, ");
		pt_sb_addf(&sb, "\"wall\": %.6f}", sec(d->ideal[i].wall_ns));
	}
	pt_sb_addstr(&sb, "],\n \"critical_path\": [");
	for (i = 0; i < d->ncrit; i++) {
		pt_sb_addstr(&sb, i ? ", " : "");
		jstr(&sb, d->job[d->crit[i]].cmd);
	}
	pt_sb_addstr(&sb, "],\n \"serializations\": [");
	for (i = 0; i < d->nser; i++) {
		pt_sb_addstr(&sb, i ? ",\n  " : "\n  ");
		pt_sb_addstr(&sb, "{\"first\": ");
		jstr(&sb, d->job[d->ser[i].first].cmd);
		pt_sb_addstr(&sb, ", \"then\": ");
		jstr(&sb, d->job[d->ser[i].then].cmd);
		pt_sb_addf(&sb, ", \"gain\": %.6f}", sec(d->ser[i].gain_ns));
	}
	pt_sb_addstr(&sb, "],\n \"races\": [");
	for (i = 0; i < d->nrace; i++) {
		pt_sb_addstr(&sb, i ? ",\n  " : "\n  ");
		pt_sb_addstr(&sb, "{\"path\": ");
		jstr(&sb, d->race[i].path);
		pt_sb_addstr(&sb, ", \"writer\": ");
		jstr(&sb, d->job[d->race[i].writer].cmd);
		pt_sb_addstr(&sb, ", \"reader\": ");
		jstr(&sb, d->job[d->race[i].reader].cmd);
		pt_sb_addch(&sb, '}');
	}
	pt_sb_addstr(&sb, "]}\n");
	rc = fwrite(sb.buf, 1, sb.len, f) == sb.len ? 0 : -1;
	pt_sb_release(&sb);
	return finish(f) < 0 ? -1 : rc;
}

void pt_deps_summary(const struct pt_deps *d, int md, FILE *f)
{
	const struct pt_deps_ideal *mine = NULL, *unl = NULL;
	struct pt_sb sb = PT_SB_INIT;
	size_t i;

	for (i = 0; i < d->nideal; i++) {
		if (!d->ideal[i].cpus)
			unl = &d->ideal[i];
		else if (d->ideal[i].cpus <= d->machine_cpus || !mine)
			mine = &d->ideal[i];
	}
	fprintf(f, md ? "\n## What it could have been\n\n" :
			"\nwhat it could have been:\n");
	if (mine)
		fprintf(f, "%s%.2f s on %d CPU%s with the same %zu jobs "
			"(now %.2f s)%s\n", md ? "- " : "  ",
			sec(mine->wall_ns), mine->cpus,
			mine->cpus == 1 ? "" : "s", d->njobs, sec(d->wall_ns),
			"");
	if (unl)
		fprintf(f, "%s%.2f s on unlimited CPUs (the dependencies' "
			"critical path)\n", md ? "- " : "  ",
			sec(unl->wall_ns));
	/* Commands stay out of the Markdown: deps -f markdown quotes them. */
	if (d->nser && md) {
		fprintf(f, "- %zu serialization%s without a dependency, the "
			"costliest %.2f s\n", d->nser, d->nser == 1 ? "" : "s",
			sec(d->ser[0].gain_ns));
	} else if (d->nser) {
		plain(&sb, d->job[d->ser[0].first].cmd, 60);
		pt_sb_addstr(&sb, " then ");
		plain(&sb, d->job[d->ser[0].then].cmd, 60);
		fprintf(f, "  costliest serialization, %.2f s: %s\n",
			sec(d->ser[0].gain_ns), sb.buf);
	}
	fprintf(f, "%s%zu race%s (proftrace deps names them)\n",
		md ? "- " : "  ", d->nrace, d->nrace == 1 ? "" : "s");
	pt_sb_release(&sb);
}
