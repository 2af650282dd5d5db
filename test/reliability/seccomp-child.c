/*
 * seccomp-child MODE: fork a child that confines itself with seccomp, then
 * writes "MODE: confined" and ends; print how it ended.  Modes:
 *   prctl    PR_SET_NO_NEW_PRIVS, then a filter by prctl(PR_SET_SECCOMP)
 *            allowing read, write, exit and exit_group only; _exit(5)
 *   syscall  the same filter by syscall(SYS_seccomp); _exit(6)
 *   strict   prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): read, write, exit
 *            and sigreturn only; syscall(SYS_exit, 7)
 *   strict-syscall  strict mode by syscall(SYS_seccomp); syscall(SYS_exit, 8)
 * Any other system call kills the child with SIGSYS (filter) or SIGKILL
 * (strict), which the parent prints.
 *
 * seccomp-child MODE PROG ARG...: the child installs a filter that allows
 * everything but socket and connect (which kill the process), as a
 * sandbox denying the network would, and then runs PROG ARG...:
 *   exec     execv, with the environment it has
 *   exec-env execve, with the environment {"A=1", NULL}
 *   spawn    posix_spawn, with the environment it has; then _exit with
 *            the status it waited for (128+N for signal N)
 *   system   system(ARG) (the last argument), as spawn
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static struct sock_filter insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_exit), ALLOW(SYS_exit_group),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};
static struct sock_fprog prog = { sizeof insns / sizeof insns[0], insns };

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

#define KILL(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* No network: socket and connect kill, the rest is allowed. */
static struct sock_filter no_net_insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef SYS_socketcall                   /* i386's socket calls, multiplexed */
	KILL(SYS_socketcall),
#endif
	KILL(SYS_socket), KILL(SYS_connect),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static struct sock_fprog no_net = {
	sizeof no_net_insns / sizeof no_net_insns[0], no_net_insns
};

extern char **environ;

static int status_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Confine this process to no network, then run argv[0] as mode says. */
static void run_confined(const char *mode, int argc, char **argv)
{
	char *env[] = { "A=1", NULL };
	pid_t pid;
	int st;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &no_net) < 0)
		_exit(102);
	if (!strcmp(mode, "exec"))
		execv(argv[0], argv);
	else if (!strcmp(mode, "exec-env"))
		execve(argv[0], argv, env);
	else if (!strcmp(mode, "spawn")) {
		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) ||
		    waitpid(pid, &st, 0) != pid)
			_exit(104);
		_exit(status_code(st));
	} else if (!strcmp(mode, "system")) {
		st = system(argv[argc - 1]);
		_exit(st == -1 ? 105 : status_code(st));
	}
	_exit(103);
}

static void say(const char *mode)
{
	char line[64];
	int n = snprintf(line, sizeof line, "%s: confined\n", mode);

	if (write(1, line, (size_t)n) < 0)
		_exit(100);
}

static void child(const char *mode)
{
	if (!strcmp(mode, "prctl") || !strcmp(mode, "syscall")) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(101);
		if (mode[0] == 'p' ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
				   : syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(102);
		say(mode);
		_exit(mode[0] == 'p' ? 5 : 6);
	}
	if (!strcmp(mode, "strict") || !strcmp(mode, "strict-syscall")) {
		if (mode[6] ? syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL)
			    : prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			_exit(102);
		say(mode);
		syscall(SYS_exit, mode[6] ? 8 : 7);
	}
	_exit(103);
}

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	if (argc < 2)
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0 && argc > 2)
		run_confined(argv[1], argc - 2, argv + 2);
	if (pid == 0)
		child(argv[1]);
	if (waitpid(pid, &st, 0) != pid)
		return 4;
	if (WIFEXITED(st))
		printf("%s: exit %d\n", argv[1], WEXITSTATUS(st));
	else
		printf("%s: signal %d\n", argv[1], WTERMSIG(st));
	return 0;
}
