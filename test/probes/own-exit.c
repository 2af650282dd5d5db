/*
 * probe-own-exit: the probe's own exit status is not 0, so that a tracer
 * that runs it must pass the status on.  It registers an atexit handler
 * that prints "probe-own-exit: atexit ran" to stdout and then calls
 * exit(42) from a function below main; stdout must show the handler ran
 * (and the line printed before it, which sits in the stdio buffer until
 * exit flushes it).
 *
 * Processes: 1, no children.
 * Expected exit status: 42.
 */
#define PROBE_NAME "own-exit"
#include "probe.h"

static void handler(void)
{
	printf(PROBE_PREFIX "atexit ran\n");
}

__attribute__((noinline)) static void finish(int status)
{
	exit(status);
}

int main(void)
{
	if (atexit(handler) != 0)
		fail("atexit failed");
	if (setvbuf(stdout, NULL, _IOFBF, 4096) != 0)
		fail("setvbuf failed");
	printf(PROBE_PREFIX "exiting with 42\n");
	finish(42);
}
