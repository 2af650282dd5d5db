/*
 * Asking the collector to trace a program the library cannot enter.
 *
 * A static program loads no library, and a Go program forks, execs,
 * waits and exits past libc: neither says anything from inside.  When an
 * exec hook is about to run one (target.c says PT_TARGET_TRACE), the
 * calling thread asks the collector, on a connection of its own, to
 * trace it with ptrace event stops (doc/design.md, "What the collector
 * traces"), and waits for the answer, a bounded while: the exec that
 * follows is then the tracer's first event of it.  A collector that is
 * gone, slow or unwilling costs at most PT_SEIZE_WAIT_MS, and the exec
 * goes on untraced, as before (the /proc watcher).
 *
 * Where Yama allows only ancestors to trace (ptrace_scope 1: the daemon
 * is none), the collector says so and who it is; the caller names it
 * with PR_SET_PTRACER, asks again, and takes the name back once the
 * answer is in: the tracer, once attached, needs it no more.
 *
 * System calls only, no allocation, a small stack: it runs in vfork
 * children too.  In a process that may have other threads, the
 * connection lives in a descriptor table of its own (alone.c).
 */
#include <errno.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

#define PT_SEIZE_WAIT_MS 250

/* Wait until fd is readable, at most ms milliseconds: 1, 0, or -1. */
static int wait_readable(int fd, int ms)
{
	struct { long sec, nsec; } ts = { ms / 1000, (ms % 1000) * 1000000L };
	struct { int fd; short events, revents; } p = { fd, 0x001 /* POLLIN */, 0 };

	return (int)PT_SC5(SYS_ppoll, &p, 1, &ts, NULL, 0);
}

/* Send SEIZE for tid on fd and read the answer into buf (8 bytes): its
 * length, or -1. */
static ssize_t ask_once(int fd, pid_t tid, int what, unsigned char *buf)
{
	struct pt_frame_header h = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = PT_REC_SEIZE, .pid = (uint32_t)tid,
		.origin = (uint32_t)what, .time_ns = pt_now_ns(),
	};
	unsigned char f[PT_FRAME_HDR];
	ssize_t n;

	pt_wire_put_header(f, &h);
	if (pt_sys_send(fd, f, sizeof f, MSG_NOSIGNAL) != (ssize_t)sizeof f)
		return -1;
	for (;;) {
		int r = wait_readable(fd, PT_SEIZE_WAIT_MS);

		if (r < 0 && errno == EINTR)
			continue;       /* a stop, a signal blocked or ignored */
		if (r <= 0)
			return -1;
		n = pt_sys_recv(fd, buf, 8, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		return n;
	}
}

struct ask {
	pid_t tid;
	int what;               /* enum pt_seize_what */
	int traced;
};

static int ask_fn(void *arg)
{
	struct ask *a = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = PT_STR(socket_path);
	size_t len = pt_strlen(path);
	unsigned char ans[8];
	ssize_t n;
	int fd;

	if (!len || len >= sizeof sa.sun_path)
		return -1;
	pt_memcpy(sa.sun_path, path, len + 1);
	fd = pt_sys_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			   SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* A full backlog is a busy collector: no waiting for it here. */
	if (pt_sys_connect(fd, &sa, sizeof sa) < 0) {
		pt_sys_close(fd);
		return -1;
	}
	n = ask_once(fd, a->tid, a->what, ans);
	if (n == 5 && ans[0] == PT_SEIZE_PTRACER) {
		long tracer = (long)pt_wire_get32(ans + 1);

		if (PT_SC5(SYS_prctl, PR_SET_PTRACER, tracer, 0, 0, 0) == 0) {
			n = ask_once(fd, a->tid, a->what, ans);
			PT_SC5(SYS_prctl, PR_SET_PTRACER, 0, 0, 0, 0);
		}
	}
	a->traced = n == 1 && ans[0] == PT_SEIZE_YES;
	pt_sys_close(fd);
	return 0;
}

/* Does the environment say PROFTRACE_PTRACE=0 (no tracing)? */
static int opted_out(void)
{
	char **e;

	for (e = environ; e && *e; e++)
		if (pt_strncmp(*e, "PROFTRACE_PTRACE=", 17) == 0)
			return (*e)[17] == '0' && !(*e)[18];
	return 0;
}

int pt_seize_ask(int owner, int what)
{
	struct ask a = { 0, what, 0 };
	int saved = errno;

	if (pt.off || !pt.socket_path ||
	    (what != PT_SEIZE_RELEASE && opted_out()))
		return 0;
	a.tid = (pid_t)PT_SC0(SYS_gettid);
	pt_alone_call(owner, ask_fn, &a);
	pt_errno_restore(saved);
	return a.traced;
}
