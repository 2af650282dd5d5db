/*
 * Parents and inheritance: each image's parent execution, what an image
 * the library never saw inherits from its parent side (cwd, exe), and
 * the executions emitted from the images in wall-clock time.
 */
#include <stdlib.h>
#include <string.h>

#include "model/build.h"
#include "base/strbuf.h"
#include "base/util.h"

/* ---- parents and inheritance ---- */

static uint32_t proc_parent(struct build *b, uint32_t proc, int depth);

/* The execution that image i stands for: folded images defer to the
 * process's parent. */
static uint32_t real_img(struct build *b, uint32_t i, int depth)
{
	while (i != NONE && b->img[i].flags & IF_FOLDED) {
		if (depth > 1000)
			return NONE;
		i = proc_parent(b, b->img[i].proc, depth + 1);
	}
	return i;
}

static uint32_t proc_parent(struct build *b, uint32_t proc, int depth)
{
	struct proc *pr = &b->proc[proc];
	uint32_t d, lo, hi, i;
	const struct img *im;

	if (pr->parent_done)
		return pr->parent;
	pr->parent_done = 1;            /* also breaks any cycle */
	d = pr->ppid ? pt_read_pid_find(b, pr->ppid) : NONE;
	if (d == NONE)
		return NONE;
	/* Last image of the parent pid that started by the child's birth. */
	lo = b->pid_img[d];
	hi = b->pid_img[d + 1];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->img[mid].start <= pr->birth)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->pid_img[d])
		return NONE;
	i = lo - 1;
	im = &b->img[i];
	/* Ended before the child was born: the pid was someone else's. */
	if ((im->flags & (IF_ENDED | IF_END_UNKNOWN | IF_FOLDED)) == IF_ENDED &&
	    im->end < pr->birth)
		return NONE;
	pr->parent = real_img(b, i, depth);
	return pr->parent;
}

/* Where image i takes what it did not record itself. */
static uint32_t source_img(struct build *b, uint32_t i)
{
	const struct img *im = &b->img[i];

	if (im->kind == IK_EXEC && im->prev != NONE &&
	    b->img[im->prev].kind != IK_SPAWN)
		return im->prev;        /* an untraced exec: its predecessor */
	return proc_parent(b, im->proc, 0);
}

static void fill_from(struct img *im, const struct img *src)
{
	if (im->exe == NONE)
		im->exe = src ? src->exe : 0;
	if (im->argv == NONE)
		im->argv = src ? src->argv : 0;
	if (im->env == NONE)
		im->env = src ? src->env : 0;
	if (im->cwd == NONE)
		im->cwd = src ? src->cwd : 0;
}

/*
 * Fill the inherited fields of image i, and first those of the images it
 * inherits from (iteratively: fork chains can be deep).
 */
static void resolve(struct build *b, uint32_t i, uint32_t **stack, size_t *cap)
{
	size_t n = 0;

	while (i != NONE && !(b->img[i].flags & (IF_RESOLVED | IF_RESOLVING))) {
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*stack = pt_xrealloc(*stack, *cap * sizeof **stack);
		}
		(*stack)[n++] = i;
		b->img[i].flags |= IF_RESOLVING;
		i = source_img(b, i);
	}
	while (n--) {
		uint32_t j = (*stack)[n], src = source_img(b, j);

		fill_from(&b->img[j], src != NONE ? &b->img[src] : NULL);
		b->img[j].flags |= IF_RESOLVED;
	}
}

/* ---- output ---- */

static const char *str_of(const struct pt_model_priv *p, uint32_t id)
{
	return p->str.str[id == NONE ? 0 : id];
}

/* AT_EXECFN and exec paths may be relative to the working directory. */
static const char *absolute_exe(struct pt_model_priv *p, uint32_t exe,
				uint32_t cwd, struct pt_sb *tmp)
{
	const char *e = str_of(p, exe), *c = str_of(p, cwd);

	if (e[0] == '/' || !strchr(e, '/') || c[0] != '/')
		return e;
	while (e[0] == '.' && e[1] == '/')
		for (e += 2; *e == '/'; e++)
			;
	pt_sb_reset(tmp);
	pt_sb_addstr(tmp, c);
	if (tmp->len > 1)
		pt_sb_addch(tmp, '/');
	pt_sb_addstr(tmp, e);
	return pt_str_intern_ptr(&p->str, tmp->buf, tmp->len);
}

/* Saturating, and never before 1970: times are not trusted either. */
static int64_t epoch(const struct build *b, uint64_t mono)
{
	int64_t t;

	if (mono > INT64_MAX)
		mono = INT64_MAX;
	if (__builtin_add_overflow((int64_t)mono, b->offset, &t))
		t = b->offset > 0 ? INT64_MAX : 0;
	return t < 0 ? 0 : t;
}

/*
 * A fork phase's CPU (cpu3 c) is its parent's work (a subshell's loop is
 * the shell's code), as the parent holds its children in the tree: it
 * counts there, or in e itself for a root.
 */
static void add_fork_cpu(struct build *b, struct pt_exec *e, uint32_t c)
{
	struct pt_exec *to = e->parent ? e->parent : e;
	uint64_t ut = b->cpu[c].ut, st = b->cpu[c].st;

	if (b->cpu[c].ut == CPU_BIG) {
		ut = b->big[b->cpu[c].st].ut;
		st = b->big[b->cpu[c].st].st;
	}
	if (to->utime_us < 0 && to->stime_us < 0)
		to->utime_us = to->stime_us = 0;
	if (to->utime_us >= 0)
		to->utime_us += (int64_t)ut;
	if (to->stime_us >= 0)
		to->stime_us += (int64_t)st;
}

void pt_tree_emit(struct build *b)
{
	struct pt_model_priv *p = b->p;
	size_t n = b->nimg ? b->nimg : 1, i;
	struct pt_exec **out = pt_xcalloc(n, sizeof *out);
	struct pt_sb tmp = PT_SB_INIT;
	uint32_t *stack = NULL;
	size_t scap = 0;

	for (i = 0; i < b->nproc; i++)
		proc_parent(b, (uint32_t)i, 0);
	for (i = 0; i < b->nimg; i++)
		resolve(b, (uint32_t)i, &stack, &scap);
	free(stack);
	/* Each image takes what it needs of its process along, and the
	 * processes go before the executions are allocated. */
	for (i = 0; i < b->nimg; i++) {
		struct img *im = &b->img[i];
		const struct proc *pr = &b->proc[im->proc];

		im->pid = pr->pid;
		im->ppid = pr->ppid;
		im->parent = pr->parent;
	}
	free(b->proc);
	b->proc = NULL;
	b->nproc = b->cproc = 0;
	for (i = 0; i < b->nimg; i++) {
		struct img *im = &b->img[i];
		struct pt_exec *e;
		uint32_t av, ev;

		if (im->flags & (IF_FOLDED | IF_HIDDEN) || im->kind == IK_SPAWN)
			continue;
		e = pt_arena_alloc(&p->execs, sizeof *e, _Alignof(struct pt_exec));
		memset(e, 0, sizeof *e);
		out[i] = e;
		e->capture = b->capture;
		e->pid = (int32_t)pt_pidns_shown(&b->ns, im->pid);
		e->ppid = (int32_t)pt_pidns_shown(&b->ns, im->ppid);
		e->type = im->kind == IK_FORK ? PT_EXEC_FORK : PT_EXEC_EXEC;
		e->flags = (im->flags & IF_UNTRACED ? PT_EXF_UNTRACED : 0) |
			   (im->flags & IF_END_UNKNOWN ? PT_EXF_END_UNKNOWN : 0) |
			   (im->flags & IF_KILLED ? PT_EXF_KILLED : 0) |
			   (im->flags & IF_TRUNC ? PT_EXF_ARGV_TRUNC : 0);
		e->start_ns = epoch(b, im->start);
		e->end_ns = epoch(b, im->end > im->start ? im->end : im->start);
		if (e->end_ns < e->start_ns)
			e->end_ns = e->start_ns;
		e->exit_code = im->exit_code;
		e->signal = im->signal;
		if (im->cpu == NONE) {
			e->utime_us = e->stime_us = e->maxrss_kb = -1;
		} else if (b->cpu[im->cpu].ut == CPU_BIG) {
			const struct cpu_big *c = &b->big[b->cpu[im->cpu].st];

			e->utime_us = (int64_t)c->ut;
			e->stime_us = (int64_t)c->st;
			e->maxrss_kb = (int64_t)c->rss;
		} else {
			e->utime_us = b->cpu[im->cpu].ut;
			e->stime_us = b->cpu[im->cpu].st;
			e->maxrss_kb = b->cpu[im->cpu].rss;
		}
		av = im->argv == NONE ? 0 : im->argv;
		ev = im->env == NONE ? 0 : im->env;
		e->cwd = str_of(p, im->cwd);
		e->exe = absolute_exe(p, im->exe, im->cwd, &tmp);
		if (b->m->lean) {
			/* The number of the record that has it (read.c). */
			e->argv_ref = av;
			av = 0;
		}
		e->argv_vec = p->vec.vec[av];
		e->argc = p->vec.len[av] & ~VEC_PACKED;
		e->env_id = p->vec.vec[ev];
		e->envc = p->vec.len[ev];
		e->owner = p;
		e->id = (uint32_t)p->nlist;     /* creation order, for ties */
		GROW(p->list, p->nlist, p->caplist);
		p->list[p->nlist++] = e;
	}
	for (i = 0; i < b->nimg; i++) {
		uint32_t par = b->img[i].parent;

		if (out[i])
			out[i]->parent = par != NONE ? out[par] : NULL;
	}
	for (i = 0; i < b->nimg; i++)
		if (out[i] && b->img[i].fork_cpu != NONE)
			add_fork_cpu(b, out[i], b->img[i].fork_cpu);
	for (i = 0; i < b->nserr; i++)
		if (out[b->serr[i].img]) {
			out[b->serr[i].img]->flags |= PT_EXF_SPAWN_FAILED;
			out[b->serr[i].img]->spawn_errno = b->serr[i].err;
		}
	free(out);
	pt_sb_release(&tmp);
}

/* The lookup of connections by id: needed only while reading. */
static void free_conn_index(struct build *b)
{
	pt_itab_free(&b->conn_t);
	free(b->conn_ix);
	b->conn_ix = NULL;
	b->nconn_ix = 0;
}

/*
 * Once all is read, a connection matters only for its EOF, which ends the
 * image that said HELLO on it: keep the connections that have one (a
 * process killed, or the collector stopped before it), renumbered, and
 * free the rest before the per-pid pass adds the images, so the two do
 * not add up.  Most connections end after their EXIT and have none.
 */
void pt_tree_keep_eof_conns(struct build *b)
{
	size_t i;

	for (i = 0; i < b->nconn; i++)
		if (b->conns[i].hx != NONE)
			b->hx[b->conns[i].hx].conn = CONN_NO_EOF;
	free(b->conns);
	free_conn_index(b);
	b->conns = b->eofc;
	b->nconn = b->neofc;
	b->cconn = b->ceofc;
	b->eofc = NULL;
	b->neofc = b->ceofc = 0;
}

/* What only reading and the per-pid pass need: gone before the output
 * is allocated, so that the two never add up. */
void pt_tree_free_events(struct build *b)
{
	pt_events_free(b);
	free(b->hx);
	free(b->xx);
	free(b->conns);
	free(b->eofc);
	free_conn_index(b);
	b->hx = NULL;
	b->xx = NULL;
	b->conns = NULL;
	b->eofc = NULL;
}

/*
 * A shell that system() or pclose() waited for inside glibc and that died
 * without EXIT: its status is the REAP of child 0 that its parent sent
 * next.  Few executions lack a status, so they drive the search.
 */
void pt_tree_apply_anon_reaps(struct build *b, size_t first)
{
	size_t i, k;

	for (i = first; i < b->p->nlist && b->nanon; i++) {
		struct pt_exec *e = b->p->list[i];
		size_t best = SIZE_MAX;

		if (e->exit_code != -1 || e->signal != -1 || e->type != PT_EXEC_EXEC)
			continue;
		for (k = 0; k < b->nanon; k++) {
			int64_t t = (int64_t)b->anon[k].time + b->offset;

			if ((int32_t)b->anon[k].parent == e->ppid &&
			    t >= e->start_ns &&
			    (best == SIZE_MAX || b->anon[k].time < b->anon[best].time))
				best = k;
		}
		if (best == SIZE_MAX)
			continue;
		if (WIFSIGNALED(b->anon[best].status)) {
			e->signal = WTERMSIG(b->anon[best].status);
			e->flags |= PT_EXF_KILLED;
		} else if (WIFEXITED(b->anon[best].status)) {
			e->exit_code = WEXITSTATUS(b->anon[best].status);
			e->signal = 0;
		}
		b->anon[best].parent = 0;       /* used */
	}
}

void pt_tree_build_free(struct build *b)
{
	free(b->cpu);
	free(b->big);
	free(b->anon);
	free(b->serr);
	pt_tree_free_events(b);
	free(b->pid_raw);
	pt_itab_free(&b->pid_t);
	free(b->pid_img);
	free(b->img);
	free(b->proc);
	pt_pidns_free(&b->ns);
}
