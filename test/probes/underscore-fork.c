/*
 * probe-underscore-fork: _Fork() (glibc 2.34+), the async-signal-safe fork
 * that runs no atfork handlers.  After _Fork the child may only use
 * async-signal-safe functions, so it only _exits or execs.
 *
 *  1. _Fork + _exit(9), no exec                               -> exit 9
 *  2. _Fork + execv("/bin/sh", -c 'exit 8')                   -> exit 8
 *  3. _Fork + execve(self, underscore-fork-child) whose main returns 7
 *                                                             -> exit 7
 *  4. pthread_atfork handlers must not run for _Fork (they do for fork):
 *     a prepare handler that counts; the count stays 0 over _Fork and
 *     becomes 1 over fork (whose child _exits 0).
 *
 * Processes: 4 children; 2 and 3 exec once.  Expected exit status: 0.
 */
#define PROBE_NAME "underscore-fork"
#include "probe.h"

#include <pthread.h>

static volatile int prepared;

static void prepare(void)
{
	prepared++;
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "underscore-fork-child"))
		return 7;
	if (argc != 1)
		fail("usage: %s", argv[0]);
	if (pthread_atfork(prepare, NULL, NULL) != 0)
		fail("pthread_atfork failed");
	fflush(NULL);

	pid = _Fork();
	if (pid == 0)
		_exit(9);
	if (pid < 0)
		fail("_Fork: %s", strerror(errno));
	reap_expect(pid, 9, "_Fork + _exit(9)");

	pid = _Fork();
	if (pid == 0) {
		execv("/bin/sh", (char *[]){ "sh", "-c", "exit 8", NULL });
		_exit(127);
	}
	if (pid < 0)
		fail("_Fork: %s", strerror(errno));
	reap_expect(pid, 8, "_Fork + execv sh");

	pid = _Fork();
	if (pid == 0) {
		execve(self_exe(), (char *[]){ "probe-underscore-fork",
					       "underscore-fork-child", NULL }, environ);
		_exit(127);
	}
	if (pid < 0)
		fail("_Fork: %s", strerror(errno));
	reap_expect(pid, 7, "_Fork + execve self");

	if (prepared != 0)
		fail("atfork prepare handler ran %d times for _Fork", prepared);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	reap_expect(pid, 0, "fork");
	if (prepared != 1)
		fail("atfork prepare handler ran %d times for one fork", prepared);

	return probe_ok();
}
