/*
 * The model: executions rebuilt from captures; see model.h.
 *
 * A capture is read in one pass into compact events (24 bytes each, the
 * strings interned once in a pool shared by all captures), then built:
 *
 *  1. Events are grouped by the pid they are about (a FORK, SPAWN or REAP
 *     is about the child) and each group is sorted by time.  Frames of one
 *     pid come over several connections and the collector interleaves
 *     connections freely, so file order means little; the senders' clock
 *     (CLOCK_MONOTONIC of one machine) orders them.
 *  2. One state machine per pid turns its events into processes (a pid's
 *     lifetime, from birth to reap: pids are reused) and images (one
 *     program of one process; an image is an execution unless it is the
 *     short fork phase before an exec, which is folded away).
 *  3. Each process finds its parent: the image of its parent pid that was
 *     current when it was born (binary search in that pid's images).
 *  4. Fork children take program, arguments and environment from the
 *     image they were forked from; programs that never loaded the library
 *     inherit the environment of the image that started them.
 *  5. The images that are executions are written out as struct pt_exec.
 *
 * Everything is linear but the per-pid sorts, which see a handful of
 * events each and nearly sorted at that.
 *
 * Choices where the record leaves room:
 *  - A child born in a fork phase that is later folded away belongs to
 *    the execution that forked (the phase was part of it).
 *  - An image that ended without EXIT ends at the earlier of its REAP and
 *    its connection's EOF (either can be late; neither is early).
 *  - REAP's rusage covers the child and its own waited-for children: it
 *    is used only for programs that never loaded the library, and for
 *    images that ended without EXIT (killed, or silent under seccomp),
 *    less what the process's earlier images reported.
 *  - The EOF of an AUX or FOREIGN connection means nothing: the library
 *    opens them for one frame and closes them.
 */
#include "model/model.h"

#include <endian.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/read.h"
#include "model/pidns.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "model/build.h"

/* ---- the API ---- */

void pt_model_init(struct pt_model *m)
{
	/* Fixed, not left to glibc's sliding threshold, which a freed
	 * mapping raises: see BIG_ARRAY. */
	mallopt(M_MMAP_THRESHOLD, BIG_ARRAY);
	memset(m, 0, sizeof *m);
	m->priv = pt_xcalloc(1, sizeof *m->priv);
	/* Id 0 is the empty string and the empty vector. */
	pt_str_intern(&m->priv->str, "");
	pt_vec_intern(&m->priv->vec, &m->priv->str, NULL, 0, pt_vec_hash(NULL, 0), 0);
}

void pt_model_set_lean(struct pt_model *m)
{
	m->lean = 1;
}

const struct pt_exec *pt_model_exec(const struct pt_model *m, size_t i,
				    struct pt_exec *tmp)
{
	const struct pt_model_priv *p = m->priv;
	const struct lexec *x;

	if (!m->lean)
		return m->execs[i];
	x = &p->lx[i];
	memset(tmp, 0, sizeof *tmp);
	tmp->id = (uint32_t)i;
	tmp->capture = x->capture;
	tmp->pid = x->pid;
	tmp->ppid = x->ppid;
	tmp->type = x->type;
	tmp->flags = x->flags;
	tmp->start_ns = x->start_ns;
	tmp->end_ns = x->end_ns;
	tmp->exit_code = x->exit_code;
	tmp->signal = x->signal;
	tmp->spawn_errno = x->spawn_errno;
	tmp->argv_ref = x->argv_ref;
	tmp->utime_us = x->utime_us;
	tmp->stime_us = x->stime_us;
	tmp->maxrss_kb = x->maxrss_kb;
	tmp->exe = p->str.str[x->exe];
	tmp->cwd = p->str.str[x->cwd];
	tmp->argv_vec = p->vec.vec[0];
	tmp->env_id = p->vec.vec[x->env];
	tmp->envc = p->vec.len[x->env];
	tmp->owner = p;
	return tmp;
}

size_t pt_model_parent(const struct pt_model *m, size_t i)
{
	if (m->lean)
		return m->priv->lx[i].parent != NONE ? m->priv->lx[i].parent
						     : SIZE_MAX;
	return m->execs[i]->parent ? m->execs[i]->parent->id : SIZE_MAX;
}

static const char *meta_get(const struct capmeta *cm, const char *key)
{
	const char *found = NULL;
	size_t i;

	for (i = 0; i + 1 < cm->n; i += 2)
		if (!strcmp(cm->kv[i], key))
			found = cm->kv[i + 1];
	return found;
}

/* The capture's own clock pair beats one taken from some HELLO. */
static void meta_offset(struct build *b)
{
	const struct capmeta *cm = &b->p->meta[b->capture];
	const char *r = meta_get(cm, "start_realtime_ns");
	const char *mo = meta_get(cm, "start_monotonic_ns");
	char *end1, *end2;
	unsigned long long rv, mv;

	if (!r || !mo)
		return;
	rv = strtoull(r, &end1, 10);
	mv = strtoull(mo, &end2, 10);
	if (*end1 || *end2 || end1 == r || end2 == mo)
		return;
	b->offset = (int64_t)(rv - mv);
	b->have_offset = 2;
}

/* The capture's end (collector's clock), if it says; else its last event. */
static void meta_end(struct build *b)
{
	const char *s = meta_get(&b->p->meta[b->capture], "end_monotonic_ns");
	char *end;
	unsigned long long v;

	if (!s)
		return;
	v = strtoull(s, &end, 10);
	if (!*end && end != s)
		pt_note_time(b, v);
}

/*
 * The `proftrace stop` that ended the capture is the user's request, not
 * part of what was traced: hide its execution, the last image of the pid
 * that sent STOP, still running when the capture ended.
 */
static void hide_stopper(struct build *b)
{
	const char *s = meta_get(&b->p->meta[b->capture], "stopped_by");
	unsigned long v;
	uint32_t d, i;
	char *end;

	if (!s)
		return;
	v = strtoul(s, &end, 10);
	if (*end || end == s || v == 0 || v > UINT32_MAX ||
	    (d = pt_read_pid_find(b, (uint32_t)v)) == NONE ||
	    b->pid_img[d + 1] == b->pid_img[d])
		return;
	i = b->pid_img[d + 1] - 1;
	if (b->img[i].kind == IK_EXEC && b->img[i].flags & IF_END_UNKNOWN)
		b->img[i].flags |= IF_HIDDEN;
}

int pt_model_add_capture(struct pt_model *m, const char *path)
{
	struct pt_model_priv *p = m->priv;
	struct pt_reader *r = pt_reader_open(path);
	struct build b;
	size_t first, i, open = 0;
	int rc;

	if (!r)
		return -1;
	if (m->ncaptures == p->cap_meta) {
		p->cap_meta = p->cap_meta ? 2 * p->cap_meta : 4;
		p->meta = pt_xrealloc(p->meta, p->cap_meta * sizeof *p->meta);
	}
	memset(&p->meta[m->ncaptures], 0, sizeof *p->meta);
	memset(&b, 0, sizeof b);
	b.m = m;
	b.p = p;
	b.capture = (uint32_t)m->ncaptures++;
	b.conn_free = NONE;
	rc = pt_read_capture(&b, r);
	pt_reader_close(r);
	if (rc < 0)
		m->damaged = 1;
	meta_offset(&b);
	meta_end(&b);
	pt_resolve_ns(&b);
	pt_sub_end_capture(&b);
	pt_files_end_capture(&b);
	pt_tree_keep_eof_conns(&b);
	pt_pids_run(&b);
	hide_stopper(&b);
	pt_tree_free_events(&b);
	first = p->nlist;
	pt_tree_emit(&b);
	pt_tree_build_free(&b);
	if (rc < 0) {
		/* Say what the damage cost: executions it cut off. */
		for (i = first; i < p->nlist; i++)
			open += ((m->lean ? p->lx[i].flags : p->list[i]->flags) &
				 PT_EXF_END_UNKNOWN) != 0;
		pt_warn("%s: %zu of the %zu executions read have no recorded "
			"end", path, open, p->nlist - first);
	}
	return rc < 0 ? 1 : 0;
}

static int cmp_exec(const void *x, const void *y)
{
	const struct pt_exec *a = *(const struct pt_exec *const *)x;
	const struct pt_exec *b = *(const struct pt_exec *const *)y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* A lean model's executions, by cmp_exec's order. */
static const struct lexec *sort_lx;

static int cmp_lexec(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	const struct lexec *a = &sort_lx[i], *b = &sort_lx[j];

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return i < j ? -1 : i > j;
}

/*
 * Sort a lean model's executions as pt_model_finish() sorts the others,
 * in place: 4 bytes an execution beside them, not a second array.
 */
static void finish_lean(struct pt_model *m)
{
	struct pt_model_priv *p = m->priv;
	size_t n = p->nlist, i;
	uint32_t *from = pt_xmalloc((n ? n : 1) * sizeof *from);
	uint32_t *to = pt_xmalloc((n ? n : 1) * sizeof *to);

	for (i = 0; i < n; i++)
		from[i] = (uint32_t)i;
	sort_lx = p->lx;
	if (n)
		qsort(from, n, sizeof *from, cmp_lexec);
	sort_lx = NULL;
	for (i = 0; i < n; i++)
		to[from[i]] = (uint32_t)i;
	/* Position i takes what was at from[i]: follow each cycle once,
	 * marking a position done by from[i] = i. */
	for (i = 0; i < n; i++) {
		struct lexec keep;
		size_t j = i;

		if (from[i] == i)
			continue;
		keep = p->lx[i];
		while (from[j] != i) {
			size_t k = from[j];

			p->lx[j] = p->lx[k];
			from[j] = (uint32_t)j;
			j = k;
		}
		p->lx[j] = keep;
		from[j] = (uint32_t)j;
	}
	for (i = 0; i < n; i++)
		if (p->lx[i].parent != NONE)
			p->lx[i].parent = to[p->lx[i].parent];
	free(from);
	free(to);
	m->execs = NULL;
	m->n = n;
}

void pt_model_finish(struct pt_model *m)
{
	struct pt_model_priv *p = m->priv;
	struct pt_exec **tail;
	size_t i;

	if (m->lean) {
		finish_lean(m);
		return;
	}
	if (p->nlist)
		qsort(p->list, p->nlist, sizeof *p->list, cmp_exec);
	m->execs = p->list;
	m->n = p->nlist;
	for (i = 0; i < m->n; i++) {
		m->execs[i]->id = (uint32_t)i;
		m->execs[i]->first_child = m->execs[i]->next_sibling = NULL;
	}
	/* Children in start order: append each to its parent's list. */
	tail = pt_xcalloc(m->n ? m->n : 1, sizeof *tail);
	for (i = 0; i < m->n; i++) {
		struct pt_exec *e = m->execs[i], *par = e->parent;

		if (!par)
			continue;
		if (tail[par->id])
			tail[par->id]->next_sibling = e;
		else
			par->first_child = e;
		tail[par->id] = e;
	}
	free(tail);
	pt_sub_attach(m);
	pt_files_attach(m);
}

void pt_model_align_starts(struct pt_model *m, int64_t *shift_out)
{
	int64_t *first, t0 = 0;
	size_t i;

	if (m->ncaptures < 2 || !m->n || m->lean)
		return;
	first = pt_xcalloc(m->ncaptures, sizeof *first);
	for (i = 0; i < m->ncaptures; i++)
		first[i] = INT64_MAX;
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];

		if (e->start_ns < first[e->capture])
			first[e->capture] = e->start_ns;
	}
	t0 = m->execs[0]->start_ns;
	for (i = 0; i < m->n; i++) {
		struct pt_exec *e = m->execs[i];
		int64_t shift = first[e->capture] - t0;

		e->start_ns -= shift;
		e->end_ns -= shift;
	}
	for (i = 0; shift_out && i < m->ncaptures; i++)
		shift_out[i] = first[i] == INT64_MAX ? 0 : first[i] - t0;
	free(first);
	/* Same executions, new order: ids and children lists again. */
	pt_model_finish(m);
}

/* Write split string id out at `to`, NUL-terminated; returns its end. */
static char *str_join(const struct strtab *st, uint32_t id, char *to)
{
	const uint32_t *w = (const uint32_t *)(const void *)st->str[id];
	uint32_t k;

	for (k = 1; k <= w[0]; k++) {
		if (k > 1)
			*to++ = ' ';
		memcpy(to, st->str[w[k]], st->len[w[k]]);
		to += st->len[w[k]];
	}
	*to = '\0';
	return to + 1;
}

/*
 * What join_args() unpacked and joined last, one per thread: the writers
 * format in two threads at once (par.c).  Keyed on the model as well, so
 * that a vector of a freed model is never taken for one of a new model at
 * the same address (pt_model_free() empties the freeing thread's cache,
 * pt_model_thread_done() another thread's).
 */
static __thread struct argcache {
	const struct pt_model_priv *model;
	const void *vec;
	const char **arg;
	uint32_t *id;
	size_t carg;
	char *buf;
	size_t cbuf;
} arg_cache;

void pt_model_thread_done(void)
{
	free(arg_cache.arg);
	free(arg_cache.id);
	free(arg_cache.buf);
	memset(&arg_cache, 0, sizeof arg_cache);
}

/*
 * e's arguments as C strings, unpacked and its split ones joined in one
 * go, so that
 * what a caller holds of one command line stays valid while it reads the
 * rest of it: until the arguments of another vector are joined.
 */
static const char *const *join_args(const struct pt_exec *e)
{
	/* A cache: the model the ids belong to is not const, its users' view
	 * of it is. */
	struct pt_model_priv *p = (struct pt_model_priv *)(uintptr_t)e->owner;
	const struct strtab *st = &p->str;
	struct argcache *c = &arg_cache;
	const unsigned char *pk = e->argv_vec;
	size_t i, need = 0;
	char *to;

	if (c->model == p && c->vec == e->argv_vec)
		return c->arg;
	if (e->argc > c->carg) {
		c->carg = e->argc > 2 * c->carg ? e->argc : 2 * c->carg;
		c->arg = pt_xrealloc(c->arg, c->carg * sizeof *c->arg);
		c->id = pt_xrealloc(c->id, c->carg * sizeof *c->id);
	}
	for (i = 0; i < e->argc; i++) {
		pk = pt_vec_unpack(pk, &c->id[i]);
		if (st->len[c->id[i]] & STR_SPLIT)
			need += (st->len[c->id[i]] & ~STR_SPLIT) + 1;
	}
	if (need > c->cbuf) {
		c->cbuf = need > 2 * c->cbuf ? need : 2 * c->cbuf;
		c->buf = pt_xrealloc(c->buf, c->cbuf);
	}
	for (i = 0, to = c->buf; i < e->argc; i++) {
		uint32_t id = c->id[i];

		if (st->len[id] & STR_SPLIT) {
			c->arg[i] = to;
			to = str_join(st, id, to);
		} else {
			c->arg[i] = st->str[id];
		}
	}
	c->model = p;
	c->vec = e->argv_vec;
	return c->arg;
}

const char *pt_exec_arg(const struct pt_exec *e, size_t i)
{
	return join_args(e)[i];
}

uint32_t pt_exec_arg_id(const struct pt_exec *e, size_t i)
{
	join_args(e);
	return arg_cache.id[i];
}

const char *pt_exec_envent(const struct pt_exec *e, size_t i)
{
	return e->owner->str.str[e->env_id[i]];
}

const char *pt_exec_env(const struct pt_exec *e, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; i < e->envc; i++) {
		const char *kv = pt_exec_envent(e, i);

		if (!strncmp(kv, name, n) && kv[n] == '=')
			return kv + n + 1;
	}
	return NULL;
}

void pt_exec_set_argv(struct pt_model *m, struct pt_exec *e,
		      const char *const *argv, size_t argc)
{
	struct pt_model_priv *p = m->priv;
	struct pstr *a = pt_xcalloc(argc ? argc : 1, sizeof *a);
	uint32_t id;
	size_t i;

	for (i = 0; i < argc; i++) {
		a[i].s = argv[i];
		a[i].len = (uint32_t)strlen(argv[i]);
		a[i].hash = pt_hash_bytes(argv[i], a[i].len);
	}
	id = pt_vec_intern(&p->vec, &p->str, a, argc, pt_vec_hash(a, argc), 1);
	e->argv_vec = p->vec.vec[id];
	e->argv_ref = 0;
	e->argc = argc;
	free(a);
}

const char *pt_model_meta(const struct pt_model *m, size_t capture,
			  const char *key)
{
	if (capture >= m->ncaptures)
		return NULL;
	return meta_get(&m->priv->meta[capture], key);
}

void pt_model_set_meta(struct pt_model *m, size_t capture, const char *key,
		       const char *value)
{
	struct pt_model_priv *p = m->priv;
	struct capmeta *cm;

	if (capture >= m->ncaptures)
		return;
	cm = &p->meta[capture];
	if (cm->n + 2 > cm->cap) {
		cm->cap = cm->cap ? 2 * cm->cap : 32;
		cm->kv = pt_xrealloc(cm->kv, cm->cap * sizeof *cm->kv);
	}
	/* Appended: the last value of a key wins (meta_get). */
	cm->kv[cm->n++] = pt_str_intern_ptr(&p->str, key, strlen(key));
	cm->kv[cm->n++] = pt_str_intern_ptr(&p->str, value, strlen(value));
}

void pt_model_free(struct pt_model *m)
{
	struct pt_model_priv *p = m->priv;
	size_t i;

	if (!p)
		return;
	pt_sub_free(p);
	pt_files_free(p);
	pt_arena_free(&p->str.mem);
	free(p->str.str);
	free(p->str.len);
	free(p->str.hash);
	pt_itab_free(&p->str.t);
	free(p->str.words);
	pt_model_thread_done();
	pt_arena_free(&p->vec.mem);
	free(p->vec.vec);
	free(p->vec.len);
	free(p->vec.ids);
	free(p->vec.hash);
	pt_itab_free(&p->vec.t);
	pt_arena_free(&p->execs);
	free(p->list);
	free(p->lx);
	for (i = 0; i < m->ncaptures; i++)
		free(p->meta[i].kv);
	free(p->meta);
	free(p);
	memset(m, 0, sizeof *m);
}
