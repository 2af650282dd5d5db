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
#include "cli/cmd.h"
#include "model/load.h"
#include "model/model.h"
#include "views/redact.h"
#include "base/strbuf.h"
#include "base/util.h"

#define MIN_WIDTH 60

enum weight { W_WALL, W_SELF, W_CPU };

struct side {
	struct pt_model m;
	struct pt_analysis a;
	int64_t cpu_us;
	size_t failed;
};

struct row {
	int64_t t[2];                   /* ns of the chosen weight, A and B */
	size_t n[2];
	uint32_t id;
};

struct diff {
	struct side s[2];
	struct pt_redact *red;
	struct pt_group_by group;
	enum weight weight;
	int top, width;
	struct pt_strtab keys;
	struct row *rows;
	size_t nrows;
	struct pt_sb line;
};

static const char help_text[] =
	"Compare two runs: the time of each command (matched across runs by\n"
	"program and arguments, with absolute paths cut to their last part\n"
	"and temporary file names ignored) in A and in B, largest change\n"
	"first, then what ran in only one of them.\n\n"
	"  -g, --group-by KEY  match by command (default), exe, package, cwd\n"
	"                      or env:NAME\n"
	"  --weight W          wall (default: wall time), self (wall time not\n"
	"                      spent waiting for children) or cpu\n"
	"  -n, --top N         lines per table (default 20)\n"
	"  -w, --width N       line width (default: the terminal's, else\n"
	"                      $COLUMNS, else 100)\n"
	"  --redact REGEX      replace what REGEX (POSIX extended) matches in\n"
	"                      any argument by *** (may be repeated)\n"
	"  -h, --help          show this help\n\n"
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
		if (cols == (size_t)d->width)
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

static int64_t weigh(const struct side *s, const struct pt_exec *e,
		     enum weight w)
{
	switch (w) {
	case W_WALL:
		return e->end_ns - e->start_ns;
	case W_SELF:
		return s->a.self_ns[e->id];
	case W_CPU:
		return pt_exec_cpu_us(e) * 1000;
	}
	return 0;
}

static int load(struct side *s, const char *path, struct pt_redact *red)
{
	char *paths[] = { (char *)path };
	int rc = pt_model_load(&s->m, paths, 1, red);
	size_t i;

	if (rc < 0)
		return -1;
	pt_analyze_tree(&s->a, &s->m);
	for (i = 0; i < s->m.n; i++) {
		const struct pt_exec *e = s->m.execs[i];

		s->cpu_us += pt_exec_cpu_us(e);
		if (e->exit_code > 0 || e->signal > 0)
			s->failed++;
	}
	return rc;
}

static void tally(struct diff *d)
{
	struct pt_sb key = PT_SB_INIT;
	size_t side, i, cap = 0;

	for (side = 0; side < 2; side++) {
		const struct side *s = &d->s[side];

		for (i = 0; i < s->m.n; i++) {
			const struct pt_exec *e = s->m.execs[i];
			uint32_t id;
			int added;

			pt_sb_reset(&key);
			pt_group_key(&d->group, e, &key);
			id = pt_strtab_intern(&d->keys, key.buf, key.len,
					      &added);
			if (added) {
				if (d->nrows == cap) {
					cap = cap ? 2 * cap : 256;
					d->rows = pt_xrealloc(d->rows, cap *
							      sizeof *d->rows);
				}
				memset(&d->rows[id], 0, sizeof d->rows[id]);
				d->rows[id].id = id;
				d->nrows++;
			}
			d->rows[id].t[side] += weigh(s, e, d->weight);
			d->rows[id].n[side]++;
		}
	}
	pt_sb_release(&key);
}

static int64_t absdelta(const struct row *r)
{
	int64_t v = r->t[1] - r->t[0];

	return v < 0 ? -v : v;
}

static int cmp_delta(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int64_t da = absdelta(a), db = absdelta(b);

	if (da != db)
		return da > db ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_a(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->t[0] != b->t[0])
		return a->t[0] > b->t[0] ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_b(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->t[1] != b->t[1])
		return a->t[1] > b->t[1] ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void summary(struct diff *d, const char *pa, const char *pb)
{
	const struct side *a = &d->s[0], *b = &d->s[1];
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

static const char *weight_name(enum weight w)
{
	return w == W_WALL ? "wall time" :
	       w == W_SELF ? "self time" : "CPU time";
}

static void changes(struct diff *d)
{
	size_t i, n = 0, shown = 0;
	struct row *both = pt_xcalloc(d->nrows ? d->nrows : 1, sizeof *both);

	for (i = 0; i < d->nrows; i++)
		if (d->rows[i].n[0] && d->rows[i].n[1])
			both[n++] = d->rows[i];
	qsort(both, n, sizeof *both, cmp_delta);
	printf("\nLargest changes in %s, per %s seen in both runs "
	       "(%zu of them)\n", weight_name(d->weight),
	       pt_group_name(&d->group), n);
	pt_sb_addf(&d->line, "  %10s %10s %10s %7s %6s %6s  %s", "A s", "B s",
		   "B - A s", "change", "n A", "n B", pt_group_name(&d->group));
	emit(d);
	for (i = 0; i < n && shown < (size_t)d->top; i++) {
		const struct row *r = &both[i];

		if (!absdelta(r) && shown)
			break;
		pt_sb_addf(&d->line, "  %10.3f %10.3f %+10.3f ", secs(r->t[0]),
			   secs(r->t[1]), secs(r->t[1] - r->t[0]));
		if (r->t[0] > 0)
			pt_sb_addf(&d->line, "%+6.0f%%", 100.0 *
				   (double)(r->t[1] - r->t[0]) /
				   (double)r->t[0]);
		else
			pt_sb_addf(&d->line, "%7s", "new");
		pt_sb_addf(&d->line, " %6zu %6zu  %s", r->n[0], r->n[1],
			   pt_strtab_str(&d->keys, r->id));
		emit(d);
		shown++;
	}
	if (n > shown) {
		pt_sb_addf(&d->line, "  ... %zu more", n - shown);
		emit(d);
	}
	free(both);
}

static void only(struct diff *d, int side)
{
	size_t i, n = 0, runs = 0;
	int64_t total = 0;
	struct row *rows = pt_xcalloc(d->nrows ? d->nrows : 1, sizeof *rows);

	for (i = 0; i < d->nrows; i++)
		if (d->rows[i].n[side] && !d->rows[i].n[!side]) {
			rows[n++] = d->rows[i];
			total += d->rows[i].t[side];
			runs += d->rows[i].n[side];
		}
	qsort(rows, n, sizeof *rows, side ? cmp_b : cmp_a);
	printf("\nOnly in %c: %zu %s%s, %zu execution%s, %.3f s of %s\n",
	       side ? 'B' : 'A', n, pt_group_name(&d->group), n == 1 ? "" : "s",
	       runs, runs == 1 ? "" : "s", secs(total), weight_name(d->weight));
	for (i = 0; i < n && i < (size_t)d->top; i++) {
		pt_sb_addf(&d->line, "  %10.3f %6zu  %s", secs(rows[i].t[side]),
			   rows[i].n[side],
			   pt_strtab_str(&d->keys, rows[i].id));
		emit(d);
	}
	if (n > (size_t)d->top) {
		pt_sb_addf(&d->line, "  ... %zu more", n - (size_t)d->top);
		emit(d);
	}
	free(rows);
}

static int parse_int(const char *s, int min, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > 100000)
		return -1;
	*out = (int)v;
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "group-by", required_argument, NULL, 'g' },
		{ "weight", required_argument, NULL, 'W' },
		{ "top", required_argument, NULL, 'n' },
		{ "width", required_argument, NULL, 'w' },
		{ "redact", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff d;
	int c, status = 0, i;

	memset(&d, 0, sizeof d);
	pt_group_parse("command", 1, &d.group);
	d.weight = W_WALL;
	d.top = 20;
	d.red = pt_redact_new();
	while ((c = getopt_long(argc, argv, "g:n:w:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'R':
			if (pt_redact_add(d.red, optarg) < 0)
				goto bad;
			break;
		case 'g':
			if (pt_group_parse(optarg, 1, &d.group) < 0) {
				pt_warn("--group-by: expected command, exe, "
					"package, cwd or env:NAME, not '%s'",
					optarg);
				goto bad;
			}
			break;
		case 'W':
			if (!strcmp(optarg, "wall"))
				d.weight = W_WALL;
			else if (!strcmp(optarg, "self"))
				d.weight = W_SELF;
			else if (!strcmp(optarg, "cpu"))
				d.weight = W_CPU;
			else {
				pt_warn("--weight: expected wall, self or cpu, "
					"not '%s'", optarg);
				goto bad;
			}
			break;
		case 'n':
			if (parse_int(optarg, 1, &d.top) < 0)
				goto usage;
			break;
		case 'w':
			if (parse_int(optarg, 1, &d.width) < 0)
				goto usage;
			break;
		case 'h':
			printf("usage: proftrace diff %s\n\n%s",
			       pt_cmd_diff.usage, help_text);
			pt_redact_free(d.red);
			return 0;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	if (!d.width)
		d.width = pt_term_width();
	if (d.width < MIN_WIDTH)
		d.width = MIN_WIDTH;

	for (i = 0; i < 2; i++) {
		int rc;

		rc = load(&d.s[i], argv[optind + i], d.red);
		if (rc < 0) {
			if (i)
				pt_analysis_free(&d.s[0].a);
			pt_model_free(&d.s[0].m);
			if (i)
				pt_model_free(&d.s[1].m);
			pt_redact_free(d.red);
			return 1;
		}
		if (rc > 0)
			status = 1;
	}
	pt_strtab_init(&d.keys);
	pt_sb_init(&d.line);
	tally(&d);
	summary(&d, argv[optind], argv[optind + 1]);
	changes(&d);
	only(&d, 0);
	only(&d, 1);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pt_warn("writing standard output failed");
		status = 1;
	}
	for (i = 0; i < 2; i++) {
		pt_analysis_free(&d.s[i].a);
		pt_model_free(&d.s[i].m);
	}
	free(d.rows);
	pt_strtab_free(&d.keys);
	pt_sb_release(&d.line);
	pt_redact_free(d.red);
	return status;

usage:
	pt_redact_free(d.red);
	return pt_cmd_usage(&pt_cmd_diff);
bad:
	pt_redact_free(d.red);
	return 2;
}

const struct pt_cmd pt_cmd_diff = {
	.name = "diff",
	.usage = "[--group-by command|exe|package|cwd|env:NAME] "
		 "[--weight wall|self|cpu] [--top N] [--width N] "
		 "[--redact REGEX]... A B",
	.summary = "compare two runs: time per command, largest change first",
	.run = run,
};
