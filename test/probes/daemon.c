/*
 * probe-daemon: daemon(3), which forks inside glibc (through glibc's
 * internal fork, not the public fork symbol) and _exits in the parent.  A
 * preload tracer that only wraps the public names does not see that fork.
 * The probe makes itself a child subreaper so that the daemon is
 * reparented to it and can be waited for.
 *
 *   probe (subreaper)
 *    `- A: fork child; calls daemon(1, 1): A _exits 0 inside daemon()
 *        `- D: the daemon (forked by glibc in A); sends its pid through a
 *              pipe, then execs /bin/sh -c 'exit 4' once reparented
 *    `- A2: fork child; daemon(1, 1) too, its daemon D2 never execs: it
 *              sends its pid, waits to be reparented, then exit(5)s
 *
 * Checks: A and A2 exit 0; D and D2 are reaped by the probe with 4 and 5.
 *
 * Processes: A, A2 (never exec), D (execs /bin/sh), D2 (never execs).
 * Expected exit status: 0.
 */
#define PROBE_NAME "daemon"
#include "probe.h"

#include <sys/prctl.h>
#include <time.h>

static void wait_reparent(pid_t to)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 1000 && getppid() != to; i++)
		nanosleep(&ts, NULL);
	if (getppid() != to)
		_exit(90);
}

static void run(int do_exec, int code, const char *what)
{
	pid_t self = getpid(), a, d;
	char buf[32];
	int p[2];

	xpipe(p);
	if ((a = xfork(what)) == 0) {
		close(p[0]);
		if (daemon(1, 1) < 0)
			child_fail("daemon", errno, 126);
		/* Now in D, A is gone (or going). */
		if (dprintf(p[1], "%ld", (long)getpid()) < 0)
			_exit(2);
		close(p[1]);
		wait_reparent(self);
		if (do_exec) {
			execv("/bin/sh", (char *[]){ "sh", "-c", "exit 4", NULL });
			child_fail("execv", errno, 127);
		}
		exit(code);
	}
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "the daemon's pid");
	close(p[0]);
	reap_expect(a, 0, what);
	d = (pid_t)strtol(buf, NULL, 10);
	if (d <= 0 || d == a)
		fail("%s: bad daemon pid \"%s\"", what, buf);
	reap_expect(d, code, what);
}

int main(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	run(1, 4, "daemon that execs");
	run(0, 5, "daemon that exits");
	return probe_ok();
}
