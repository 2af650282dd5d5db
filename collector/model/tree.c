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

/*
 * AT_EXECFN and exec paths may be relative to the working directory: the
 * id of the absolute one.
 */
static uint32_t absolute_exe(struct pt_model_priv *p, uint32_t exe,
			     uint32_t cwd, struct pt_sb *tmp)
{
	const char *e = str_of(p, exe), *c = str_of(p, cwd);

	if (e[0] == '/' || !strchr(e, '/') || c[0] != '/')
		return exe == NONE ? 0 : exe;
	while (e[0] == '.' && e[1] == '/')
		for (e += 2; *e == '/'; e++)
			;
	pt_sb_reset(tmp);
	pt_sb_addstr(tmp, c);
	if (tmp->len > 1)
		pt_sb_addch(tmp, '/');
	pt_sb_addstr(tmp, e);
	return pt_str_intern_h(&p->str, tmp->buf, tmp->len, 0);
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
 * counts there (*ut, *st), or in the execution itself for a root.
 */
static void add_fork_cpu(const struct build *b, int64_t *to_ut,
			 int64_t *to_st, uint32_t c)
{
	uint64_t ut = b->cpu[c].ut, st = b->cpu[c].st;

	if (b->cpu[c].ut == CPU_BIG) {
		ut = b->big[b->cpu[c].st].ut;
		st = b->big[b->cpu[c].st].st;
	}
	if (*to_ut < 0 && *to_st < 0)
		*to_ut = *to_st = 0;
	if (*to_ut >= 0)
		*to_ut += (int64_t)ut;
	if (*to_st >= 0)
		*to_st += (int64_t)st;
}

/*
 * The execution of image im, but for its id, parent and children; its
 * strings as ids in *exe, *cwd, *argv and *env (argv: the record number
 * in a lean model, read.c).
 */
static void make_exec(struct build *b, const struct img *im,
		      struct pt_sb *tmp, struct pt_exec *e, uint32_t *exe,
		      uint32_t *cwd, uint32_t *argv, uint32_t *env)
{
	struct pt_model_priv *p = b->p;

	memset(e, 0, sizeof *e);
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
	*argv = im->argv == NONE ? 0 : im->argv;
	*env = im->env == NONE ? 0 : im->env;
	*cwd = im->cwd == NONE ? 0 : im->cwd;
	*exe = absolute_exe(p, im->exe, im->cwd, tmp);
	e->cwd = p->str.str[*cwd];
	e->exe = p->str.str[*exe];
	e->owner = p;
}

/* Keep e as an execution of a full model; returns its index. */
static uint32_t keep_full(struct pt_model_priv *p, const struct pt_exec *e,
			  uint32_t argv, uint32_t env)
{
	struct pt_exec *x = pt_arena_alloc(&p->execs, sizeof *x,
					   _Alignof(struct pt_exec));

	*x = *e;
	x->argv_vec = p->vec.vec[argv];
	x->argc = p->vec.len[argv] & ~VEC_PACKED;
	x->env_id = p->vec.vec[env];
	x->envc = p->vec.len[env];
	x->id = (uint32_t)p->nlist;     /* creation order, for ties */
	GROW(p->list, p->nlist, p->caplist);
	p->list[p->nlist] = x;
	return (uint32_t)p->nlist++;
}

/* The same for a lean model. */
static uint32_t keep_lean(struct pt_model_priv *p, const struct pt_exec *e,
			  uint32_t exe, uint32_t cwd, uint32_t argv,
			  uint32_t env)
{
	struct lexec *x;

	GROW(p->lx, p->nlist, p->caplx);
	x = &p->lx[p->nlist];
	memset(x, 0, sizeof *x);
	x->start_ns = e->start_ns;
	x->end_ns = e->end_ns;
	x->utime_us = e->utime_us;
	x->stime_us = e->stime_us;
	x->maxrss_kb = e->maxrss_kb;
	x->pid = e->pid;
	x->ppid = e->ppid;
	x->parent = NONE;
	x->argv_ref = argv;
	x->exe = exe;
	x->cwd = cwd;
	x->env = env;
	x->capture = e->capture;
	x->type = (uint8_t)e->type;
	x->flags = (uint8_t)e->flags;
	x->exit_code = (int16_t)e->exit_code;
	x->signal = (int16_t)e->signal;
	return (uint32_t)p->nlist++;
}

/*
 * A shell that system() or pclose() waited for inside glibc and that died
 * without EXIT: its status is the REAP of child 0 that its parent sent
 * next.  Few executions lack a status, so they drive the search; they
 * take the REAPs in the order the executions are made.
 */
static void apply_anon_reap(struct build *b, struct pt_exec *e)
{
	size_t k, best = SIZE_MAX;
	int status;

	if (!b->nanon || e->exit_code != -1 || e->signal != -1 ||
	    e->type != PT_EXEC_EXEC)
		return;
	for (k = 0; k < b->nanon; k++) {
		int64_t t = (int64_t)b->anon[k].time + b->offset;

		if ((int32_t)b->anon[k].parent == e->ppid && t >= e->start_ns &&
		    (best == SIZE_MAX || b->anon[k].time < b->anon[best].time))
			best = k;
	}
	if (best == SIZE_MAX)
		return;
	status = b->anon[best].status;
	if (WIFSIGNALED(status)) {
		e->signal = WTERMSIG(status);
		e->flags |= PT_EXF_KILLED;
	} else if (WIFEXITED(status)) {
		e->exit_code = WEXITSTATUS(status);
		e->signal = 0;
	}
	b->anon[best].parent = 0;       /* used */
}

void pt_tree_emit(struct build *b)
{
	struct pt_model_priv *p = b->p;
	size_t n = b->nimg ? b->nimg : 1, i;
	uint32_t *out = pt_xmalloc(n * sizeof *out);
	struct pt_sb tmp = PT_SB_INIT;
	uint32_t *stack = NULL;
	size_t scap = 0;
	int lean = b->m->lean;

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
		const struct img *im = &b->img[i];
		struct pt_exec e;
		uint32_t exe, cwd, av, ev;

		out[i] = NONE;
		if (im->flags & (IF_FOLDED | IF_HIDDEN) || im->kind == IK_SPAWN)
			continue;
		make_exec(b, im, &tmp, &e, &exe, &cwd, &av, &ev);
		apply_anon_reap(b, &e);
		out[i] = lean ? keep_lean(p, &e, exe, cwd, av, ev)
			      : keep_full(p, &e, av, ev);
	}
	for (i = 0; i < b->nimg; i++) {
		uint32_t x = out[i], par = b->img[i].parent;

		if (x == NONE)
			continue;
		par = par != NONE ? out[par] : NONE;
		if (lean)
			p->lx[x].parent = par;
		else
			p->list[x]->parent = par != NONE ? p->list[par] : NULL;
	}
	for (i = 0; i < b->nimg; i++) {
		uint32_t x = out[i], c = b->img[i].fork_cpu, to;

		if (x == NONE || c == NONE)
			continue;
		if (lean) {
			to = p->lx[x].parent != NONE ? p->lx[x].parent : x;
			add_fork_cpu(b, &p->lx[to].utime_us,
				     &p->lx[to].stime_us, c);
		} else {
			struct pt_exec *e = p->list[x];
			struct pt_exec *t = e->parent ? e->parent : e;

			add_fork_cpu(b, &t->utime_us, &t->stime_us, c);
		}
	}
	for (i = 0; i < b->nserr; i++) {
		uint32_t x = out[b->serr[i].img];

		if (x == NONE)
			continue;
		if (lean) {
			p->lx[x].flags |= PT_EXF_SPAWN_FAILED;
			p->lx[x].spawn_errno = (int16_t)b->serr[i].err;
		} else {
			p->list[x]->flags |= PT_EXF_SPAWN_FAILED;
			p->list[x]->spawn_errno = b->serr[i].err;
		}
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
