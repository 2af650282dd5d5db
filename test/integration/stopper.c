/*
 * A static program that stops, continues and kills a fork child of its
 * own, and reaps a child that exits 7; it prints what each waitpid
 * reported (test/integration/ptrace.py compares it with the untraced
 * run).  Exits 3.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void say(const char *what, int st)
{
	if (WIFSTOPPED(st))
		printf("%s: stopped by %d\n", what, WSTOPSIG(st));
	else if (WIFCONTINUED(st))
		printf("%s: continued\n", what);
	else if (WIFSIGNALED(st))
		printf("%s: killed by %d\n", what, WTERMSIG(st));
	else if (WIFEXITED(st))
		printf("%s: exited %d\n", what, WEXITSTATUS(st));
	fflush(stdout);
}

int main(void)
{
	int st, p[2];
	pid_t c;
	char b;

	if (pipe(p) < 0)
		return 99;
	c = fork();
	if (c == 0) {
		close(p[0]);
		if (write(p[1], "r", 1) != 1)
			_exit(98);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &b, 1) != 1)
		return 98;
	kill(c, SIGSTOP);
	waitpid(c, &st, WUNTRACED);
	say("after SIGSTOP", st);
	kill(c, SIGCONT);
	waitpid(c, &st, WCONTINUED);
	say("after SIGCONT", st);
	kill(c, SIGTERM);
	waitpid(c, &st, 0);
	say("after SIGTERM", st);
	c = fork();
	if (c == 0)
		_exit(7);
	waitpid(c, &st, 0);
	say("child", st);
	return 3;
}
