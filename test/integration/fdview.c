/*
 * fdview: what a program sees of its descriptors, for test/integration/fd-invisible.py
 * to compare traced with untraced.
 *
 *   fdview list [OUT]    each entry of /proc/self/fd, "N TYPE" (TYPE is
 *                        socket, pipe, file...), then "fcntl N" for each
 *                        fd 0-1023 that fcntl(F_GETFD) finds open; to
 *                        OUT (opened first) if given
 *   fdview count         how many descriptors open() gets before EMFILE
 *   fdview dup2 N        put a new file on fd N, write "x" through it,
 *                        print what the file holds; sleep 0.3 s, exit 7
 *   fdview dupfd N       fill fds 3 to N-1, put a new file on the next
 *                        one with fcntl(F_DUPFD, 3), print its number and
 *                        what a write through it put in the file; then
 *                        as dup2
 *   fdview close-range   close_range(3, ~0U, 0), burn CPU, sleep 0.3 s,
 *                        exit 7
 *   fdview closefrom     the same with closefrom(3)
 *   fdview close-all     close() every fd 3-1023, printing how many
 *                        succeeded; then as close-range
 *   fdview full-system   open() until EMFILE, then system("exit 4") and
 *                        print the status it returned: with no descriptor
 *                        left for ld.so, the shell cannot load libc
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return "closed";
	if (S_ISSOCK(st.st_mode))
		return "socket";
	if (S_ISFIFO(st.st_mode))
		return "pipe";
	if (S_ISCHR(st.st_mode))
		return "chr";
	return "file";
}

static void list(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self = dirfd(d), fd;

	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self)
			printf("%d %s\n", atoi(e->d_name), kind(atoi(e->d_name)));
	closedir(d);
	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			printf("fcntl %d\n", fd);
}

static void burn_and_exit(void)
{
	struct timespec t = { 0, 300 * 1000 * 1000 };
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 100000000ul; i++)
		x += i;
	nanosleep(&t, NULL);
	fflush(stdout);
	exit(7);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "list")) {
		if (argc > 2 && !freopen(argv[2], "w", stdout))
			return 1;
		list();
	} else if (!strcmp(mode, "count")) {
		int n = 0;

		while (open("/dev/null", O_RDONLY) >= 0)
			n++;
		printf("%d %s\n", n, strerror(errno));
	} else if (!strcmp(mode, "dup2") && argc > 2) {
		char name[] = "/tmp/fdview-XXXXXX", buf[16] = "";
		int f = mkstemp(name), n = atoi(argv[2]);

		if (f < 0 || dup2(f, n) != n || write(n, "x", 1) != 1 ||
		    pread(f, buf, sizeof buf - 1, 0) < 0)
			return 1;
		unlink(name);
		printf("file holds '%s'\n", buf);
		burn_and_exit();
	} else if (!strcmp(mode, "dupfd") && argc > 2) {
		char name[] = "/tmp/fdview-XXXXXX", buf[16] = "";
		int f = mkstemp(name), n = atoi(argv[2]), r;

		while (f >= 0 && (r = dup(f)) >= 0 && r < n - 1)
			;
		r = fcntl(f, F_DUPFD, 3);
		if (f < 0 || r < 0 || write(r, "y", 1) != 1 ||
		    pread(f, buf, sizeof buf - 1, 0) < 0)
			return 1;
		unlink(name);
		printf("F_DUPFD gave %d, file holds '%s'\n", r, buf);
		burn_and_exit();
	} else if (!strcmp(mode, "close-range")) {
		printf("close_range %d\n", close_range(3, ~0u, 0));
		burn_and_exit();
	} else if (!strcmp(mode, "closefrom")) {
		closefrom(3);
		burn_and_exit();
	} else if (!strcmp(mode, "close-all")) {
		int ok = 0;

		for (int fd = 3; fd < 1024; fd++)
			ok += close(fd) == 0;
		printf("closed %d\n", ok);
		burn_and_exit();
	} else if (!strcmp(mode, "full-system")) {
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		printf("system %d\n", system("exit 4"));
	} else {
		fprintf(stderr, "usage: fdview list|count|dup2 N|dupfd N|close-range|closefrom|close-all|full-system\n");
		return 2;
	}
	return 0;
}
