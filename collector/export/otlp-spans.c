/*
 * The executions of a capture as OTLP spans.
 *
 * One span per execution, whose parent is the span of its parent
 * process's execution, under one root span for the run (itself a child
 * of TRACEPARENT's span when the run had one).  Span ids are derived
 * from the capture (its host and start clocks) and the execution (pid,
 * start time), so a second export sends the same spans.
 *
 * Backends cap what a trace may hold, so executions shorter than
 * --otlp-min-duration, and then the shortest beyond --otlp-max-spans,
 * are folded: no span of their own, but counted, with their wall and CPU
 * times summed, in the span of their nearest ancestor that has one.  A
 * child that outlived a folded parent is reparented to that ancestor.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "export/otlp.h"
#include "model/redact.h"

#define MAX_ATTRS 40

/* What was folded into one span. */
struct fold {
	uint64_t n;
	int64_t wall_us, cpu_us;
};

struct exporter {
	const struct pt_otlp_opts *o;
	struct pt_otlp_sender *s;
	const struct pt_model *m;
	struct pt_otlp_summary *sum;
	size_t c;                       /* the capture being exported */
	uint8_t trace[16], seed[16], root_id[8], tp_parent[8];
	int has_tp;
	uint8_t *keep;                  /* by exec id: has a span */
	struct fold *fold;              /* by exec id */
	struct fold root_fold;
	struct pt_otlp_batch b;
	struct pt_otlp_attr res[MAX_ATTRS];
	size_t nres;
	struct pt_sb res_strs;          /* resource values built here */
	/* One span's attributes and the strings they point into. */
	struct pt_otlp_attr a[MAX_ATTRS];
	size_t na;
	const char **args;
	size_t *arglens, args_alloc;
	const char **argv;              /* the model's command line */
	size_t argv_alloc;
	const struct pt_redact *red;    /* a lean model's command lines */
	int stopped;                    /* a batch was refused: send no more */
	char num[8][64];
	size_t nnum;
};

/* ---- attributes ---- */

/* n cut back to at most max bytes, ending on a UTF-8 character boundary. */
static size_t cap_utf8(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	n = max;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

static void add_str(struct pt_otlp_attr *a, size_t *na, size_t max,
		    const char *key, const char *v)
{
	if (!v || !*v || *na == MAX_ATTRS)
		return;
	a[*na] = (struct pt_otlp_attr){ .key = key, .type = PT_OV_STR,
		.s = v, .slen = cap_utf8(v, strlen(v), max) };
	++*na;
}

static void add_int(struct pt_otlp_attr *a, size_t *na, const char *key,
		    int64_t v)
{
	if (*na == MAX_ATTRS)
		return;
	a[*na] = (struct pt_otlp_attr){ .key = key, .type = PT_OV_INT,
					.i = v };
	++*na;
}

static void add_bool(struct pt_otlp_attr *a, size_t *na, const char *key)
{
	if (*na == MAX_ATTRS)
		return;
	a[*na] = (struct pt_otlp_attr){ .key = key, .type = PT_OV_BOOL,
					.i = 1 };
	++*na;
}

/* A formatted value that lives until the next span. */
static const char *numf(struct exporter *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *numf(struct exporter *x, const char *fmt, ...)
{
	va_list ap;
	char *p = x->num[x->nnum++ % 8];

	va_start(ap, fmt);
	vsnprintf(p, sizeof x->num[0], fmt, ap);
	va_end(ap);
	return p;
}

static void add_fold(struct exporter *x, const struct fold *f)
{
	if (!f->n)
		return;
	add_int(x->a, &x->na, "proftrace.folded.count", (int64_t)f->n);
	add_int(x->a, &x->na, "proftrace.folded.wall_us", f->wall_us);
	add_int(x->a, &x->na, "proftrace.folded.cpu_us", f->cpu_us);
}

/*
 * process.command_args: the arguments up to attr_max bytes in all (the
 * last one cut on a character boundary), so that no backend truncates
 * the value itself; process.args_count says how many there were.
 */
static void add_args(struct exporter *x, const char *const *argv, size_t argc)
{
	size_t i, n = 0, total = 0, max = x->o->attr_max;

	if (!argc)
		return;
	if (x->args_alloc < argc) {
		x->args_alloc = argc;
		x->args = pt_xrealloc(x->args, argc * sizeof *x->args);
		x->arglens = pt_xrealloc(x->arglens, argc * sizeof *x->arglens);
	}
	for (i = 0; i < argc && total < max; i++) {
		const char *s = argv[i];
		size_t len = cap_utf8(s, strlen(s), max - total);

		x->args[n] = s;
		x->arglens[n++] = len;
		total += len;
	}
	if (x->na + 2 > MAX_ATTRS)
		return;
	x->a[x->na++] = (struct pt_otlp_attr){ .key = "process.command_args",
		.type = PT_OV_STRS, .strs = x->args, .lens = x->arglens,
		.n = n };
	add_int(x->a, &x->na, "process.args_count", (int64_t)argc);
}

/* ---- the span of one execution ---- */

static int64_t dur_ns(const struct pt_exec *e)
{
	return e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
}

static void exec_id(const struct exporter *x, const struct pt_exec *e,
		    uint8_t out[8])
{
	pt_otlp_id64(x->seed, "exec", (uint64_t)(uint32_t)e->pid |
		     (uint64_t)e->type << 32, (uint64_t)e->start_ns, out);
}

/* The index of the nearest ancestor of execution i that has a span, or
 * SIZE_MAX for the root. */
static size_t spanned_parent(const struct exporter *x, size_t i)
{
	size_t p = pt_model_parent(x->m, i);

	while (p != SIZE_MAX && !x->keep[p])
		p = pt_model_parent(x->m, p);
	return p;
}

static const char *status_of(struct exporter *x, const struct pt_exec *e)
{
	if (e->flags & PT_EXF_SPAWN_FAILED)
		return numf(x, "spawn failed: %s", strerror(e->spawn_errno));
	if (e->signal > 0)
		return numf(x, "killed by signal %d (%s)", e->signal,
			    strsignal(e->signal));
	if (e->flags & PT_EXF_KILLED)
		return "ended without exiting (killed)";
	if (e->exit_code > 0)
		return numf(x, "exit status %d", e->exit_code);
	return NULL;
}

static int flush(struct exporter *x);

static int emit(struct exporter *x, struct pt_otlp_span *sp)
{
	memcpy(sp->trace_id, x->trace, 16);
	sp->attrs = x->a;
	sp->nattrs = x->na;
	pt_otlp_enc_span(x->o->proto, &x->b, sp);
	x->sum->spans++;
	if (x->b.nspans >= x->o->batch_spans ||
	    x->b.spans.len >= x->o->batch_bytes)
		return flush(x);
	return 0;
}

/* The span of e, whose command line is argv[0..argc). */
static int exec_span(struct exporter *x, const struct pt_exec *e,
		     const char *const *argv, size_t argc)
{
	struct pt_otlp_span sp = { 0 };
	size_t p = spanned_parent(x, e->id);
	size_t max = x->o->attr_max;
	struct pt_exec tmp;
	struct pt_sb pkg = PT_SB_INIT;
	int rc;

	x->na = 0;
	x->nnum = 0;
	exec_id(x, e, sp.span_id);
	sp.has_parent = 1;
	if (p != SIZE_MAX)
		exec_id(x, pt_model_exec(x->m, p, &tmp), sp.parent_id);
	else
		memcpy(sp.parent_id, x->root_id, 8);
	sp.name = pt_prog_name(argc ? argv[0] : NULL, e->exe);
	sp.start_ns = e->start_ns;
	sp.end_ns = e->end_ns > e->start_ns ? e->end_ns : e->start_ns;
	sp.status_msg = status_of(x, e);
	sp.error = sp.status_msg != NULL;
	if (e->pid > 0)
		add_int(x->a, &x->na, "process.pid", e->pid);
	if (e->ppid > 0)
		add_int(x->a, &x->na, "process.parent_pid", e->ppid);
	add_str(x->a, &x->na, max, "process.executable.path", e->exe);
	add_str(x->a, &x->na, max, "process.executable.name", sp.name);
	add_args(x, argv, argc);
	add_str(x->a, &x->na, max, "process.working_directory", e->cwd);
	if (e->exit_code >= 0 && !(e->flags & PT_EXF_SPAWN_FAILED))
		add_int(x->a, &x->na, "process.exit.code", e->exit_code);
	if (e->signal > 0)
		add_int(x->a, &x->na, "proftrace.exit.signal", e->signal);
	if (e->utime_us >= 0)
		add_int(x->a, &x->na, "proftrace.cpu.user_us", e->utime_us);
	if (e->stime_us >= 0)
		add_int(x->a, &x->na, "proftrace.cpu.system_us", e->stime_us);
	if (e->maxrss_kb >= 0)
		add_int(x->a, &x->na, "proftrace.memory.max_rss_kb",
			e->maxrss_kb);
	pt_exec_package(e, &pkg);
	add_str(x->a, &x->na, max, "proftrace.opam.package", pkg.buf);
	if (e->type == PT_EXEC_FORK)
		add_bool(x->a, &x->na, "proftrace.fork");
	if (e->flags & PT_EXF_UNTRACED)
		add_bool(x->a, &x->na, "proftrace.untraced");
	if (e->flags & PT_EXF_END_UNKNOWN)
		add_bool(x->a, &x->na, "proftrace.end_unknown");
	add_fold(x, &x->fold[e->id]);
	rc = emit(x, &sp);
	pt_sb_release(&pkg);
	return rc;
}

/* The span of e with the model's command line. */
static int model_span(struct exporter *x, const struct pt_exec *e)
{
	size_t i;

	if (x->argv_alloc < e->argc) {
		x->argv_alloc = e->argc;
		x->argv = pt_xrealloc(x->argv, e->argc * sizeof *x->argv);
	}
	/* (The pointers hold while the arguments of one vector are read.) */
	for (i = 0; i < e->argc; i++)
		x->argv[i] = pt_exec_arg(e, i);
	return exec_span(x, e, x->argv, e->argc);
}

/* ---- a lean model: command lines read again as the spans go ---- */

struct by_ref {
	uint32_t ref;                   /* pt_exec.argv_ref */
	uint32_t i;                     /* pt_model_exec()'s */
};

struct lean_pass {
	struct exporter *x;
	const struct by_ref *list;
};

static int cmp_by_ref(const void *a, const void *b)
{
	const struct by_ref *p = a, *q = b;

	if (p->ref != q->ref)
		return p->ref < q->ref ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

static void lean_span(void *ctx, size_t k, const char *const *argv,
		      size_t argc)
{
	struct lean_pass *lp = ctx;
	struct exporter *x = lp->x;
	struct pt_exec tmp;
	const struct pt_exec *e = pt_model_exec(x->m, lp->list[k].i, &tmp);
	char **masked = NULL;
	size_t i;

	if (x->stopped)
		return;
	if (x->red && argc) {
		/* --redact: what a pattern matched, masked in a copy. */
		masked = pt_xcalloc(argc, sizeof *masked);
		if (x->argv_alloc < argc) {
			x->argv_alloc = argc;
			x->argv = pt_xrealloc(x->argv, argc * sizeof *x->argv);
		}
		for (i = 0; i < argc; i++) {
			masked[i] = pt_redact_string(x->red, argv[i]);
			x->argv[i] = masked[i] ? masked[i] : argv[i];
		}
		argv = x->argv;
	}
	if (exec_span(x, e, argv, argc) < 0)
		x->stopped = 1;
	for (i = 0; masked && i < argc; i++)
		free(masked[i]);
	free(masked);
}

/*
 * The spans of capture x->c's executions kept, from a lean model: those
 * without a command line first, the others as the second reading of the
 * capture reaches the record that has theirs.
 */
static int lean_spans(struct exporter *x)
{
	const struct pt_model *m = x->m;
	const char *path = pt_model_meta(m, x->c, "file");
	struct by_ref *list;
	struct lean_pass lp = { .x = x };
	struct pt_exec tmp;
	uint32_t *refs;
	size_t i, n = 0;
	long got = 0;

	list = pt_xmalloc((m->n ? m->n : 1) * sizeof *list);
	for (i = 0; i < m->n && !x->stopped; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture != x->c || !x->keep[e->id])
			continue;
		if (!e->argv_ref) {
			if (exec_span(x, e, NULL, 0) < 0)
				x->stopped = 1;
			continue;
		}
		list[n].ref = e->argv_ref;
		list[n++].i = (uint32_t)i;
	}
	qsort(list, n, sizeof *list, cmp_by_ref);
	refs = pt_xmalloc((n ? n : 1) * sizeof *refs);
	for (i = 0; i < n; i++)
		refs[i] = list[i].ref;
	lp.list = list;
	if (n && !x->stopped && path)
		got = pt_model_read_argv(path, refs, n, lean_span, &lp);
	if (got < 0)
		got = 0;
	if ((size_t)got < n && !x->stopped) {
		/* The capture is shorter than when it was read: the rest go
		 * without their command lines rather than not at all. */
		pt_warn("%s: the capture changed while it was exported: %zu "
			"spans sent without their command lines",
			path ? path : "capture", n - (size_t)got);
		for (i = (size_t)got; i < n && !x->stopped; i++)
			if (exec_span(x, pt_model_exec(m, list[i].i, &tmp),
				      NULL, 0) < 0)
				x->stopped = 1;
	}
	free(refs);
	free(list);
	return x->stopped ? -1 : 0;
}

/* ---- the run: resource and root span ---- */

static const char *meta(const struct exporter *x, const char *key)
{
	const char *v = pt_model_meta(x->m, x->c, key);

	return v && *v ? v : NULL;
}

/* A value built into res_strs: kept as an offset until all are built
 * (the buffer moves as it grows). */
static void res_built(struct exporter *x, const char *key, size_t from)
{
	if (x->nres == MAX_ATTRS)
		return;
	x->res[x->nres] = (struct pt_otlp_attr){ .key = key,
		.type = PT_OV_STR, .s = NULL, .slen = from };
	x->nres++;
	pt_sb_addch(&x->res_strs, '\0');
}

/*
 * The resource: the service, the host, and the CI pipeline after
 * OpenTelemetry's CI/CD conventions, from what the capture recorded of
 * its run (not from the environment of the export, which may be another
 * machine's).  OTEL_RESOURCE_ATTRIBUTES comes last and wins.
 */
static void build_resource(struct exporter *x)
{
	const struct pt_otlp_opts *o = x->o;
	const char *service = o->service_name, *v, *w;
	size_t max = o->attr_max, i, from;

	x->nres = 0;
	pt_sb_reset(&x->res_strs);
	for (i = 0; !service && i < o->nresource; i++)
		if (!strcmp(o->resource[i].key, "service.name"))
			service = o->resource[i].value;
	add_str(x->res, &x->nres, max, "service.name",
		service ? service : "proftrace");
	add_str(x->res, &x->nres, max, "host.name", meta(x, "host"));
	add_str(x->res, &x->nres, max, "host.cpu.model.name",
		meta(x, "cpu_model"));
	add_str(x->res, &x->nres, max, "os.type", "linux");
	add_str(x->res, &x->nres, max, "os.version", meta(x, "kernel"));
	add_str(x->res, &x->nres, max, "vcs.ref.head.revision",
		meta(x, "git_commit"));
	if ((v = meta(x, "CI_PIPELINE_ID"))) {
		/* GitLab CI */
		add_str(x->res, &x->nres, max, "cicd.pipeline.name",
			meta(x, "CI_PIPELINE_NAME") ? meta(x, "CI_PIPELINE_NAME") :
			meta(x, "CI_PROJECT_PATH"));
		add_str(x->res, &x->nres, max, "cicd.pipeline.run.id", v);
		add_str(x->res, &x->nres, max, "cicd.pipeline.run.url.full",
			meta(x, "CI_PIPELINE_URL"));
		add_str(x->res, &x->nres, max, "cicd.pipeline.task.name",
			meta(x, "CI_JOB_NAME"));
		add_str(x->res, &x->nres, max, "cicd.pipeline.task.run.id",
			meta(x, "CI_JOB_ID"));
		add_str(x->res, &x->nres, max, "cicd.pipeline.task.run.url.full",
			meta(x, "CI_JOB_URL"));
	} else if ((v = meta(x, "GITHUB_RUN_ID"))) {
		/* GitHub Actions: the run's URL from its parts. */
		add_str(x->res, &x->nres, max, "cicd.pipeline.name",
			meta(x, "GITHUB_WORKFLOW"));
		add_str(x->res, &x->nres, max, "cicd.pipeline.run.id", v);
		w = meta(x, "GITHUB_SERVER_URL");
		if (w && meta(x, "GITHUB_REPOSITORY")) {
			from = x->res_strs.len;
			pt_sb_addf(&x->res_strs, "%s/%s/actions/runs/%s", w,
				   meta(x, "GITHUB_REPOSITORY"), v);
			if (meta(x, "GITHUB_RUN_ATTEMPT"))
				pt_sb_addf(&x->res_strs, "/attempts/%s",
					   meta(x, "GITHUB_RUN_ATTEMPT"));
			res_built(x, "cicd.pipeline.run.url.full", from);
		}
		add_str(x->res, &x->nres, max, "cicd.pipeline.task.name",
			meta(x, "GITHUB_JOB"));
	}
	for (i = 0; i < o->nresource; i++)
		if (strcmp(o->resource[i].key, "service.name"))
			add_str(x->res, &x->nres, max, o->resource[i].key,
				o->resource[i].value);
	/* Now that res_strs no longer moves, point into it. */
	for (i = 0; i < x->nres; i++)
		if (x->res[i].type == PT_OV_STR && !x->res[i].s) {
			x->res[i].s = x->res_strs.buf + x->res[i].slen;
			x->res[i].slen = cap_utf8(x->res[i].s,
						  strlen(x->res[i].s), max);
		}
}

static int root_span(struct exporter *x, int64_t first, int64_t last,
		     int failed)
{
	struct pt_otlp_span sp = { 0 };
	const char *v, *job;
	int64_t t;
	char *end;
	struct pt_sb name = PT_SB_INIT;
	int rc;

	x->na = 0;
	x->nnum = 0;
	memcpy(sp.span_id, x->root_id, 8);
	sp.has_parent = x->has_tp;
	memcpy(sp.parent_id, x->tp_parent, 8);
	/* The run lasted from the collector's start to its end, which
	 * include every execution. */
	if ((v = meta(x, "start_realtime_ns")) &&
	    (t = strtoll(v, &end, 10)) > 0 && !*end && (!first || t < first))
		first = t;
	if ((v = meta(x, "end_realtime_ns")) &&
	    (t = strtoll(v, &end, 10)) > last && !*end)
		last = t;
	sp.start_ns = first;
	sp.end_ns = last > first ? last : first;
	job = meta(x, "CI_JOB_NAME") ? meta(x, "CI_JOB_NAME") :
	      meta(x, "GITHUB_JOB");
	if (job)
		pt_sb_addf(&name, "%s", job);
	else if ((v = meta(x, "command")))
		pt_sb_add(&name, v, cap_utf8(v, strlen(v), 120));
	else
		pt_sb_addstr(&name, "proftrace run");
	sp.name = name.buf;
	sp.error = failed;
	sp.status_msg = failed ? "a top-level command failed" : NULL;
	add_str(x->a, &x->na, x->o->attr_max, "proftrace.command",
		meta(x, "command"));
	add_str(x->a, &x->na, x->o->attr_max, "process.working_directory",
		meta(x, "cwd"));
	add_int(x->a, &x->na, "proftrace.executions",
		(int64_t)x->sum->executions);
	add_fold(x, &x->root_fold);
	rc = emit(x, &sp);
	pt_sb_release(&name);
	return rc;
}

static int flush(struct exporter *x)
{
	int rc;

	if (!x->b.nspans)
		return 0;
	pt_otlp_enc_wrap(x->o->proto, &x->b, x->res, x->nres);
	rc = pt_otlp_post(x->s, &x->b);
	pt_otlp_batch_reset(&x->b);
	x->sum->batches++;
	if (rc < 0)
		x->sum->failed = 1;
	return rc;
}

/* ---- folding ---- */

static int cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

/*
 * Mark the executions of capture c that get a span: those lasting at
 * least min_duration_ns, then the longest max_spans - 1 of them (the
 * root is a span too).  Returns how many.
 */
static size_t choose(struct exporter *x, size_t *nexec)
{
	const struct pt_model *m = x->m;
	struct pt_exec tmp;
	size_t i, kept = 0, budget, ties, after_short;
	int64_t *d, thr;

	*nexec = 0;
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture != x->c)
			continue;
		++*nexec;
		x->keep[e->id] = dur_ns(e) >= x->o->min_duration_ns;
		kept += x->keep[e->id];
	}
	x->sum->folded_short += *nexec - kept;
	budget = x->o->max_spans ? x->o->max_spans - 1 : SIZE_MAX;
	if (kept <= budget)
		return kept;
	after_short = kept;
	d = pt_xmalloc(kept * sizeof *d);
	for (i = 0, kept = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture == x->c && x->keep[e->id])
			d[kept++] = dur_ns(e);
	}
	qsort(d, kept, sizeof *d, cmp_desc);
	thr = d[budget - 1];
	free(d);
	/* Longer than the budget's last one, then its equals in start order
	 * while the budget lasts. */
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture != x->c || !x->keep[e->id] || dur_ns(e) > thr)
			continue;
		x->keep[e->id] = 0;
	}
	for (i = 0, kept = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture == x->c && x->keep[e->id])
			kept++;
	}
	for (i = 0, ties = 0; i < m->n && kept + ties < budget; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture == x->c && !x->keep[e->id] &&
		    dur_ns(e) == thr && dur_ns(e) >= x->o->min_duration_ns) {
			x->keep[e->id] = 1;
			ties++;
		}
	}
	x->sum->folded_over += after_short - (kept + ties);
	if (thr > x->sum->threshold_ns)
		x->sum->threshold_ns = thr;
	return kept + ties;
}

/* Count each execution without a span into its nearest spanned ancestor. */
static void fold(struct exporter *x)
{
	const struct pt_model *m = x->m;
	struct pt_exec tmp;
	size_t i;

	memset(&x->root_fold, 0, sizeof x->root_fold);
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture != x->c)
			continue;
		memset(&x->fold[e->id], 0, sizeof x->fold[e->id]);
	}
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);
		struct fold *f;
		size_t p;

		if (e->capture != x->c || x->keep[e->id])
			continue;
		p = spanned_parent(x, i);
		f = p != SIZE_MAX ? &x->fold[p] : &x->root_fold;
		f->n++;
		f->wall_us += dur_ns(e) / 1000;
		f->cpu_us += pt_exec_cpu_us(e);
	}
}

/* ---- one capture, all captures ---- */

static int export_capture(struct exporter *x)
{
	const struct pt_model *m = x->m;
	struct pt_exec tmp;
	size_t i, nexec;
	int64_t first = 0, last = 0;
	int failed = 0;
	const char *how;

	if (pt_otlp_trace_id(m, x->c, x->o->trace_id, x->trace, x->tp_parent,
			     &x->has_tp, &how) < 0)
		return -1;
	pt_otlp_hex(x->trace, 16, x->sum->trace_hex);
	x->sum->trace_how = how;
	pt_otlp_capture_seed(m, x->c, x->seed);
	pt_otlp_id64(x->seed, "root", 0, 0, x->root_id);
	build_resource(x);
	choose(x, &nexec);
	fold(x);
	x->sum->executions += nexec;
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = pt_model_exec(m, i, &tmp);

		if (e->capture != x->c)
			continue;
		if (!first || e->start_ns < first)
			first = e->start_ns;
		if (e->end_ns > last)
			last = e->end_ns;
		if (pt_model_parent(m, i) == SIZE_MAX && status_of(x, e))
			failed = 1;
	}
	if (root_span(x, first, last, failed) < 0)
		return -1;
	if (m->lean) {
		if (lean_spans(x) < 0)
			return -1;
	} else {
		for (i = 0; i < m->n; i++) {
			const struct pt_exec *e = pt_model_exec(m, i, &tmp);

			if (e->capture == x->c && x->keep[e->id] &&
			    model_span(x, e) < 0)
				return -1;
		}
	}
	if (flush(x) < 0 || pt_otlp_sender_wait(x->s) < 0) {
		x->sum->failed = 1;
		return -1;
	}
	return 0;
}

int pt_otlp_export_model(const struct pt_otlp_opts *o,
			 struct pt_otlp_sender *s, const struct pt_model *m,
			 const struct pt_redact *red,
			 struct pt_otlp_summary *sum)
{
	struct exporter x = { .o = o, .s = s, .m = m, .sum = sum, .red = red,
			      .b = PT_OTLP_BATCH_INIT,
			      .res_strs = PT_SB_INIT };
	int rc = 0;

	x.keep = pt_xcalloc(m->n ? m->n : 1, 1);
	x.fold = pt_xcalloc(m->n ? m->n : 1, sizeof *x.fold);
	for (x.c = 0; x.c < m->ncaptures && rc == 0; x.c++)
		rc = export_capture(&x);
	free(x.keep);
	free(x.fold);
	free(x.args);
	free(x.arglens);
	free(x.argv);
	pt_otlp_batch_free(&x.b);
	pt_sb_release(&x.res_strs);
	return rc;
}
