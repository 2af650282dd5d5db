/*
 * probe-deaths: children that end by a signal; the parent checks
 * WIFSIGNALED/WTERMSIG (and that the status is not mistaken for an exit).
 * Core dumps are switched off (RLIMIT_CORE 0) so that nothing is written.
 *
 *   child                                                   ends by
 *   abort()                                                 SIGABRT
 *   raise(SIGKILL)                                          SIGKILL
 *   pause(), parent kill(SIGTERM)                           SIGTERM
 *   store through an invalid pointer                        SIGSEGV
 *   write to a pipe with no reader (SIGPIPE default)        SIGPIPE
 *   pause(), parent pidfd_send_signal(SIGUSR1) (kill() if
 *     pidfds are not available)                             SIGUSR1
 *   exec'd: the probe in mode "wait-kill" says "r" through a
 *     pipe and pauses; the parent reads "r", kill(SIGTERM)  SIGTERM
 *   exec'd: sh -c 'kill -KILL $$'                           SIGKILL
 *   SIGTERM handler that _exit(33)s, parent kill(SIGTERM):
 *     not a death by signal                                 exit 33
 *
 * The fork-only children are killed whenever the signal lands (before
 * or after pause: the default action is the same), so the process set is
 * the same in every run; the exec'd one is killed only after it has
 * exec'd and said so.
 * Processes: 9 fork children; the wait-kill and sh ones exec once.
 * Expected exit status: 0.
 */
#define PROBE_NAME "deaths"
#include "probe.h"

#include <stdint.h>
#include <sys/pidfd.h>
#include <sys/resource.h>

static void on_term(int sig)
{
	(void)sig;
	_exit(33);
}

int main(int argc, char **argv)
{
	struct rlimit no_core = { 0, 0 };
	volatile uintptr_t bad = 16;
	char buf[16];
	int p[2], pfd, st;
	pid_t pid;

	/* Whatever we inherited: the children's deaths depend on defaults. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (argc == 2 && !strcmp(argv[1], "wait-kill")) {
		if (write(1, "r", 1) != 1)
			return 2;
		for (;;)
			pause();
	}
	if (argc != 1)
		fail("usage: %s", argv[0]);
	if (setrlimit(RLIMIT_CORE, &no_core) < 0)
		fail("setrlimit: %s", strerror(errno));

	if ((pid = xfork("abort")) == 0)
		abort();
	expect_signal(wait_child(pid, "abort"), SIGABRT, "abort()");

	if ((pid = xfork("raise SIGKILL")) == 0) {
		raise(SIGKILL);
		_exit(1);
	}
	expect_signal(wait_child(pid, "raise"), SIGKILL, "raise(SIGKILL)");

	if ((pid = xfork("pause")) == 0) {
		for (;;)
			pause();
	}
	if (kill(pid, SIGTERM) < 0)
		fail("kill: %s", strerror(errno));
	expect_signal(wait_child(pid, "kill"), SIGTERM, "kill(SIGTERM) by parent");

	if ((pid = xfork("segv")) == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile int *)bad = 1;
		_exit(1);
	}
	expect_signal(wait_child(pid, "segv"), SIGSEGV, "invalid store");

	xpipe(p);
	close(p[0]);            /* no reader anywhere, before the child exists */
	if ((pid = xfork("sigpipe")) == 0) {
		if (write(p[1], "x", 1) < 0)
			_exit(2);
		_exit(1);
	}
	close(p[1]);
	expect_signal(wait_child(pid, "sigpipe"), SIGPIPE, "write to a closed pipe");

	if ((pid = xfork("pidfd")) == 0) {
		for (;;)
			pause();
	}
	pfd = pidfd_open(pid, 0);
	if (pfd >= 0) {
		if (pidfd_send_signal(pfd, SIGUSR1, NULL, 0) < 0)
			fail("pidfd_send_signal: %s", strerror(errno));
		close(pfd);
	} else if (kill(pid, SIGUSR1) < 0) {
		fail("kill: %s", strerror(errno));
	}
	expect_signal(wait_child(pid, "pidfd"), SIGUSR1, "pidfd_send_signal(SIGUSR1)");

	xpipe(p);
	if ((pid = xfork("wait-kill")) == 0) {
		if (dup2(p[1], 1) < 0)
			child_fail("dup2", errno, 126);
		execv(self_exe(), (char *[]){ "probe-deaths", "wait-kill", NULL });
		child_fail("execv", errno, 127);
	}
	close(p[1]);
	if (read(p[0], buf, 1) != 1 || buf[0] != 'r')
		fail("wait-kill child did not report");
	if (kill(pid, SIGTERM) < 0)
		fail("kill: %s", strerror(errno));
	close(p[0]);
	expect_signal(wait_child(pid, "wait-kill"), SIGTERM, "exec'd child, kill(SIGTERM)");

	if ((pid = xfork("sh kill")) == 0) {
		execl("/bin/sh", "sh", "-c", "kill -KILL $$", (char *)NULL);
		child_fail("execl", errno, 127);
	}
	expect_signal(wait_child(pid, "sh"), SIGKILL, "sh -c 'kill -KILL $$'");

	xpipe(p);
	if ((pid = xfork("handler")) == 0) {
		signal(SIGTERM, on_term);
		if (write(p[1], "h", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], buf, 1) != 1)
		fail("handler child did not report");
	close(p[0]);
	if (kill(pid, SIGTERM) < 0)
		fail("kill: %s", strerror(errno));
	st = wait_child(pid, "handler");
	expect_exit(st, 33, "SIGTERM caught by a handler that _exits");

	return probe_ok();
}
