/*
 * fdsee: everything a program can find out about its descriptors, printed
 * so that test/integration/fd-none.py can compare a traced run with the
 * untraced run of the same command, line for line.
 *
 *   fdsee report       this process: each entry of /proc/self/fd with its
 *                      type; fstat() and fcntl(F_GETFD) of every number
 *                      0-1023 (the type or the errno, the flags); how
 *                      many descriptors open() gets before EMFILE; the
 *                      numbers 5 open()s return
 *   fdsee all          report, then the same report from a child started
 *                      with fork + execve, then from one started with
 *                      posix_spawn
 *
 * Nothing printed depends on the run (no inode numbers, no pids), so an
 * untraced run prints the same bytes every time.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *kind(mode_t m)
{
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISFIFO(m))
		return "pipe";
	if (S_ISCHR(m))
		return "chr";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISREG(m))
		return "file";
	return "other";
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void report(const char *who)
{
	static int seen[65536];
	int n = 0, self, fd, count = 0, opened[5];
	struct rlimit rl;
	struct dirent *e;
	struct stat st;
	DIR *d;

	getrlimit(RLIMIT_NOFILE, &rl);
	printf("%s: RLIMIT_NOFILE %lld %lld\n", who, (long long)rl.rlim_cur,
	       (long long)rl.rlim_max);

	/* /proc/self/fd, read in full before anything is printed, without
	 * the directory's own descriptor */
	d = opendir("/proc/self/fd");
	if (!d) {
		printf("%s: opendir /proc/self/fd: %s\n", who, strerror(errno));
	} else {
		self = dirfd(d);
		while ((e = readdir(d)) && n < 65536)
			if (e->d_name[0] != '.' && atoi(e->d_name) != self)
				seen[n++] = atoi(e->d_name);
		closedir(d);
		qsort(seen, n, sizeof seen[0], cmp_int);
		for (int i = 0; i < n; i++)
			printf("%s: /proc/self/fd %d %s\n", who, seen[i],
			       fstat(seen[i], &st) == 0 ? kind(st.st_mode) : "gone");
	}

	for (fd = 0; fd < 1024; fd++) {
		int r = fstat(fd, &st);
		int fl;

		if (r == 0)
			printf("%s: fstat %d %s\n", who, fd, kind(st.st_mode));
		else if (errno != EBADF)
			printf("%s: fstat %d %s\n", who, fd, strerror(errno));
		fl = fcntl(fd, F_GETFD);
		if (fl >= 0)
			printf("%s: fcntl %d flags %d\n", who, fd, fl);
		else if (errno != EBADF)
			printf("%s: fcntl %d %s\n", who, fd, strerror(errno));
	}

	/* how many more it can open: every descriptor taken stays open
	 * until EMFILE, then all are closed again */
	{
		size_t cap = rl.rlim_cur < (1u << 20) ? rl.rlim_cur + 1 : (1u << 20);
		int *taken = malloc(cap * sizeof *taken);

		while (taken && (size_t)count < cap &&
		       (fd = open("/dev/null", O_RDONLY)) >= 0)
			taken[count++] = fd;
		printf("%s: opened %d before %s\n", who, count, strerror(errno));
		for (int i = 0; i < count; i++)
			close(taken[i]);
		free(taken);
	}

	for (int i = 0; i < 5; i++)
		opened[i] = open("/dev/null", O_RDONLY);
	printf("%s: open gave %d %d %d %d %d\n", who, opened[0], opened[1],
	       opened[2], opened[3], opened[4]);
	for (int i = 0; i < 5; i++)
		if (opened[i] >= 0)
			close(opened[i]);
	fflush(stdout);
}

static int waited(pid_t pid, const char *how)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("%s: failed: %s\n", how, strerror(errno));
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("%s: child ended with status %#x\n", how, status);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char *child_argv[] = { "/proc/self/exe", "report", NULL, NULL };
	char self[4096];
	ssize_t len;
	pid_t pid;
	int bad = 0;

	if (!strcmp(mode, "report")) {
		report(argc > 2 ? argv[2] : "main");
		return 0;
	}
	if (strcmp(mode, "all")) {
		fprintf(stderr, "usage: fdsee report [WHO] | all\n");
		return 2;
	}
	report("main");
	len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len < 0)
		return 1;
	self[len] = 0;
	child_argv[0] = self;

	child_argv[2] = "fork-exec";
	pid = fork();
	if (pid == 0) {
		execve(self, child_argv, environ);
		_exit(127);
	}
	bad |= waited(pid, "fork+execve");

	child_argv[2] = "posix_spawn";
	errno = posix_spawn(&pid, self, NULL, NULL, child_argv, environ);
	bad |= waited(errno ? -1 : pid, "posix_spawn");
	fflush(stdout);
	return bad;
}
