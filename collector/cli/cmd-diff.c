/*
 * proftrace diff: compare two runs.  Executions are matched by a key
 * (default: the normalized command line, pt_exec_key), their times summed
 * per key in each run, and the keys listed by the size of the change, then
 * those seen in one run only.  doc/proftrace-diff.1.md is the manual.
 *
 * Exit status: 0; 1 if an input was damaged or unreadable; 2 for bad usage.
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
#include "views/redact.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "views/diff-md.h"

#define MIN_WIDTH 60

struct diff {
	struct pt_diff d;               /* the figures */
	struct pt_textopts o;
	struct pt_sb line;
};

static const char help_text[] =
	"Compare two runs: the time of each command (matched across runs by\n"
	"program and arguments, with absolute paths cut to their last part\n"
	"and temporary file names ignored) in A and in B, largest change\n"
	"first, then what ran in only one of them.\n\n"
	"  -f, --format F      text (default) or markdown (GitHub-flavoured)\n"
	"  -g, --group-by KEY  match by command (default), exe, package, cwd\n"
	"                      or env:NAME\n"
	"  --weight W          wall (default: wall time), self (wall time not\n"
	"                      spent waiting for children) or cpu\n"
	"  -n, --top N         lines per table (default 20)\n"
	PT_TEXTOPTS_HELP_TAIL
	"The full page: man proftrace-diff (proftrace-diff(1)).\n";

/* Print the line cut to the width (UTF-8 characters), control chars as ?. */
static void emit(struct diff *d)
{
	struct pt_sb *l = &d->line;
	size_t i, cols = 0;

	for (i = 0; i < l->len; i++) {
		unsigned char c = (unsigned char)l->buf[i];

		if ((c & 0xc0) == 0x80)
			continue;
		if (cols == (size_t)d->o.width)
			break;
		if (c < 0x20 || c == 0x7f)
			l->buf[i] = '?';
		cols++;
	}
	while (i > 0 && l->buf[i - 1] == ' ')
		i--;
	fwrite(l->buf, 1, i, stdout);
	fputc('\n', stdout);
	pt_sb_reset(l);
}

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

static void summary(struct diff *d, const char *pa, const char *pb)
{
	const struct pt_diff_side *a = &d->d.s[0], *b = &d->d.s[1];
	int64_t wa = a->a.t1 - a->a.t0, wb = b->a.t1 - b->a.t0;

	pt_sb_addf(&d->line, "proftrace diff: A = %s, B = %s", pa, pb);
	emit(d);
	fputc('\n', stdout);
	pt_sb_addf(&d->line, "  %-12s %12s %12s %12s", "", "A", "B", "B - A");
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12.3f %12.3f %+12.3f", "wall s",
		   secs(wa), secs(wb), secs(wb - wa));
	if (wa > 0)
		pt_sb_addf(&d->line, "  (%+.1f%%)",
			   100.0 * (double)(wb - wa) / (double)wa);
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12.3f %12.3f %+12.3f", "cpu s",
		   (double)a->cpu_us / 1e6, (double)b->cpu_us / 1e6,
		   (double)(b->cpu_us - a->cpu_us) / 1e6);
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12zu %12zu %+12lld", "executions",
		   a->m.n, b->m.n, (long long)b->m.n - (long long)a->m.n);
	emit(d);
	pt_sb_addf(&d->line, "  %-12s %12zu %12zu %+12lld", "failed",
		   a->failed, b->failed,
		   (long long)b->failed - (long long)a->failed);
	emit(d);
}

static void changes(struct diff *d)
{
	const struct pt_diff *f = &d->d;
	size_t i;

	printf("\nLargest changes in %s, per %s seen in both runs "
	       "(%zu of them)\n", pt_diff_weight_name(f->weight),
	       pt_group_name(&f->group), f->nboth);
	pt_sb_addf(&d->line, "  %10s %10s %10s %7s %6s %6s  %s", "A s", "B s",
		   "B - A s", "change", "n A", "n B", pt_group_name(&f->group));
	emit(d);
	for (i = 0; i < f->nchanged; i++) {
		const struct pt_diff_row *r = &f->both[i];

		pt_sb_addf(&d->line, "  %10.3f %10.3f %+10.3f ", secs(r->t[0]),
			   secs(r->t[1]), secs(r->t[1] - r->t[0]));
		if (r->t[0] > 0)
			pt_sb_addf(&d->line, "%+6.0f%%", 100.0 *
				   (double)(r->t[1] - r->t[0]) /
				   (double)r->t[0]);
		else
			pt_sb_addf(&d->line, "%7s", "new");
		pt_sb_addf(&d->line, " %6zu %6zu  %s", r->n[0], r->n[1],
			   pt_strtab_str(&f->keys, r->id));
		emit(d);
	}
	if (f->nboth > f->nchanged) {
		pt_sb_addf(&d->line, "  ... %zu more", f->nboth - f->nchanged);
		emit(d);
	}
}

static void only(struct diff *d, int side)
{
	const struct pt_diff *f = &d->d;
	const struct pt_diff_row *rows = f->only[side];
	size_t i, n = f->nonly[side];

	printf("\nOnly in %c: %zu %s%s, %zu execution%s, %.3f s of %s\n",
	       side ? 'B' : 'A', n, pt_group_name(&f->group), n == 1 ? "" : "s",
	       f->only_runs[side], f->only_runs[side] == 1 ? "" : "s",
	       secs(f->only_total[side]), pt_diff_weight_name(f->weight));
	for (i = 0; i < n && i < (size_t)d->o.top; i++) {
		pt_sb_addf(&d->line, "  %10.3f %6zu  %s", secs(rows[i].t[side]),
			   rows[i].n[side],
			   pt_strtab_str(&f->keys, rows[i].id));
		emit(d);
	}
	if (n > (size_t)d->o.top) {
		pt_sb_addf(&d->line, "  ... %zu more", n - (size_t)d->o.top);
		emit(d);
	}
}

static int run(int argc, char **argv)
{
	static const struct option long_opts[] = {
		PT_TEXTOPTS_LONG,
		{ "weight", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff d;
	int c, status = 0, i, taken;

	memset(&d, 0, sizeof d);
	pt_textopts_init(&d.o, "command", 1, 20);
	d.d.weight = PT_DIFF_WALL;
	while ((c = getopt_long(argc, argv, PT_TEXTOPTS_SHORT "h", long_opts,
				NULL)) != -1) {
		if ((taken = pt_textopts_take(&d.o, c, optarg)) == -1)
			goto bad;
		if (taken == -2)
			goto usage;
		if (taken)
			continue;
		switch (c) {
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
			break;
		case 'h':
			printf("usage: proftrace diff %s\n\n%s",
			       pt_cmd_diff.usage, help_text);
			pt_textopts_free(&d.o);
			return 0;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	pt_textopts_finish(&d.o, MIN_WIDTH);
	d.d.group = d.o.group;

	for (i = 0; i < 2; i++) {
		int rc;

		rc = pt_diff_load(&d.d, i, argv[optind + i], d.o.redact);
		if (rc < 0) {
			if (i)
				pt_analysis_free(&d.d.s[0].a);
			pt_model_free(&d.d.s[0].m);
			if (i)
				pt_model_free(&d.d.s[1].m);
			pt_textopts_free(&d.o);
			return 1;
		}
		if (rc > 0)
			status = 1;
	}
	pt_sb_init(&d.line);
	d.d.top = (size_t)d.o.top;
	pt_diff_compute(&d.d);
	if (d.o.markdown) {
		pt_diff_md_write(&d.d, argv[optind], argv[optind + 1], stdout);
	} else {
		summary(&d, argv[optind], argv[optind + 1]);
		changes(&d);
		only(&d, 0);
		only(&d, 1);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pt_warn("writing standard output failed");
		status = 1;
	}
	pt_diff_free(&d.d, 2);
	pt_sb_release(&d.line);
	pt_textopts_free(&d.o);
	return status;

usage:
	pt_textopts_free(&d.o);
	return pt_cmd_usage(&pt_cmd_diff);
bad:
	pt_textopts_free(&d.o);
	return 2;
}

const struct pt_cmd pt_cmd_diff = {
	.name = "diff",
	.usage = "[--format text|markdown] "
		 "[--group-by command|exe|package|cwd|env:NAME] "
		 "[--weight wall|self|cpu] [--top N] [--width N] "
		 "[--redact REGEX]... A B",
	.summary = "compare two runs: time per command, largest change first",
	.run = run,
};
