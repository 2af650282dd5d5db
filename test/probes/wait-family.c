/*
 * probe-wait-family: every wait function, each reaping a fork child (no
 * exec) with a distinct exit status, and what each must report.
 *
 *   31 wait(&st)
 *   32 waitpid(pid, &st, 0)
 *   33 wait3(&st, 0, &ru)              ru_maxrss > 0, times sane
 *   34 wait4(pid, &st, 0, &ru)         same
 *   35 waitid(P_PID, pid, WEXITED)     si_pid, si_signo SIGCHLD,
 *                                      si_code CLD_EXITED, si_status 35
 *   36 waitid(P_ALL, 0, WEXITED)       same
 *   37 WNOHANG while the child is blocked on a pipe: waitpid, wait4 and
 *      waitid(WNOHANG) return 0 (waitid leaves si_pid 0); then the pipe is
 *      closed and waitpid(pid, 0) reaps it
 *   38 waitid(WEXITED|WNOWAIT) reports it without reaping; waitpid then
 *      reaps it with the same status
 *   39 waitpid(pid, NULL, 0)           status pointer NULL
 *   40 wait(NULL)
 *   41 waitid(P_PID, pid, NULL, WEXITED)   (Linux allows a NULL infop)
 *   42 waitpid(0, ...)                 any child in our process group
 *   43 waitpid(-pgrp, ...)
 *   44 waitid(P_PGID, pgrp, WEXITED)
 *   45 waitid(P_PIDFD, pidfd_open(pid), WEXITED) (waitpid if no pidfds)
 *   SIGKILL: waitid reports si_code CLD_KILLED, si_status SIGKILL
 *   46 stop and continue: the child stops itself (SIGSTOP);
 *      waitpid(WUNTRACED) reports WIFSTOPPED/SIGSTOP; SIGCONT;
 *      waitpid(WCONTINUED) reports WIFCONTINUED; the child exits 46
 *   errors: no children left: wait, waitpid(-1), waitid(P_ALL) -> ECHILD;
 *      waitpid with bad options, waitid with no options -> EINVAL
 *   47 SIGCHLD ignored: the child is reaped by the kernel; wait() blocks
 *      until it has ended and then fails with ECHILD
 *
 * Processes: 18 fork children, none execs.  Expected exit status: 0.
 */
#define PROBE_NAME "wait-family"
#include "probe.h"

#include <sys/pidfd.h>
#include <sys/resource.h>

/* A child that exits code at once (after a little work). */
static pid_t child(int code)
{
	pid_t pid = xfork("child");

	if (pid == 0) {
		volatile long s = 0;
		long i;

		for (i = 0; i < 100000; i++)
			s += i;
		_exit(s == 4999950000L ? code : 1);
	}
	return pid;
}

/* A child that exits code once the write end of p is closed. */
static pid_t gated_child(int code, int p[2])
{
	pid_t pid;

	xpipe(p);
	pid = xfork("gated child");
	if (pid == 0) {
		char c;

		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(code);
	}
	close(p[0]);
	return pid;
}

static void check_ru(const struct rusage *ru, const char *what)
{
	if (ru->ru_maxrss <= 0)
		fail("%s: ru_maxrss %ld", what, ru->ru_maxrss);
	if (ru->ru_utime.tv_sec < 0 || ru->ru_utime.tv_usec < 0 ||
	    ru->ru_utime.tv_usec >= 1000000 || ru->ru_stime.tv_sec < 0 ||
	    ru->ru_stime.tv_usec < 0 || ru->ru_stime.tv_usec >= 1000000)
		fail("%s: rusage times out of range", what);
}

static void check_si(const siginfo_t *si, pid_t pid, int code, int status,
		     const char *what)
{
	if (si->si_pid != pid || si->si_signo != SIGCHLD || si->si_code != code ||
	    si->si_status != status)
		fail("%s: siginfo pid %d signo %d code %d status %d, expected "
		     "pid %d signo %d code %d status %d", what, (int)si->si_pid,
		     si->si_signo, si->si_code, si->si_status, (int)pid, SIGCHLD,
		     code, status);
}

static void expect_pid(pid_t got, pid_t want, const char *what)
{
	if (got != want)
		fail("%s: returned %d, expected %d (errno %s)", what, (int)got,
		     (int)want, strerror(errno));
}

int main(void)
{
	struct rusage ru;
	siginfo_t si;
	pid_t pid, r;
	int st, p[2], fd;

	signal(SIGCHLD, SIG_DFL);

	pid = child(31);
	expect_pid(wait(&st), pid, "wait");
	expect_exit(st, 31, "wait");

	pid = child(32);
	expect_pid(waitpid(pid, &st, 0), pid, "waitpid");
	expect_exit(st, 32, "waitpid");

	pid = child(33);
	memset(&ru, 0, sizeof ru);
	expect_pid(wait3(&st, 0, &ru), pid, "wait3");
	expect_exit(st, 33, "wait3");
	check_ru(&ru, "wait3");

	pid = child(34);
	memset(&ru, 0, sizeof ru);
	expect_pid(wait4(pid, &st, 0, &ru), pid, "wait4");
	expect_exit(st, 34, "wait4");
	check_ru(&ru, "wait4");

	pid = child(35);
	memset(&si, 0, sizeof si);
	expect_pid(waitid(P_PID, (id_t)pid, &si, WEXITED), 0, "waitid P_PID");
	check_si(&si, pid, CLD_EXITED, 35, "waitid P_PID");

	pid = child(36);
	memset(&si, 0, sizeof si);
	expect_pid(waitid(P_ALL, 0, &si, WEXITED), 0, "waitid P_ALL");
	check_si(&si, pid, CLD_EXITED, 36, "waitid P_ALL");

	/* 37: WNOHANG */
	pid = gated_child(37, p);
	st = 12345;
	expect_pid(waitpid(pid, &st, WNOHANG), 0, "waitpid WNOHANG");
	expect_pid(wait4(pid, &st, WNOHANG, &ru), 0, "wait4 WNOHANG");
	memset(&si, 0, sizeof si);
	expect_pid(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG), 0,
		   "waitid WNOHANG");
	if (si.si_pid != 0)
		fail("waitid WNOHANG: si_pid %d for a running child", (int)si.si_pid);
	close(p[1]);
	expect_pid(waitpid(pid, &st, 0), pid, "waitpid after WNOHANG");
	expect_exit(st, 37, "waitpid after WNOHANG");

	/* 38: WNOWAIT */
	pid = child(38);
	memset(&si, 0, sizeof si);
	expect_pid(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0,
		   "waitid WNOWAIT");
	check_si(&si, pid, CLD_EXITED, 38, "waitid WNOWAIT");
	expect_pid(waitpid(pid, &st, 0), pid, "waitpid after WNOWAIT");
	expect_exit(st, 38, "waitpid after WNOWAIT");

	/* 39, 40, 41: no status */
	pid = child(39);
	expect_pid(waitpid(pid, NULL, 0), pid, "waitpid NULL status");
	pid = child(40);
	expect_pid(wait(NULL), pid, "wait(NULL)");
	pid = child(41);
	expect_pid(waitid(P_PID, (id_t)pid, NULL, WEXITED), 0, "waitid NULL infop");
	errno = 0;
	expect_pid(waitpid(pid, NULL, WNOHANG), -1, "waitpid after waitid NULL infop");

	/* 42, 43, 44: process groups */
	pid = child(42);
	expect_pid(waitpid(0, &st, 0), pid, "waitpid(0)");
	expect_exit(st, 42, "waitpid(0)");
	pid = child(43);
	expect_pid(waitpid(-getpgrp(), &st, 0), pid, "waitpid(-pgrp)");
	expect_exit(st, 43, "waitpid(-pgrp)");
	pid = child(44);
	memset(&si, 0, sizeof si);
	expect_pid(waitid(P_PGID, (id_t)getpgrp(), &si, WEXITED), 0, "waitid P_PGID");
	check_si(&si, pid, CLD_EXITED, 44, "waitid P_PGID");

	/* 45: pidfd */
	pid = child(45);
	fd = pidfd_open(pid, 0);
	if (fd >= 0) {
		memset(&si, 0, sizeof si);
		expect_pid(waitid(P_PIDFD, (id_t)fd, &si, WEXITED), 0, "waitid P_PIDFD");
		check_si(&si, pid, CLD_EXITED, 45, "waitid P_PIDFD");
		close(fd);
	} else {
		expect_pid(waitpid(pid, &st, 0), pid, "waitpid (no pidfd)");
		expect_exit(st, 45, "waitpid (no pidfd)");
	}

	/* killed */
	pid = gated_child(99, p);
	if (kill(pid, SIGKILL) < 0)
		fail("kill: %s", strerror(errno));
	memset(&si, 0, sizeof si);
	expect_pid(waitid(P_PID, (id_t)pid, &si, WEXITED), 0, "waitid killed");
	check_si(&si, pid, CLD_KILLED, SIGKILL, "waitid killed");
	close(p[1]);

	/* 46: stopped, continued */
	pid = xfork("stop");
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(46);
	}
	expect_pid(waitpid(pid, &st, WUNTRACED), pid, "waitpid WUNTRACED");
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
		fail("waitpid WUNTRACED: %s, expected stopped by SIGSTOP", describe(st));
	if (kill(pid, SIGCONT) < 0)
		fail("kill SIGCONT: %s", strerror(errno));
	expect_pid(waitpid(pid, &st, WCONTINUED), pid, "waitpid WCONTINUED");
	if (!WIFCONTINUED(st)) {
		/* It may have exited already if the continue was consumed. */
		expect_exit(st, 46, "waitpid WCONTINUED");
	} else {
		expect_pid(waitpid(pid, &st, 0), pid, "waitpid after SIGCONT");
		expect_exit(st, 46, "waitpid after SIGCONT");
	}

	/* errors */
	errno = 0;
	r = wait(&st);
	expect_errno(r, -1, errno, ECHILD, "wait() with no children");
	errno = 0;
	r = waitpid(-1, &st, WNOHANG);
	expect_errno(r, -1, errno, ECHILD, "waitpid(-1, WNOHANG) with no children");
	errno = 0;
	r = waitid(P_ALL, 0, &si, WEXITED);
	expect_errno(r, -1, errno, ECHILD, "waitid(P_ALL) with no children");
	errno = 0;
	r = waitpid(-1, &st, 0x10000000);
	expect_errno(r, -1, errno, EINVAL, "waitpid with bad options");
	errno = 0;
	r = waitid(P_ALL, 0, &si, 0);
	expect_errno(r, -1, errno, EINVAL, "waitid with no options");

	/* 47: SIGCHLD ignored */
	signal(SIGCHLD, SIG_IGN);
	pid = child(47);
	errno = 0;
	r = wait(&st);
	expect_errno(r, -1, errno, ECHILD, "wait() with SIGCHLD ignored");
	signal(SIGCHLD, SIG_DFL);

	return probe_ok();
}
