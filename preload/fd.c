/*
 * The calls that name a descriptor by number, so that the library's own
 * (its connection, pt.fd) is none the program can ask for, close or use
 * (doc/design.md, pitfall 11):
 *  - on our descriptor, close, dup2, dup3 and fcntl fail with EBADF, as
 *    on a descriptor that is not open, and it stays;
 *  - dup2, dup3 or fcntl(F_DUPFD*) that put a file on its number move it
 *    elsewhere first (owner context; a vfork child's copy, close-on-exec
 *    anyway, is let go);
 *  - close_range and closefrom leave it out, so that a program that
 *    closes every descriptor does not look as if it died.
 * A program that does any of this by system call, bypassing libc, is
 * noticed before the next send (conn.c, owned_fd_valid).
 *
 * close is hot in some programs: the path for every other descriptor is
 * one comparison with pt.fd.  The real calls are system calls where
 * glibc's are nothing more (dup2, dup3, close_range), else glibc's
 * exported aliases (__close, the cancellation point; __fcntl, which
 * adjusts some commands), bound by the loader, not dlsym() into pt_real:
 * a fork child may close descriptors before it execs, where the loader's
 * lock may be held (pitfall 13).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "pt-preload.h"
#include "pt-sys.h"

extern int __close(int);
extern int __fcntl(int, int, ...);

/* A call on fd would touch the library's connection. */
#define OURS(n) (__builtin_expect((n) == pt.fd, 0) && pt_conn_owns(n))

static int ebadf(void)
{
	errno = EBADF;
	return -1;
}

/* The program is about to put a file on our number: make way (owner). */
static void make_way(int fd)
{
	if (OURS(fd) && pt_is_owner())
		pt_conn_step_aside();
}

PT_EXPORT int close(int fd)
{
	if (OURS(fd))
		return ebadf();
	return __close(fd);
}

PT_EXPORT int dup2(int old, int new)
{
	if (OURS(old))
		return ebadf();
	make_way(new);
	return pt_sys_dup2(old, new);
}

PT_EXPORT int dup3(int old, int new, int flags)
{
	if (OURS(old))
		return ebadf();
	if (old != new)         /* dup3(fd, fd) is EINVAL, untouched */
		make_way(new);
	return pt_sys_dup3(old, new, flags);
}

/*
 * fcntl(F_DUPFD*, min) gives the lowest free descriptor from min up.  If
 * that skipped ours, the program would have got our number untraced:
 * give it that, and take the one it got.
 */
static int dup_from(int fd, int cmd, long min)
{
	int r = __fcntl(fd, cmd, min), ours = pt.fd, saved = errno;

	if (r < 0 || r < ours || min > ours || !OURS(ours) || !pt_is_owner()) {
		pt_errno_restore(saved);
		return r;
	}
	if (pt_sys_dup3(ours, r, O_CLOEXEC) == r) {
		if (pt_sys_dup3(fd, ours, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0) == ours) {
			pt.fd = r;
			r = ours;
		} else {        /* give r back its file */
			pt_sys_dup3(fd, r, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0);
		}
	}
	pt_errno_restore(saved);
	return r;
}

static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	if (OURS(fd))
		return ebadf();
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && pt.fd >= 0)
		return dup_from(fd, cmd, (long)arg);
	return real(fd, cmd, arg);
}

/*
 * glibc's fcntl reads its third argument as a pointer, whatever cmd.
 * Named by assembler label: with _FILE_OFFSET_BITS=64 <fcntl.h> renames
 * fcntl to fcntl64.  On 64-bit ABIs the two are one function.
 */
PT_EXPORT int pt_fcntl(int fd, int cmd, ...) __asm__("fcntl");
PT_EXPORT int pt_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(__fcntl, fd, cmd, arg);
}

#if UINTPTR_MAX == 0xffffffffffffffffu
PT_EXPORT int pt_fcntl64(int fd, int cmd, ...) __asm__("fcntl64")
	__attribute__((alias("fcntl")));
#endif

/*
 * close_range(first, last) around ours: the parts below and above it,
 * CLOSE_RANGE_UNSHARE with the first.  Returns what the system call
 * returns.
 */
static int close_around(unsigned first, unsigned last, unsigned flags)
{
	unsigned ours = (unsigned)pt.fd;
	int r = 0;

	if (first < ours) {
		r = pt_sys_close_range(first, ours - 1, flags);
		flags &= ~(unsigned)CLOSE_RANGE_UNSHARE;
	}
	if (r == 0 && ours < last)
		r = pt_sys_close_range(ours + 1, last, flags);
	else if (r == 0 && first == ours && (flags & CLOSE_RANGE_UNSHARE))
		r = pt_sys_unshare(CLONE_FILES);
	return r;
}

/* Would close_range(first, last, flags) close our descriptor? */
static int range_hits_ours(unsigned first, unsigned last, unsigned flags)
{
	/* CLOSE_RANGE_CLOEXEC closes nothing (ours is close-on-exec
	 * already), and unknown flags are the kernel's EINVAL to give. */
	return pt.fd >= 0 && first <= (unsigned)pt.fd &&
	       (unsigned)pt.fd <= last &&
	       !(flags & ~(unsigned)CLOSE_RANGE_UNSHARE) && pt_conn_owns(pt.fd);
}

PT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (range_hits_ours(first, last, (unsigned)flags))
		return close_around(first, last, (unsigned)flags);
	return pt_sys_close_range(first, last, (unsigned)flags);
}

/*
 * glibc's closefrom is close_range(lowfd, ~0U, 0), or, where the kernel
 * lacks it, a walk over /proc/self/fd; here, a walk up to the soft limit.
 */
PT_EXPORT void closefrom(int lowfd)
{
	unsigned first = lowfd < 0 ? 0 : (unsigned)lowfd;
	struct pt_nofile l;
	int saved = errno, r;

	if (range_hits_ours(first, ~0u, 0))
		r = close_around(first, ~0u, 0);
	else
		r = pt_sys_close_range(first, ~0u, 0);
	if (r < 0 && errno == ENOSYS && pt_sys_get_nofile(&l) == 0)
		for (unsigned long long fd = first; fd < l.cur && fd < (1u << 20); fd++)
			if (!OURS((int)fd))
				pt_sys_close((int)fd);
	pt_errno_restore(saved);
}
