/*
 * ingest: how many frames a second a collector takes in from many
 * concurrent clients, and whether it loses any.
 *
 *   ingest [-k CLIENTS] [-n FRAMES] [-b PER_MSG] [-c PER_CONN] SOCKET \
 *          (--sink | -- SERVER_COMMAND...)
 *
 * Starts the server (SERVER_COMMAND, e.g. `proftrace daemon -o X --socket
 * SOCKET`; or, with --sink, a trivial server of our own that only receives
 * and counts, the ceiling of the socket path on this machine), waits until
 * SOCKET accepts connections, then forks CLIENTS clients that each send
 * FRAMES frames as fast as they can, and, when all are done, stops the
 * server with SIGTERM and waits for it: the server has then taken in (and a
 * collector written) everything.
 *
 * Each client plays gcc driver processes, one after the other: HELLO (an
 * IMAGE with a compiler command line, cwd and environment), SPAWN of cc1
 * (its long argv), REAP, SPAWN of as, REAP, EXIT, with a new pid for each.
 * -b packs up to PER_MSG frames into one message (at most PT_MSG_MAX
 * bytes), as the wire format allows; 1 (the default) sends one frame per
 * message, as the library does.  -c PER_CONN opens a new connection every
 * PER_CONN frames (6: one connection per process, as the library does); 0
 * (the default) keeps one connection per client.  Like the library, a
 * client gives up on a message after a 250 ms send timeout: such frames
 * are counted as lost.
 *
 * Prints one line of KEY VALUE pairs (bench/run.py parses it):
 *   frames msgs conns bytes   what the clients sent
 *   client_lost               frames the clients gave up on
 *   client_s                  until the last client was done
 *   total_s                   until the server had exited (all taken in)
 *   frames_per_s bytes_per_s  sent / total_s
 *   server_cpu_s              the server's user+sys CPU (wait4)
 *   server_status             its exit status
 *   sink_frames               (--sink) frames the sink counted
 *
 * --sink-mmsg: the sink receives with recvmmsg(2), up to 16 messages per
 * system call, instead of one recv(2) per message: what batching the
 * receive side could gain.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "synth.h"

#define CYCLE 6                 /* frames per simulated process */

struct opts {
	int clients;
	long frames;
	int per_msg;
	int per_conn;
	const char *socket;
	int sink;
	char **server;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa->sun_path)
		return -1;
	strcpy(sa->sun_path, path);
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa;
	struct timeval tv = { 0, 250 * 1000 };  /* as the library */
	int fd;

	if (fill_addr(&sa, path) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the clients ---- */

/*
 * The frames of one simulated process with the given pid, appended to b;
 * their sizes go to sizes[CYCLE].
 */
static void process_frames(struct bbuf *b, size_t sizes[CYCLE], uint32_t pid,
			   struct compile *c, struct rng *r)
{
	static const char *const env[] = {
		"OPAM_PACKAGE_NAME=project", "OPAM_PACKAGE_VERSION=1.4.2",
		"CI_JOB_ID=4242", NULL,
	};
	unsigned char f[40];
	uint64_t t = 1000000000ull + (uint64_t)pid * 1000;
	unsigned dir = pid % 50;

	fixed_hello(f, pid - 1, (uint32_t)getuid(), PT_HELLO_IMAGE,
		    1700000000000000000ull + t, t);
	sizes[0] = frame_put(b, PT_REC_HELLO, pid, t, f, 32, "/usr/bin/gcc",
			     NULL, &c->gcc, synth_cwd(dir), env);
	fixed_pair(f, pid + 1, PT_CALL_POSIX_SPAWN);
	sizes[1] = frame_put(b, PT_REC_SPAWN, pid, t + 10, f, 8, NULL,
			     c->cc1.v[0], &c->cc1, NULL, NULL);
	fixed_reap(f, pid + 1, 0, rng_range(r, 1000, 900000), 20000, 60000);
	sizes[2] = frame_put(b, PT_REC_REAP, pid, t + 20, f, 40, NULL, NULL,
			     NULL, NULL, NULL);
	fixed_pair(f, pid + 2, PT_CALL_POSIX_SPAWN);
	sizes[3] = frame_put(b, PT_REC_SPAWN, pid, t + 30, f, 8, NULL,
			     "/usr/bin/as", &c->as, NULL, NULL);
	fixed_reap(f, pid + 2, 0, 4000, 2000, 12000);
	sizes[4] = frame_put(b, PT_REC_REAP, pid, t + 40, f, 40, NULL, NULL,
			     NULL, NULL, NULL);
	fixed_exit(f, 0, PT_EXIT_EXIT, 800, 1200, 9000);
	sizes[5] = frame_put(b, PT_REC_EXIT, pid, t + 50, f, 32, NULL, NULL,
			     NULL, NULL, NULL);
}

struct client_result {
	long frames, msgs, conns, lost;
	unsigned long long bytes;
};

static void client(const struct opts *o, int idx, int result_fd)
{
	/* A few different command lines, built once: the cost measured is
	 * the collector's, not ours. */
	enum { VARIANTS = 16 };
	struct bbuf b[VARIANTS];
	size_t sizes[VARIANTS][CYCLE];
	struct client_result res = { 0 };
	struct compile *c = malloc(sizeof *c);
	struct rng r = { 0x1234567ull + (uint64_t)idx * 7919 };
	long sent = 0;
	int v, fd = -1, in_conn = 0;
	unsigned cycle = 0;

	if (!c)
		die("ingest: malloc");
	for (v = 0; v < VARIANTS; v++) {
		memset(&b[v], 0, sizeof b[v]);
		synth_compile(&r, c, (unsigned)v, (unsigned)(idx * VARIANTS + v),
			      rng_logrange(&r, 200, 3000));
		process_frames(&b[v], sizes[v],
			       (uint32_t)(100000 + idx * 100000 + v * 3), c, &r);
	}
	free(c);
	while (sent < o->frames) {
		const struct bbuf *cur = &b[cycle % VARIANTS];
		const size_t *sz = sizes[cycle % VARIANTS];
		size_t off = 0;
		int i = 0;

		/* One simulated process: CYCLE frames, in messages of up
		 * to per_msg frames, never splitting one. */
		while (i < CYCLE && sent < o->frames) {
			size_t len = 0;
			int k = 0;

			if (fd < 0 || (o->per_conn && in_conn >= o->per_conn)) {
				if (fd >= 0)
					close(fd);
				fd = connect_to(o->socket);
				if (fd < 0) {
					/* The library would spool or drop. */
					res.lost++;
					sent++;
					off += sz[i++];
					continue;
				}
				res.conns++;
				in_conn = 0;
			}
			while (i + k < CYCLE && k < o->per_msg &&
			       sent + k < o->frames &&
			       len + sz[i + k] <= PT_MSG_MAX &&
			       (!o->per_conn || in_conn + k < o->per_conn)) {
				len += sz[i + k];
				k++;
			}
			if (send(fd, cur->p + off, len, MSG_NOSIGNAL) !=
			    (ssize_t)len) {
				res.lost += k;
			} else {
				res.frames += k;
				res.msgs++;
				res.bytes += len;
			}
			off += len;
			i += k;
			sent += k;
			in_conn += k;
		}
		cycle++;
	}
	if (fd >= 0)
		close(fd);
	if (write(result_fd, &res, sizeof res) != (ssize_t)sizeof res)
		_exit(1);
	_exit(0);
}

/* ---- the sink: receive, count, nothing else ---- */

static long sink_frames;
static int sink_mmsg;                   /* --sink-mmsg: recvmmsg, not recv */

#define MMSG_N    16                    /* messages per recvmmsg */
#define SINK_BUF  (MMSG_N * PT_MSG_MAX)

static void count_frames(const unsigned char *buf, size_t n)
{
	size_t off = 0;

	/* Whole frames only (our clients never split one). */
	while (n - off >= 32) {
		uint32_t len = (uint32_t)buf[off + 12] |
			       (uint32_t)buf[off + 13] << 8 |
			       (uint32_t)buf[off + 14] << 16 |
			       (uint32_t)buf[off + 15] << 24;

		sink_frames++;
		off += 32 + len;
	}
}

/* Receive until EAGAIN (or EOF: then close fd). */
static void sink_read(int fd, unsigned char *buf, int *open)
{
	struct mmsghdr mm[MMSG_N];
	struct iovec iov[MMSG_N];
	int i, n;

	for (;;) {
		if (!sink_mmsg) {
			ssize_t k = recv(fd, buf, SINK_BUF, MSG_DONTWAIT);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			if (k <= 0)
				goto eof;
			count_frames(buf, (size_t)k);
			continue;
		}
		/* One system call for up to MMSG_N messages of PT_MSG_MAX. */
		memset(mm, 0, sizeof mm);
		for (i = 0; i < MMSG_N; i++) {
			iov[i].iov_base = buf + (size_t)i * PT_MSG_MAX;
			iov[i].iov_len = PT_MSG_MAX;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		n = recvmmsg(fd, mm, MMSG_N, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			goto eof;
		for (i = 0; i < n; i++) {
			if (mm[i].msg_len == 0)
				goto eof;       /* a zero-length message: EOF */
			count_frames(iov[i].iov_base, mm[i].msg_len);
		}
		if (n < MMSG_N)
			return;                 /* the queue is empty */
	}
eof:
	close(fd);
	*open = 0;
}

static void sink(const char *path, int ready_fd)
{
	struct sockaddr_un sa;
	struct epoll_event ev, evs[256];
	unsigned char *buf = malloc(SINK_BUF);
	int lfd, ep, sfd, stop = 0, i, n;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (!buf || fill_addr(&sa, path) < 0 || sfd < 0)
		die("sink");
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(lfd, SOMAXCONN) < 0)
		die("sink: listen");
	ep = epoll_create1(EPOLL_CLOEXEC);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	if (write(ready_fd, "", 1) != 1)
		_exit(1);
	close(ready_fd);
	while (!stop) {
		n = epoll_wait(ep, evs, 256, -1);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd, open = 1;

			if (fd == sfd) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof si) > 0)
					stop = 1;
			} else if (fd == lfd) {
				int c;

				while ((c = accept4(lfd, NULL, NULL,
						    SOCK_NONBLOCK |
						    SOCK_CLOEXEC)) >= 0) {
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
					sink_read(c, buf, &open);
				}
			} else {
				sink_read(fd, buf, &open);
			}
		}
	}
	/* Everyone is done: take in what is still queued. */
	epoll_ctl(ep, EPOLL_CTL_DEL, sfd, NULL);
	epoll_ctl(ep, EPOLL_CTL_DEL, lfd, NULL);
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int open = 1;

		if (c < 0)
			break;
		ev.data.fd = c;
		epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
		sink_read(c, buf, &open);
	}
	while ((n = epoll_wait(ep, evs, 256, 0)) > 0)
		for (i = 0; i < n; i++) {
			int open = 1;

			sink_read(evs[i].data.fd, buf, &open);
		}
	unlink(path);
	printf("sink_frames %ld\n", sink_frames);
	fflush(stdout);
	_exit(0);
}

/* ---- the driver ---- */

static void usage(void)
{
	fprintf(stderr, "usage: ingest [-k CLIENTS] [-n FRAMES] [-b PER_MSG] "
		"[-c PER_CONN] SOCKET (--sink | --sink-mmsg | -- SERVER...)\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "sink", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->clients = 4;
	o->frames = 100000;
	o->per_msg = 1;
	o->per_conn = 0;
	while ((c = getopt_long(argc, argv, "+k:n:b:c:", lopts, NULL)) != -1) {
		switch (c) {
		case 'k': o->clients = atoi(optarg); break;
		case 'n': o->frames = atol(optarg); break;
		case 'b': o->per_msg = atoi(optarg); break;
		case 'c': o->per_conn = atoi(optarg); break;
		case 'S': o->sink = 1; break;
		default: usage();
		}
	}
	if (optind >= argc || o->clients < 1 || o->frames < 1 ||
	    o->per_msg < 1 || o->per_conn < 0)
		usage();
	o->socket = argv[optind++];
	if (optind < argc && (!strcmp(argv[optind], "--sink") ||
			      !strcmp(argv[optind], "--sink-mmsg"))) {
		o->sink = 1;
		sink_mmsg = !strcmp(argv[optind], "--sink-mmsg");
		optind++;
	} else if (optind < argc && !strcmp(argv[optind], "--")) {
		optind++;
	}
	if (o->sink == (optind < argc))
		usage();
	o->server = argv + optind;
}

/* Wait until path accepts a connection (then close it unused). */
static void wait_listening(const char *path, pid_t server)
{
	double limit = now_s() + 20;
	int st;

	for (;;) {
		int fd = connect_to(path);

		if (fd >= 0) {
			close(fd);
			return;
		}
		if (waitpid(server, &st, WNOHANG) == server) {
			fprintf(stderr, "ingest: the server exited before "
				"listening\n");
			exit(1);
		}
		if (now_s() > limit) {
			fprintf(stderr, "ingest: %s never accepted a "
				"connection\n", path);
			kill(server, SIGTERM);
			exit(1);
		}
		usleep(5000);
	}
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct client_result tot = { 0 };
	struct rusage ru;
	pid_t server, *kids;
	int res[2], ready[2], i, st, server_st = 0;
	double t0, t1, t2, cpu;

	parse(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(res, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		die("ingest: pipe");
	fflush(stdout);
	server = fork();
	if (server < 0)
		die("ingest: fork");
	if (server == 0) {
		close(ready[0]);
		if (o.sink)
			sink(o.socket, ready[1]);
		execvp(o.server[0], o.server);
		perror(o.server[0]);
		_exit(127);
	}
	close(ready[1]);
	if (o.sink) {
		char ch;

		if (read(ready[0], &ch, 1) != 1) {
			fprintf(stderr, "ingest: the sink failed to start\n");
			return 1;
		}
	}
	close(ready[0]);
	wait_listening(o.socket, server);

	kids = calloc((size_t)o.clients, sizeof *kids);
	if (!kids)
		die("ingest: calloc");
	t0 = now_s();
	for (i = 0; i < o.clients; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			die("ingest: fork");
		if (kids[i] == 0) {
			close(res[0]);
			client(&o, i, res[1]);
		}
	}
	close(res[1]);
	for (i = 0; i < o.clients; i++) {
		struct client_result cr;

		if (waitpid(kids[i], &st, 0) != kids[i] || st != 0) {
			fprintf(stderr, "ingest: client %d failed\n", i);
			kill(server, SIGTERM);
			return 1;
		}
		if (read(res[0], &cr, sizeof cr) != (ssize_t)sizeof cr)
			die("ingest: client result");
		tot.frames += cr.frames;
		tot.msgs += cr.msgs;
		tot.conns += cr.conns;
		tot.lost += cr.lost;
		tot.bytes += cr.bytes;
	}
	t1 = now_s();
	kill(server, SIGTERM);
	if (wait4(server, &server_st, 0, &ru) != server)
		die("ingest: wait4");
	t2 = now_s();
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("frames %ld msgs %ld conns %ld bytes %llu client_lost %ld "
	       "client_s %.4f total_s %.4f frames_per_s %.0f bytes_per_s %.0f "
	       "server_cpu_s %.4f server_status %d\n",
	       tot.frames, tot.msgs, tot.conns, tot.bytes, tot.lost, t1 - t0,
	       t2 - t0, (double)tot.frames / (t2 - t0),
	       (double)tot.bytes / (t2 - t0), cpu,
	       WIFEXITED(server_st) ? WEXITSTATUS(server_st)
				    : 128 + WTERMSIG(server_st));
	free(kids);
	return 0;
}
