/*
 * Connections to the collector, and the spool-file fallback.
 *
 * A program image owns one connection, opened by the constructor.  A fork
 * child keeps using its parent's (inherited) connection for an exec, which
 * is all most fork children do, and opens its own only for anything else:
 * that keeps fork+exec at one connection per program.  A child that shares
 * memory with its parent (vfork, clone) writes no global state, so it uses
 * the inherited connection, or one it opens and closes itself.
 *
 * Sends are bounded: a stalled collector holds a process at most
 * PT_SEND_TIMEOUT_MS per connect() or send() (a non-blocking socket and
 * ppoll, or, when the backlog was full at connect(), SO_SNDTIMEO); after
 * one timeout the process stops waiting on it for good (design.md,
 * pitfall 8).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

#define PT_SEND_TIMEOUT_MS 250
/*
 * Where the connection's fd goes: above the fds programs open first and
 * use by number (0-2, make's jobserver, a shell's 3-9 and 10+), but below
 * 64, the table the kernel embeds in every process.  An fd at 900 made
 * each traced process allocate a 1024-slot table, and each fork or
 * posix_spawn of a traced process copy it.  A program that dup2()s onto
 * this fd or closes it is noticed by owned_fd_valid() before any send.
 */
#define PT_HIGH_FD 56

/* Is pt.fd still the file we opened?  Programs close and reuse fds. */
static int owned_fd_valid(void)
{
	dev_t dev;
	ino_t ino;

	return pt.fd >= 0 && pt_sys_fd_identity(pt.fd, &dev, &ino) == 0 &&
	       dev == pt.fd_dev && ino == pt.fd_ino;
}

/* Move fd to PT_HIGH_FD or the first free fd above, close-on-exec. */
static int move_high(int fd)
{
	int hi = pt_sys_fcntl(fd, F_DUPFD_CLOEXEC, PT_HIGH_FD);

	if (hi < 0)
		return fd;
	pt_sys_close(fd);
	return hi;
}

static int connect_socket(const char *path, int owner)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 0, PT_SEND_TIMEOUT_MS * 1000 };
	size_t n = pt_strlen(path);
	int fd;

	if (!n || n >= sizeof sa.sun_path)
		return -1;
	pt_memcpy(sa.sun_path, path, n + 1);
	/* Non-blocking, so that no setsockopt is needed when the collector
	 * keeps up, the common case: a full socket is waited for, at most
	 * PT_SEND_TIMEOUT_MS, where it is met (here, pt_chan_write). */
	fd = pt_sys_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (pt_sys_connect(fd, &sa, sizeof sa) == 0)
		return fd;
	if (errno == EAGAIN) {
		/* The collector's backlog is full, and a Unix socket's connect
		 * cannot be polled for: retry blocking, with a send timeout,
		 * which bounds connect() as well. */
		pt_sys_fcntl(fd, F_SETFL, O_RDWR);
		pt_sys_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (pt_sys_connect(fd, &sa, sizeof sa) == 0)
			return fd;
		/* Timed out.  With no spool to fall back on, stop trying for
		 * good (owner only: a vfork child writes no global). */
		if (errno == EAGAIN && !pt.spool_dir && owner)
			pt.off = 1;
	}
	pt_sys_close(fd);
	return -1;
}

static char *append(char *p, char *end, const char *s)
{
	while (*s && p < end)
		*p++ = *s++;
	return p;
}

static char *append_u64(char *p, char *end, uint64_t v)
{
	char tmp[24];
	int i = 0;

	do
		tmp[i++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (i && p < end)
		*p++ = tmp[--i];
	return p;
}

/*
 * The time in a spool file's name: CLOCK_MONOTONIC through libc rather
 * than pt_now_ns()'s system call.  The spool is the rare path, and a
 * clock_gettime() preloaded before us can fix the name in advance, which
 * is how rel-security plants a link at it.
 */
static uint64_t spool_stamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A spool file of our own: O_EXCL|O_NOFOLLOW so that nothing planted at
 * the name is followed or reused.
 */
static int open_spool(pid_t self)
{
	char name[PATH_MAX];
	char *p = name, *end = name + sizeof name - 1;
	int fd;

	if (!pt.spool_dir)
		return -1;
	p = append(p, end, PT_STR(spool_dir));
	p = append(p, end, "/proftrace-");
	p = append_u64(p, end, (uint64_t)self);
	p = append(p, end, "-");
	p = append_u64(p, end, spool_stamp());
	p = append(p, end, ".ptspool");
	if (p == end)
		return -1;
	*p = '\0';
	fd = pt_sys_open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND |
			O_CLOEXEC, 0600);
	return fd < 0 ? -1 : fd;
}

int pt_chan_write(const struct pt_chan *ch, const void *buf, size_t len)
{
	const char *p = buf;

	if (ch->spool) {
		while (len) {
			ssize_t w = pt_sys_write(ch->fd, p, len);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			p += w;
			len -= (size_t)w;
		}
		return 0;
	}
	for (uint64_t deadline = 0;;) {
		ssize_t w = pt_sys_send(ch->fd, buf, len, MSG_NOSIGNAL);
		uint64_t now;

		if (w == (ssize_t)len)
			return 0;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* Full.  A non-blocking socket waits here, up to
			 * PT_SEND_TIMEOUT_MS in all; one connected blocking
			 * (see connect_socket) has waited out SO_SNDTIMEO. */
			if (!deadline &&
			    pt_sys_fcntl(ch->fd, F_GETFL, 0) & O_NONBLOCK)
				deadline = pt_now_ns() +
					   PT_SEND_TIMEOUT_MS * 1000000ull;
			now = pt_now_ns();
			if (deadline > now) {
				int r = pt_sys_wait_writable(ch->fd,
					(int)((deadline - now) / 1000000 + 1));

				if (r > 0 || (r < 0 && errno == EINTR))
					continue;
			}
			/* The collector is stalled.  Stop waiting on it for
			 * good, so that a long-lived process (make) pays the
			 * timeout once, not once per event (owner only). */
			if (ch->owner)
				pt.off = 1;
		}
		return -1;
	}
}

/* realtime_ns must be read next to now: the collector takes the offset
 * between the two for the process's clock. */
static void hello_body(struct pt_body *b, uint32_t kind, uint64_t start_ns,
		       uint64_t now, uint64_t realtime_ns)
{
	memset(b, 0, sizeof *b);
	b->type = PT_REC_HELLO;
	b->fixed_len = sizeof(struct pt_rec_hello);
	pt_put32(b->fixed + 0, (uint32_t)pt_sys_getppid());
	/* uid (+4) stays 0: the collector has it from SO_PEERCRED. */
	pt_put32(b->fixed + 8, kind);
	pt_put64(b->fixed + 16, realtime_ns);
	pt_put64(b->fixed + 24, start_ns ? start_ns : now);
}

int pt_conn_open(struct pt_chan *ch, uint32_t hello_kind, uint64_t start_ns,
		 pid_t self)
{
	struct pt_body b;
	uint64_t now = pt_now_ns(), realtime_ns = pt_realtime_ns();

	ch->temp = 1;
	ch->spool = 0;
	ch->pid = self;
	ch->owner = self == pt.owner;
	ch->fd = connect_socket(PT_STR(socket_path), ch->owner);
	if (ch->fd < 0) {
		ch->fd = open_spool(self);
		ch->spool = 1;
	}
	if (ch->fd < 0)
		return -1;
	hello_body(&b, hello_kind, start_ns, now, realtime_ns);
	b.want_cwd = hello_kind != PT_HELLO_AUX;
	if (pt_send_record(ch, &b, now) < 0) {
		pt_chan_put(ch);
		return -1;
	}
	return 0;
}

void pt_chan_put(struct pt_chan *ch)
{
	if (ch->temp && ch->fd >= 0)
		pt_sys_close(ch->fd);
	ch->fd = -1;
	ch->temp = 0;
}

/* Make ch the process's own connection (owner context only). */
static void adopt(struct pt_chan *ch)
{
	ch->fd = move_high(ch->fd);
	if (pt_sys_fd_identity(ch->fd, &pt.fd_dev, &pt.fd_ino) < 0) {
		pt_sys_close(ch->fd);
		ch->fd = -1;
	}
	pt.fd = ch->fd;
	pt.spool = ch->spool;
	ch->temp = 0;
}

void pt_conn_start_image(char *const *argv, char *const *envp)
{
	struct pt_chan ch;
	struct pt_body b;
	/* The HELLO is stamped with the image's start, not a second clock
	 * reading a few microseconds later: start_ns then costs the capture
	 * one byte instead of three of noise. */
	uint64_t now = pt.start_ns;

	pt.fd = -1;
	ch.temp = 0;
	ch.spool = 0;
	ch.pid = pt.owner;
	ch.owner = 1;
	ch.fd = connect_socket(PT_STR(socket_path), 1);
	if (ch.fd < 0) {
		ch.fd = open_spool(pt.owner);
		ch.spool = 1;
	}
	if (ch.fd < 0) {
		pt.off = 1;     /* nobody listening: stay out of the way */
		return;
	}
	adopt(&ch);
	hello_body(&b, PT_HELLO_IMAGE, pt.start_ns, now, pt.start_realtime_ns);
	b.exe = (const char *)getauxval(AT_EXECFN);
	b.argv = argv;
	b.envp = envp;
	b.want_cwd = 1;
	if (pt_send_record(&ch, &b, now) < 0 && !ch.spool) {
		pt_sys_close(pt.fd);    /* collector stalled: stop waiting */
		pt.fd = -1;
	}
}

void pt_conn_after_fork(uint64_t fork_ns)
{
	pt.owner = pt_sys_getpid();
	pt.fork_pending = pt.fd >= 0;
	pt.forked = 1;
	pt.start_ns = fork_ns;
	pt.base_utime_us = pt.base_stime_us = 0;    /* rusage restarts at fork */
	pt.exit_how = 0;
	pt.exit_sent = 0;
	pt.mbox_slot = 0;
	pt_defer_forget();
}

/*
 * A fork child that does more than exec gets its own connection, so its
 * end is seen (EOF) even if it is killed.
 */
static void fork_child_connect(void)
{
	struct pt_chan ch;
	int inherited = pt.fd;

	if (!__atomic_exchange_n(&pt.fork_pending, 0, __ATOMIC_ACQ_REL))
		return;
	if (pt_conn_open(&ch, PT_HELLO_FORK, pt.start_ns, pt.owner) < 0) {
		pt.fd = -1;
	} else {
		adopt(&ch);
	}
	if (inherited >= 0 && inherited != pt.fd)
		pt_sys_close(inherited);
}

int pt_chan_get(struct pt_chan *ch, enum pt_chan_use use, pid_t self)
{
	ch->temp = 0;
	ch->spool = pt.spool;
	ch->fd = -1;
	if (!pt.ready || pt.off)
		return -1;
	ch->pid = self ? self : pt_sys_getpid();
	ch->owner = ch->pid == pt.owner;
	if (!ch->owner) {
		/* Foreign: read-only use of pt, else a connection of our own. */
		if (owned_fd_valid()) {
			ch->fd = pt.fd;
			return 0;
		}
		return pt_conn_open(ch, PT_HELLO_FOREIGN, 0, ch->pid);
	}
	if (pt.fork_pending && use != PT_USE_EXEC)
		fork_child_connect();
	if (owned_fd_valid()) {
		ch->fd = pt.fd;
		return 0;
	}
	/*
	 * The program closed our fd (or a fork child's inherited one is
	 * gone): open a replacement.  AUX, because this process already said
	 * HELLO; only a fork child that never did says so now.
	 */
	if (pt_conn_open(ch, pt.fork_pending ? PT_HELLO_FORK : PT_HELLO_AUX,
			 pt.start_ns, ch->pid) < 0)
		return -1;
	pt.fork_pending = 0;
	adopt(ch);
	return 0;
}
