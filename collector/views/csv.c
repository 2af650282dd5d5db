/* The CSV exporter; see csv.h. */
#include "views/csv.h"

#include <string.h>

#include "analysis/analysis.h"
#include "views/par.h"
#include "base/quote.h"
#include "base/strbuf.h"

/* About 1 MB of text a chunk (par.h). */
#define ROWS_PER_CHUNK 1024

static void put_u64(struct pt_sb *sb, uint64_t v)
{
	char tmp[24];
	int i = sizeof tmp;

	do
		tmp[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	pt_sb_add(sb, tmp + i, sizeof tmp - (size_t)i);
}

static void put_i64(struct pt_sb *sb, int64_t v)
{
	if (v < 0) {
		pt_sb_addch(sb, '-');
		put_u64(sb, -(uint64_t)v);
	} else {
		put_u64(sb, (uint64_t)v);
	}
}

/* v units of 10^-6 as a decimal with six places: "12.000345". */
static void put_micro(struct pt_sb *sb, int64_t v)
{
	uint64_t u;
	char frac[7];
	int i;

	if (v < 0) {
		pt_sb_addch(sb, '-');
		u = -(uint64_t)v;
	} else {
		u = (uint64_t)v;
	}
	put_u64(sb, u / 1000000);
	for (i = 5, u %= 1000000; i >= 0; i--, u /= 10)
		frac[i] = (char)('0' + u % 10);
	frac[6] = '\0';
	pt_sb_addch(sb, '.');
	pt_sb_add(sb, frac, 6);
}

/* Nanoseconds to microseconds, rounding toward minus infinity. */
static int64_t ns_to_us(int64_t ns)
{
	return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

/* The first of the names set in the execution's environment, else in the
 * capture's metadata (what the recording command's environment said). */
static const char *lookup(const struct pt_model *m, const struct pt_exec *e,
			  const char *a, const char *b)
{
	const char *v = pt_exec_env(e, a);

	if (!v)
		v = pt_exec_env(e, b);
	if (!v)
		v = pt_model_meta(m, e->capture, a);
	if (!v)
		v = pt_model_meta(m, e->capture, b);
	return v ? v : "";
}

static void put_field(struct pt_sb *sb, const char *s)
{
	pt_quote_csv(sb, s);
	pt_sb_addch(sb, ',');
}

/* An empty argv (execve(path, {NULL})) stays empty: shlex.split gives
 * back exactly [] (the summary, for people, names the program: summary.c). */
static void command_of(const struct pt_exec *e, struct pt_sb *cmd)
{
	pt_sb_reset(cmd);
	if (e->argc)
		pt_exec_quote(e, cmd);
}

static void put_row(const struct pt_model *m, const struct pt_exec *e,
		    struct pt_sb *sb, struct pt_sb *cmd)
{
	const char *name = pt_exec_env(e, "OPAM_PACKAGE_NAME");
	const char *version = pt_exec_env(e, "OPAM_PACKAGE_VERSION");

	put_field(sb, lookup(m, e, "CI_PIPELINE_ID", "GITHUB_RUN_ID"));
	put_field(sb, lookup(m, e, "CI_JOB_ID", "GITHUB_JOB"));
	put_field(sb, lookup(m, e, "CI_JOB_NAME", "GITHUB_JOB"));
	pt_sb_addstr(sb, e->type == PT_EXEC_FORK ? "fork," : "exec,");
	command_of(e, cmd);
	put_field(sb, cmd->buf);
	put_micro(sb, ns_to_us(e->start_ns));
	pt_sb_addch(sb, ',');
	put_micro(sb, e->end_ns > e->start_ns ?
		      ns_to_us(e->end_ns) - ns_to_us(e->start_ns) : 0);
	pt_sb_addch(sb, ',');
	put_i64(sb, e->pid);
	pt_sb_addch(sb, ',');
	put_i64(sb, e->ppid);
	pt_sb_addch(sb, ',');
	if (e->exit_code >= 0)
		put_i64(sb, e->exit_code);
	pt_sb_addch(sb, ',');
	if (e->signal > 0)
		put_i64(sb, e->signal);
	pt_sb_addch(sb, ',');
	if (e->utime_us >= 0)
		put_micro(sb, e->utime_us);
	pt_sb_addch(sb, ',');
	if (e->stime_us >= 0)
		put_micro(sb, e->stime_us);
	pt_sb_addch(sb, ',');
	if (e->maxrss_kb >= 0)
		put_i64(sb, e->maxrss_kb);
	pt_sb_addch(sb, ',');
	put_field(sb, e->cwd);
	put_field(sb, e->exe);
	if (name && *name) {
		pt_sb_reset(cmd);
		pt_sb_addstr(cmd, name);
		if (version && *version) {
			pt_sb_addch(cmd, '.');
			pt_sb_addstr(cmd, version);
		}
		pt_quote_csv(sb, cmd->buf);
	}
	pt_sb_addstr(sb, e->flags & PT_EXF_END_UNKNOWN ? ",1\n" : ",\n");
}

static int flush(struct pt_sb *sb, FILE *f)
{
	int rc = 0;

	if (sb->len && fwrite(sb->buf, 1, sb->len, f) != sb->len)
		rc = -1;
	pt_sb_reset(sb);
	return rc;
}

struct csv_job {
	const struct pt_model *m;
	FILE *f;
};

static void csv_rows(void *arg, size_t lo, size_t hi, struct pt_sb *sb)
{
	const struct csv_job *j = arg;
	struct pt_sb cmd = PT_SB_INIT;

	for (; lo < hi; lo++)
		put_row(j->m, j->m->execs[lo], sb, &cmd);
	pt_sb_release(&cmd);
}

static int csv_emit(void *arg, struct pt_sb *sb)
{
	return flush(sb, ((const struct csv_job *)arg)->f);
}

int pt_csv_write(const struct pt_model *m, FILE *f)
{
	struct pt_sb sb = PT_SB_INIT;
	struct csv_job job = { m, f };
	int rc;

	pt_sb_addstr(&sb, PT_CSV_HEADER "\n");
	rc = flush(&sb, f);
	if (rc == 0)
		rc = pt_par_format(m->n, ROWS_PER_CHUNK, csv_rows, csv_emit, &job);
	if (fflush(f) != 0 || ferror(f))
		rc = -1;
	pt_sb_release(&sb);
	return rc;
}
