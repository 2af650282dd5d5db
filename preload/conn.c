/*
 * Getting records (laid out by encode.c) to the collector: the run log,
 * a connection, or a spool file.
 *
 * The library holds no descriptor while the program's own code runs
 * (doc/design.md, "The transport").  Each call of ours that writes opens
 * its descriptor at its first write and closes it before it returns
 * (pt_chan_get, pt_chan_write, pt_chan_put): the run log, where this
 * image may have it (log_usable), else a connection to the socket, else
 * a spool file.  On the socket, every connection starts with a HELLO of
 * kind AUX (FOREIGN from a vfork or clone child), so that its end means
 * nothing: the image's end is its EXIT, its parent's REAP, or what the
 * collector sees of its pid.  In a process that may have other threads,
 * the descriptor lives in a descriptor table of its own (alone.c).
 *
 * Sends are bounded: a stalled collector holds a process at most
 * PT_SEND_TIMEOUT_MS per connect() or send() (a non-blocking socket and
 * ppoll, or, when the backlog was full at connect(), SO_SNDTIMEO); after
 * one timeout the process stops waiting on it for good (design.md,
 * pitfall 8).
 *
 * A frame larger than one message goes in pieces over the connection
 * that call opened, which no other thread writes to; in the run log or a
 * spool file, any frame is one write.
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
	char tmp[24] = "";

	return append(p, end, pt_put_dec(tmp + sizeof tmp - 1, v));
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
 * the name is followed or reused.  The owner of an image writes all its
 * events to one, reopened by its name (*again set): a spool file stands
 * for a connection.
 */
static int open_spool(pid_t self, int owner, int *again)
{
	char name[PATH_MAX];
	char *p = name, *end = name + sizeof name - 1;
	int fd;

	*again = 0;
	if (!pt.spool_dir)
		return -1;
	if (owner && pt.spool_name) {
		fd = pt_sys_open(PT_STR(spool_name), O_WRONLY | O_APPEND |
				 O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd >= 0) {
			*again = 1;
			return fd;
		}
	}
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
	if (fd >= 0 && owner)
		pt.spool_name = pt_env_pool_string(name);
	return fd < 0 ? -1 : fd;
}


/* Send one message on ch's connection, waiting for room at most
 * PT_SEND_TIMEOUT_MS: 0, or -1. */
static int sock_send(const struct pt_chan *ch, const void *buf, size_t len)
{
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

static int send_hello(struct pt_chan *ch, uint32_t kind, uint64_t start_ns,
		      uint64_t now, uint64_t realtime_ns);

/*
 * The run log, opened for one write (or a few, within one call of ours):
 * only if its name still leads to it.  A process that outlives its run
 * (a build server) keeps the name; by then the collector's pid may be
 * another process's and N any file of it, which must be neither opened
 * (a FIFO would block, a device may act on it) nor written.  The file's
 * identity is checked by its name first (rel-security S8).  The fd, or
 * -1.
 */
static int open_log_now(void)
{
	struct statx stx;

	if (pt_sys_path_stat(PT_STR(log_path), &stx) < 0 ||
	    !S_ISREG(stx.stx_mode) || stx.stx_nlink != 0 ||
	    stx.stx_ino != pt.log_ino || pt_statx_dev(&stx) != pt.log_dev)
		return -1;
	return pt_sys_open(PT_STR(log_path), O_WRONLY | O_APPEND | O_CLOEXEC,
			   0);
}

/*
 * Open ch's descriptor in the calling thread's descriptor table, for
 * the frame first (len bytes) to be written on it: the run log, or a
 * connection (else a spool file) that says ch->hello first, so that the
 * collector binds nothing to its end.  0, or -1.
 */
static int chan_open(struct pt_chan *ch, const void *first, size_t len)
{
	uint64_t now;
	int again = 0;

	if (ch->kind == PT_CHAN_LOG) {
		ch->fd = open_log_now();
		if (ch->fd >= 0)
			return 0;
		/* It opened at the image's start, and no longer: the
		 * collector is gone, or the process gave up what let it
		 * open another's /proc/PID/fd (bwrap drops its
		 * capabilities).  The socket from now on. */
		ch->kind = PT_CHAN_SOCK;
		if (ch->owner && pt.chan == PT_CHAN_LOG)
			pt.chan = PT_CHAN_SOCK;
	}
	ch->spool = 0;
	ch->fd = connect_socket(PT_STR(socket_path), ch->owner);
	if (ch->fd < 0) {
		ch->fd = open_spool(ch->pid, ch->owner, &again);
		ch->spool = 1;
	}
	if (ch->fd < 0)
		return -1;
	if (!ch->hello || again)
		return 0;
	/* Stamped with the first frame's time, not later: a HELLO after
	 * the event it carries would start the process anew.  Only a
	 * process's first HELLO gives the clocks' offset, and AUX never is
	 * one. */
	now = len >= PT_FRAME_HDR ?
	      pt_wire_get64((const unsigned char *)first +
			    PT_OFF(pt_frame_header, time_ns)) : pt_now_ns();
	if (send_hello(ch, ch->hello, ch->start_ns, now,
		       ch->hello == PT_HELLO_AUX ? 0 : pt_realtime_ns()) < 0) {
		pt_chan_put(ch);
		return -1;
	}
	return 0;
}

/* Write buf to ch's open descriptor: one run log record, a spool file's
 * bytes, or messages of at most PT_MSG_MAX.  0, or -1. */
static int fd_write(const struct pt_chan *ch, const void *buf, size_t len)
{
	const char *p = buf;

	if (ch->kind == PT_CHAN_LOG)
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
	for (size_t off = 0; off < len; off += PT_MSG_MAX)
		if (sock_send(ch, p + off, len - off < PT_MSG_MAX ?
				       len - off : PT_MSG_MAX) < 0)
			return -1;
	return 0;
}

/* What alone_write() hands the thread it starts. */
struct alone_write {
	struct pt_chan ch;
	const void *buf;
	size_t len;
};

static int alone_write_fn(void *arg)
{
	struct alone_write *a = arg;
	int rc = -1;

	if (chan_open(&a->ch, a->buf, a->len) == 0)
		rc = fd_write(&a->ch, a->buf, a->len);
	pt_chan_put(&a->ch);
	return rc;
}

/*
 * Another thread of the program may close any descriptor and open its
 * own file at that number at any moment: one we opened here could be its
 * file by the time we write to it or close it.  So in a process that may
 * have other threads, the descriptor is opened, written and closed in a
 * descriptor table of its own (pt_alone_run).
 */
static int alone_write(const struct pt_chan *ch, const void *buf, size_t len)
{
	struct alone_write a = { *ch, buf, len };

	a.ch.fd = -1;
	a.ch.direct = 1;
	return pt_alone_run(alone_write_fn, &a);
}

int pt_chan_write(struct pt_chan *ch, const void *buf, size_t len)
{
	if (!ch->kind)
		return -1;
	if (ch->fd < 0) {
		if (!ch->direct && !pt_alone_safe(ch->owner))
			return alone_write(ch, buf, len);
		if (chan_open(ch, buf, len) < 0)
			return -1;
	}
	return fd_write(ch, buf, len);
}

void pt_chan_put(struct pt_chan *ch)
{
	if (ch->fd >= 0)
		pt_sys_close(ch->fd);
	ch->fd = -1;
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
	rc = pt_chan_write(ch, frame, n);
	free(frame);
	return rc;
}

static int chan_sink(void *ch, const void *p, size_t n)
{
	return pt_chan_write(ch, p, n);
}

/*
 * Foreign context, or a fork child: stream the frame raw through a stack
 * buffer, in pieces that must reach the collector as one frame: over a
 * connection of their own (a run log record is one write), opened and
 * closed here, in this process's own descriptor table (a fork or vfork
 * child's).
 */
static int send_large_streamed(struct pt_chan *ch, const struct pt_body *b,
			       size_t raw, uint64_t t)
{
	unsigned char buf[PT_SMALL_FRAME];
	struct pt_chan aux = *ch;
	int rc;

	aux.fd = -1;
	aux.direct = 1;
	if (aux.kind == PT_CHAN_LOG) {
		aux.kind = PT_CHAN_SOCK;
		aux.hello = PT_HELLO_AUX;
	}
	rc = pt_encode_stream(ch, b, raw, t, buf, sizeof buf, chan_sink, &aux);
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

	if (!ch->kind)
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
		/* An AUX HELLO: the namespace its connection's pids are in,
		 * read once (a new namespace's first process forgot its
		 * parent's, pt_conn_after_fork). */
		uint32_t ns = pt.pidns;

		if (!ns && self == pt.owner)
			ns = pt.pidns = pidns_of_self();
		pt_wire_put32(b->fixed + PT_OFF(pt_rec_hello, pidns), ns);
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
		char *s = pt_put_dec(cpu + sizeof cpu - 1, pt.base_stime_us);

		cpu[sizeof cpu - 1] = '\0';
		*--s = ' ';
		b->cpu_before = pt_put_dec(s, pt.base_utime_us);
	}
	/* A stalled collector (pt.off) is waited for no more. */
	pt_send_record(ch, b, now);
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


/*
 * The daemon's run log, for an image started without its name (by hand,
 * with LD_PRELOAD alone): the daemon writes the name beside its socket
 * (SOCKET.log), readable by its user only.  Read once, by an image with
 * no PROFTRACE_LOG; its children are given the name with the others
 * (pt_env_take_log).
 */
static __attribute__((noinline)) void learn_log(void)
{
	char name[PT_SUN_PATH_MAX + 8], buf[192];
	size_t n = pt_strlen(PT_STR(socket_path));
	ssize_t got;
	int fd;

	if (!n || n + sizeof ".log" > sizeof name)
		return;
	pt_memcpy(name, PT_STR(socket_path), n);
	pt_memcpy(name + n, ".log", sizeof ".log");
	fd = pt_sys_open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
			 0);
	if (fd < 0)
		return;
	got = pt_sys_read(fd, buf, sizeof buf - 1);
	pt_sys_close(fd);
	if (got <= 0)
		return;
	while (got > 0 && buf[got - 1] == '\n')
		got--;
	buf[got] = '\0';
	pt_env_take_log(buf);
}

/*
 * May this image use the run log?  It is named, and this process is in
 * the collector's pid namespace (the pids it writes must be the
 * collector's).  Whether it opens is found out at the first write.
 */
static int log_usable(void)
{
	if (!pt.log_path)
		return 0;
	pt.pidns = pidns_of_self();     /* the HELLO's too */
	return pt.pidns == pt.log_pidns;
}

/* ch for process pid's frames on the image's own channel, as it is. */
static void chan_fill(struct pt_chan *ch, pid_t pid, int owner)
{
	ch->fd = -1;
	ch->spool = 0;
	ch->direct = 0;
	ch->pid = pid;
	ch->owner = owner;
	ch->kind = pt.chan;
	ch->stream = pt.log_stream;
	ch->hello = PT_HELLO_AUX;
	ch->start_ns = pt.start_ns;
}

void pt_conn_start_image(char *const *argv, char *const *envp)
{
	struct pt_chan ch;
	struct pt_body b;
	/* The HELLO is stamped with the image's start, not a second clock
	 * reading a few microseconds later: start_ns then costs the capture
	 * one byte instead of three of noise. */
	uint64_t now = pt.start_ns;

	if (!pt.env_log && !pt.log_path)
		learn_log();
	pt.chan = log_usable() ? PT_CHAN_LOG : PT_CHAN_SOCK;
	pt.log_stream = (uint32_t)pt.owner;
	hello_body(&b, PT_HELLO_IMAGE, pt.start_ns, now, pt.start_realtime_ns,
		   pt.owner);
	b.exe = (const char *)getauxval(AT_EXECFN);
	for (;;) {
		chan_fill(&ch, pt.owner, 1);
		/* The constructor runs before the program's own code: no other
		 * thread of it is there yet. */
		ch.direct = 1;
		if (chan_open(&ch, NULL, 0) == 0)
			break;
		if (pt.chan == PT_CHAN_SOCK) {
			pt.off = 1;     /* nobody listening: stay out of the way */
			pt.chan = 0;
			return;
		}
		/* A sandbox's /proc or user namespace, another uid, a
		 * collector gone: the socket. */
		pt.chan = PT_CHAN_SOCK;
	}
	/* fexecve and execveat(dirfd, ...) name the program by a descriptor
	 * gone by now ("/dev/fd/3", "/dev/fd/3/sh"): the kernel's path is
	 * the one to keep. */
	if (b.exe && !pt_strncmp(b.exe, "/dev/fd/", 8))
		image_hello_by_fd(&ch, &b, now, argv, envp);
	else
		image_hello(&ch, &b, now, argv, envp);
	pt_chan_put(&ch);
}

void pt_conn_after_fork(void)
{
	pt.fork_pending = pt.chan != 0;
	/* The first process of a new pid namespace (unshare --fork): the
	 * run log speaks of the collector's pids, not of ours; and the
	 * namespace its HELLO names is read anew. */
	if (pt.owner == 1) {
		pt.pidns = 0;
		if (pt.chan == PT_CHAN_LOG)
			pt.chan = PT_CHAN_SOCK;
	}
}

/*
 * A fork child that does more than exec says so: a HELLO of its own, on
 * a stream of its own in the run log (its pid), so that the collector
 * watches it for its end; on the socket, a connection's first frame.
 */
static void fork_child_hello(void)
{
	struct pt_chan ch;
	uint64_t now;

	if (!__atomic_exchange_n(&pt.fork_pending, 0, __ATOMIC_ACQ_REL))
		return;
	pt.log_stream = (uint32_t)pt.owner;
	chan_fill(&ch, pt.owner, 1);
	now = pt_now_ns();
	send_hello(&ch, PT_HELLO_FORK, pt.start_ns, now, pt_realtime_ns());
	pt_chan_put(&ch);
}

int pt_chan_get(struct pt_chan *ch, enum pt_chan_use use, pid_t self)
{
	ch->fd = -1;
	ch->kind = 0;
	if (!pt.ready || pt.off)
		return -1;
	if (!self)
		self = pt_sys_getpid();
	if (self != pt.owner) {
		/* Foreign (a vfork or clone child): read-only use of pt.  Its
		 * frames go as the owner's would, with its pid: on the
		 * owner's stream, or a connection that binds nothing; a copy
		 * in another pid namespace (bwrap's pid 1 and its children)
		 * says HELLO, FOREIGN, on a connection of its own. */
		chan_fill(ch, self, 0);
		if (ch->kind && pidns_of_self() != pt.pidns) {
			ch->kind = PT_CHAN_SOCK;
			ch->hello = PT_HELLO_FOREIGN;
			ch->start_ns = 0;
		}
		return ch->kind ? 0 : -1;
	}
	if (pt.fork_pending && use != PT_USE_EXEC)
		fork_child_hello();
	chan_fill(ch, self, 1);
	return ch->kind ? 0 : -1;
}
