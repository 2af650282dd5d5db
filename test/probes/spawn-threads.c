/*
 * probe-spawn-threads: concurrent posix_spawn from several threads.
 *
 * 4 threads, released together by a barrier, each posix_spawn 25 copies
 * of /bin/true (argv: true tT iI, so every process is distinguishable) as
 * fast as they can, then waitpid each of their own 25 children while the
 * other threads are still spawning.  Checks: every posix_spawn returns 0
 * with a pid, all 100 pids are distinct, every child exits 0, and
 * afterwards wait() reports ECHILD (nothing left over, nothing reaped
 * twice).
 *
 * Processes: 100 posix_spawn children of /bin/true, each execs once (plus
 * the probe's 4 threads, which are not processes).
 * Expected exit status: 0.
 */
#define PROBE_NAME "spawn-threads"
#include "probe.h"

#include <pthread.h>
#include <spawn.h>

#define THREADS 4
#define EACH 25

static pthread_barrier_t start;
static pid_t pids[THREADS][EACH];
static char errors[THREADS][256];

static void *spawner(void *arg)
{
	int t = (int)(long)arg, i, rc, st;
	char targ[16], iarg[16];

	pthread_barrier_wait(&start);
	for (i = 0; i < EACH; i++) {
		snprintf(targ, sizeof targ, "t%d", t);
		snprintf(iarg, sizeof iarg, "i%d", i);
		rc = posix_spawn(&pids[t][i], "/bin/true", NULL, NULL,
				 (char *[]){ "true", targ, iarg, NULL }, environ);
		if (rc != 0) {
			snprintf(errors[t], sizeof errors[t],
				 "thread %d: posix_spawn #%d: %s", t, i, strerror(rc));
			return NULL;
		}
	}
	for (i = 0; i < EACH; i++) {
		pid_t r;

		do
			r = waitpid(pids[t][i], &st, 0);
		while (r < 0 && errno == EINTR);
		if (r != pids[t][i]) {
			snprintf(errors[t], sizeof errors[t],
				 "thread %d: waitpid(%d): %s", t, (int)pids[t][i],
				 r < 0 ? strerror(errno) : "wrong pid");
			return NULL;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			snprintf(errors[t], sizeof errors[t],
				 "thread %d: child #%d: %s", t, i, describe(st));
			return NULL;
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	int t, i, u, j, rc, st;

	if ((rc = pthread_barrier_init(&start, NULL, THREADS)) != 0)
		fail("pthread_barrier_init: %s", strerror(rc));
	for (t = 0; t < THREADS; t++)
		if ((rc = pthread_create(&th[t], NULL, spawner, (void *)(long)t)) != 0)
			fail("pthread_create: %s", strerror(rc));
	for (t = 0; t < THREADS; t++)
		if ((rc = pthread_join(th[t], NULL)) != 0)
			fail("pthread_join: %s", strerror(rc));
	for (t = 0; t < THREADS; t++)
		if (errors[t][0])
			fail("%s", errors[t]);
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < EACH; i++) {
			if (pids[t][i] <= 0)
				fail("thread %d: child #%d has pid %d", t, i,
				     (int)pids[t][i]);
			for (u = 0; u < THREADS; u++)
				for (j = 0; j < EACH; j++)
					if ((u != t || j != i) && pids[u][j] == pids[t][i])
						fail("pid %d reported twice", (int)pids[t][i]);
		}
	errno = 0;
	rc = (int)wait(&st);
	expect_errno(rc, -1, errno, ECHILD, "wait() after reaping all 100");
	return probe_ok();
}
