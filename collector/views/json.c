/*
 * Trace JSON (Chrome Trace Event Format); see json.h.
 *
 * The three consumers disagree on details, so the output keeps to what all
 * of them accept:
 *  - Times are integer microseconds.  A fractional ts is read through a
 *    double and truncated to ns by Perfetto, which can make two events
 *    that touch in the capture overlap by a nanosecond.
 *  - Events on one lane never touch: speedscope (at equal timestamps)
 *    and chrome://tracing (when binding a flow) cannot tell which of two
 *    touching slices is meant.
 *  - "ph" and "ts" come first in every event, metadata events included:
 *    older Perfetto versions look for "ts" by scanning an event's keys in
 *    order and give up at the first array or \u escape, and speedscope
 *    once rejected files whose events lacked "ts".
 *  - A flow event follows the slices it binds to in the file, so that a
 *    stable sort by ts keeps the slice first.
 */
#include "views/json.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "views/par.h"
#include "pt-config.h"
#include "base/strbuf.h"
#include "base/utf8.h"

#define FLUSH_AT (1u << 20)
/* About 1.5 MB of text a chunk. */
#define EXECS_PER_CHUNK 1024
#define NONE UINT32_MAX

struct out {
	FILE *f;
	struct pt_sb sb;
	int err;
	size_t events;                  /* written so far: commas go between */
};

static void out_flush(struct out *o)
{
	if (o->sb.len && !o->err &&
	    fwrite(o->sb.buf, 1, o->sb.len, o->f) != o->sb.len)
		o->err = errno ? errno : EIO;
	pt_sb_reset(&o->sb);
}

static void lit(struct out *o, const char *s)
{
	pt_sb_addstr(&o->sb, s);
}

static void i64(struct out *o, int64_t v)
{
	pt_sb_add_i64(&o->sb, v);
}

/* Start an event: JSON wants commas between, never after the last. */
static void event(struct out *o, const char *head)
{
	if (o->events++)
		pt_sb_add(&o->sb, ",\n", 2);
	pt_sb_addstr(&o->sb, head);
}

/* Microseconds as decimal seconds: 1234567 -> 1.234567. */
static void secs_us(struct out *o, int64_t us)
{
	i64(o, us / 1000000);
	pt_sb_addf(&o->sb, ".%06lld", (long long)(us % 1000000));
}

/* Bytes that stand for themselves in a JSON string: printable ASCII but
 * the quote (0x22) and the backslash (0x5c).  Every byte of every argument
 * is looked up. */
static const unsigned char json_plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

void pt_json_escape(struct pt_sb *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run;

	while (i < n) {
		size_t l;

		/* Copy the plain run in one go: most text needs nothing. */
		for (run = i; run < n && json_plain[p[run]]; run++)
			;
		if (run > i) {
			pt_sb_add(sb, p + i, run - i);
			i = run;
			continue;
		}
		switch (p[i]) {
		case '"':
			pt_sb_add(sb, "\\\"", 2);
			i++;
			continue;
		case '\\':
			pt_sb_add(sb, "\\\\", 2);
			i++;
			continue;
		case '\n':
			pt_sb_add(sb, "\\n", 2);
			i++;
			continue;
		case '\t':
			pt_sb_add(sb, "\\t", 2);
			i++;
			continue;
		case '\r':
			pt_sb_add(sb, "\\r", 2);
			i++;
			continue;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			char u[6] = { '\\', 'u', '0', '0', hex[p[i] >> 4],
				      hex[p[i] & 15] };

			pt_sb_add(sb, u, 6);
			i++;
			continue;
		}
		l = pt_utf8_len(p + i, n - i);
		if (l) {
			pt_sb_add(sb, p + i, l);
			i += l;
		} else {
			/* Not UTF-8 (a Latin-1 file name, a cut argument):
			 * the replacement character, one per byte. */
			pt_sb_add(sb, "\\ufffd", 6);
			i++;
		}
	}
}

static void str(struct out *o, const char *s)
{
	pt_sb_addch(&o->sb, '"');
	pt_json_escape(&o->sb, s, strlen(s));
	pt_sb_addch(&o->sb, '"');
}

static void str_n(struct out *o, const char *s, size_t n)
{
	pt_sb_addch(&o->sb, '"');
	pt_json_escape(&o->sb, s, n);
	pt_sb_addch(&o->sb, '"');
}

/* ---- lanes ---- */

struct lane_end {
	int64_t end;
	uint32_t lane;
};

/* Min-heap of busy lanes by end (then lane), or of free lanes by number. */
struct heap {
	struct lane_end *v;
	size_t n, cap;
};

static int le_less(const struct lane_end *a, const struct lane_end *b)
{
	return a->end < b->end || (a->end == b->end && a->lane < b->lane);
}

static void heap_push(struct heap *h, int64_t end, uint32_t lane)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->v = pt_xrealloc(h->v, h->cap * sizeof *h->v);
	}
	i = h->n++;
	h->v[i].end = end;
	h->v[i].lane = lane;
	while (i > 0 && le_less(&h->v[i], &h->v[(i - 1) / 2])) {
		struct lane_end t = h->v[i];

		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct lane_end heap_pop(struct heap *h)
{
	struct lane_end top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct lane_end t;

		if (l < h->n && le_less(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && le_less(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			break;
		t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
	return top;
}

struct trace {
	const struct pt_model *m;
	struct pt_analysis a;
	int64_t *us_start, *us_end;     /* per id, from the earliest start */
	uint32_t *lane;                 /* per id, from 0 within its capture */
	uint32_t *nlanes;               /* per capture */
};

/*
 * Greedy interval partitioning, per capture, in start order: an execution
 * takes the lowest-numbered lane whose last event ended strictly before it
 * starts, or opens a new one.  In start order that uses as few lanes as
 * the most executions ever running at once.
 */
static void assign_lanes(struct trace *t)
{
	const struct pt_model *m = t->m;
	size_t nc = m->ncaptures ? m->ncaptures : 1, i, c;
	struct heap busy = { NULL, 0, 0 }, idle = { NULL, 0, 0 };
	uint32_t *order, *first;

	/* Bucket the ids by capture, keeping start order within each. */
	first = pt_xcalloc(nc + 1, sizeof *first);
	order = pt_xcalloc(m->n ? m->n : 1, sizeof *order);
	for (i = 0; i < m->n; i++)
		first[m->execs[i]->capture + 1]++;
	for (c = 0; c < nc; c++)
		first[c + 1] += first[c];
	for (i = 0; i < m->n; i++)
		order[first[m->execs[i]->capture]++] = (uint32_t)i;
	for (c = nc; c > 0; c--)
		first[c] = first[c - 1];
	first[0] = 0;

	for (c = 0; c < nc; c++) {
		busy.n = idle.n = 0;
		for (i = first[c]; i < first[c + 1]; i++) {
			uint32_t id = order[i], lane;

			while (busy.n && busy.v[0].end < t->us_start[id]) {
				struct lane_end le = heap_pop(&busy);

				heap_push(&idle, 0, le.lane);
			}
			if (idle.n)
				lane = heap_pop(&idle).lane;
			else
				lane = t->nlanes[c]++;
			t->lane[id] = lane;
			heap_push(&busy, t->us_end[id], lane);
		}
	}
	free(busy.v);
	free(idle.v);
	free(order);
	free(first);
}

/* ---- events ---- */

static void meta_event(struct out *o, uint32_t pid, uint32_t tid,
		       const char *name, const char *key, const char *sval,
		       int64_t ival)
{
	event(o, "{\"ph\":\"M\",\"ts\":0,\"pid\":");
	i64(o, pid);
	lit(o, ",\"tid\":");
	i64(o, tid);
	lit(o, ",\"name\":");
	str(o, name);
	lit(o, ",\"args\":{");
	str(o, key);
	pt_sb_addch(&o->sb, ':');
	if (sval)
		str(o, sval);
	else
		i64(o, ival);
	lit(o, "}}");
}

static void process_names(struct trace *t, struct out *o)
{
	const struct pt_model *m = t->m;
	struct pt_sb name = PT_SB_INIT;
	size_t c, l;

	for (c = 0; c < m->ncaptures; c++) {
		pt_sb_reset(&name);
		pt_capture_title(m, c, &name);
		meta_event(o, (uint32_t)c + 1, 0, "process_name", "name",
			   name.buf, 0);
		meta_event(o, (uint32_t)c + 1, 0, "process_sort_index",
			   "sort_index", NULL, (int64_t)c);
		for (l = 0; l < t->nlanes[c]; l++) {
			pt_sb_reset(&name);
			pt_sb_addf(&name, "lane %zu", l + 1);
			meta_event(o, (uint32_t)c + 1, (uint32_t)l + 1,
				   "thread_name", "name", name.buf, 0);
			meta_event(o, (uint32_t)c + 1, (uint32_t)l + 1,
				   "thread_sort_index", "sort_index", NULL,
				   (int64_t)l);
		}
	}
	pt_sb_release(&name);
}

static void opt_int(struct out *o, const char *key, int64_t v, int known)
{
	lit(o, ",\"");
	lit(o, key);
	lit(o, "\":");
	if (known)
		i64(o, v);
	else
		lit(o, "null");
}

static void exec_event(struct trace *t, struct out *o, const struct pt_exec *e,
		       struct pt_sb *tmp)
{
	size_t i;

	event(o, "{\"ph\":\"X\",\"ts\":");
	i64(o, t->us_start[e->id]);
	lit(o, ",\"dur\":");
	i64(o, t->us_end[e->id] - t->us_start[e->id]);
	lit(o, ",\"pid\":");
	i64(o, e->capture + 1);
	lit(o, ",\"tid\":");
	i64(o, t->lane[e->id] + 1);
	lit(o, ",\"name\":");
	pt_sb_reset(tmp);
	pt_exec_label(e, tmp);
	str_n(o, tmp->buf, tmp->len);
	lit(o, e->type == PT_EXEC_FORK ? ",\"cat\":\"fork\""
				       : ",\"cat\":\"exec\"");
	lit(o, ",\"args\":{\"argv\":[");
	for (i = 0; i < e->argc; i++) {
		if (i)
			pt_sb_addch(&o->sb, ',');
		str(o, pt_exec_arg(e, i));
	}
	lit(o, "],\"pid\":");
	i64(o, e->pid);
	lit(o, ",\"ppid\":");
	i64(o, e->ppid);
	lit(o, ",\"cwd\":");
	str(o, e->cwd);
	lit(o, ",\"exe\":");
	str(o, e->exe);
	opt_int(o, "exit_code", e->exit_code, e->exit_code >= 0);
	opt_int(o, "signal", e->signal, e->signal >= 0);
	lit(o, ",\"user_cpu_s\":");
	if (e->utime_us >= 0)
		secs_us(o, e->utime_us);
	else
		lit(o, "null");
	lit(o, ",\"sys_cpu_s\":");
	if (e->stime_us >= 0)
		secs_us(o, e->stime_us);
	else
		lit(o, "null");
	opt_int(o, "max_rss_kb", e->maxrss_kb, e->maxrss_kb >= 0);
	{
		/* Known only from a capture made with --files. */
		int64_t w = pt_model_wait(t->m, e);

		if (w >= 0)
			opt_int(o, "wait_ns", w, 1);
	}
	lit(o, ",\"package\":");
	pt_sb_reset(tmp);
	pt_exec_package(e, tmp);
	if (tmp->len)
		str_n(o, tmp->buf, tmp->len);
	else
		lit(o, "null");
	if (e->flags & PT_EXF_UNTRACED)
		lit(o, ",\"untraced\":true");
	if (e->flags & PT_EXF_END_UNKNOWN)
		lit(o, ",\"end_unknown\":true");
	if (e->flags & PT_EXF_KILLED)
		lit(o, ",\"killed\":true");
	if (e->flags & PT_EXF_ARGV_TRUNC)
		lit(o, ",\"argv_truncated\":true");
	lit(o, "}}");
}

/*
 * The events the program wrote about itself (model.h, pt_sub), on its
 * lane inside its slice.  They come by start, the longer first, so each
 * slice's enclosing one is on the stack; one that would overlap the end
 * of the slice around it (events of several threads, rounding to whole
 * microseconds) is cut there, so slices on the lane always nest.
 */
#define SUB_DEPTH 256

static void sub_events(struct trace *t, struct out *o, const struct pt_exec *e,
		       struct pt_sb *tmp)
{
	int64_t end[SUB_DEPTH], s0, s1;
	size_t n, i, depth = 1;
	const struct pt_sub *sub = pt_model_subs(t->m, e, &n);

	end[0] = t->us_end[e->id];
	for (i = 0; i < n; i++, sub++) {
		s0 = (sub->start_ns - t->a.t0) / 1000;
		s1 = (sub->start_ns + sub->dur_ns - t->a.t0) / 1000;
		if (s0 < t->us_start[e->id])
			s0 = t->us_start[e->id];
		while (depth > 1 && (end[depth - 1] < s0 ||
				     (end[depth - 1] == s0 && sub->ph == 'X')))
			depth--;
		if (s0 > end[depth - 1])
			s0 = end[depth - 1];
		if (s1 > end[depth - 1])
			s1 = end[depth - 1];
		if (sub->ph == 'C') {
			event(o, "{\"ph\":\"C\",\"ts\":");
			i64(o, s0);
			lit(o, ",\"pid\":");
			i64(o, e->capture + 1);
			lit(o, ",\"name\":");
			pt_sb_reset(tmp);
			pt_sb_addf(tmp, "%s (pid %d)", sub->name, e->pid);
			str_n(o, tmp->buf, tmp->len);
		} else {
			event(o, sub->ph == 'X' ? "{\"ph\":\"X\",\"ts\":"
						: "{\"ph\":\"i\",\"ts\":");
			i64(o, s0);
			if (sub->ph == 'X') {
				lit(o, ",\"dur\":");
				i64(o, s1 - s0);
			} else {
				lit(o, ",\"s\":\"t\"");
			}
			lit(o, ",\"pid\":");
			i64(o, e->capture + 1);
			lit(o, ",\"tid\":");
			i64(o, t->lane[e->id] + 1);
			lit(o, ",\"name\":");
			str(o, sub->name);
		}
		lit(o, ",\"cat\":");
		str(o, *sub->cat ? sub->cat : "program");
		if (sub->args) {
			/* Written by the model from parsed JSON: valid. */
			lit(o, ",\"args\":");
			lit(o, sub->args);
		}
		lit(o, "}");
		if (sub->ph == 'X' && depth < SUB_DEPTH)
			end[depth++] = s1;
	}
}

/*
 * The flow from parent p to child e: it starts on p's lane when e starts
 * (inside p's slice, clamped to it) and ends on e's lane at e's start,
 * both bound to the slice that encloses them ("bp":"e").
 */
static void flow_events(struct trace *t, struct out *o, const struct pt_exec *e)
{
	const struct pt_exec *p = e->parent;
	int64_t ts = t->us_start[e->id];

	if (ts < t->us_start[p->id])
		ts = t->us_start[p->id];
	if (ts > t->us_end[p->id])
		ts = t->us_end[p->id];
	event(o, "{\"ph\":\"s\",\"ts\":");
	i64(o, ts);
	lit(o, ",\"pid\":");
	i64(o, p->capture + 1);
	lit(o, ",\"tid\":");
	i64(o, t->lane[p->id] + 1);
	lit(o, ",\"name\":\"spawn\",\"cat\":\"flow\",\"id\":");
	i64(o, (int64_t)e->id + 1);
	lit(o, ",\"bp\":\"e\"}");
	event(o, "{\"ph\":\"f\",\"ts\":");
	i64(o, t->us_start[e->id]);
	lit(o, ",\"pid\":");
	i64(o, e->capture + 1);
	lit(o, ",\"tid\":");
	i64(o, t->lane[e->id] + 1);
	lit(o, ",\"name\":\"spawn\",\"cat\":\"flow\",\"id\":");
	i64(o, (int64_t)e->id + 1);
	lit(o, ",\"bp\":\"e\"}");
}

struct counter {
	int64_t ts;
	uint32_t running, busy;
	int pending;
};

static void counter_event(struct out *o, uint32_t pid, const struct counter *c)
{
	event(o, "{\"ph\":\"C\",\"ts\":");
	i64(o, c->ts);
	lit(o, ",\"pid\":");
	i64(o, pid);
	lit(o, ",\"name\":\"running processes\",\"args\":{\"running\":");
	i64(o, c->running);
	lit(o, ",\"busy\":");
	i64(o, c->busy);
	lit(o, "}}");
}

/*
 * One counter sample per capture per microsecond in which its numbers
 * changed: "running" counts every running execution, "busy" those with no
 * running descendant (see pt_sweep).
 */
static void counters(struct trace *t, struct out *o)
{
	size_t nc = t->m->ncaptures ? t->m->ncaptures : 1, i;
	struct counter *cur = pt_xcalloc(nc, sizeof *cur);
	struct pt_sweep s;

	pt_sweep_init(&s, &t->a);
	while (pt_sweep_next(&s)) {
		int64_t ts = (s.t - t->a.t0) / 1000;

		for (i = 0; i < s.ndirty; i++) {
			struct counter *c = &cur[s.dirty[i]];

			if (c->pending && c->ts != ts)
				counter_event(o, s.dirty[i] + 1, c);
			c->ts = ts;
			c->running = s.cap_running[s.dirty[i]];
			c->busy = s.cap_busy[s.dirty[i]];
			c->pending = 1;
		}
		if (o->sb.len >= FLUSH_AT)
			out_flush(o);
	}
	for (i = 0; i < nc; i++)
		if (cur[i].pending)
			counter_event(o, (uint32_t)i + 1, &cur[i]);
	pt_sweep_free(&s);
	free(cur);
}

/* ---- metadata ---- */

static const char *const meta_keys[] = {
	"host", "kernel", "cpus", "proftrace_version", "command",
	"CI_PIPELINE_ID", "CI_JOB_ID", "CI_JOB_NAME", "GITHUB_RUN_ID",
	"GITHUB_JOB", NULL,
};

static void capture_meta(struct out *o, const struct pt_model *m, size_t c)
{
	const char *const *k;
	const char *v;
	int first = 1;

	for (k = meta_keys; *k; k++) {
		v = pt_model_meta(m, c, *k);
		if (!v)
			continue;
		if (!first)
			pt_sb_addch(&o->sb, ',');
		first = 0;
		str(o, *k);
		pt_sb_addch(&o->sb, ':');
		str(o, v);
	}
	v = pt_model_meta(m, c, "start_realtime_ns");
	if (v) {
		struct pt_sb iso = PT_SB_INIT;

		pt_sb_add_iso8601(&iso, strtoll(v, NULL, 10));
		if (!first)
			pt_sb_addch(&o->sb, ',');
		lit(o, "\"start_time\":");
		str(o, iso.buf);
		pt_sb_release(&iso);
	}
}

static void metadata(struct trace *t, struct out *o)
{
	const struct pt_model *m = t->m;
	struct pt_sb iso = PT_SB_INIT;
	size_t c;

	lit(o, "\"metadata\":{");
	if (m->ncaptures) {
		capture_meta(o, m, 0);
		if (o->sb.buf[o->sb.len - 1] != '{')
			pt_sb_addch(&o->sb, ',');
	}
	lit(o, "\"converter\":\"proftrace " PT_VERSION "\",\"executions\":");
	i64(o, (int64_t)m->n);
	/* What ts 0 is, for anyone who lines this trace up with another. */
	lit(o, ",\"time_origin_unix_ns\":");
	i64(o, t->a.t0);
	pt_sb_add_iso8601(&iso, t->a.t0);
	lit(o, ",\"time_origin\":");
	str(o, iso.buf);
	pt_sb_release(&iso);
	if (m->damaged)
		lit(o, ",\"damaged\":true");
	lit(o, ",\"captures\":[");
	for (c = 0; c < m->ncaptures; c++) {
		lit(o, c ? ",{" : "{");
		capture_meta(o, m, c);
		if (o->sb.buf[o->sb.len - 1] != '{')
			pt_sb_addch(&o->sb, ',');
		lit(o, "\"pid\":");
		i64(o, (int64_t)c + 1);
		pt_sb_addch(&o->sb, '}');
	}
	lit(o, "]}");
}

/* The executions' events, formatted two chunks at a time (par.h). */
struct exec_job {
	struct trace *t;
	struct out *o;          /* the file's; only emit writes to it */
	size_t prior;           /* events written before the first chunk */
};

static void exec_chunk(void *arg, size_t lo, size_t hi, struct pt_sb *sb)
{
	const struct exec_job *j = arg;
	struct out o = { NULL, *sb, 0, j->prior + lo };
	struct pt_sb tmp = PT_SB_INIT;

	for (; lo < hi; lo++) {
		const struct pt_exec *e = j->t->m->execs[lo];

		exec_event(j->t, &o, e, &tmp);
		sub_events(j->t, &o, e, &tmp);
		if (e->parent)
			flow_events(j->t, &o, e);
	}
	*sb = o.sb;
	pt_sb_release(&tmp);
}

static int exec_emit(void *arg, struct pt_sb *sb)
{
	struct out *o = ((const struct exec_job *)arg)->o;

	if (sb->len && fwrite(sb->buf, 1, sb->len, o->f) != sb->len)
		o->err = errno ? errno : EIO;
	return o->err ? -1 : 0;
}

int pt_json_write(const struct pt_model *m, FILE *f)
{
	struct out o = { f, PT_SB_INIT, 0, 0 };
	struct trace t;
	struct exec_job job;
	size_t nc = m->ncaptures ? m->ncaptures : 1, i;

	memset(&t, 0, sizeof t);
	t.m = m;
	pt_analyze_tree(&t.a, m);
	t.us_start = pt_xcalloc(m->n ? m->n : 1, sizeof *t.us_start);
	t.us_end = pt_xcalloc(m->n ? m->n : 1, sizeof *t.us_end);
	t.lane = pt_xcalloc(m->n ? m->n : 1, sizeof *t.lane);
	t.nlanes = pt_xcalloc(nc, sizeof *t.nlanes);
	/* Flooring both ends keeps the order of all starts and ends, so
	 * lanes packed on these values never overlap in the output. */
	for (i = 0; i < m->n; i++) {
		t.us_start[i] = (m->execs[i]->start_ns - t.a.t0) / 1000;
		t.us_end[i] = (m->execs[i]->end_ns - t.a.t0) / 1000;
	}
	assign_lanes(&t);

	pt_sb_grow(&o.sb, FLUSH_AT + 65536);
	lit(&o, "{\"traceEvents\":[\n");
	process_names(&t, &o);
	out_flush(&o);
	job.t = &t;
	job.o = &o;
	job.prior = o.events;
	/* A full disk will not get emptier: emit stops at the first error. */
	if (!o.err)
		pt_par_format(m->n, EXECS_PER_CHUNK, exec_chunk, exec_emit, &job);
	if (m->n)
		o.events++;
	if (!o.err)
		counters(&t, &o);
	lit(&o, "\n],\n\"displayTimeUnit\":\"ms\",\n");
	metadata(&t, &o);
	lit(&o, "}\n");
	out_flush(&o);
	if (!o.err && fflush(f) != 0)
		o.err = errno ? errno : EIO;

	pt_sb_release(&o.sb);
	free(t.us_start);
	free(t.us_end);
	free(t.lane);
	free(t.nlanes);
	pt_analysis_free(&t.a);
	if (o.err) {
		errno = o.err;
		return -1;
	}
	return 0;
}
