/*
 * The hooks through which a program makes, waits for or ends a process:
 * fork, clone, the wait and exit families, and glibc's functions that
 * start /bin/sh with `environ` (system, popen, wordexp), lent repaired
 * for the call; pclose and system report the shell's end, as glibc
 * waits for it out of the wait hooks' sight.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>

#include "pt-hooks.h"
#include "pt-sys.h"

static void send_reap(pid_t child, int status, const struct rusage *ru);

/*
 * system() and popen() spawn /bin/sh with `environ` through glibc's
 * internal posix_spawn.  If the program dropped LD_PRELOAD from its own
 * environment, lend it a repaired one for the duration of the call.  Not
 * atomic against another thread's setenv(), which is why it is done only
 * when needed.  Not for vfork children (it writes environ): there the
 * environment is passed on as it is.
 */
struct env_loan {
	char **saved;
	char **lent;
	int heap;               /* lent is ours to free */
};

static void env_lend(struct env_loan *l)
{
	size_t n = pt_envexec_count(environ);
	char **buf, *scratch;
	char *const *use;

	l->saved = l->lent = NULL;
	if (!pt.ready || !pt_is_owner() || n > PT_ENV_MAX)
		return;
	buf = malloc((n + PT_ENV_EXTRA + 1) * sizeof *buf + PATH_MAX * 2);
	if (!buf)
		return;
	scratch = (char *)(buf + n + PT_ENV_EXTRA + 1);
	use = pt_envexec_repair(environ, n, buf, scratch, PATH_MAX * 2, NULL,
				0);
	/* Nothing built: environ itself, or the initial array whole */
	l->heap = use == buf;
	if (!l->heap)
		free(buf);
	if (use == (char *const *)environ)
		return;
	l->saved = environ;
	l->lent = environ = (char **)use;
}

static void env_return(struct env_loan *l)
{
	if (!l->lent)
		return;
	if (environ == l->lent)
		environ = l->saved;
	else
		return;         /* the program replaced it meanwhile: keep theirs */
	if (l->heap)
		free(l->lent);
}

/*
 * Under seccomp: call(arg) with environ lent as it would be untraced
 * (QUIET_ENV), on this stack frame; no allocation, since malloc may make
 * system calls of its own.
 */
static BIG void lend_quiet(void (*call)(void *), void *arg)
{
	QUIET_ENV(quiet_env, environ);
	char **own = environ;

	environ = (char **)quiet_env;
	call(arg);
	if (environ == (char **)quiet_env)
		environ = own;
}

static BIG void lend_traced(void (*call)(void *), void *arg)
{
	struct env_loan loan;
	int saved;

	env_lend(&loan);
	call(arg);
	saved = errno;
	env_return(&loan);
	pt_errno_restore(saved);
}

/* Room to lend a repaired environment and to record. */
#define LEND_ROOM() (pt.ready && pt_stack_fits(PT_HOOK_STACK))

/*
 * call(arg), a function of glibc that starts /bin/sh with `environ`
 * (system, popen, wordexp), with environ lent as the shell should get
 * it: repaired where there is room; else, while environ is as load left
 * it, the initial array whole (what was taken out is before it:
 * pt_envexec_passed), no copy, so that the shell stays traced; not in a
 * vfork child, where environ is its parent's.  1 if there was room to
 * record too.
 */
static int with_environ_lent(void (*call)(void *), void *arg)
{
	char **own;
	int lent;

	if (pt.quiet) {
		lend_quiet(call, arg);
		return 0;
	}
	if (LEND_ROOM()) {
		lend_traced(call, arg);
		return 1;
	}
	own = environ;
	lent = own && own == pt.env_view && pt_is_owner();
	if (lent)
		environ = pt.env_whole;
	call(arg);
	if (lent && environ == pt.env_whole)
		environ = own;
	return 0;
}

struct system_call {
	const char *command;
	int rc;
};

static void system_fn(void *arg)
{
	struct system_call *c = arg;

	c->rc = PT_REAL_LAZY(system)(c->command);
}

PT_EXPORT int system(const char *command)
{
	struct system_call c = { command, -1 };
	int saved;

	pt_resolve();
	if (with_environ_lent(system_fn, &c) && command && c.rc != -1 &&
	    HOOK_ROOM()) {
		saved = errno;
		send_reap(0, c.rc, NULL);
		pt_errno_restore(saved);
	}
	return c.rc;
}

struct popen_call {
	const char *command, *type;
	FILE *f;
};

static void popen_fn(void *arg)
{
	struct popen_call *c = arg;

	c->f = PT_REAL_LAZY(popen)(c->command, c->type);
}

PT_EXPORT FILE *popen(const char *command, const char *type)
{
	struct popen_call c = { command, type, NULL };

	pt_resolve();
	with_environ_lent(popen_fn, &c);
	return c.f;
}

/*
 * glibc waits for the shell of system() and popen() itself, out of the
 * wait hooks' sight; its status (the only word on a shell killed by a
 * signal) is reported as a REAP of child 0, "the one this call made".
 */
PT_EXPORT int pclose(FILE *f)
{
	int rc, saved;

	pt_resolve();
	rc = PT_REAL_LAZY(pclose)(f);
	saved = errno;
	if (rc != -1 && HOOK_ROOM())
		send_reap(0, rc, NULL);
	pt_errno_restore(saved);
	return rc;
}

/*
 * wordexp() runs a command substitution's /bin/sh through glibc's own
 * posix_spawn, with `environ`, and waits for it itself: the shell and
 * what it runs say HELLO themselves once environ keeps them traced.
 */
struct wordexp_call {
	const char *words;
	wordexp_t *we;
	int flags, rc;
};

static void wordexp_fn(void *arg)
{
	struct wordexp_call *c = arg;

	c->rc = PT_REAL_LAZY(wordexp)(c->words, c->we, c->flags);
}

PT_EXPORT int wordexp(const char *words, wordexp_t *we, int flags)
{
	struct wordexp_call c = { words, we, flags, WRDE_NOSPACE };

	pt_resolve();
	if (flags & WRDE_NOCMD)         /* no shell: nothing to lend */
		wordexp_fn(&c);
	else
		with_environ_lent(wordexp_fn, &c);
	return c.rc;
}

/* ---- fork ---- */

/*
 * The parent's side of a new process: FORK, stamped with time t, sent (or
 * held) by process self (0: find out).
 */
static BIG void send_fork(pid_t child, enum pt_call call, uint64_t t,
			  pid_t self)
{
	struct pt_chan ch;
	struct pt_body b;

	if (pt_chan_get(&ch, PT_USE_HOLD, self) < 0)
		return;
	exec_body(&b, PT_REC_FORK, (uint32_t)child, call);
	/* Held until the child is reaped (defer.c), except after clone(),
	 * whose child may share our memory. */
	if (call == PT_CALL_CLONE || pt_defer_hold(&ch, &b, child, t) < 0)
		pt_send_record(&ch, &b, t);
	pt_chan_put(&ch);
}

static pid_t fork_common(pid_t (*real)(void), enum pt_call call)
{
	uint64_t t;
	pid_t self;
	int from_owner;
	pid_t r;
	int saved, slot;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	/* The child may call these before it execs (PR_SET_PDEATHSIG...),
	 * where a first dlsym could wait on a loader lock it inherited. */
	(void)PT_REAL_LAZY(prctl);
	(void)PT_REAL_LAZY(syscall);
	/* Without room for the FORK, the child is left foreign to the state,
	 * as a vfork child is: the hooks it calls treat it so. */
	if (pt.quiet || !pt_stack_fits(PT_HOOK_STACK))
		return real();
	t = pt_now_ns();
	self = pt.ready ? pt_sys_getpid() : 0;
	from_owner = self && self == pt.owner;
	if (from_owner)
		pt_target_ask_loader();
	/* Where the child's EXEC will wait for us (mailbox.c). */
	slot = from_owner && pt.chan && !pt.off ?
	       pt_mbox_reserve() : -1;
	r = real();
	saved = errno;
	if (r == 0) {
		/* Only a child of the owner takes the state over; a child of a
		 * foreign process stays foreign. */
		if (from_owner) {
			pt_init_after_fork(t);
			/* Not from a new pid namespace (see there). */
			pt.mbox_slot = pt.owner == 1 ? 0 : slot + 1;
		}
	} else {
		pt_mbox_forked(slot, r);
		if (r > 0)
			send_fork(r, call, t, self);
	}
	pt_errno_restore(saved);
	return r;
}

PT_EXPORT pid_t fork(void)
{
	pt_resolve();
	return fork_common(PT_REAL_LAZY(fork), PT_CALL_FORK);
}

PT_EXPORT pid_t _Fork(void)
{
	pt_resolve();
	return fork_common(PT_REAL_LAZY(_Fork), PT_CALL__FORK);
}

/*
 * clone(): a child that returns from its function ends with a bare exit
 * system call, out of every hook's sight.  Run the function through a
 * trampoline that reports the end.  Its two words go at the top of the
 * child's own stack, which the caller handed over, because with CLONE_VM
 * the parent's frame may be gone before the child reads them.
 */
struct clone_tramp {
	int (*fn)(void *);
	void *arg;
};

static int clone_trampoline(void *p)
{
	struct clone_tramp t = *(struct clone_tramp *)p;
	int r = t.fn(t.arg);

	pt_send_exit(r, PT_EXIT_RETURN, 0);
	return r;
}

PT_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct clone_tramp *t;
	pid_t *ptid;
	void *tls;
	pid_t *ctid;
	va_list ap;
	uint64_t now;
	int r, saved;

	/* The optional arguments are passed on whether or not flags use
	 * them, as glibc's own wrapper reads them. */
	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	pt_resolve();
	if (!pt.ready || pt.quiet || (flags & CLONE_THREAD) || !fn || !stack)
		return PT_REAL_LAZY(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	t = (struct clone_tramp *)(((uintptr_t)stack - sizeof *t) & ~(uintptr_t)15);
	t->fn = fn;
	t->arg = arg;
	now = pt_now_ns();      /* before: a CLONE_VFORK child runs first */
	/* A child on this stack has no room the hooks can know of. */
	if (flags & CLONE_VM)
		__atomic_store_n(&pt.clone_top, (uintptr_t)stack, __ATOMIC_RELAXED);
	r = PT_REAL_LAZY(clone)(clone_trampoline, t, flags, t, ptid, tls, ctid);
	saved = errno;
	if ((flags & (CLONE_VM | CLONE_VFORK)) == (CLONE_VM | CLONE_VFORK))
		__atomic_store_n(&pt.clone_top, 0, __ATOMIC_RELAXED);
	if (r > 0 && HOOK_ROOM())
		send_fork(r, PT_CALL_CLONE, now, 0);
	pt_errno_restore(saved);
	return r;
}

/* ---- the wait family ---- */

static BIG void send_reap(pid_t child, int status, const struct rusage *ru)
{
	unsigned char buf[PT_DEFER_BYTES + PT_MBOX_BYTES + 128];
	struct pt_chan ch;
	struct pt_body b;
	uint64_t now;
	size_t held = 0;
	int sent = 0;

	/* Only the owner holds a frame for a child, and only the process
	 * that started child can reap it: no getpid() then. */
	if (pt_chan_get(&ch, PT_USE_EVENT,
			pt_defer_holds(child) ? pt.owner : 0) < 0)
		return;
	memset(&b, 0, sizeof b);
	b.type = PT_REC_REAP;
	b.fixed_len = sizeof(struct pt_rec_reap);
	pt_wire_put32(b.fixed + PT_OFF(pt_rec_reap, child_pid), (uint32_t)child);
	pt_wire_put32(b.fixed + PT_OFF(pt_rec_reap, wait_status),
		      (uint32_t)status);
	pt_wire_put32(b.fixed + PT_OFF(pt_rec_reap, have_rusage), ru != NULL);
	if (ru) {
		pt_wire_put64(b.fixed + PT_OFF(pt_rec_reap, utime_us),
			      (uint64_t)ru->ru_utime.tv_sec * 1000000u +
			      (uint64_t)ru->ru_utime.tv_usec);
		pt_wire_put64(b.fixed + PT_OFF(pt_rec_reap, stime_us),
			      (uint64_t)ru->ru_stime.tv_sec * 1000000u +
			      (uint64_t)ru->ru_stime.tv_usec);
		pt_wire_put64(b.fixed + PT_OFF(pt_rec_reap, maxrss_kb),
			      (uint64_t)ru->ru_maxrss);
	}
	now = pt_now_ns();
	/* What was held for the child goes first, in the same message: its
	 * SPAWN or FORK, then the EXEC it left in the mailbox. */
	if (child > 0 && ch.owner) {
		held = pt_defer_take(child, buf);
		held += pt_mbox_take(&ch, child, buf + held);
	}
	if (held) {
		size_t n = pt_encode_record(&ch, &b, now, buf + held,
					    sizeof buf - held);
		int saved = errno;

		pt_chan_write(&ch, buf, held + n);
		pt_errno_restore(saved);
		sent = n != 0;
	}
	if (!sent)
		pt_send_record(&ch, &b, now);
	pt_chan_put(&ch);
}

/*
 * wait, waitpid and wait3 are wait4 with fewer arguments; calling wait4
 * lets every one of them report the child's rusage.  The caller's own
 * pointers are passed through when it has them, so the kernel writes
 * exactly what it would have written.
 */
static pid_t wait_common(pid_t pid, int *status, int options, struct rusage *ru)
{
	struct rusage own_ru;
	int own_status = 0, saved;
	int *sp = status ? status : &own_status;
	struct rusage *rp = ru ? ru : &own_ru;
	pid_t r;

	pt_resolve();
	r = PT_REAL_LAZY(wait4)(pid, sp, options, rp);
	saved = errno;
	if (r > 0 && (WIFEXITED(*sp) || WIFSIGNALED(*sp)) && HOOK_ROOM())
		send_reap(r, *sp, rp);
	pt_errno_restore(saved);
	return r;
}

PT_EXPORT pid_t wait(int *status)
{
	return wait_common(-1, status, 0, NULL);
}

PT_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	return wait_common(pid, status, options, NULL);
}

PT_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	return wait_common(-1, status, options, ru);
}

PT_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	return wait_common(pid, status, options, ru);
}

PT_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	siginfo_t own;
	siginfo_t *ip = info ? info : &own;
	int r, saved;

	pt_resolve();
	if (!info)
		memset(&own, 0, sizeof own);
	r = PT_REAL_LAZY(waitid)(idtype, id, ip, options);
	saved = errno;
	if (r == 0 && !(options & WNOWAIT) && ip->si_pid > 0) {
		int st = -1;

		if (ip->si_code == CLD_EXITED)
			st = (ip->si_status & 0xff) << 8;
		else if (ip->si_code == CLD_KILLED)
			st = ip->si_status & 0x7f;
		else if (ip->si_code == CLD_DUMPED)
			st = (ip->si_status & 0x7f) | 0x80;
		if (st >= 0 && HOOK_ROOM())
			send_reap(ip->si_pid, st, NULL);
	}
	pt_errno_restore(saved);
	return r;
}

/* ---- the exit family ---- */

PT_EXPORT void exit(int status)
{
	pid_t self;

	pt_resolve();
	if (pt.ready && !pt.off) {
		self = pt_sys_getpid();
		if (self == pt.owner) {
			pt.exit_status = status;
			pt.exit_how = PT_EXIT_EXIT;     /* EXIT: the destructor */
		} else {
			/* By pid, not a flag: a vfork child calling exit()
			 * writes into its parent's memory. */
			pt.foreign_exit = self;
			pt_send_exit(status, PT_EXIT_EXIT, self);
		}
	}
	pt_real.exit(status);
}

PT_EXPORT void _exit(int status)
{
	pt_resolve();
	if (pt.ready)
		pt_send_exit(status, PT_EXIT__EXIT, 0);
	pt_real._exit(status);
}

PT_EXPORT void _Exit(int status)
{
	pt_resolve();
	if (pt.ready)
		pt_send_exit(status, PT_EXIT__EXIT, 0);
	pt_real._Exit(status);
}

PT_EXPORT void quick_exit(int status)
{
	pt_resolve();
	if (pt.ready)
		pt_send_exit(status, PT_EXIT_QUICK, 0);
	PT_REAL_LAZY(quick_exit)(status);
}
