/* The collector's socket and epoll loop; see server.h. */
#include "collect/server.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/expect.h"
#include "capture/frame.h"
#include "pt-config.h"
#include "collect/runinfo.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "collect/watch.h"

#define HDR_SIZE      sizeof(struct pt_frame_header)
/* Larger than any message the library sends (PT_MSG_MAX); a bigger one
 * would be cut by recv, so it is detected (MSG_TRUNC) and refused. */
#define RBUF_SIZE     (256u << 10)
/*
 * Messages per recvmmsg() call: one system call per message cost more
 * than everything else the collector does per frame (2.7 against 1.0 µs
 * per frame for a receiver that only counts).  Each has a buffer of its
 * own; only the pages a message fills are ever touched.
 */
#define MMSG_VLEN     16
#define MAX_EVENTS    256
/*
 * Fewer events and messages than this in a round: sleep before the next
 * epoll_wait, so that messages batch up instead of waking us one by one
 * (design.md).  After a busier round, do not sleep for BUSY_NS: a peer
 * streaming frames fills its socket buffer within one sleep and then
 * blocks, so sleeping would cap its throughput.
 */
#define BATCH_EVENTS  64
#define BATCH_SLEEP_NS (8 * 1000000L)
#define BUSY_NS       (50 * 1000000ull)
#define FLUSH_MS      1000
/* Per round: bounds what one busy peer can take from the others. */
#define ROUND_MSGS    64
#define ROUND_ACCEPTS 256
#define DRAIN_MSGS    4096
/* How often the processes we cannot hear from are looked at (watch.h):
 * a child that starts and ends between two looks is not seen.  The
 * environment's PROFTRACE_WATCH_MS (1 to 1000) overrides it. */
#define WATCH_TICK_NS (5 * 1000000ull)

enum watch_kind { W_LISTEN, W_CONN, W_USER, W_PIDFD };

/* First member of everything registered with epoll (epoll data.ptr). */
struct watch {
	enum watch_kind kind;
	int fd;
};

struct conn {
	struct watch w;
	uint64_t id;
	uint32_t pid, uid;              /* SO_PEERCRED at accept */
	int said_hello;
	uint32_t hello_kind;
	unsigned char *pend;            /* bytes of an incomplete frame */
	size_t pend_len, pend_alloc;
	struct conn *prev, *next;
};

struct user_watch {
	struct watch w;
	void (*cb)(struct pt_server *s, void *arg);
	void *arg;
	struct user_watch *next;
};

struct pt_server {
	struct watch listen;
	int epfd;
	char *path;
	dev_t sock_dev;                 /* our socket file, to unlink only it */
	ino_t sock_ino;
	uid_t uid;
	struct pt_writer *w;
	struct conn *conns;
	struct user_watch *users;
	uint64_t next_id;
	int stop;
	int shut;                       /* pt_server_shutdown() was called */
	uint32_t stopped_by;
	uint64_t last_activity;
	uint64_t last_emfile_warn;
	unsigned round_msgs;            /* messages received this round */
	uint64_t busy_until;            /* no batching sleep before this */
	struct pt_server_stats st;
	unsigned char *rbuf;            /* MMSG_VLEN buffers of RBUF_SIZE */
	struct mmsghdr mm[MMSG_VLEN];
	struct iovec iov[MMSG_VLEN];
	struct pt_sb scratch;           /* header + inflated payload */
	struct pt_expect expect;        /* announced, not heard from yet */
	struct pt_watch *watch;         /* processes seen from outside */
	struct conn synth;              /* the connection watch frames are on */
	uint64_t watch_tick_ns;
	struct pollfd *pfd;             /* batch_sleep()'s, one per user watch */
	size_t npfd;
};

/* ---- capture records ---- */

static void put_record(struct pt_server *s, struct conn *c,
		       enum pt_cap_kind kind, uint64_t now,
		       const void *data, size_t len)
{
	if (!s->w)
		return;
	/* Rounded up: a connection is never closed before anything its
	 * process sent. */
	if (kind != PT_CAP_FRAME)
		now = pt_recv_time(now);
	if (pt_writer_add(s->w, kind, c->id, c->pid, c->uid, now, data,
			  len) < 0 && kind == PT_CAP_FRAME)
		s->st.lost++;
}

static void write_meta(struct pt_server *s, const char *command)
{
	static const char *const ci_vars[] = {
		"CI_PIPELINE_ID", "CI_JOB_ID", "CI_JOB_NAME",
		"GITHUB_RUN_ID", "GITHUB_JOB",
	};
	char cpus[24], real[24], mono[24];
	const char *kv[2 * 24];
	struct pt_runinfo ri;
	struct utsname u;
	uint64_t m1, r, m2;
	size_t n = 0, i;

#define KV(k, v) (kv[2 * n] = (k), kv[2 * n + 1] = (v), n++)
	if (uname(&u) < 0)
		memset(&u, 0, sizeof u);
	/* The clock pair maps monotonic frame times to wall time: take the
	 * realtime reading between two monotonic ones and use their middle. */
	m1 = pt_mono_ns();
	r = pt_real_ns();
	m2 = pt_mono_ns();
	snprintf(cpus, sizeof cpus, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	snprintf(real, sizeof real, "%llu", (unsigned long long)r);
	snprintf(mono, sizeof mono, "%llu",
		 (unsigned long long)(m1 + (m2 - m1) / 2));
	KV("host", u.nodename);
	KV("kernel", u.release);
	KV("cpus", cpus);
	KV("proftrace_version", PT_VERSION);
	KV("start_realtime_ns", real);
	KV("start_monotonic_ns", mono);
	if (command)
		KV("command", command);
	pt_runinfo_get(&ri);
#define KV_SET(k, v) do { if ((v)[0]) KV(k, v); } while (0)
	KV_SET("cpu_model", ri.cpu_model);
	KV_SET("mem_total_kb", ri.mem_total_kb);
	KV_SET("glibc_version", ri.glibc_version);
	KV_SET("cwd", ri.cwd);
	KV_SET("git_commit", ri.git_commit);
#undef KV_SET
	for (i = 0; i < sizeof ci_vars / sizeof ci_vars[0]; i++) {
		const char *v = getenv(ci_vars[i]);

		if (v)
			KV(ci_vars[i], v);
	}
#undef KV
	pt_writer_meta(s->w, kv, n);
}

/* ---- frames of processes watched from outside (watch.h) ---- */

static void synth_put(void *arg, const void *frame, size_t len)
{
	struct pt_server *s = arg;
	uint64_t now = pt_mono_ns();

	if (!s->w)
		return;
	if (!s->synth.id) {
		/* A connection of our own: no HELLO, never an EOF. */
		s->synth.id = ++s->next_id;
		s->synth.pid = (uint32_t)getpid();
		s->synth.uid = s->uid;
		put_record(s, &s->synth, PT_CAP_CONNECT, now, NULL, 0);
	}
	put_record(s, &s->synth, PT_CAP_FRAME, now, frame, len);
}

static void remove_user(struct pt_server *s, int fd)
{
	struct user_watch **up, *u;

	for (up = &s->users; (u = *up); up = &u->next)
		if (u->w.fd == fd) {
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
			*up = u->next;
			free(u);
			s->npfd--;
			return;
		}
}

static int add_user(struct pt_server *s, int fd, enum watch_kind kind,
		    void (*cb)(struct pt_server *s, void *arg), void *arg)
{
	struct user_watch *u = pt_xcalloc(1, sizeof *u);
	struct epoll_event ev;

	u->w.kind = kind;
	u->w.fd = fd;
	u->cb = cb;
	u->arg = arg;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = &u->w;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		pt_warn("epoll_ctl: %s", strerror(errno));
		free(u);
		return -1;
	}
	u->next = s->users;
	s->users = u;
	s->npfd++;
	s->pfd = pt_xrealloc(s->pfd, s->npfd * sizeof *s->pfd);
	return 0;
}

static int synth_watch(void *arg, int fd, int on)
{
	struct pt_server *s = arg;

	if (!on) {
		remove_user(s, fd);
		return 0;
	}
	return add_user(s, fd, W_PIDFD, NULL, NULL);
}

/* ---- connections ---- */

static void close_conn(struct pt_server *s, struct conn *c)
{
	close(c->w.fd);                 /* also leaves the epoll set */
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->st.conns_open--;
	if (c->said_hello && c->hello_kind != PT_HELLO_AUX) {
		s->st.running--;
		s->st.finished++;
	}
	free(c->pend);
	free(c);
}

static void drop_conn(struct pt_server *s, struct conn *c, const char *why)
{
	pt_warn("dropping connection %llu (pid %u): %s",
		(unsigned long long)c->id, c->pid, why);
	put_record(s, c, PT_CAP_DROP, pt_mono_ns(), why, strlen(why) + 1);
	s->st.dropped++;
	close_conn(s, c);
}

static void conn_eof(struct pt_server *s, struct conn *c, uint64_t now)
{
	if (c->pend_len) {
		/* The peer died in the middle of a frame. */
		uint64_t one = htole64(1);

		pt_warn("connection %llu (pid %u) ended in the middle of a "
			"frame (%zu bytes of it); 1 frame lost",
			(unsigned long long)c->id, c->pid, c->pend_len);
		put_record(s, c, PT_CAP_LOSS, now, &one, sizeof one);
		s->st.lost++;
	}
	put_record(s, c, PT_CAP_EOF, now, NULL, 0);
	close_conn(s, c);
}

/* Store a frame that arrived deflated: inflated, with a header to match. */
static void put_inflated(struct pt_server *s, struct conn *c,
			 const struct pt_frame_header *h,
			 const unsigned char *payload, uint64_t now)
{
	struct pt_frame_header le = {
		.magic = htole32(h->magic),
		.version = h->version,
		.type = h->type,
		.flags = 0,
		.pid = htole32(h->pid),
		.length = htole32(h->raw_length),
		.raw_length = htole32(h->raw_length),
		.origin = htole32(h->origin),
		.time_ns = htole64(h->time_ns),
	};

	pt_sb_reset(&s->scratch);
	pt_sb_add(&s->scratch, &le, sizeof le);
	pt_sb_add(&s->scratch, payload, h->raw_length);
	put_record(s, c, PT_CAP_FRAME, now, s->scratch.buf, s->scratch.len);
	if (s->scratch.alloc > (1u << 20))
		pt_sb_release(&s->scratch);     /* keep no 64 MiB around */
}

/* Update the counters, and act on STOP.  Returns 1 if the frame is kept. */
static int account(struct pt_server *s, struct conn *c,
		   const struct pt_record *rec, uint64_t now)
{
	s->st.frames++;
	pt_expect_frame(&s->expect, rec, now);
	switch (rec->hdr.type) {
	case PT_REC_HELLO:
		if (!c->said_hello) {
			c->said_hello = 1;
			c->hello_kind = rec->u.hello.kind;
			if (c->hello_kind != PT_HELLO_AUX)
				s->st.running++;
		}
		if (rec->u.hello.kind == PT_HELLO_IMAGE)
			s->st.images++;
		break;
	case PT_REC_EXIT:
		s->st.exits++;
		break;
	case PT_REC_STOP:
		if (c->uid == s->uid && !s->stop) {
			s->stop = 1;
			s->stopped_by = c->pid;
		}
		/* A control message, not part of the record of the build. */
		return 0;
	}
	return 1;
}

/*
 * Check one whole frame at p and write it, inflated, into the capture.
 * Returns 0, or -1 with *why set (the caller drops the connection).
 */
static int handle_frame(struct pt_server *s, struct conn *c,
			const struct pt_frame_header *h,
			const unsigned char *p, uint64_t now, const char **why)
{
	const unsigned char *payload = p + HDR_SIZE;
	unsigned char *inflated = NULL;
	struct pt_record rec;
	int keep;

	if (h->flags & PT_FRAME_DEFLATED) {
		inflated = pt_frame_inflate(h, payload, why);
		if (!inflated)
			return -1;
		payload = inflated;
	}
	if (pt_record_check(h, payload, &rec, why) < 0) {
		free(inflated);
		return -1;
	}
	keep = account(s, c, &rec, now);
	if (keep)
		pt_watch_frame(s->watch, &rec, payload, h->raw_length);
	if (keep && inflated)
		put_inflated(s, c, h, payload, now);
	else if (keep)
		/* A plain frame is already what the capture stores: flags 0,
		 * raw_length == length, every field little-endian. */
		put_record(s, c, PT_CAP_FRAME, now, p, HDR_SIZE + h->length);
	free(inflated);
	return 0;
}

/*
 * Handle the whole frames at the start of p[0..n).  Sets *used to the
 * bytes they took.  Returns 0, or -1 if the connection was dropped.
 */
static int parse_frames(struct pt_server *s, struct conn *c,
			const unsigned char *p, size_t n, uint64_t now,
			size_t *used)
{
	struct pt_frame_header h;
	const char *why;
	size_t off = 0;

	while (n - off >= HDR_SIZE) {
		/* The header is checked as soon as it is here, so a bogus
		 * length is refused before we buffer towards it. */
		if (pt_frame_header_decode(p + off, &h, &why) < 0 ||
		    (n - off >= HDR_SIZE + h.length &&
		     handle_frame(s, c, &h, p + off, now, &why) < 0)) {
			drop_conn(s, c, why);
			return -1;
		}
		if (n - off < HDR_SIZE + h.length)
			break;
		off += HDR_SIZE + h.length;
	}
	*used = off;
	return 0;
}

static int pend_add(struct conn *c, const unsigned char *p, size_t n)
{
	if (c->pend_len + n > c->pend_alloc) {
		size_t want = c->pend_alloc ? c->pend_alloc : 4096;
		unsigned char *np;

		while (want < c->pend_len + n)
			want *= 2;
		np = realloc(c->pend, want);
		if (!np)
			return -1;
		c->pend = np;
		c->pend_alloc = want;
	}
	memcpy(c->pend + c->pend_len, p, n);
	c->pend_len += n;
	return 0;
}

/*
 * One received message.  Frames may span messages, so what is left of an
 * incomplete frame waits in c->pend; the common case (whole frames) is
 * parsed straight from the receive buffer.  Returns -1 if c was dropped.
 */
static int feed(struct pt_server *s, struct conn *c, const unsigned char *p,
		size_t n, uint64_t now)
{
	size_t used;

	if (c->pend_len) {
		if (pend_add(c, p, n) < 0) {
			drop_conn(s, c, "out of memory buffering a frame");
			return -1;
		}
		if (parse_frames(s, c, c->pend, c->pend_len, now, &used) < 0)
			return -1;
		memmove(c->pend, c->pend + used, c->pend_len - used);
		c->pend_len -= used;
		if (!c->pend_len && c->pend_alloc > (1u << 20)) {
			free(c->pend);
			c->pend = NULL;
			c->pend_alloc = 0;
		}
		return 0;
	}
	if (parse_frames(s, c, p, n, now, &used) < 0)
		return -1;
	if (used < n && pend_add(c, p + used, n - used) < 0) {
		drop_conn(s, c, "out of memory buffering a frame");
		return -1;
	}
	return 0;
}

/*
 * Receive up to max messages, or until there are no more for now: level-
 * triggered epoll reports the socket again if more come.  May close c.
 */
static void read_conn(struct pt_server *s, struct conn *c, int max)
{
	char why[80];
	int got = 0;

	while (got < max) {
		unsigned want = max - got < MMSG_VLEN ? (unsigned)(max - got)
						       : MMSG_VLEN;
		/* MSG_TRUNC: the real length even if the buffer was short. */
		int n = recvmmsg(c->w.fd, s->mm, want,
				 MSG_DONTWAIT | MSG_TRUNC, NULL), i;
		uint64_t now;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			now = pt_mono_ns();
			s->last_activity = now;
			if (errno == ECONNRESET)
				conn_eof(s, c, now);
			else
				drop_conn(s, c, strerror(errno));
			return;
		}
		now = pt_mono_ns();
		s->last_activity = now;
		for (i = 0; i < n; i++) {
			size_t len = s->mm[i].msg_len;

			s->round_msgs++;
			/* At EOF every remaining entry reads as empty. */
			if (len == 0) {
				conn_eof(s, c, now);
				return;
			}
			if (len > RBUF_SIZE ||
			    (s->mm[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				snprintf(why, sizeof why, "message of %zu bytes "
					 "is over the %u-byte limit", len,
					 RBUF_SIZE);
				drop_conn(s, c, why);
				return;
			}
			s->st.bytes += len;
			if (feed(s, c, s->rbuf + (size_t)i * RBUF_SIZE, len,
				 now) < 0)
				return;
		}
		got += n;
		if ((unsigned)n < want)
			return;
	}
}

static void new_conn(struct pt_server *s, int fd, int drain)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	struct epoll_event ev;
	struct conn *c;
	uint64_t now = pt_mono_ns();

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		pt_warn("SO_PEERCRED failed on a new connection: %s",
			strerror(errno));
		close(fd);
		return;
	}
	c = pt_xcalloc(1, sizeof *c);
	c->w.kind = W_CONN;
	c->w.fd = fd;
	c->id = ++s->next_id;
	c->pid = (uint32_t)cr.pid;
	c->uid = (uint32_t)cr.uid;
	s->last_activity = now;
	s->st.conns_total++;
	s->st.conns_open++;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	put_record(s, c, PT_CAP_CONNECT, now, NULL, 0);

	if (c->uid != s->uid) {
		/* The socket is 0600 in a 0700 directory, so only root or a
		 * custom --socket path lets this happen. */
		char why[64];

		snprintf(why, sizeof why, "peer runs as uid %u, not as ours",
			 c->uid);
		drop_conn(s, c, why);
		return;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = &c->w;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		drop_conn(s, c, strerror(errno));
		return;
	}
	/* The HELLO is usually there already: save an epoll round. */
	read_conn(s, c, drain ? DRAIN_MSGS : ROUND_MSGS);
}

static void accept_conns(struct pt_server *s, int max, int drain)
{
	int i, fd;

	for (i = 0; i < max; i++) {
		fd = accept4(s->listen.fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			new_conn(s, fd, drain);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE) {
			/* Pending peers wait in the backlog; their bounded
			 * waits keep the build going.  Say it once a minute. */
			uint64_t now = pt_mono_ns();

			if (now - s->last_emfile_warn > 60000000000ull) {
				pt_warn("cannot accept connections: %s (%llu "
					"open)", strerror(errno),
					(unsigned long long)s->st.conns_open);
				s->last_emfile_warn = now;
			}
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			pt_warn("accept: %s", strerror(errno));
		}
		return;
	}
}

/* ---- listening ---- */

static int fill_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path) {
		pt_warn("socket path %s is too long (at most %zu bytes)", path,
			sizeof a->sun_path - 1);
		return -1;
	}
	strcpy(a->sun_path, path);
	return 0;
}

/*
 * Make path free for bind: nothing there, or a socket nobody listens on
 * (a collector that died), which is removed.  Returns 0 or -1.
 */
static int clear_stale(const char *path, const struct sockaddr_un *a)
{
	struct stat st;
	int fd, rc, err;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		pt_warn("cannot use %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		pt_warn("%s exists and is not a socket; not replacing it",
			path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		pt_warn("socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
	err = errno;
	close(fd);
	if (rc == 0 || err == EAGAIN || err == EINPROGRESS) {
		pt_warn("a collector is already listening at %s "
			"('proftrace stop' ends it)", path);
		return -1;
	}
	if (err != ECONNREFUSED) {
		pt_warn("cannot use %s: %s", path, strerror(err));
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		pt_warn("cannot remove the stale socket %s: %s", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Give the listening socket at tmp its public name path, without
 * replacing anything that appeared there meanwhile.  Returns 0 or -1.
 */
static int publish_socket(const char *tmp, const char *path)
{
	if (link(tmp, path) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno == EEXIST) {
		pt_warn("%s appeared while this collector was starting; "
			"not replacing it", path);
		return -1;
	}
	/* A file system without hard links: rename is as atomic, only it
	 * would replace a socket that appeared in the last microseconds. */
	if (rename(tmp, path) == 0)
		return 0;
	pt_warn("cannot listen at %s: %s", path, strerror(errno));
	return -1;
}

/*
 * Listen at path.  The socket is bound and listening under a temporary
 * name first and then linked to path, so that the name never exists
 * without a listener behind it: a traced process would be refused
 * there, and a second collector would take the socket for a dead one's
 * and remove it.  (When path is too long for the temporary name, the
 * socket is bound in place and that window is back.)  Returns 0 or -1.
 */
static int open_listener(struct pt_server *s, const char *path)
{
	struct sockaddr_un a, ta;
	struct stat st;
	char tmp[sizeof ta.sun_path];
	const char *name = path;
	mode_t old;
	int fd, rc, n;

	if (fill_addr(&a, path) < 0 || clear_stale(path, &a) < 0)
		return -1;
	ta = a;
	n = snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	if (n > 0 && (size_t)n < sizeof tmp) {
		/* left by a collector that had our pid and was killed */
		if (lstat(tmp, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(tmp);
		memcpy(ta.sun_path, tmp, (size_t)n + 1);
		name = tmp;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		pt_warn("socket: %s", strerror(errno));
		return -1;
	}
	/* umask: the socket must never exist with looser permissions. */
	old = umask(0177);
	rc = bind(fd, (const struct sockaddr *)&ta, sizeof ta);
	umask(old);
	if (rc < 0) {
		pt_warn("cannot listen at %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (chmod(name, 0600) < 0 || stat(name, &st) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		pt_warn("cannot listen at %s: %s", path, strerror(errno));
		unlink(name);
		close(fd);
		return -1;
	}
	if (name != path && publish_socket(tmp, path) < 0) {
		unlink(tmp);
		close(fd);
		return -1;
	}
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	s->listen.kind = W_LISTEN;
	s->listen.fd = fd;
	return 0;
}

/* Every running process of a big build holds a connection. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct pt_server *pt_server_new(const char *path)
{
	struct pt_server *s = pt_xcalloc(1, sizeof *s);
	struct epoll_event ev;
	const char *ms;
	unsigned i;

	s->listen.fd = -1;
	s->path = pt_xstrdup(path);
	s->rbuf = pt_xmalloc((size_t)MMSG_VLEN * RBUF_SIZE);
	for (i = 0; i < MMSG_VLEN; i++) {
		s->iov[i].iov_base = s->rbuf + (size_t)i * RBUF_SIZE;
		s->iov[i].iov_len = RBUF_SIZE;
		s->mm[i].msg_hdr.msg_iov = &s->iov[i];
		s->mm[i].msg_hdr.msg_iovlen = 1;
	}
	s->uid = geteuid();
	pt_sb_init(&s->scratch);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		pt_warn("epoll_create1: %s", strerror(errno));
		goto fail;
	}
	if (open_listener(s, path) < 0)
		goto fail;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = &s->listen;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen.fd, &ev) < 0) {
		pt_warn("epoll_ctl: %s", strerror(errno));
		goto fail;
	}
	raise_fd_limit();
	s->last_activity = pt_mono_ns();
	s->watch_tick_ns = WATCH_TICK_NS;
	if ((ms = getenv("PROFTRACE_WATCH_MS")) && atoi(ms) >= 1 &&
	    atoi(ms) <= 1000)
		s->watch_tick_ns = (uint64_t)atoi(ms) * 1000000;
	s->watch = pt_watch_new(&(struct pt_watch_ops){
		.put = synth_put, .watch = synth_watch, .arg = s });
	return s;
fail:
	pt_server_shutdown(s);
	pt_server_free(s);
	return NULL;
}

void pt_server_begin(struct pt_server *s, struct pt_writer *w,
		     const char *command)
{
	s->w = w;
	write_meta(s, command);
}

const char *pt_server_path(const struct pt_server *s)
{
	return s->path;
}

int pt_server_watch(struct pt_server *s, int fd,
		    void (*cb)(struct pt_server *s, void *arg), void *arg)
{
	return add_user(s, fd, W_USER, cb, arg);
}

struct pt_watch *pt_server_watcher(struct pt_server *s)
{
	return s->watch;
}

/* ---- the loop ---- */

static void dispatch(struct pt_server *s, struct watch *wt)
{
	struct user_watch *u;

	switch (wt->kind) {
	case W_LISTEN:
		accept_conns(s, ROUND_ACCEPTS, 0);
		break;
	case W_CONN:
		read_conn(s, (struct conn *)wt, ROUND_MSGS);
		break;
	case W_USER:
		u = (struct user_watch *)wt;
		u->cb(s, u->arg);
		break;
	case W_PIDFD:
		pt_watch_ready(s->watch, wt->fd);
		break;
	}
}

/*
 * The batching sleep, cut short by a readable user watch: `record` hears
 * of its command's end through one, and every millisecond until it does
 * is added to the run; a watched process's pidfd, because its exit status
 * can only be read until its parent reaps it.
 */
static void batch_sleep(struct pt_server *s)
{
	static const struct timespec batch = { 0, BATCH_SLEEP_NS };
	struct user_watch *u;
	nfds_t n = 0;

	for (u = s->users; u && n < s->npfd; u = u->next)
		s->pfd[n++] = (struct pollfd){ .fd = u->w.fd,
					       .events = POLLIN };
	if (n)
		poll(s->pfd, n, pt_watch_busy(s->watch) == 2 &&
				s->watch_tick_ns < BATCH_SLEEP_NS ?
				(int)(s->watch_tick_ns / 1000000) :
				(int)(BATCH_SLEEP_NS / 1000000));
	else
		nanosleep(&batch, NULL);
}

int pt_server_run(struct pt_server *s, uint64_t tick_ns,
		  void (*tick)(struct pt_server *s, void *arg), void *arg)
{
	struct epoll_event ev[MAX_EVENTS];
	uint64_t now = pt_mono_ns(), next_tick = now + tick_ns;
	uint64_t next_watch = now + s->watch_tick_ns;
	int n, i, timeout;

	while (!s->stop) {
		timeout = FLUSH_MS;
		/* Never sleep through a watch tick, when there is one. */
		if (pt_watch_busy(s->watch) == 2)
			timeout = (int)(s->watch_tick_ns / 1000000) + 1;
		if (tick) {
			now = pt_mono_ns();
			if (next_tick <= now)
				timeout = 0;
			else if ((next_tick - now) / 1000000 + 1 <
				 (uint64_t)timeout)
				timeout = (int)((next_tick - now) / 1000000 + 1);
		}
		n = epoll_wait(s->epfd, ev, MAX_EVENTS, timeout);
		if (n < 0) {
			if (errno != EINTR) {
				pt_warn("epoll_wait: %s", strerror(errno));
				return -1;
			}
			n = 0;
		}
		/* Each fd appears once per batch and only its own handler
		 * closes it, so no pointer here goes stale. */
		s->round_msgs = 0;
		for (i = 0; i < n; i++)
			dispatch(s, ev[i].data.ptr);
		if (s->w)
			pt_writer_flush(s->w, 0);
		now = pt_mono_ns();
		if (now >= next_watch) {
			pt_watch_tick(s->watch);
			next_watch = now + s->watch_tick_ns;
		}
		if (tick && (now >= next_tick || s->busy_until == UINT64_MAX)) {
			tick(s, arg);
			next_tick = now + tick_ns;
		}
		if ((n >= BATCH_EVENTS || s->round_msgs >= BATCH_EVENTS) &&
		    s->busy_until != UINT64_MAX)
			s->busy_until = now + BUSY_NS;
		else if (!s->stop && now >= s->busy_until)
			batch_sleep(s);
	}
	return 0;
}

void pt_server_stop(struct pt_server *s)
{
	s->stop = 1;
}

void pt_server_hurry(struct pt_server *s)
{
	s->busy_until = UINT64_MAX;
}

int pt_server_settled(struct pt_server *s)
{
	struct pollfd pfd = { .fd = s->listen.fd, .events = POLLIN };

	return !s->st.conns_open && !pt_expect_any(&s->expect, pt_mono_ns()) &&
	       poll(&pfd, 1, 0) == 0;
}

uint32_t pt_server_stopped_by(const struct pt_server *s)
{
	return s->stopped_by;
}

const struct pt_server_stats *pt_server_stats(const struct pt_server *s)
{
	return &s->st;
}

uint64_t pt_server_last_activity(const struct pt_server *s)
{
	return s->last_activity;
}

void pt_server_shutdown(struct pt_server *s)
{
	struct conn *c, *next;
	struct stat st;

	if (s->shut)
		return;
	s->shut = 1;
	if (s->listen.fd >= 0) {
		/* Unlink first so that nobody new arrives, then take in
		 * those already in the backlog: short processes may have
		 * said everything and exited there. */
		if (lstat(s->path, &st) == 0 && st.st_dev == s->sock_dev &&
		    st.st_ino == s->sock_ino)
			unlink(s->path);
		accept_conns(s, 1 << 30, 1);
		close(s->listen.fd);
		s->listen.fd = -1;
	}
	for (c = s->conns; c; c = next) {
		next = c->next;         /* read_conn may free c */
		read_conn(s, c, DRAIN_MSGS);
	}
	pt_watch_tick(s->watch);
	if (s->w) {
		/* Where the capture ends: what is still running then has no
		 * end of its own, and ends here in the views; info shows the
		 * wall-clock end. */
		char mono[24], real[24];
		const char *kv[4] = { "end_monotonic_ns", mono,
				      "end_realtime_ns", real };

		snprintf(mono, sizeof mono, "%llu",
			 (unsigned long long)pt_mono_ns());
		snprintf(real, sizeof real, "%llu",
			 (unsigned long long)pt_real_ns());
		pt_writer_meta(s->w, kv, 2);
		pt_writer_flush(s->w, 1);
	}
	s->w = NULL;                    /* the caller closes it next */
}

void pt_server_free(struct pt_server *s)
{
	struct user_watch *u, *un;
	struct conn *c, *cn;

	if (!s)
		return;
	for (c = s->conns; c; c = cn) {
		cn = c->next;
		close(c->w.fd);
		free(c->pend);
		free(c);
	}
	pt_watch_free(s->watch);        /* closes its pidfds */
	for (u = s->users; u; u = un) {
		un = u->next;
		free(u);
	}
	free(s->pfd);
	if (s->listen.fd >= 0)
		close(s->listen.fd);
	if (s->epfd >= 0)
		close(s->epfd);
	pt_sb_release(&s->scratch);
	free(s->rbuf);
	free(s->path);
	free(s);
}
