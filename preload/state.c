/*
 * What every file of the library stands on: its state pt, the real
 * functions behind the hooks, and the clocks.  Nothing here calls into
 * another file of the library.
 */
#include <dlfcn.h>
#include <time.h>

#include "pt-preload.h"
#include "pt-sys.h"

/* In .bss, not .data: only the pages a process touches cost it a fault. */
struct pt_state pt;
struct pt_real pt_real;

#define RESOLVE(field, name) \
	(pt_real.field = (__typeof__(pt_real.field))dlsym(RTLD_NEXT, name))

void pt_resolve(void)
{
	if (pt_real.execve)
		return;
	/* Cheap (about 1,000 instructions each), and done before any vfork
	 * child can need them: dlsym takes the loader's lock.  Only the EAGER
	 * hooks of hooks.def, what a vfork child may call (exec, the exit
	 * family); the rest is looked up on first use, PT_REAL_LAZY, since
	 * most processes never call it.  execve comes last in the list: once
	 * it is set, the table is complete. */
#define PT_RESOLVE_EAGER(sym, field) RESOLVE(field, #sym);
#define PT_RESOLVE_LAZY(sym, field)
#define PT_RESOLVE_NONE(sym, field)
#define PT_HOOK_AS(sym, field, how, ret, params, attrs) \
	PT_RESOLVE_##how(sym, field)
#define PT_HOOK(sym, how, ret, params, attrs) \
	PT_HOOK_AS(sym, sym, how, ret, params, attrs)
#include "hooks.def"
}

int pt_is_owner(void)
{
	return pt_sys_getpid() == pt.owner;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	/* A fork child starts without the vDSO's page table entries (the
	 * kernel copies none of a special mapping's), so its first read
	 * there is a page fault, dearer than the system call on the
	 * machines where faults cost most (doc/performance.md, "The
	 * library's pages and calls at the floor"); an image reads its
	 * clocks where ld.so has touched the vDSO already. */
	if (pt.forked)
		PT_SC2(SYS_clock_gettime, clock, &ts);
	else
		pt_sys_clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t pt_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t pt_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
