/* Tracing what the library cannot enter, by ptrace event stops; see
 * ptrace.h. */
#include "collect/ptrace.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proftrace/wire.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "collect/outside.h"

#define CMDLINE_MAX (256u << 10)        /* what we read of a command line */
#define ENVIRON_MAX (1u << 20)          /* what we read of an environment */
#define DETACH_NS 1000000000ull         /* how long the run's end waits */

#define OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		 PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)

enum {
	T_ROOT   = 1u << 0,             /* record's command */
	T_THREAD = 1u << 1,             /* a thread, not a process */
	T_KNOWN  = 1u << 2,             /* its parent's fork event was seen */
	T_HELD   = 1u << 3,             /* stopped, waiting for that event */
	T_EXECED = 1u << 4,             /* it exec'd since it was made */
	T_ASKED  = 1u << 5,             /* its library asked us to trace it */
	T_SAID   = 1u << 6,             /* its library sent the EXEC of the
					 * exec to come */
	T_LOOSE  = 1u << 7,             /* to let go at its next stop */
	T_SPAWN  = 1u << 8,             /* in a posix_spawn of a program its
					 * library cannot enter: the child is
					 * its SPAWN's */
	T_HIDDEN = 1u << 9,             /* in a root that hides the library
					 * and us (PT_SEIZE_HIDDEN), or made
					 * there: traced whatever it runs */
};

struct tproc {
	pid_t tid, tgid;
	pid_t parent;                   /* the process that made it */
	unsigned flags;
};

struct pt_tracer {
	struct tproc *p;
	size_t n, cap;
	pid_t root;                     /* 0: none */
	pid_t self;
	int root_done, root_ws;         /* the root's end, once seen */
	struct rusage root_ru;
	int detaching;
	struct pt_outside o;            /* frames, and /proc read */
};

struct pt_tracer *pt_tracer_new(void (*put)(void *arg, const void *frame,
					    size_t len), void *arg)
{
	struct pt_tracer *t = pt_xcalloc(1, sizeof *t);

	t->self = getpid();
	pt_outside_init(&t->o, put, arg);
	return t;
}

int pt_tracer_wanted(void)
{
	const char *v = getenv("PROFTRACE_PTRACE");

	return !v || strcmp(v, "0");
}

/* ---- the table ---- */

static struct tproc *find(struct pt_tracer *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->p[i].tid == tid)
			return &t->p[i];
	return NULL;
}

static struct tproc *add(struct pt_tracer *t, pid_t tid)
{
	struct tproc *e;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 32;
		t->p = pt_xrealloc(t->p, t->cap * sizeof *t->p);
	}
	e = &t->p[t->n++];
	memset(e, 0, sizeof *e);
	e->tid = e->tgid = tid;
	return e;
}

/* A traced thread of process tgid, not one held: its leader, or the
 * thread that asked to be traced through a posix_spawn.  NULL if none. */
static struct tproc *find_in(struct pt_tracer *t, pid_t tgid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->p[i].tgid == tgid && !(t->p[i].flags & T_HELD))
			return &t->p[i];
	return NULL;
}

static void drop(struct pt_tracer *t, struct tproc *e)
{
	*e = t->p[--t->n];
}

int pt_tracer_has(const struct pt_tracer *t, pid_t pid)
{
	size_t i;

	for (i = 0; t && i < t->n; i++)
		if (t->p[i].tid == pid && !(t->p[i].flags & T_THREAD))
			return 1;
	return 0;
}

int pt_tracer_active(const struct pt_tracer *t)
{
	return t && t->n > 0;
}

/* ---- reading /proc ---- */

/* Does the 64-bit ELF file at fd (header eh) have a PT_INTERP: is it a
 * dynamic program, which the loader may give the library? */
static int elf_interp(int fd, const Elf64_Ehdr *eh)
{
	Elf64_Phdr ph[64];
	size_t i, n = eh->e_phnum;

	if (eh->e_phentsize != sizeof *ph || !n || n > 64 ||
	    pread(fd, ph, n * sizeof *ph, (off_t)eh->e_phoff) !=
	    (ssize_t)(n * sizeof *ph))
		return 0;
	for (i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return 1;
	return 0;
}

/* Does LD_PRELOAD in pid's (new) environment name the library? */
static int env_preloads(struct pt_tracer *t, pid_t pid)
{
	char path[48];
	size_t i, n;

	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	if (pt_sb_read_path(&t->o.buf, path, ENVIRON_MAX) <= 0)
		return 0;
	for (i = 0; i < t->o.buf.len; i += n + 1) {
		const char *s = t->o.buf.buf + i;

		n = strnlen(s, t->o.buf.len - i);
		if (n > 11 && !memcmp(s, "LD_PRELOAD=", 11))
			return memmem(s, n, PT_LIB_STEM,
				      PT_LEN(PT_LIB_STEM)) != NULL;
	}
	return 0;
}

/*
 * Will pid's new image speak for itself?  A dynamic program whose
 * environment preloads the library does, unless it is Go (whose raw
 * system calls only the tracer sees).  In the order that asks least of
 * a static program.
 */
static int speaks(struct pt_tracer *t, pid_t pid)
{
	char path[48];
	Elf64_Ehdr eh;
	int fd, v = 0;

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64)
		v = elf_interp(fd, &eh) && env_preloads(t, pid) &&
		    !pt_outside_elf_go(fd, &eh);
	close(fd);
	return v;
}

static void put_fork(struct pt_tracer *t, pid_t parent, pid_t child,
		     int event)
{
	struct pt_rec_fork f = {
		.child_pid = htole32((uint32_t)child),
		.call = htole32(event == PTRACE_EVENT_VFORK ? PT_CALL_VFORK :
				event == PTRACE_EVENT_CLONE ? PT_CALL_CLONE :
				PT_CALL_FORK),
	};

	pt_outside_begin(&t->o, PT_REC_FORK, parent, pt_mono_ns(), &f,
			 sizeof f);
	pt_outside_end(&t->o);
}

/*
 * The file name pid's exec was given (AT_EXECFN, in its new stack), into
 * out (size n).  0, or -1.
 */
static int exec_fn(struct pt_tracer *t, pid_t pid, char *out, size_t n)
{
	char path[48];
	const Elf64_auxv_t *a;
	struct iovec lo = { out, n - 1 }, re = { NULL, n - 1 };
	ssize_t got;
	size_t i;

	snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
	if (pt_sb_read_path(&t->o.buf, path, 4096) <= 0)
		return -1;
	a = (const Elf64_auxv_t *)(const void *)t->o.buf.buf;
	for (i = 0; i < t->o.buf.len / sizeof *a && a[i].a_type != AT_NULL; i++)
		if (a[i].a_type == AT_EXECFN)
			re.iov_base = (void *)(uintptr_t)a[i].a_un.a_val;
	if (!re.iov_base)
		return -1;
	/* The name lies near the stack's top: what follows it may be
	 * unmapped, and a short read is fine. */
	got = process_vm_readv(pid, &lo, 1, &re, 1, 0);
	if (got <= 0 || !memchr(out, 0, (size_t)got))
		return -1;
	return 0;
}

/*
 * argv (n bytes, NUL-separated) is what the kernel made of an exec of
 * fn: for a script, the interpreter, its argument, fn, then the exec's
 * own arguments but the first.  Where fn is found so, the offset of the
 * arguments to take from it (fn standing for the first); else 0.
 */
static size_t script_args(const char *argv, size_t n, const char *fn)
{
	size_t i = 0, k, len;

	for (k = 0; k < 3 && i < n; k++) {
		len = strnlen(argv + i, n - i);
		if (k > 0 && !strcmp(argv + i, fn))
			return i;
		if (k == 0 && !strcmp(argv + i, fn))
			return 0;       /* no interpreter: as exec'd */
		i += len + 1;
	}
	return 0;
}

/* pid exec'd: its EXEC, as the library sends it for a program that will
 * not load it, with what the kernel made of the exec: PATH the name it
 * was given, the arguments as given (a script's interpreter taken out
 * again; its argv[0] is lost, the file name stands for it). */
static void put_exec(struct pt_tracer *t, const struct tproc *e)
{
	struct pt_rec_exec x = {
		.ppid = htole32((uint32_t)e->parent),
		.call = htole32(PT_CALL_SEEN),
	};
	char exe[4096], cwd[4096], fn[4096], path[48];
	int have_exe = pt_proc_link(e->tid, "exe", exe, sizeof exe) == 0;
	int have_cwd = pt_proc_link(e->tid, "cwd", cwd, sizeof cwd) == 0;
	/* busybox runs its applets so: the name says nothing */
	int have_fn = exec_fn(t, e->tid, fn, sizeof fn) == 0 &&
		      strncmp(fn, "/proc/", 6) && strncmp(fn, "/dev/fd/", 8);
	struct pt_sb argv = PT_SB_INIT;
	size_t i, n;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)e->tid);
	if (pt_sb_read_path(&t->o.buf, path, CMDLINE_MAX) > 0)
		pt_sb_add(&argv, t->o.buf.buf, t->o.buf.len);
	pt_outside_begin(&t->o, PT_REC_EXEC, e->tid, pt_mono_ns(), &x,
			 sizeof x);
	if (have_fn)
		pt_outside_item(&t->o, PT_TAG_PATH, fn, strlen(fn));
	else if (have_exe)
		pt_outside_item(&t->o, PT_TAG_PATH, exe, strlen(exe));
	else if (argv.len)
		pt_outside_item(&t->o, PT_TAG_PATH, argv.buf, strnlen(argv.buf,
							     argv.len));
	i = have_fn ? script_args(argv.buf, argv.len, fn) : 0;
	for (; i < argv.len; i += n + 1) {
		n = strnlen(argv.buf + i, argv.len - i);
		pt_outside_item(&t->o, PT_TAG_ARG, argv.buf + i, n);
	}
	if (have_cwd)
		pt_outside_item(&t->o, PT_TAG_CWD, cwd, strlen(cwd));
	pt_outside_end(&t->o);
	pt_sb_release(&argv);
}

static uint64_t tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
}

/* ---- stops ---- */

static int privileged_path(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return (st.st_mode & (S_ISUID | S_ISGID)) ||
	       getxattr(path, "security.capability", NULL, 0) > 0;
}

int pt_tracer_privileged(const char *file)
{
	const char *path = getenv("PATH"), *end;
	struct pt_sb full = PT_SB_INIT;
	int v = 0;

	if (strchr(file, '/'))
		return privileged_path(file);
	if (!path)
		path = "/bin:/usr/bin";
	for (; !v; path = end + 1) {
		end = strchr(path, ':');
		if (!end)
			end = path + strlen(path);
		pt_sb_reset(&full);
		pt_sb_add(&full, path, (size_t)(end - path));
		pt_sb_addf(&full, "%s%s", end > path ? "/" : "", file);
		/* The first that execvp would run decides. */
		if (access(full.buf, X_OK) == 0) {
			v = privileged_path(full.buf);
			break;
		}
		if (!*end)
			break;
	}
	pt_sb_release(&full);
	return v;
}

int pt_tracer_seize_root(struct pt_tracer *t, pid_t pid)
{
	struct tproc *e;

	t->root = pid;
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)OPTIONS) < 0)
		return -1;
	e = add(t, pid);
	e->parent = t->self;
	e->flags = T_ROOT | T_KNOWN;
	t->root = pid;
	return 0;
}

/* Is new, made by a clone in process tgid, one of its threads? */
static int is_thread(pid_t tgid, pid_t tid);
static int proc_ids(struct pt_tracer *t, pid_t tid, pid_t *tgid,
		    pid_t *ppid);

/* The thread asked (and its threads we trace) go at their next stop:
 * its posix_spawn returned, or the exec it asked for failed. */
static int release(struct pt_tracer *t, struct tproc *e)
{
	size_t i;

	if (!(e->flags & (T_SPAWN | T_SAID)))
		return -1;
	e->flags &= ~(unsigned)(T_SPAWN | T_SAID);
	/* Traced before it asked (a Go program's cgo): it stays. */
	if (!(e->flags & T_ASKED) || e->flags & T_EXECED)
		return 0;
	for (i = 0; i < t->n; i++)
		if (&t->p[i] == e || (t->p[i].flags & T_THREAD &&
				      t->p[i].tgid == e->tgid)) {
			t->p[i].flags |= T_LOOSE;
			if (!(t->p[i].flags & T_HELD))
				ptrace(PTRACE_INTERRUPT, t->p[i].tid, 0, 0);
		}
	return 0;
}

int pt_tracer_seize_asked(struct pt_tracer *t, pid_t tid, pid_t peer,
			  int what)
{
	struct tproc *e;
	pid_t tg = 0, pp = 0;

	if (t->detaching || tid <= 0 || peer <= 0 || peer == t->self ||
	    !is_thread(peer, tid) || proc_ids(t, peer, &tg, &pp) < 0 ||
	    tg != peer)
		return -1;
	e = find(t, tid);
	if (what == PT_SEIZE_RELEASE)
		return e ? release(t, e) : -1;
	if (what != PT_SEIZE_EXEC && what != PT_SEIZE_SPAWN &&
	    what != PT_SEIZE_HIDDEN)
		return -1;
	if (e) {
		/* Ours already (a Go program's cgo exec or spawn). */
		e->flags |= what == PT_SEIZE_EXEC ? T_SAID :
			    what == PT_SEIZE_SPAWN ? T_SPAWN : T_HIDDEN;
		return 0;
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)OPTIONS) < 0)
		return errno == EPERM && access("/proc/sys/kernel/yama", F_OK) == 0
		       ? -2 : -1;
	e = add(t, tid);
	e->tgid = peer;
	e->parent = pp;
	e->flags = T_KNOWN | T_ASKED |
		   (what == PT_SEIZE_EXEC ? T_SAID :
		    what == PT_SEIZE_SPAWN ? T_SPAWN : T_HIDDEN);
	return 0;
}

void pt_tracer_set_root(struct pt_tracer *t, pid_t pid)
{
	t->root = pid;
}

static void resume(pid_t tid, int sig)
{
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
}

/* Let tid go: it runs on untraced (with sig, if it was stopped to
 * deliver one). */
static void let_go(struct pt_tracer *t, struct tproc *e, int sig)
{
	ptrace(PTRACE_DETACH, e->tid, 0, (void *)(long)sig);
	drop(t, e);
}

/* Is new, made by a clone in process tgid, one of its threads? */
static int is_thread(pid_t tgid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/task/%d", (int)tgid, (int)tid);
	return access(path, F_OK) == 0;
}

static void on_new(struct pt_tracer *t, struct tproc *pe, int event)
{
	unsigned long msg = 0;
	struct tproc *c;
	pid_t tid, ptgid = pe->tgid;
	int thread, spawned;
	unsigned hidden;

	if (ptrace(PTRACE_GETEVENTMSG, pe->tid, 0, &msg) < 0 || !msg)
		return;
	tid = (pid_t)msg;
	thread = event == PTRACE_EVENT_CLONE && is_thread(ptgid, tid);
	/* A spawn's child: the library's SPAWN says it, and its exec. */
	spawned = !thread && pe->flags & T_SPAWN;
	hidden = pe->flags & T_HIDDEN;  /* pe may move below */
	if (!thread && !spawned)
		put_fork(t, ptgid, tid, event);
	c = find(t, tid);
	if (!c && t->detaching)
		return;         /* its first stop lets it go */
	if (!c)
		c = add(t, tid);
	c->tgid = thread ? ptgid : tid;
	c->parent = ptgid;
	c->flags |= T_KNOWN | (thread ? T_THREAD : 0) | (spawned ? T_SAID : 0) |
		    hidden;
	if (c->flags & T_HELD) {
		c->flags &= ~(unsigned)T_HELD;
		if (t->detaching)
			let_go(t, c, 0);
		else
			resume(tid, 0);
	}
}

/*
 * pe, which asked to be traced through an exec that then failed, made a
 * process or thread: both go, untraced (the new one at its first stop),
 * and its library's hooks say what they do, as before it asked.
 */
static void on_loose_new(struct pt_tracer *t, struct tproc *pe)
{
	unsigned long msg = 0;
	struct tproc *c;

	if (ptrace(PTRACE_GETEVENTMSG, pe->tid, 0, &msg) == 0 && msg) {
		c = find(t, (pid_t)msg);
		if (c && c->flags & T_HELD) {
			let_go(t, c, 0);
		} else if (!c) {
			c = add(t, (pid_t)msg);
			c->flags = T_LOOSE;
		}
	}
	pe = find(t, pe->tid);
	if (pe)
		let_go(t, pe, 0);
}

static void on_exec(struct pt_tracer *t, struct tproc *e)
{
	unsigned long former = 0;
	struct tproc *old;

	/* A thread's exec: it took the leader's pid; its own is gone. */
	if (ptrace(PTRACE_GETEVENTMSG, e->tid, 0, &former) == 0 &&
	    (pid_t)former != e->tid && (old = find(t, (pid_t)former))) {
		pid_t tid = e->tid;

		drop(t, old);
		e = find(t, tid);
		if (!e)
			return;
	}
	/* The root's first image is record's SPAWN already, and one the
	 * library announced its EXEC. */
	if (!(e->flags & T_SAID) &&
	    (!(e->flags & T_ROOT) || e->flags & T_EXECED))
		put_exec(t, e);
	e->flags = (e->flags | T_EXECED) & ~(unsigned)T_SAID;
	/* Behind a root that hides us, no image can speak. */
	if (!(e->flags & T_HIDDEN) && speaks(t, e->tid))
		let_go(t, e, 0);
	else
		resume(e->tid, 0);
}

/* tid's process and that process's parent, as /proc says now.  0, or
 * -1 if they cannot be read. */
static int proc_ids(struct pt_tracer *t, pid_t tid, pid_t *tgid,
		    pid_t *ppid)
{
	char path[48];
	const char *g, *p;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (pt_sb_read_path(&t->o.buf, path, 16384) <= 0 ||
	    !(g = strstr(t->o.buf.buf, "\nTgid:")) ||
	    !(p = strstr(t->o.buf.buf, "\nPPid:")))
		return -1;
	*tgid = (pid_t)strtol(g + 6, NULL, 10);
	*ppid = (pid_t)strtol(p + 6, NULL, 10);
	return 0;
}

/*
 * Held children whose parent's fork event will never come: the parent
 * was killed between its clone and the event, or is none of ours.  Let
 * each run, made by the parent /proc names (it may have been adopted).
 */
static void release_held(struct pt_tracer *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		struct tproc *e = &t->p[i];
		const struct tproc *pe;
		pid_t tg = 0, pp = 0;
		int thread;

		if (!(e->flags & T_HELD) || e->flags & T_KNOWN)
			continue;
		if (proc_ids(t, e->tid, &tg, &pp) < 0)
			tg = e->tid;
		/* A thread's maker is its own process; a process's, its
		 * parent: held while that is traced, its event to come. */
		thread = tg != e->tid;
		pe = find_in(t, thread ? tg : pp);
		if (pe && !(pe->flags & T_HELD))
			continue;
		e->tgid = tg;
		e->parent = thread ? tg : pp;
		e->flags = (e->flags & ~(unsigned)T_HELD) | T_KNOWN |
			   (thread ? T_THREAD : 0);
		if (!thread && pp)
			put_fork(t, pp, e->tid, PTRACE_EVENT_FORK);
		resume(e->tid, 0);
	}
}

static int stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

static void on_stop(struct pt_tracer *t, pid_t tid, int status)
{
	int event = (unsigned)status >> 16, sig = WSTOPSIG(status);
	struct tproc *e = find(t, tid);
	unsigned long former = 0;

	/* A thread we were asked to trace exec'd, and took its process's
	 * pid, the leader's, which we do not trace. */
	if (!e && event == PTRACE_EVENT_EXEC &&
	    ptrace(PTRACE_GETEVENTMSG, tid, 0, &former) == 0 &&
	    (e = find(t, (pid_t)former)) && e->tgid == tid)
		e->tid = tid;
	if (!e) {
		if (t->detaching) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return;
		}
		if (event != PTRACE_EVENT_STOP) {
			/* none of ours: it goes on as it would */
			resume(tid, event ? 0 : sig);
			return;
		}
		/* A new child whose parent's event has not come yet: it
		 * waits for it (then its frames follow the FORK). */
		e = add(t, tid);
		e->flags = T_HELD;
		release_held(t);
		return;
	}
	if (t->detaching || (e->flags & T_LOOSE &&
			     event != PTRACE_EVENT_FORK &&
			     event != PTRACE_EVENT_VFORK &&
			     event != PTRACE_EVENT_CLONE)) {
		let_go(t, e, event ? 0 : sig);
		return;
	}
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (!(e->flags & (T_SPAWN | T_HIDDEN)) &&
		    (e->flags & T_LOOSE ||
		     (e->flags & T_ASKED && !(e->flags & T_EXECED)))) {
			/* Its exec failed, or its spawn is done: it is the
			 * program that asked, which speaks for itself and
			 * what it starts. */
			on_loose_new(t, e);
			break;
		}
		on_new(t, e, event);
		/* on_new may have moved the table */
		resume(tid, 0);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(t, e);
		break;
	case PTRACE_EVENT_STOP:
		/* A group stop: leave it stopped, as untraced, but still
		 * hear of its SIGCONT.  Else an attach or LISTEN's end. */
		if (stop_signal(sig))
			ptrace(PTRACE_LISTEN, tid, 0, 0);
		else if (!(e->flags & T_KNOWN))
			e->flags |= T_HELD;
		else
			resume(tid, 0);
		break;
	case 0:
		/* A signal on its way: deliver it. */
		resume(tid, sig);
		break;
	default:
		resume(tid, 0);
		break;
	}
}

/* tid ended (status as wait4 gave it).  1 if it was the root. */
static int on_end(struct pt_tracer *t, pid_t tid, int status,
		  const struct rusage *ru)
{
	struct tproc *e = find(t, tid);

	if (tid == t->root) {
		if (e)
			drop(t, e);
		t->root_done = 1;
		t->root_ws = status;
		t->root_ru = *ru;
		t->root = 0;
		return 1;
	}
	if (!e)
		return 0;
	if (!(e->flags & T_THREAD) && e->tgid == tid &&
	    (!(e->flags & T_ASKED) || e->flags & (T_EXECED | T_HIDDEN))) {
		pt_outside_reap(&t->o, e->parent, tid, status, 1,
				tv_us(ru->ru_utime), tv_us(ru->ru_stime),
				(uint64_t)ru->ru_maxrss, PT_REAP_SEEN,
				pt_mono_ns());
		drop(t, e);
		release_held(t);
		return 0;
	}
	drop(t, e);
	return 0;
}

int pt_tracer_wait(struct pt_tracer *t, int *ws, struct rusage *ru)
{
	struct rusage r;
	int status;
	pid_t pid;

	for (;;) {
		if (t->root_done)
			break;
		pid = wait4(-1, &status, __WALL | WNOHANG, &r);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		if (WIFSTOPPED(status))
			on_stop(t, pid, status);
		else if (WIFEXITED(status) || WIFSIGNALED(status))
			on_end(t, pid, status, &r);
	}
	if (!t->root_done)
		return 0;
	t->root_done = 0;
	*ws = t->root_ws;
	*ru = t->root_ru;
	return 1;
}

void pt_tracer_detach_all(struct pt_tracer *t)
{
	uint64_t until = pt_mono_ns() + DETACH_NS;
	struct timespec ms = { 0, 1000000 };
	struct rusage r;
	int status;
	size_t i;
	pid_t pid;

	if (!t || !t->n)
		return;
	t->detaching = 1;
	for (i = t->n; i-- > 0;)
		if (t->p[i].flags & T_HELD)
			let_go(t, &t->p[i], 0);     /* stopped already */
		else
			ptrace(PTRACE_INTERRUPT, t->p[i].tid, 0, 0);
	/* Each stops at its next chance (a vfork parent once its child has
	 * exec'd); whatever has not by then is let go by our exit. */
	while (t->n && pt_mono_ns() < until) {
		pid = wait4(-1, &status, __WALL | WNOHANG, &r);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		if (pid == 0) {
			nanosleep(&ms, NULL);
			continue;
		}
		if (WIFSTOPPED(status))
			on_stop(t, pid, status);
		else if (WIFEXITED(status) || WIFSIGNALED(status))
			on_end(t, pid, status, &r);
	}
}

void pt_tracer_mute(struct pt_tracer *t)
{
	if (t)
		t->o.put = NULL;
}

void pt_tracer_free(struct pt_tracer *t)
{
	if (!t)
		return;
	free(t->p);
	pt_outside_free(&t->o);
	free(t);
}
