/*
 * probe-raw-clobber: a program that puts a file of its own on every
 * descriptor from 3 up by raw system calls (syscall(SYS_dup3)), out of
 * the sight of the library's dup2/close hooks, as a runtime that does not
 * go through libc would, before each of three children.  libproftrace
 * holds a SPAWN, a FORK and a fork child's EXEC back until the child is
 * reaped, and checks its descriptor before each write rather than before
 * each hold; each step below makes it write at once instead.  It must
 * write nothing into the program's file, and record every child.
 *
 *  1. posix_spawn /bin/sh -c 'exit 3' with an argument of 3000 bytes,
 *     a SPAWN too large to be held                                -> exit 3
 *  2. fork; the child only execs /bin/sh -c 'exit 4'             -> exit 4
 *  3. fork; the child execs a program that does not exist, which
 *     fails with ENOENT (its EXEC and EXEC_FAILED are written at
 *     once), and _exits 5                                         -> exit 5
 *  then the file is still empty, and each descriptor put on it still
 *  holds it.
 *
 * Processes: 3 children; 1 and 2 exec /bin/sh once.
 * Expected exit status: 0.
 */
#define PROBE_NAME "raw-clobber"
#include "probe.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define MAX_FDS 4096
#define RAW_FDS 300             /* past where the library keeps its own */

extern char **environ;

static int max_fd(void)
{
	long max = sysconf(_SC_OPEN_MAX);

	return max < 0 || max > MAX_FDS ? MAX_FDS : (int)max;
}

/* Is fd open on the same file as file? */
static int same_file(int fd, int file)
{
	struct stat s, f;

	return fstat(fd, &s) == 0 && fstat(file, &f) == 0 &&
	       s.st_ino == f.st_ino && s.st_dev == f.st_dev;
}

/*
 * file on every descriptor number from 3 to RAW_FDS not on it yet, open
 * or not (the library's own is hidden from fcntl, not from dup3), by raw
 * dup3, listed in fds; their number.
 */
static int clobber_raw(int file, int *fds)
{
	int fd, n = 0, max = max_fd() < RAW_FDS ? max_fd() : RAW_FDS;

	for (fd = 3; fd < max; fd++) {
		if (fd == file || same_file(fd, file))
			continue;
		if (syscall(SYS_dup3, file, fd, 0) != fd)
			fail("dup3(%d, %d): %s", file, fd, strerror(errno));
		fds[n++] = fd;
	}
	return n;
}

int main(void)
{
	char name[] = "/tmp/probe-raw-clobber-XXXXXX";
	static char big[3001];
	char *sh3[] = { "sh", "-c", "exit 3", big, NULL };
	struct stat st;
	int file, n = 0, i, fds[MAX_FDS];
	pid_t pid;

	file = mkstemp(name);
	if (file < 0)
		fail("mkstemp: %s", strerror(errno));
	unlink(name);
	memset(big, 'x', sizeof big - 1);

	/* 1 */
	n += clobber_raw(file, fds + n);
	if ((errno = posix_spawn(&pid, "/bin/sh", NULL, NULL, sh3, environ)))
		fail("posix_spawn /bin/sh: %s", strerror(errno));
	reap_expect(pid, 3, "posix_spawn after the raw dup3s");

	/* 2 */
	n += clobber_raw(file, fds + n);
	pid = xfork("fork child that only execs");
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 4", (char *)NULL);
		child_fail("execl /bin/sh", errno, 127);
	}
	reap_expect(pid, 4, "fork child that only execs");

	/* 3 */
	n += clobber_raw(file, fds + n);
	pid = xfork("fork child whose exec fails");
	if (pid == 0) {
		execl("/nonexistent/probe-raw-clobber", "nothing", (char *)NULL);
		_exit(errno == ENOENT ? 5 : 126);
	}
	reap_expect(pid, 5, "fork child whose exec fails");

	if (fstat(file, &st) < 0)
		fail("fstat: %s", strerror(errno));
	if (st.st_size != 0)
		fail("the program's file holds %lld bytes it was never sent",
		     (long long)st.st_size);
	for (i = 0; i < n; i++)
		if (!same_file(fds[i], file))
			fail("descriptor %d no longer holds the program's file",
			     fds[i]);
	return 0;
}
