/*
 * The collector's connections: accepting peers, reading their messages,
 * reassembling frames, accounting what was lost, and writing each frame
 * into the capture.  A peer is trusted with nothing: every length is
 * checked, and a bad peer is dropped without disturbing the others.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/internal.h"
#include "base/util.h"

/* ---- connections ---- */

static void close_conn(struct pt_server *s, struct conn *c)
{
	/* Out of the epoll set first: a close leaves it only when no other
	 * descriptor shares the file, and a process of ours forked meanwhile
	 * (record --progress's) holds copies; its events would then name c
	 * after c is freed. */
	if (c->w.fd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->w.fd, NULL);
		close(c->w.fd);
	}
	if (c->pw.fd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->pw.fd, NULL);
		close(c->pw.fd);
	}
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
		/* Its image ended: what it wrote is complete. */
		pt_tracefiles_ended(s->traces, c->pid, c->own_pid);
		if (s->status)
			pt_status_conn_end(s, c, pt_mono_ns());
	}
	/* Reading one connection can end another (a stream its frames
	 * belong to) whose event waits later in the same batch: it stays
	 * readable, and ignored, until the batch is done. */
	c->w.kind = c->pw.kind = W_GONE;
	c->w.fd = c->pw.fd = -1;
	c->next_gone = s->gone;
	s->gone = c;
}

void pt_server_free_gone(struct pt_server *s)
{
	struct conn *c;

	while ((c = s->gone)) {
		s->gone = c->next_gone;
		free(c->cmd);
		free(c->label);
		free(c->pend);
		free(c);
	}
}

static void drop_conn(struct pt_server *s, struct conn *c, const char *why)
{
	pt_warn("dropping connection %llu (pid %u): %s",
		(unsigned long long)c->id, c->pid, why);
	pt_server_put_record(s, c, PT_CAP_DROP, pt_mono_ns(), why, strlen(why) + 1);
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
		pt_server_put_record(s, c, PT_CAP_LOSS, now, &one, sizeof one);
		s->st.lost++;
	}
	pt_server_put_record(s, c, PT_CAP_EOF, now, NULL, 0);
	close_conn(s, c);
}

/* Store a frame that arrived deflated: inflated, with a header to match. */
static void put_inflated(struct pt_server *s, struct conn *c,
			 const struct pt_frame_header *h,
			 const unsigned char *payload, uint64_t now)
{
	struct pt_frame_header inflated = *h;
	unsigned char hdr[PT_FRAME_HDR];

	inflated.flags = 0;
	inflated.length = h->raw_length;
	pt_wire_put_header(hdr, &inflated);
	pt_sb_reset(&s->scratch);
	pt_sb_add(&s->scratch, hdr, sizeof hdr);
	pt_sb_add(&s->scratch, payload, h->raw_length);
	pt_server_put_record(s, c, PT_CAP_FRAME, now, s->scratch.buf, s->scratch.len);
	if (s->scratch.alloc > (1u << 20))
		pt_sb_release(&s->scratch);     /* keep no 64 MiB around */
}

/*
 * SEIZE (wire.h): trace thread tid of c's peer if we can, and say so on
 * c.  The peer waits a bounded while; a full socket loses the answer,
 * and the peer then execs as if refused (a tracee all the same).
 */
static void seize_answer(struct pt_server *s, struct conn *c, pid_t tid,
			 int what)
{
	unsigned char a[5] = { PT_SEIZE_NO };
	size_t n = 1;
	int r = -1;

	if (c->uid == s->uid && s->tracer && !c->from_log)
		r = pt_tracer_seize_asked(s->tracer, tid, (pid_t)c->pid,
					  what);
	if (r == 0) {
		a[0] = PT_SEIZE_YES;
	} else if (r == -2) {
		a[0] = PT_SEIZE_PTRACER;
		pt_wire_put32(a + 1, (uint32_t)getpid());
		n = 5;
	}
	if (c->w.fd >= 0)
		(void)!send(c->w.fd, a, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Update the counters, and act on STOP and SEIZE.  Returns 1 if the frame
 * is kept. */
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
			c->own_pid = rec->hdr.pid;
			c->hello_ns = rec->hdr.time_ns;
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
	case PT_REC_SEIZE:
		seize_answer(s, c, (pid_t)rec->hdr.pid, (int)rec->hdr.origin);
		return 0;
	}
	return 1;
}

static int log_frame(struct pt_server *s, uint64_t stream,
		     const struct pt_frame_header *h,
		     const unsigned char *frame, uint64_t now);

static struct conn *stream_find(struct pt_server *s, uint64_t stream)
{
	struct conn *c;

	for (c = s->conns; c; c = c->next)
		if (c->from_log && c->stream == stream)
			return c;
	return NULL;
}

/*
 * Does a frame that came over a connection of one call go to its
 * stream?  Connections are read in no set order, so frames of one
 * process may come out of it: a stream starts with a HELLO, and a HELLO
 * older than the stream's own is an earlier image's, not its successor.
 * What a stream does not take stays on its connection, where it binds
 * nothing, and the model orders it by its time.
 */
static int stream_takes(struct pt_server *s, uint64_t stream,
			const struct pt_record *rec)
{
	struct conn *st = stream_find(s, stream);

	if (rec->hdr.type == PT_REC_HELLO)
		return !st || !st->said_hello ||
		       rec->hdr.time_ns >= st->hello_ns;
	return st != NULL;
}

/*
 * Check one whole frame at p and write it, inflated, into the capture.
 * Returns 0, or -1 with *why set (the caller drops the connection).
 */
static int handle_frame(struct pt_server *s, struct conn *c,
			const struct pt_frame_header *h,
			const unsigned char *p, uint64_t now, const char **why)
{
	const unsigned char *payload = p + PT_FRAME_HDR;
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
	if (c->to_stream && stream_takes(s, h->origin ? h->origin : h->pid,
					 &rec)) {
		/* A connection the library opened for one call, in our pid
		 * namespace: its frames belong to the image's stream, as if
		 * they had come through the run log, so that the image's end
		 * is its process's (a pidfd), not the connection's. */
		free(inflated);
		log_frame(s, h->origin ? h->origin : h->pid, h, p, now);
		return 0;
	}
	keep = account(s, c, &rec, now);
	/* The sender names itself by the pid we see it by: it is in our
	 * pid namespace, and so are the pids of its stream. */
	if (c->said_hello && c->hello_kind == PT_HELLO_AUX && !c->from_log &&
	    rec.hdr.type == PT_REC_HELLO && c->uid == s->uid &&
	    h->pid == c->pid && rec.u.hello.pidns == s->pidns)
		c->to_stream = s->sock_streams = 1;
	if (s->status)
		pt_status_frame(s, c, &rec, h, payload);
	/* Trace files sent by the images count against the run's budget
	 * like those the collector takes itself. */
	if (keep && rec.hdr.type == PT_REC_TRACE)
		keep = pt_tracefiles_admit(s->traces, h->pid, payload,
					   h->raw_length);
	/* A traced process's own frames (a Go program's HELLO) name nothing
	 * for the watcher: the tracer sees its children. */
	if (keep && !pt_tracer_has(s->tracer, (pid_t)c->pid))
		pt_watch_frame(s->watch, &rec, (pid_t)c->pid, payload,
			       h->raw_length);
	if (keep && inflated)
		put_inflated(s, c, h, payload, now);
	else if (keep)
		/* A plain frame is already what the capture stores: flags 0,
		 * raw_length == length, every field little-endian. */
		pt_server_put_record(s, c, PT_CAP_FRAME, now, p, PT_FRAME_HDR + h->length);
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

	while (n - off >= PT_FRAME_HDR) {
		/* The header is checked as soon as it is here, so a bogus
		 * length is refused before we buffer towards it. */
		if (pt_frame_header_decode(p + off, &h, &why) < 0 ||
		    (n - off >= PT_FRAME_HDR + h.length &&
		     handle_frame(s, c, &h, p + off, now, &why) < 0)) {
			drop_conn(s, c, why);
			return -1;
		}
		if (n - off < PT_FRAME_HDR + h.length)
			break;
		off += PT_FRAME_HDR + h.length;
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
void pt_server_read_conn(struct pt_server *s, struct conn *c, int max)
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
			/* Linux says so once where a peer closed with data
			 * of ours unread; what it sent before is still
			 * queued, up to the EOF. */
			if (errno == ECONNRESET)
				continue;
			now = pt_mono_ns();
			s->last_activity = now;
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

/* A new connection of peer pid and uid on fd (-1: a run log stream),
 * listed and written to the capture. */
static struct conn *conn_add(struct pt_server *s, int fd, uint32_t pid,
			     uint32_t uid, uint64_t now)
{
	struct conn *c = pt_xcalloc(1, sizeof *c);

	c->w.kind = W_CONN;
	c->w.fd = fd;
	c->pw.fd = -1;
	c->pkg = -1;
	c->id = ++s->next_id;
	c->pid = pid;
	c->uid = uid;
	s->st.conns_total++;
	s->st.conns_open++;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	pt_server_put_record(s, c, PT_CAP_CONNECT, now, NULL, 0);
	return c;
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
	c = conn_add(s, fd, (uint32_t)cr.pid, (uint32_t)cr.uid, now);
	s->last_activity = now;

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
	pt_server_read_conn(s, c, drain ? DRAIN_MSGS : ROUND_MSGS);
}

void pt_server_accept_conns(struct pt_server *s, int max, int drain)
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

/* ---- the run log's streams ---- */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434      /* the same number on every architecture */
#endif

/* The stream's image ends when its process does: a pidfd in the epoll
 * set.  A pid already gone ends the stream with this drain; a kernel
 * without pidfd_open leaves it to EXIT, the next HELLO, or the run's end. */
static void log_watch_pid(struct pt_server *s, struct conn *c)
{
	struct epoll_event ev;
	int fd;

	c->pid_asked = 1;
	fd = (int)syscall(SYS_pidfd_open, (pid_t)c->pid, 0);

	if (fd < 0) {
		if (errno == ESRCH)
			c->ended = 1;
		return;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = &c->pw;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return;
	}
	c->pw.fd = fd;
}

static struct conn *log_conn(struct pt_server *s, uint64_t stream, uint32_t pid,
			     uint64_t now)
{
	/* The library wrote only in our pid namespace, and only our uid
	 * can open the run log. */
	struct conn *c = conn_add(s, -1, pid, s->uid, now);

	c->from_log = 1;
	c->stream = stream;
	c->pw.kind = W_LOGPID;
	if (!s->streams) {
		s->streams = 1;
		s->next_log = now;
	}
	return c;
}

/* One whole frame of a stream: to the connection that stands for the
 * stream's image now.  Returns 0, or -1 if that connection was dropped. */
static int log_frame(struct pt_server *s, uint64_t stream,
		     const struct pt_frame_header *h,
		     const unsigned char *frame, uint64_t now)
{
	size_t len = PT_FRAME_HDR + (size_t)h->length;
	struct conn *c;

	c = stream_find(s, stream);
	/* The next image of the same process (an exec): the last one ended. */
	if (c && h->type == PT_REC_HELLO && c->said_hello) {
		conn_eof(s, c, now);
		c = NULL;
	}
	if (!c)
		c = log_conn(s, stream, h->pid, now);
	s->st.bytes += len;
	if (feed(s, c, frame, len, now) < 0)
		return -1;              /* c was dropped */
	/* Its own EXIT, not one a vfork or clone child sent in its name, is
	 * the last frame the image writes: the EOF goes right after it, as
	 * a socket's did, which keeps the capture's records of one image
	 * together (they compress better so). */
	if (h->type == PT_REC_EXIT && c->said_hello && h->pid == c->own_pid &&
	    !h->origin)
		conn_eof(s, c, now);
	return 0;
}

/*
 * A record holds whole frames of one stream, one or more: a REAP goes
 * with what was held for the child (its SPAWN or FORK, its EXEC) in one
 * write, as it does in one message on a socket.  Returns 0, or -1 if the
 * record was refused (a frame that does not fit it) or a frame dropped.
 */
static int log_deliver(void *ctx, uint64_t stream, uint32_t flags,
		       const unsigned char *rec, size_t len)
{
	struct pt_server *s = ctx;
	struct pt_frame_header h;
	const char *why;
	uint64_t now = s->log_now;
	size_t off = 0;

	(void)flags;
	if (!len)
		return -1;
	while (off < len) {
		if (len - off < PT_FRAME_HDR ||
		    pt_frame_header_decode(rec + off, &h, &why) < 0 ||
		    len - off - PT_FRAME_HDR < (size_t)h.length)
			return -1;
		if (log_frame(s, stream, &h, rec + off, now) < 0)
			return -1;
		off += PT_FRAME_HDR + (size_t)h.length;
	}
	return 0;
}

void pt_server_drain_log(struct pt_server *s, int final)
{
	struct conn *c, *next;
	uint64_t now = pt_mono_ns();
	int n;

	if (!s->log_on && !s->streams)
		return;
	/* One time for all it takes: the records were there by then. */
	s->log_now = now;
	n = s->log_on ? pt_log_drain(&s->log, now, final, log_deliver, s) : 0;
	if (n > 0)
		s->last_activity = now;
	/* A process that ended may have sent its last frames over
	 * connections of its own (the socket): they are all there by now,
	 * in the backlog or unread, and go to its stream before it ends. */
	if ((s->log_due || final) && s->sock_streams) {
		unsigned gen = ++s->read_gen;

		pt_server_accept_conns(s, 1 << 16, 1);
		/* Reading one may end (free) others, a stream among them:
		 * each pass starts again from the list's head. */
		for (c = s->conns; c;) {
			if (c->to_stream && c->read_gen != gen) {
				c->read_gen = gen;
				pt_server_read_conn(s, c, DRAIN_MSGS);
				c = s->conns;
			} else {
				c = c->next;
			}
		}
	}
	/* A stream whose image has not ended by the end of the drain that
	 * brought its HELLO gets a pidfd; most short images have said EXIT
	 * by then and never cost one.  Frames of a stream without a HELLO
	 * (one written after its EXIT, or whose HELLO was lost) name no
	 * image to watch: they end with the drain, and each is kept by the
	 * pid in its header, as on any connection. */
	for (c = s->conns; c; c = next) {
		next = c->next;
		if (!c->from_log)
			continue;
		if (!c->said_hello)
			c->ended = 1;
		else if (!c->ended && !c->pid_asked)
			log_watch_pid(s, c);
		if (c->ended)
			conn_eof(s, c, now);
	}
	s->log_due = 0;
	s->next_log = now + (n > 0 || (s->log_on && s->log.more) ?
			     LOG_TICK_BUSY_NS : LOG_TICK_IDLE_NS);
}
