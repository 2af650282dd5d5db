/*
 * probe-killed-parent: a static program exec'd by a fork child whose
 * parent is then killed by SIGKILL, before it could wait for it.  The
 * probe makes itself a child subreaper, so that the static program is
 * reparented to it and it can wait; everything stays deterministic.
 *
 *   probe (subreaper, the watcher)
 *    `- P: fork child; forks C, sends C's pid through a pipe, pauses
 *        `- C: fork child; execs probe-static-helper hold 6, which reads
 *              a second pipe (its fd 10) to its end, then exits 6
 *
 * The probe reads the first pipe to its end (the write end is
 * close-on-exec: the end means C has exec'd), kills P with SIGKILL,
 * waits for it (killed by signal 9), closes its end of the second pipe,
 * which P's death closed too, and waits for C (now its child): exit 6.
 *
 * Processes: P (never execs, killed), C (execs the static helper once;
 * parent at exec time P).  Expected exit status: 0.
 */
#define PROBE_NAME "killed-parent"
#include "probe.h"

#include <signal.h>
#include <sys/prctl.h>

int main(void)
{
	char helper[PATH_MAX], buf[32];
	int fds[2], hold[2];
	pid_t p, c;

	snprintf(helper, sizeof helper, "%s", sibling("probe-static-helper"));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		fail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	xpipe(fds);
	xpipe(hold);
	if ((p = xfork("P")) == 0) {
		pid_t child = fork();

		if (child < 0)
			child_fail("fork", errno, 126);
		if (child == 0) {
			if (dup2(hold[0], 10) < 0)
				child_fail("dup2", errno, 126);
			execv(helper, (char *[]){ "probe-static-helper",
						  "hold", "6", NULL });
			child_fail("execv helper", errno, 127);
		}
		if (dprintf(fds[1], "%ld", (long)child) < 0)
			_exit(2);
		close(fds[1]);
		for (;;)
			pause();
	}
	close(fds[1]);
	close(hold[0]);
	read_all(fds[0], buf, sizeof buf, "C's pid");
	close(fds[0]);
	c = (pid_t)strtol(buf, NULL, 10);
	if (c <= 0)
		fail("bad pid \"%s\" from P", buf);
	if (kill(p, SIGKILL) < 0)
		fail("kill P: %s", strerror(errno));
	expect_signal(wait_child(p, "P"), SIGKILL, "P");
	close(hold[1]);
	reap_expect(c, 6, "the static helper, reparented to the probe");
	return probe_ok();
}
