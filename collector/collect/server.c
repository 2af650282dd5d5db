/* The collector's socket and epoll loop; see server.h. */
#include "collect/server.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
#include "collect/internal.h"
#include "collect/watch.h"
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
#define ROUND_ACCEPTS 256
/* How often the processes we cannot hear from are looked at (watch.h):
 * a child that starts and ends between two looks is not seen.  The
 * environment's PROFTRACE_WATCH_MS (1 to 1000) overrides it. */
#define WATCH_TICK_NS (5 * 1000000ull)

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
		pt_server_put_record(s, &s->synth, PT_CAP_CONNECT, now, NULL, 0);
	}
	pt_server_put_record(s, &s->synth, PT_CAP_FRAME, now, frame, len);
	if (s->status)
		pt_status_synth(s, frame, len);
}

static void traces_ready(struct pt_server *s, void *arg)
{
	(void)arg;
	pt_tracefiles_ready(s->traces);
}

void pt_server_trace_dir(struct pt_server *s, const char *dir)
{
	int fd;

	if (s->traces)
		return;
	s->traces = pt_tracefiles_new(dir, synth_put, s);
	if ((fd = pt_tracefiles_fd(s->traces)) >= 0)
		pt_server_watch(s, fd, traces_ready, NULL);
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

static unsigned long pidns_ino(void);

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
	s->pidns = (uint32_t)pidns_ino();
	pt_sb_init(&s->scratch);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		pt_warn("epoll_create1: %s", strerror(errno));
		goto fail;
	}
	if (pt_server_open_listener(s, path) < 0)
		goto fail;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = &s->listen;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen.fd, &ev) < 0) {
		pt_warn("epoll_ctl: %s", strerror(errno));
		goto fail;
	}
	pt_server_raise_fd_limit();
	s->last_activity = pt_mono_ns();
	s->watch_tick_ns = WATCH_TICK_NS;
	if ((ms = getenv("PROFTRACE_WATCH_MS")) && *ms) {
		char *end;
		long v;

		errno = 0;
		v = strtol(ms, &end, 10);
		if (*end || errno || v < 1 || v > 1000)
			pt_warn("PROFTRACE_WATCH_MS: expected 1 to 1000, not "
				"'%s'; looking every %llu ms", ms,
				(unsigned long long)(WATCH_TICK_NS / 1000000));
		else
			s->watch_tick_ns = (uint64_t)v * 1000000;
	}
	s->watch = pt_watch_new(&(struct pt_watch_ops){
		.put = synth_put, .watch = synth_watch, .arg = s });
	return s;
fail:
	pt_server_shutdown(s);
	pt_server_free(s);
	return NULL;
}

int pt_server_want_log(void)
{
	const char *t = getenv("PROFTRACE_TRANSPORT");

	if (t && *t && strcmp(t, "log") && strcmp(t, "socket"))
		pt_warn("PROFTRACE_TRANSPORT: expected log or socket, not "
			"'%s'; using the run log", t);
	return !t || strcmp(t, "socket");
}

/* The inode of our pid namespace, 0 if /proc does not say. */
static unsigned long pidns_ino(void)
{
	char ns[32];
	ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);

	if (n <= 5 || memcmp(ns, "pid:[", 5))
		return 0;
	ns[n] = '\0';
	return strtoul(ns + 5, NULL, 10);
}

int pt_server_log_name(const struct pt_server *s, pid_t pid, char *env,
		       size_t cap)
{
	unsigned long ino = pidns_ino();
	struct stat st;

	if (!s->log_on || !ino || fstat(s->log.fd, &st) < 0)
		return -1;
	/* The device and inode let the library tell the run log from
	 * whatever the name leads to once we are gone (preload/conn.c,
	 * open_log); the device as statx gives it, major << 32 | minor. */
	snprintf(env, cap, "%lu:%llu:%llu:/proc/%d/fd/%d", ino,
		 (unsigned long long)major(st.st_dev) << 32 |
		 minor(st.st_dev),
		 (unsigned long long)st.st_ino, (int)pid, s->log.fd);
	return 0;
}

int pt_server_publish_log(struct pt_server *s, const char *sock)
{
	char name[160];
	struct pt_sb path = PT_SB_INIT, tmp = PT_SB_INIT;
	int fd, rc = -1;

	if (pt_server_log_name(s, getpid(), name, sizeof name) < 0)
		return -1;
	pt_sb_addf(&path, "%s.log", sock);
	pt_sb_addf(&tmp, "%s.log.%d", sock, (int)getpid());
	/* Written aside and renamed: an image never reads half a name. */
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd >= 0) {
		size_t n = strlen(name);

		name[n++] = '\n';
		rc = write(fd, name, n) == (ssize_t)n ? 0 : -1;
		close(fd);
		if (rc == 0 && rename(tmp.buf, path.buf) < 0)
			rc = -1;
		if (rc < 0)
			unlink(tmp.buf);
	}
	if (rc == 0) {
		free(s->log_published);
		s->log_published = pt_sb_detach(&path, NULL);
	} else {
		pt_warn("cannot write %s: %s", path.buf, strerror(errno));
	}
	pt_sb_release(&path);
	pt_sb_release(&tmp);
	return rc;
}

int pt_server_open_log(struct pt_server *s, pid_t pid, char *env, size_t cap)
{
	if (!pidns_ino()) {
		pt_warn("run log: no pid namespace to name in /proc; using "
			"the socket");
		return -1;
	}
	if (pt_log_create(&s->log) < 0) {
		pt_warn("run log: %s; using the socket", strerror(errno));
		return -1;
	}
	s->log_on = 1;
	s->next_log = pt_mono_ns();
	if (pt_server_log_name(s, pid, env, cap) < 0) {
		pt_warn("run log: %s; using the socket", strerror(errno));
		pt_log_close(&s->log);
		s->log_on = 0;
		return -1;
	}
	return 0;
}

void pt_server_begin(struct pt_server *s, struct pt_writer *w,
		     const char *command)
{
	s->w = w;
	pt_server_write_meta(s, command);
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

void pt_server_put_synth(void *s, const void *frame, size_t len)
{
	synth_put(s, frame, len);
}

void pt_server_set_tracer(struct pt_server *s, struct pt_tracer *t)
{
	s->tracer = t;
	pt_watch_set_tracer(s->watch, t);
}

/* ---- the loop ---- */

static void dispatch(struct pt_server *s, struct watch *wt)
{
	struct user_watch *u;

	switch (wt->kind) {
	case W_LISTEN:
		pt_server_accept_conns(s, ROUND_ACCEPTS, 0);
		break;
	case W_CONN:
		pt_server_read_conn(s, (struct conn *)wt, ROUND_MSGS);
		break;
	case W_USER:
		u = (struct user_watch *)wt;
		u->cb(s, u->arg);
		break;
	case W_PIDFD:
		pt_watch_ready(s->watch, wt->fd);
		break;
	case W_GONE:
		break;
	case W_LOGPID:
		/* A stream's process is gone: end it once what it wrote is
		 * drained, after this round (pt_server_drain_log). */
		((struct conn *)(void *)((char *)wt - offsetof(struct conn, pw)))->ended = 1;
		s->log_due = 1;
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

/* timeout (ms), shortened so that the wait ends by when. */
static int wake_by(uint64_t when, uint64_t now, int timeout)
{
	if (when <= now)
		return 0;
	if ((when - now) / 1000000 + 1 < (uint64_t)timeout)
		return (int)((when - now) / 1000000 + 1);
	return timeout;
}

int pt_server_run(struct pt_server *s, uint64_t tick_ns,
		  void (*tick)(struct pt_server *s, void *arg), void *arg)
{
	struct epoll_event ev[MAX_EVENTS];
	uint64_t now = pt_mono_ns(), next_tick = now + tick_ns;
	uint64_t next_watch = now + s->watch_tick_ns;
	int n, i, timeout, watch_due;

	while (!s->stop) {
		timeout = FLUSH_MS;
		/* Never sleep through a watch tick, when there is one. */
		if (pt_watch_busy(s->watch) == 2)
			timeout = (int)(s->watch_tick_ns / 1000000) + 1;
		now = pt_mono_ns();
		if (s->log_on || s->streams)
			timeout = wake_by(s->next_log, now, timeout);
		if (tick)
			timeout = wake_by(next_tick, now, timeout);
		n = epoll_wait(s->epfd, ev, MAX_EVENTS, timeout);
		if (n < 0) {
			if (errno != EINTR) {
				pt_warn("epoll_wait: %s", strerror(errno));
				return -1;
			}
			n = 0;
		}
		/* A connection closed in this batch is freed only after it
		 * (close_conn), so no pointer here goes stale. */
		s->round_msgs = 0;
		for (i = 0; i < n; i++)
			dispatch(s, ev[i].data.ptr);
		pt_server_free_gone(s);
		now = pt_mono_ns();
		watch_due = now >= next_watch;
		/* Also before a watch scan: the watch stops looking under a
		 * process once it has heard its HELLO. */
		if ((s->log_on || s->streams) &&
		    (s->log_due || now >= s->next_log || watch_due))
			pt_server_drain_log(s, 0);
		pt_tracefiles_settle(s->traces);
		if (s->w)
			pt_writer_flush(s->w, 0);
		now = pt_mono_ns();
		if (watch_due) {
			pt_watch_tick(s->watch);
			next_watch = now + s->watch_tick_ns;
		}
		if (tick && (now >= next_tick || s->busy_until == UINT64_MAX)) {
			tick(s, arg);
			next_tick = now + tick_ns;
		}
		if (s->status)
			pt_status_tick(s, now);
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

	/* What the run log holds is heard of, as a connection's backlog. */
	pt_server_drain_log(s, 0);
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
	pt_server_drain_log(s, 1);
	if (s->log_on && s->log.st.lost_bytes)
		pt_warn("run log: %llu bytes of damaged records stepped over",
			(unsigned long long)s->log.st.lost_bytes);
	if (s->listen.fd >= 0) {
		/* Unlink first so that nobody new arrives, then take in
		 * those already in the backlog: short processes may have
		 * said everything and exited there. */
		if (lstat(s->path, &st) == 0 && st.st_dev == s->sock_dev &&
		    st.st_ino == s->sock_ino)
			unlink(s->path);
		pt_server_accept_conns(s, 1 << 30, 1);
		close(s->listen.fd);
		s->listen.fd = -1;
	}
	for (c = s->conns; c; c = next) {
		next = c->next;         /* read_conn may free c */
		if (c->w.fd >= 0)
			pt_server_read_conn(s, c, DRAIN_MSGS);
	}
	if (s->watch)
		pt_watch_tick(s->watch);
	/* Files of writers the library did not see end (static programs,
	 * those still running): by the pid in their names. */
	pt_tracefiles_sweep(s->traces);
	if (s->w) {
		/* Where the capture ends: what is still running then has no
		 * end of its own, and ends here in the views; info shows the
		 * wall-clock end. */
		char mono[24], real[24], by[12];
		const char *kv[6] = { "end_monotonic_ns", mono,
				      "end_realtime_ns", real,
				      "stopped_by", by };

		snprintf(mono, sizeof mono, "%llu",
			 (unsigned long long)pt_mono_ns());
		snprintf(real, sizeof real, "%llu",
			 (unsigned long long)pt_real_ns());
		/* Who sent STOP, so that the views can leave it out. */
		snprintf(by, sizeof by, "%u", (unsigned)s->stopped_by);
		pt_writer_meta(s->w, kv, s->stopped_by ? 3 : 2);
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
	if (s->log_published) {
		unlink(s->log_published);
		free(s->log_published);
	}
	pt_status_free(s);
	if (s->log_on)
		pt_log_close(&s->log);
	pt_watch_free(s->watch);        /* closes its pidfds */
	pt_tracefiles_free(s->traces);  /* removes its directory */
	/* Last: `proftrace stop` returns when its connection closes, and
	 * what it waited for includes the files above being gone. */
	pt_server_free_gone(s);
	for (c = s->conns; c; c = cn) {
		cn = c->next;
		if (c->w.fd >= 0)
			close(c->w.fd);
		if (c->pw.fd >= 0)
			close(c->pw.fd);
		free(c->cmd);
		free(c->label);
		free(c->pend);
		free(c);
	}
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
