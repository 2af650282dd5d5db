/*
 * The files each execution accessed (`record --files`): FILES records,
 * read as the capture is, and given to executions once they are known.
 * Paths are interned in the model's string table: 300 headers that every
 * compile reads are kept once.
 */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "model/build.h"
#include "model/model.h"
#include "proftrace/wire.h"

struct rawacc {
	uint32_t capture, pid;
	uint64_t mono;                  /* when the record was sent */
	int64_t sent_ns;                /* the same, epoch */
	uint64_t at;                    /* the access, monotonic */
	const char *path;
	char kind;
};

/* A FILES_WAIT: the process's run-queue wait since its fork, as its
 * image's table went out. */
struct rawwait {
	uint32_t capture, pid;
	uint64_t mono;
	int64_t sent_ns;
	uint64_t wait_ns;
};

struct pt_files {
	struct rawacc *raw;
	size_t nraw, craw, cap_first;
	struct rawwait *rw;
	size_t nrw, crw, rw_first;
	int64_t *wait;                  /* per execution id: its own wait, -1 */
	struct pt_file_access *acc;     /* grouped by execution */
	size_t *first;                  /* per execution id; [nexec] */
	size_t nexec;
	uint64_t dropped, orphans;
	struct strtab *str;
};

static struct pt_files *files_of(struct pt_model_priv *p)
{
	if (!p->files) {
		p->files = pt_xcalloc(1, sizeof *p->files);
		p->files->str = &p->str;
	}
	return p->files;
}

static int known_kind(char k)
{
	return k == PT_FILE_READ || k == PT_FILE_WRITE || k == PT_FILE_DELETE ||
	       k == PT_FILE_NEW || k == PT_FILE_MKDIR || k == PT_FILE_PROBE ||
	       k == PT_FILE_DIRSTAT || k == PT_FILE_MISSING;
}

void pt_files_add(struct build *b, uint32_t pid, uint64_t t,
		  const unsigned char *payload, size_t len)
{
	struct pt_files *f = files_of(b->p);
	size_t pos = 0, n;
	const char *s;
	unsigned tag;
	uint64_t base = 0, at = 0;
	const char *times = NULL;

	while (pt_wire_next_item(payload, len, &pos, &tag, &s, &n) > 0) {
		const char *path;
		struct rawacc *r;

		if (tag == PT_TAG_FILES_BASE) {
			base = strtoull(s, NULL, 10);
			continue;
		}
		if (tag == PT_TAG_FILES_TIMES) {
			times = s;
			continue;
		}
		if (tag == PT_TAG_FILES_DROPPED) {
			f->dropped += strtoull(s, NULL, 10);
			continue;
		}
		if (tag == PT_TAG_FILES_WAIT) {
			struct rawwait *w;

			if (!n || s[0] < '0' || s[0] > '9')
				continue;
			if (f->nrw == f->crw) {
				f->crw = f->crw ? 2 * f->crw : 256;
				f->rw = pt_xrealloc(f->rw, f->crw * sizeof *f->rw);
			}
			w = &f->rw[f->nrw++];
			w->capture = b->capture;
			w->pid = pid;
			w->mono = t;
			w->wait_ns = strtoull(s, NULL, 10) * 1000000; /* sent in ms */
			continue;
		}
		if (tag != PT_TAG_FILE)
			continue;
		/* Its time, the next of TIMES, counts whether it is kept. */
		if (times) {
			uint64_t d = 0;

			while (*times == ' ')
				times++;
			while (*times >= '0' && *times <= '9')
				d = d * 10 + (uint64_t)(*times++ - '0');
			at += d;
		}
		/* "K PATH" */
		if (n < 3 || s[1] != ' ' || s[2] != '/' || !known_kind(s[0]))
			continue;
		path = s + 2;
		if (f->nraw == f->craw) {
			f->craw = f->craw ? 2 * f->craw : 1024;
			f->raw = pt_xrealloc(f->raw, f->craw * sizeof *f->raw);
		}
		r = &f->raw[f->nraw++];
		r->capture = b->capture;
		r->pid = pid;
		r->mono = t;
		r->at = base + at * 1000;
		r->kind = s[0];
		r->path = pt_str_intern_ptr(f->str, path, (size_t)(s + n - path));
	}
}

void pt_files_end_capture(struct build *b)
{
	struct pt_files *f = b->p->files;
	size_t i;

	if (!f)
		return;
	for (i = f->cap_first; i < f->nraw; i++) {
		struct rawacc *r = &f->raw[i];

		if (b->ns.n)
			r->pid = pt_pidns_resolve(&b->ns, r->pid);
		r->sent_ns = (int64_t)r->mono + b->offset;
		r->at = (uint64_t)((int64_t)r->at + b->offset);
	}
	f->cap_first = f->nraw;
	for (i = f->rw_first; i < f->nrw; i++) {
		struct rawwait *w = &f->rw[i];

		if (b->ns.n)
			w->pid = pt_pidns_resolve(&b->ns, w->pid);
		w->sent_ns = (int64_t)w->mono + b->offset;
	}
	f->rw_first = f->nrw;
}

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
static const struct pt_exec *find(const struct pt_exec **e, size_t n,
				  uint32_t c, int64_t pid, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pt_exec *x = e[mid];

		if (x->capture < c || (x->capture == c && (x->pid < pid ||
		    (x->pid == pid && x->start_ns <= t))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	return e[lo - 1]->capture == c && e[lo - 1]->pid == pid ?
	       e[lo - 1] : NULL;
}

/*
 * Each execution's own run-queue wait: the last FILES_WAIT it sent, less
 * the last its process sent before exec'ing into it (the execution of
 * the same pid and parent just before it in by, ordered by process),
 * whose counter goes on across the exec.  by: sorted by cmp_proc.
 */
static void attach_wait(struct pt_files *f, const struct pt_exec **by,
			size_t n)
{
	int64_t *last = pt_xmalloc((n ? n : 1) * sizeof *last);
	size_t i;

	free(f->wait);
	f->wait = pt_xmalloc((n ? n : 1) * sizeof *f->wait);
	for (i = 0; i < n; i++)
		last[i] = f->wait[i] = -1;
	for (i = 0; i < f->nrw; i++) {
		const struct rawwait *w = &f->rw[i];
		const struct pt_exec *e = find(by, n, w->capture, w->pid,
					       w->sent_ns);

		if (e && (int64_t)w->wait_ns > last[e->id])
			last[e->id] = (int64_t)w->wait_ns;
	}
	for (i = 0; i < n; i++) {
		const struct pt_exec *e = by[i], *prev = i ? by[i - 1] : NULL;
		int64_t w = last[e->id];

		if (w < 0)
			continue;
		if (prev && prev->capture == e->capture && prev->pid == e->pid &&
		    prev->parent == e->parent && e->type == PT_EXEC_EXEC &&
		    last[prev->id] >= 0 && last[prev->id] <= w)
			w -= last[prev->id];
		f->wait[e->id] = w;
	}
	free(last);
}

void pt_files_attach(struct pt_model *m)
{
	struct pt_files *f = m->priv->files;
	const struct pt_exec **by;
	uint32_t *owner;
	size_t i;

	if (!f || m->lean)
		return;
	free(f->acc);
	free(f->first);
	f->orphans = 0;
	by = pt_xmalloc((m->n ? m->n : 1) * sizeof *by);
	for (i = 0; i < m->n; i++)
		by[i] = m->execs[i];
	qsort(by, m->n, sizeof *by, cmp_proc);
	owner = pt_xmalloc((f->nraw ? f->nraw : 1) * sizeof *owner);
	f->nexec = m->n;
	f->first = pt_xcalloc(m->n + 1, sizeof *f->first);
	for (i = 0; i < f->nraw; i++) {
		const struct rawacc *r = &f->raw[i];
		const struct pt_exec *w = find(by, m->n, r->capture, r->pid,
					       r->sent_ns);

		owner[i] = w ? w->id : UINT32_MAX;
		if (w)
			f->first[w->id + 1]++;
		else
			f->orphans++;
	}
	for (i = 0; i < m->n; i++)
		f->first[i + 1] += f->first[i];
	f->acc = pt_xmalloc((f->nraw ? f->nraw : 1) * sizeof *f->acc);
	{
		size_t *fill = pt_xmalloc((m->n ? m->n : 1) * sizeof *fill);

		memcpy(fill, f->first, m->n * sizeof *fill);
		for (i = 0; i < f->nraw; i++) {
			const struct rawacc *r = &f->raw[i];

			if (owner[i] == UINT32_MAX)
				continue;
			f->acc[fill[owner[i]]++] = (struct pt_file_access){
				r->path, (int64_t)r->at, r->kind };
		}
		free(fill);
	}
	free(owner);
	attach_wait(f, by, m->n);
	free(by);
}

const struct pt_file_access *pt_model_files(const struct pt_model *m,
					    const struct pt_exec *e, size_t *n)
{
	const struct pt_files *f = m->priv ? m->priv->files : NULL;

	*n = 0;
	if (!f || !f->first || e->id >= f->nexec)
		return NULL;
	*n = f->first[e->id + 1] - f->first[e->id];
	return *n ? &f->acc[f->first[e->id]] : NULL;
}

int64_t pt_model_wait(const struct pt_model *m, const struct pt_exec *e)
{
	const struct pt_files *f = m->priv ? m->priv->files : NULL;

	if (!f || !f->wait || e->id >= f->nexec)
		return -1;
	return f->wait[e->id];
}

size_t pt_model_files_count(const struct pt_model *m, uint64_t *dropped)
{
	const struct pt_files *f = m->priv ? m->priv->files : NULL;

	if (dropped)
		*dropped = f ? f->dropped : 0;
	return f ? f->nraw : 0;
}

void pt_files_free(struct pt_model_priv *p)
{
	if (!p->files)
		return;
	free(p->files->raw);
	free(p->files->acc);
	free(p->files->first);
	free(p->files->rw);
	free(p->files->wait);
	free(p->files);
	p->files = NULL;
}
