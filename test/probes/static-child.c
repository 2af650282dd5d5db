/*
 * probe-static-child: a dynamic program whose child is a static one
 * (probe-static-helper, built next to this probe with -static), which in
 * turn starts dynamic grandchildren.  A preload tracer cannot see inside
 * the static process but must see it exec'd, its end, and the dynamic
 * grandchildren it starts (they inherit LD_PRELOAD through it untouched).
 *
 *  1. posix_spawn(probe-static-helper)               -> exit 0
 *  2. fork + execv(probe-static-helper, 6)           -> exit 6
 * (the helper checks its own children: see static-helper.c).
 * The helper is found as dirname(/proc/self/exe)/probe-static-helper.
 *
 * Processes: 2 children (the helper, exec'd), each with 3 children of its
 * own (/bin/true, a fork-only child, /bin/sh).
 * Expected exit status: 0.
 */
#define PROBE_NAME "static-child"
#include "probe.h"

#include <spawn.h>

int main(void)
{
	char helper[PATH_MAX];
	pid_t pid;
	int rc;

	snprintf(helper, sizeof helper, "%s", sibling("probe-static-helper"));
	if (access(helper, X_OK) < 0)
		fail("%s: %s", helper, strerror(errno));

	rc = posix_spawn(&pid, helper, NULL, NULL,
			 (char *[]){ "probe-static-helper", NULL }, environ);
	if (rc != 0)
		fail("posix_spawn %s: %s", helper, strerror(rc));
	reap_expect(pid, 0, "static helper via posix_spawn");

	if ((pid = xfork("static helper")) == 0) {
		execv(helper, (char *[]){ "probe-static-helper", "6", NULL });
		child_fail("execv helper", errno, 127);
	}
	reap_expect(pid, 6, "static helper via fork + execv");

	return probe_ok();
}
