/*
 * probe-clone: children created with glibc's clone() wrapper instead of
 * fork, vfork or posix_spawn.  A child whose function returns ends with a
 * bare exit system call that no libc hook sees.  Each case checks the
 * clone semantics a wrapper could disturb.
 *
 *  1. clone(SIGCHLD), the child fn calls _exit(7)              -> exit 7
 *  2. clone(SIGCHLD), the child fn returns 8                   -> exit 8
 *  3. clone(CLONE_VM|CLONE_VFORK|SIGCHLD), the child execs
 *     /bin/sh -c 'exit 6' (what posix_spawn does inside)        -> exit 6
 *  4. clone(SIGCHLD), the child execs /bin/sh -c 'exit 5'       -> exit 5
 *  5. clone(CLONE_VM|SIGCHLD): the child stores its argument's value + 1
 *     in memory the parent sees, returns 9                     -> exit 9
 *  6. clone(CLONE_PARENT_SETTID|SIGCHLD, &ptid): ptid is the child's pid
 *     (set in the parent), the child returns 10                -> exit 10
 *  7. clone(CLONE_FILES|SIGCHLD): the child dup2s /dev/null onto fd 9 of
 *     the shared table; the parent then has fd 9; returns 11   -> exit 11
 *  8. clone(SIGCHLD), the child fn returns 300: only the low 8 bits
 *     reach the parent                                         -> exit 44
 *  9. the child's fn gets exactly the argument passed (a pointer), and
 *     runs on the stack it was given (a local's address lies inside)
 *                                                              -> exit 12
 * 10. errors: fn NULL or stack NULL -> -1/EINVAL; CLONE_SIGHAND without
 *     CLONE_VM -> -1/EINVAL; no child is created (wait: ECHILD)
 *
 * Processes: 9 children; 3 and 4 exec once, the others never exec.
 * Expected exit status: 0.
 */
#define PROBE_NAME "clone"
#include "probe.h"

#include <sched.h>
#include <stdint.h>

#define STACK (256 * 1024)

static volatile int shared_value;
static char *cur_stack;

static int call_exit(void *arg)
{
	(void)arg;
	_exit(7);
}

static int return_value(void *arg)
{
	return (int)(intptr_t)arg;
}

static int exec_sh(void *arg)
{
	execv("/bin/sh", (char *[]){ "sh", "-c", (char *)arg, NULL });
	_exit(127);
}

static int store_shared(void *arg)
{
	shared_value = *(int *)arg + 1;
	return 9;
}

static int dup_to_9(void *arg)
{
	int fd = open("/dev/null", O_RDONLY);

	(void)arg;
	if (fd < 0 || dup2(fd, 9) != 9)
		return 1;
	close(fd);
	return 11;
}

static int check_arg_and_stack(void *arg)
{
	char local;

	if (arg != (void *)&shared_value)
		return 2;
	if (&local < cur_stack || &local >= cur_stack + STACK)
		return 3;
	return 12;
}

static pid_t start(int (*fn)(void *), int flags, void *arg, pid_t *ptid,
		   const char *what)
{
	pid_t pid;

	cur_stack = malloc(STACK);
	if (!cur_stack)
		fail("malloc");
	fflush(NULL);
	pid = ptid ? clone(fn, cur_stack + STACK, flags, arg, ptid)
		   : clone(fn, cur_stack + STACK, flags, arg);
	if (pid <= 0)
		fail("%s: clone returned %d: %s", what, (int)pid, strerror(errno));
	return pid;
}

static void run(int (*fn)(void *), int flags, void *arg, int code,
		const char *what)
{
	reap_expect(start(fn, flags, arg, NULL, what), code, what);
	free(cur_stack);
}

int main(void)
{
	char stack[256];
	pid_t pid, ptid = -1;
	int input = 41, r, st;

	run(call_exit, SIGCHLD, NULL, 7, "clone, child calls _exit(7)");
	run(return_value, SIGCHLD, (void *)8, 8, "clone, child fn returns 8");
	run(exec_sh, CLONE_VM | CLONE_VFORK | SIGCHLD, "exit 6", 6,
	    "clone(CLONE_VM|CLONE_VFORK), child execs sh");
	run(exec_sh, SIGCHLD, "exit 5", 5, "clone, child execs sh");

	shared_value = 0;
	run(store_shared, CLONE_VM | SIGCHLD, &input, 9, "clone(CLONE_VM)");
	if (shared_value != 42)
		fail("clone(CLONE_VM): the child's store is not visible (%d)",
		     shared_value);

	pid = start(return_value, CLONE_PARENT_SETTID | SIGCHLD, (void *)10, &ptid,
		    "clone(CLONE_PARENT_SETTID)");
	if (ptid != pid)
		fail("clone(CLONE_PARENT_SETTID): ptid %d, pid %d", (int)ptid, (int)pid);
	reap_expect(pid, 10, "clone(CLONE_PARENT_SETTID)");
	free(cur_stack);

	close(9);
	run(dup_to_9, CLONE_FILES | SIGCHLD, NULL, 11, "clone(CLONE_FILES)");
	if (fcntl(9, F_GETFD) < 0)
		fail("clone(CLONE_FILES): the child's fd 9 is not in the shared table");
	close(9);

	run(return_value, SIGCHLD, (void *)300, 44, "clone, child fn returns 300");
	run(check_arg_and_stack, SIGCHLD, (void *)&shared_value, 12,
	    "clone: the child's argument and stack");

	errno = 0;
	r = clone(NULL, stack + sizeof stack, SIGCHLD, NULL);
	expect_errno(r, -1, errno, EINVAL, "clone with fn NULL");
	errno = 0;
	r = clone(return_value, NULL, SIGCHLD, NULL);
	expect_errno(r, -1, errno, EINVAL, "clone with stack NULL");
	errno = 0;
	r = clone(return_value, stack + sizeof stack, CLONE_SIGHAND | SIGCHLD, NULL);
	expect_errno(r, -1, errno, EINVAL, "clone(CLONE_SIGHAND) without CLONE_VM");
	errno = 0;
	r = (int)wait(&st);
	expect_errno(r, -1, errno, ECHILD, "wait() after the failed clones");

	return probe_ok();
}
