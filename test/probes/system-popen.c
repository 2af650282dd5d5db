/*
 * probe-system-popen: system() and popen()/pclose(), which glibc runs
 * through /bin/sh -c by an internal posix_spawn.
 *
 *  1. system("exit 7")                        -> WIFEXITED, WEXITSTATUS 7
 *  2. system(NULL)                            -> nonzero (a shell exists;
 *     glibc finds out by running "exit 0")
 *  3. system("kill -TERM $$")                 -> WIFSIGNALED, SIGTERM
 *  4. system("echo system-out > FILE")        -> 0, FILE holds "system-out\n"
 *  5. popen("printf 'a\\nb\\n'", "r")         -> reads "a\nb\n", pclose 0
 *  6. popen("exit 3", "r")                    -> reads "", pclose: exit 3
 *  7. popen("cat > FILE", "w"), writes        -> pclose 0, FILE holds it
 *  8. popen("echo cloexec", "re")             -> reads "cloexec\n", pclose 0
 *  9. popen("true", "x")                      -> NULL with errno EINVAL, no
 *     process started
 * Also: the probe's environment (environ and PATH) is the same afterwards.
 *
 * Processes: 8 /bin/sh children (system x3 + system(NULL), popen x4), each
 * an exec; only 7's shell starts another process (it vforks and execs cat).
 * 3's shell dies by SIGTERM.  Expected exit status: 0.
 */
#define PROBE_NAME "system-popen"
#include "probe.h"

static char file[] = "/tmp/probe-system-popen-XXXXXX";

static void cleanup(void)
{
	unlink(file);
}

static const char *popen_read(const char *cmd, const char *mode, char *buf,
			      size_t cap, int *status)
{
	FILE *f = popen(cmd, mode);
	size_t n;

	if (!f)
		fail("popen(\"%s\", \"%s\"): %s", cmd, mode, strerror(errno));
	n = fread(buf, 1, cap - 1, f);
	if (ferror(f))
		fail("popen(\"%s\"): read error", cmd);
	buf[n] = '\0';
	*status = pclose(f);
	if (*status == -1)
		fail("pclose(\"%s\"): %s", cmd, strerror(errno));
	return buf;
}

int main(void)
{
	char **env_before = environ;
	char cmd[PATH_MAX + 64], buf[256];
	const char *path_before = getenv("PATH");
	FILE *f;
	int st, fd;

	fd = mkstemp(file);
	if (fd < 0)
		fail("mkstemp: %s", strerror(errno));
	close(fd);
	atexit(cleanup);

	/* 1 */
	st = system("exit 7");
	expect_exit(st, 7, "system(\"exit 7\")");

	/* 2 */
	st = system(NULL);
	if (st == 0)
		fail("system(NULL) returned 0: no shell?");

	/* 3 */
	st = system("kill -TERM $$");
	expect_signal(st, SIGTERM, "system(\"kill -TERM $$\")");

	/* 4 */
	snprintf(cmd, sizeof cmd, "echo system-out > '%s'", file);
	st = system(cmd);
	expect_exit(st, 0, "system(echo > file)");
	read_file(file, buf, sizeof buf);
	expect_str(buf, "system-out\n", "system(echo > file): content");

	/* 5 */
	popen_read("printf 'a\\nb\\n'", "r", buf, sizeof buf, &st);
	expect_exit(st, 0, "popen printf: pclose");
	expect_str(buf, "a\nb\n", "popen printf: output");

	/* 6 */
	popen_read("exit 3", "r", buf, sizeof buf, &st);
	expect_exit(st, 3, "popen(\"exit 3\"): pclose");
	expect_str(buf, "", "popen(\"exit 3\"): output");

	/* 7 */
	snprintf(cmd, sizeof cmd, "cat > '%s'", file);
	f = popen(cmd, "w");
	if (!f)
		fail("popen(cat, w): %s", strerror(errno));
	if (fputs("popen-write\nline 2\n", f) < 0)
		fail("popen(cat, w): fputs failed");
	st = pclose(f);
	expect_exit(st, 0, "popen(cat, w): pclose");
	read_file(file, buf, sizeof buf);
	expect_str(buf, "popen-write\nline 2\n", "popen(cat, w): content");

	/* 8 */
	popen_read("echo cloexec", "re", buf, sizeof buf, &st);
	expect_exit(st, 0, "popen re: pclose");
	expect_str(buf, "cloexec\n", "popen re: output");

	/* 9 */
	errno = 0;
	f = popen("true", "x");
	expect_errno(f == NULL ? -1 : 0, -1, errno, EINVAL, "popen(\"true\", \"x\")");

	if (environ != env_before)
		fail("environ was replaced by system/popen");
	if (path_before && (!getenv("PATH") || strcmp(getenv("PATH"), path_before)))
		fail("PATH changed by system/popen");
	return probe_ok();
}
