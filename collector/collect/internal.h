/*
 * Inside the collector's server (collect/): its state, shared by the
 * files that run it.  The interface is collect/server.h.
 *
 * server.c is the epoll loop and the server's life; conn.c reassembles
 * and accounts each connection's frames into the capture; listen.c
 * publishes the socket; meta.c writes the run's metadata.
 */
#ifndef PT_COLLECT_INTERNAL_H
#define PT_COLLECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "collect/server.h"
#include "collect/expect.h"
#include "collect/runinfo.h"
#include "collect/ptrace.h"
#include "collect/watch.h"
#include "collect/tracefile.h"
#include "collect/log.h"
#include "capture/frame.h"
#include "base/strbuf.h"

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
/* Per round: bounds what one busy peer can take from the others. */
#define ROUND_MSGS    64
#define DRAIN_MSGS    4096

/* W_GONE: a connection closed while its event may still wait in the
 * batch epoll_wait returned (conn.c, close_conn). */
enum watch_kind { W_LISTEN, W_CONN, W_USER, W_PIDFD, W_LOGPID, W_GONE };

/* How often the run log is drained: soon again while records arrive,
 * seldom when it has been idle (doc/design.md, "The transport"). */
#define LOG_TICK_BUSY_NS (5 * 1000000ull)
#define LOG_TICK_IDLE_NS (50 * 1000000ull)

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
	uint32_t own_pid;               /* the HELLO's pid: as it names itself */
	uint64_t hello_ns;              /* and its time */
	unsigned char *pend;            /* bytes of an incomplete frame */
	size_t pend_len, pend_alloc;
	struct conn *prev, *next;
	struct conn *next_gone;         /* closed, freed after the batch */
	/* A stream of the run log stands for a connection: w.fd is -1, and
	 * the end comes from its EXIT, its next HELLO, or the process's
	 * pidfd (pw, W_LOGPID). */
	int from_log;
	unsigned read_gen;              /* read in this drain already */
	int to_stream;                  /* an AUX connection of our pid
					 * namespace: its frames go to their
					 * image's stream (handle_frame) */
	int ended;                      /* close at the end of this drain */
	int pid_asked;                  /* pidfd_open was tried */
	uint64_t stream;
	struct watch pw;
	/* For the status snapshot (model/status.h), when it is kept. */
	uint32_t ppid;
	uint64_t start_ns;              /* the HELLO's: the image's start */
	char *cmd;                      /* its command line, short */
	char *label;                    /* as the report names it, or NULL */
	int failed;                     /* its EXIT said a nonzero status */
	int pkg;                        /* its opam package (status.c's
					 * table), -1: none */
	uint64_t cpu_base_ns;           /* the process's CPU when the image
					 * started (HELLO's CPU_BEFORE) */
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
	struct conn *gone;              /* closed in this batch */
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
	struct pt_tracer *tracer;       /* processes traced (ptrace.h) */
	struct conn synth;              /* the connection watch frames are on */
	struct pt_tracefiles *traces;   /* trace files programs write */
	uint64_t watch_tick_ns;
	struct pollfd *pfd;             /* batch_sleep()'s, one per user watch */
	size_t npfd;
	struct pt_log_reader log;       /* the run log, if log_on */
	int log_on;
	int streams;                    /* streams exist: the run log's, or
					 * those of AUX connections */
	int sock_streams;               /* some came over the socket */
	unsigned read_gen;              /* pt_server_drain_log's passes */
	uint32_t pidns;                 /* our pid namespace's inode */
	int log_due;                    /* a pidfd fired: drain now */
	uint64_t next_log;              /* next drain (CLOCK_MONOTONIC) */
	uint64_t log_now;               /* the drain's time: each record's */
	char *log_published;            /* SOCKET.log, removed at the end */
	struct pt_status_state *status; /* the snapshot, if kept */
};

void pt_server_accept_conns(struct pt_server *s, int max, int drain);

/*
 * Listen at path.  The socket is bound and listening under a temporary
 * name first and then linked to path, so that the name never exists
 * without a listener behind it: a traced process would be refused
 * there, and a second collector would take the socket for a dead one's
 * and remove it.  (When path is too long for the temporary name, the
 * socket is bound in place and that window is back.)  Returns 0 or -1.
 */
int pt_server_open_listener(struct pt_server *s, const char *path);

/* ---- capture records ---- */
void pt_server_put_record(struct pt_server *s, struct conn *c,
		       enum pt_cap_kind kind, uint64_t now,
		       const void *data, size_t len);

/* Every running process of a big build holds a connection. */
void pt_server_raise_fd_limit(void);

/*
 * Receive up to max messages, or until there are no more for now: level-
 * triggered epoll reports the socket again if more come.  May close c.
 */
void pt_server_read_conn(struct pt_server *s, struct conn *c, int max);

/* Free the connections closed since the last call: after a batch of
 * events, none of which can name them any more. */
void pt_server_free_gone(struct pt_server *s);

/*
 * Take what the run log holds into the capture, each stream as a
 * connection, and end the streams whose image ended.  Never call it from
 * within a round of epoll events: it frees connections, whose pidfds may
 * be among them.  final: the run's end.
 */
void pt_server_drain_log(struct pt_server *s, int final);

void pt_server_write_meta(struct pt_server *s, const char *command);

/* ---- the status snapshot (status.c) ---- */
struct pt_status_state;

/* One valid frame of c (payload: its raw payload), after it is counted. */
void pt_status_frame(struct pt_server *s, struct conn *c,
		     const struct pt_record *rec,
		     const struct pt_frame_header *h,
		     const unsigned char *payload);

/* A frame the collector wrote itself for a process seen from outside
 * (collect/watch.c, collect/ptrace.c): len bytes, header and payload. */
void pt_status_synth(struct pt_server *s, const void *frame, size_t len);

/* c, which said HELLO, is closing at now: its image ended. */
void pt_status_conn_end(struct pt_server *s, struct conn *c, uint64_t now);

/* Rewrite the snapshot if something changed and a second has passed. */
void pt_status_tick(struct pt_server *s, uint64_t now);

void pt_status_free(struct pt_server *s);

#endif
