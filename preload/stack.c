/*
 * Is there room on this stack for a hook's work?  (doc/design.md, "The
 * stack the hooks use"; pitfall 14.)
 *
 * A vfork or clone(CLONE_VM) child runs on its parent's or a caller-given
 * stack, and threads may have 16 KiB: a hook that needs more than is left
 * passes the call through untouched rather than crash the program.  Asked
 * on the exec and posix_spawn paths only, without allocation or lock, in three ways:
 *  - the stack of a clone() child: its size is the caller's secret, and
 *    the memory below it may be anything (a malloc'd block): never room;
 *  - the main thread's stack: its bound is RLIMIT_STACK below the top
 *    (where the constructor found argv, plus what lies above it: the
 *    strings of argv and the environment).  That is ld.so's
 *    __libc_stack_end within a word, without importing it, which cost
 *    every process a symbol lookup and a check of ld.so's versions.
 *    Before the constructor has run, the probe below answers;
 *  - any other (a thread's, a vfork child's on it): one process_vm_readv
 *    of a byte of each page down to sp - need, which stops at the first
 *    page that is not mapped or not readable (a thread stack's guard).
 * Under seccomp (pt.quiet) none of these system calls may be made: the
 * limit read when the process went quiet stands for the main thread's,
 * and elsewhere only a need of PT_QUIET_STACK is taken to fit.
 */
#include <sys/uio.h>

#include "pt-preload.h"
#include "pt-sys.h"

#define PT_PAGE 4096u
#define PT_PROBE_PAGES 64               /* need beyond 256 KiB: no room */
#define PT_MAIN_STACK_SPAN (1ul << 30)  /* sp this close below: main's */
#define PT_MAIN_STACK_TOP 262144u       /* argv, environment above the end */

static int probe(uintptr_t sp, size_t need)
{
	struct iovec remote[PT_PROBE_PAGES], local;
	char bytes[PT_PROBE_PAGES];
	size_t n = need / PT_PAGE + 1, i;
	long got;

	if (n > PT_PROBE_PAGES || need > sp)
		return 0;
	for (i = 0; i < n; i++) {
		remote[i].iov_base = (void *)(sp - (i + 1 == n ? need : i * PT_PAGE));
		remote[i].iov_len = 1;
	}
	local.iov_base = bytes;
	local.iov_len = n;
	got = pt_sc(SYS_process_vm_readv, pt_sys_getpid(), (long)&local, 1,
		    (long)remote, (long)n, 0);
	return got == (long)n;
}

/* RLIMIT_STACK's soft limit (prlimit64: one layout on every ABI), or
 * 0 if it cannot be read. */
static uint64_t stack_limit(void)
{
	unsigned long long rl[2];       /* cur, max */

	if (PT_SC5(SYS_prlimit64, 0, RLIMIT_STACK, NULL, rl, 0) < 0)
		return 0;
	return rl[0];
}

/* Is there need bytes below sp on the main thread's stack, whose top is
 * end, under a soft limit of limit? */
static int main_room(uintptr_t sp, uintptr_t end, size_t need, uint64_t limit)
{
	return limit == (uint64_t)-1 ||         /* RLIM64_INFINITY */
	       (uint64_t)(end - sp) + need + PT_MAIN_STACK_TOP <= limit;
}

int pt_stack_fits(size_t need)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t clone_top = __atomic_load_n(&pt.clone_top, __ATOMIC_RELAXED);
	uintptr_t end = __atomic_load_n(&pt.stack_end, __ATOMIC_RELAXED);
	int saved = errno, fits;

	if (clone_top && sp < clone_top && clone_top - sp < PT_MAIN_STACK_SPAN)
		return 0;
	if (sp < end && end - sp < PT_MAIN_STACK_SPAN)
		fits = main_room(sp, end, need, stack_limit());
	else
		fits = probe(sp, need);
	pt_errno_restore(saved);
	return fits;
}

void pt_stack_note_limit(void)
{
	int saved = errno;

	__atomic_store_n(&pt.quiet_stack_limit, stack_limit(), __ATOMIC_RELAXED);
	pt_errno_restore(saved);
}

int pt_stack_fits_quiet(size_t need)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t clone_top = __atomic_load_n(&pt.clone_top, __ATOMIC_RELAXED);
	uintptr_t end = __atomic_load_n(&pt.stack_end, __ATOMIC_RELAXED);

	if (clone_top && sp < clone_top && clone_top - sp < PT_MAIN_STACK_SPAN)
		return 0;
	if (sp < end && end - sp < PT_MAIN_STACK_SPAN)
		return main_room(sp, end, need,
				 __atomic_load_n(&pt.quiet_stack_limit,
						 __ATOMIC_RELAXED));
	return need <= PT_QUIET_STACK;
}
