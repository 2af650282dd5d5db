/*
 * The collector: reads the run log the images append to (collect/log.h)
 * and accepts the connections of those that cannot use it on a Unix
 * SOCK_SEQPACKET socket, checks every frame, and writes frames and
 * connection events into a capture (capture/write.h).
 *
 * One process, one thread, one epoll loop.  A malformed frame drops its
 * connection only; a capture that cannot be written any more (full disk)
 * is reported once and the loop keeps serving, counting the loss, so the
 * traced build never notices.  Used by `proftrace daemon` and, in-process,
 * by `proftrace record`, through collect/session.h.
 *
 * Typical use:
 *   s = pt_server_new(path);  w = pt_writer_open(...);
 *   pt_server_begin(s, w, command);
 *   pt_server_watch(s, signal_fd, on_signal, arg);
 *   pt_server_run(s, tick_ns, on_tick, arg);     // until pt_server_stop()
 *   pt_server_shutdown(s);  pt_writer_close(w);  pt_server_free(s);
 */
#ifndef PT_SERVER_H
#define PT_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include "capture/write.h"

struct pt_tracer;

struct pt_server;

/* Counters for status lines and the final report. */
struct pt_server_stats {
	uint64_t conns_open;            /* connections open now */
	uint64_t conns_total;           /* connections accepted */
	uint64_t running;               /* open connections that said HELLO
					 * (not AUX): processes alive */
	uint64_t finished;              /* such connections that have ended */
	uint64_t images;                /* HELLO frames of kind IMAGE */
	uint64_t exits;                 /* EXIT frames */
	uint64_t frames;                /* valid frames received */
	uint64_t bytes;                 /* bytes received */
	uint64_t dropped;               /* connections dropped: malformed or
					 * foreign peer */
	uint64_t lost;                  /* frames lost: cut short at EOF, or
					 * not written to the capture */
};

/*
 * Listen at path (0600).  A stale socket left by a dead collector is
 * replaced; a live collector, or a file that is not a socket, makes it
 * fail.  Returns NULL with a one-line error printed.  Nothing is accepted
 * before pt_server_run().
 */
struct pt_server *pt_server_new(const char *path);

/*
 * Write into w from now on, starting with the capture's META record
 * (command may be NULL).  Separate from pt_server_new() so that a busy
 * socket is found before an existing capture is overwritten.
 */
void pt_server_begin(struct pt_server *s, struct pt_writer *w,
		     const char *command);

/*
 * Also watch fd (a signalfd, a pipe): cb runs in the loop whenever fd is
 * readable, and must consume what made it readable.  Returns 0 or -1.
 */
int pt_server_watch(struct pt_server *s, int fd,
		    void (*cb)(struct pt_server *s, void *arg), void *arg);

/*
 * Take the trace files programs write (collect/tracefile.h): those in dir
 * (created, and removed by pt_server_free(); NULL: none), which record and
 * daemon give their commands as PROFTRACE_TRACE_DIR, and those of known
 * tools.  Without this call, no trace file is taken.
 */
void pt_server_trace_dir(struct pt_server *s, const char *dir);

/*
 * Create the run log (doc/design.md, "The transport") and put in env
 * (cap bytes) the value of PROFTRACE_LOG that lets images append to it
 * while this process, pid, holds it: "PIDNS:DEV:INO:/proc/PID/fd/N" (a
 * detached daemon names its child).  Returns 0, or -1 with a warning
 * said (the images then use the socket).
 */
int pt_server_open_log(struct pt_server *s, pid_t pid, char *env, size_t cap);

/*
 * Write the run log's name for this process into SOCK.log (sock: the
 * socket's path, in a directory of our user's alone), for images started
 * without PROFTRACE_LOG: the library reads it at load (preload/conn.c,
 * learn_log).  Removed by pt_server_free().  0, or -1 with a warning.
 */
int pt_server_publish_log(struct pt_server *s, const char *sock);

/* The same value of PROFTRACE_LOG for process pid holding the run log
 * (a detached daemon's child, which inherited it).  -1 if there is no
 * run log. */
int pt_server_log_name(const struct pt_server *s, pid_t pid, char *env,
		       size_t cap);

/*
 * Does PROFTRACE_TRANSPORT ask for the run log?  1 unless it says
 * "socket"; a value other than "log" or "socket" is said in one line.
 */
int pt_server_want_log(void);

/* The watcher of processes seen from outside (watch.h), for `record`
 * to name its command. */
struct pt_watch *pt_server_watcher(struct pt_server *s);

/* Put a frame made by the collector, where the watcher's go (a put for
 * collect/ptrace.h; s is the server). */
void pt_server_put_synth(void *s, const void *frame, size_t len);

/* The tracer whose processes the watcher leaves alone (NULL: none). */
void pt_server_set_tracer(struct pt_server *s, struct pt_tracer *t);

/*
 * Serve until pt_server_stop() is called (from a callback) or a peer of
 * our uid sends a STOP frame.  tick(s, arg), if not NULL, runs about every
 * tick_ns.  Returns 0, or -1 if the loop itself failed (epoll error).
 */
int pt_server_run(struct pt_server *s, uint64_t tick_ns,
		  void (*tick)(struct pt_server *s, void *arg), void *arg);

/* Make pt_server_run() return after the current round. */
void pt_server_stop(struct pt_server *s);

/* From now on, take each message as it comes: no batching sleep between
 * rounds, and tick() after every round (for the last frames of a run that
 * someone is waiting for). */
void pt_server_hurry(struct pt_server *s);

/*
 * Can nothing more arrive unless a new process starts?  True when no
 * connection is open or waiting to be accepted, and every process
 * announced in the last PT_EXPECT_NS (by an EXEC, SPAWN or FORK) has been
 * heard from (expect.h).
 */
int pt_server_settled(struct pt_server *s);

/*
 * Keep the run's status snapshot (model/status.h) in the file path
 * (NULL: keep the counts for pt_server_snapshot() only): kind is
 * "record" or "daemon", command the traced command or NULL, capture and
 * keep (--keep DIR, or NULL) absolute paths.  Costs a parse of each
 * image's HELLO and at most one rewrite of the file a second.
 */
void pt_server_status(struct pt_server *s, const char *path, const char *kind,
		      const char *command, const char *capture,
		      const char *keep);

/* The run is over (wait_status: the command's as wait(2) encodes it, or
 * -1 when unknown): write the last snapshot at once, marked ended, with
 * the exit status or the signal. */
void pt_server_status_end(struct pt_server *s, int wait_status);

struct pt_status_snap;
/*
 * Fill *out (freed with pt_status_snap_free) with the state a snapshot
 * written now would hold.  Returns 0, or -1 when pt_server_status() was
 * not called.
 */
int pt_server_snapshot(struct pt_server *s, struct pt_status_snap *out);

/* Pid of the peer whose STOP frame stopped the loop, or 0. */
uint32_t pt_server_stopped_by(const struct pt_server *s);

const struct pt_server_stats *pt_server_stats(const struct pt_server *s);

/* CLOCK_MONOTONIC ns of the last connection, data or EOF seen. */
uint64_t pt_server_last_activity(const struct pt_server *s);

/*
 * After the loop: accept and read everything still pending, once and
 * without blocking; then stop listening and remove the socket.
 * Connections still open get no more records (they did not finish).  The
 * capture may be closed after this.  Calling it again does nothing.
 */
void pt_server_shutdown(struct pt_server *s);

/*
 * Close the remaining connections (a `proftrace stop` waiting for its
 * connection to close learns that the capture is complete) and free.
 */
void pt_server_free(struct pt_server *s);

#endif
