/*
 * proftrace report: where the time of a run went, as text for a terminal
 * or a CI log (views/report-text.c) or, with --format markdown, as
 * Markdown (views/report-md.c); with --runs, one summary of repeated runs
 * (views/runsum-*.c).  This file parses the options, loads and aligns the
 * captures and hands the figures (analysis/report.c) to the view.
 *
 * Exit status: 0; 1 if an input was damaged (the report covers what was
 * intact) or unreadable; 2 for bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cmd.h"
#include "analysis/deps.h"
#include "views/deps-out.h"
#include "views/whatif-out.h"
#include "cli/textopts.h"
#include "model/load.h"
#include "model/model.h"
#include "model/redact.h"
#include "analysis/report.h"
#include "base/util.h"
#include "views/report-md.h"
#include "views/report-text.h"
#include "analysis/runs.h"
#include "analysis/runsum.h"
#include "views/runsum.h"

#define MAX_DEPTH 64

enum align { ALIGN_AUTO, ALIGN_START, ALIGN_WALL };

struct opts {
	struct pt_textopts t;           /* -f -g -n -w --redact */
	int depth;
	int runs;                       /* --runs */
	enum align align;
};

static const char help_text[] =
	"Print where the time of the recorded run(s) went: a summary, the\n"
	"programs that took the most time, the process tree, the critical\n"
	"path and how parallel the run was.\n\n"
	"  -f, --format F      text (default) or markdown (GitHub-flavoured,\n"
	"                      for a CI job summary or a merge request)\n"
	"  -g, --group-by KEY  group programs by exe (default), package, cwd\n"
	"                      or env:NAME (a recorded variable)\n"
	"  -d, --depth N       process tree depth (default 6)\n"
	"  -n, --top N         lines per table, children per tree node\n"
	"                      (default 10)\n"
	"  -w, --width N       line width (default: the terminal's, else\n"
	"                      $COLUMNS, else 100)\n"
	"  --runs              the captures are repeated runs of one build:\n"
	"                      one summary of medians and ranges, per command\n"
	"                      (--group-by command, the default here, or any\n"
	"                      other key)\n"
	"  --align A           several captures: start (lay each over the\n"
	"                      first, for repeated runs) or wall (one wall\n"
	"                      clock, for jobs of one pipeline); default: wall\n"
	"                      when they share a CI pipeline id or overlap\n"
	"                      in time, else start\n"
	"  --redact REGEX      replace what REGEX (POSIX extended) matches in\n"
	"                      any argument by *** (may be repeated)\n"
	"  -h, --help          show this help\n\n"
	"The full page: man proftrace-report (proftrace-report(1)).\n";

/* ---- the command ---- */

/* report --runs: each capture one run, summarized. */
static int run_runs(struct opts *o, char **paths, size_t n)
{
	struct pt_runs rs;
	struct pt_runsum s;
	size_t i;
	int status = 0, rc;

	if (!o->t.group_set)
		pt_group_parse("command", 1, &o->t.group);
	pt_runs_init(&rs, &o->t.group, n);
	for (i = 0; i < n; i++) {
		rc = pt_runs_add(&rs, paths[i], o->t.red);
		if (rc < 0) {
			pt_runs_free(&rs);
			return 1;
		}
		if (rc > 0)
			status = 1;
	}
	pt_runsum_compute(&s, &rs);
	if (o->t.markdown)
		rc = pt_runsum_md_write(&s, (size_t)o->t.top, stdout);
	else
		rc = pt_runsum_text_write(&s, (size_t)o->t.top, o->t.width,
					  stdout);
	if (rc < 0) {
		pt_warn("writing standard output failed");
		status = 1;
	}
	pt_runsum_free(&s);
	pt_runs_free(&rs);
	return status;
}

/*
 * Several captures: lay them over each other (repeated runs) or keep one
 * wall clock (jobs of one pipeline).  Returns the sentence that says
 * which and why; shift gets what was taken off each capture's times.
 */
static const char *align(struct pt_model *m, enum align how, int64_t *shift,
			 char *buf, size_t size)
{
	struct pt_run *runs;
	const char *why = "";
	size_t i, c;
	int pipeline;

	memset(shift, 0, m->ncaptures * sizeof *shift);
	if (m->ncaptures < 2)
		return NULL;
	runs = pt_xcalloc(m->ncaptures, sizeof *runs);
	for (c = 0; c < m->ncaptures; c++) {
		runs[c].t0 = INT64_MAX;
		runs[c].pipeline = pt_model_meta(m, c, "CI_PIPELINE_ID");
		if (!runs[c].pipeline)
			runs[c].pipeline = pt_model_meta(m, c, "GITHUB_RUN_ID");
	}
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		struct pt_run *x = &runs[e->capture];

		if (e->start_ns < x->t0)
			x->t0 = e->start_ns;
	}
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		struct pt_run *x = &runs[e->capture];

		if (e->end_ns - x->t0 > x->wall)
			x->wall = e->end_ns - x->t0;
	}
	pipeline = pt_runs_one_pipeline(runs, m->ncaptures, &why);
	free(runs);
	if (how == ALIGN_START || (how == ALIGN_AUTO && !pipeline)) {
		pt_model_align_starts(m, shift);
		snprintf(buf, size, "captures laid over each other, each from "
			 "its own start (%s); --align wall keeps one wall "
			 "clock", how == ALIGN_AUTO ? why : "--align start");
	} else {
		snprintf(buf, size, "captures on one wall clock (%s); --align "
			 "start lays them over each other",
			 how == ALIGN_AUTO ? why : "--align wall");
	}
	return buf;
}

static int run(int argc, char **argv)
{
	static const struct option long_opts[] = {
		PT_TEXTOPTS_LONG,
		{ "depth", required_argument, NULL, 'd' },
		{ "runs", no_argument, NULL, 'U' },
		{ "align", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	struct pt_report_text_opts to;
	const char *aligned;
	char note[256];
	int64_t *shift;
	size_t ci;
	struct pt_report d;
	struct pt_model m;
	int c, status = 0;

	memset(&o, 0, sizeof o);
	pt_textopts_init(&o.t, "exe", 10, "exe, package, cwd, env:NAME or "
			 "(with --runs) command");
	o.depth = 6;
	while ((c = getopt_long(argc, argv, PT_TEXTOPTS_SHORT "d:h",
				long_opts, NULL)) != -1) {
		switch (pt_textopts_take(&o.t, c, optarg)) {
		case 1:
			continue;
		case -1:
			goto bad;
		}
		switch (c) {
		case 'U':
			o.runs = 1;
			break;
		case 'a':
			if (!strcmp(optarg, "start"))
				o.align = ALIGN_START;
			else if (!strcmp(optarg, "wall"))
				o.align = ALIGN_WALL;
			else {
				pt_warn("--align: expected start or wall, "
					"not '%s'", optarg);
				goto bad;
			}
			break;
		case 'd':
			if (pt_textopts_int("--depth", optarg, 0,
					    &o.depth) < 0)
				goto bad;
			break;
		case 'h':
			printf("usage: proftrace report %s\n\n%s",
			       pt_cmd_report.usage, help_text);
			pt_textopts_free(&o.t);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	pt_textopts_finish(&o.t);
	if (o.depth > MAX_DEPTH)
		o.depth = MAX_DEPTH;
	if (o.runs) {
		status = run_runs(&o, argv + optind, (size_t)(argc - optind));
		pt_textopts_free(&o.t);
		return status;
	}
	if (o.t.group.kind == PT_GROUP_COMMAND) {
		pt_warn("--group-by command: only with --runs");
		goto bad;
	}

	status = pt_model_load(&m, argv + optind, (size_t)(argc - optind),
			       o.t.red);
	if (status < 0) {
		pt_textopts_free(&o.t);
		return 1;
	}

	/* Markdown keeps to its row cap, so its figures do too. */
	if (o.t.markdown && o.t.top > PT_MD_MAX_ROWS)
		o.t.top = PT_MD_MAX_ROWS;
	shift = pt_xcalloc(m.ncaptures + 1, sizeof *shift);
	aligned = align(&m, o.align, shift, note, sizeof note);
	pt_report_compute(&d, &m, &o.t.group, (size_t)o.t.top);
	/* The captures' own times, as recorded. */
	for (ci = 0; ci < m.ncaptures; ci++) {
		d.caps[ci].first += shift[ci];
		d.caps[ci].last += shift[ci];
	}
	free(shift);

	if (o.t.markdown) {
		pt_report_md_write(&d, stdout);
		if (aligned)
			printf("\n*%s.*\n", aligned);
	} else {
		to.group = o.t.group;
		to.depth = o.depth;
		to.top = o.t.top;
		to.width = o.t.width;
		pt_report_text_write(&m, &d, &to, argv + optind,
				     (size_t)(argc - optind), aligned, stdout);
	}
	/* Recorded with --files: what the same jobs could have taken. */
	if (m.ncaptures == 1 && pt_model_files_count(&m, NULL)) {
		struct pt_deps dd;
		const char *why;

		if (pt_deps_build(&m, &dd, 0, &why) == 0) {
			struct pt_whatif_hint h[3];
			int64_t now, spread;
			size_t n = pt_whatif_hints(&dd, &m, h, 3, &now, &spread);

			pt_deps_summary(&dd, o.t.markdown, stdout);
			pt_whatif_write_hints(h, n, now, spread, o.t.markdown ?
					      PT_WHATIF_MD : PT_WHATIF_TEXT,
					      stdout);
			pt_whatif_hints_free(h, n);
			pt_deps_free(&dd);
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pt_warn("writing standard output failed");
		status = 1;
	}
	pt_report_free(&d);
	pt_model_free(&m);
	pt_textopts_free(&o.t);
	return status;

usage:
	pt_textopts_free(&o.t);
	return pt_cmd_usage(&pt_cmd_report);
bad:
	pt_textopts_free(&o.t);
	return 2;
}

const struct pt_cmd pt_cmd_report = {
	.name = "report",
	.usage = "[--format text|markdown] [--group-by exe|package|cwd|env:NAME] "
		 "[--depth N] [--top N] [--width N] [--runs] "
		 "[--align start|wall] [--redact REGEX]... CAPTURE...",
	.summary = "print where the time went: summary, programs, tree, "
		   "critical path, parallelism",
	.run = run,
};
