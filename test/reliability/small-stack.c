/*
 * small-stack MODE: exec from a small stack, as programs do.  Modes:
 *   vfork-thread   a thread with a 16 KiB stack vforks; the child execs
 *                  /bin/sh -c 'echo vfork-thread; exit 3'
 *   clone-vfork    clone(CLONE_VM|CLONE_VFORK) on an 8 KiB stack of
 *                  malloc'd memory; the child execs sh ... exit 4
 *   env-thread     a thread with a 24 KiB stack and 1,500 more environment
 *                  variables forks; the child execs sh ... exit 5
 * Prints how the child ended; exits 0 if it could wait for it.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static const char *mode;
static char script[64];

static void exec_sh(void)
{
	execle("/bin/sh", "sh", "-c", script, (char *)NULL, environ);
	_exit(127);
}

static int clone_fn(void *arg)
{
	(void)arg;
	exec_sh();
	return 127;
}

static void report(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		printf("%s: no child\n", mode);
		return;
	}
	if (WIFEXITED(st))
		printf("%s: exit %d\n", mode, WEXITSTATUS(st));
	else
		printf("%s: signal %d\n", mode, WTERMSIG(st));
	fflush(stdout);
}

static void *thread_fn(void *arg)
{
	pid_t pid = arg ? fork() : vfork();

	if (pid == 0)
		exec_sh();
	report(pid);
	return NULL;
}

static void in_thread(size_t size, void *arg)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, size) ||
	    pthread_create(&t, &a, thread_fn, arg)) {
		printf("%s: no thread\n", mode);
		return;
	}
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	int code;

	if (argc != 2)
		return 2;
	mode = argv[1];
	code = !strcmp(mode, "vfork-thread") ? 3 :
	       !strcmp(mode, "clone-vfork") ? 4 : 5;
	snprintf(script, sizeof script, "echo %s; exit %d", mode, code);
	fflush(stdout);
	if (code == 3) {
		in_thread(16384, NULL);
	} else if (code == 4) {
		size_t size = 8192;
		char *stack = malloc(size);

		report(clone(clone_fn, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD,
			     NULL));
	} else {
		char name[32];
		int i;

		for (i = 0; i < 1500; i++) {
			snprintf(name, sizeof name, "SMALL_STACK_VAR_%d", i);
			setenv(name, "some value of a variable", 1);
		}
		in_thread(24576, (void *)1);
	}
	return 0;
}
