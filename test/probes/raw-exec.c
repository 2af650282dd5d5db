/*
 * probe-raw-exec: execs no exec hook of the library is called for by
 * name.  The library takes its variables out of the program's
 * environment at load, so an exec that passes `environ` on without going
 * through a hooked function would start the new image without the
 * library, and nothing below it would be recorded.
 *
 *  1. fork; the child calls syscall(SYS_execve, "/bin/sh", argv,
 *     environ), the shell runs /bin/true and `sh -c 'exit 2'`  -> exit 3
 *  2. fork; the child opens /bin/sh (O_PATH) and calls
 *     syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH),
 *     the same shell                                            -> exit 4
 *  3. syscall(SYS_execve) of a program that does not exist: -1, ENOENT,
 *     as untraced
 *  4. wordexp("$(/bin/echo hi) there"): glibc runs /bin/sh itself,
 *     which runs /bin/echo; the words are "hi", "there"
 *
 * Processes: 3 children (two forks that exec /bin/sh, wordexp's shell),
 * each shell's two children.
 * Expected exit status: 0.
 */
#define PROBE_NAME "raw-exec"
#include "probe.h"

#include <sys/syscall.h>
#include <wordexp.h>

static char *const shell_argv[] = {
	"sh", "-c", "/bin/true; /bin/sh -c 'exit 2'; exit $0", NULL, NULL
};

static void raw_execve(const char *code)
{
	char *argv[] = { shell_argv[0], shell_argv[1], shell_argv[2],
			 (char *)code, NULL };
	pid_t pid = xfork("raw execve");

	/* argv[3] is $0 of the -c script: its exit status */
	if (pid == 0) {
		syscall(SYS_execve, "/bin/sh", argv, environ);
		child_fail("syscall(SYS_execve)", errno, 127);
	}
	reap_expect(pid, atoi(code), "raw execve");
}

static void raw_execveat(const char *code)
{
	char *argv[] = { shell_argv[0], shell_argv[1], shell_argv[2],
			 (char *)code, NULL };
	pid_t pid = xfork("raw execveat");

	if (pid == 0) {
		int fd = open("/bin/sh", O_PATH | O_CLOEXEC);

		if (fd < 0)
			child_fail("open /bin/sh", errno, 126);
		syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
		child_fail("syscall(SYS_execveat)", errno, 127);
	}
	reap_expect(pid, atoi(code), "raw execveat");
}

int main(void)
{
	char *argv[] = { "nothing", NULL };
	wordexp_t w;
	long r;
	int err;

	raw_execve("3");
	raw_execveat("4");

	errno = 0;
	r = syscall(SYS_execve, "/nonexistent/probe-raw-exec", argv, environ);
	err = errno;
	if (r != -1 || err != ENOENT)
		fail("syscall(SYS_execve) of a missing file: %ld, %s", r,
		     strerror(err));

	if ((err = wordexp("$(/bin/echo hi) there", &w, 0)) != 0)
		fail("wordexp: error %d", err);
	if (w.we_wordc != 2 || strcmp(w.we_wordv[0], "hi") ||
	    strcmp(w.we_wordv[1], "there"))
		fail("wordexp: %zu words, first '%s'", w.we_wordc,
		     w.we_wordc ? w.we_wordv[0] : "");
	wordfree(&w);
	return probe_ok();
}
