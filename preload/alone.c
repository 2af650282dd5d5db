/*
 * A descriptor table of our own, for a moment.
 *
 * The library holds no descriptor while the program runs: a call of ours
 * opens what it writes to and closes it before it returns (conn.c).  In
 * a process with other threads that is not enough: between our open and
 * our write, another thread may close every descriptor (closefrom) and
 * open its own file, which then has our number; our write would land in
 * its file and our close would close it.  So there the open, the write
 * and the close happen on a thread of ours that shares the program's
 * memory but not its descriptor table (clone without CLONE_FILES): the
 * kernel gives it a copy of the table, where nothing the program's
 * threads do can reach, and drops the copy when the thread ends.
 *
 * The thread is made with CLONE_VFORK, so the calling thread sleeps until
 * it has ended, and CLONE_THREAD, so that nobody waits for it and no
 * SIGCHLD is sent.  It runs on the caller's TLS (no CLONE_SETTLS): it
 * must make system calls only and touch nothing of libc's but errno,
 * which the caller restores.  Every signal is blocked around its life, so
 * that no handler of the program's runs on its small stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>

#include "pt-preload.h"
#include "pt-sys.h"

/* One stack, for the usual case of one thread at a time in a call of
 * ours; a second at once maps one of its own. */
static unsigned char stack[PT_ALONE_STACK] __attribute__((aligned(64)));
static int stack_busy;

struct alone {
	int (*fn)(void *);
	void *arg;
	int rc;
};

static int alone_main(void *p)
{
	struct alone *a = p;

	a->rc = a->fn(a->arg);
	return 0;
}

struct pread_args {
	const char *path;
	void *buf;
	size_t cap;
	ssize_t got;
};

static int pread_fn(void *arg)
{
	struct pread_args *p = arg;
	int fd = pt_sys_open(p->path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	do
		p->got = (ssize_t)PT_SC5(SYS_pread64, fd, p->buf, p->cap, 0, 0);
	while (p->got < 0 && errno == EINTR);
	pt_sys_close(fd);
	return 0;
}

int pt_alone_safe(int owner)
{
	/* A fork child is the one thread its parent's fork was called
	 * from, until it makes more; a foreign context (vfork, clone
	 * without CLONE_FILES) has a table of its own. */
	return !owner || pt.forked ||
	       __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED);
}

int pt_alone_call(int owner, int (*fn)(void *), void *arg)
{
	/* Whether we are the owner costs a system call: asked last. */
	if (pt_alone_safe(owner < 0 ? 1 : owner) ||
	    (owner < 0 && !pt_is_owner()))
		return fn(arg);
	return pt_alone_run(fn, arg);
}

ssize_t pt_alone_pread(const char *path, void *buf, size_t cap)
{
	struct pread_args p = { path, buf, cap, -1 };

	pt_alone_call(-1, pread_fn, &p);
	return p.got;
}

int pt_alone_run(int (*fn)(void *), void *arg)
{
	int (*clone_fn)(int (*)(void *), void *, int, void *, ...) =
		PT_REAL_LAZY(clone);
	struct alone a = { fn, arg, -1 };
	unsigned char *stk = stack;
	uint64_t all = ~0ull, old;
	int saved = errno, mapped = 0, tid;

	if (!clone_fn)
		return fn(arg);
	if (__atomic_exchange_n(&stack_busy, 1, __ATOMIC_ACQUIRE)) {
		stk = (unsigned char *)PT_SC6(PT_SYS_MMAP, NULL, PT_ALONE_STACK,
					      PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS |
					      MAP_STACK, -1, 0);
		if (stk == (unsigned char *)-1) {
			pt_errno_restore(saved);
			return fn(arg);
		}
		mapped = 1;
	}
	PT_SC5(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all, 0);
	tid = clone_fn(alone_main, stk + PT_ALONE_STACK,
		       CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD |
		       CLONE_SYSVSEM | CLONE_VFORK, &a);
	PT_SC5(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old, 0);
	if (mapped)
		PT_SC2(SYS_munmap, stk, PT_ALONE_STACK);
	else
		__atomic_store_n(&stack_busy, 0, __ATOMIC_RELEASE);
	pt_errno_restore(saved);
	/* Refused (a seccomp policy, a limit on threads): here, then. */
	return tid < 0 ? fn(arg) : a.rc;
}
