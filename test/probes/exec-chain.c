/*
 * probe-exec-chain: one process that execs itself 30 times in a row (31
 * program images, one pid), with a counter argument:
 *     probe-exec-chain            -> probe-exec-chain chain 1
 *     probe-exec-chain chain N    -> probe-exec-chain chain N+1   (N < 30)
 *     probe-exec-chain chain 30   -> prints the ok line, exits 0
 * The exec function rotates through execv, execve, execvp (a path with a
 * slash: no search), execl, execle, fexecve and execveat, by N % 7.
 * Every image checks that its pid and parent pid are those of the first
 * one (passed in PROBE_CHAIN_PID / PROBE_CHAIN_PPID, so that the argument
 * lists do not depend on the pid) and that its counter is the one the
 * previous image meant to pass (PROBE_CHAIN_NEXT).
 *
 * Processes: 1, with 31 images (30 successful execs).
 * Expected exit status: 0.
 */
#define PROBE_NAME "exec-chain"
#include "probe.h"

#define DEPTH 30

static long env_long(const char *name)
{
	const char *v = getenv(name);

	if (!v)
		fail("%s missing", name);
	return strtol(v, NULL, 10);
}

static void next(int n)
{
	const char *self = self_exe();
	char arg[16], *argv[] = { "probe-exec-chain", "chain", arg, NULL };
	int fd;

	snprintf(arg, sizeof arg, "%d", n);
	if (setenv("PROBE_CHAIN_NEXT", arg, 1) < 0)
		fail("setenv: %s", strerror(errno));
	fflush(NULL);
	switch (n % 7) {
	case 0:
		execv(self, argv);
		break;
	case 1:
		execve(self, argv, environ);
		break;
	case 2:
		execvp(self, argv);
		break;
	case 3:
		execl(self, "probe-exec-chain", "chain", arg, (char *)NULL);
		break;
	case 4:
		execle(self, "probe-exec-chain", "chain", arg, (char *)NULL, environ);
		break;
	case 5:
		fd = open(self, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fail("open %s: %s", self, strerror(errno));
		fexecve(fd, argv, environ);
		break;
	case 6:
		execveat(AT_FDCWD, self, argv, environ, 0);
		break;
	}
	fail("exec #%d (variant %d): %s", n, n % 7, strerror(errno));
}

int main(int argc, char **argv)
{
	char num[32];
	long n;

	if (argc == 1) {
		snprintf(num, sizeof num, "%ld", (long)getpid());
		if (setenv("PROBE_CHAIN_PID", num, 1) < 0)
			fail("setenv: %s", strerror(errno));
		snprintf(num, sizeof num, "%ld", (long)getppid());
		if (setenv("PROBE_CHAIN_PPID", num, 1) < 0)
			fail("setenv: %s", strerror(errno));
		next(1);
	}
	if (argc != 3 || strcmp(argv[1], "chain"))
		fail("usage: %s [chain N]", argv[0]);
	n = strtol(argv[2], NULL, 10);
	if (n < 1 || n > DEPTH)
		fail("counter %s out of range", argv[2]);
	if (n != env_long("PROBE_CHAIN_NEXT"))
		fail("image %ld: expected counter %ld", n, env_long("PROBE_CHAIN_NEXT"));
	if (strcmp(argv[0], "probe-exec-chain"))
		fail("image %ld: argv[0] is %s", n, argv[0]);
	if (getpid() != env_long("PROBE_CHAIN_PID"))
		fail("image %ld: pid %ld, expected %ld", n, (long)getpid(),
		     env_long("PROBE_CHAIN_PID"));
	if (getppid() != env_long("PROBE_CHAIN_PPID"))
		fail("image %ld: ppid %ld, expected %ld", n, (long)getppid(),
		     env_long("PROBE_CHAIN_PPID"));
	if (n < DEPTH)
		next((int)n + 1);
	return probe_ok();
}
