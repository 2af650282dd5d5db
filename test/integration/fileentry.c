/*
 * Every entry point libptfiles.so hooks (doc/design.md, "File
 * accesses"), each on a path of its own under w/, which the test made:
 * IN.NAME files to read or probe, and new names NAME to write, create,
 * rename, link, remove.  Then w/IN.open, the first file read, read
 * again, and an exec of w/prog.  Exit 0 if every call
 * succeeded, else 1 with the failed call's name on stderr.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Declared only under _FORTIFY_SOURCE, or no more (glibc 2.33). */
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
int __xstat(int, const char *, struct stat *);
int __xstat64(int, const char *, struct stat64 *);
int __lxstat(int, const char *, struct stat *);
int __lxstat64(int, const char *, struct stat64 *);
int __fxstatat(int, int, const char *, struct stat *, int);
int __fxstatat64(int, int, const char *, struct stat64 *, int);

/* _STAT_VER, the layout these take */
#if defined(__x86_64__)
#define XSTAT_VER 1
#elif defined(__i386__)
#define XSTAT_VER 3
#endif

static int failed;

static void ok(const char *what, long r)
{
	if (r < 0) {
		fprintf(stderr, "%s failed\n", what);
		failed = 1;
	}
}

static void fd(const char *what, int f)
{
	ok(what, f);
	if (f >= 0)
		close(f);
}

static void fp(const char *what, FILE *f)
{
	ok(what, f ? 0 : -1);
	if (f)
		fclose(f);
}

int main(void)
{
	struct stat st;
	struct stat64 st64;
	struct statx stx;
	int d = open("w", O_RDONLY | O_DIRECTORY);
	char t1[] = "w/mkstemp.XXXXXX", t2[] = "w/mkostemp.XXXXXX";
	char t3[] = "w/mkstemps.XXXXXX.o", t4[] = "w/mkostemps.XXXXXX.o";
	char t5[] = "w/mkstemp64.XXXXXX";
	FILE *f;
	pid_t pid;
	int status;

	ok("dir", d);
	fd("open", open("w/IN.open", O_RDONLY));
	fd("open64", open64("w/open64", O_WRONLY | O_CREAT, 0644));
	fd("openat", openat(d, "IN.openat", O_RDONLY));
	fd("openat64", openat64(d, "openat64", O_RDWR | O_CREAT, 0644));
	fd("__open_2", __open_2("w/IN.__open_2", O_RDONLY));
	fd("__open64_2", __open64_2("w/IN.__open64_2", O_RDONLY));
	fd("__openat_2", __openat_2(d, "IN.__openat_2", O_RDONLY));
	fd("__openat64_2", __openat64_2(d, "IN.__openat64_2", O_RDONLY));
	fd("creat", creat("w/creat", 0644));
	fd("creat64", creat64("w/creat64", 0644));
	fp("fopen", fopen("w/IN.fopen", "r"));
	fp("fopen64", fopen64("w/fopen64", "w"));
	f = fopen("w/IN.fopen", "r");
	fp("freopen", f ? freopen("w/freopen", "a", f) : NULL);
	f = fopen("w/IN.fopen", "r");
	fp("freopen64", f ? freopen64("w/IN.freopen64", "r", f) : NULL);
	ok("rename", rename("w/IN.rename", "w/rename"));
	ok("renameat", renameat(d, "IN.renameat", d, "renameat"));
	ok("renameat2", renameat2(d, "IN.renameat2", d, "renameat2",
				  RENAME_NOREPLACE));
	ok("unlink", unlink("w/IN.unlink"));
	ok("unlinkat", unlinkat(d, "IN.unlinkat", 0));
	ok("remove", remove("w/IN.remove"));
	ok("remove (a directory)", remove("w/IN.removedir"));
	ok("rmdir", rmdir("w/IN.rmdir"));
	ok("link", link("w/IN.link", "w/link"));
	ok("linkat", linkat(d, "IN.linkat", d, "linkat", 0));
	ok("symlink", symlink("IN.open", "w/symlink"));
	ok("symlinkat", symlinkat("IN.open", d, "symlinkat"));
	ok("mkdir", mkdir("w/mkdir", 0755));
	ok("mkdirat", mkdirat(d, "mkdirat", 0755));
	ok("truncate", truncate("w/IN.truncate", 1));
	ok("truncate64", truncate64("w/IN.truncate64", 1));
	ok("stat", stat("w/IN.stat", &st));
	ok("stat64", stat64("w/IN.stat64", &st64));
	ok("lstat", lstat("w/IN.lstat", &st));
	ok("lstat64", lstat64("w/IN.lstat64", &st64));
	ok("fstatat", fstatat(d, "IN.fstatat", &st, 0));
	ok("fstatat64", fstatat64(d, "IN.fstatat64", &st64, 0));
	ok("statx", statx(d, "IN.statx", 0, STATX_BASIC_STATS, &stx));
	ok("access", access("w/IN.access", R_OK));
	ok("faccessat", faccessat(d, "IN.faccessat", R_OK, 0));
	ok("euidaccess", euidaccess("w/IN.euidaccess", R_OK));
	ok("eaccess", eaccess("w/IN.eaccess", R_OK));
#ifdef XSTAT_VER
	ok("__xstat", __xstat(XSTAT_VER, "w/IN.__xstat", &st));
	ok("__xstat64", __xstat64(XSTAT_VER, "w/IN.__xstat64", &st64));
	ok("__lxstat", __lxstat(XSTAT_VER, "w/IN.__lxstat", &st));
	ok("__lxstat64", __lxstat64(XSTAT_VER, "w/IN.__lxstat64", &st64));
	ok("__fxstatat", __fxstatat(XSTAT_VER, d, "IN.__fxstatat", &st, 0));
	ok("__fxstatat64", __fxstatat64(XSTAT_VER, d, "IN.__fxstatat64", &st64, 0));
#endif
	fd("mkstemp", mkstemp(t1));
	fd("mkostemp", mkostemp(t2, O_CLOEXEC));
	fd("mkstemps", mkstemps(t3, 2));
	fd("mkostemps", mkostemps(t4, 2, O_CLOEXEC));
	fd("mkstemp64", mkstemp64(t5));
	/* Again, last: its time stays that of the first read. */
	fd("open (again)", open("w/IN.open", O_RDONLY));
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "prog", NULL };

		execv("w/prog", argv);
		_exit(127);
	}
	ok("fork", pid);
	ok("exec", waitpid(pid, &status, 0) == pid &&
	   WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1);
	return failed;
}
