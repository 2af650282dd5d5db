/*
 * syscost: what each system call that libproftrace.so makes for a traced
 * posix_spawn costs here, made as the library makes it (raw, with its
 * arguments: /proc names, a memfd opened O_APPEND through /proc, the
 * working directory) in a loop.  doc/performance.md quotes it beside the
 * count of each call.
 *
 *     syscost [ITERATIONS]      (default 20000)
 *
 * Each line: the best of five loops, µs a call.  A warm loop is the
 * call's floor: a program image makes each once or twice, with cold
 * caches, so the figures are a lower bound of what the calls cost it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long iterations = 20000;

#define COST(name, stmt)                                                     \
	do {                                                                 \
		double best = 1e9;                                           \
		for (int round = 0; round < 5; round++) {                    \
			double t0 = now_s(), t;                              \
			for (long i = 0; i < iterations; i++) {              \
				stmt;                                        \
			}                                                    \
			t = (now_s() - t0) / (double)iterations;             \
			if (t < best)                                        \
				best = t;                                    \
		}                                                            \
		printf("| %s | %.3f |\n", name, best * 1e6);                 \
	} while (0)

int main(int argc, char **argv)
{
	char path[64], buf[4096], rec[108];
	struct iovec iov[3] = { { rec, 24 }, { rec + 24, 80 }, { rec + 104, 4 } };
	struct statx stx;
	struct rusage ru;
	struct rlimit rl;
	struct timespec ts;
	int log, own;

	if (argc > 1)
		iterations = atol(argv[1]);
	if (iterations <= 0) {
		fprintf(stderr, "usage: syscost [ITERATIONS]\n");
		return 2;
	}
	log = memfd_create("syscost-log", MFD_CLOEXEC);
	if (log < 0 || !getcwd(buf, sizeof buf)) {
		perror("syscost: memfd_create");
		return 1;
	}
	snprintf(path, sizeof path, "/proc/%d/fd/%d", getpid(), log);
	own = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (own < 0) {
		perror("syscost: open of the memfd through /proc");
		return 1;
	}
	memset(rec, 1, sizeof rec);
	printf("| system call, as the library makes it | µs (best of 5 loops of %ld) |\n",
	       iterations);
	printf("|---|---|\n");
	COST("getpid", syscall(SYS_getpid));
	COST("getppid", syscall(SYS_getppid));
	COST("clock_gettime (the system call)",
	     syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts));
	COST("clock_gettime (the vDSO, for comparison)",
	     clock_gettime(CLOCK_MONOTONIC, &ts));
	COST("getrusage(RUSAGE_SELF)", syscall(SYS_getrusage, RUSAGE_SELF, &ru));
	COST("readlink /proc/self/ns/pid",
	     syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/ns/pid", buf, 64));
	COST("statx /proc/PID/fd/N",
	     syscall(SYS_statx, AT_FDCWD, path, 0,
		     STATX_TYPE | STATX_NLINK | STATX_INO, &stx));
	COST("open /proc/PID/fd/N, O_APPEND; close", {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path,
				      O_WRONLY | O_APPEND | O_CLOEXEC);
		syscall(SYS_close, fd);
	});
	COST("fcntl(F_DUPFD_CLOEXEC, 56); close", {
		int fd = (int)syscall(SYS_fcntl, own, F_DUPFD_CLOEXEC, 56);
		syscall(SYS_close, fd);
	});
	COST("getcwd", syscall(SYS_getcwd, buf, sizeof buf));
	COST("writev of a 108-byte record, O_APPEND memfd", {
		syscall(SYS_writev, own, iov, 3);
		if (i % 4096 == 4095)
			ftruncate(log, 0);
	});
	COST("statx of descriptor 56 (its identity)",
	     syscall(SYS_statx, own, "", AT_EMPTY_PATH, STATX_INO, &stx));
	COST("faccessat2 of a directory, W_OK and X_OK",
	     syscall(SYS_faccessat2, AT_FDCWD, "/tmp", W_OK | X_OK, AT_EACCESS));
	COST("faccessat2 of a file, R_OK",
	     syscall(SYS_faccessat2, AT_FDCWD, "/bin/true", R_OK, AT_EACCESS));
	COST("prlimit64(RLIMIT_STACK)",
	     syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl));
	COST("open, pread 128 bytes, close of the program", {
		int fd = (int)syscall(SYS_openat, AT_FDCWD, "/bin/true",
				      O_RDONLY | O_CLOEXEC);
		syscall(SYS_pread64, fd, buf, 128, 0);
		syscall(SYS_close, fd);
	});
	return 0;
}
