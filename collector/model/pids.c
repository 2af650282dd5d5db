/*
 * The per-pid state machines: the events of one capture, sorted by pid
 * and time, become processes and their program images (HELLO, EXEC,
 * FORK, SPAWN, REAP, EXIT and EOF each move one pid's state).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "model/build.h"
#include "base/strbuf.h"
#include "base/util.h"

/* ---- building: per-pid state machines ---- */

static uint32_t new_proc(struct build *b, uint32_t pid, uint32_t ppid,
			 uint64_t birth, int has_birth)
{
	struct proc *pr;

	GROW(b->proc, b->nproc, b->cproc);
	pr = &b->proc[b->nproc];
	memset(pr, 0, sizeof *pr);
	pr->pid = pid;
	pr->ppid = ppid;
	pr->birth = birth;
	pr->has_birth = (uint8_t)has_birth;
	pr->cur = NONE;
	pr->parent = NONE;
	return (uint32_t)b->nproc++;
}

static uint32_t new_img(struct build *b, uint32_t proc, enum img_kind kind,
			uint64_t start)
{
	struct img *im;

	GROW(b->img, b->nimg, b->cimg);
	im = &b->img[b->nimg];
	memset(im, 0, sizeof *im);
	im->kind = (uint8_t)kind;
	im->start = start;
	im->cpu = im->fork_cpu = NONE;
	im->exit_code = -1;
	im->signal = -1;
	im->proc = proc;
	im->prev = b->proc[proc].cur;
	im->pending = NONE;
	im->exe = im->cwd = im->argv = im->env = NONE;
	b->proc[proc].cur = (uint32_t)b->nimg;
	return (uint32_t)b->nimg++;
}

/* Exit code and signal from a wait status. */
static void set_status(struct img *im, int status)
{
	if (WIFSIGNALED(status)) {
		im->exit_code = -1;
		im->signal = (int16_t)WTERMSIG(status);
		im->flags |= IF_KILLED;
	} else if (WIFEXITED(status)) {
		im->exit_code = (int16_t)WEXITSTATUS(status);
		im->signal = 0;
	}
}

/* The image `i` was replaced by an exec whose new image starts at t. */
static void end_by_exec(struct build *b, uint32_t i, uint64_t t)
{
	struct img *im = &b->img[i];

	im->pending = NONE;
	if (im->kind != IK_EXEC) {
		/* A fork phase that execs, or the placeholder of a spawn, is
		 * no execution of its own. */
		im->flags |= IF_FOLDED | IF_ENDED;
		if (t < im->start)
			im->start = t;
		im->end = t;
		return;
	}
	im->end = t > im->start ? t : im->start;
	im->flags |= IF_ENDED;
	im->exit_code = -1;
	im->signal = 0;
}

/*
 * The current image of proc exec'd: end it and start the new image at t.
 * A fork phase or spawn placeholder that did nothing but exec gives its
 * slot to the new image: that is the common fork+exec, and nothing can
 * refer to the slot (it never had a connection, so no child either).
 */
static uint32_t exec_img(struct build *b, uint32_t proc, uint64_t t)
{
	uint32_t prev = b->proc[proc].cur;
	struct img *im = &b->img[prev];

	if (im->kind != IK_EXEC && !(im->flags & IF_CONN) &&
	    prev + 1 == b->nimg) {
		b->proc[proc].cur = im->prev;
		b->nimg--;
	} else {
		/* An image that execs sends no EXIT: its EXEC carries what
		 * the EXIT would have said of its CPU.  (A fork phase's is
		 * the next image's CPU_BEFORE: see ev_hello.) */
		if (im->kind == IK_EXEC && im->pending != NONE &&
		    b->ev[im->pending].type == E_EXEC)
			im->cpu = b->xx[b->ev[im->pending].b].cpu;
		end_by_exec(b, prev, t);
	}
	return new_img(b, proc, IK_EXEC, t);
}

/*
 * The pending EXEC or SPAWN of proc's current image succeeded into a
 * program that never loaded the library: make its image.
 */
static uint32_t untraced(struct build *b, uint32_t proc)
{
	const struct ev *e = &b->ev[b->img[b->proc[proc].cur].pending];
	uint32_t i = exec_img(b, proc, e->time);
	struct img *im = &b->img[i];

	im->flags |= IF_UNTRACED | (e->flags & EVF_TRUNC ? IF_TRUNC : 0);
	if (e->type == E_EXEC) {
		im->exe = b->xx[e->b].path;
		im->cwd = b->xx[e->b].cwd;
		im->argv = e->a;
	} else {
		im->exe = e->b;
		im->argv = e->a;
	}
	return i;
}

static int finished(const struct build *b, uint32_t proc)
{
	const struct proc *pr = &b->proc[proc];

	return pr->reaped || (b->img[pr->cur].flags & IF_ENDED);
}

/* Give proc's open image an end: the process was not seen to end by t. */
static void close_proc(struct build *b, uint32_t proc, uint64_t t)
{
	uint32_t i = b->proc[proc].cur;
	struct img *im;

	/* (Index first: making an image may move b->img.) */
	if (b->img[i].pending != NONE)
		i = untraced(b, proc);
	im = &b->img[i];
	if (im->flags & IF_ENDED)
		return;
	im->end = t > im->start ? t : im->start;
	im->flags |= IF_ENDED | IF_END_UNKNOWN;
	im->exit_code = -1;
	im->signal = -1;
}

struct pidpass {
	struct build *b;
	uint32_t pid;                   /* raw */
	uint32_t first_img;             /* this pid's images start here */
	uint32_t cur;                   /* current process, NONE */
	const struct ev *adopted;       /* cur's first REAP by another */
};

static void reap_apply(struct build *b, uint32_t proc, const struct ev *e);

/*
 * The current process's end was not reaped by its parent: take the REAP
 * of whoever else waited for it.  A process whose parent died was
 * reparented (to a subreaper, or init) and reaped there; a tracer's
 * wait reports the same status.
 */
static void pp_adopt(struct pidpass *pp)
{
	if (pp->adopted && pp->cur != NONE && !pp->b->proc[pp->cur].reaped)
		reap_apply(pp->b, pp->cur, pp->adopted);
	pp->adopted = NULL;
}

static uint32_t pp_new_proc(struct pidpass *pp, uint32_t ppid, uint64_t birth,
			    int has_birth)
{
	pp_adopt(pp);
	if (pp->cur != NONE)
		close_proc(pp->b, pp->cur, birth);
	pp->cur = new_proc(pp->b, pp->pid, ppid, birth, has_birth);
	return pp->cur;
}

static void ev_fork(struct pidpass *pp, const struct ev *e)
{
	/* The parent takes FORK's time before calling fork(), so the child's
	 * own frames all sort after it: a FORK always starts a process. */
	uint32_t pr = pp_new_proc(pp, e->other, e->time, 1);

	new_img(pp->b, pr, IK_FORK, e->time);
}

/*
 * The arguments of image i as its exec or spawn gave them: that is what
 * the caller ran (`./configure`), where the new image sees what the kernel
 * made of it (`/bin/sh ./configure` for a script).  Unless they were cut
 * and the image's own are whole.
 */
static void exec_argv(struct build *b, uint32_t i, const struct ev *e)
{
	struct img *im = &b->img[i];
	const char *path, *exe;
	size_t np, ne;

	if (im->kind != IK_EXEC || im->flags & IF_UNTRACED || im->exe == NONE)
		return;
	/* Only if the kernel ran that very path (AT_EXECFN, or where the
	 * PATH search found it): on ENOEXEC execvp runs /bin/sh itself, and
	 * then the image's own arguments are what was exec'd. */
	path = b->p->str.str[e->type == E_EXEC ? b->xx[e->b].path : e->b];
	exe = b->p->str.str[im->exe];
	np = strlen(path);
	ne = strlen(exe);
	if (strcmp(path, exe) && (strchr(path, '/') || ne <= np ||
				  exe[ne - np - 1] != '/' ||
				  strcmp(exe + ne - np, path)))
		return;
	if (e->flags & EVF_TRUNC && !(im->flags & IF_TRUNC))
		return;
	im->argv = e->a;
	if (e->flags & EVF_TRUNC)
		im->flags |= IF_TRUNC;
	else
		im->flags &= (uint16_t)~IF_TRUNC;
}

static void ev_spawn(struct pidpass *pp, uint32_t ei)
{
	struct build *b = pp->b;
	const struct ev *e = &b->ev[ei];
	struct proc *pr = pp->cur != NONE ? &b->proc[pp->cur] : NULL;
	uint32_t p, i;

	/* SPAWN is sent after posix_spawn returned: the child may have said
	 * HELLO (even exited) before.  Then it is that process. */
	if (pr && !pr->reaped && !pr->has_birth && pr->ppid == e->other &&
	    pr->birth + SPAWN_WINDOW_NS >= e->time) {
		pr->has_birth = 1;
		pr->birth = e->time;
		for (i = pr->cur; b->img[i].prev != NONE; i = b->img[i].prev)
			;
		exec_argv(b, i, e);
		return;
	}
	p = pp_new_proc(pp, e->other, e->time, 1);
	i = new_img(b, p, IK_SPAWN, e->time);
	b->img[i].pending = ei;
}

static void bind_conn(struct build *b, uint32_t conn, uint32_t img)
{
	if (conn == NONE)
		return;
	if (conn != CONN_NO_EOF)
		b->conns[conn].img = img;
	b->img[img].flags |= IF_CONN;
}

static void ev_hello(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	const struct hello_x *hx = &b->hx[e->a];
	uint64_t s = hx->start;
	uint32_t p = pp->cur, i, pend = NONE;
	struct img *im;
	int after_fork = 0;

	if (hx->kind != PT_HELLO_IMAGE) {
		/* A fork child's own connection: the child the parent's FORK
		 * started, or one we learn of only now (vfork, clone). */
		if (p != NONE && !finished(b, p) &&
		    b->img[b->proc[p].cur].kind == IK_FORK) {
			im = &b->img[b->proc[p].cur];
			im->pending = NONE;
			if (s < im->start)
				im->start = s;
		} else {
			p = pp_new_proc(pp, e->other, s, 0);
			i = new_img(b, p, IK_FORK, s);
			im = &b->img[i];
		}
		if (hx->cwd != NONE)
			im->cwd = hx->cwd;
		bind_conn(b, hx->conn, (uint32_t)(im - b->img));
		return;
	}
	if (p != NONE && !finished(b, p)) {
		const struct proc *pr = &b->proc[p];
		const struct img *cur = &b->img[pr->cur];

		/* A new image of the same process, unless nothing says it
		 * exec'd and it does not even have the same parent: then the
		 * old process's end was missed and the pid is reused. */
		if (cur->pending == NONE && cur->kind == IK_EXEC &&
		    pr->ppid != e->other)
			p = NONE;
	} else {
		p = NONE;
	}
	if (p == NONE) {
		p = pp_new_proc(pp, e->other, s, 0);
		i = new_img(b, p, IK_EXEC, s);
	} else {
		uint32_t prev = b->proc[p].cur;

		pend = b->img[prev].pending;
		if (b->img[prev].kind == IK_EXEC && s < b->img[prev].start)
			s = b->img[prev].start;
		after_fork = b->img[prev].kind == IK_FORK;
		i = exec_img(b, p, s);
	}
	im = &b->img[i];
	/* The first image after a fork: what the process ran before it is
	 * its fork phase, whose slot exec_img() may have given away. */
	if (after_fork)
		im->fork_cpu = hx->before;
	im->exe = hx->exe;
	im->cwd = hx->cwd;
	im->argv = hx->argv;
	im->env = hx->env;
	if (hx->trunc)
		im->flags |= IF_TRUNC;
	if (pend != NONE)
		exec_argv(b, i, &b->ev[pend]);
	if (hx->conn == NONE)
		im->flags |= IF_NOCONN;
	bind_conn(b, hx->conn, i);
}

static void ev_exec(struct pidpass *pp, uint32_t ei)
{
	struct build *b = pp->b;
	const struct ev *e = &b->ev[ei];
	uint32_t p = pp->cur;

	/* A vfork child announces its exec on its parent's connection
	 * before anything else is known of it. */
	if (p == NONE || finished(b, p)) {
		p = pp_new_proc(pp, e->other, e->time, 0);
		new_img(b, p, IK_FORK, e->time);
	}
	/* The collector saw this exec done (it traces the process): so was
	 * the exec or spawn announced before it, into a program that said
	 * nothing. */
	if (e->flags & EVF_SEEN && b->img[b->proc[p].cur].pending != NONE)
		untraced(b, p);
	b->img[b->proc[p].cur].pending = ei;
}

/*
 * The child of a posix_spawn that failed (ev_spawn made it, pid 0): it
 * ran the file actions and tried the exec inside glibc, and _exited 127
 * there at once.  It is shown as a fork child with the command it tried.
 */
static void spawn_failed(struct build *b, uint32_t i, const struct ev *e)
{
	struct img *im = &b->img[i];
	const struct ev *s = &b->ev[im->pending];

	im->kind = IK_FORK;
	im->exe = s->b;
	im->argv = s->a;
	im->pending = NONE;
	im->end = im->start;
	im->flags |= IF_ENDED | IF_UNTRACED | IF_SPAWN_FAILED |
		     (s->flags & EVF_TRUNC ? IF_TRUNC : 0);
	im->exit_code = 127;
	im->signal = 0;
	GROW(b->serr, b->nserr, b->cserr);
	b->serr[b->nserr].img = i;
	b->serr[b->nserr++].err = (int)e->a;
}

static void ev_exec_failed(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct img *im;

	if (pp->cur == NONE)
		return;
	im = &b->img[b->proc[pp->cur].cur];
	if (im->kind == IK_SPAWN && im->pending != NONE &&
	    b->ev[im->pending].flags & EVF_FAILED) {
		spawn_failed(b, b->proc[pp->cur].cur, e);
		return;
	}
	if (im->pending != NONE && b->ev[im->pending].type == E_EXEC)
		im->pending = NONE;
}

static void ev_exit(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct img *im;

	if (pp->cur == NONE || finished(b, pp->cur)) {
		/* A vfork or clone child that exits without exec has its
		 * EXIT on the parent's connection, and nothing else. */
		if (!e->other)
			return;
		new_img(b, pp_new_proc(pp, e->other, e->time, 0), IK_FORK,
			e->time);
	}
	im = &b->img[b->proc[pp->cur].cur];
	if (im->kind == IK_SPAWN) {
		/* Its HELLO was lost: what SPAWN said is all we know. */
		const struct ev *s = &b->ev[im->pending];

		im->kind = IK_EXEC;
		im->exe = s->b;
		im->argv = s->a;
	}
	im->pending = NONE;         /* an exec without EXEC_FAILED failed */
	im->end = e->time > im->start ? e->time : im->start;
	im->flags |= IF_ENDED | IF_EXITED;
	im->exit_code = (int16_t)(e->a & 255);
	im->signal = 0;
	if (e->b != NONE)
		im->cpu = e->b;
}

static void ev_reap(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct proc *pr;

	/* A REAP alone makes no execution: under ptrace the tracer's wait
	 * reports threads and other processes' children too.  A second REAP
	 * of a process is the tracer's and the parent's both reporting. */
	if (pp->cur == NONE || b->proc[pp->cur].reaped)
		return;
	pr = &b->proc[pp->cur];
	/* The parent's REAP ends a process: a tracer's wait (strace, gdb)
	 * collects processes that are not its children, and may do so
	 * before the parent's SPAWN for the same process has arrived.
	 * Another's counts only if the parent's never comes (pp_adopt). */
	if (pr->ppid && pr->ppid != e->other) {
		if (!pp->adopted)
			pp->adopted = e;
		return;
	}
	if (!pr->ppid)
		pr->ppid = e->other;
	pp->adopted = NULL;
	reap_apply(b, pp->cur, e);
}

static void cpu3_get(const struct build *b, uint32_t c, uint64_t *ut,
		     uint64_t *st, uint64_t *rss)
{
	*ut = b->cpu[c].ut;
	*st = b->cpu[c].st;
	*rss = b->cpu[c].rss;
	if (*ut == CPU_BIG) {
		*ut = b->big[*st].ut;
		*rss = b->big[*st].rss;
		*st = b->big[*st].st;
	}
}

/*
 * The CPU of untraced image u from its process's rusage (cpu3 whole): the
 * rusage covers every image of the process, and what the images before
 * u said of their own (their EXEC's CPU, a fork phase's CPU_BEFORE) is
 * counted there already.  Returns a cpu3.
 */
static uint32_t untraced_cpu(struct build *b, uint32_t u, uint32_t whole)
{
	uint64_t ut, st, rss, u2, s2, r2;
	uint32_t i, c, known = 0;

	cpu3_get(b, whole, &ut, &st, &rss);
	for (i = b->img[u].prev; i != NONE; i = b->img[i].prev) {
		const struct img *im = &b->img[i];

		for (c = 0; c < 2; c++) {
			uint32_t x = c ? im->fork_cpu :
				     im->kind == IK_EXEC ? im->cpu : NONE;

			if (x == NONE)
				continue;
			cpu3_get(b, x, &u2, &s2, &r2);
			ut = ut > u2 ? ut - u2 : 0;
			st = st > s2 ? st - s2 : 0;
			known = 1;
		}
	}
	return known ? pt_cpu3_new(b, ut, st, rss) : whole;
}

/* Process proc was reaped with e's status (and rusage). */
static void reap_apply(struct build *b, uint32_t proc, const struct ev *e)
{
	struct proc *pr = &b->proc[proc];
	struct img *im;

	pr->reaped = 1;
	im = &b->img[pr->cur];
	if (im->pending != NONE) {
		uint32_t u = untraced(b, proc);

		im = &b->img[u];
		im->end = e->time > im->start ? e->time : im->start;
		im->flags |= IF_ENDED;
		set_status(im, (int)e->a);
		/* The child's rusage: all we will know of a program that
		 * loaded no library. */
		if (e->b != NONE)
			im->cpu = untraced_cpu(b, u, e->b);
		return;
	}
	if (im->flags & IF_EXITED)
		return;
	if (!(im->flags & IF_ENDED) || e->time < im->end)
		im->end = e->time > im->start ? e->time : im->start;
	im->flags |= IF_ENDED | IF_REAP_END | IF_KILLED;
	im->flags &= (uint16_t)~IF_END_UNKNOWN;
	set_status(im, (int)e->a);
	/* No EXIT (killed, or silent under seccomp): the rusage its parent
	 * waited for is all there is of its CPU. */
	if (im->cpu == NONE && e->b != NONE)
		im->cpu = untraced_cpu(b, pr->cur, e->b);
}

static void ev_eof(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct conn *c = &b->conns[e->a];
	uint32_t i = c->img;
	struct img *im;

	if (e->flags & EVF_UNBOUND) {
		/* Its HELLO travelled on an AUX connection: it belongs to the
		 * image of its pid that was running when it connected. */
		for (i = (uint32_t)b->nimg; i-- > pp->first_img;) {
			im = &b->img[i];
			if (im->start <= c->connect_ns)
				break;
		}
		if (i == NONE || i < pp->first_img ||
		    !(b->img[i].flags & IF_NOCONN))
			return;
		b->img[i].flags &= (uint16_t)~IF_NOCONN;
		c->img = i;
	}
	if (i == NONE)
		return;
	im = &b->img[i];
	if (im->flags & IF_ENDED) {
		if (im->flags & IF_REAP_END && e->time < im->end)
			im->end = e->time > im->start ? e->time : im->start;
		return;
	}
	/* An image that announced an exec closes its connection by exec:
	 * what comes next (HELLO or REAP) tells how it went. */
	if (im->pending != NONE || b->proc[im->proc].cur != i)
		return;
	im->end = e->time > im->start ? e->time : im->start;
	im->flags |= IF_ENDED | IF_KILLED | IF_REAP_END;
	im->exit_code = -1;
	im->signal = -1;
}

/* Events of one pid by time, then file order. */
struct evkey {
	uint64_t time;
	uint32_t i;
};

static int cmp_evkey(const void *x, const void *y)
{
	const struct evkey *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * Sort o[0..n), indices of events in file order.  Most pids' events are
 * in order already; the others are sorted on copies of their keys, since
 * the events themselves lie far apart in a large array.
 */
static void sort_events(uint32_t *o, size_t n, const struct ev *ev,
			struct evkey **keys, size_t *cap)
{
	size_t i, j;

	for (i = 1; i < n && ev[o[i - 1]].time <= ev[o[i]].time; i++)
		;
	if (i >= n)
		return;                 /* ties are in file order already */
	if (n > *cap) {
		*cap = n + 64;
		*keys = pt_xrealloc(*keys, *cap * sizeof **keys);
	}
	for (j = 0; j < n; j++) {
		(*keys)[j].time = ev[o[j]].time;
		(*keys)[j].i = o[j];
	}
	if (n > 32) {
		qsort(*keys, n, sizeof **keys, cmp_evkey);
	} else {
		/* Nearly sorted: insertion sort. */
		for (i = 1; i < n; i++) {
			struct evkey v = (*keys)[i];

			for (j = i; j > 0 && cmp_evkey(&(*keys)[j - 1], &v) > 0; j--)
				(*keys)[j] = (*keys)[j - 1];
			(*keys)[j] = v;
		}
	}
	for (j = 0; j < n; j++)
		o[j] = (*keys)[j].i;
}

/*
 * The events of one pid, in time order, through its state machine; the
 * events are b->ev[o[0..n)].
 */
static void run_pid(struct build *b, uint32_t d, uint32_t *o, size_t n,
		    struct evkey **keys, size_t *nkeys)
{
	struct pidpass pp = {
		.b = b, .pid = b->pid_raw[d],
		.first_img = (uint32_t)b->nimg, .cur = NONE,
	};
	size_t i;

	b->pid_img[d] = (uint32_t)b->nimg;
	sort_events(o, n, b->ev, keys, nkeys);
	for (i = 0; i < n; i++) {
		const struct ev *e = &b->ev[o[i]];

		switch (e->type) {
		case E_HELLO:       ev_hello(&pp, e); break;
		case E_EXEC:        ev_exec(&pp, o[i]); break;
		case E_EXEC_FAILED: ev_exec_failed(&pp, e); break;
		case E_SPAWN:       ev_spawn(&pp, o[i]); break;
		case E_FORK:        ev_fork(&pp, e); break;
		case E_REAP:        ev_reap(&pp, e); break;
		case E_EXIT:        ev_exit(&pp, e); break;
		case E_EOF:         ev_eof(&pp, e); break;
		}
	}
	pp_adopt(&pp);
	if (pp.cur != NONE)
		close_proc(b, pp.cur, b->last_ns);
}

/*
 * Bucket by bucket (events.c), so that each bucket's events are unmapped
 * once its pids are done; b->ev is the bucket being run, and the event
 * numbers an image holds (pending) are numbers in it, which no image
 * keeps past its pid.
 */
void pt_pids_run(struct build *b)
{
	const size_t per = (size_t)1 << EV_BUCKET_SHIFT;
	uint32_t start[((size_t)1 << EV_BUCKET_SHIFT) + 1];
	uint32_t fill[(size_t)1 << EV_BUCKET_SHIFT];
	uint32_t *order = NULL;
	size_t corder = 0;
	struct evkey *keys = NULL;
	size_t k, i, d, nkeys = 0;

	b->pid_img = pt_xmalloc((b->npid + 1) * sizeof *b->pid_img);
	for (k = 0; k << EV_BUCKET_SHIFT < b->npid; k++) {
		size_t base = k << EV_BUCKET_SHIFT;
		size_t npid = b->npid - base < per ? b->npid - base : per;
		size_t n = k < b->nevb ? b->evb[k].n : 0;

		b->ev = n ? b->evb[k].ev : NULL;
		if (n > corder) {
			corder = n + n / 2;
			free(order);
			order = pt_xmalloc(corder * sizeof *order);
		}
		/* Counting sort by pid keeps file order within each pid. */
		memset(start, 0, (npid + 1) * sizeof *start);
		for (i = 0; i < n; i++)
			start[b->ev[i].pid - base + 1]++;
		for (d = 0; d < npid; d++)
			start[d + 1] += start[d];
		memcpy(fill, start, npid * sizeof *fill);
		for (i = 0; i < n; i++)
			order[fill[b->ev[i].pid - base]++] = (uint32_t)i;
		for (d = 0; d < npid; d++)
			run_pid(b, (uint32_t)(base + d), order + start[d],
				start[d + 1] - start[d], &keys, &nkeys);
		if (k < b->nevb)
			pt_events_free_bucket(b, k);
	}
	b->ev = NULL;
	b->pid_img[b->npid] = (uint32_t)b->nimg;
	free(keys);
	free(order);
}
