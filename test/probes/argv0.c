/*
 * probe-argv0: argv[0] that is not the path that was executed.  A recorder
 * must keep the path and argv[0] apart.
 *
 *  1. execv("/bin/sh", {"my-custom-name", "-c", "exit 0"})             -> 0
 *  2. execv("/bin/sh", {"my-custom-name", "-c",
 *           "[ \"$0\" = my-custom-name ]"}) (dash's $0 is argv[0])      -> 0
 *  3. execv(self, {"custom-self-name", "argv0-check", "custom-self-name"})
 *     the probe in mode argv0-check compares argv[0] with argv[2]      -> 0
 *  4. execv(self, {"", "argv0-check", ""})   (empty argv[0])           -> 0
 *  5. execv("/bin/true", {"/bin/false"})     (argv[0] names another
 *     program; true ignores it)                                        -> 0
 *  6. execv("/proc/self/exe", {"via-proc-self-exe", "argv0-check",
 *           "via-proc-self-exe"})                                      -> 0
 *  7. execv(LINK, {"probe-link-name", "argv0-check", "probe-link-name"})
 *     where LINK is a symlink to the probe in a temporary directory    -> 0
 *  8. posix_spawn("/bin/sh", {"spawned-custom-name", "-c",
 *           "[ \"$0\" = spawned-custom-name ] && exit 3"})             -> 3
 *  9. execvp("sh", {"other-name", "-c", "exit 4"})                     -> 4
 * 10. execv("/bin/true", {NULL})             (an empty argv: recorded
 *     as [], not as the path)                                          -> 0
 *
 * Processes: 10 children (9 forks, 1 posix_spawn), each execs once.
 * Expected exit status: 0.
 */
#define PROBE_NAME "argv0"
#include "probe.h"

#include <spawn.h>

static char dir[] = "/tmp/probe-argv0-XXXXXX";
static char link_path[PATH_MAX];

static void cleanup(void)
{
	unlink(link_path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const char *self = self_exe();
	pid_t pid;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "argv0-check")) {
		if (strcmp(argv[0], argv[2])) {
			fprintf(stderr, PROBE_PREFIX "FAIL: argv[0] is \"%s\", expected \"%s\"\n",
				argv[0], argv[2]);
			return 2;
		}
		return 0;
	}
	if (argc != 1)
		fail("usage: %s", argv[0]);
	if (setenv("PATH", "/usr/bin:/bin", 1) < 0)
		fail("setenv: %s", strerror(errno));
	if (!mkdtemp(dir))
		fail("mkdtemp: %s", strerror(errno));
	snprintf(link_path, sizeof link_path, "%s/probe-link", dir);
	if (symlink(self, link_path) < 0)
		fail("symlink: %s", strerror(errno));
	atexit(cleanup);

	run_expect("/bin/sh", (char *[]){ "my-custom-name", "-c", "exit 0", NULL }, 0,
	    "sh with argv[0] my-custom-name");
	run_expect("/bin/sh", (char *[]){ "my-custom-name", "-c",
				   "[ \"$0\" = my-custom-name ]", NULL }, 0,
	    "sh checking its $0");
	run_expect(self, (char *[]){ "custom-self-name", "argv0-check", "custom-self-name",
			      NULL }, 0, "self with a custom argv[0]");
	run_expect(self, (char *[]){ "", "argv0-check", "", NULL }, 0,
	    "self with an empty argv[0]");
	run_expect("/bin/true", (char *[]){ "/bin/false", NULL }, 0,
	    "/bin/true with argv[0] /bin/false");
	run_expect("/proc/self/exe", (char *[]){ "via-proc-self-exe", "argv0-check",
					  "via-proc-self-exe", NULL }, 0,
	    "/proc/self/exe");
	run_expect(link_path, (char *[]){ "probe-link-name", "argv0-check",
				   "probe-link-name", NULL }, 0, "through a symlink");

	rc = posix_spawn(&pid, "/bin/sh", NULL, NULL,
			 (char *[]){ "spawned-custom-name", "-c",
				     "[ \"$0\" = spawned-custom-name ] && exit 3", NULL },
			 environ);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 3, "posix_spawn with argv[0] spawned-custom-name");

	if ((pid = xfork("execvp")) == 0) {
		execvp("sh", (char *[]){ "other-name", "-c", "exit 4", NULL });
		child_fail("execvp sh", errno, 127);
	}
	reap_expect(pid, 4, "execvp(\"sh\") with argv[0] other-name");
	run_expect("/bin/true", (char *[]){ NULL }, 0, "/bin/true with an empty argv");

	return probe_ok();
}
