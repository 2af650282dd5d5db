/*
 * proftrace diff: compare two runs, or several runs of each side.
 *
 * `diff A B`: executions are matched by a key (default: the normalized
 * command line, pt_exec_key), their times summed per key in each run, and
 * the keys listed by the size of the change, then those seen in one run
 * only.  `diff A... -- B...`: analysis/rundiff.c's medians, intervals and
 * verdicts, views/rundiff*.c's renderings, and the CI gate
 * (--fail-if-slower).  The two-run text is views/diff-text.c, its
 * Markdown views/diff-md.c; this file parses the options and dispatches.
 * doc/man/proftrace-diff.1.scd is the manual.
 *
 * Exit status: 0; 1 if an input was damaged or unreadable, or a
 * --fail-if-slower limit was passed beyond noise; 2 for bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/diff.h"
#include "cli/cmd.h"
#include "cli/textopts.h"
#include "model/load.h"
#include "model/model.h"
#include "model/redact.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "views/diff-md.h"
#include "views/diff-text.h"
#include "analysis/rundiff.h"
#include "views/rundiff.h"


/* A --fail-if-slower limit: the run's wall time (key NULL) or a key's. */
struct gate {
	const char *key;
	double pct;
};

struct diff {
	struct pt_diff d;               /* the figures */
	struct pt_textopts t;           /* -f -g -n -w --redact */
	int weight_set, all;
	struct gate *gates;
	size_t ngates;
};

static const char help_text[] =
	"Compare two runs: the time of each command (matched across runs by\n"
	"program and arguments, with the checkout, temporary names and job\n"
	"counts normalized) in A and in B, largest change first, then what\n"
	"ran in only one of them.  With several runs a side (A... -- B...):\n"
	"medians, 95% intervals, and only the changes beyond noise.\n\n"
	"  -f, --format F      text (default) or markdown (GitHub-flavoured)\n"
	"  -g, --group-by KEY  match by command (default), exe, package, cwd\n"
	"                      or env:NAME\n"
	"  --weight W          wall (default for A B: wall time), self (wall\n"
	"                      time not spent waiting for children) or cpu\n"
	"                      (default for A... -- B...)\n"
	"  --all               A... -- B...: list the changes within noise too\n"
	"  --fail-if-slower [KEY=]PCT\n"
	"                      exit 1 if the run's wall time (or KEY's time,\n"
	"                      a command or its short label) is PCT % slower\n"
	"                      or more and beyond noise (may be repeated)\n"
	"  -n, --top N         lines per table (default 20)\n"
	"  -w, --width N       line width (default: the terminal's, else\n"
	"                      $COLUMNS, else 100)\n"
	"  --redact REGEX      replace what REGEX (POSIX extended) matches in\n"
	"                      any argument by *** (may be repeated)\n"
	"  -h, --help          show this help\n\n"
	"The full page: man proftrace-diff (proftrace-diff(1)).\n";

/* Parse [KEY=]PCT into a new gate of d. */
static int add_gate(struct diff *d, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	const char *num = eq ? eq + 1 : arg;
	char *end;
	double pct = strtod(num, &end);
	struct gate *g;

	/* Digits and a point: strtod would take hex, "inf" and exponents. */
	if (!*num || *end || num[strspn(num, "0123456789.")] ||
	    !(pct >= 0) || pct > 1e6 || (eq && eq == arg)) {
		pt_warn("--fail-if-slower: expected PCT or KEY=PCT, not '%s'",
			arg);
		return -1;
	}
	d->gates = pt_xrealloc(d->gates, (d->ngates + 1) * sizeof *d->gates);
	g = &d->gates[d->ngates++];
	g->key = NULL;
	if (eq) {
		char *k = pt_xmalloc((size_t)(eq - arg) + 1);

		memcpy(k, arg, (size_t)(eq - arg));
		k[eq - arg] = '\0';
		g->key = k;
	}
	g->pct = pct;
	return 0;
}

static void free_gates(struct diff *d)
{
	size_t i;

	for (i = 0; i < d->ngates; i++)
		free((char *)d->gates[i].key);
	free(d->gates);
}

/* Is a gate passed, beyond noise?  Says which on stderr. */
static int check_gates(const struct diff *d, const struct pt_rdiff *f)
{
	size_t i, j;
	int tripped = 0;

	for (i = 0; i < d->ngates; i++) {
		const struct gate *g = &d->gates[i];
		int found = 0;

		if (!g->key) {
			if (f->wall.verdict == PT_V_SLOWER &&
			    f->wall.pct >= g->pct) {
				pt_warn("wall time %+.1f%% [%+.3f, %+.3f s], "
					"beyond noise: over the %g%% allowed",
					f->wall.pct, f->wall.ci_lo,
					f->wall.ci_hi, g->pct);
				tripped = 1;
			}
			continue;
		}
		for (j = 0; j < f->nrows; j++) {
			const struct pt_rdiff_row *r = &f->rows[j];

			if (strcmp(pt_runs_key(f->r, r->key), g->key) &&
			    strcmp(pt_runs_label(f->r, r->key), g->key))
				continue;
			found = 1;
			if (r->verdict == PT_V_SLOWER && r->pct >= g->pct) {
				pt_warn("%s: %+.0f%% [%+.3f, %+.3f s], beyond "
					"noise: over the %g%% allowed",
					g->key, r->pct, r->ci_lo, r->ci_hi,
					g->pct);
				tripped = 1;
			}
		}
		if (!found)
			pt_warn("--fail-if-slower: no %s '%s' on both sides",
				pt_group_name(&f->r->group), g->key);
	}
	if (d->ngates && !f->testable)
		pt_warn("--fail-if-slower: no verdicts without two runs on a "
			"side: not failing");
	return tripped;
}

/* diff A... -- B...: argv[0, na) are A, argv[na, n) are B. */
static int run_runs(struct diff *d, char **argv, size_t na, size_t n)
{
	struct pt_runs r;
	struct pt_rdiff f;
	struct pt_rdiff_view v;
	size_t i;
	int status = 0, rc;

	if (na > 64 || n - na > 64) {
		pt_warn("at most 64 runs a side");
		return 2;
	}
	if (!d->weight_set)
		d->d.weight = PT_DIFF_CPU;
	pt_runs_init(&r, &d->t.group, n);
	for (i = 0; i < n; i++) {
		rc = pt_runs_add(&r, argv[i], d->t.red);
		if (rc < 0) {
			pt_runs_free(&r);
			return 1;
		}
		if (rc > 0)
			status = 1;
	}
	memset(&f, 0, sizeof f);
	pt_rdiff_compute(&f, &r, na, d->d.weight);
	v.top = (size_t)d->t.top;
	v.all = d->all;
	v.width = d->t.width;
	v.brief = 0;
	if (d->t.markdown)
		rc = pt_rdiff_md_write(&f, &v, stdout);
	else
		rc = pt_rdiff_text_write(&f, &v, stdout);
	if (rc < 0) {
		pt_warn("writing standard output failed");
		status = 1;
	}
	if (check_gates(d, &f))
		status = 1;
	pt_rdiff_free(&f);
	pt_runs_free(&r);
	return status;
}

/*
 * Index of the "--" that separates A... from B... in argv (options
 * before it, with their values, skipped), or -1.
 */
static int find_separator(int argc, char **argv)
{
	static const char *const valued[] = {
		"-f", "-g", "-n", "-w", "--format", "--group-by", "--weight",
		"--top", "--width", "--redact", "--fail-if-slower", NULL,
	};
	int i;

	for (i = 1; i < argc; i++) {
		const char *const *v;

		if (!strcmp(argv[i], "--"))
			return i;
		for (v = valued; *v; v++)
			if (!strcmp(argv[i], *v))
				break;
		if (*v)
			i++;
	}
	return -1;
}

static int run(int argc, char **argv)
{
	static const struct option long_opts[] = {
		PT_TEXTOPTS_LONG,
		{ "weight", required_argument, NULL, 'W' },
		{ "all", no_argument, NULL, 'A' },
		{ "fail-if-slower", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff d;
	int c, status = 0, i, sep, nargs;

	memset(&d, 0, sizeof d);
	pt_textopts_init(&d.t, "command", 20, "command, exe, package, cwd "
			 "or env:NAME");
	d.d.weight = PT_DIFF_WALL;
	/* Options end at "--"; the captures after it are B. */
	sep = find_separator(argc, argv);
	nargs = sep < 0 ? argc : sep;
	while ((c = getopt_long(nargs, argv, PT_TEXTOPTS_SHORT "h", long_opts,
				NULL)) != -1) {
		switch (pt_textopts_take(&d.t, c, optarg)) {
		case 1:
			continue;
		case -1:
			goto bad;
		}
		switch (c) {
		case 'A':
			d.all = 1;
			break;
		case 'F':
			if (add_gate(&d, optarg) < 0)
				goto bad;
			break;
		case 'W':
			if (!strcmp(optarg, "wall"))
				d.d.weight = PT_DIFF_WALL;
			else if (!strcmp(optarg, "self"))
				d.d.weight = PT_DIFF_SELF;
			else if (!strcmp(optarg, "cpu"))
				d.d.weight = PT_DIFF_CPU;
			else {
				pt_warn("--weight: expected wall, self or cpu, "
					"not '%s'", optarg);
				goto bad;
			}
			d.weight_set = 1;
			break;
		case 'h':
			printf("usage: proftrace diff %s\n\n%s",
			       pt_cmd_diff.usage, help_text);
			pt_textopts_free(&d.t);
			free_gates(&d);
			return 0;
		default:
			goto usage;
		}
	}
	pt_textopts_finish(&d.t);
	d.d.group = d.t.group;
	if (sep >= 0 || d.ngates) {
		/* Several runs a side; or two captures under a gate, which
		 * needs the verdicts (and says it has none). */
		size_t na = (size_t)(nargs - optind), nb;
		char **caps;

		if (sep < 0) {
			if (na != 2)
				goto usage;
			na = 1;
			nb = 1;
		} else {
			nb = (size_t)(argc - sep - 1);
		}
		if (!na || !nb)
			goto usage;
		caps = pt_xcalloc(na + nb, sizeof *caps);
		memcpy(caps, argv + optind, na * sizeof *caps);
		memcpy(caps + na, argv + (sep < 0 ? optind + 1 : sep + 1),
		       nb * sizeof *caps);
		status = run_runs(&d, caps, na, na + nb);
		free(caps);
		pt_textopts_free(&d.t);
		free_gates(&d);
		return status;
	}
	if (argc - optind != 2)
		goto usage;

	for (i = 0; i < 2; i++) {
		int rc;

		rc = pt_diff_load(&d.d, i, argv[optind + i], d.t.red);
		if (rc < 0) {
			if (i)
				pt_analysis_free(&d.d.s[0].a);
			pt_model_free(&d.d.s[0].m);
			if (i)
				pt_model_free(&d.d.s[1].m);
			pt_textopts_free(&d.t);
			return 1;
		}
		if (rc > 0)
			status = 1;
	}
	d.d.top = (size_t)d.t.top;
	pt_diff_compute(&d.d);
	if (d.t.markdown) {
		pt_diff_md_write(&d.d, argv[optind], argv[optind + 1], stdout);
	} else {
		pt_diff_text_write(&d.d, argv[optind], argv[optind + 1],
				   d.t.width, stdout);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pt_warn("writing standard output failed");
		status = 1;
	}
	pt_diff_free(&d.d, 2);
	pt_textopts_free(&d.t);
	return status;

usage:
	pt_textopts_free(&d.t);
	free_gates(&d);
	return pt_cmd_usage(&pt_cmd_diff);
bad:
	pt_textopts_free(&d.t);
	free_gates(&d);
	return 2;
}

const struct pt_cmd pt_cmd_diff = {
	.name = "diff",
	.usage = "[--format text|markdown] "
		 "[--group-by command|exe|package|cwd|env:NAME] "
		 "[--weight wall|self|cpu] [--top N] [--width N] "
		 "[--redact REGEX]... [--all] [--fail-if-slower [KEY=]PCT]... "
		 "A B | A... -- B...",
	.summary = "compare runs: time per command, changes beyond noise "
		   "first",
	.run = run,
};
