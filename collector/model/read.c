/*
 * Reading one capture into compact events: a reader thread parses records
 * into batches while this thread turns them into events (24 bytes each)
 * and keeps the per-connection state that a frame's meaning depends on.
 */
#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/build.h"
#include "base/worker.h"
#include "base/strbuf.h"
#include "base/util.h"

static uint32_t pid_rehash(const void *ctx, uint32_t i)
{
	return pt_hash_u64(((const struct build *)ctx)->pid_raw[i]);
}

static uint32_t conn_rehash(const void *ctx, uint32_t i)
{
	return pt_hash_u64(((const struct build *)ctx)->conns[i].id);
}

/* Dense index of pid, created on first sight. */
static uint32_t pid_index(struct build *b, uint32_t pid)
{
	uint32_t j;

	pt_itab_reserve(&b->pid_t, pid_rehash, b);
	for (j = pt_hash_u64(pid) & b->pid_t.mask; b->pid_t.slot[j];
	     j = (j + 1) & b->pid_t.mask)
		if (b->pid_raw[b->pid_t.slot[j] - 1] == pid)
			return b->pid_t.slot[j] - 1;
	GROW(b->pid_raw, b->npid, b->cpid);
	b->pid_raw[b->npid] = pid;
	b->pid_t.slot[j] = (uint32_t)++b->npid;
	b->pid_t.n++;
	return (uint32_t)(b->npid - 1);
}

uint32_t pt_read_pid_find(const struct build *b, uint32_t pid)
{
	uint32_t j;

	if (!b->pid_t.slot)
		return NONE;
	for (j = pt_hash_u64(pid) & b->pid_t.mask; b->pid_t.slot[j];
	     j = (j + 1) & b->pid_t.mask)
		if (b->pid_raw[b->pid_t.slot[j] - 1] == pid)
			return b->pid_t.slot[j] - 1;
	return NONE;
}

/*
 * The collector numbers connections from 1, so an id is looked up by
 * indexing (a frame's connection is looked up for every frame); ids beyond
 * CONN_DIRECT, which only a damaged or forged capture has, by hashing.
 */
#define CONN_DIRECT (1u << 22)

static struct conn *conn_find(struct build *b, uint64_t id)
{
	uint32_t j;

	if (id < CONN_DIRECT) {
		if (id >= b->nconn_ix || !b->conn_ix[id])
			return NULL;
		return &b->conns[b->conn_ix[id] - 1];
	}
	if (!b->conn_t.slot)
		return NULL;
	for (j = pt_hash_u64(id) & b->conn_t.mask; b->conn_t.slot[j];
	     j = (j + 1) & b->conn_t.mask)
		if (b->conns[b->conn_t.slot[j] - 1].id == id)
			return &b->conns[b->conn_t.slot[j] - 1];
	return NULL;
}

static struct conn *conn_get(struct build *b, const struct pt_cap_record *h)
{
	struct conn *c = conn_find(b, h->conn_id);
	uint64_t id = h->conn_id;
	uint32_t j = 0;

	if (c)
		return c;
	if (id < CONN_DIRECT) {
		if (id >= b->nconn_ix) {
			size_t n = b->nconn_ix ? b->nconn_ix : 1024;

			while (n <= id)
				n *= 2;
			b->conn_ix = pt_xrealloc_big(b->conn_ix, n * sizeof *b->conn_ix);
			memset(b->conn_ix + b->nconn_ix, 0,
			       (n - b->nconn_ix) * sizeof *b->conn_ix);
			b->nconn_ix = n;
		}
	} else {
		pt_itab_reserve(&b->conn_t, conn_rehash, b);
		for (j = pt_hash_u64(id) & b->conn_t.mask; b->conn_t.slot[j];
		     j = (j + 1) & b->conn_t.mask)
			;
	}
	if (b->conn_free != NONE && id < CONN_DIRECT) {
		c = &b->conns[b->conn_free];
		b->conn_free = c->img;
	} else {
		GROW(b->conns, b->nconn, b->cconn);
		c = &b->conns[b->nconn++];
	}
	memset(c, 0, sizeof *c);
	c->id = id;
	c->connect_ns = h->recv_ns;
	c->owner = h->peer_pid;
	c->peer = h->peer_pid;
	c->img = NONE;
	c->hx = NONE;
	if (id < CONN_DIRECT) {
		b->conn_ix[id] = (uint32_t)(c - b->conns) + 1;
	} else {
		b->conn_t.slot[j] = (uint32_t)(c - b->conns) + 1;
		b->conn_t.n++;
	}
	return c;
}

/*
 * The EOF of c: it matters no more, but for an E_EOF event about it
 * (keep: the event), which takes a copy along.  A million connections
 * held to the end were the largest thing read but the events.  The
 * slot goes to the next connection; one looked up by hashing (only a
 * damaged capture's) stays, as the table cannot lose an entry.
 */
static void conn_end(struct build *b, struct conn *c, struct ev *keep)
{
	uint32_t to = CONN_NO_EOF;

	if (keep) {
		GROW(b->eofc, b->neofc, b->ceofc);
		b->eofc[b->neofc] = *c;
		to = (uint32_t)b->neofc++;
		keep->a = to;
	}
	if (c->hx != NONE)
		b->hx[c->hx].conn = to;
	c->hx = NONE;
	if (c->id >= CONN_DIRECT)
		return;
	b->conn_ix[c->id] = 0;
	c->img = b->conn_free;
	b->conn_free = (uint32_t)(c - b->conns);
}

#define BATCH_SIZE (1u << 20)
#define NBATCH 4                        /* in flight between the threads */

struct batch {
	unsigned char *mem;             /* struct pev, its pstr, its bytes... */
	size_t cap, used;
};

struct rthread {
	struct pt_reader *r;
	struct pt_worker w;
	struct batch full[NBATCH];      /* queue, in reading order */
	size_t nfull, headfull;
	struct batch spare[NBATCH];     /* consumed, for reuse */
	size_t nspare;
	int done;                       /* the reader's last result is rc */
	int rc;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Measure s into ps; returns the bytes its copy takes. */
static size_t measure(struct pstr *ps, const char *s)
{
	if (!s) {
		memset(ps, 0, sizeof *ps);
		return 0;
	}
	ps->s = s;
	ps->len = (uint32_t)strlen(s);
	return (size_t)ps->len + 1;
}

/* Copy the string ps measures to `to`, hash it, and point ps there. */
static char *put_pstr(struct pstr *ps, char *to)
{
	if (!ps->s)
		return to;
	memcpy(to, ps->s, (size_t)ps->len + 1);
	ps->s = to;
	ps->hash = pt_hash_bytes(to, ps->len);
	return to + ps->len + 1;
}

/*
 * Copy ev into batch bt, with what interning needs computed.  Returns 0, or
 * -1 if it does not fit (bt is left as it was: what is measured past its
 * end is not yet part of it).
 */
static int batch_add(struct batch *bt, const struct pt_cap_event *ev)
{
	const struct pt_record *r = &ev->rec;
	int frame = ev->hdr.kind == PT_CAP_FRAME;
	size_t i, need = align8(sizeof(struct pev)), nstr = 0, bytes = 0;
	struct pev *pe = (struct pev *)(bt->mem + bt->used);
	struct pstr *ps = NULL, exe, cwd, path;
	char *to;

	if (frame) {
		nstr = r->argc + r->envc;
		if (bt->used + need + nstr * sizeof *ps > bt->cap)
			return -1;
		ps = (struct pstr *)(pe + 1);
		bytes = measure(&exe, r->exe) + measure(&cwd, r->cwd) +
			measure(&path, r->path);
		for (i = 0; i < r->argc; i++)
			bytes += measure(&ps[i], r->argv[i]);
		for (i = 0; i < r->envc; i++)
			bytes += measure(&ps[r->argc + i], r->env[i]);
	} else if (ev->hdr.kind == PT_CAP_META || ev->hdr.kind == PT_CAP_LOSS) {
		bytes = ev->hdr.length;
	}
	/* A trace file a program wrote (model/sub.c): the whole frame. */
	if (frame && (r->hdr.type == PT_REC_TRACE ||
		      r->hdr.type == PT_REC_FILES))
		bytes += ev->hdr.length;
	need += nstr * sizeof *ps + align8(bytes);
	if (bt->used + need > bt->cap)
		return -1;
	to = (char *)(pe + 1) + nstr * sizeof *ps;
	memset(pe, 0, sizeof *pe);
	pe->hdr = ev->hdr;
	pe->size = need;
	if (frame) {
		pe->rec = *r;
		pe->rec.argv = pe->rec.env = NULL;
		pe->rec.exe = pe->rec.cwd = pe->rec.path = NULL;
		pe->rec.cpu_before = pe->rec.cpu = NULL;
		if (r->cpu_before) {
			char *end;

			pe->before_ut = strtoull(r->cpu_before, &end, 10);
			pe->before_st = strtoull(end, &end, 10);
			pe->have_before = !*end;
		} else if (r->cpu && r->hdr.type == PT_REC_EXEC) {
			char *end;

			pe->before_ut = strtoull(r->cpu, &end, 10);
			pe->before_st = strtoull(end, &end, 10);
			pe->before_rss = strtoull(end, &end, 10);
			pe->have_before = !*end;
		}
		pe->exe = exe;
		pe->cwd = cwd;
		pe->path = path;
		to = put_pstr(&pe->exe, to);
		to = put_pstr(&pe->cwd, to);
		to = put_pstr(&pe->path, to);
		pe->argv = ps;
		pe->env = ps + r->argc;
		for (i = 0; i < nstr; i++)
			to = put_pstr(&ps[i], to);
		pe->argv_hash = pt_vec_hash(pe->argv, r->argc);
		pe->env_hash = pt_vec_hash(pe->env, r->envc);
		if (r->hdr.type == PT_REC_TRACE ||
		    r->hdr.type == PT_REC_FILES) {
			memcpy(to, ev->data, ev->hdr.length);
			pe->data = (const unsigned char *)to;
		}
	} else if (bytes) {
		memcpy(to, ev->data, bytes);
		pe->data = (const unsigned char *)to;
	}
	bt->used += need;
	return 0;
}

/*
 * Fill bt from the reader, which has already delivered *held (when
 * *have): events up to the end, or as many as fit.  Returns the reader's
 * result: 1 if more may follow, 0 at the clean end, -1 at damage.
 */
static int batch_fill(struct pt_reader *r, struct batch *bt,
		      struct pt_cap_event *held, int *have)
{
	int rc = 1;

	bt->used = 0;
	for (;;) {
		if (!*have) {
			rc = pt_reader_next(r, held);
			if (rc <= 0)
				return rc;
			*have = 1;
		}
		if (batch_add(bt, held) < 0) {
			if (bt->used)
				return 1;
			/* A frame larger than a whole batch: a batch of its
			 * own, made big enough. */
			bt->cap = 2 * bt->cap;
			bt->mem = pt_xrealloc(bt->mem, bt->cap);
			continue;
		}
		*have = 0;
	}
}

static void *reader_main(void *arg)
{
	struct rthread *rt = arg;
	struct pt_cap_event held;
	struct batch bt;
	int have = 0, rc;

	do {
		pt_worker_lock(&rt->w);
		while (!rt->nspare)
			pt_worker_wait(&rt->w);
		bt = rt->spare[--rt->nspare];
		pt_worker_unlock(&rt->w);

		rc = batch_fill(rt->r, &bt, &held, &have);

		pt_worker_lock(&rt->w);
		rt->full[(rt->headfull + rt->nfull++) % NBATCH] = bt;
		if (rc <= 0) {
			rt->done = 1;
			rt->rc = rc;
		}
		pt_worker_wake(&rt->w);
		pt_worker_unlock(&rt->w);
	} while (rc > 0);
	return NULL;
}

/* ---- reading: records to events ---- */

static uint32_t intern_opt(struct build *b, const struct pstr *s,
			   uint32_t absent)
{
	return s->s ? pt_str_intern_h(&b->p->str, s->s, s->len, s->hash) : absent;
}

/*
 * A lean model keeps no command line, only which record carried it: its
 * number, from 1 (b->seq, the record being added), which
 * pt_model_read_argv() counts again.
 */
static uint32_t intern_argv(struct build *b, const struct pstr *v, size_t n,
			    uint32_t h)
{
	if (b->m->lean)
		return n && b->seq < NONE - 1 ? b->seq : 0;
	return pt_vec_intern(&b->p->vec, &b->p->str, v, n, h, 1);
}

static uint32_t intern_env(struct build *b, const struct pstr *v, size_t n,
			   uint32_t h)
{
	return pt_vec_intern(&b->p->vec, &b->p->str, v, n, h, 0);
}

static struct ev *new_ev(struct build *b, enum ev_type type, uint32_t pid,
			 uint64_t time)
{
	uint32_t d = pid_index(b, pid);
	struct ev *e;

	if (d >= PID_LIMIT) {
		/* More pids than any kernel hands out: a forged capture. */
		b->m->bad_frames++;
		return &b->dummy;
	}
	e = pt_events_add(b, d);
	memset(e, 0, sizeof *e);
	e->type = type;
	e->pid = d;
	e->time = time;
	return e;
}

/* A CPU time beyond this (about 2 years) is damage, not a measurement. */
#define CPU_US_MAX (1ull << 46)

uint32_t pt_cpu3_new(struct build *b, uint64_t ut, uint64_t st,
		     uint64_t rss)
{
	/* A forged or damaged value must not overflow the sums of every
	 * view downstream: it is no CPU time at all. */
	if (ut > CPU_US_MAX || st > CPU_US_MAX || rss > CPU_US_MAX)
		return NONE;
	GROW(b->cpu, b->ncpu, b->ccpu);
	if (ut >= CPU_BIG || st >= CPU_BIG || rss >= CPU_BIG) {
		GROW(b->big, b->nbig, b->cbig);
		b->big[b->nbig].ut = ut;
		b->big[b->nbig].st = st;
		b->big[b->nbig].rss = rss;
		ut = CPU_BIG;
		st = b->nbig++;
		rss = 0;
	}
	b->cpu[b->ncpu].ut = (uint32_t)ut;
	b->cpu[b->ncpu].st = (uint32_t)st;
	b->cpu[b->ncpu].rss = (uint32_t)rss;
	return (uint32_t)b->ncpu++;
}

void pt_note_time(struct build *b, uint64_t t)
{
	if (t > b->last_ns)
		b->last_ns = t;
}

/*
 * A pid that a frame on connection c carries, as the collector's pid or a
 * reference standing for it (pidns.h).  outer: the pid is of the namespace
 * the sender's namespace was made in (a namespace's first process names
 * the process it was copied from).
 */
static uint32_t xpid(struct build *b, const struct conn *c, uint32_t pid,
		     int outer)
{
	if (!c->in_ns || !pid || outer)
		return pid;
	if (pid == c->nspid)
		return c->peer;
	return pt_pidns_ref(&b->ns, c->ns, pid);
}

/* A connection's first HELLO: whose it is, and in which pid namespace. */
static void hello_conn(struct build *b, struct conn *c,
		       const struct pt_record *r)
{
	c->kind = (uint8_t)r->u.hello.kind;
	c->owner = r->hdr.pid;
	/* pidns 0: no /proc, or a capture from before the field (doc/format.md):
	 * the pids are taken as they are. */
	if (!c->peer || c->peer == r->hdr.pid || !r->u.hello.pidns)
		return;
	c->in_ns = 1;
	c->ns = r->u.hello.pidns;
	c->nspid = r->hdr.pid;
	c->owner = c->peer;
	pt_pidns_learn(&b->ns, c->ns, c->nspid, c->peer);
}

static void add_frame(struct build *b, const struct pev *cev)
{
	const struct pt_record *r = &cev->rec;
	struct conn *c = conn_get(b, &cev->hdr);
	int first = c->kind == CK_NEW;
	uint64_t t = r->hdr.time_ns;
	struct hello_x *hx;
	struct ev *e;
	uint32_t pid, origin;

	b->m->frames++;
	pt_note_time(b, t);
	if (first)
		c->kind = CK_NOHELLO;
	if (first && r->hdr.type == PT_REC_HELLO &&
	    r->u.hello.kind >= PT_HELLO_IMAGE && r->u.hello.kind <= PT_HELLO_AUX)
		hello_conn(b, c, r);
	pid = xpid(b, c, r->hdr.pid, 0);
	/* The first process of a namespace was copied from one outside. */
	origin = xpid(b, c, r->hdr.origin, r->hdr.pid == 1);
	switch (r->hdr.type) {
	case PT_REC_HELLO:
		if (!b->have_offset && r->u.hello.realtime_ns) {
			b->offset = (int64_t)(r->u.hello.realtime_ns - t);
			b->have_offset = 1;
		}
		if (r->u.hello.kind != PT_HELLO_IMAGE &&
		    r->u.hello.kind != PT_HELLO_FORK &&
		    r->u.hello.kind != PT_HELLO_FOREIGN)
			break;          /* AUX, or a kind from the future */
		e = new_ev(b, E_HELLO, pid, t);
		/* A namespace's first process has parent 0 there: the one it
		 * was copied from, if it says, made it. */
		e->other = r->u.hello.ppid || r->hdr.pid != 1 || !c->in_ns ?
			   xpid(b, c, r->u.hello.ppid, 0) : origin;
		GROW(b->hx, b->nhx, b->chx);
		e->a = (uint32_t)b->nhx;
		hx = &b->hx[b->nhx++];
		hx->kind = (uint16_t)r->u.hello.kind;
		hx->start = r->u.hello.start_ns && r->u.hello.start_ns <= t ?
			    r->u.hello.start_ns : t;
		/* The connection a HELLO opens is the image's own, and its EOF
		 * its end; a HELLO that came on another (AUX) connection
		 * binds nothing. */
		hx->conn = first && c->kind != CK_FOREIGN ?
			   (uint32_t)(c - b->conns) : NONE;
		if (hx->conn != NONE)
			c->hx = e->a;
		if (hx->kind == PT_HELLO_IMAGE) {
			hx->exe = intern_opt(b, &cev->exe, 0);
			hx->cwd = intern_opt(b, &cev->cwd, 0);
			hx->argv = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
			hx->env = intern_env(b, cev->env, r->envc, cev->env_hash);
		} else {
			hx->exe = hx->argv = hx->env = NONE;
			hx->cwd = intern_opt(b, &cev->cwd, NONE);
		}
		hx->trunc = r->argv_truncated != 0;
		hx->before = cev->have_before ?
			     pt_cpu3_new(b, cev->before_ut, cev->before_st, 0) : NONE;
		break;
	case PT_REC_EXEC:
		e = new_ev(b, E_EXEC, pid, t);
		/* A child the library did not see being made (vfork, clone,
		 * glibc's internal fork in daemon(3)) names the process it was
		 * copied from: its real parent, even once it is reparented. */
		e->other = origin ? origin : xpid(b, c, r->u.exec.ppid, 0);
		e->a = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
		GROW(b->xx, b->nxx, b->cxx);
		e->b = (uint32_t)b->nxx;
		b->xx[b->nxx].path = intern_opt(b, &cev->path, 0);
		b->xx[b->nxx].cwd = intern_opt(b, &cev->cwd, NONE);
		b->xx[b->nxx++].cpu = cev->have_before ?
				      pt_cpu3_new(b, cev->before_ut,
						  cev->before_st,
						  cev->before_rss) : NONE;
		e->flags = (r->argv_truncated ? EVF_TRUNC : 0) |
			   (r->u.exec.call == PT_CALL_SEEN ? EVF_SEEN : 0);
		break;
	case PT_REC_EXEC_FAILED:
		new_ev(b, E_EXEC_FAILED, pid, t);
		break;
	case PT_REC_SPAWN:
		if (!r->u.spawn.child_pid && r->spawn_errno > 0) {
			/* A failed posix_spawn's child, pid unknown: each is a
			 * process of pid 0, ended as its error follows. */
			e = new_ev(b, E_SPAWN, 0, t);
			e->other = pid;
			e->a = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
			e->b = intern_opt(b, &cev->path, 0);
			e->flags = EVF_FAILED | (r->argv_truncated ? EVF_TRUNC : 0);
			e = new_ev(b, E_EXEC_FAILED, 0, t);
			e->other = pid;
			e->a = (uint32_t)r->spawn_errno;
			break;
		}
		if (!r->u.spawn.child_pid)
			break;
		e = new_ev(b, E_SPAWN, xpid(b, c, r->u.spawn.child_pid, 0), t);
		e->other = pid;
		e->a = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
		e->b = intern_opt(b, &cev->path, 0);
		e->flags = r->argv_truncated ? EVF_TRUNC : 0;
		break;
	case PT_REC_FORK:
		if (!r->u.fork.child_pid)
			break;
		e = new_ev(b, E_FORK, xpid(b, c, r->u.fork.child_pid, 0), t);
		e->other = pid;
		break;
	case PT_REC_REAP:
		if (!r->u.reap.child_pid) {
			GROW(b->anon, b->nanon, b->canon);
			b->anon[b->nanon].parent = pid;
			b->anon[b->nanon].status = r->u.reap.wait_status;
			b->anon[b->nanon++].time = t;
			break;
		}
		e = new_ev(b, E_REAP, xpid(b, c, r->u.reap.child_pid, 0), t);
		e->other = pid;
		e->a = (uint32_t)r->u.reap.wait_status;
		e->b = r->u.reap.have_rusage ?
		       pt_cpu3_new(b, r->u.reap.utime_us, r->u.reap.stime_us,
			       r->u.reap.maxrss_kb) : NONE;
		break;
	case PT_REC_EXIT:
		e = new_ev(b, E_EXIT, pid, t);
		/* On an inherited connection: a vfork or clone child's, whose
		 * EXIT may be all that is ever heard of it. */
		if (origin)
			e->other = origin;
		else if (pid != c->owner && c->kind != CK_NOHELLO)
			e->other = c->owner;
		e->a = (uint32_t)r->u.exit.status;
		e->b = pt_cpu3_new(b, r->u.exit.utime_us, r->u.exit.stime_us,
			       r->u.exit.maxrss_kb);
		if (pid == c->owner)
			c->owner_exited = 1;
		break;
	case PT_REC_TRACE:
		/* A lean model feeds the OTLP export, which has no use for
		 * sub-process traces: parsing them would cost memory and
		 * report on files nobody asked for. */
		if (!b->m->lean && cev->data &&
		    cev->hdr.length >= PT_FRAME_HDR)
			pt_sub_add_file(b, pid, t, cev->data + PT_FRAME_HDR,
					cev->hdr.length - PT_FRAME_HDR);
		break;
	case PT_REC_FILES:
		if (!b->m->lean && cev->data &&
		    cev->hdr.length >= PT_FRAME_HDR)
			pt_files_add(b, pid, t, cev->data + PT_FRAME_HDR,
				     cev->hdr.length - PT_FRAME_HDR);
		break;
	default:
		break;                  /* STOP, or a type from the future */
	}
}

static void add_eof(struct build *b, const struct pev *cev)
{
	struct conn *c = conn_find(b, cev->hdr.conn_id);
	struct ev *e;

	pt_note_time(b, cev->hdr.recv_ns);
	/* An AUX or FOREIGN connection is opened for one frame and closed;
	 * a dropped one was closed by the collector.  Their EOF says nothing
	 * about a process ending, nor does one after an EXIT. */
	if (!c)
		return;
	if (!c->owner || c->owner_exited || c->kind == CK_AUX ||
	    c->kind == CK_FOREIGN || c->kind == CK_DROPPED) {
		conn_end(b, c, NULL);
		return;
	}
	e = new_ev(b, E_EOF, c->owner, cev->hdr.recv_ns);
	if (e == &b->dummy) {
		conn_end(b, c, NULL);
		return;
	}
	if (c->kind != CK_IMAGE && c->kind != CK_FORK)
		e->flags = EVF_UNBOUND;
	conn_end(b, c, e);
}

static void add_meta(struct build *b, const unsigned char *data, size_t n)
{
	struct capmeta *cm = &b->p->meta[b->capture];
	const unsigned char *p = data;
	const char *k, *v;
	size_t kn, vn;

	if (!n)
		return;                 /* data may be NULL then */
	while (pt_cap_meta_next(&p, data + n, &k, &kn, &v, &vn)) {
		if (cm->n + 2 > cm->cap) {
			cm->cap = cm->cap ? 2 * cm->cap : 32;
			cm->kv = pt_xrealloc(cm->kv, cm->cap * sizeof *cm->kv);
		}
		cm->kv[cm->n++] = pt_str_intern_ptr(&b->p->str, k, kn);
		cm->kv[cm->n++] = pt_str_intern_ptr(&b->p->str, v, vn);
	}
}

static void add_event(struct build *b, const struct pev *cev)
{
	struct conn *c;
	uint64_t lost;

	switch (cev->hdr.kind) {
	case PT_CAP_META:
		add_meta(b, cev->data, cev->hdr.length);
		break;
	case PT_CAP_CONNECT:
		b->m->connections++;
		pt_note_time(b, cev->hdr.recv_ns);
		conn_get(b, &cev->hdr);
		break;
	case PT_CAP_FRAME:
		add_frame(b, cev);
		break;
	case PT_CAP_EOF:
		add_eof(b, cev);
		break;
	case PT_CAP_DROP:
		b->m->bad_frames++;
		c = conn_find(b, cev->hdr.conn_id);
		if (c)
			c->kind = CK_DROPPED;
		break;
	case PT_CAP_LOSS:
		if (cev->hdr.length >= 8) {
			memcpy(&lost, cev->data, 8);
			b->m->lost_frames += le64toh(lost);
		}
		break;
	default:
		break;
	}
}

/*
 * Hand each record of r to fn, in order, parsed in a thread of its own
 * when there is a CPU for it.  Returns the reader's last result (0 or
 * -1).
 */
static int read_records(struct pt_reader *r,
			void (*fn)(void *ctx, const struct pev *pe), void *ctx)
{
	struct rthread rt;
	struct pt_cap_event held;
	int threaded, have = 0, rc = 1;
	size_t i;

	memset(&rt, 0, sizeof rt);
	rt.r = r;
	for (i = 0; i < NBATCH; i++) {
		rt.spare[i].cap = BATCH_SIZE;
		rt.spare[i].mem = pt_xmalloc(BATCH_SIZE);
	}
	rt.nspare = NBATCH;
	/* The reader ends by itself, at the capture's end; the worker's quit
	 * flag is not needed, and stopping it only joins. */
	threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		   !pt_worker_start(&rt.w, reader_main, &rt);
	for (;;) {
		struct batch bt;
		size_t off;

		if (threaded) {
			pt_worker_lock(&rt.w);
			while (!rt.nfull && !rt.done)
				pt_worker_wait(&rt.w);
			if (!rt.nfull) {
				rc = rt.rc;
				pt_worker_unlock(&rt.w);
				break;
			}
			bt = rt.full[rt.headfull];
			rt.headfull = (rt.headfull + 1) % NBATCH;
			rt.nfull--;
			pt_worker_unlock(&rt.w);
		} else {
			if (rc <= 0)
				break;
			bt = rt.spare[0];
			rc = batch_fill(r, &bt, &held, &have);
		}
		for (off = 0; off < bt.used;) {
			const struct pev *pe = (const struct pev *)(bt.mem + off);

			fn(ctx, pe);
			off += pe->size;
		}
		if (threaded) {
			pt_worker_lock(&rt.w);
			rt.spare[rt.nspare++] = bt;
			pt_worker_wake(&rt.w);
			pt_worker_unlock(&rt.w);
		} else {
			rt.spare[0] = bt;
		}
	}
	if (threaded)
		pt_worker_stop(&rt.w);
	for (i = 0; i < rt.nspare; i++)
		free(rt.spare[i].mem);
	return rc;
}

static void add_record(void *ctx, const struct pev *pe)
{
	struct build *b = ctx;

	/* From 1: a lean model's argv_ref (intern_argv). */
	if (b->seq < NONE)
		b->seq++;
	add_event(b, pe);
}

int pt_read_capture(struct build *b, struct pt_reader *r)
{
	return read_records(r, add_record, b);
}

/* ---- the second reading of a lean model (model.h) ---- */

struct argv_pass {
	const uint32_t *refs;
	size_t n, next;
	uint32_t seq;
	void (*fn)(void *ctx, size_t k, const char *const *argv, size_t argc);
	void *ctx;
	const char **argv;
	size_t cap;
};

static void argv_record(void *ctx, const struct pev *pe)
{
	struct argv_pass *ap = ctx;
	size_t i, argc;

	if (ap->seq < NONE)
		ap->seq++;
	if (ap->next == ap->n || ap->refs[ap->next] != ap->seq)
		return;
	/* Only a frame carries a command line; a number that names anything
	 * else means the capture changed since: no arguments then. */
	argc = pe->hdr.kind == PT_CAP_FRAME ? pe->rec.argc : 0;
	if (argc > ap->cap) {
		ap->cap = argc;
		ap->argv = pt_xrealloc(ap->argv, argc * sizeof *ap->argv);
	}
	for (i = 0; i < argc; i++)
		ap->argv[i] = pe->argv[i].s ? pe->argv[i].s : "";
	/* Executions that inherit one command line share its number. */
	for (; ap->next < ap->n && ap->refs[ap->next] == ap->seq; ap->next++)
		ap->fn(ap->ctx, ap->next, ap->argv, argc);
}

long pt_model_read_argv(const char *path, const uint32_t *refs, size_t n,
			void (*fn)(void *ctx, size_t k, const char *const *argv,
				   size_t argc),
			void *ctx)
{
	struct pt_reader *r = pt_reader_open(path);
	struct argv_pass ap = { .refs = refs, .n = n, .fn = fn, .ctx = ctx };

	if (!r)
		return -1;
	read_records(r, argv_record, &ap);
	pt_reader_close(r);
	free(ap.argv);
	return (long)ap.next;
}

/*
 * Once everything is read, the references to pids of other namespaces
 * that a connection taught become the collector's pids: events about
 * such a pid go with the events of that pid.
 */
void pt_resolve_ns(struct build *b)
{
	size_t npid = b->npid, d, i, k, nk, nmoved = 0, cmoved = 0;
	struct ev *moved = NULL;
	uint32_t *to;

	if (!b->ns.n)
		return;
	to = pt_xmalloc((npid ? npid : 1) * sizeof *to);
	for (d = 0; d < npid; d++) {
		uint32_t pid = pt_pidns_resolve(&b->ns, b->pid_raw[d]);

		to[d] = pid == b->pid_raw[d] ? (uint32_t)d : pid_index(b, pid);
	}
	for (k = 0, nk = b->nevb; k < nk; k++) {
		struct evbucket *bk = &b->evb[k];
		size_t kept = 0;

		for (i = 0; i < bk->n; i++) {
			struct ev e = bk->ev[i];

			if (to[e.pid] < PID_LIMIT)
				e.pid = to[e.pid];
			e.other = pt_pidns_resolve(&b->ns, e.other);
			if ((size_t)e.pid >> EV_BUCKET_SHIFT == k) {
				bk->ev[kept++] = e;
			} else {
				GROW(moved, nmoved, cmoved);
				moved[nmoved++] = e;
			}
		}
		bk->n = kept;
	}
	/* Ties in time with the events already there now sort after them:
	 * they came from another connection, whose order in the file
	 * meant nothing either. */
	for (i = 0; i < nmoved; i++)
		*pt_events_add(b, moved[i].pid) = moved[i];
	free(moved);
	for (i = 0; i < b->nanon; i++)
		b->anon[i].parent = pt_pidns_resolve(&b->ns, b->anon[i].parent);
	free(to);
}
