/*
 * probe-path-search: PATH search by execvp/execlp/posix_spawnp when PATH
 * starts with entries that do not lead to the program.
 *
 *  1. PATH=/nonexistent:/usr/bin:/bin, execvp("true")        -> exit 0
 *  2. same PATH, execlp("false")                              -> exit 1
 *  3. same PATH, posix_spawnp("true")                          -> exit 0
 *  4. PATH=/nonexistent:/etc/passwd:DIR:/usr/bin:/bin where DIR holds a
 *     non-executable file named "true" (EACCES, search goes on) and
 *     /etc/passwd is not a directory (ENOTDIR), execvp("true") -> exit 0
 *  5. PATH=/nonexistent:DIR, execvp("true") returns -1/EACCES -> child exits 40
 *  6. PATH=/nonexistent:/nonexistent2, execvp("true") returns -1/ENOENT
 *                                                              -> child exits 41
 *  7. PATH=/nonexistent::/bin (empty entry = current directory), cwd = DIR
 *     holding "probe-cwd-cmd", a symlink to /bin/sh:
 *     execvp("probe-cwd-cmd", -c 'exit 43')                    -> exit 43
 *
 * The PATH of the probe itself is set with setenv() before each fork.
 * Processes: 7 children (6 forks + 1 posix_spawn); 1, 2, 3, 4 and 7 exec
 * once (7 with the relative path "probe-cwd-cmd"), 5 and 6 only fail to.
 * (Scripts run through #! are probe-script's subject.)
 * Expected exit status: 0.
 */
#define PROBE_NAME "path-search"
#include "probe.h"

#include <spawn.h>

static char dir[] = "/tmp/probe-path-search-XXXXXX";
static char notexec[PATH_MAX], cwdcmd[PATH_MAX];

static void set_path(const char *path)
{
	if (setenv("PATH", path, 1) < 0)
		fail("setenv PATH: %s", strerror(errno));
}

static void make_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		fail("create %s: %s", path, strerror(errno));
	write_all(fd, content, strlen(content), path);
	if (fchmod(fd, mode) < 0)
		fail("chmod %s: %s", path, strerror(errno));
	close(fd);
}

static void cleanup(void)
{
	unlink(notexec);
	unlink(cwdcmd);
	rmdir(dir);
}

int main(void)
{
	char path[PATH_MAX + 64];
	pid_t pid;
	int rc;

	if (!mkdtemp(dir))
		fail("mkdtemp: %s", strerror(errno));
	snprintf(notexec, sizeof notexec, "%s/true", dir);
	snprintf(cwdcmd, sizeof cwdcmd, "%s/probe-cwd-cmd", dir);
	make_file(notexec, "#!/bin/sh\nexit 99\n", 0644);
	if (symlink("/bin/sh", cwdcmd) < 0)
		fail("symlink %s: %s", cwdcmd, strerror(errno));
	atexit(cleanup);

	/* 1 */
	set_path("/nonexistent:/usr/bin:/bin");
	if ((pid = xfork("execvp true")) == 0) {
		execvp("true", (char *[]){ "true", NULL });
		child_fail("execvp true", errno, 127);
	}
	reap_expect(pid, 0, "execvp true");

	/* 2 */
	if ((pid = xfork("execlp false")) == 0) {
		execlp("false", "false", (char *)NULL);
		child_fail("execlp false", errno, 127);
	}
	reap_expect(pid, 1, "execlp false");

	/* 3 */
	rc = posix_spawnp(&pid, "true", NULL, NULL, (char *[]){ "true", "spawnp", NULL },
			  environ);
	if (rc != 0)
		fail("posix_spawnp true: %s", strerror(rc));
	reap_expect(pid, 0, "posix_spawnp true");

	/* 4 */
	snprintf(path, sizeof path, "/nonexistent:/etc/passwd:%s:/usr/bin:/bin", dir);
	set_path(path);
	if ((pid = xfork("execvp past EACCES")) == 0) {
		execvp("true", (char *[]){ "true", "past-eacces", NULL });
		child_fail("execvp true past EACCES", errno, 127);
	}
	reap_expect(pid, 0, "execvp past a non-executable match");

	/* 5 */
	snprintf(path, sizeof path, "/nonexistent:%s", dir);
	set_path(path);
	if ((pid = xfork("execvp EACCES")) == 0) {
		errno = 0;
		rc = execvp("true", (char *[]){ "true", "eacces", NULL });
		_exit(rc == -1 && errno == EACCES ? 40 : 126);
	}
	reap_expect(pid, 40, "execvp with only a non-executable match (EACCES)");

	/* 6 */
	set_path("/nonexistent:/nonexistent2");
	if ((pid = xfork("execvp ENOENT")) == 0) {
		errno = 0;
		rc = execvp("true", (char *[]){ "true", "enoent", NULL });
		_exit(rc == -1 && errno == ENOENT ? 41 : 126);
	}
	reap_expect(pid, 41, "execvp with no match (ENOENT)");

	/* 7 */
	set_path("/nonexistent::/bin");
	if ((pid = xfork("execvp via empty PATH entry")) == 0) {
		if (chdir(dir) < 0)
			child_fail("chdir", errno, 126);
		execvp("probe-cwd-cmd", (char *[]){ "probe-cwd-cmd", "-c", "exit 43",
						    NULL });
		child_fail("execvp probe-cwd-cmd", errno, 127);
	}
	reap_expect(pid, 43, "execvp through an empty PATH entry");

	set_path("/usr/bin:/bin");
	return probe_ok();
}
