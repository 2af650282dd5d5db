/*
 * System calls made directly, through syscall(2).
 *
 * Every libc function the library imports is one more symbol the dynamic
 * loader looks up, with -z now, in every process that loads the library,
 * whether or not it ever calls it: about 600 instructions each
 * (doc/performance.md).  These calls need nothing from libc but the trap,
 * so one import (syscall) serves them all.  Each returns what the system
 * call returns, or -1 with errno set, as the libc function would.
 */
#ifndef PT_SYS_H
#define PT_SYS_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline pid_t pt_sys_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

static inline pid_t pt_sys_getppid(void)
{
	return (pid_t)syscall(SYS_getppid);
}

static inline uid_t pt_sys_getuid(void)
{
#ifdef SYS_getuid32             /* i386: SYS_getuid is the 16-bit one */
	return (uid_t)syscall(SYS_getuid32);
#else
	return (uid_t)syscall(SYS_getuid);
#endif
}

static inline int pt_sys_getrusage_self(struct rusage *ru)
{
	return (int)syscall(SYS_getrusage, RUSAGE_SELF, ru);
}

static inline int pt_sys_socket(int domain, int type, int protocol)
{
	return (int)syscall(SYS_socket, domain, type, protocol);
}

static inline int pt_sys_connect(int fd, const void *addr, socklen_t len)
{
	return (int)syscall(SYS_connect, fd, addr, len);
}

static inline int pt_sys_setsockopt(int fd, int level, int name,
				    const void *val, socklen_t len)
{
	return (int)syscall(SYS_setsockopt, fd, level, name, val, len);
}

static inline ssize_t pt_sys_send(int fd, const void *buf, size_t len,
				  int flags)
{
	return (ssize_t)syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

static inline ssize_t pt_sys_write(int fd, const void *buf, size_t len)
{
	return (ssize_t)syscall(SYS_write, fd, buf, len);
}

static inline int pt_sys_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static inline ssize_t pt_sys_readlink(const char *path, char *buf, size_t cap)
{
	return (ssize_t)syscall(SYS_readlinkat, AT_FDCWD, path, buf, cap);
}

static inline int pt_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static inline int pt_sys_fcntl(int fd, int cmd, long arg)
{
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

/* statx: one layout on every architecture, unlike struct stat. */
static inline int pt_sys_fd_identity(int fd, dev_t *dev, ino_t *ino)
{
	struct statx stx;

	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_INO, &stx) < 0)
		return -1;
	*dev = (dev_t)stx.stx_dev_major << 32 | stx.stx_dev_minor;
	*ino = (ino_t)stx.stx_ino;
	return 0;
}

/* Wait until fd is writable, at most ms milliseconds: 1, 0 (timeout), -1. */
static inline int pt_sys_wait_writable(int fd, int ms)
{
	/* The kernel's own timespec for ppoll: two longs on every ABI that
	 * this library builds for (x86_64, i386). */
	struct { long sec, nsec; } ts = { ms / 1000, (ms % 1000) * 1000000L };
	struct { int fd; short events, revents; } p = { fd, 0x004 /* POLLOUT */, 0 };

	return (int)syscall(SYS_ppoll, &p, 1, &ts, NULL, 0);
}

#endif
