/*
 * probe-big-args: argument lists of 1 MiB: 256 arguments of 4 KiB each
 * (4095 bytes + NUL), argument i, byte j = 'A' + (7 * i + j) % 26, so that
 * every argument differs and a shifted, cut or swapped one is detected.
 *
 *  1. fork + execv(self, bigargs-check ARGS...)      -> exit 0
 *  2. fork + execv("/bin/true", ARGS...)             -> exit 0
 *  3. posix_spawn(self, bigargs-check ARGS...)       -> exit 0
 *  4. vfork + execv(self, bigargs-check ARGS...)     -> exit 0
 * Mode bigargs-check (argv: probe-big-args bigargs-check ARGS...) checks
 * argc and every byte, exits 0, or 2 + a message naming the first
 * difference.
 *
 * Processes: 4 children, each execs once.  Expected exit status: 0.
 */
#define PROBE_NAME "big-args"
#include "probe.h"

#include <spawn.h>

#define NARGS 256
#define ARGLEN 4095

static char *make_arg(int i)
{
	char *a = malloc(ARGLEN + 1);
	int j;

	if (!a)
		fail("malloc");
	for (j = 0; j < ARGLEN; j++)
		a[j] = (char)('A' + (7 * i + j) % 26);
	a[ARGLEN] = '\0';
	return a;
}

static int check(int argc, char **argv)
{
	int i, j;

	if (argc != NARGS + 2) {
		fprintf(stderr, PROBE_PREFIX "FAIL: bigargs-check: argc %d, expected %d\n",
			argc, NARGS + 2);
		return 2;
	}
	for (i = 0; i < NARGS; i++) {
		const char *a = argv[i + 2];

		for (j = 0; j < ARGLEN; j++)
			if (a[j] != (char)('A' + (7 * i + j) % 26))
				break;
		if (j < ARGLEN || a[j] != '\0') {
			fprintf(stderr, PROBE_PREFIX "FAIL: bigargs-check: argument %d "
				"differs at byte %d (length %zu)\n", i, j, strlen(a));
			return 2;
		}
	}
	return 0;
}

__attribute__((noinline)) static pid_t vfork_exec(const char *self, char **argv)
{
	pid_t pid = vfork();

	if (pid == 0) {
		execv(self, argv);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	static char *args[NARGS + 3];
	const char *self = self_exe();
	pid_t pid;
	int i, rc;

	if (argc >= 2 && !strcmp(argv[1], "bigargs-check"))
		return check(argc, argv);
	if (argc != 1)
		fail("usage: %s", argv[0]);

	args[0] = "probe-big-args";
	args[1] = "bigargs-check";
	for (i = 0; i < NARGS; i++)
		args[i + 2] = make_arg(i);
	args[NARGS + 2] = NULL;

	if ((pid = xfork("execv self")) == 0) {
		execv(self, args);
		child_fail("execv self", errno, 127);
	}
	reap_expect(pid, 0, "fork + execv self with 1 MiB of arguments");

	if ((pid = xfork("execv true")) == 0) {
		args[1] = "true";
		execv("/bin/true", args + 1);
		child_fail("execv /bin/true", errno, 127);
	}
	reap_expect(pid, 0, "fork + execv /bin/true with 1 MiB of arguments");

	rc = posix_spawn(&pid, self, NULL, NULL, args, environ);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawn self with 1 MiB of arguments");

	fflush(NULL);
	pid = vfork_exec(self, args);
	if (pid < 0)
		fail("vfork: %s", strerror(errno));
	reap_expect(pid, 0, "vfork + execv self with 1 MiB of arguments");

	return probe_ok();
}
