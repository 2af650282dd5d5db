/*
 * probe-static-helper: a helper, not a test (probes.txt marks it "-" and
 * "static"): linked with -static, so a preloaded library cannot enter it.
 * probe-static-child and probe-killed-parent start it.
 *
 *     probe-static-helper [STATUS]
 *     probe-static-helper hold STATUS
 *
 * It fork+execs the dynamic /bin/true (exit 0; a tracer must see this
 * grandchild, since it loads the preload library again), forks a child
 * that never execs and _exits 3 (invisible to a preload tracer), and
 * posix_spawns /bin/sh -c 'exit 5'.  It checks each status and exits
 * STATUS (default 0), or 1 with a message on stderr.
 *
 * Processes: 3 children (/bin/true, a fork-only child, /bin/sh).
 *
 * With "hold", it starts nothing: it reads fd 10 (a pipe) until every
 * writer has closed it, then exits STATUS.
 */
#define PROBE_NAME "static-helper"
#include "probe.h"

#include <spawn.h>

/* Read fd 10 to its end (until every writer has gone), then exit status. */
static int hold(int status)
{
	char c;
	ssize_t n;

	while ((n = read(10, &c, 1)) != 0)
		if (n < 0 && errno != EINTR)
			fail("read fd 10: %s", strerror(errno));
	return status;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int rc;

	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(atoi(argv[2]));
	if (argc > 2)
		fail("usage: %s [STATUS] | hold STATUS", argv[0]);

	if ((pid = xfork("fork+exec /bin/true")) == 0) {
		execv("/bin/true", (char *[]){ "true", "from-static", NULL });
		child_fail("execv /bin/true", errno, 127);
	}
	reap_expect(pid, 0, "/bin/true from a static parent");

	if ((pid = xfork("fork only")) == 0)
		_exit(3);
	reap_expect(pid, 3, "fork-only child of a static parent");

	rc = posix_spawn(&pid, "/bin/sh", NULL, NULL,
			 (char *[]){ "sh", "-c", "exit 5", NULL }, environ);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 5, "posix_spawn from a static parent");

	return argc == 2 ? atoi(argv[1]) : 0;
}
