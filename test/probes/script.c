/*
 * probe-script: programs that are #! scripts, which the kernel runs by
 * executing their interpreter: the argv the new image sees is not the one
 * execve was given (argv[0] is replaced by the interpreter, its optional
 * argument and the script's path).  strace shows the execve as called.
 *
 * Scripts, written to a temporary directory DIR:
 *   s1:  #!/bin/sh, exits 31 if $1 is "a b" (else 1)
 *   s2:  #!/bin/sh -e  (an interpreter argument): "(exit 32)" ends the
 *        shell with 32 because of -e (without it: exit 1)
 *   s3i: #!/bin/sh, exits 33 if $1 ends in /s3 (else 1)
 *   s3:  #!DIR/s3i  (the interpreter is itself a script)
 *   probe-script-s4: #!/bin/sh, exit 34; found through PATH=DIR:...
 *   s5:  #!/usr/bin/env sh, exit 35  (env then searches PATH for sh)
 *
 *  1. fork + execv(s1, {"s1-argv0", "a b"})                   -> exit 31
 *  2. fork + execv(s2, {"s2"})                                -> exit 32
 *  3. fork + execv(s3, {"s3"})                                -> exit 33
 *  4. fork + execvp("probe-script-s4")                        -> exit 34
 *  5. fork + execv(s5, {"s5"})                                -> exit 35
 *  6. posix_spawn(s1, {"s1", "a b"})                          -> exit 31
 *  7. system("DIR/s1 'a b'"): sh vforks and execs s1          -> exit 31
 *
 * Processes: 7 children, each execs once (one execve, whatever the
 * interpreter chain), except 5 (env then execs sh) and 7 (sh, which vforks
 * a child that execs s1); the shell of 2 forks a subshell for (exit 32).
 * Expected exit status: 0.
 */
#define PROBE_NAME "script"
#include "probe.h"

#include <spawn.h>

static char dir[] = "/tmp/probe-script-XXXXXX";
static const char *const names[] = { "s1", "s2", "s3i", "s3", "probe-script-s4", "s5" };

static const char *in_dir(const char *name)
{
	static char buf[8][PATH_MAX];
	static int next;
	char *b = buf[next++ % 8];

	snprintf(b, PATH_MAX, "%s/%s", dir, name);
	return b;
}

static void cleanup(void)
{
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(in_dir(names[i]));
	rmdir(dir);
}

static void make_script(const char *name, const char *content)
{
	const char *path = in_dir(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);

	if (fd < 0)
		fail("create %s: %s", path, strerror(errno));
	write_all(fd, content, strlen(content), path);
	close(fd);
}

int main(void)
{
	char buf[PATH_MAX + 64];
	pid_t pid;
	int rc;

	if (!mkdtemp(dir))
		fail("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	make_script("s1", "#!/bin/sh\n[ \"$1\" = 'a b' ] && exit 31\nexit 1\n");
	make_script("s2", "#!/bin/sh -e\n(exit 32)\nexit 1\n");
	make_script("s3i", "#!/bin/sh\ncase \"$1\" in */s3) exit 33;; esac\nexit 1\n");
	snprintf(buf, sizeof buf, "#!%s\n", in_dir("s3i"));
	make_script("s3", buf);
	make_script("probe-script-s4", "#!/bin/sh\nexit 34\n");
	make_script("s5", "#!/usr/bin/env sh\nexit 35\n");
	snprintf(buf, sizeof buf, "%s:/usr/bin:/bin", dir);
	if (setenv("PATH", buf, 1) < 0)
		fail("setenv: %s", strerror(errno));

	run_expect(in_dir("s1"), (char *[]){ "s1-argv0", "a b", NULL }, 31, "#!/bin/sh script");
	run_expect(in_dir("s2"), (char *[]){ "s2", NULL }, 32, "#!/bin/sh -e script");
	run_expect(in_dir("s3"), (char *[]){ "s3", NULL }, 33,
		   "script whose interpreter is a script");

	if ((pid = xfork("execvp script")) == 0) {
		execvp("probe-script-s4", (char *[]){ "probe-script-s4", NULL });
		child_fail("execvp probe-script-s4", errno, 127);
	}
	reap_expect(pid, 34, "script found through PATH");

	run_expect(in_dir("s5"), (char *[]){ "s5", NULL }, 35, "#!/usr/bin/env sh script");

	rc = posix_spawn(&pid, in_dir("s1"), NULL, NULL,
			 (char *[]){ "s1", "a b", NULL }, environ);
	if (rc != 0)
		fail("posix_spawn: %s", strerror(rc));
	reap_expect(pid, 31, "posix_spawn of a script");

	snprintf(buf, sizeof buf, "'%s' 'a b'", in_dir("s1"));
	expect_exit(system(buf), 31, "system() of a script");

	return probe_ok();
}
