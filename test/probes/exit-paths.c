/*
 * probe-exit-paths: every way a process ends on its own, each in a child
 * with a distinct status.  Children write markers into a pipe the parent
 * reads to EOF: "atexit\n" from an atexit handler, "quick\n" from an
 * at_quick_exit handler, and "buffered" left unflushed in a stdio stream
 * on the pipe (written out only by exit's stdio cleanup).
 *
 *   child                                     status  pipe must hold
 *   exit(21)                                  21      atexit\n buffered
 *   _exit(22)                                 22      (nothing)
 *   _Exit(23)                                 23      (nothing)
 *   quick_exit(24)                            24      quick\n
 *   return 25 from main (a fork child)        25      atexit\n buffered
 *   exec of the probe in mode "ret": its main
 *     returns 26 (fresh image)                26      atexit\n buffered
 *   exit(284) (status is taken modulo 256)    28      atexit\n buffered
 *   exit(-1)                                  255     atexit\n buffered
 *   exit(27) from a second thread while the
 *     main thread blocks in pthread_join      27      atexit\n buffered
 *   main thread pthread_exit()s, the last
 *     thread returns: the process exits 0     0       atexit\n buffered
 *
 * Processes: 10 fork children; only the "ret" one execs (the probe).
 * Expected exit status: 0.
 */
#define PROBE_NAME "exit-paths"
#include "probe.h"

#include <pthread.h>
#include <time.h>

static int marker_fd = -1;
static FILE *marker_file;

static void on_atexit(void)
{
	if (marker_fd >= 0 && write(marker_fd, "atexit\n", 7) != 7)
		_exit(120);
}

static void on_quick_exit(void)
{
	if (marker_fd >= 0 && write(marker_fd, "quick\n", 6) != 6)
		_exit(121);
}

/* In a child: point the markers at fd and register the handlers. */
static void arm(int fd)
{
	marker_fd = fd;
	marker_file = fdopen(fd, "w");
	if (!marker_file || setvbuf(marker_file, NULL, _IOFBF, 4096) != 0 ||
	    atexit(on_atexit) != 0 || at_quick_exit(on_quick_exit) != 0)
		_exit(122);
	if (fputs("buffered", marker_file) < 0)
		_exit(123);
}

static void *exit_from_thread(void *arg)
{
	(void)arg;
	exit(27);
}

static void *return_from_thread(void *arg)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	(void)arg;
	nanosleep(&ts, NULL);   /* let the main thread go first */
	return NULL;
}

enum how { EXIT, UEXIT, CEXIT, QUICK, RETURN, EXEC_RET, EXIT_BIG, EXIT_NEG,
	   THREAD_EXIT, LAST_THREAD };

static const struct {
	enum how how;
	int status;
	const char *marks, *what;
} cases[] = {
	{ EXIT, 21, "atexit\nbuffered", "exit(21)" },
	{ UEXIT, 22, "", "_exit(22)" },
	{ CEXIT, 23, "", "_Exit(23)" },
	{ QUICK, 24, "quick\n", "quick_exit(24)" },
	{ RETURN, 25, "atexit\nbuffered", "return 25 from main" },
	{ EXEC_RET, 26, "atexit\nbuffered", "exec'd image returns 26 from main" },
	{ EXIT_BIG, 28, "atexit\nbuffered", "exit(284)" },
	{ EXIT_NEG, 255, "atexit\nbuffered", "exit(-1)" },
	{ THREAD_EXIT, 27, "atexit\nbuffered", "exit(27) from a second thread" },
	{ LAST_THREAD, 0, "atexit\nbuffered", "main thread pthread_exit, last thread returns" },
};

/* Runs in the child; returns only for RETURN (main returns the value). */
static int child(enum how how, int fd)
{
	pthread_t th;

	if (how == EXEC_RET) {
		if (fd == 3 ? fcntl(fd, F_SETFD, 0) < 0 : dup2(fd, 3) != 3)
			_exit(124);
		execv(self_exe(), (char *[]){ "probe-exit-paths", "ret", NULL });
		child_fail("execv", errno, 127);
	}
	arm(fd);
	switch (how) {
	case EXIT:
		exit(21);
	case UEXIT:
		_exit(22);
	case CEXIT:
		_Exit(23);
	case QUICK:
		quick_exit(24);
	case RETURN:
		return 25;
	case EXIT_BIG:
		exit(284);
	case EXIT_NEG:
		exit(-1);
	case THREAD_EXIT:
		if (pthread_create(&th, NULL, exit_from_thread, NULL) != 0)
			_exit(125);
		pthread_join(th, NULL);
		_exit(126);
	case LAST_THREAD:
		if (pthread_create(&th, NULL, return_from_thread, NULL) != 0)
			_exit(125);
		pthread_exit(NULL);
	case EXEC_RET:
		break;
	}
	_exit(126);
}

int main(int argc, char **argv)
{
	char buf[256];
	size_t i;
	int p[2];
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "ret")) {
		arm(3);
		return 26;
	}
	if (argc != 1)
		fail("usage: %s", argv[0]);

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		xpipe(p);
		if ((pid = xfork(cases[i].what)) == 0) {
			close(p[0]);
			return child(cases[i].how, p[1]);
		}
		close(p[1]);
		read_all(p[0], buf, sizeof buf, cases[i].what);
		close(p[0]);
		reap_expect(pid, cases[i].status, cases[i].what);
		expect_str(buf, cases[i].marks, cases[i].what);
	}
	return probe_ok();
}
