/*
 * probe-fd-clobber: a program that takes every descriptor it did not open
 * for itself, as daemons and sandboxes do, including the one libproftrace
 * keeps its collector connection on.  The library must notice, send
 * nothing into the program's own sockets and files, take none of the
 * program's descriptors, and keep recording.
 *
 *  1. dup2() one end of a SOCK_SEQPACKET socketpair onto every open
 *     descriptor from 3 up but the other end; send "one" through it; a
 *     child /bin/sh -c 'exit 3'; the other end then holds exactly the
 *     one message "one"                                          -> exit 3
 *  2. the same with a temporary file opened after 1 (every descriptor
 *     but the socketpair's other end now points at it); write "two\n";
 *     a child /bin/sh -c 'exit 4'; the file then holds exactly "two\n",
 *     and each descriptor put on it still holds it                -> exit 4
 *  3. close every descriptor from 3 up but the file's and the socket's
 *     other end (close_range); a child /bin/sh -c 'exit 5'        -> exit 5
 *
 * Processes: 3 children, each execs /bin/sh once.  The probe returns 0
 * from main after its descriptors were taken: its end and its children
 * must be recorded all the same.
 * Expected exit status: 0.
 */
#define PROBE_NAME "fd-clobber"
#include "probe.h"

#include <sys/socket.h>
#include <sys/stat.h>

#define MAX_FDS 4096

static int max_fd(void)
{
	long max = sysconf(_SC_OPEN_MAX);

	return max < 0 || max > MAX_FDS ? MAX_FDS : (int)max;
}

/* Put file on every open descriptor from 3 up but keep. */
static void clobber(int file, int keep)
{
	int fd, max = max_fd();

	for (fd = 3; fd < max; fd++)
		if (fd != file && fd != keep && fcntl(fd, F_GETFD) >= 0 &&
		    dup2(file, fd) != fd)
			fail("dup2(%d, %d): %s", file, fd, strerror(errno));
}

/* Is fd open on the same file as file? */
static int same_file(int fd, int file)
{
	struct stat s, f;

	return fstat(fd, &s) == 0 && fstat(file, &f) == 0 &&
	       s.st_ino == f.st_ino && s.st_dev == f.st_dev;
}

/* The descriptors from 3 up open on file, other than file itself. */
static int fds_on(int file, int *fds, int cap)
{
	int fd, n = 0, max = max_fd();

	for (fd = 3; fd < max && n < cap; fd++)
		if (fd != file && same_file(fd, file))
			fds[n++] = fd;
	return n;
}

/* close_range(2) on everything from 3 up but lo and hi (lo < hi). */
static void close_from_except(int lo, int hi)
{
	unsigned ranges[3][2] = {
		{ 3, (unsigned)lo - 1 },
		{ (unsigned)lo + 1, (unsigned)hi - 1 },
		{ (unsigned)hi + 1, ~0u },
	};
	int i;

	for (i = 0; i < 3; i++)
		if (ranges[i][0] <= ranges[i][1] &&
		    close_range(ranges[i][0], ranges[i][1], 0) < 0)
			fail("close_range(%u, %u): %s", ranges[i][0],
			     ranges[i][1], strerror(errno));
}

static void run_sh(const char *script, int code, const char *what)
{
	pid_t pid = xfork(what);

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		child_fail("execl /bin/sh", errno, 127);
	}
	reap_expect(pid, code, what);
}

/* The messages waiting at fd, which must be exactly want. */
static void expect_messages(int fd, const char *want)
{
	char buf[1024], got[1024] = "";
	ssize_t n;

	/* 0: every copy of the other end is closed (after 3) */
	while ((n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		if (memchr(buf, 0, (size_t)n) ||
		    strlen(got) + (size_t)n + 2 > sizeof got)
			fail("the socketpair received %zd bytes it was not sent", n);
		strcat(got, buf);
		strcat(got, "|");
	}
	if (n < 0 && errno != EAGAIN)
		fail("recv: %s", strerror(errno));
	expect_str(got, want, "messages through the socketpair");
}

static void expect_file(const char *path, const char *want)
{
	char buf[256];
	size_t n = read_file(path, buf, sizeof buf - 1);

	if (n != strlen(want))   /* frames hold NUL bytes: check the size */
		fail("%s holds %zu bytes, expected %zu", path, n, strlen(want));
	expect_str(buf, want, path);
}

int main(void)
{
	char name[] = "/tmp/probe-fd-clobber-XXXXXX";
	int sp[2], file, fds[MAX_FDS], n, i;

	/* 1 */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		fail("socketpair: %s", strerror(errno));
	clobber(sp[0], sp[1]);
	if (send(sp[0], "one", 3, 0) != 3)
		fail("send: %s", strerror(errno));
	run_sh("exit 3", 3, "child after the socket dup2s");
	expect_messages(sp[1], "one|");

	/* 2 */
	if ((file = mkstemp(name)) < 0)
		fail("mkstemp: %s", strerror(errno));
	clobber(file, sp[1]);
	write_all(file, "two\n", 4, name);
	n = fds_on(file, fds, MAX_FDS);
	if (n < 1)
		fail("no descriptor was put on the file");
	run_sh("exit 4", 4, "child after the file dup2s");
	for (i = 0; i < n; i++)
		if (!same_file(fds[i], file))
			fail("fd %d no longer holds the file", fds[i]);
	expect_file(name, "two\n");
	expect_messages(sp[1], "");

	/* 3 */
	close_from_except(file < sp[1] ? file : sp[1], file < sp[1] ? sp[1] : file);
	run_sh("exit 5", 5, "child after close_range");
	expect_file(name, "two\n");
	expect_messages(sp[1], "");
	unlink(name);
	return probe_ok();
}
