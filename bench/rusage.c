/*
 * rusage COMMAND...: run COMMAND, wait for it, and print on stderr one line
 * "rusage wall_s W cpu_s C maxrss_kb M faults F status S" (bench/run.py
 * parses it; faults: minor and major page faults).
 * COMMAND's own stdout and stderr pass through.
 *
 * Why not measure from Python: a child forked (or vforked) from the
 * interpreter starts with the interpreter's resident pages, and Linux
 * carries that peak across exec into ru_maxrss; started from this small
 * program, the peak is COMMAND's own.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	pid_t pid;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: rusage COMMAND...\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid) {
		perror("rusage: wait4");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "rusage wall_s %.6f cpu_s %.6f maxrss_kb %ld faults %ld "
		"status %d\n",
		(double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		ru.ru_maxrss, ru.ru_minflt + ru.ru_majflt,
		WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
