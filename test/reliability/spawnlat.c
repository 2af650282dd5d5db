/*
 * spawnlat: run a command again and again, one run after the other, and
 * report how long each run took from fork to reap.  Run traced, it
 * measures what a stalled collector costs a build: the child's own waits
 * (connect, HELLO, EXIT) and the parent's (FORK, REAP), since the parent is
 * traced too and is a long-lived process with many events, like make.
 *
 *     spawnlat [-n RUNS] [-d SECONDS] [-t MS] [-x K] COMMAND [ARGS...]
 *
 * Runs COMMAND at least RUNS times (default 1) and until SECONDS have
 * passed.  With -x, the parent also makes K exec calls that fail (ENOENT)
 * before each run: each is two frames on its own connection (EXEC,
 * EXEC_FAILED), so a stalled collector's buffers fill fast.  Prints:
 *     runs=R max_ms=M p50_ms=P over_ms=S pcalls=C pmax_ms=X pslow=Y
 *     total_s=T failed=F
 * S counts the runs that took more than MS milliseconds (default 400);
 * C is the parent's own fork and failing exec calls, X the slowest of
 * them, Y how many took more than 200 ms (a wait for the collector).
 * Exits 0, or 1 if a run failed to start or did not exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static char *const noargv[] = { "pt-nonexistent", NULL };
	double start, *lat, secs = 0, limit = 400, pmax = 0, t1;
	long n = 1, cap = 1024, i, slow = 0, x = 0, k, pcalls = 0, pslow = 0;
	int failed = 0, c;

	while ((c = getopt(argc, argv, "+n:d:t:x:")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 't': limit = atof(optarg); break;
		case 'x': x = atol(optarg); break;
		default: goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	lat = malloc((size_t)cap * sizeof *lat);
	start = now_ms();
	for (i = 0; i < n || now_ms() - start < secs * 1e3; i++) {
		double t0;
		int ws;
		pid_t p;

		for (k = 0; k < x; k++) {
			t0 = now_ms();
			execv("/nonexistent/pt-spawnlat", noargv);
			t1 = now_ms() - t0;
			pcalls++;
			pslow += t1 > 200.0;
			pmax = t1 > pmax ? t1 : pmax;
		}
		t0 = now_ms();
		p = fork();
		if (p > 0) {
			t1 = now_ms() - t0;
			pcalls++;
			pslow += t1 > 200.0;
			pmax = t1 > pmax ? t1 : pmax;
		}
		if (p == 0) {
			execvp(argv[optind], argv + optind);
			_exit(127);
		}
		if (p < 0 || waitpid(p, &ws, 0) < 0 || !WIFEXITED(ws) ||
		    WEXITSTATUS(ws) != 0)
			failed++;
		if (i == cap) {
			cap *= 2;
			lat = realloc(lat, (size_t)cap * sizeof *lat);
		}
		lat[i] = now_ms() - t0;
		slow += lat[i] > limit;
	}
	qsort(lat, (size_t)i, sizeof *lat, cmp);
	printf("runs=%ld max_ms=%.1f p50_ms=%.2f over_ms=%ld pcalls=%ld "
	       "pmax_ms=%.1f pslow=%ld total_s=%.2f failed=%d\n", i,
	       lat[i - 1], lat[i / 2], slow, pcalls, pmax, pslow,
	       (now_ms() - start) / 1e3, failed);
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: spawnlat [-n RUNS] [-d SECONDS] [-t MS] [-x K] "
		"COMMAND [ARGS...]\n");
	return 2;
}
