/*
 * probe-spawn-fail: posix_spawn and posix_spawnp whose exec fails.  glibc
 * reports the exec's errno as the return value; the child it created for
 * the attempt has already ended (it _exits 127 after the failed exec and
 * posix_spawn reaps it), so no child is left to wait for.
 *
 *  1. posix_spawn("/nonexistent/probe-spawn-fail")     -> returns ENOENT
 *  2. posix_spawnp("probe-spawn-fail-no-such-command") -> returns ENOENT
 *  3. posix_spawn(FILE mode 0644)                      -> returns EACCES
 *  4. posix_spawnp(FILE mode 0644, a path)             -> returns EACCES
 *  5. posix_spawn with a file action that fails (addopen of a missing
 *     file) for /bin/true                              -> returns ENOENT
 * After each: wait() fails with ECHILD.  (errno is not checked: glibc's
 * CLONE_VM child leaves the exec's errno in it.)
 * Then a successful posix_spawn of /bin/true, to show the program goes on.
 *
 * Processes: 6 children (clone for posix_spawn); 1-5 never exec
 * successfully (each tries and _exits 127 inside glibc), 6 execs /bin/true.
 * A tracer that cannot learn their pids (glibc does not return them)
 * must still list them, with the command each tried.
 * Expected exit status: 0.
 */
#define PROBE_NAME "spawn-fail"
#include "probe.h"

#include <spawn.h>

static char file[] = "/tmp/probe-spawn-fail-XXXXXX";

static void cleanup(void)
{
	unlink(file);
}

static void expect_fail(int rc, int want, const char *what)
{
	int st;
	pid_t r;

	if (rc != want)
		fail("%s: returned %d (%s), expected %d (%s)", what, rc, strerror(rc),
		     want, strerror(want));
	r = wait(&st);
	if (r != -1 || errno != ECHILD)
		fail("%s: wait() returned %d (%s), expected ECHILD", what, (int)r,
		     r > 0 ? describe(st) : strerror(errno));
}

int main(void)
{
	posix_spawn_file_actions_t fa;
	pid_t pid = 0;
	int fd, rc;

	if (setenv("PATH", "/usr/bin:/bin", 1) < 0)
		fail("setenv: %s", strerror(errno));
	fd = mkstemp(file);
	if (fd < 0 || fchmod(fd, 0644) < 0)
		fail("mkstemp: %s", strerror(errno));
	close(fd);
	atexit(cleanup);

	rc = posix_spawn(&pid, "/nonexistent/probe-spawn-fail", NULL, NULL,
			 (char *[]){ "probe-spawn-fail-missing", NULL }, environ);
	expect_fail(rc, ENOENT, "posix_spawn of a missing path");

	rc = posix_spawnp(&pid, "probe-spawn-fail-no-such-command", NULL, NULL,
			  (char *[]){ "probe-spawn-fail-no-such-command", NULL }, environ);
	expect_fail(rc, ENOENT, "posix_spawnp of a missing name");

	rc = posix_spawn(&pid, file, NULL, NULL,
			 (char *[]){ "probe-spawn-fail-noexec", NULL }, environ);
	expect_fail(rc, EACCES, "posix_spawn of a non-executable file");

	rc = posix_spawnp(&pid, file, NULL, NULL,
			  (char *[]){ "probe-spawn-fail-noexec-p", NULL }, environ);
	expect_fail(rc, EACCES, "posix_spawnp of a non-executable file");

	if (posix_spawn_file_actions_init(&fa) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/nonexistent/probe-spawn-fail",
					     O_RDONLY, 0) != 0)
		fail("file actions");
	rc = posix_spawn(&pid, "/bin/true", &fa, NULL,
			 (char *[]){ "true", "never-runs", NULL }, environ);
	expect_fail(rc, ENOENT, "posix_spawn with a failing addopen");
	posix_spawn_file_actions_destroy(&fa);

	rc = posix_spawn(&pid, "/bin/true", NULL, NULL,
			 (char *[]){ "true", "after-failures", NULL }, environ);
	if (rc != 0)
		fail("posix_spawn /bin/true: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawn /bin/true after the failures");

	return probe_ok();
}
