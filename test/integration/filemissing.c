/*
 * Paths that are not there, and directories, under libptfiles.so's
 * hooks (doc/design.md, "File accesses"), in w/, which the test made:
 * each entry point that names a file called once on a path of its own
 * that does not exist (ENOENT: w/NO.NAME; ENOTDIR: w/IN.file/NO.NAME),
 * a header looked for in -I directories (w/inc1, w/inc2 lack it, w/inc3
 * has it), a program run by execvp, execlp and posix_spawnp with PATH
 * w/bin1:w/bin2:w/bin3 (only w/bin3 has it), an execv of a path that is
 * not there, each stat entry point on a directory w/DIR.NAME, mkdir and
 * mkdirat, and failures of other kinds (EEXIST, EACCES) that say
 * nothing about a path being there.  Exit 0 if each call did what it
 * should, else 1 with the call's name on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int __xstat(int, const char *, struct stat *);
int __lxstat(int, const char *, struct stat *);

#if defined(__x86_64__)
#define XSTAT_VER 1
#elif defined(__i386__)
#define XSTAT_VER 3
#endif

static int failed;

/* r: the call's result (<0 failed), want: the errno it must fail with,
 * 0 for success. */
static void want(const char *what, long r, int err)
{
	int e = errno;

	if (err ? (r >= 0 || e != err) : r < 0) {
		fprintf(stderr, "%s: %ld, errno %d, wanted %d\n", what, r, e,
			err);
		failed = 1;
	}
}

static void closing(const char *what, int fd, int err)
{
	want(what, fd, err);
	if (fd >= 0)
		close(fd);
}

static void waited(const char *what, pid_t pid)
{
	int status;

	want(what, pid > 0 && waitpid(pid, &status, 0) == pid &&
	     WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1, 0);
}

int main(void)
{
	struct stat st;
	struct statx stx;
	int d = open("w", O_RDONLY | O_DIRECTORY);
	char *argv[] = { "prog", NULL };
	FILE *f;
	pid_t pid;

	want("dir", d, 0);
	closing("open", open("w/NO.open", O_RDONLY), ENOENT);
	closing("openat", openat(d, "NO.openat", O_RDONLY), ENOENT);
	closing("open (ENOTDIR)", open("w/IN.file/NO.notdir", O_RDONLY),
		ENOTDIR);
	closing("open for writing", open("w/NO.dir/NO.write",
					 O_WRONLY | O_CREAT, 0644), ENOENT);
	closing("creat", creat("w/NO.dir/NO.creat", 0644), ENOENT);
	f = fopen("w/NO.fopen", "r");
	want("fopen", f ? 0 : -1, ENOENT);
	if (f)
		fclose(f);
	want("stat", stat("w/NO.stat", &st), ENOENT);
	want("lstat", lstat("w/NO.lstat", &st), ENOENT);
	want("fstatat", fstatat(d, "NO.fstatat", &st, 0), ENOENT);
	want("statx", statx(d, "NO.statx", 0, STATX_BASIC_STATS, &stx),
	     ENOENT);
	want("access", access("w/NO.access", R_OK), ENOENT);
	want("faccessat", faccessat(d, "NO.faccessat", R_OK, 0), ENOENT);
	want("euidaccess", euidaccess("w/NO.euidaccess", R_OK), ENOENT);
#ifdef XSTAT_VER
	want("__xstat", __xstat(XSTAT_VER, "w/NO.__xstat", &st), ENOENT);
	want("__lxstat", __lxstat(XSTAT_VER, "w/NO.__lxstat", &st), ENOENT);
#endif
	/* A compiler's search of its -I directories for one header. */
	closing("inc1", open("w/inc1/h.h", O_RDONLY), ENOENT);
	closing("inc2", open("w/inc2/h.h", O_RDONLY), ENOENT);
	closing("inc3", open("w/inc3/h.h", O_RDONLY), 0);
	/* Failures that say the path is there, or nothing about it. */
	want("mkdir (EEXIST)", mkdir("w/DIR.stat", 0755), EEXIST);
	closing("open (EEXIST)", open("w/IN.file", O_WRONLY | O_CREAT | O_EXCL,
				      0644), EEXIST);
	/* Directories looked at. */
	want("stat dir", stat("w/DIR.stat", &st), 0);
	want("lstat dir", lstat("w/DIR.lstat", &st), 0);
	want("fstatat dir", fstatat(d, "DIR.fstatat", &st, 0), 0);
	want("statx dir", statx(d, "DIR.statx", 0, STATX_TYPE, &stx), 0);
#ifdef XSTAT_VER
	want("__xstat dir", __xstat(XSTAT_VER, "w/DIR.__xstat", &st), 0);
#endif
	want("mkdir", mkdir("w/mkdir", 0755), 0);
	want("mkdirat", mkdirat(d, "mkdirat", 0755), 0);
	/* Programs looked for. */
	want("setenv", setenv("PATH", "w/bin1:w/bin2:w/bin3", 1), 0);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		execv("w/NO.execv", argv);
		_exit(errno == ENOENT ? 0 : 1);
	}
	waited("execv", pid);
	pid = fork();
	if (pid == 0) {
		execvp("prog", argv);
		_exit(127);
	}
	waited("execvp", pid);
	pid = fork();
	if (pid == 0) {
		execlp("prog", "prog", (char *)NULL);
		_exit(127);
	}
	waited("execlp", pid);
	want("posix_spawnp", posix_spawnp(&pid, "prog", NULL, NULL, argv,
					  environ), 0);
	waited("posix_spawnp child", pid);
	return failed;
}
