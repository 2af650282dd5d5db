/*
 * Events that programs wrote about themselves (model.h, struct pt_sub):
 * TRACE records are parsed as they are read (capture/chrome.h), their
 * times settled once their capture's clock offset is known, and the
 * events given to executions once all executions are known.
 *
 * Clock: a file that gives beginningOfTime (clang) counts ts from it, in
 * epoch microseconds; a file whose ts are themselves epoch microseconds
 * (any after 2001, as dune writes them) is taken as it is; otherwise ts
 * count from the writer's start.  Events are kept inside the span of
 * their execution: cut to it, or left out when wholly outside.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/build.h"
#include "model/model.h"
#include "capture/chrome.h"
#include "base/jsonp.h"
#include "base/quote.h"
#include "base/strbuf.h"

#define FILE_EVENTS_MAX  (1u << 20)     /* events kept from one file */
#define RUN_EVENTS_MAX   (8u << 20)     /* and from a whole run */
#define EPOCH_US_MIN     1e15           /* 2001-09-09: ts is epoch time */

struct rawev {
	double ts, dur;
	int64_t tid, arg_pid;
	const char *name, *cat, *detail, *args, *list;
	char ph;
};

struct tfile {
	uint32_t capture, pid;
	uint64_t mono;                  /* when it was taken */
	int64_t taken_ns;               /* the same, epoch */
	const char *from, *path;
	uint64_t hash;                  /* of its JSON, with its length */
	size_t jlen;
	struct pt_chrome_info info;
	size_t first, n;                /* its events in raw[] */
};

struct pt_subs {
	struct rawev *raw;
	size_t nraw, craw;
	struct tfile *file;
	size_t nfile, cfile, cap_first;
	struct pt_sub *sub;             /* grouped by execution */
	size_t nsub;
	size_t *first;                  /* per execution id; [n] */
	size_t nexec;
	struct pt_sub_stats st;
	char *note;
	const char *reading_from;       /* the file being parsed: its tool */
	struct strtab *str;
};

static struct pt_subs *subs_of(struct pt_model_priv *p)
{
	if (!p->subs) {
		p->subs = pt_xcalloc(1, sizeof *p->subs);
		p->subs->str = &p->str;
	}
	return p->subs;
}

static void note(struct pt_subs *s, const char *path, const char *what,
		 size_t at, int with_at)
{
	struct pt_sb sb = PT_SB_INIT;

	if (s->note)
		return;
	pt_sb_addf(&sb, "%s: %s", path, what);
	if (with_at)
		pt_sb_addf(&sb, " (byte %zu)", at);
	s->note = pt_sb_detach(&sb, NULL);
	s->st.first_note = s->note;
}

static const char *intern(void *arg, const char *str, size_t n)
{
	struct pt_subs *s = arg;

	return pt_str_intern_ptr(s->str, str, n);
}

static void add_event(void *arg, const struct pt_chrome_event *ev)
{
	struct pt_subs *s = arg;
	struct rawev *r;

	/* clang's "Total X" events sum a phase over the run at ts 0: not a
	 * moment of the timeline. */
	if (s->reading_from && !strcmp(s->reading_from, "clang") &&
	    !strncmp(ev->name, "Total ", 6))
		return;
	if (s->nraw >= RUN_EVENTS_MAX) {
		s->st.skipped++;
		return;
	}
	if (s->nraw == s->craw) {
		s->craw = s->craw ? 2 * s->craw : 1024;
		s->raw = pt_xrealloc(s->raw, s->craw * sizeof *s->raw);
	}
	r = &s->raw[s->nraw++];
	r->ts = ev->ts_us;
	r->dur = ev->dur_us;
	r->tid = ev->tid;
	r->arg_pid = ev->arg_pid;
	r->name = ev->name;
	r->cat = ev->cat;
	r->detail = ev->detail;
	r->args = ev->args;
	r->list = ev->list;
	r->ph = ev->ph;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3u;
	return h;
}

/*
 * Was the same known tool's file sent already, by another process of the
 * same compile?  (A clang driver and the compiler process it starts both
 * name the file; they end together, so a look at the last few files of
 * the capture is enough.)  Paths are interned: equal ones are one pointer.
 */
static int sent_twice(const struct pt_subs *s, const struct tfile *f)
{
	size_t i, lo = s->nfile - 1 > s->cap_first + 16 ? s->nfile - 17
							: s->cap_first;

	if (!strcmp(f->from, "dir"))
		return 0;
	for (i = s->nfile - 1; i-- > lo;)
		if (s->file[i].path == f->path && s->file[i].jlen == f->jlen &&
		    s->file[i].hash == f->hash && s->file[i].from == f->from)
			return 1;
	return 0;
}

void pt_sub_add_file(struct build *b, uint32_t pid, uint64_t t,
		     const unsigned char *payload, size_t len)
{
	struct pt_subs *s = subs_of(b->p);
	const char *str, *json = NULL, *fnote = NULL;
	size_t pos = 0, n, jlen = 0;
	struct tfile *f;
	unsigned tag;

	if (s->nfile == s->cfile) {
		s->cfile = s->cfile ? 2 * s->cfile : 16;
		s->file = pt_xrealloc(s->file, s->cfile * sizeof *s->file);
	}
	f = &s->file[s->nfile++];
	memset(f, 0, sizeof *f);
	f->capture = b->capture;
	f->pid = pid;
	f->mono = t;
	f->from = f->path = "";
	while (pt_wire_next_item(payload, len, &pos, &tag, &str, &n) > 0) {
		switch (tag) {
		case PT_TAG_TRACE_FROM:
			f->from = intern(s, str, n);
			break;
		case PT_TAG_PATH:
			f->path = intern(s, str, n);
			break;
		case PT_TAG_TRACE_NOTE:
			fnote = str;
			break;
		case PT_TAG_TRACE_JSON:
			json = str;
			jlen = n;
			break;
		}
	}
	if (json) {
		f->jlen = jlen;
		f->hash = fnv1a(json, jlen);
		if (sent_twice(s, f)) {
			s->nfile--;
			return;
		}
	}
	s->st.files++;
	if (fnote) {
		if (!strncmp(fnote, "refused", 7))
			s->st.refused++;
		else
			s->st.cut++;
		note(s, f->path, fnote, 0, 0);
	}
	f->first = s->nraw;
	if (json) {
		s->reading_from = f->from;
		pt_chrome_parse(json, jlen, FILE_EVENTS_MAX, intern, add_event,
				s, &f->info);
		s->reading_from = NULL;
		s->st.skipped += f->info.skipped;
		/* A file cut at the cap ends early, as its note says. */
		if (f->info.err && !(fnote && f->info.cut)) {
			s->st.malformed++;
			note(s, f->path, f->info.err, f->info.err_at, 1);
		}
	}
	f->n = s->nraw - f->first;
}

void pt_sub_end_capture(struct build *b)
{
	struct pt_subs *s = b->p->subs;
	size_t i;

	if (!s)
		return;
	for (i = s->cap_first; i < s->nfile; i++) {
		struct tfile *f = &s->file[i];

		if (b->ns.n)
			f->pid = pt_pidns_resolve(&b->ns, f->pid);
		f->taken_ns = (int64_t)f->mono + b->offset;
	}
	s->cap_first = s->nfile;
}

/* ---- attaching ---- */

struct byproc {
	const struct pt_exec **e;       /* by capture, pid, start */
	size_t n;
};

static int cmp_proc(const void *x, const void *y)
{
	const struct pt_exec *a = *(const struct pt_exec *const *)x;
	const struct pt_exec *b = *(const struct pt_exec *const *)y;

	if (a->capture != b->capture)
		return a->capture < b->capture ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The latest execution of pid in capture c that started by t, or NULL. */
static const struct pt_exec *find(const struct byproc *bp, uint32_t c,
				  int64_t pid, int64_t t)
{
	size_t lo = 0, hi = bp->n;

	/* The first entry after (c, pid, t). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pt_exec *e = bp->e[mid];

		if (e->capture < c || (e->capture == c && (e->pid < pid ||
		    (e->pid == pid && e->start_ns <= t))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	return bp->e[lo - 1]->capture == c && bp->e[lo - 1]->pid == pid ?
	       bp->e[lo - 1] : NULL;
}

struct placed {
	struct pt_sub sub;
	uint32_t exec;
};

static int cmp_placed(const void *x, const void *y)
{
	const struct placed *a = x, *b = y;

	if (a->exec != b->exec)
		return a->exec < b->exec ? -1 : 1;
	if (a->sub.start_ns != b->sub.start_ns)
		return a->sub.start_ns < b->sub.start_ns ? -1 : 1;
	if (a->sub.dur_ns != b->sub.dur_ns)
		return a->sub.dur_ns > b->sub.dur_ns ? -1 : 1;
	return 0;
}

static int64_t us_to_ns(double us)
{
	double ns = us * 1000.0;

	if (ns > 9e18)
		return INT64_MAX / 2;
	if (ns < -9e18)
		return INT64_MIN / 2;
	return (int64_t)ns;
}

/* How far a build tool's clock may be from ours, for the times it gives
 * around a process it ran (dune: before the spawn, after the wait). */
#define SPAWN_SLACK_NS 10000000

static const char *base_name(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

/*
 * The child of writer that a dune 2 process event (name: the program,
 * list: its arguments; no pid) stands for: of those with that program
 * and those arguments that started within the event, the one started
 * nearest to its start; or NULL.
 */
static const struct pt_exec *child_by_argv(const struct pt_exec *writer,
					   const struct rawev *r,
					   int64_t start, int64_t end,
					   struct pt_sb *sb)
{
	const struct pt_exec *c, *best = NULL;
	int64_t gap, best_gap = INT64_MAX;
	size_t i;

	for (c = writer->first_child; c; c = c->next_sibling) {
		gap = c->start_ns > start ? c->start_ns - start
					  : start - c->start_ns;
		if (c->start_ns < start - SPAWN_SLACK_NS ||
		    c->start_ns > end + SPAWN_SLACK_NS || gap >= best_gap ||
		    !c->argc ||
		    strcmp(base_name(pt_exec_arg(c, 0)), r->name))
			continue;
		pt_sb_reset(sb);
		pt_sb_addch(sb, '[');
		for (i = 1; i < c->argc; i++) {
			const char *a = pt_exec_arg(c, i);

			if (i > 1)
				pt_sb_addch(sb, ',');
			pt_quote_json(sb, a, strlen(a), PT_JSON_AS_READ);
		}
		pt_sb_addch(sb, ']');
		if (!strcmp(sb->buf, r->list)) {
			best = c;
			best_gap = gap;
		}
	}
	return best;
}

/* Place one event of file f, written by writer, into out; 1 if kept. */
static int place(struct pt_subs *s, const struct byproc *bp,
		 const struct tfile *f, const struct pt_exec *writer,
		 const struct rawev *r, double base_us, struct placed *out,
		 struct pt_sb *sb)
{
	const struct pt_exec *owner = writer, *e = NULL;
	int64_t start = us_to_ns(base_us + r->ts), end;

	/* The end as the start is computed, not start + dur: epoch times in
	 * nanoseconds exceed a double's 53 bits, so each is rounded (to
	 * 256 ns), and an event that ends where the next starts, as a tool
	 * writes a sequence, must still end exactly there: a nanosecond
	 * later and the next one nests inside it, cut to its end. */
	end = r->ph == 'X' ? us_to_ns(base_us + (r->ts + r->dur)) : start;
	/* A build tool's event about a process it ran: that process's.
	 * dune 3 names its pid; dune 2 its program and arguments. */
	if (!strcmp(f->from, "dune")) {
		if (r->arg_pid > 0)
			e = find(bp, f->capture, r->arg_pid, end);
		else if (r->list)
			e = child_by_argv(writer, r, start, end, sb);
		if (e && e->end_ns >= start - SPAWN_SLACK_NS &&
		    e->start_ns <= end + SPAWN_SLACK_NS && e != writer)
			owner = e;
	}
	if (end < owner->start_ns || start > owner->end_ns) {
		s->st.outside++;
		return 0;
	}
	if (start < owner->start_ns || end > owner->end_ns) {
		/* A build tool's times for a process it ran include its own
		 * fork and wait: cut without a word. */
		s->st.clipped += owner == writer;
		if (start < owner->start_ns)
			start = owner->start_ns;
		if (end > owner->end_ns)
			end = owner->end_ns;
	}
	out->exec = owner->id;
	out->sub.start_ns = start;
	out->sub.dur_ns = end - start;
	out->sub.name = r->name;
	out->sub.cat = r->cat;
	out->sub.detail = r->detail;
	out->sub.args = r->args;
	out->sub.tid = r->tid;
	out->sub.ph = r->ph;
	return 1;
}

void pt_sub_attach(struct pt_model *m)
{
	struct pt_subs *s = m->priv->subs;
	struct pt_sb sb = PT_SB_INIT;
	struct placed *pl;
	struct byproc bp;
	size_t i, k, np = 0;

	if (!s)
		return;
	free(s->sub);
	free(s->first);
	s->st.events = s->st.outside = s->st.clipped = 0;
	s->st.orphans = 0;
	bp.n = m->n;
	bp.e = pt_xmalloc((m->n ? m->n : 1) * sizeof *bp.e);
	for (i = 0; i < m->n; i++)
		bp.e[i] = m->execs[i];
	qsort(bp.e, bp.n, sizeof *bp.e, cmp_proc);
	pl = pt_xmalloc((s->nraw ? s->nraw : 1) * sizeof *pl);
	for (i = 0; i < s->nfile; i++) {
		const struct tfile *f = &s->file[i];
		const struct pt_exec *w = find(&bp, f->capture, f->pid,
					       f->taken_ns);
		double base = 0, max_ts = 0;

		if (!f->n)
			continue;
		if (!w) {
			s->st.orphans++;
			note(s, f->path, "no traced process of its pid", 0, 0);
			continue;
		}
		for (k = 0; k < f->n; k++)
			if (s->raw[f->first + k].ts > max_ts)
				max_ts = s->raw[f->first + k].ts;
		if (f->info.has_epoch)
			base = f->info.epoch_us;
		else if (max_ts < EPOCH_US_MIN)
			base = (double)w->start_ns / 1000.0;
		for (k = 0; k < f->n; k++)
			np += place(s, &bp, f, w, &s->raw[f->first + k], base,
				    &pl[np], &sb);
	}
	qsort(pl, np, sizeof *pl, cmp_placed);
	s->nexec = m->n;
	s->first = pt_xcalloc(m->n + 1, sizeof *s->first);
	s->sub = pt_xmalloc((np ? np : 1) * sizeof *s->sub);
	for (i = 0, k = 0; i < m->n; i++) {
		s->first[i] = k;
		while (k < np && pl[k].exec == i) {
			s->sub[k] = pl[k].sub;
			k++;
		}
	}
	s->first[m->n] = np;
	s->nsub = np;
	s->st.events = np;
	free(pl);
	free(bp.e);
	pt_sb_release(&sb);
}

const struct pt_sub *pt_model_subs(const struct pt_model *m,
				   const struct pt_exec *e, size_t *n)
{
	const struct pt_subs *s = m->priv ? m->priv->subs : NULL;

	*n = 0;
	if (!s || !s->first || e->id >= s->nexec)
		return NULL;
	*n = s->first[e->id + 1] - s->first[e->id];
	return *n ? &s->sub[s->first[e->id]] : NULL;
}

const struct pt_sub_stats *pt_model_sub_stats(const struct pt_model *m)
{
	static const struct pt_sub_stats none;
	const struct pt_subs *s = m->priv ? m->priv->subs : NULL;

	return s ? &s->st : &none;
}

int pt_sub_stats_line(const struct pt_model *m, struct pt_sb *sb)
{
	const struct pt_sub_stats *st = pt_model_sub_stats(m);
	const char *sep = "";
	size_t at = sb->len;

#define PART(v, what) \
	if (v) { \
		pt_sb_addf(sb, "%s%llu %s", sep, (unsigned long long)(v), what); \
		sep = ", "; \
	}
	PART(st->refused, st->refused == 1 ? "trace file refused"
					   : "trace files refused");
	PART(st->cut, st->cut == 1 ? "trace file cut" : "trace files cut");
	PART(st->malformed, st->malformed == 1 ? "malformed trace file"
					       : "malformed trace files");
	PART(st->orphans, st->orphans == 1 ? "trace file of no traced process"
					   : "trace files of no traced process");
	PART(st->outside, st->outside == 1 ?
	     "event outside its writer's lifetime left out" :
	     "events outside their writer's lifetime left out");
	PART(st->clipped, st->clipped == 1 ?
	     "event cut to its writer's lifetime" :
	     "events cut to their writer's lifetime");
	PART(st->skipped, st->skipped == 1 ? "event not kept"
					   : "events not kept");
#undef PART
	if (sb->len == at)
		return 0;
	if (st->first_note)
		pt_sb_addf(sb, " (first: %s)", st->first_note);
	return 1;
}

void pt_sub_free(struct pt_model_priv *p)
{
	struct pt_subs *s = p->subs;

	if (!s)
		return;
	free(s->raw);
	free(s->file);
	free(s->sub);
	free(s->first);
	free(s->note);
	free(s);
	p->subs = NULL;
}
