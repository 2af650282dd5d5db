/*
 * System calls made directly, without libc.
 *
 * Every libc function the library imports is one more symbol the dynamic
 * loader looks up, with -z now, in every process that loads the library,
 * whether or not it ever calls it: about 600 instructions each
 * (doc/performance.md).  And every libc page the library's code runs or
 * reads in a fork child before it execs is a page fault there, since a
 * fork child starts without the page table entries of file mappings.
 * These calls need nothing from libc but the trap, and on x86_64 and
 * i386 it is inline: syscall(2) would bind to the library's own syscall()
 * hook (seccomp.c), or to a program's that comes before it.  Each returns
 * what the system call returns, or -1 with errno set, as the libc
 * function would.
 */
#ifndef PT_SYS_H
#define PT_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/*
 * errno = e, without the write when errno holds e already: after a fork
 * the thread's TLS page is shared copy-on-write, and a hook's restoring
 * an unchanged errno would cost the parent a page fault at every spawn.
 */
static inline void pt_errno_restore(int e)
{
	if (errno != e)
		errno = e;
}

static inline long pt_sc(long n, long a, long b, long c, long d, long e,
			 long f)
{
	long r;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile ("syscall"
			  : "=a"(r)
			  : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			    "r"(r9)
			  : "rcx", "r11", "memory");
#elif defined(__i386__)
	/* The sixth argument goes in ebp, which no constraint names: pushed,
	 * then loaded from the stack around the trap (as musl does). */
	__asm__ volatile ("pushl %7\n\tpush %%ebp\n\tmov 4(%%esp), %%ebp\n\t"
			  "int $0x80\n\tpop %%ebp\n\tadd $4, %%esp"
			  : "=a"(r)
			  : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e),
			    "g"(f)
			  : "memory");
#else
	/* An architecture without its trap written here: through the hook. */
	return syscall(n, a, b, c, d, e, f);
#endif
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#define PT_SC0(n)                pt_sc((n), 0, 0, 0, 0, 0, 0)
#define PT_SC1(n, a)             pt_sc((n), (long)(a), 0, 0, 0, 0, 0)
#define PT_SC2(n, a, b)          pt_sc((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define PT_SC3(n, a, b, c)       pt_sc((n), (long)(a), (long)(b), (long)(c), \
				       0, 0, 0)
#define PT_SC5(n, a, b, c, d, e) pt_sc((n), (long)(a), (long)(b), (long)(c), \
				       (long)(d), (long)(e), 0)
#define PT_SC6(n, a, b, c, d, e, f) \
	pt_sc((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), \
	      (long)(f))
/* mmap: on i386 SYS_mmap takes a struct, mmap2 an offset in pages (0) */
#ifdef SYS_mmap2
#define PT_SYS_MMAP SYS_mmap2
#else
#define PT_SYS_MMAP SYS_mmap
#endif

static inline pid_t pt_sys_getpid(void)
{
	return (pid_t)PT_SC0(SYS_getpid);
}

static inline pid_t pt_sys_getppid(void)
{
	return (pid_t)PT_SC0(SYS_getppid);
}

static inline uid_t pt_sys_getuid(void)
{
#ifdef SYS_getuid32             /* i386: SYS_getuid is the 16-bit one */
	return (uid_t)PT_SC0(SYS_getuid32);
#else
	return (uid_t)PT_SC0(SYS_getuid);
#endif
}

static inline int pt_sys_getrusage_self(struct rusage *ru)
{
	return (int)PT_SC2(SYS_getrusage, RUSAGE_SELF, ru);
}

static inline int pt_sys_socket(int domain, int type, int protocol)
{
	return (int)PT_SC3(SYS_socket, domain, type, protocol);
}

static inline int pt_sys_connect(int fd, const void *addr, socklen_t len)
{
	return (int)PT_SC3(SYS_connect, fd, addr, len);
}

static inline int pt_sys_setsockopt(int fd, int level, int name,
				    const void *val, socklen_t len)
{
	return (int)PT_SC5(SYS_setsockopt, fd, level, name, val, len);
}

static inline ssize_t pt_sys_send(int fd, const void *buf, size_t len,
				  int flags)
{
	return (ssize_t)PT_SC6(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

static inline ssize_t pt_sys_recv(int fd, void *buf, size_t len, int flags)
{
	return (ssize_t)PT_SC6(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
}

static inline ssize_t pt_sys_read(int fd, void *buf, size_t len)
{
	return (ssize_t)PT_SC3(SYS_read, fd, buf, len);
}

static inline ssize_t pt_sys_write(int fd, const void *buf, size_t len)
{
	return (ssize_t)PT_SC3(SYS_write, fd, buf, len);
}

struct iovec;

static inline ssize_t pt_sys_writev(int fd, const struct iovec *iov, int n)
{
	return (ssize_t)PT_SC3(SYS_writev, fd, iov, n);
}

static inline int pt_sys_open(const char *path, int flags, mode_t mode)
{
	return (int)PT_SC5(SYS_openat, AT_FDCWD, path, flags, mode, 0);
}

#ifndef SYS_faccessat2
#define SYS_faccessat2 439      /* the same number on every architecture */
#endif

/*
 * Could this process open path for reading, with the ids it opens files
 * with (those ld.so of an image exec'd now would use)?  faccessat2 with
 * AT_EACCESS; on kernels before 5.8, faccessat with the real ids.
 */
static inline int pt_sys_readable(const char *path)
{
	int r = (int)PT_SC5(SYS_faccessat2, AT_FDCWD, path, R_OK, AT_EACCESS,
			    0);

	if (r < 0 && errno == ENOSYS)
		r = (int)PT_SC3(SYS_faccessat, AT_FDCWD, path, R_OK);
	return r;
}

static inline ssize_t pt_sys_readlink(const char *path, char *buf, size_t cap)
{
	return (ssize_t)PT_SC5(SYS_readlinkat, AT_FDCWD, path, buf, cap, 0);
}

static inline int pt_sys_close(int fd)
{
	return (int)PT_SC1(SYS_close, fd);
}

static inline int pt_sys_fcntl(int fd, int cmd, long arg)
{
	return (int)PT_SC3(SYS_fcntl, fd, cmd, arg);
}

/* dup2(2) where the system call exists (not on every ABI), else libc's. */
static inline int pt_sys_dup2(int old, int new)
{
#ifdef SYS_dup2
	return (int)PT_SC2(SYS_dup2, old, new);
#else
	return dup2(old, new);
#endif
}

static inline int pt_sys_dup3(int old, int new, int flags)
{
	return (int)PT_SC3(SYS_dup3, old, new, flags);
}

static inline int pt_sys_close_range(unsigned first, unsigned last,
				     unsigned flags)
{
	return (int)PT_SC3(SYS_close_range, first, last, flags);
}

static inline int pt_sys_unshare(int flags)
{
	return (int)PT_SC1(SYS_unshare, flags);
}

/* RLIMIT_NOFILE as the kernel keeps it (prlimit64's layout on every ABI). */
struct pt_nofile {
	unsigned long long cur, max;
};

static inline int pt_sys_get_nofile(struct pt_nofile *l)
{
	return (int)PT_SC5(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, l, 0);
}

static inline int pt_sys_set_nofile(const struct pt_nofile *l)
{
	return (int)PT_SC5(SYS_prlimit64, 0, RLIMIT_NOFILE, l, NULL, 0);
}

/*
 * clock_gettime through libc: the vDSO, no system call.  A short process
 * reads the clock two or three times; the first read costs it a page
 * fault or two (the vDSO's data page), fewer than the system calls it
 * saves where an image's every record is an open, a write and a close
 * (doc/performance.md, "No descriptor held").
 */
static inline void pt_sys_clock_gettime(clockid_t clock, struct timespec *ts)
{
	clock_gettime(clock, ts);
}

/* A statx's device as one number: major << 32 | minor (what the
 * collector puts in PROFTRACE_LOG, too). */
static inline uint64_t pt_statx_dev(const struct statx *stx)
{
	return (uint64_t)stx->stx_dev_major << 32 | stx->stx_dev_minor;
}

/* statx: one layout on every architecture, unlike struct stat. */
static inline int pt_sys_fd_identity(int fd, dev_t *dev, ino_t *ino)
{
	struct statx stx;

	if (PT_SC5(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_INO, &stx) < 0)
		return -1;
	*dev = (dev_t)pt_statx_dev(&stx);
	*ino = (ino_t)stx.stx_ino;
	return 0;
}

/* What path names, its link followed: 0 and *stx (type, nlink, inode
 * and device), or -1. */
static inline int pt_sys_path_stat(const char *path, struct statx *stx)
{
	return PT_SC5(SYS_statx, AT_FDCWD, path, 0,
		      STATX_TYPE | STATX_NLINK | STATX_INO, stx) < 0 ? -1 : 0;
}

/*
 * The working directory into buf (cap bytes), as getcwd(3): buf, or NULL
 * with errno set (ERANGE: too small).  A directory outside the process's
 * root comes back from the kernel as "(unreachable)..."; like glibc, that
 * is ENOENT.
 */
static inline char *pt_sys_getcwd(char *buf, size_t cap)
{
	long n = PT_SC2(SYS_getcwd, buf, cap);

	if (n < 0)
		return NULL;
	if (n == 0 || buf[0] != '/') {
		errno = ENOENT;
		return NULL;
	}
	return buf;
}

/* Wait until fd is writable, at most ms milliseconds: 1, 0 (timeout), -1. */
static inline int pt_sys_wait_writable(int fd, int ms)
{
	/* The kernel's own timespec for ppoll: two longs on every ABI that
	 * this library builds for (x86_64, i386). */
	struct { long sec, nsec; } ts = { ms / 1000, (ms % 1000) * 1000000L };
	struct { int fd; short events, revents; } p = { fd, 0x004 /* POLLOUT */, 0 };

	return (int)PT_SC5(SYS_ppoll, &p, 1, &ts, NULL, 0);
}

#endif
