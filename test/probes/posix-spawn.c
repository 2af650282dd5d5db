/*
 * probe-posix-spawn: posix_spawn and posix_spawnp with file actions and
 * attributes, checking that every action and attribute still takes effect.
 *
 *  1. addopen(1, FILE, O_WRONLY|O_TRUNC): /bin/echo hello posix_spawn
 *     -> FILE holds "hello posix_spawn\n", exit 0
 *  2. addopen(0, FILE, O_RDONLY) + adddup2(pipe, 1) + addclose(pipe ends):
 *     /bin/cat -> the pipe carries FILE's content, exit 0
 *  3. adddup2(pipe, 1): /usr/bin/printf %s-%d\n dup2 42 -> "dup2-42\n", exit 0
 *  4. fd 5 open, no action: sh -c '[ -e /proc/self/fd/5 ]' -> exit 0
 *  5. fd 5 open, addclose(5): same command -> exit 1
 *  6. fd 5 open, addclosefrom_np(3): same command -> exit 1
 *  7. addchdir_np("/"): /bin/pwd -> "/\n", exit 0
 *  8. POSIX_SPAWN_SETPGROUP (pgroup 0): /bin/cat blocked on a pipe; the
 *     parent sees getpgid(child) == child, then closes the pipe -> exit 0
 *  9. POSIX_SPAWN_SETSID: the same with getsid(child) == child -> exit 0
 * 10. POSIX_SPAWN_SETSIGMASK {SIGUSR1} + POSIX_SPAWN_SETSIGDEF {SIGUSR2},
 *     the parent ignoring SIGUSR2 and SIGHUP: the probe itself in mode
 *     "sigcheck" checks SIGUSR1 blocked, SIGUSR2 not blocked and default,
 *     SIGHUP still ignored -> exit 0
 * 11. posix_spawnp("echo", ...) into a pipe -> "spawnp\n", exit 0
 * 12. posix_spawnp("sh", -c 'exit 9')                             -> exit 9
 * 13. posix_spawn with NULL actions and attributes and an environment of its
 *     own: sh checks a variable from it and exits 10              -> exit 10
 *
 * Processes: 13 posix_spawn children, each execs once.
 * Expected exit status: 0.
 */
#define PROBE_NAME "posix-spawn"
#include "probe.h"

#include <spawn.h>

static char file[] = "/tmp/probe-posix-spawn-XXXXXX";

static void cleanup(void)
{
	unlink(file);
}

static void check(int rc, const char *what)
{
	if (rc != 0)
		fail("%s: %s", what, strerror(rc));
}

static pid_t spawn(const char *path, const posix_spawn_file_actions_t *fa,
		   const posix_spawnattr_t *attr, char *const argv[],
		   char *const envp[])
{
	pid_t pid = -1;
	int rc = posix_spawn(&pid, path, fa, attr, argv, envp);

	if (rc != 0)
		fail("posix_spawn %s: %s", path, strerror(rc));
	if (pid <= 0)
		fail("posix_spawn %s: returned 0 but pid %d", path, (int)pid);
	return pid;
}

/* Mode "sigcheck": what item 10 expects the attributes to have done. */
static int sigcheck(void)
{
	sigset_t cur;
	struct sigaction sa;

	if (sigprocmask(SIG_SETMASK, NULL, &cur) < 0)
		return 2;
	if (sigismember(&cur, SIGUSR1) != 1)
		return 3;       /* SETSIGMASK lost */
	if (sigismember(&cur, SIGUSR2) != 0)
		return 4;
	if (sigaction(SIGUSR2, NULL, &sa) < 0 || sa.sa_handler != SIG_DFL)
		return 5;       /* SETSIGDEF lost */
	if (sigaction(SIGHUP, NULL, &sa) < 0 || sa.sa_handler != SIG_IGN)
		return 6;       /* an ignored signal must stay ignored */
	return 0;
}

/* Spawn a /bin/cat that blocks on a pipe; check `what` about it. */
static void blocked_cat(short flag, const char *what)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int p[2];
	pid_t pid, got;

	xpipe(p);
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_adddup2(&fa, p[0], 0), "adddup2");
	check(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0),
	      "addopen /dev/null");
	check(posix_spawnattr_init(&at), "spawnattr_init");
	check(posix_spawnattr_setflags(&at, flag), "setflags");
	if (flag & POSIX_SPAWN_SETPGROUP)
		check(posix_spawnattr_setpgroup(&at, 0), "setpgroup");
	pid = spawn("/bin/cat", &fa, &at, (char *[]){ "cat", NULL }, environ);
	got = (flag & POSIX_SPAWN_SETPGROUP) ? getpgid(pid) : getsid(pid);
	if (got != pid)
		fail("%s: child %d has %d, expected its own pid", what, (int)pid,
		     (int)got);
	if (got == ((flag & POSIX_SPAWN_SETPGROUP) ? getpgrp() : getsid(0)))
		fail("%s: child still shares ours", what);
	close(p[0]);
	close(p[1]);
	reap_expect(pid, 0, what);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
}

/* sh -c '[ -e /proc/self/fd/5 ]' with fa applied. */
static void fd5(const posix_spawn_file_actions_t *fa, int code, const char *what)
{
	pid_t pid = spawn("/bin/sh", fa, NULL,
			  (char *[]){ "sh", "-c", "[ -e /proc/self/fd/5 ]", NULL },
			  environ);

	reap_expect(pid, code, what);
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t set;
	char buf[256];
	int p[2], fd;
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "sigcheck"))
		return sigcheck();
	if (argc != 1)
		fail("usage: %s", argv[0]);

	fd = mkstemp(file);
	if (fd < 0)
		fail("mkstemp: %s", strerror(errno));
	close(fd);
	atexit(cleanup);

	/* 1 */
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_addopen(&fa, 1, file, O_WRONLY | O_TRUNC, 0644),
	      "addopen");
	pid = spawn("/bin/echo", &fa, NULL,
		    (char *[]){ "echo", "hello", "posix_spawn", NULL }, environ);
	reap_expect(pid, 0, "addopen stdout");
	posix_spawn_file_actions_destroy(&fa);
	read_file(file, buf, sizeof buf);
	expect_str(buf, "hello posix_spawn\n", "addopen stdout: file content");

	/* 2 */
	xpipe(p);
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_addopen(&fa, 0, file, O_RDONLY, 0), "addopen");
	check(posix_spawn_file_actions_adddup2(&fa, p[1], 1), "adddup2");
	check(posix_spawn_file_actions_addclose(&fa, p[0]), "addclose");
	check(posix_spawn_file_actions_addclose(&fa, p[1]), "addclose");
	pid = spawn("/bin/cat", &fa, NULL, (char *[]){ "cat", NULL }, environ);
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "cat through a pipe");
	close(p[0]);
	reap_expect(pid, 0, "addopen stdin + adddup2 stdout");
	posix_spawn_file_actions_destroy(&fa);
	expect_str(buf, "hello posix_spawn\n", "cat through a pipe");

	/* 3 */
	xpipe(p);
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_adddup2(&fa, p[1], 1), "adddup2");
	pid = spawn("/usr/bin/printf", &fa, NULL,
		    (char *[]){ "printf", "%s-%d\\n", "dup2", "42", NULL }, environ);
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "printf through a pipe");
	close(p[0]);
	reap_expect(pid, 0, "adddup2");
	posix_spawn_file_actions_destroy(&fa);
	expect_str(buf, "dup2-42\n", "adddup2: output");

	/* 4, 5, 6: an inheritable fd 5 */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 5) != 5)
		fail("fd 5: %s", strerror(errno));
	if (fd != 5)
		close(fd);
	fd5(NULL, 0, "fd 5 inherited");
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_addclose(&fa, 5), "addclose 5");
	fd5(&fa, 1, "addclose(5)");
	posix_spawn_file_actions_destroy(&fa);
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_addclosefrom_np(&fa, 3), "addclosefrom_np");
	fd5(&fa, 1, "addclosefrom_np(3)");
	posix_spawn_file_actions_destroy(&fa);
	close(5);

	/* 7 */
	xpipe(p);
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_addchdir_np(&fa, "/"), "addchdir_np");
	check(posix_spawn_file_actions_adddup2(&fa, p[1], 1), "adddup2");
	pid = spawn("/bin/pwd", &fa, NULL, (char *[]){ "pwd", NULL }, environ);
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "pwd");
	close(p[0]);
	reap_expect(pid, 0, "addchdir_np");
	posix_spawn_file_actions_destroy(&fa);
	expect_str(buf, "/\n", "addchdir_np: pwd output");

	/* 8, 9 */
	blocked_cat(POSIX_SPAWN_SETPGROUP, "POSIX_SPAWN_SETPGROUP");
	blocked_cat(POSIX_SPAWN_SETSID, "POSIX_SPAWN_SETSID");

	/* 10 */
	signal(SIGUSR2, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	check(posix_spawnattr_init(&at), "spawnattr_init");
	check(posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
					    POSIX_SPAWN_SETSIGDEF), "setflags");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	check(posix_spawnattr_setsigmask(&at, &set), "setsigmask");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	check(posix_spawnattr_setsigdefault(&at, &set), "setsigdefault");
	pid = spawn(self_exe(), NULL, &at,
		    (char *[]){ "probe-posix-spawn", "sigcheck", NULL }, environ);
	reap_expect(pid, 0, "SETSIGMASK + SETSIGDEF (sigcheck)");
	posix_spawnattr_destroy(&at);
	signal(SIGUSR2, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (sigprocmask(SIG_SETMASK, NULL, &set) < 0 || sigismember(&set, SIGUSR1))
		fail("the parent's own signal mask changed");

	/* 11 */
	xpipe(p);
	check(posix_spawn_file_actions_init(&fa), "file_actions_init");
	check(posix_spawn_file_actions_adddup2(&fa, p[1], 1), "adddup2");
	pid = -1;
	check(posix_spawnp(&pid, "echo", &fa, NULL,
			   (char *[]){ "echo", "spawnp", NULL }, environ),
	      "posix_spawnp echo");
	close(p[1]);
	read_all(p[0], buf, sizeof buf, "echo");
	close(p[0]);
	reap_expect(pid, 0, "posix_spawnp echo");
	posix_spawn_file_actions_destroy(&fa);
	expect_str(buf, "spawnp\n", "posix_spawnp: echo output");

	/* 12 */
	pid = -1;
	check(posix_spawnp(&pid, "sh", NULL, NULL,
			   (char *[]){ "sh", "-c", "exit 9", NULL }, environ),
	      "posix_spawnp sh");
	reap_expect(pid, 9, "posix_spawnp sh");

	/* 13 */
	pid = spawn("/bin/sh", NULL, NULL,
		    (char *[]){ "sh", "-c", "test \"$PROBE_VAR\" = own && exit 10", NULL },
		    (char *[]){ "PROBE_VAR=own", NULL });
	reap_expect(pid, 10, "posix_spawn with its own environment");

	return probe_ok();
}
