/*
 * probe-empty-env: children started with an empty environment, which a
 * tracer must repair (put LD_PRELOAD and PROFTRACE_* back) to keep
 * following them.  The probe sets PROBE_LEAK=1 in its own environment,
 * which none of these children may see.
 *
 * The probe itself in mode "check-empty T" is the usual child: it checks
 * that every variable it has is LD_PRELOAD or PROFTRACE_* (what a tracer
 * puts back: nothing else may appear) and that it is traced (libproftrace
 * mapped) exactly when T is "1".  The child has no inherited variable to
 * learn that from, so the parent passes T as an argument.
 *
 *  1. fork + execve(self, check-empty T, (char *[]){ NULL })     -> exit 0
 *  2. fork + execve(self, check-empty T, NULL) (Linux: NULL envp = empty)
 *                                                                 -> exit 0
 *  3. fork + execle(self, ..., (char *[]){ NULL })                -> exit 0
 *  4. posix_spawn(self, check-empty T) with an empty environment -> exit 0
 *  5. fork + execve("/usr/bin/env", {"env"}, {NULL}) into a pipe: every line
 *     it prints is LD_PRELOAD=... or PROFTRACE_...=...           -> exit 0
 *  6. fork + execv("/usr/bin/env", env -i /bin/sh -c 'exit 4')   -> exit 4
 *  7. fork + execv("/usr/bin/env", env -i SELF check-empty T)    -> exit 0
 *
 * T is "1" when the probe itself is traced, else "0", so the argument lists
 * are the same for every run under a tracer.
 * Processes: 7 children, each execs once; 6's and 7's env exec again.
 * Expected exit status: 0.
 */
#define PROBE_NAME "empty-env"
#include "probe.h"

#include <spawn.h>

static int allowed(const char *entry)
{
	return !strncmp(entry, "LD_PRELOAD=", 11) || !strncmp(entry, "PROFTRACE_", 10);
}

/* Mode check-empty: see the top comment.  Exit 0, or 2..4 with a message. */
static int check_empty(const char *expect_traced)
{
	char **e;

	for (e = environ; e && *e; e++)
		if (!allowed(*e)) {
			fprintf(stderr, PROBE_PREFIX "FAIL: check-empty: got %s\n", *e);
			return 2;
		}
	if (traced_self() != (expect_traced[0] == '1')) {
		fprintf(stderr, PROBE_PREFIX "FAIL: check-empty: traced %d, expected %s\n",
			traced_self(), expect_traced);
		return 3;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *const empty[] = { NULL };
	char buf[65536], *line, *save;
	const char *self, *traced;
	int p[2], rc;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "check-empty"))
		return check_empty(argv[2]);
	if (argc != 1)
		fail("usage: %s", argv[0]);

	self = self_exe();
	traced = traced_self() ? "1" : "0";
	if (setenv("PROBE_LEAK", "1", 1) < 0)
		fail("setenv: %s", strerror(errno));

	/* 1 */
	if ((pid = xfork("execve empty")) == 0) {
		execve(self, (char *[]){ "probe-empty-env", "check-empty",
					 (char *)traced, NULL }, empty);
		child_fail("execve", errno, 127);
	}
	reap_expect(pid, 0, "execve with {NULL}");

	/* 2 */
	if ((pid = xfork("execve NULL")) == 0) {
		char *const *none = NULL;

		__asm__("" : "+r"(none));       /* execve's envp may be NULL */
		execve(self, (char *[]){ "probe-empty-env", "check-empty",
					 (char *)traced, NULL }, none);
		child_fail("execve", errno, 127);
	}
	reap_expect(pid, 0, "execve with NULL envp");

	/* 3 */
	if ((pid = xfork("execle empty")) == 0) {
		execle(self, "probe-empty-env", "check-empty", traced, (char *)NULL,
		       empty);
		child_fail("execle", errno, 127);
	}
	reap_expect(pid, 0, "execle with {NULL}");

	/* 4 */
	rc = posix_spawn(&pid, self, NULL, NULL,
			 (char *[]){ "probe-empty-env", "check-empty",
				     (char *)traced, NULL }, empty);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawn with {NULL}");

	/* 5 */
	xpipe(p);
	if ((pid = xfork("env")) == 0) {
		if (dup2(p[1], 1) < 0)
			child_fail("dup2", errno, 126);
		execve("/usr/bin/env", (char *[]){ "env", NULL }, empty);
		child_fail("execve /usr/bin/env", errno, 127);
	}
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "env output");
	close(p[0]);
	reap_expect(pid, 0, "/usr/bin/env with {NULL}");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!allowed(line))
			fail("/usr/bin/env with {NULL} printed %s", line);

	/* 6 */
	if ((pid = xfork("env -i sh")) == 0) {
		execv("/usr/bin/env", (char *[]){ "env", "-i", "/bin/sh", "-c",
						  "exit 4", NULL });
		child_fail("execv /usr/bin/env", errno, 127);
	}
	reap_expect(pid, 4, "env -i /bin/sh -c 'exit 4'");

	/* 7 */
	if ((pid = xfork("env -i self")) == 0) {
		execv("/usr/bin/env", (char *[]){ "env", "-i", (char *)self,
						  "check-empty", (char *)traced, NULL });
		child_fail("execv /usr/bin/env", errno, 127);
	}
	reap_expect(pid, 0, "env -i SELF check-empty");

	return probe_ok();
}
