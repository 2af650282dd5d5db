/*
 * Going quiet under seccomp (doc/design.md, pitfall 15).
 *
 * A process that installs a seccomp filter (or enters strict mode) may be
 * killed for any system call it did not make untraced: from the moment it
 * asks for one, the library makes none.  prctl(PR_SET_SECCOMP) and
 * syscall(SYS_seccomp, SECCOMP_SET_MODE_*) set pt.quiet (and pt.off, which
 * every recording path checks) before the real call, whether or not it
 * then succeeds.  glibc has no seccomp() function; libseccomp goes through
 * syscall().  The state is inherited by fork children, as the filter is.
 * A program exec'd or spawned from then on inherits the filter too: the
 * hooks pass it an environment that no longer loads the library (envexec.c,
 * pt_envexec_untraced), so that its start makes no system call of ours.
 *
 * The syscall() hook is here for that, and so also passes the execs made
 * through it (syscall(SYS_execve), syscall(SYS_execveat)) to the exec
 * hooks: the library's variables are out of environ's sight since load,
 * and such an exec would otherwise start its image without the library,
 * unrecorded, and all it runs with it.
 */
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "pt-preload.h"

static void go_quiet(void)
{
	/* Strict mode allows no dlsym later, a filter maybe not either. */
	(void)PT_REAL_LAZY(syscall);
	(void)PT_REAL_LAZY(posix_spawn);
	(void)PT_REAL_LAZY(posix_spawnp);
	(void)PT_REAL_LAZY(system);
	(void)PT_REAL_LAZY(popen);
	pt_stack_note_limit();          /* the last system call of ours */
	__atomic_store_n(&pt.quiet, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pt.off, 1, __ATOMIC_RELAXED);
}

PT_EXPORT int prctl(int option, ...)
{
	int (*real)(int, ...) = PT_REAL_LAZY(prctl);
	unsigned long a2, a3, a4, a5;
	va_list ap;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		go_quiet();
	return real(option, a2, a3, a4, a5);
}

/*
 * syscall(): called with the caller's arguments on entry; returns the
 * function to jump to with them: the exec hooks' for an exec, else the
 * real syscall(), having gone quiet first if this one installs a filter.
 */
PT_HIDDEN void *pt_syscall_enter(long nr, long op);

void *pt_syscall_enter(long nr, long op)
{
#ifdef SYS_seccomp
	if (nr == SYS_seccomp &&
	    (op == SECCOMP_SET_MODE_STRICT || op == SECCOMP_SET_MODE_FILTER))
		go_quiet();
#endif
	if (nr == SYS_execve)
		return (void *)pt_syscall_execve;
#ifdef SYS_execveat
	if (nr == SYS_execveat)
		return (void *)pt_syscall_execveat;
#endif
	return (void *)PT_REAL_LAZY(syscall);
}

#if defined(__x86_64__)
/*
 * In assembly, so that the real syscall() runs in the caller's frame, as
 * if called directly: a program may make a system call through it that
 * returns twice on one stack (vfork, clone), where a C wrapper's frame
 * would be overwritten by the child.  Every argument register is kept,
 * and the seventh argument stays where it was on the stack.
 */
__asm__(".text\n"
	".globl syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"\t.cfi_startproc\n"
	"\tpush %rdi\n\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rsi\n\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rdx\n\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %rcx\n\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r8\n\t.cfi_adjust_cfa_offset 8\n"
	"\tpush %r9\n\t.cfi_adjust_cfa_offset 8\n"
	"\tsub $8, %rsp\n\t.cfi_adjust_cfa_offset 8\n"
	"\tcall pt_syscall_enter\n"
	"\tadd $8, %rsp\n\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r9\n\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %r8\n\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rcx\n\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdx\n\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rsi\n\t.cfi_adjust_cfa_offset -8\n"
	"\tpop %rdi\n\t.cfi_adjust_cfa_offset -8\n"
	"\tjmp *%rax\n"
	"\t.cfi_endproc\n"
	".size syscall, .-syscall\n");
#else
PT_EXPORT long syscall(long nr, ...)
{
	long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	real = (long (*)(long, ...))pt_syscall_enter(nr, a[0]);
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
#endif
