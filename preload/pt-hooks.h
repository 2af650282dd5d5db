/*
 * What exec.c and proc.c share, and no other file includes: the stack's
 * rule, the environment under seccomp, the records' fixed part.
 */
#ifndef PT_HOOKS_H
#define PT_HOOKS_H

#include <string.h>
#include <unistd.h>             /* environ (_GNU_SOURCE) */

#include "pt-preload.h"

/*
 * The stack (doc/design.md, "The stack the hooks use"): every hook enters
 * through a small frame that asks whether there is room for what it does
 * (pt_stack_fits) and only then calls the function with the large frame,
 * BIG, which touches that frame on entry (and probes it page by page
 * under -fstack-clash-protection).  Without room the call goes through
 * untouched, without a record.
 */
#define BIG __attribute__((noinline))

/* Room for a record of a hook outside the exec family; never asked when
 * nothing would be recorded (under seccomp no system call may be made). */
#define HOOK_ROOM() (pt.ready && !pt.off && pt_stack_fits(PT_HOOK_STACK))

/*
 * Under seccomp (pt.quiet), where the library makes no system call: the
 * image to come inherits the filter, and would be killed for the system
 * calls its copy of the library makes at start.  Declare `use`: envp as
 * it would be untraced (pt_envexec_untraced), on this stack frame when there
 * is room for it (pt_stack_fits_quiet), else envp itself.
 */
#define QUIET_ENV(use, envp)                                                 \
	size_t use##_n = pt_envexec_count(envp);                             \
	size_t use##_len = pt_envexec_preload_size(envp, use##_n);           \
	int use##_fits = use##_n <= PT_ENV_MAX &&                            \
		pt_stack_fits_quiet((use##_n + 1) * sizeof(char *) + use##_len); \
	char *use##_buf[use##_fits ? use##_n + 1 : 1];                       \
	char use##_scratch[use##_fits ? use##_len : 1];                      \
	char *const *use = use##_fits ?                                      \
		pt_envexec_untraced(envp, use##_n, use##_buf, use##_scratch, \
				use##_len) : (envp)

/* EXEC, EXEC_FAILED, SPAWN and FORK share the shape (u32, call). */
static inline void exec_body(struct pt_body *b, uint8_t type, uint32_t a,
			     uint32_t c)
{
	memset(b, 0, sizeof *b);
	b->type = type;
	b->fixed_len = sizeof(struct pt_rec_exec);
	pt_wire_put32(b->fixed + PT_OFF(pt_rec_exec, ppid), a);
	pt_wire_put32(b->fixed + PT_OFF(pt_rec_exec, call), c);
}

#endif
