/*
 * probe-exec-fail: exec calls that fail, made by the probe itself (not in
 * a child), each of which must return -1 with exactly the errno the kernel
 * or libc gives, leaving the program running; then a successful exec.
 *
 *   execve("/nonexistent/probe-exec-fail")          -> ENOENT
 *   execv(FILE mode 0644)                           -> EACCES
 *   execvp("probe-exec-fail-no-such-command")       -> ENOENT
 *   execve("/")  (a directory)                      -> EACCES
 *   execve("/etc/passwd/x")                         -> ENOTDIR
 *   execve(a 5000-byte path)                        -> ENAMETOOLONG
 *   execve(SCRIPT mode 0755 without #!, not ELF)    -> ENOEXEC
 *   execv(/bin/true, one 200 KiB argument)          -> E2BIG
 *   execl("/nonexistent/x", ...)                    -> ENOENT
 *   execle("/nonexistent/x", ..., envp)             -> ENOENT
 *   execlp("probe-exec-fail-no-such-command")       -> ENOENT
 *   execvpe("probe-exec-fail-no-such-command")      -> ENOENT
 *   fexecve(-1) (glibc checks)                      -> EINVAL
 *   fexecve(a closed fd)                            -> EBADF
 *   fexecve(fd of FILE, mode 0644)                  -> EACCES
 *   execveat(-1, "relative")                        -> EBADF
 *   execveat(AT_FDCWD, "/nonexistent/x")            -> ENOENT
 *   execveat(AT_FDCWD, "/bin/true", flags 0x40000)  -> EINVAL
 *   execveat(AT_FDCWD, NULL), execve(NULL)          -> EFAULT
 * Between them, fork children show what glibc adds on top of the kernel:
 *   fork + execvp(SCRIPT): ENOEXEC, so glibc runs /bin/sh SCRIPT; the
 *     script says exit 21                           -> child exits 21
 *   fork + execlp(SCRIPT) the same                  -> child exits 21
 * After all failures: the number of open fds is unchanged and a pipe still
 * works.  Finally the probe execs itself in mode "after", which checks its
 * arguments, prints the ok line and exits 0: the exit status of the whole
 * probe.
 *
 * Processes: the probe (2 images: the last exec succeeds) and 2 fork
 * children that exec (the failing exec of SCRIPT, then /bin/sh).
 * Expected exit status: 0.
 */
#define PROBE_NAME "exec-fail"
#include "probe.h"

#define MISSING_CMD "probe-exec-fail-no-such-command"

static char file[] = "/tmp/probe-exec-fail-XXXXXX";
static char script[] = "/tmp/probe-exec-fail-script-XXXXXX";

static void cleanup(void)
{
	unlink(file);
	unlink(script);
}

static void make_temp(char *tmpl, const char *content, mode_t mode)
{
	int fd = mkstemp(tmpl);

	if (fd < 0)
		fail("mkstemp: %s", strerror(errno));
	write_all(fd, content, strlen(content), tmpl);
	if (fchmod(fd, mode) < 0)
		fail("chmod %s: %s", tmpl, strerror(errno));
	close(fd);
}

#define EXPECT(call, err, what)                                        \
	do {                                                           \
		int r_;                                                \
		errno = EDOM;                                          \
		r_ = (call);                                           \
		expect_errno(r_, -1, errno, err, what);                \
	} while (0)

int main(int argc, char **argv)
{
	char *argv_fail[] = { "probe-exec-fail-failing", "arg", NULL };
	/* hidden from the compiler, which knows the names nonnull */
	const char *volatile null_name = NULL;
	char *envp[] = { "PROBE_VAR=1", NULL };
	char *longpath, *bigarg, buf[64];
	int fds_before, fd, p[2];
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "after"))
		return strcmp(argv[2], "x y") ? 2 : probe_ok();
	if (argc != 1)
		fail("usage: %s", argv[0]);
	if (setenv("PATH", "/usr/bin:/bin", 1) < 0)
		fail("setenv: %s", strerror(errno));
	make_temp(file, "#!/bin/sh\nexit 0\n", 0644);
	make_temp(script, "exit 21\n", 0755);
	atexit(cleanup);
	fds_before = count_fds();

	EXPECT(execve("/nonexistent/probe-exec-fail", argv_fail, environ), ENOENT,
	       "execve of a missing path");
	EXPECT(execv(file, argv_fail), EACCES, "execv of a non-executable file");
	EXPECT(execvp(MISSING_CMD, argv_fail), ENOENT, "execvp of a missing name");
	EXPECT(execve("/", argv_fail, environ), EACCES, "execve of a directory");
	EXPECT(execve("/etc/passwd/x", argv_fail, environ), ENOTDIR,
	       "execve through a non-directory");

	longpath = malloc(5001);
	if (!longpath)
		fail("malloc");
	memset(longpath, 'a', 5000);
	longpath[0] = '/';
	longpath[5000] = '\0';
	EXPECT(execve(longpath, argv_fail, environ), ENAMETOOLONG,
	       "execve of a 5000-byte path");
	free(longpath);

	EXPECT(execve(script, argv_fail, environ), ENOEXEC,
	       "execve of a script without #!");

	bigarg = malloc(200 * 1024 + 1);
	if (!bigarg)
		fail("malloc");
	memset(bigarg, 'b', 200 * 1024);
	bigarg[200 * 1024] = '\0';
	EXPECT(execv("/bin/true", (char *[]){ "true", bigarg, NULL }), E2BIG,
	       "execv with a 200 KiB argument");
	free(bigarg);

	EXPECT(execl("/nonexistent/x", "x", "arg", (char *)NULL), ENOENT,
	       "execl of a missing path");
	EXPECT(execle("/nonexistent/x", "x", "arg", (char *)NULL, envp), ENOENT,
	       "execle of a missing path");
	EXPECT(execlp(MISSING_CMD, MISSING_CMD, (char *)NULL), ENOENT,
	       "execlp of a missing name");
	EXPECT(execvpe(MISSING_CMD, argv_fail, envp), ENOENT,
	       "execvpe of a missing name");
	EXPECT(fexecve(-1, argv_fail, environ), EINVAL, "fexecve(-1)");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || close(fd) < 0)
		fail("open /dev/null: %s", strerror(errno));
	EXPECT(fexecve(fd, argv_fail, environ), EBADF, "fexecve of a closed fd");
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail("open %s: %s", file, strerror(errno));
	EXPECT(fexecve(fd, argv_fail, environ), EACCES,
	       "fexecve of a non-executable file");
	close(fd);
	EXPECT(execveat(-1, "relative", argv_fail, environ, 0), EBADF,
	       "execveat(-1, relative)");
	EXPECT(execveat(AT_FDCWD, "/nonexistent/x", argv_fail, environ, 0), ENOENT,
	       "execveat of a missing path");
	EXPECT(execveat(AT_FDCWD, "/bin/true", argv_fail, environ, 0x40000), EINVAL,
	       "execveat with bad flags");
	/* glibc declares the names nonnull; the kernel answers EFAULT */
	EXPECT(execveat(AT_FDCWD, null_name, argv_fail, environ, 0), EFAULT,
	       "execveat of a NULL name");
	EXPECT(execve(null_name, argv_fail, environ), EFAULT,
	       "execve of a NULL name");

	if ((pid = xfork("execvp script")) == 0) {
		execvp(script, (char *[]){ "probe-script", NULL });
		child_fail("execvp script", errno, 127);
	}
	reap_expect(pid, 21, "execvp of a script without #! (glibc runs sh)");
	if ((pid = xfork("execlp script")) == 0) {
		execlp(script, "probe-script", (char *)NULL);
		child_fail("execlp script", errno, 127);
	}
	reap_expect(pid, 21, "execlp of a script without #! (glibc runs sh)");

	if (count_fds() != fds_before)
		fail("open fds: %d before the failed execs, %d after", fds_before,
		     count_fds());
	xpipe(p);
	write_all(p[1], "still here", 10, "pipe");
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "pipe");
	close(p[0]);
	expect_str(buf, "still here", "pipe after failed execs");

	cleanup();
	fflush(NULL);
	execv(self_exe(), (char *[]){ "probe-exec-fail", "after", "x y", NULL });
	fail("final execv: %s", strerror(errno));
}
