/*
 * probe-fork-noexec: fork children that never exec.
 *
 *  1. A child computes sum(1..1000) and exits 3 via exit() if it got
 *     500500 (else 1).                                          -> exit 3
 *  2. A child computes the same sum and sends it through a pipe; the
 *     parent reads "500500"; the child exits 0 via exit().    -> exit 0
 *  3. Nested: a child forks a grandchild that exits 4 via exit(); the
 *     child checks that with waitpid and exits 3.               -> exit 3
 *  4. A fork chain 4 deep: level k (1..4) forks level k+1, waits for it,
 *     checks its status (10 + k + 1) and exits 10 + k; level 5 exits 15.
 *                                                               -> exit 11
 *  5. errno: set to EDOM before a successful fork, still EDOM after it in
 *     both parent and child (child exits 0 if so, 2 if not).    -> exit 0
 *
 * Processes: 5 children + 1 grandchild + 4 deeper descendants of 4, none of
 * them execs.  Expected exit status: 0.
 */
#define PROBE_NAME "fork-noexec"
#include "probe.h"

static long sum_to(long n)
{
	volatile long s = 0;
	long i;

	for (i = 1; i <= n; i++)
		s += i;
	return s;
}

/* Child side of 4: returns the exit code for this level. */
static int chain(int level)
{
	pid_t pid;
	int st;

	if (level == 5)
		return 15;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		exit(chain(level + 1));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 10 + level + 1)
		return 2;
	return 10 + level;
}

int main(void)
{
	char buf[64];
	int p[2], st, err;
	pid_t pid, inner;

	/* 1 */
	if ((pid = xfork("compute")) == 0)
		exit(sum_to(1000) == 500500 ? 3 : 1);
	reap_expect(pid, 3, "child computing and exit()ing");

	/* 2 */
	xpipe(p);
	if ((pid = xfork("compute into pipe")) == 0) {
		close(p[0]);
		if (dprintf(p[1], "%ld", sum_to(1000)) < 0)
			exit(2);
		exit(0);
	}
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "child's result");
	close(p[0]);
	reap_expect(pid, 0, "child writing its result");
	expect_str(buf, "500500", "child's result");

	/* 3 */
	if ((pid = xfork("nested")) == 0) {
		inner = fork();
		if (inner < 0)
			exit(1);
		if (inner == 0)
			exit(sum_to(10) == 55 ? 4 : 1);
		if (waitpid(inner, &st, 0) != inner)
			exit(2);
		exit(WIFEXITED(st) && WEXITSTATUS(st) == 4 ? 3 : 5);
	}
	reap_expect(pid, 3, "child with a grandchild");

	/* 4 */
	if ((pid = xfork("fork chain")) == 0)
		exit(chain(1));
	reap_expect(pid, 11, "fork chain 5 deep");

	/* 5 */
	errno = EDOM;
	pid = fork();
	err = errno;
	if (pid == 0)
		_exit(err == EDOM ? 0 : 2);
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	reap_expect(pid, 0, "errno in the child after fork");
	if (err != EDOM)
		fail("fork changed errno from EDOM to %d (%s)", err, strerror(err));

	return probe_ok();
}
