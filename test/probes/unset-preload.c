/*
 * probe-unset-preload: a program that removes LD_PRELOAD (and
 * PROFTRACE_SOCKET, PROFTRACE_DIR) from its own environment with
 * unsetenv() and then starts children by every route; a tracer must still
 * follow them.  Then the same with LD_PRELOAD set to "".
 *
 * Before unsetting, the probe notes whether it is traced (libproftrace
 * mapped) in PROBE_EXPECT_TRACED=0|1 and copies PROFTRACE_SOCKET and
 * PROFTRACE_DIR to PROBE_ORIG_SOCKET and PROBE_ORIG_DIR.  Every child is
 * the probe itself in mode "expect-traced", which checks that it is traced
 * exactly when PROBE_EXPECT_TRACED says, and that PROFTRACE_SOCKET and
 * PROFTRACE_DIR are back as they were (when traced).  The argument lists
 * are the same in every run.
 *
 * Routes, each expecting exit 0, in two rounds (LD_PRELOAD unset, then
 * LD_PRELOAD=""):
 *   system("'SELF' expect-traced system")
 *   popen("'SELF' expect-traced popen", "r"), pclose
 *   posix_spawnp(SELF, expect-traced posix_spawnp) with environ
 *   posix_spawn(SELF, expect-traced posix_spawn) with environ
 *   fork + execvp(SELF, expect-traced execvp)
 *   fork + execv(SELF, expect-traced execv)
 *   fork + execl(SELF, expect-traced execl)
 *   system("sh -c \"'SELF' expect-traced nested-sh\"") (a grandchild)
 * After each system()/popen(): the probe's own environment still lacks
 * what it removed (a tracer may lend children a repaired environment, but
 * must give the program its own back), and environ is the same pointer.
 *
 * Processes per round: 12.  system and popen start /bin/sh, which (dash)
 * vforks and execs the probe (2 each); the nested system is sh -> sh ->
 * probe (3); the other 5 routes start the probe directly.
 * Expected exit status: 0.
 */
#define PROBE_NAME "unset-preload"
#include "probe.h"

#include <spawn.h>

/* Mode expect-traced: exit 0 when traced as expected, else 2/3/4. */
static int expect_traced(const char *route)
{
	const char *want = getenv("PROBE_EXPECT_TRACED");
	int traced = traced_self();
	static const char *const pairs[][2] = {
		{ "PROFTRACE_SOCKET", "PROBE_ORIG_SOCKET" },
		{ "PROFTRACE_DIR", "PROBE_ORIG_DIR" },
	};
	size_t i;

	if (!want) {
		fprintf(stderr, PROBE_PREFIX "FAIL: %s: PROBE_EXPECT_TRACED lost\n", route);
		return 2;
	}
	if (traced != (want[0] == '1')) {
		fprintf(stderr, PROBE_PREFIX "FAIL: %s: traced %d, expected %s\n", route,
			traced, want);
		return 3;
	}
	for (i = 0; traced && i < 2; i++) {
		const char *now = getenv(pairs[i][0]), *orig = getenv(pairs[i][1]);

		if ((now == NULL) != (orig == NULL) || (now && strcmp(now, orig))) {
			fprintf(stderr, PROBE_PREFIX "FAIL: %s: %s is %s, was %s\n",
				route, pairs[i][0], now ? now : "(unset)",
				orig ? orig : "(unset)");
			return 4;
		}
	}
	return 0;
}

static char **env_before;

/* The probe's own environment must be as it left it. */
static void check_own_env(const char *round, const char *what)
{
	const char *pre = getenv("LD_PRELOAD");

	if (environ != env_before)
		fail("%s: %s: environ replaced", round, what);
	if (round[0] == 'u' ? pre != NULL : (pre == NULL || *pre))
		fail("%s: %s: our own LD_PRELOAD is now %s", round, what,
		     pre ? pre : "(unset)");
	if (getenv("PROFTRACE_SOCKET") || getenv("PROFTRACE_DIR"))
		fail("%s: %s: PROFTRACE_* came back in our own environment", round,
		     what);
}

static void round_of_routes(const char *round)
{
	const char *self = self_exe();
	char cmd[PATH_MAX + 128], buf[256];
	FILE *f;
	pid_t pid;
	int rc, st;

	snprintf(cmd, sizeof cmd, "'%s' expect-traced system", self);
	expect_exit(system(cmd), 0, "system");
	check_own_env(round, "system");

	snprintf(cmd, sizeof cmd, "'%s' expect-traced popen", self);
	if (!(f = popen(cmd, "r")))
		fail("popen: %s", strerror(errno));
	check_own_env(round, "popen");
	while (fgets(buf, sizeof buf, f))
		;
	st = pclose(f);
	expect_exit(st, 0, "popen");

	rc = posix_spawnp(&pid, self, NULL, NULL,
			  (char *[]){ "probe-unset-preload", "expect-traced",
				      "posix_spawnp", NULL }, environ);
	if (rc != 0)
		fail("posix_spawnp: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawnp");

	rc = posix_spawn(&pid, self, NULL, NULL,
			 (char *[]){ "probe-unset-preload", "expect-traced",
				     "posix_spawn", NULL }, environ);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawn");

	if ((pid = xfork("execvp")) == 0) {
		execvp(self, (char *[]){ "probe-unset-preload", "expect-traced",
					 "execvp", NULL });
		child_fail("execvp", errno, 127);
	}
	reap_expect(pid, 0, "fork + execvp");

	if ((pid = xfork("execv")) == 0) {
		execv(self, (char *[]){ "probe-unset-preload", "expect-traced",
					"execv", NULL });
		child_fail("execv", errno, 127);
	}
	reap_expect(pid, 0, "fork + execv");

	if ((pid = xfork("execl")) == 0) {
		execl(self, "probe-unset-preload", "expect-traced", "execl",
		      (char *)NULL);
		child_fail("execl", errno, 127);
	}
	reap_expect(pid, 0, "fork + execl");

	snprintf(cmd, sizeof cmd, "sh -c \"'%s' expect-traced nested-sh\"", self);
	expect_exit(system(cmd), 0, "system(sh -c ...)");
	check_own_env(round, "nested system");
}

static void keep(const char *from, const char *to)
{
	const char *v = getenv(from);

	if (v && setenv(to, v, 1) < 0)
		fail("setenv %s: %s", to, strerror(errno));
	if (!v && unsetenv(to) < 0)
		fail("unsetenv %s: %s", to, strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "expect-traced"))
		return expect_traced(argv[2]);
	if (argc != 1)
		fail("usage: %s", argv[0]);

	if (strchr(self_exe(), '\'') || strchr(self_exe(), '"'))
		fail("cannot quote %s for the shell", self_exe());
	if (setenv("PATH", "/usr/bin:/bin", 1) < 0 ||
	    setenv("PROBE_EXPECT_TRACED", traced_self() ? "1" : "0", 1) < 0)
		fail("setenv: %s", strerror(errno));
	keep("PROFTRACE_SOCKET", "PROBE_ORIG_SOCKET");
	keep("PROFTRACE_DIR", "PROBE_ORIG_DIR");

	if (unsetenv("LD_PRELOAD") < 0 || unsetenv("PROFTRACE_SOCKET") < 0 ||
	    unsetenv("PROFTRACE_DIR") < 0)
		fail("unsetenv: %s", strerror(errno));
	if (getenv("LD_PRELOAD"))
		fail("unsetenv(LD_PRELOAD) did not remove it");
	env_before = environ;
	round_of_routes("unset");

	if (setenv("LD_PRELOAD", "", 1) < 0)
		fail("setenv: %s", strerror(errno));
	env_before = environ;
	round_of_routes("empty");

	return probe_ok();
}
