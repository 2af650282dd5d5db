/*
 * spawnloop MODE N [PROGRAM]: start PROGRAM (default /bin/true) N times in
 * a row, by posix_spawn or by fork+execve, waiting for each, after a few
 * untimed warm-up spawns.  MODE is "spawn" or "fork".
 *
 * Prints one line of KEY VALUE pairs (bench/run.py parses it):
 *   median_us  median wall time of one spawn-and-wait, microseconds
 *   p10_us     its 10th percentile: the spawns least disturbed by other
 *              work on a shared machine
 *   mean_us    mean wall time
 *   cpu_us     CPU (user+sys) per spawn of this process and its children
 *   self_us    of which this process (the spawning side)
 *   wall_s     wall time of the timed loop
 *
 * Run it with LD_PRELOAD set to measure a preload library: the spawning
 * process loads it too, as every make or shell of a traced build does.
 * With SPAWNLOOP_CHILD_PRELOAD set, the children get that as LD_PRELOAD
 * instead, so that a library is measured on the children's side alone.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 5

extern char **environ;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double cpu_us(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
	       (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

/* Start child[0] once and wait for it.  Returns 0, or -1 with a message. */
static int run_once(int fork_mode, char *const child[])
{
	pid_t pid;
	int st, rc;

	if (fork_mode) {
		pid = fork();
		if (pid == 0) {
			execve(child[0], child, environ);
			_exit(127);
		}
		if (pid < 0) {
			perror("spawnloop: fork");
			return -1;
		}
	} else if ((rc = posix_spawn(&pid, child[0], NULL, NULL, child,
				     environ)) != 0) {
		fprintf(stderr, "spawnloop: posix_spawn %s: %s\n", child[0],
			strerror(rc));
		return -1;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "spawnloop: %s failed\n", child[0]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *child[] = { "/bin/true", NULL };
	int fork_mode, n, i;
	double *t, sum = 0, c0, s0, w0, w1;

	if ((argc != 3 && argc != 4) ||
	    (strcmp(argv[1], "spawn") && strcmp(argv[1], "fork"))) {
		fprintf(stderr, "usage: spawnloop spawn|fork N [PROGRAM]\n");
		return 2;
	}
	fork_mode = !strcmp(argv[1], "fork");
	if (getenv("SPAWNLOOP_CHILD_PRELOAD") &&
	    setenv("LD_PRELOAD", getenv("SPAWNLOOP_CHILD_PRELOAD"), 1) < 0) {
		perror("spawnloop: setenv");
		return 1;
	}
	n = atoi(argv[2]);
	if (n < 1)
		n = 1;
	if (argc == 4)
		child[0] = argv[3];
	t = calloc((size_t)n, sizeof *t);
	if (!t) {
		perror("spawnloop");
		return 1;
	}
	/* Page cache, dentries, the loader's first mappings: not measured. */
	for (i = 0; i < WARMUP; i++)
		if (run_once(fork_mode, child) < 0)
			return 1;
	s0 = cpu_us(RUSAGE_SELF);
	c0 = s0 + cpu_us(RUSAGE_CHILDREN);
	w0 = now_us();
	for (i = 0; i < n; i++) {
		double a = now_us();

		if (run_once(fork_mode, child) < 0)
			return 1;
		t[i] = now_us() - a;
		sum += t[i];
	}
	w1 = now_us();
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("median_us %.1f p10_us %.1f mean_us %.1f cpu_us %.1f "
	       "self_us %.1f wall_s %.4f\n", t[n / 2], t[n / 10], sum / n,
	       (cpu_us(RUSAGE_SELF) + cpu_us(RUSAGE_CHILDREN) - c0) / n,
	       (cpu_us(RUSAGE_SELF) - s0) / n, (w1 - w0) / 1e6);
	free(t);
	return 0;
}
