/*
 * Helpers shared by the probe programs (header only; everything static
 * inline so that a probe that does not use a helper gets no warning).
 *
 * A probe defines PROBE_NAME ("exec-variants") before including this.  It
 * checks its own results and calls fail(), which prints
 *     probe-NAME: FAIL: what
 * to stderr and exits 1.  On success it prints "probe-NAME: ok" to stdout.
 */
#ifndef PROBE_H
#define PROBE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PROBE_NAME
#error "define PROBE_NAME before including probe.h"
#endif

#define PROBE_PREFIX "probe-" PROBE_NAME ": "

extern char **environ;

__attribute__((noreturn, format(printf, 1, 2)))
static inline void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(PROBE_PREFIX "FAIL: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * For a child between fork and exec (and for vfork children): no stdio,
 * no exit handlers.  Exits with `code`, which the parent does not expect.
 */
__attribute__((noreturn))
static inline void child_fail(const char *what, int err, int code)
{
	static const char head[] = PROBE_PREFIX "FAIL: child: ";
	const char *e = strerror(err);

	if (write(2, head, sizeof head - 1) < 0 ||
	    write(2, what, strlen(what)) < 0 || write(2, ": ", 2) < 0 ||
	    write(2, e, strlen(e)) < 0 || write(2, "\n", 1) < 0)
		_exit(code);
	_exit(code);
}

static inline int probe_ok(void)
{
	printf(PROBE_PREFIX "ok\n");
	return fflush(stdout) == 0 ? 0 : 1;
}

/* "exit 3", "signal 9", ... (one static buffer). */
static inline const char *describe(int st)
{
	static char buf[64];

	if (WIFEXITED(st))
		snprintf(buf, sizeof buf, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, sizeof buf, "signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFSTOPPED(st))
		snprintf(buf, sizeof buf, "stopped by %d", WSTOPSIG(st));
	else
		snprintf(buf, sizeof buf, "raw status 0x%x", (unsigned)st);
	return buf;
}

static inline pid_t xfork(const char *what)
{
	pid_t pid;

	fflush(NULL);           /* nothing buffered gets written twice */
	pid = fork();
	if (pid < 0)
		fail("%s: fork: %s", what, strerror(errno));
	return pid;
}

/* waitpid(pid, 0) that retries on EINTR and insists on pid. */
static inline int wait_child(pid_t pid, const char *what)
{
	int st = 0;
	pid_t r;

	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (r != pid)
		fail("%s: waitpid(%d) returned %d: %s", what, (int)pid, (int)r,
		     r < 0 ? strerror(errno) : "wrong pid");
	return st;
}

static inline void expect_exit(int st, int code, const char *what)
{
	if (!WIFEXITED(st) || WEXITSTATUS(st) != code)
		fail("%s: expected exit %d, got %s", what, code, describe(st));
}

static inline void expect_signal(int st, int sig, const char *what)
{
	if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
		fail("%s: expected death by signal %d (%s), got %s", what, sig,
		     strsignal(sig), describe(st));
}

/* Wait for pid and insist that it exited with code. */
static inline void reap_expect(pid_t pid, int code, const char *what)
{
	expect_exit(wait_child(pid, what), code, what);
}

/* Fork, execv(path, argv) in the child, and expect it to exit with code. */
static inline void run_expect(const char *path, char *const argv[], int code,
			      const char *what)
{
	pid_t pid = xfork(what);

	if (pid == 0) {
		execv(path, argv);
		child_fail(what, errno, 127);
	}
	reap_expect(pid, code, what);
}

/* Absolute path of this executable (from /proc/self/exe). */
static inline const char *self_exe(void)
{
	static char buf[PATH_MAX];

	if (!buf[0]) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);

		if (n <= 0)
			fail("readlink /proc/self/exe: %s", strerror(errno));
		buf[n] = '\0';
	}
	return buf;
}

/* dirname(self_exe()) + "/" + name, for helper programs built beside us. */
static inline const char *sibling(const char *name)
{
	static char buf[PATH_MAX];
	const char *self = self_exe();
	const char *slash = strrchr(self, '/');
	size_t dir = slash ? (size_t)(slash - self) : 0;

	if (dir + 1 + strlen(name) + 1 > sizeof buf)
		fail("path of %s too long", name);
	memcpy(buf, self, dir);
	buf[dir] = '/';
	strcpy(buf + dir + 1, name);
	return buf;
}

static inline void xpipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		fail("pipe2: %s", strerror(errno));
}

/* Read fd to EOF into buf (NUL-terminated); returns the length. */
static inline size_t read_all(int fd, char *buf, size_t cap, const char *what)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("%s: read: %s", what, strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap - 1)
			fail("%s: more output than expected", what);
	}
	buf[len] = '\0';
	return len;
}

static inline void write_all(int fd, const void *p, size_t n, const char *what)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			fail("%s: write: %s", what, strerror(errno));
		c += w;
		n -= (size_t)w;
	}
}

/* Content of a (small) file, NUL-terminated, in buf. */
static inline size_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n;

	if (fd < 0)
		fail("open %s: %s", path, strerror(errno));
	n = read_all(fd, buf, cap, path);
	close(fd);
	return n;
}

static inline void expect_str(const char *got, const char *want, const char *what)
{
	if (strcmp(got, want) != 0)
		fail("%s: expected \"%s\", got \"%s\"", what, want, got);
}

/* A return value and errno, as a failed call must leave them. */
static inline void expect_errno(long rc, long want_rc, int err, int want_err,
				const char *what)
{
	if (rc != want_rc || err != want_err)
		fail("%s: expected %ld with errno %d (%s), got %ld with errno %d (%s)",
		     what, want_rc, want_err, strerror(want_err), rc, err,
		     strerror(err));
}

/* Is libproftrace mapped into this process (is it being traced)? */
static inline int traced_self(void)
{
	char line[PATH_MAX + 256];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		fail("open /proc/self/maps: %s", strerror(errno));
	while (!found && fgets(line, sizeof line, f)) {
		const char *slash = strrchr(line, '/');

		found = slash && !strncmp(slash + 1, "libproftrace", 12);
	}
	fclose(f);
	return found;
}

/* Number of open file descriptors. */
static inline int count_fds(void)
{
	long max = sysconf(_SC_OPEN_MAX);
	int n = 0, fd;

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 0; fd < max; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

#endif
