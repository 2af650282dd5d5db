/*
 * probe-dlopen-fork: fork + exec with a command line over 4 KiB while
 * another thread is inside dlopen.  A fork child inherits the loader's lock
 * as the dlopen'ing thread held it, and nobody is left to release it: a
 * child that calls dlopen (or anything that takes that lock) before its
 * exec hangs for ever (doc/design.md, pitfall 13).
 *
 *  1. A thread dlopens and dlcloses libm.so.6 in a loop.
 *  2. Meanwhile the main thread forks 100 times; each child execs
 *     /bin/echo with an 8 KiB argument (argument k is the letter
 *     'a' + k % 26 repeated), output to /dev/null.         -> exit 0 each
 * An alarm of 120 s ends a hang with SIGALRM.
 *
 * Processes: 100 fork children, each execs once.  Expected exit status: 0.
 */
#define PROBE_NAME "dlopen-fork"
#include "probe.h"

#include <dlfcn.h>
#include <pthread.h>

#define ROUNDS 100
#define ARGLEN 8192

static volatile int stop;

static void *loader(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);

		if (h)
			dlclose(h);
	}
	return NULL;
}

int main(void)
{
	static char big[ARGLEN + 1];
	pthread_t t;
	int k, err;

	alarm(120);
	err = pthread_create(&t, NULL, loader, NULL);
	if (err)
		fail("pthread_create: %s", strerror(err));
	for (k = 0; k < ROUNDS; k++) {
		pid_t pid;

		memset(big, 'a' + k % 26, ARGLEN);
		pid = xfork("fork");
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd < 0 || dup2(fd, 1) < 0)
				child_fail("/dev/null", errno, 126);
			execv("/bin/echo", (char *[]){ "echo", big, NULL });
			child_fail("execv /bin/echo", errno, 127);
		}
		reap_expect(pid, 0, "echo with an 8 KiB argument");
	}
	stop = 1;
	pthread_join(t, NULL);
	return probe_ok();
}
