/*
 * probe-thread-exec: exec called from a thread that is not the main one.
 * The kernel kills the other threads and the exec'ing thread takes over
 * the process's pid (the thread-group id); the pid does not change.
 *
 *  1. A fork child starts a second thread that execs /bin/sh -c 'exit 5'
 *     while the main thread waits in pthread_join.              -> exit 5
 *  2. The same, with the probe itself in mode "thread-exec-child", which
 *     checks that its pid is the one its parent forked (passed in
 *     PROBE_EXPECT_PID) and exits 6.                            -> exit 6
 * The parent also checks that waitpid reports the pid it forked.
 *
 * Processes: 2 fork children, each execs once (from a second thread).
 * Expected exit status: 0.
 */
#define PROBE_NAME "thread-exec"
#include "probe.h"

#include <pthread.h>

static void *exec_sh(void *arg)
{
	(void)arg;
	execv("/bin/sh", (char *[]){ "sh", "-c", "exit 5", NULL });
	child_fail("execv from a thread", errno, 127);
}

static void *exec_self(void *arg)
{
	char num[32];

	(void)arg;
	snprintf(num, sizeof num, "%ld", (long)getpid());
	if (setenv("PROBE_EXPECT_PID", num, 1) < 0)
		child_fail("setenv", errno, 126);
	execv(self_exe(), (char *[]){ "probe-thread-exec", "thread-exec-child", NULL });
	child_fail("execv from a thread", errno, 127);
}

static void run(void *(*fn)(void *), int code, const char *what)
{
	pid_t pid = xfork(what);

	if (pid == 0) {
		pthread_t th;

		if (pthread_create(&th, NULL, fn, NULL) != 0)
			_exit(125);
		pthread_join(th, NULL);
		_exit(124);
	}
	reap_expect(pid, code, what);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "thread-exec-child")) {
		const char *want = getenv("PROBE_EXPECT_PID");

		return want && strtol(want, NULL, 10) == (long)getpid() ? 6 : 2;
	}
	if (argc != 1)
		fail("usage: %s", argv[0]);
	self_exe();     /* resolve it before any thread needs it */
	run(exec_sh, 5, "exec of sh from a second thread");
	run(exec_self, 6, "exec of the probe from a second thread");
	return probe_ok();
}
