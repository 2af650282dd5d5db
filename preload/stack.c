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
 *    (__libc_stack_end, plus what lies above it: argv, environment);
 *  - any other (a thread's, a vfork child's on it): one process_vm_readv
 *    of a byte of each page down to sp - need, which stops at the first
 *    page that is not mapped or not readable (a thread stack's guard).
 */
#include <sys/uio.h>

#include "pt-preload.h"
#include "pt-sys.h"

extern void *__libc_stack_end;

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

int pt_stack_fits(size_t need)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t clone_top = __atomic_load_n(&pt.clone_top, __ATOMIC_RELAXED);
	uintptr_t end = (uintptr_t)__libc_stack_end;
	int saved = errno, fits;

	if (clone_top && sp < clone_top && clone_top - sp < PT_MAIN_STACK_SPAN)
		return 0;
	if (sp < end && end - sp < PT_MAIN_STACK_SPAN) {
		struct rlimit rl;

		fits = pt_sc(SYS_getrlimit, RLIMIT_STACK, (long)&rl, 0, 0, 0, 0) == 0 &&
		       (rl.rlim_cur == RLIM_INFINITY ||
			end - sp + need + PT_MAIN_STACK_TOP <= rl.rlim_cur);
	} else {
		fits = probe(sp, need);
	}
	errno = saved;
	return fits;
}
