/*
 * fixclock.so: preloaded before libproftrace.so, makes CLOCK_MONOTONIC read
 * $PT_FIXCLOCK_NS, so that the library's spool file name
 * (proftrace-PID-NS.ptspool) is known in advance and a test can plant a
 * symbolic link at it.  Other clocks are the real ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *v = getenv("PT_FIXCLOCK_NS");

	if (id == CLOCK_MONOTONIC && v) {
		unsigned long long ns = strtoull(v, NULL, 10);

		ts->tv_sec = (time_t)(ns / 1000000000ull);
		ts->tv_nsec = (long)(ns % 1000000000ull);
		return 0;
	}
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT,
							       "clock_gettime");
	return real(id, ts);
}
