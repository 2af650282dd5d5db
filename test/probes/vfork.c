/*
 * probe-vfork: vfork children, which share the parent's memory until they
 * exec or _exit (the library must not write its globals or allocate there).
 *
 *  1. vfork + execv("/bin/sh", -c 'exit 6')                     -> exit 6
 *  2. vfork + _exit(5), no exec                                 -> exit 5
 *  3. vfork + execv of a missing path: the child stores the return value
 *     and errno in shared memory and _exits(9); the parent checks -1/ENOENT
 *  4. vfork + execve with an empty environment {NULL}: sh -c 'exit 8'
 *  5. vfork + execvp("sh", -c 'exit 4')                         -> exit 4
 *  6. vfork + execle with an environment: sh checks PROBE_VAR   -> exit 3
 * After each: environ is the same pointer with the same content, a
 * global the child did not touch is unchanged, and stdio still works.
 *
 * Processes: 6 vfork children; 1, 4, 5, 6 exec /bin/sh once; 2 and 3 never
 * exec.  Expected exit status: 0.
 */
#define PROBE_NAME "vfork"
#include "probe.h"

static volatile int shared_rc, shared_errno;
static int untouched = 12345;

static void check_after(const char *what, char **env_before, size_t env_n)
{
	size_t n = 0;

	while (environ[n])
		n++;
	if (environ != env_before || n != env_n)
		fail("%s: the parent's environ changed (%zu -> %zu entries)", what,
		     env_n, n);
	if (untouched != 12345)
		fail("%s: a global changed", what);
}

__attribute__((noinline)) static pid_t vfork_execv(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execv("/bin/sh", (char *[]){ "sh", "-c", "exit 6", NULL });
		_exit(127);
	}
	return pid;
}

__attribute__((noinline)) static pid_t vfork_exit(void)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(5);
	return pid;
}

__attribute__((noinline)) static pid_t vfork_exec_fails(void)
{
	pid_t pid;

	shared_rc = 0;
	shared_errno = 0;
	pid = vfork();
	if (pid == 0) {
		int rc = execv("/nonexistent/probe-vfork",
			       (char *[]){ "probe-vfork-missing", NULL });

		shared_errno = errno;
		shared_rc = rc;
		_exit(9);
	}
	return pid;
}

__attribute__((noinline)) static pid_t vfork_empty_env(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execve("/bin/sh", (char *[]){ "sh", "-c", "exit 8", NULL },
		       (char *[]){ NULL });
		_exit(127);
	}
	return pid;
}

__attribute__((noinline)) static pid_t vfork_execvp(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execvp("sh", (char *[]){ "sh", "-c", "exit 4", NULL });
		_exit(127);
	}
	return pid;
}

__attribute__((noinline)) static pid_t vfork_execle(void)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execle("/bin/sh", "sh", "-c", "test \"$PROBE_VAR\" = vfork && exit 3",
		       (char *)NULL, (char *[]){ "PROBE_VAR=vfork", NULL });
		_exit(127);
	}
	return pid;
}

int main(void)
{
	static const struct {
		pid_t (*fn)(void);
		int code;
		const char *what;
	} cases[] = {
		{ vfork_execv, 6, "vfork + execv" },
		{ vfork_exit, 5, "vfork + _exit" },
		{ vfork_exec_fails, 9, "vfork + failing execv" },
		{ vfork_empty_env, 8, "vfork + execve with empty environment" },
		{ vfork_execvp, 4, "vfork + execvp" },
		{ vfork_execle, 3, "vfork + execle" },
	};
	char **env_before;
	size_t i, env_n = 0;

	if (setenv("PATH", "/usr/bin:/bin", 1) < 0)
		fail("setenv: %s", strerror(errno));
	env_before = environ;
	while (environ[env_n])
		env_n++;
	fflush(NULL);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pid_t pid = cases[i].fn();

		if (pid < 0)
			fail("%s: vfork: %s", cases[i].what, strerror(errno));
		reap_expect(pid, cases[i].code, cases[i].what);
		check_after(cases[i].what, env_before, env_n);
		if (cases[i].fn == vfork_exec_fails)
			expect_errno(shared_rc, -1, shared_errno, ENOENT,
				     "execv in a vfork child");
	}
	return probe_ok();
}
