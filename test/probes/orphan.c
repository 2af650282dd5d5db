/*
 * probe-orphan: a process whose parent dies before it execs, so that it is
 * reparented: its parent at exec time (getppid()) is no longer the process
 * that forked it.  The probe makes itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so the orphan is reparented to the probe, which
 * can then wait for it; everything stays deterministic.
 *
 *   probe (subreaper)
 *    `- A: fork child; forks B, sends B's pid through a pipe, exits 3
 *        `- B: fork child; waits until getppid() is the probe (A is gone),
 *              then execs /bin/sh -c 'exit 4'
 *
 * Checks: A exits 3; B's pid came through the pipe; waitpid(B) by the
 * probe (its new parent) gives exit 4.  B gives up after 10 s (exit 90)
 * if it is never reparented.
 *
 * Processes: A (never execs), B (execs /bin/sh once; forked by A, parent
 * at exec time the probe).  Expected exit status: 0.
 */
#define PROBE_NAME "orphan"
#include "probe.h"

#include <sys/prctl.h>
#include <time.h>

int main(void)
{
	pid_t self = getpid(), a, b;
	char buf[32];
	int p[2], i;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	xpipe(p);
	if ((a = xfork("A")) == 0) {
		pid_t grandchild = fork();

		if (grandchild < 0)
			child_fail("fork", errno, 126);
		if (grandchild == 0) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			close(p[1]);
			for (i = 0; i < 1000 && getppid() != self; i++)
				nanosleep(&ts, NULL);
			if (getppid() != self)
				_exit(90);
			execv("/bin/sh", (char *[]){ "sh", "-c", "exit 4", NULL });
			child_fail("execv", errno, 127);
		}
		if (dprintf(p[1], "%ld", (long)grandchild) < 0)
			_exit(2);
		exit(3);
	}
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "B's pid");
	close(p[0]);
	reap_expect(a, 3, "A");
	b = (pid_t)strtol(buf, NULL, 10);
	if (b <= 0)
		fail("bad pid \"%s\" from A", buf);
	reap_expect(b, 4, "B, reparented to the probe");
	return probe_ok();
}
