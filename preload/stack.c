/*
 * Is there room on this stack for a hook's work?  (doc/design.md, "The
 * stack the hooks use"; pitfall 14.)
 *
 * A vfork or clone(CLONE_VM) child runs on its parent's or a caller-given
 * stack, and threads may have 16 KiB: a hook that needs more than is left
 * passes the call through untouched rather than crash the program.  Every
 * hook that records asks, from a small frame, before it calls the function
 * with the large one; without allocation or lock, in three ways:
 *  - the stack of a clone() child: its size is the caller's secret, and
 *    the memory below it may be anything (a malloc'd block): never room;
 *  - the main thread's stack: at exec the kernel maps it 128 KiB below
 *    the page of the lowest argument string, argv[0]'s (setup_arg_pages),
 *    and a mapping does not shrink, so a need that ends within that is
 *    there without a system call, whatever RLIMIT_STACK says since (unless
 *    the limit at exec was below those 128 KiB and the arguments).
 *    Deeper, the bound is RLIMIT_STACK below the top (where the
 *    constructor found argv, plus what lies above it: the strings of
 *    argv and the environment).  argv is ld.so's
 *    __libc_stack_end within a word, without importing it, which cost
 *    every process a symbol lookup and a check of ld.so's versions.
 *    Before the constructor has run, the probe below answers;
 *  - a signal handler's alternate stack (sigaltstack says we are on it):
 *    what is left of it, exactly; it is often a malloc'd block, where the
 *    probe would read on into the heap below;
 *  - any other (a thread's, a vfork child's on it): process_vm_readv of a
 *    byte of each page down to sp - need, which stops at the first page
 *    that is not mapped or not readable (a thread stack's guard).
 * Under seccomp (pt.quiet) none of these system calls may be made: the
 * limit read when the process went quiet stands for the main thread's,
 * and elsewhere only a need of PT_QUIET_STACK is taken to fit.
 */
#include <signal.h>
#include <sys/uio.h>

#include "pt-preload.h"
#include "pt-sys.h"

#define PT_PAGE 4096u
#define PT_PROBE_PAGES 64               /* need beyond 256 KiB: no room */
#define PT_PROBE_BATCH 16               /* pages per process_vm_readv */
#define PT_MAIN_STACK_SPAN (1ul << 30)  /* sp this close below: main's */
#define PT_MAIN_STACK_TOP 262144u       /* argv, environment above the end */
#define PT_MAIN_STACK_SURE 131072u      /* mapped below the strings at exec */

/*
 * Are the pages from sp down to sp - need all readable?  In batches, so
 * that the frame stays small: it is touched before anything is known.
 */
static __attribute__((noinline)) int probe(uintptr_t sp, size_t need)
{
	struct iovec remote[PT_PROBE_BATCH], local;
	char bytes[PT_PROBE_BATCH];
	size_t n = need / PT_PAGE + 1, i, k, done;
	long got;

	if (n > PT_PROBE_PAGES || need > sp)
		return 0;
	for (done = 0; done < n; done += k) {
		k = n - done < PT_PROBE_BATCH ? n - done : PT_PROBE_BATCH;
		for (i = 0; i < k; i++)
			remote[i].iov_base = (void *)(sp - (done + i + 1 == n ?
						      need : (done + i) * PT_PAGE));
		for (i = 0; i < k; i++)
			remote[i].iov_len = 1;
		local.iov_base = bytes;
		local.iov_len = k;
		got = pt_sc(SYS_process_vm_readv, pt_sys_getpid(), (long)&local,
			    1, (long)remote, (long)k, 0);
		if (got != (long)k)
			return 0;
	}
	return 1;
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

void pt_stack_setup(char **argv)
{
	uintptr_t low = argv[0] ? (uintptr_t)argv[0] & ~(uintptr_t)(PT_PAGE - 1) : 0;

	/* argv is on the main thread's stack, just above where _start found
	 * it; its strings lie above the arrays, the lowest being argv[0]'s
	 * (ld.so run as a program moves argv up: that only lowers what is
	 * taken to be there).  Without a string there, nothing is sure. */
	if ((uintptr_t)argv[0] > (uintptr_t)argv && low > PT_MAIN_STACK_SURE)
		pt.stack_sure = low - PT_MAIN_STACK_SURE;
	else
		pt.stack_sure = (uintptr_t)argv;
	__atomic_store_n(&pt.stack_end, (uintptr_t)argv, __ATOMIC_RELAXED);
}

/* Off the main thread's stack: on an alternate signal stack, what is
 * left of it; elsewhere, the probe. */
static __attribute__((noinline)) int other_room(uintptr_t sp, size_t need)
{
	stack_t ss;     /* the kernel's layout */

	if (PT_SC2(SYS_sigaltstack, NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
		return sp > (uintptr_t)ss.ss_sp &&
		       sp - (uintptr_t)ss.ss_sp >= need;
	return probe(sp, need);
}

int pt_stack_fits(size_t need)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t clone_top = __atomic_load_n(&pt.clone_top, __ATOMIC_RELAXED);
	uintptr_t end = __atomic_load_n(&pt.stack_end, __ATOMIC_RELAXED);
	int saved = errno, fits;

	if (clone_top && sp < clone_top && clone_top - sp < PT_MAIN_STACK_SPAN)
		return 0;
	if (sp < end && end - sp < PT_MAIN_STACK_SPAN) {
		if (sp > pt.stack_sure && sp - pt.stack_sure >= need)
			return 1;
		fits = main_room(sp, end, need, stack_limit());
	} else
		fits = other_room(sp, need);
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
		return (sp > pt.stack_sure && sp - pt.stack_sure >= need) ||
		       main_room(sp, end, need,
				 __atomic_load_n(&pt.quiet_stack_limit,
						 __ATOMIC_RELAXED));
	return need <= PT_QUIET_STACK;
}
