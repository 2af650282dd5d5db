/*
 * probe-odd-args: arguments a recorder must keep byte for byte: newlines,
 * commas, double and single quotes, spaces, tabs, backslashes, a
 * non-UTF-8 sequence (\xff\xfe), an emoji (UTF-8), control characters, an
 * empty argument, leading dashes, shell and printf metacharacters.
 *
 * The child is the probe itself in mode "odd-check", which compares its
 * argv[2..] with the same table, byte for byte, and exits 0 (or 2 and a
 * message naming the first difference).  Routes, each expecting exit 0:
 *  1. fork + execv(self, odd-check ODD...)
 *  2. posix_spawn(self, odd-check ODD...)
 *  3. fork + execvp(self, odd-check ODD...)
 *  4. fork + execv("/bin/sh", sh -c 'exec "$0" odd-check "$@"' SELF ODD...):
 *     the shell passes them on through "$@" and execs in place
 *  5. fork + execv("/bin/echo", echo -E ODD[1]) into a pipe: the output is
 *     the argument and a newline (a second, non-probe reader of argv)
 *
 * Processes: 5 children, each execs once (4 execs twice: sh, then the probe).
 * Expected exit status: 0.
 */
#define PROBE_NAME "odd-args"
#include "probe.h"

#include <spawn.h>

static char *const odd[] = {
	"line1\nline2",
	"a,b,,c,",
	"double\"quote",
	"single'quote",
	"with space",
	"tab\there",
	"back\\slash",
	"\xff\xfe",
	"emoji \xf0\x9f\x98\x80 and \xe2\x82\xac",
	"",
	"-leading-dash",
	"--",
	"-",
	"$HOME $(true) `true`",
	"*?[a]",
	"a=b",
	"%s%n%%",
	"trailing\\",
	"\\\"mixed'\"\\",
	"\r\n",
	" ",
	"\x01\x1b[31m\x7f",
	"\n",
	"'",
	"\"",
	"#not-a-comment",
	"",
};

#define NODD (sizeof odd / sizeof odd[0])

static void show(FILE *f, const char *s)
{
	for (; *s; s++)
		fprintf(f, (unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f ?
			"\\x%02x" : "%c", (unsigned char)*s);
}

static int check(int argc, char **argv)
{
	size_t i;

	if ((size_t)argc != NODD + 2) {
		fprintf(stderr, PROBE_PREFIX "FAIL: odd-check: argc %d, expected %zu\n",
			argc, NODD + 2);
		return 2;
	}
	for (i = 0; i < NODD; i++)
		if (strcmp(argv[i + 2], odd[i])) {
			fprintf(stderr, PROBE_PREFIX "FAIL: odd-check: argument %zu is \"", i);
			show(stderr, argv[i + 2]);
			fprintf(stderr, "\", expected \"");
			show(stderr, odd[i]);
			fprintf(stderr, "\"\n");
			return 2;
		}
	return 0;
}

int main(int argc, char **argv)
{
	char *args[NODD + 6], buf[256];
	const char *self = self_exe();
	size_t i;
	pid_t pid;
	int rc, p[2];

	if (argc >= 2 && !strcmp(argv[1], "odd-check"))
		return check(argc, argv);
	if (argc != 1)
		fail("usage: %s", argv[0]);

	args[0] = "probe-odd-args";
	args[1] = "odd-check";
	for (i = 0; i < NODD; i++)
		args[i + 2] = odd[i];
	args[NODD + 2] = NULL;

	/* 1 */
	if ((pid = xfork("execv")) == 0) {
		execv(self, args);
		child_fail("execv", errno, 127);
	}
	reap_expect(pid, 0, "fork + execv");

	/* 2 */
	rc = posix_spawn(&pid, self, NULL, NULL, args, environ);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawn");

	/* 3 */
	if ((pid = xfork("execvp")) == 0) {
		execvp(self, args);
		child_fail("execvp", errno, 127);
	}
	reap_expect(pid, 0, "fork + execvp");

	/* 4 */
	if ((pid = xfork("sh")) == 0) {
		char *sh[NODD + 6];

		sh[0] = "sh";
		sh[1] = "-c";
		sh[2] = "exec \"$0\" odd-check \"$@\"";
		sh[3] = (char *)self;
		for (i = 0; i < NODD; i++)
			sh[i + 4] = odd[i];
		sh[NODD + 4] = NULL;
		execv("/bin/sh", sh);
		child_fail("execv /bin/sh", errno, 127);
	}
	reap_expect(pid, 0, "through sh \"$@\"");

	/* 5 */
	xpipe(p);
	if ((pid = xfork("echo")) == 0) {
		if (dup2(p[1], 1) < 0)
			child_fail("dup2", errno, 126);
		execv("/bin/echo", (char *[]){ "echo", "-E", odd[0], NULL });
		child_fail("execv /bin/echo", errno, 127);
	}
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "echo");
	close(p[0]);
	reap_expect(pid, 0, "/bin/echo");
	expect_str(buf, "line1\nline2\n", "/bin/echo output");

	return probe_ok();
}
