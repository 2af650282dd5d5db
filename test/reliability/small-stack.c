/*
 * small-stack MODE: start a program from a small stack, as programs do.
 * Every stack here but the alternate one is mapped with a PROT_NONE guard
 * page below it, as a pthread stack is: a hook that uses more than there
 * is faults, where on a malloc'd stack it would silently write into the
 * heap.  Modes:
 *   clone-vfork    clone(CLONE_VM|CLONE_VFORK) on an 8 KiB stack of our
 *                  own mapping; the child execs /bin/sh -c '...; exit 3'
 *   vfork-thread   a thread with a 16 KiB stack vforks; the child execs
 *                  sh ... exit 4
 *   fork-thread    a 16 KiB thread forks; the child execs sh ... exit 5
 *   system-thread  a 16 KiB thread calls system("...; exit 6")
 *   env-spawn      a 24 KiB thread with 1,500 more environment variables
 *                  calls posix_spawn of sh ... exit 7
 *   env-vfork      the same thread vforks; the child execve()s sh ... exit 8
 *   altstack       a signal handler on an 8 KiB alternate stack at the top
 *                  of a malloc'd block forks; the child execs sh ... exit 9.
 *                  The rest of the block, below the stack, must come out
 *                  as it went in: there an overflow does not fault.
 * With LEAVE (bytes), a thread first takes all of its stack but LEAVE above
 * the guard page, as a deeper program would before it starts a child.
 * Prints how the child ended; exits 0 if it could wait for it.
 */
#include <alloca.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static const char *mode;
static size_t leave;
static char script[64];
static char *sh_argv[] = {"sh", "-c", script, NULL};

static void exec_sh(void)
{
	execve("/bin/sh", sh_argv, environ);
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

static __attribute__((noinline)) void act(void)
{
	pid_t pid;
	int st;

	if (!strcmp(mode, "system-thread")) {
		st = system(script);
		if (st == -1)
			printf("%s: no child\n", mode);
		else if (WIFEXITED(st))
			printf("%s: exit %d\n", mode, WEXITSTATUS(st));
		else
			printf("%s: signal %d\n", mode, WTERMSIG(st));
		fflush(stdout);
		return;
	}
	if (!strcmp(mode, "env-spawn")) {
		if (posix_spawn(&pid, "/bin/sh", NULL, NULL, sh_argv, environ))
			pid = -1;
		report(pid);
		return;
	}
	pid = !strcmp(mode, "fork-thread") || !strcmp(mode, "altstack") ?
	      fork() : vfork();
	if (pid == 0)
		exec_sh();
	report(pid);
}

static void on_signal(int sig)
{
	(void)sig;
	act();
}

/* Bytes of n at p that are no longer fill. */
static size_t changed(const unsigned char *p, size_t n, unsigned char fill)
{
	size_t k = 0;

	while (n--)
		k += *p++ != fill;
	return k;
}

static void on_altstack(void)
{
	size_t below = 57344, size = 8192;
	unsigned char *block = malloc(below + size);
	struct sigaction sa;
	stack_t ss;

	if (!block)
		return;
	memset(block, 0xa5, below + size);
	ss.ss_sp = block + below;
	ss.ss_size = size;
	ss.ss_flags = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL)) {
		printf("%s: no alternate stack\n", mode);
		return;
	}
	raise(SIGUSR1);
	if (changed(block, below, 0xa5))
		printf("%s: %zu bytes below the stack overwritten\n", mode,
		       changed(block, below, 0xa5));
}

static void *thread_fn(void *arg)
{
	pthread_attr_t a;
	void *low;
	size_t size;
	char here, *pad;
	uintptr_t used;

	(void)arg;
	if (leave) {
		/* The lowest byte of the stack, just above its guard page. */
		if (pthread_getattr_np(pthread_self(), &a) ||
		    pthread_attr_getstack(&a, &low, &size)) {
			printf("%s: no stack\n", mode);
			return NULL;
		}
		pthread_attr_destroy(&a);
		used = (uintptr_t)&here - (uintptr_t)low;
		if (used < leave + 512) {
			printf("%s: less than %zu bytes left\n", mode, leave);
			return NULL;
		}
		pad = alloca(used - leave - 256);
		memset(pad, 0, used - leave - 256);
		__asm__ volatile("" : : "r"(pad) : "memory");
	}
	act();
	return NULL;
}

static void in_thread(size_t size)
{
	pthread_attr_t a;
	pthread_t t;

	/* glibc maps a thread's stack with a guard page below it. */
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, size) ||
	    pthread_create(&t, &a, thread_fn, NULL)) {
		printf("%s: no thread\n", mode);
		return;
	}
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {
		"clone-vfork", "vfork-thread", "fork-thread", "system-thread",
		"env-spawn", "env-vfork", "altstack",
	};
	int code = 0, i;

	if (argc != 2 && argc != 3)
		return 2;
	mode = argv[1];
	if (argc == 3)
		leave = strtoul(argv[2], NULL, 10);
	for (i = 0; i < (int)(sizeof modes / sizeof *modes); i++)
		if (!strcmp(mode, modes[i]))
			code = i + 3;
	if (!code)
		return 2;
	snprintf(script, sizeof script, "echo %s; exit %d", mode, code);
	fflush(stdout);
	if (code == 3) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 8192;
		char *map = mmap(NULL, page + size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (map == MAP_FAILED || mprotect(map, page, PROT_NONE))
			return 1;
		report(clone(clone_fn, map + page + size,
			     CLONE_VM | CLONE_VFORK | SIGCHLD, NULL));
	} else if (code <= 6) {
		in_thread(16384);
	} else if (code == 9) {
		on_altstack();
	} else {
		char name[32];

		for (i = 0; i < 1500; i++) {
			snprintf(name, sizeof name, "SMALL_STACK_VAR_%d", i);
			setenv(name, "some value of a variable", 1);
		}
		in_thread(24576);
	}
	return 0;
}
