/*
 * probe-unreaped: children that the image which started them never waits
 * for: it execs first, and the new image reaps them.  The library holds
 * each SPAWN and FORK until the child is reaped (preload/defer.c), so the
 * old image must send what it holds before it execs.  The children are
 * the static probe-static-helper, which says nothing of itself: what the
 * parent sent is all there is of it.
 *
 *  1. A child posix_spawns the static helper, then execs this probe in
 *     mode "reap", which waits for every child it has    -> exit 0
 *  2. A child forks a child that execs the static helper, then execs
 *     this probe in mode "reap"                          -> exit 0
 * Mode "reap" waits until ECHILD and exits 0 if every child it reaped
 * exited 0, else 1.
 *
 * Processes: 2 children, each exec'ing the probe; 2 helpers (the second
 * exec'd by a fork child), each with 3 children of its own.
 * Expected exit status: 0.
 */
#define PROBE_NAME "unreaped"
#include "probe.h"

#include <spawn.h>

static char helper[PATH_MAX];

static void exec_reaper(void)
{
	execl(self_exe(), "probe-unreaped", "reap", (char *)NULL);
	child_fail("exec reaper", errno, 127);
}

static void spawn_then_exec(void)
{
	pid_t pid;
	int rc = posix_spawn(&pid, helper, NULL, NULL,
			     (char *[]){ "probe-static-helper", NULL }, environ);

	if (rc != 0)
		child_fail("posix_spawn helper", rc, 126);
	exec_reaper();
}

static void fork_then_exec(void)
{
	if (xfork("fork of the helper") == 0) {
		execv(helper, (char *[]){ "probe-static-helper", NULL });
		child_fail("execv helper", errno, 127);
	}
	exec_reaper();
}

static int reap_all(void)
{
	int st, bad = 0, n = 0;

	while (wait(&st) > 0) {
		n++;
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	return errno != ECHILD || n != 1 || bad;
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "reap"))
		return reap_all();
	snprintf(helper, sizeof helper, "%s", sibling("probe-static-helper"));
	if (access(helper, X_OK) < 0)
		fail("%s: %s", helper, strerror(errno));
	if ((pid = xfork("posix_spawn, then exec")) == 0)
		spawn_then_exec();
	reap_expect(pid, 0, "posix_spawn, then exec");
	if ((pid = xfork("fork, then exec")) == 0)
		fork_then_exec();
	reap_expect(pid, 0, "fork, then exec");
	return probe_ok();
}
