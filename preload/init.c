/*
 * Start and end of a traced program image: the constructor (HELLO), an
 * on_exit handler (to learn the status main returns, which glibc hands to
 * exit() internally, out of our hooks' sight) and the destructor (EXIT,
 * after the program's own atexit handlers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt-preload.h"
#include "pt-sys.h"

static uint64_t tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static __attribute__((noinline)) void send_exit(int status, int how, pid_t self,
						int direct)
{
	struct rusage ru;
	struct pt_chan ch;
	struct pt_body b;
	uint64_t ut = 0, st = 0;
	int owner, saved = errno;

	if (!self)
		self = pt_sys_getpid();
	owner = self == pt.owner;
	if (owner && pt.exit_sent)
		return;
	if (pt_chan_get(&ch, PT_USE_EVENT, self) < 0)
		goto out;
	ch.direct = direct;
	pt_defer_flush(&ch);    /* SPAWNs of children never reaped */
	pt_mbox_flush(&ch);     /* and the EXECs they left */
	if (owner)
		pt_trace_send(&ch);     /* written in a sandbox (trace.c) */
	memset(&ru, 0, sizeof ru);
	pt_sys_getrusage_self(&ru);
	if (owner) {
		pt.exit_sent = 1;
		ut = pt.base_utime_us;
		st = pt.base_stime_us;
	}
	memset(&b, 0, sizeof b);
	b.type = PT_REC_EXIT;
	b.fixed_len = sizeof(struct pt_rec_exit);
	pt_wire_put32(b.fixed + PT_OFF(pt_rec_exit, status), (uint32_t)status);
	pt_wire_put32(b.fixed + PT_OFF(pt_rec_exit, how), (uint32_t)how);
	pt_wire_put64(b.fixed + PT_OFF(pt_rec_exit, utime_us),
		      tv_us(ru.ru_utime) - ut);
	pt_wire_put64(b.fixed + PT_OFF(pt_rec_exit, stime_us),
		      tv_us(ru.ru_stime) - st);
	pt_wire_put64(b.fixed + PT_OFF(pt_rec_exit, maxrss_kb),
		      (uint64_t)ru.ru_maxrss);
	pt_send_record(&ch, &b, pt_now_ns());
	pt_chan_put(&ch);
out:
	pt_errno_restore(saved);
}

struct exit_args {
	int status, how;
	pid_t self;
};

static int send_exit_alone(void *arg)
{
	struct exit_args *a = arg;

	send_exit(a->status, a->how, a->self, 1);
	return 0;
}

void pt_send_exit(int status, int how, pid_t self)
{
	struct exit_args a = { status, how, self };

	/* Without room (a thread's small stack, a clone child's), the end
	 * comes from the parent's REAP or the collector's pidfd. */
	if (!pt.ready || pt.off || !pt_stack_fits(PT_HOOK_STACK))
		return;
	if (!self)
		a.self = pt_sys_getpid();
	/* The trace files it reads and every record it writes, in one
	 * descriptor table of its own where other threads may run. */
	if (!pt_alone_safe(a.self == pt.owner))
		pt_alone_run(send_exit_alone, &a);
	else
		send_exit(status, how, a.self, 0);
}

void pt_init_after_fork(uint64_t fork_ns)
{
	pt.fork_parent = pt.owner;
	pt.owner = pt_sys_getpid();
	pt.forked = 1;
	pt.start_ns = fork_ns;
	pt.base_utime_us = pt.base_stime_us = 0;    /* rusage restarts at fork */
	pt.exit_how = 0;
	pt.exit_sent = 0;
	pt.mbox_slot = 0;
	pt.trace_known = 0;     /* the tool's image is the parent's */
	pt.spool_name = 0;      /* so is its spool file */
	pt_defer_forget();
	pt_conn_after_fork();
}

static void image_end(void)
{
	pid_t self;

	if (!pt.ready || pt.off || pt.exit_sent)
		return;
	self = pt_sys_getpid();
	if (self == pt.owner)
		pt_send_exit(pt.exit_status,
			     pt.exit_how ? pt.exit_how : PT_EXIT_UNKNOWN, self);
	else if (pt.exit_how == PT_EXIT_RETURN && pt.foreign_exit != self)
		/* A clone child that returned from main (bwrap's pid 1):
		 * nobody traced may wait for it. */
		pt_send_exit(pt.exit_status, PT_EXIT_RETURN, self);
}

/*
 * The image's end, for every exit(): glibc passes the status, including
 * the one main returned, which no hook sees (wrapping main instead put a
 * frame of ours between main and libc in every backtrace, ASan's reports
 * included).  Registered by the constructor, before anything else is, it
 * runs last: after the program's atexit handlers and every library's
 * destructors, so the image's CPU and memory are whole.  An exit()
 * through our hook has said how already.
 */
static void pt_on_exit(int status, void *arg)
{
	(void)arg;
	if (!pt.off && !pt.exit_how) {
		pt.exit_status = status;
		pt.exit_how = PT_EXIT_RETURN;
	}
	image_end();
}

/* Without the handler (on_exit failed), the destructor ends the image. */
__attribute__((destructor)) static void pt_fini(void)
{
	if (!pt.at_exit)
		image_end();
}

/*
 * glibc calls constructors of preloaded objects with (argc, argv, envp)
 * before the program's own, so argv is intact here.
 */
__attribute__((constructor)) static void pt_init(int argc, char **argv,
						  char **envp)
{
	struct rusage ru;
	int saved = errno;

	(void)argc;
	/* A write before pt_resolve() reads the page pt_real shares with
	 * pt: a read first would map the zero page, and the write after it
	 * fault a second time. */
	pt.owner = 0;
	pt_resolve();
	pt_stack_setup(argv);
	pt.owner = pt_sys_getpid();
	pt.start_ns = pt_now_ns();
	pt.start_realtime_ns = pt_realtime_ns();
	if (pt_sys_getrusage_self(&ru) == 0) {
		pt.base_utime_us = tv_us(ru.ru_utime);
		pt.base_stime_us = tv_us(ru.ru_stime);
	}
	pt_env_setup(envp);
	pt_conn_start_image(argv, envp);
	pt_trace_setup(envp);
	pt_known_setup(argv);
	if (!pt.off)
		pt.at_exit = on_exit(pt_on_exit, NULL) == 0;
	/* Last: what came before read envp whole (HELLO, the relay). */
	pt_env_hide(envp);
	pt.ready = 1;
	pt_errno_restore(saved);
}
