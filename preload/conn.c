/*
 * Connections to the collector, the spool-file fallback, and getting
 * records (laid out by encode.c) across them.
 *
 * A program image owns one connection, opened by the constructor: the run
 * log, where it may have it (open_log; doc/design.md, "The transport"),
 * else a socket, else a spool file.  A fork
 * child keeps using its parent's (inherited) connection for an exec, which
 * is all most fork children do, and opens its own only for anything else:
 * that keeps fork+exec at one connection per program.  A child that shares
 * memory with its parent (vfork, clone) writes no global state, so it uses
 * the inherited connection, or one it opens and closes itself.  Under a
 * hard open-file limit of PT_HIGH_FD or less, where every fd is one the
 * program could open, the image keeps none (pt.transient): each event
 * opens a connection of its own (doc/reliability.md, D1).
 *
 * Sends are bounded: a stalled collector holds a process at most
 * PT_SEND_TIMEOUT_MS per connect() or send() (a non-blocking socket and
 * ppoll, or, when the backlog was full at connect(), SO_SNDTIMEO); after
 * one timeout the process stops waiting on it for good (design.md,
 * pitfall 8).
 *
 * A frame too large for one message travels on a connection of its own,
 * so that its messages cannot interleave with another thread's frames;
 * in the run log or a spool file, any frame is one write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pt-log.h"
#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

#define PT_SEND_TIMEOUT_MS 250
#define PT_SMALL_FRAME 4096             /* stack buffer, hence the size */

/* Is pt.fd still the file we opened?  Programs close and reuse fds. */
static int owned_fd_valid(void)
{
	dev_t dev;
	ino_t ino;

	return pt.fd >= 0 && pt_sys_fd_identity(pt.fd, &dev, &ino) == 0 &&
	       dev == pt.fd_dev && ino == pt.fd_ino;
}

int pt_conn_owns(int fd)
{
	int saved = errno, r = fd >= 0 && fd == pt.fd && owned_fd_valid();

	pt_errno_restore(saved);
	return r;
}

/*
 * A copy of fd where a program under this soft limit cannot reach and
 * that takes nothing from what it can open: at the limit itself, which
 * is let up by one for the F_DUPFD and put back.  -1 if the hard limit
 * leaves no room, or the limit is too high for the kernel's embedded
 * table.
 */
static int dup_above_limit(int fd, const struct pt_nofile *l)
{
	struct pt_nofile up = { l->cur + 1, l->max };
	int hi;

	if (l->cur >= l->max || l->cur > PT_TABLE_FDS || l->cur < 3 ||
	    pt_sys_set_nofile(&up) < 0)
		return -1;
	hi = pt_sys_fcntl(fd, F_DUPFD_CLOEXEC, (long)l->cur);
	pt_sys_set_nofile(l);
	pt.fd_at_limit = hi;
	return hi;
}

/*
 * Copy fd, close-on-exec, to from or the first free fd above it; under a
 * soft limit that leaves no room there, above the limit, or else, if
 * low, to the highest free fd below it (one the program could have
 * opened).  Never to 0-2.  Returns the copy, or -1; fd stays open either
 * way.
 */
static int place_fd(int fd, int from, int low)
{
	struct pt_nofile l;
	int hi = pt_sys_fcntl(fd, F_DUPFD_CLOEXEC, from);
	long top;

	if (hi >= 0 || pt_sys_get_nofile(&l) < 0)
		return hi;
	if ((hi = dup_above_limit(fd, &l)) >= 0 || !low)
		return hi;
	top = l.cur < (unsigned long long)from ? (long)l.cur : from;
	for (long t = top - 1; hi < 0 && t >= 3; t--)
		hi = pt_sys_fcntl(fd, F_DUPFD_CLOEXEC, t);
	return hi;
}

/*
 * Move fd out of the program's way (place_fd), not onto one it could
 * open; -1 (fd closed) if there is no such room.
 */
static int move_high(int fd)
{
	int hi = place_fd(fd, PT_HIGH_FD, 0);

	pt_sys_close(fd);
	return hi;
}

int pt_conn_step_aside(void)
{
	struct pt_nofile l;
	int saved = errno, hi;

	/* Above the soft limit, the program cannot reach it: the kernel
	 * refuses its dup2 there as it would untraced. */
	if (pt_sys_get_nofile(&l) == 0 && (unsigned long long)pt.fd >= l.cur)
		return 0;
	hi = place_fd(pt.fd, pt.fd + 1, 1);
	if (hi >= 0) {
		pt_sys_close(pt.fd);
		pt.fd = hi;
	}
	pt_errno_restore(saved);
	return hi < 0 ? -1 : 0;
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

	/* Never onto a descriptor not known to be ours: callers check
	 * first (pt_chan_check), this is the net under a missed one. */
	if (ch->unchecked && !owned_fd_valid())
		return -1;
	if (ch->log)
		return pt_log_put(ch->fd, ch->stream, 0, buf, len);
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

/*
 * Open a connection (socket, else spool file) for process self that starts
 * with a HELLO of the given kind.  Returns 0 and fills ch, or -1.  Safe in
 * foreign context.  Declared ahead: a record too large for one message
 * is sent over a connection of its own, opened by this.
 */
static int conn_open(struct pt_chan *ch, uint32_t hello_kind,
		     uint64_t start_ns, pid_t self);

/* Send a whole frame held in memory over a connection of its own. */
static int send_alone(struct pt_chan *ch, const unsigned char *frame, size_t n)
{
	struct pt_chan aux;
	size_t off;
	int rc = 0;

	if (ch->spool || ch->log)       /* a file takes any size in one write */
		return pt_chan_write(ch, frame, n);
	if (conn_open(&aux, PT_HELLO_AUX, 0, ch->pid) < 0)
		return -1;
	for (off = 0; off < n && rc == 0; off += PT_MSG_MAX) {
		size_t k = n - off < PT_MSG_MAX ? n - off : PT_MSG_MAX;

		rc = pt_chan_write(&aux, frame + off, k);
	}
	pt_chan_put(&aux);
	return rc;
}

/* Owner context: the large frame in memory, deflated if that helps. */
static int send_large_owned(struct pt_chan *ch, const struct pt_body *b,
			    size_t raw, uint64_t t)
{
	size_t n;
	unsigned char *frame = pt_encode_alloc(ch, b, raw, t, &n);
	int rc;

	if (!frame)
		return -1;
	rc = send_alone(ch, frame, n);
	free(frame);
	return rc;
}

static int chan_sink(void *ch, const void *p, size_t n)
{
	return pt_chan_write(ch, p, n);
}

/* Foreign context: stream the frame raw through a stack buffer. */
static int send_large_streamed(struct pt_chan *ch, const struct pt_body *b,
			       size_t raw, uint64_t t)
{
	unsigned char buf[PT_SMALL_FRAME];
	struct pt_chan aux = *ch;
	int rc;

	if (!ch->spool && conn_open(&aux, PT_HELLO_AUX, 0, ch->pid) < 0)
		return -1;
	rc = pt_encode_stream(ch, b, raw, t, buf, sizeof buf, chan_sink, &aux);
	if (!ch->spool)
		pt_chan_put(&aux);
	return rc;
}

/*
 * A frame too large for the stack buffer, a rare path that may take more
 * stack: measure it, with the working directory in a buffer of its own so
 * that both passes see the same one, and send it as one piece.
 */
static __attribute__((noinline)) int send_large(struct pt_chan *ch,
						const struct pt_body *b,
						uint64_t t)
{
	char cwd[PATH_MAX];
	struct pt_body full = *b;
	size_t raw;

	if (b->want_cwd && !b->cwd) {
		full.want_cwd = 0;
		full.cwd = pt_sys_getcwd(cwd, sizeof cwd);
	}
	raw = pt_encode_body_size(&full);
	if (raw > PT_FRAME_MAX)
		return -1;              /* the collector would refuse it */
	if (ch->owner && !pt.forked)
		return send_large_owned(ch, &full, raw, t);
	return send_large_streamed(ch, &full, raw, t);
}

int pt_send_record(struct pt_chan *ch, const struct pt_body *b, uint64_t t)
{
	unsigned char buf[PT_SMALL_FRAME];
	size_t n;
	int saved = errno, rc;

	if (ch->fd < 0)
		return -1;
	n = pt_encode_record(ch, b, t, buf, sizeof buf);
	rc = n ? pt_chan_write(ch, buf, n) : send_large(ch, b, t);
	pt_errno_restore(saved);
	return rc;
}

/*
 * Inode of the caller's pid namespace, 0 if /proc is not there.  The pids
 * a process sees are its namespace's, the collector's are its own
 * (SO_PEERCRED): with this the collector tells apart two sandboxes whose
 * processes have the same pids.
 */
static uint32_t pidns_of_self(void)
{
	char buf[32];
	ssize_t n = pt_sys_readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
	uint32_t ino = 0;
	ssize_t i;

	if (n <= 5 || memcmp(buf, "pid:[", 5))
		return 0;
	for (i = 5; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		ino = ino * 10 + (uint32_t)(buf[i] - '0');
	return ino;
}

/* realtime_ns must be read next to now: the collector takes the offset
 * between the two for the process's clock.  self: the sender's pid. */
static void hello_body(struct pt_body *b, uint32_t kind, uint64_t start_ns,
		       uint64_t now, uint64_t realtime_ns, pid_t self)
{
	memset(b, 0, sizeof *b);
	b->type = PT_REC_HELLO;
	b->fixed_len = sizeof(struct pt_rec_hello);
	pt_wire_put32(b->fixed + PT_OFF(pt_rec_hello, ppid),
		      (uint32_t)pt_sys_getppid());
	/* uid stays 0: the collector has it from SO_PEERCRED. */
	pt_wire_put32(b->fixed + PT_OFF(pt_rec_hello, kind), kind);
	/* A fork child changes namespace only as the first process of a new
	 * one (unshare --fork): pid 1.  A foreign process (clone, vfork) may
	 * be anywhere.  Only the owner keeps the value: a vfork child shares
	 * its parent's memory. */
	if (kind == PT_HELLO_IMAGE || kind == PT_HELLO_FOREIGN ||
	    (self == 1 && kind == PT_HELLO_FORK)) {
		/* An image's own was read by open_log at its start, if at
		 * all: pt is new with each image. */
		uint32_t ns = kind == PT_HELLO_IMAGE && pt.pidns ?
			      pt.pidns : pidns_of_self();

		if (self == pt.owner)
			pt.pidns = ns;
		pt_wire_put32(b->fixed + PT_OFF(pt_rec_hello, pidns), ns);
	} else {
		pt_wire_put32(b->fixed + PT_OFF(pt_rec_hello, pidns), pt.pidns);
	}
	pt_wire_put64(b->fixed + PT_OFF(pt_rec_hello, realtime_ns), realtime_ns);
	pt_wire_put64(b->fixed + PT_OFF(pt_rec_hello, start_ns),
		      start_ns ? start_ns : now);
}

/* Say HELLO of kind on ch, for ch->pid (which starts a connection or a
 * stream).  now and realtime_ns are read together; 0, or -1. */
static int send_hello(struct pt_chan *ch, uint32_t kind, uint64_t start_ns,
		      uint64_t now, uint64_t realtime_ns)
{
	struct pt_body b;

	hello_body(&b, kind, start_ns, now, realtime_ns, ch->pid);
	b.want_cwd = kind != PT_HELLO_AUX;
	return pt_send_record(ch, &b, now);
}

static int conn_open(struct pt_chan *ch, uint32_t hello_kind,
		     uint64_t start_ns, pid_t self)
{
	uint64_t now = pt_now_ns(), realtime_ns = pt_realtime_ns();

	ch->temp = 1;
	ch->spool = 0;
	ch->log = 0;
	ch->unchecked = 0;
	ch->stream = 0;
	ch->pid = self;
	ch->owner = self == pt.owner;
	ch->fd = connect_socket(PT_STR(socket_path), ch->owner);
	if (ch->fd < 0) {
		ch->fd = open_spool(self);
		ch->spool = 1;
	}
	if (ch->fd < 0)
		return -1;
	if (send_hello(ch, hello_kind, start_ns, now, realtime_ns) < 0) {
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

/* Make ch, placed already and known to be the file dev:ino, the
 * process's own connection (owner only). */
static void adopt_known(struct pt_chan *ch, dev_t dev, ino_t ino)
{
	pt.fd_dev = dev;
	pt.fd_ino = ino;
	pt.fd = ch->fd;
	pt.spool = ch->spool;
	pt.log = ch->log;
	pt.log_stream = ch->stream;
	ch->temp = 0;
}

/* Make ch, placed already, the process's own connection (owner only). */
static void adopt_placed(struct pt_chan *ch)
{
	dev_t dev = 0;
	ino_t ino = 0;

	if (ch->fd >= 0 && pt_sys_fd_identity(ch->fd, &dev, &ino) < 0) {
		pt_sys_close(ch->fd);
		ch->fd = -1;
	}
	adopt_known(ch, dev, ino);
}

/* Decimal digits of v ending at end (exclusive); returns the first. */
static char *put_dec(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* Make ch the process's own connection (owner context only). */
static void adopt(struct pt_chan *ch)
{
	ch->fd = move_high(ch->fd);
	adopt_placed(ch);
}

/*
 * The run log, open at PT_HIGH_FD in ch and made the image's own, if it
 * may use it: it is named, this process is in the collector's pid
 * namespace (its pids are the collector's), the name still leads to the
 * run log, and the open succeeds (a sandbox's /proc or user namespace,
 * or another uid, refuses it).  0, or -1: use the socket.
 *
 * The name is /proc/PID/fd/N of the collector.  A process that outlives
 * its run (a build server) keeps the variable: by then PID may be another
 * process and N any file of it, which must be neither opened (a FIFO
 * would block, a device may act on it) nor written.  So the file's
 * identity is checked first, by its name; the check also gives what
 * owned_fd_valid() compares with, so it costs no call of its own.
 */
static int open_log(struct pt_chan *ch)
{
	struct statx stx;
	int fd, hi;

	if (!pt.log_path)
		return -1;
	pt.pidns = pidns_of_self();     /* the HELLO's too */
	if (pt.pidns != pt.log_pidns ||
	    pt_sys_path_stat(PT_STR(log_path), &stx) < 0 ||
	    !S_ISREG(stx.stx_mode) || stx.stx_nlink != 0 ||
	    stx.stx_ino != pt.log_ino || pt_statx_dev(&stx) != pt.log_dev)
		return -1;
	fd = pt_sys_open(PT_STR(log_path), O_WRONLY | O_APPEND | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	hi = place_fd(fd, PT_HIGH_FD, 0);
	pt_sys_close(fd);
	if (hi < 0)
		return -1;
	ch->fd = hi;
	ch->log = 1;
	ch->stream = (uint32_t)pt.owner;
	adopt_known(ch, (dev_t)pt.log_dev, (ino_t)pt.log_ino);
	return 0;
}

/* Send the image's HELLO, b filled up to its program's path, on ch. */
static void image_hello(struct pt_chan *ch, struct pt_body *b, uint64_t now,
			char *const *argv, char *const *envp)
{
	char cpu[48];

	b->argv = argv;
	b->envp = envp;
	b->want_cwd = 1;
	/* What the process ran before this image (a fork child's work up to
	 * its exec) is in its rusage now, and in no record otherwise. */
	if (pt.base_utime_us || pt.base_stime_us) {
		char *s = put_dec(cpu + sizeof cpu - 1, pt.base_stime_us);

		cpu[sizeof cpu - 1] = '\0';
		*--s = ' ';
		b->cpu_before = put_dec(s, pt.base_utime_us);
	}
	if (pt_send_record(ch, b, now) < 0 && !ch->spool && !ch->temp) {
		pt_sys_close(pt.fd);    /* collector stalled: stop waiting */
		pt.fd = -1;
	}
}

/*
 * image_hello() with the program's path the kernel's.  Apart, for its
 * PATH_MAX buffer: that much more stack below the constructor is a page
 * more that every image would fault in.
 */
static __attribute__((noinline)) void image_hello_by_fd(struct pt_chan *ch,
							struct pt_body *b,
							uint64_t now,
							char *const *argv,
							char *const *envp)
{
	char exe[PATH_MAX];
	ssize_t n = pt_sys_readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n > 0) {
		exe[n] = '\0';
		b->exe = exe;
	}
	image_hello(ch, b, now, argv, envp);
}

void pt_conn_start_image(char *const *argv, char *const *envp)
{
	struct pt_chan ch;
	struct pt_body b;
	/* The HELLO is stamped with the image's start, not a second clock
	 * reading a few microseconds later: start_ns then costs the capture
	 * one byte instead of three of noise. */
	uint64_t now = pt.start_ns;
	int hi;

	pt.fd = -1;
	ch.temp = 0;
	ch.spool = 0;
	ch.log = 0;
	ch.unchecked = 0;
	ch.stream = 0;
	ch.pid = pt.owner;
	ch.owner = 1;
	if (open_log(&ch) == 0)
		goto hello;
	ch.fd = connect_socket(PT_STR(socket_path), 1);
	if (ch.fd < 0) {
		ch.fd = open_spool(pt.owner);
		ch.spool = 1;
	}
	if (ch.fd < 0) {
		pt.off = 1;     /* nobody listening: stay out of the way */
		return;
	}
	hi = place_fd(ch.fd, PT_HIGH_FD, 0);
	if (hi < 0 && !ch.spool) {
		/* Under a hard limit of 56 or less, no descriptor is out of the
		 * program's reach: one connection per event, this one first,
		 * each opened by a HELLO of kind AUX, so that its end means
		 * nothing (the image's end is its EXIT, or its parent's REAP). */
		pt.transient = 1;
		ch.temp = 1;
		if (send_hello(&ch, PT_HELLO_AUX, 0, now,
			       pt.start_realtime_ns) < 0) {
			pt_chan_put(&ch);
			return;
		}
	} else {
		pt_sys_close(ch.fd);
		ch.fd = hi;
		adopt_placed(&ch);
		if (pt.fd < 0) {
			pt.off = 1;     /* no room for it out of the program's way */
			return;
		}
	}
hello:
	hello_body(&b, PT_HELLO_IMAGE, pt.start_ns, now, pt.start_realtime_ns,
		   pt.owner);
	b.exe = (const char *)getauxval(AT_EXECFN);
	/* fexecve and execveat(dirfd, ...) name the program by a descriptor
	 * gone by now ("/dev/fd/3", "/dev/fd/3/sh"): the kernel's path is
	 * the one to keep. */
	if (b.exe && !pt_strncmp(b.exe, "/dev/fd/", 8))
		image_hello_by_fd(&ch, &b, now, argv, envp);
	else
		image_hello(&ch, &b, now, argv, envp);
	pt_chan_put(&ch);
}

#define PT_LOG_ASKS 8     /* spawns and forks after which we stop asking */

void pt_conn_learn_log(struct pt_chan *ch)
{
	char buf[192];
	ssize_t n;
	int saved = errno;

	if (!ch->owner || ch->temp || pt.env_log || pt.log || pt.spool ||
	    pt.transient || pt.fd < 0 || pt.log_asks >= PT_LOG_ASKS)
		return;
	pt.log_asks++;
	/* Only from our own socket: the program's data is not ours to take. */
	if (pt_chan_check(ch) == 0 && ch->fd == pt.fd && !ch->temp) {
		n = pt_sys_recv(pt.fd, buf, sizeof buf - 1, MSG_DONTWAIT);
		if (n > (ssize_t)sizeof PT_ENV_LOG &&
		    !pt_strncmp(buf, PT_ENV_LOG "=", sizeof PT_ENV_LOG)) {
			buf[n] = '\0';
			if (pt_env_take_log(buf + sizeof PT_ENV_LOG) == 0)
				pt.log_asks = PT_LOG_ASKS;
		}
	}
	pt_errno_restore(saved);
}

void pt_conn_after_fork(void)
{
	pt.fork_pending = pt.fd >= 0;
	/* The first process of a new pid namespace (unshare --fork): the
	 * parent's connection speaks of the parent's pids, not of ours. */
	if (pt.owner == 1 && pt.fd >= 0) {
		pt_sys_close(pt.fd);
		pt.fd = -1;
	}
}

static int use_own(struct pt_chan *ch);

/*
 * A fork child that does more than exec gets its own connection, so its
 * end is seen (EOF) even if it is killed.  With the run log that is a
 * stream of its own in the file it inherited: no call but the HELLO's
 * write, and the collector watches its pid for the end.
 */
static void fork_child_connect(void)
{
	struct pt_chan ch;
	uint64_t now;

	if (!__atomic_exchange_n(&pt.fork_pending, 0, __ATOMIC_ACQ_REL))
		return;
	if (pt.log && owned_fd_valid()) {
		pt.log_stream = (uint32_t)pt.owner;
		use_own(&ch);
		ch.temp = 0;
		ch.pid = pt.owner;
		ch.owner = 1;
		now = pt_now_ns();
		send_hello(&ch, PT_HELLO_FORK, pt.start_ns, now,
			   pt_realtime_ns());
		return;
	}
	/* The parent's copy goes first, so that ours takes its number; but
	 * only if it still is ours: the program may have put a file there. */
	if (owned_fd_valid())
		pt_sys_close(pt.fd);
	pt.fd = -1;
	if (conn_open(&ch, PT_HELLO_FORK, pt.start_ns, pt.owner) == 0)
		adopt(&ch);
}

/* ch to use the process's own channel, as it is now. */
static int use_own(struct pt_chan *ch)
{
	ch->unchecked = 0;
	ch->fd = pt.fd;
	ch->spool = pt.spool;
	ch->log = pt.log;
	ch->stream = pt.log_stream;
	return 0;
}

/* The owner's channel for ch->pid, checked to be ours still; else a
 * replacement, opened and made the process's own.  0, or -1. */
static int chan_checked(struct pt_chan *ch)
{
	if (owned_fd_valid())
		return use_own(ch);
	if (pt.transient)       /* a connection for this event alone */
		return conn_open(ch, PT_HELLO_AUX, pt.start_ns, ch->pid);
	/*
	 * The program closed our fd (or a fork child's inherited one is
	 * gone): open a replacement.  AUX, because this process already said
	 * HELLO; only a fork child that never did says so now.
	 */
	if (conn_open(ch, pt.fork_pending ? PT_HELLO_FORK : PT_HELLO_AUX,
			 pt.start_ns, ch->pid) < 0)
		return -1;
	pt.fork_pending = 0;
	adopt(ch);
	return use_own(ch);
}

int pt_chan_get(struct pt_chan *ch, enum pt_chan_use use, pid_t self)
{
	ch->temp = 0;
	ch->spool = pt.spool;
	ch->log = 0;
	ch->unchecked = 0;
	ch->fd = -1;
	if (!pt.ready || pt.off)
		return -1;
	ch->pid = self ? self : pt_sys_getpid();
	ch->owner = ch->pid == pt.owner;
	if (!ch->owner) {
		/* Foreign: read-only use of pt, else a connection of our own.
		 * The owner's connection says which pid namespace its frames
		 * are in: a copy in another one (bwrap's pid 1 and its
		 * children) needs a connection of its own. */
		if (owned_fd_valid() && pidns_of_self() == pt.pidns)
			return use_own(ch);
		return conn_open(ch, PT_HELLO_FOREIGN, 0, ch->pid);
	}
	if (pt.fork_pending && use != PT_USE_EXEC)
		fork_child_connect();
	/* A SPAWN, a FORK or a fork child's EXEC usually waits in memory
	 * for the child's REAP, written with it after that REAP's check:
	 * checking now too would cost every spawn a statx for nothing. */
	if (use != PT_USE_EVENT && pt.fd >= 0 && !pt.transient) {
		use_own(ch);
		ch->unchecked = 1;
		return 0;
	}
	return chan_checked(ch);
}

int pt_chan_check(struct pt_chan *ch)
{
	int saved = errno, rc = 0;

	if (ch->unchecked && !owned_fd_valid())
		rc = chan_checked(ch);
	ch->unchecked = 0;
	pt_errno_restore(saved);
	return rc;
}
