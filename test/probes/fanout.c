/*
 * probe-fanout: 200 children alive at once.
 *
 * The parent forks 200 children; child i makes the read end of a "gate"
 * pipe its stdin and execs the probe itself as
 *     probe-fanout gate I
 * which blocks reading stdin until EOF and then exits with status I
 * (0..199, distinct).  Only once all 200 are forked does the parent close
 * the gate's write end, releasing them together; it then reaps them with
 * wait() and waitpid(-1) alternately, in whatever order they end, and
 * checks that each pid ended with its own status, that none is reaped
 * twice, and that nothing is left (ECHILD).
 *
 * Processes: 200 fork children, each execs once (the probe).
 * Expected exit status: 0.
 */
#define PROBE_NAME "fanout"
#include "probe.h"

#define N 200

int main(int argc, char **argv)
{
	static pid_t pids[N];
	static int done[N];
	int gate[2], i, st;
	char arg[16];

	if (argc == 3 && !strcmp(argv[1], "gate")) {
		char c;
		ssize_t r;

		while ((r = read(0, &c, 1)) < 0 && errno == EINTR)
			;
		return r == 0 ? atoi(argv[2]) : 255;    /* EOF expected */
	}
	if (argc != 1)
		fail("usage: %s", argv[0]);

	xpipe(gate);
	for (i = 0; i < N; i++) {
		snprintf(arg, sizeof arg, "%d", i);
		if ((pids[i] = xfork("fan-out")) == 0) {
			if (dup2(gate[0], 0) < 0)
				child_fail("dup2", errno, 126);
			execv(self_exe(), (char *[]){ "probe-fanout", "gate", arg, NULL });
			child_fail("execv", errno, 127);
		}
	}
	close(gate[0]);
	close(gate[1]);
	for (i = 0; i < N; i++) {
		pid_t r;
		int k;

		do
			r = (i % 2) ? waitpid(-1, &st, 0) : wait(&st);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			fail("reap #%d: %s", i, strerror(errno));
		for (k = 0; k < N && pids[k] != r; k++)
			;
		if (k == N)
			fail("reaped pid %d, which is not one of ours", (int)r);
		if (done[k]++)
			fail("child %d (pid %d) reaped twice", k, (int)r);
		snprintf(arg, sizeof arg, "child %d", k);
		expect_exit(st, k, arg);
	}
	errno = 0;
	i = (int)wait(&st);
	expect_errno(i, -1, errno, ECHILD, "wait() after 200 reaps");
	return probe_ok();
}
