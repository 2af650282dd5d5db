/*
 * The HTML report's data; see html-data.h.
 *
 * The body is a sequence of lines, each one JSON value, so that it can be
 * written (and compressed) as it is made, a chunk of executions at a
 * time, with no copy of the whole run in memory:
 *
 *   {"A":[arguments first used by the chunk]}
 *   {"S":[strings first used by this chunk: labels, names, paths],
 *    "V":[[argument ids of each command line first used here]...],
 *    "c":[[column 0 of this chunk's executions], [column 1], ...]}
 *   ... two lines per CHUNK executions ...
 *   {"U":{"S":[strings first used by them],"c":{columns}, ...}}
 *                                     events programs wrote about
 *                                     themselves (html-subs.h), if any
 *   {"cp":..., "levels":..., ...}     the analyses, last
 *
 * Strings and command lines are numbered in the order they first appear,
 * so the page appends each line's S and V to its tables.  Times are
 * microseconds from the run's earliest start (the analyses', which the
 * page prints as `proftrace report` does, nanoseconds); the enum below
 * says what each column holds.
 */
#include "views/html-data.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/deps.h"
#include "analysis/report.h"
#include "analysis/whatif.h"
#include "base/util.h"
#include "base/quote.h"
#include "base/utf8.h"
#include "views/deps-out.h"
#include "views/html-subs.h"

#define CHUNK 65536             /* executions per line of the body */
#define FLUSH_AT (1u << 20)     /* bytes held before the sink takes them */
#define PAR_BUCKETS 2000        /* points of the parallelism profile */
#define ARGV_BUDGET (96u << 20) /* bytes of command lines in a page */

/* The columns, in this order (report.js reads them by these names). */
enum {
	C_START,        /* start, less the previous execution's start */
	C_DUR,          /* end - start */
	C_PARENT,       /* index less the parent's index; 0 for a root */
	C_PID,          /* less the previous execution's pid */
	C_PPID,         /* less the parent's pid; as it is for a root */
	C_EXIT,         /* exit code, -1 unknown */
	C_SIG,          /* signal, 0 none, -1 unknown */
	C_FLAGS,        /* enum pt_exec_flag, | 32 for a fork child */
	C_UTIME, C_STIME,       /* CPU, -1 unknown */
	C_RSS,          /* peak RSS in KiB, -1 unknown */
	C_SELF,         /* own time: not waiting for a child */
	C_LABEL, C_PROG, C_PKG, C_CWD, C_EXE,   /* string ids, -1 none */
	C_ARGV,         /* command line: see argv_col() */
	C_CAPTURE,
	NCOLS
};

static const char *const col_names[NCOLS] = {
	"start", "dur", "parent", "pid", "ppid", "exit", "sig", "flags",
	"utime", "stime", "rss", "self", "label", "prog", "pkg", "cwd", "exe",
	"argv", "capture",
};

#define FORK_FLAG 32

/* ---- JSON ---- */

/* Every string of the page's data: one that can sit inside its <script>
 * element, so that no byte sequence of a command line can end the
 * element or the string. */
static void json_cstr(struct pt_sb *sb, const char *s)
{
	pt_quote_json(sb, s, strlen(s), PT_JSON_SCRIPT);
}

static void num(struct pt_sb *sb, int64_t v)
{
	pt_sb_add_i64(sb, v);
}

/* "key": at the start of an object (first) or after a comma. */
static void key(struct pt_sb *sb, const char *k, int first)
{
	if (!first)
		pt_sb_addch(sb, ',');
	json_cstr(sb, k);
	pt_sb_addch(sb, ':');
}

/* Microseconds from t0, rounding down, so that an execution's end
 * (start + duration) is where its successor on a row may start. */
static int64_t rel_us(int64_t ns, int64_t t0)
{
	int64_t d = ns - t0;

	return d >= 0 ? d / 1000 : -((-d + 999) / 1000);
}

/* ---- the head ---- */

static const char *const meta_keys[] = {
	"file", "host", "kernel", "cpus", "cpu_model", "mem_total_kb",
	"glibc_version", "proftrace_version", "command", "cwd", "git_commit",
};

static const char *const ci_keys[] = {
	"CI_PIPELINE_ID", "CI_JOB_ID", "CI_JOB_NAME", "GITHUB_RUN_ID",
	"GITHUB_JOB",
};

static void head_capture(const struct pt_report *r, size_t c,
			 struct pt_sb *sb)
{
	const struct pt_model *m = r->m;
	const struct pt_report_capture *cap = &r->caps[c];
	size_t i;
	int first = 1;

	pt_sb_addch(sb, '{');
	for (i = 0; i < sizeof meta_keys / sizeof *meta_keys; i++) {
		const char *v = pt_model_meta(m, c, meta_keys[i]);

		if (!v)
			continue;
		key(sb, meta_keys[i], first);
		json_cstr(sb, v);
		first = 0;
	}
	key(sb, "ci", first);
	pt_sb_addch(sb, '{');
	first = 1;
	for (i = 0; i < sizeof ci_keys / sizeof *ci_keys; i++) {
		const char *v = pt_model_meta(m, c, ci_keys[i]);

		if (!v)
			continue;
		key(sb, ci_keys[i], first);
		json_cstr(sb, v);
		first = 0;
	}
	pt_sb_addch(sb, '}');
	key(sb, "n", 0);
	num(sb, (int64_t)cap->count);
	if (cap->count) {
		key(sb, "start", 0);
		num(sb, rel_us(cap->first, r->a.t0));
		key(sb, "end", 0);
		num(sb, rel_us(cap->last, r->a.t0));
		key(sb, "startIso", 0);
		pt_sb_addch(sb, '"');
		pt_sb_add_iso8601(sb, cap->first);
		pt_sb_addch(sb, '"');
	}
	pt_sb_addch(sb, '}');
}

/*
 * "deps": what the same jobs could have taken (analysis/deps.h), for a
 * capture recorded with --files: the ideal times, [cpus or null, us];
 * the jobs as list scheduling places them on this machine's CPUs,
 * [execution, cpu, start us, end us, on the critical path], from the
 * run's start; labels, {execution: its job's target}; the races, [path,
 * writer, reader (executions), fix]; the serializations, [gain us,
 * first, then (executions), where declared].
 */
static void head_deps(const struct pt_report *r, struct pt_sb *sb)
{
	const struct pt_model *m = r->m;
	struct pt_deps d;
	const char *why;
	int64_t off;
	size_t i, k;

	if (m->ncaptures != 1 || !pt_model_files_count(m, NULL) ||
	    pt_deps_build(m, &d, 0, &why) < 0)
		return;
	{
		const struct pt_exec *root = d.driver;

		while (root->parent)
			root = root->parent;
		off = root->start_ns - r->a.t0;
	}
	key(sb, "deps", 0);
	pt_sb_addstr(sb, "{\"cpus\":");
	num(sb, d.sched_cpus);
	key(sb, "now", 0);
	num(sb, (d.wall_ns + 500) / 1000);
	key(sb, "span", 0);
	num(sb, (d.sched_span_ns + 500) / 1000);
	key(sb, "ideal", 0);
	pt_sb_addch(sb, '[');
	for (i = 0; i < d.nideal; i++) {
		pt_sb_addstr(sb, i ? ",[" : "[");
		if (d.ideal[i].cpus)
			num(sb, d.ideal[i].cpus);
		else
			pt_sb_addstr(sb, "null");
		pt_sb_addch(sb, ',');
		num(sb, (d.ideal[i].wall_ns + 500) / 1000);
		pt_sb_addch(sb, ']');
	}
	pt_sb_addch(sb, ']');
	key(sb, "jobs", 0);
	pt_sb_addch(sb, '[');
	for (i = 0, k = 0; i < d.njobs; i++) {
		size_t s;

		/* a job that holds a tool: its jobs are drawn */
		for (s = 1; s < d.nscopes; s++)
			if (d.scope[s].parent_job == i)
				break;
		if (s < d.nscopes)
			continue;
		pt_sb_addstr(sb, k++ ? ",[" : "[");
		num(sb, d.job[i].e->id);
		pt_sb_addch(sb, ',');
		num(sb, d.sched[i].cpu);
		pt_sb_addch(sb, ',');
		num(sb, (off + d.sched[i].start_ns + 500) / 1000);
		pt_sb_addch(sb, ',');
		num(sb, (off + d.sched[i].end_ns + 500) / 1000);
		pt_sb_addstr(sb, d.sched[i].critical ? ",1]" : ",0]");
	}
	pt_sb_addch(sb, ']');
	/* each job's label (its target where known), by execution */
	key(sb, "labels", 0);
	pt_sb_addch(sb, '{');
	for (i = 0, k = 0; i < d.njobs; i++) {
		struct pt_sb l = PT_SB_INIT;

		if (!d.job[i].target)
			continue;
		pt_deps_label(&d, i, &l);
		pt_sb_addstr(sb, k++ ? ",\"" : "\"");
		num(sb, d.job[i].e->id);
		pt_sb_addstr(sb, "\":");
		pt_quote_json(sb, l.buf, l.len, PT_JSON_SCRIPT);
		pt_sb_release(&l);
	}
	pt_sb_addch(sb, '}');
	key(sb, "races", 0);
	pt_sb_addch(sb, '[');
	for (i = 0; i < d.nrace; i++) {
		pt_sb_addstr(sb, i ? ",[" : "[");
		json_cstr(sb, d.race[i].path);
		pt_sb_addch(sb, ',');
		num(sb, d.job[d.race[i].writer].e->id);
		pt_sb_addch(sb, ',');
		num(sb, d.job[d.race[i].reader].e->id);
		pt_sb_addch(sb, ',');
		json_cstr(sb, d.race[i].fix);
		pt_sb_addch(sb, ']');
	}
	pt_sb_addch(sb, ']');
	key(sb, "sers", 0);
	pt_sb_addch(sb, '[');
	for (i = 0; i < d.nser; i++) {
		pt_sb_addstr(sb, i ? ",[" : "[");
		num(sb, (d.ser[i].gain_ns + 500) / 1000);
		pt_sb_addch(sb, ',');
		num(sb, d.job[d.ser[i].first].e->id);
		pt_sb_addch(sb, ',');
		num(sb, d.job[d.ser[i].then].e->id);
		pt_sb_addch(sb, ',');
		json_cstr(sb, d.ser[i].why);
		pt_sb_addch(sb, ']');
	}
	pt_sb_addch(sb, ']');
	/* what whatif says would save most */
	key(sb, "hints", 0);
	pt_sb_addch(sb, '[');
	{
		struct pt_whatif_hint h[3];
		int64_t now, spread;
		size_t n = pt_whatif_hints(&d, m, h, 3, &now, &spread);

		for (i = 0; i < n; i++) {
			pt_sb_addstr(sb, i ? ",[" : "[");
			json_cstr(sb, h[i].change);
			pt_sb_addch(sb, ',');
			json_cstr(sb, h[i].why);
			pt_sb_addch(sb, ',');
			num(sb, (h[i].predicted_ns + 500) / 1000);
			pt_sb_addch(sb, ',');
			num(sb, (h[i].saving_ns + 500) / 1000);
			pt_sb_addstr(sb, h[i].saving_ns < spread ? ",1]" : ",0]");
		}
		pt_whatif_hints_free(h, n);
	}
	pt_sb_addstr(sb, "]}");
	pt_deps_free(&d);
}

void pt_html_head(const struct pt_report *r, struct pt_sb *sb)
{
	const struct pt_model *m = r->m;
	size_t c, unfinished = 0, i;

	for (i = 0; i < m->n; i++)
		if (m->execs[i]->flags & PT_EXF_END_UNKNOWN)
			unfinished++;
	pt_sb_addstr(sb, "{\"format\":1,\"n\":");
	num(sb, (int64_t)m->n);
	key(sb, "captures", 0);
	pt_sb_addch(sb, '[');
	for (c = 0; c < m->ncaptures; c++) {
		if (c)
			pt_sb_addch(sb, ',');
		head_capture(r, c, sb);
	}
	pt_sb_addch(sb, ']');
	if (m->n) {
		key(sb, "startIso", 0);
		pt_sb_addch(sb, '"');
		pt_sb_add_iso8601(sb, r->a.t0);
		pt_sb_addch(sb, '"');
		key(sb, "startMs", 0);
		num(sb, r->a.t0 / 1000000);
	}
	key(sb, "wall", 0);
	num(sb, (r->wall + 500) / 1000);
	key(sb, "failed", 0);
	num(sb, (int64_t)r->failed);
	key(sb, "killed", 0);
	num(sb, (int64_t)r->killed);
	key(sb, "untraced", 0);
	num(sb, (int64_t)r->untraced);
	key(sb, "unfinished", 0);
	num(sb, (int64_t)unfinished);
	key(sb, "nocpu", 0);
	num(sb, (int64_t)r->nocpu);
	key(sb, "user", 0);
	num(sb, r->user_us);
	key(sb, "sys", 0);
	num(sb, r->sys_us);
	key(sb, "average", 0);
	pt_sb_addf(sb, "%.2f", r->a.average);
	key(sb, "peak", 0);
	num(sb, r->a.peak);
	key(sb, "damaged", 0);
	pt_sb_addstr(sb, m->damaged ? "true" : "false");
	key(sb, "lostFrames", 0);
	num(sb, (int64_t)m->lost_frames);
	key(sb, "badFrames", 0);
	num(sb, (int64_t)m->bad_frames);
	head_deps(r, sb);
	pt_sb_addch(sb, '}');
}

/* ---- the body: executions ---- */

/* A string table of the page: strings numbered as they first appear. */
struct stab {
	struct pt_sb news;              /* this chunk's new strings, as JSON */
	struct pt_strtab strs;          /* content -> id */
	struct pt_strtab refs;          /* the model's key of a string (an
					 * argument's id, an interned path's
					 * address) -> index in ref_id */
	uint32_t *ref_id;               /* -> id */
	size_t nref_alloc;
};

struct body {
	const struct pt_report *r;
	struct pt_sb *out;
	pt_html_sink_fn *sink;
	void *arg;
	struct pt_sb col[NCOLS];
	struct stab s;                  /* labels, names, paths */
	struct stab a;                  /* arguments */
	struct pt_sb newv;              /* this chunk's new command lines */
	struct pt_strtab vecs;          /* command line -> its id */
	uint8_t *keep_argv;             /* per execution: its command line
					 * goes in the page */
	int32_t prev_pid;
	struct pt_sb tmp;
};

static void stab_init(struct stab *t)
{
	memset(t, 0, sizeof *t);
	pt_sb_init(&t->news);
	pt_strtab_init(&t->strs);
	pt_strtab_init(&t->refs);
}

static void stab_free(struct stab *t)
{
	pt_sb_release(&t->news);
	pt_strtab_free(&t->strs);
	pt_strtab_free(&t->refs);
	free(t->ref_id);
}

/* Id of a string known by its content (labels, packages); *added says
 * whether it is new (it is then the next id). */
static uint32_t str_by_content(struct stab *t, const char *s, size_t len,
			       int *added)
{
	int add;
	uint32_t id = pt_strtab_intern(&t->strs, s, len, &add);

	if (add) {
		if (t->news.len)
			pt_sb_addch(&t->news, ',');
		pt_quote_json(&t->news, s, len, PT_JSON_SCRIPT);
	}
	if (added)
		*added = add;
	return id;
}

/*
 * Id of a string the model knows by a key of its own: its bytes are
 * hashed only the first time the key is seen.
 */
static uint32_t str_by_ref(struct stab *t, const void *ref, size_t reflen,
			   const char *s, int *added)
{
	int add;
	uint32_t i = pt_strtab_intern(&t->refs, ref, reflen, &add);

	if (added)
		*added = 0;
	if (add) {
		if (i >= t->nref_alloc) {
			t->nref_alloc = t->nref_alloc ? 2 * t->nref_alloc
						      : 1024;
			t->ref_id = pt_xrealloc(t->ref_id, t->nref_alloc *
						sizeof *t->ref_id);
		}
		t->ref_id[i] = str_by_content(t, s, strlen(s), added);
	}
	return t->ref_id[i];
}

/* A command line's key: the model shares the vector of equal ones. */
struct vec_key {
	const void *vec;
	size_t argc;
};

static struct vec_key vec_key(const struct pt_exec *e)
{
	struct vec_key k;

	memset(&k, 0, sizeof k);        /* hashed whole: no stray padding */
	k.vec = e->argv_vec;
	k.argc = e->argc;
	return k;
}

/*
 * The command line column: -2 when the command line is left out (see
 * keep_argv), -1 for a command line first seen here (the next in the
 * table: most of a build's are), else the id of one seen before.  In a
 * new command line, an argument first seen there is -1 too (the next in
 * the argument table), else its id: both tables grow in the order the
 * page reads them, which keeps the numbers small and alike.
 */
static int64_t argv_col(struct body *b, const struct pt_exec *e)
{
	struct vec_key k = vec_key(e);
	int added;
	uint32_t id;
	size_t i;

	if (!b->keep_argv[e->id])
		return -2;
	id = pt_strtab_intern(&b->vecs, &k, sizeof k, &added);
	if (!added)
		return id;
	if (b->newv.len)
		pt_sb_addch(&b->newv, ',');
	pt_sb_addch(&b->newv, '[');
	for (i = 0; i < e->argc; i++) {
		uint32_t aid = pt_exec_arg_id(e, i), sid;
		int new_arg;

		if (i)
			pt_sb_addch(&b->newv, ',');
		sid = str_by_ref(&b->a, &aid, sizeof aid, pt_exec_arg(e, i),
				 &new_arg);
		num(&b->newv, new_arg ? -1 : (int64_t)sid);
	}
	pt_sb_addch(&b->newv, ']');
	return -1;
}

static int64_t str_col(struct body *b, const char *s)
{
	if (!s || !*s)
		return -1;
	return str_by_ref(&b->s, &s, sizeof s, s, NULL);
}

/*
 * Which command lines go in the page: all of them, unless their bytes
 * pass ARGV_BUDGET; then those of the longest executions, until the
 * budget is spent.  A million compiler command lines are a gigabyte,
 * and the page must stay within a few tens of megabytes: the short
 * executions, too small to see but zoomed far in, keep their label and
 * say what they lack.
 */
struct by_dur {
	int64_t dur;
	uint32_t id;
};

static int cmp_dur(const void *x, const void *y)
{
	const struct by_dur *a = x, *b = y;

	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static size_t argv_bytes(const struct pt_exec *e)
{
	size_t i, n = 0;

	for (i = 0; i < e->argc; i++)
		n += strlen(pt_exec_arg(e, i)) + 3;
	return n;
}

/* Mark the command lines of the executions in order (NULL: start
 * order) as kept until their bytes reach budget; returns the bytes. */
static size_t keep_within(struct body *b, const struct by_dur *order,
			  size_t budget)
{
	const struct pt_model *m = b->r->m;
	struct pt_strtab seen;
	size_t i, total = 0;

	pt_strtab_init(&seen);
	for (i = 0; i < m->n && total < budget; i++) {
		uint32_t id = order ? order[i].id : (uint32_t)i;
		struct vec_key k = vec_key(m->execs[id]);
		int added;

		pt_strtab_intern(&seen, &k, sizeof k, &added);
		if (added)
			total += argv_bytes(m->execs[id]);
		b->keep_argv[id] = 1;
	}
	pt_strtab_free(&seen);
	return total;
}

static void choose_argv(struct body *b)
{
	const struct pt_model *m = b->r->m;
	struct by_dur *o;
	size_t i;

	b->keep_argv = pt_xcalloc(m->n ? m->n : 1, 1);
	if (keep_within(b, NULL, SIZE_MAX) <= ARGV_BUDGET)
		return;
	memset(b->keep_argv, 0, m->n);
	o = pt_xcalloc(m->n, sizeof *o);
	for (i = 0; i < m->n; i++) {
		o[i].dur = m->execs[i]->end_ns - m->execs[i]->start_ns;
		o[i].id = (uint32_t)i;
	}
	qsort(o, m->n, sizeof *o, cmp_dur);
	keep_within(b, o, ARGV_BUDGET);
	free(o);
}

static void exec_row(struct body *b, const struct pt_exec *e, int64_t *prev)
{
	const struct pt_analysis *a = &b->r->a;
	int64_t v[NCOLS], start = rel_us(e->start_ns, a->t0);
	size_t c;

	v[C_START] = start - *prev;
	*prev = start;
	v[C_DUR] = rel_us(e->end_ns, a->t0) - start;
	v[C_PARENT] = e->parent ? (int64_t)e->id - (int64_t)e->parent->id : 0;
	v[C_PID] = e->pid - b->prev_pid;
	b->prev_pid = e->pid;
	v[C_PPID] = e->parent ? e->ppid - e->parent->pid : e->ppid;
	v[C_EXIT] = e->exit_code;
	v[C_SIG] = e->signal;
	v[C_FLAGS] = e->flags | (e->type == PT_EXEC_FORK ? FORK_FLAG : 0);
	v[C_UTIME] = e->utime_us;
	v[C_STIME] = e->stime_us;
	v[C_RSS] = e->maxrss_kb;
	v[C_SELF] = a->self_ns[e->id] / 1000;
	pt_sb_reset(&b->tmp);
	pt_exec_label(e, &b->tmp);
	v[C_LABEL] = str_by_content(&b->s, b->tmp.buf, b->tmp.len, NULL);
	/* By content: the name is part of an argument or of a path. */
	v[C_PROG] = str_by_content(&b->s, pt_exec_prog(e),
				   strlen(pt_exec_prog(e)), NULL);
	pt_sb_reset(&b->tmp);
	pt_exec_package(e, &b->tmp);
	v[C_PKG] = b->tmp.len ? (int64_t)str_by_content(&b->s, b->tmp.buf,
							  b->tmp.len, NULL) : -1;
	v[C_CWD] = str_col(b, e->cwd);
	v[C_EXE] = str_col(b, e->exe);
	v[C_ARGV] = argv_col(b, e);
	v[C_CAPTURE] = e->capture;
	for (c = 0; c < NCOLS; c++) {
		if (b->col[c].len)
			pt_sb_addch(&b->col[c], ',');
		num(&b->col[c], v[c]);
	}
}

/* Hand what out holds to the sink once it is worth a call (or always). */
static int flush(struct body *b, int always)
{
	if (!always && b->out->len < FLUSH_AT)
		return 0;
	return b->sink(b->arg, b->out);
}

static int chunk_line(struct body *b)
{
	size_t c;

	/* The arguments on a line of their own, first: the page reads them
	 * only when it first shows or searches a command line. */
	pt_sb_addstr(b->out, "{\"A\":[");
	pt_sb_add(b->out, b->a.news.buf, b->a.news.len);
	pt_sb_addstr(b->out, "]}\n{\"S\":[");
	pt_sb_add(b->out, b->s.news.buf, b->s.news.len);
	pt_sb_addstr(b->out, "],\"V\":[");
	pt_sb_add(b->out, b->newv.buf, b->newv.len);
	pt_sb_addstr(b->out, "],\"c\":{");
	for (c = 0; c < NCOLS; c++) {
		key(b->out, col_names[c], c == 0);
		pt_sb_addch(b->out, '[');
		pt_sb_add(b->out, b->col[c].buf, b->col[c].len);
		pt_sb_addch(b->out, ']');
		pt_sb_reset(&b->col[c]);
		if (flush(b, 0) < 0)
			return -1;
	}
	pt_sb_addstr(b->out, "}}\n");
	pt_sb_reset(&b->s.news);
	pt_sb_reset(&b->a.news);
	pt_sb_reset(&b->newv);
	return flush(b, 0);
}

static int executions(struct body *b)
{
	const struct pt_model *m = b->r->m;
	int64_t prev = 0;
	size_t i;

	for (i = 0; i < m->n; i++) {
		exec_row(b, m->execs[i], &prev);
		if ((i + 1) % CHUNK == 0 && chunk_line(b) < 0)
			return -1;
	}
	if (m->n % CHUNK && chunk_line(b) < 0)
		return -1;
	return 0;
}

/* ---- the body: what programs wrote about themselves ---- */

static int64_t sub_str(void *arg, const char *s, size_t len, const void *ref,
		       int *added)
{
	struct body *b = arg;

	if (ref)
		return str_by_ref(&b->s, &ref, sizeof ref, s, added);
	return str_by_content(&b->s, s, len, added);
}

static int sub_events(struct body *b)
{
	struct pt_html_subs hs;
	int c;

	pt_html_subs_columns(&hs, b->r, sub_str, b);
	if (!hs.total && !hs.counters) {
		pt_html_subs_free(&hs);
		return 0;
	}
	pt_sb_addstr(b->out, "{\"U\":{\"S\":[");
	pt_sb_add(b->out, b->s.news.buf, b->s.news.len);
	pt_sb_reset(&b->s.news);
	pt_sb_addstr(b->out, "],\"total\":");
	num(b->out, (int64_t)hs.total);
	key(b->out, "kept", 0);
	num(b->out, (int64_t)hs.kept);
	key(b->out, "counters", 0);
	num(b->out, (int64_t)hs.counters);
	key(b->out, "argsOut", 0);
	num(b->out, (int64_t)hs.args_out);
	pt_sb_addstr(b->out, ",\"c\":{");
	for (c = 0; c < U_NCOLS; c++) {
		key(b->out, pt_html_sub_cols[c], c == 0);
		pt_sb_addch(b->out, '[');
		pt_sb_add(b->out, hs.col[c].buf, hs.col[c].len);
		pt_sb_addch(b->out, ']');
		if (flush(b, 0) < 0) {
			pt_html_subs_free(&hs);
			return -1;
		}
	}
	pt_sb_addstr(b->out, "}}}\n");
	pt_html_subs_free(&hs);
	return flush(b, 0);
}

/* ---- the body: analyses ---- */

static void critical(const struct pt_report *r, struct pt_sb *sb)
{
	const struct pt_analysis *a = &r->a;
	size_t i;

	/* Every step of the path, [exec, depth, from, to, own]
	 * in ns from the run's start (exact: the page prints them as the
	 * report does); the whole run's step (exec -1) included. */
	key(sb, "cp", 0);
	pt_sb_addch(sb, '[');
	for (i = 0; i < a->ncp; i++) {
		const struct pt_cp_step *s = &a->cp[i];

		pt_sb_addstr(sb, i ? ",[" : "[");
		num(sb, s->exec == UINT32_MAX ? -1 : (int64_t)s->exec);
		pt_sb_addch(sb, ',');
		num(sb, s->depth);
		pt_sb_addch(sb, ',');
		num(sb, s->from - a->t0);
		pt_sb_addch(sb, ',');
		num(sb, s->to - a->t0);
		pt_sb_addch(sb, ',');
		num(sb, s->own);
		pt_sb_addch(sb, ']');
	}
	/* What `proftrace report` lists: these steps, then a line for the
	 * rest and one for the time off the path. */
	pt_sb_addstr(sb, "],\"cpShown\":[");
	for (i = 0; i < r->ncp_shown; i++) {
		if (i)
			pt_sb_addch(sb, ',');
		num(sb, (int64_t)r->cp_shown[i]);
	}
	pt_sb_addstr(sb, "],\"cpSteps\":");
	num(sb, (int64_t)r->ncp_steps);
	key(sb, "cpHiddenOwn", 0);
	num(sb, r->cp_hidden_own);
	key(sb, "cpIdle", 0);
	num(sb, r->cp_idle);
	key(sb, "cpByProgram", 0);
	pt_sb_addch(sb, '[');
	for (i = 0; i < r->ncp_groups; i++) {
		const struct pt_report_group *g = &r->cp_groups[i];

		pt_sb_addstr(sb, i ? ",[" : "[");
		json_cstr(sb, pt_strtab_str(&r->cp_names, g->id));
		pt_sb_addch(sb, ',');
		num(sb, g->self);
		pt_sb_addch(sb, ',');
		num(sb, (int64_t)g->count);
		pt_sb_addch(sb, ']');
	}
	pt_sb_addch(sb, ']');
}

static void parallelism(const struct pt_report *r, struct pt_sb *sb)
{
	const struct pt_analysis *a = &r->a;
	size_t i;

	key(sb, "levels", 0);
	pt_sb_addch(sb, '[');
	for (i = 0; i < r->nlevels; i++) {
		pt_sb_addstr(sb, i ? ",[" : "[");
		num(sb, (int64_t)r->levels[i].lo);
		pt_sb_addch(sb, ',');
		num(sb, (int64_t)r->levels[i].hi);
		pt_sb_addch(sb, ',');
		num(sb, r->levels[i].ns);
		pt_sb_addch(sb, ']');
	}
	pt_sb_addstr(sb, "],\"alone\":[");
	for (i = 0; i < r->nalone_shown; i++) {
		const struct pt_stretch *s = &a->alone[i];

		pt_sb_addstr(sb, i ? ",[" : "[");
		num(sb, s->exec);
		pt_sb_addch(sb, ',');
		num(sb, s->from - a->t0);
		pt_sb_addch(sb, ',');
		num(sb, s->to - a->t0);
		pt_sb_addch(sb, ']');
	}
	pt_sb_addch(sb, ']');
}

/*
 * Running and busy executions over time, in PAR_BUCKETS buckets of equal
 * length: each bucket's time-weighted mean (in hundredths) and its
 * highest value, so that a short peak still shows when zoomed out.
 */
struct profile {
	int64_t t0, len;
	size_t nb;
	int64_t *run_ns, *busy_ns;      /* integral over the bucket */
	uint32_t *run_max, *busy_max;
};

static void profile_add(struct profile *p, int64_t from, int64_t to,
			uint32_t run, uint32_t busy)
{
	while (from < to) {
		size_t k = (size_t)((__int128)(from - p->t0) * (int64_t)p->nb /
				    p->len);
		int64_t end;

		if (k >= p->nb)
			k = p->nb - 1;
		end = p->t0 + (int64_t)((__int128)p->len * (int64_t)(k + 1) /
					(int64_t)p->nb);
		if (end > to || k == p->nb - 1)
			end = to;
		if (end <= from)
			end = from + 1;
		p->run_ns[k] += (end - from) * run;
		p->busy_ns[k] += (end - from) * busy;
		if (run > p->run_max[k])
			p->run_max[k] = run;
		if (busy > p->busy_max[k])
			p->busy_max[k] = busy;
		from = end;
	}
}

static void profile_array(struct pt_sb *sb, const char *name,
			  const int64_t *ns, const uint32_t *max,
			  const struct profile *p)
{
	size_t k;

	key(sb, name, 0);
	pt_sb_addch(sb, '[');
	for (k = 0; k < p->nb; k++) {
		int64_t blen = p->len * (int64_t)(k + 1) / (int64_t)p->nb -
			       p->len * (int64_t)k / (int64_t)p->nb;

		if (k)
			pt_sb_addch(sb, ',');
		if (ns)
			num(sb, blen > 0 ? (int64_t)((__int128)ns[k] * 100 /
						     blen) : 0);
		else
			num(sb, max[k]);
	}
	pt_sb_addch(sb, ']');
}

static void profile(const struct pt_report *r, struct pt_sb *sb)
{
	const struct pt_analysis *a = &r->a;
	struct profile p = { .t0 = a->t0, .len = a->t1 - a->t0 };
	struct pt_sweep s;
	int64_t prev_t = a->t0;
	uint32_t run = 0, busy = 0;

	if (!r->m->n || p.len <= 0)
		return;
	p.nb = PAR_BUCKETS;
	if ((int64_t)p.nb > p.len)
		p.nb = (size_t)p.len;
	p.run_ns = pt_xcalloc(p.nb, sizeof *p.run_ns);
	p.busy_ns = pt_xcalloc(p.nb, sizeof *p.busy_ns);
	p.run_max = pt_xcalloc(p.nb, sizeof *p.run_max);
	p.busy_max = pt_xcalloc(p.nb, sizeof *p.busy_max);
	pt_sweep_init(&s, a);
	while (pt_sweep_next(&s)) {
		if (s.t > prev_t)
			profile_add(&p, prev_t, s.t, run, busy);
		if (s.t > prev_t)
			prev_t = s.t;
		run = s.running;
		busy = s.busy;
	}
	pt_sweep_free(&s);
	key(sb, "profile", 0);
	pt_sb_addstr(sb, "{\"buckets\":");
	num(sb, (int64_t)p.nb);
	profile_array(sb, "run", p.run_ns, NULL, &p);
	profile_array(sb, "busy", p.busy_ns, NULL, &p);
	profile_array(sb, "runMax", NULL, p.run_max, &p);
	profile_array(sb, "busyMax", NULL, p.busy_max, &p);
	pt_sb_addch(sb, '}');
	free(p.run_ns);
	free(p.busy_ns);
	free(p.run_max);
	free(p.busy_max);
}

static void analyses(const struct pt_report *r, struct pt_sb *sb)
{
	size_t i;

	pt_sb_addstr(sb, "{\"columns\":[");
	for (i = 0; i < NCOLS; i++) {
		if (i)
			pt_sb_addch(sb, ',');
		json_cstr(sb, col_names[i]);
	}
	pt_sb_addch(sb, ']');
	/* The report's figures in ns, exact. */
	key(sb, "wallNs", 0);
	num(sb, r->wall);
	critical(r, sb);
	parallelism(r, sb);
	key(sb, "average", 0);
	pt_sb_addf(sb, "%.2f", r->a.average);
	key(sb, "peak", 0);
	num(sb, r->a.peak);
	profile(r, sb);
	pt_html_inside(r, sb);
	pt_sb_addstr(sb, "}\n");
}

int pt_html_body(const struct pt_report *r, struct pt_sb *sb,
		 pt_html_sink_fn *sink, void *arg)
{
	struct body b = { .r = r, .out = sb, .sink = sink, .arg = arg,
			  .newv = PT_SB_INIT, .tmp = PT_SB_INIT };
	size_t c;
	int rc;

	for (c = 0; c < NCOLS; c++)
		pt_sb_init(&b.col[c]);
	stab_init(&b.s);
	stab_init(&b.a);
	pt_strtab_init(&b.vecs);
	choose_argv(&b);
	rc = executions(&b);
	if (rc == 0)
		rc = sub_events(&b);
	if (rc == 0) {
		analyses(r, sb);
		rc = flush(&b, 1);
	}
	for (c = 0; c < NCOLS; c++)
		pt_sb_release(&b.col[c]);
	stab_free(&b.s);
	stab_free(&b.a);
	pt_sb_release(&b.newv);
	pt_sb_release(&b.tmp);
	pt_strtab_free(&b.vecs);
	free(b.keep_argv);
	return rc;
}
