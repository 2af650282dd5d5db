/*
 * The collector's life, the one `record` and `daemon` share: the library
 * and the LD_PRELOAD value for commands, the socket and its server, the
 * capture's writer, the trace directory, the status snapshot, the run
 * log, the tracer, and their end.  What stays in cli/ is the options,
 * record's child and daemon's detaching.
 *
 *   pt_session_prepare(&ss, &conf);  paths, library, --csv...: no socket yet
 *   pt_session_start(&ss);           socket, capture, trace dir, run log
 *   pt_session_status(&ss);          what `proftrace top` reads
 *   pt_session_tracer(&ss);          unless --no-ptrace
 *   pt_server_run(ss.s, ...);
 *   pt_session_stop(&ss);  pt_session_close(&ss, wait_status);
 *   pt_session_free(&ss);            also after any failure above
 */
#ifndef PT_SESSION_H
#define PT_SESSION_H
#include <stddef.h>
#include "base/strbuf.h"
#include "collect/server.h"

struct pt_finish;

struct pt_session_conf {
	const char *output;             /* the capture, as the user named it */
	const char *socket;             /* daemon --socket, or NULL */
	int daemon;                     /* 0: record, in a run directory of
					 * its own; 1: daemon, at a socket that
					 * outlives it in the per-user one */
	int force, files;               /* --force, --files */
	char *const *command;           /* record's COMMAND, argc words */
	size_t argc;
	struct pt_finish *fin;          /* the end-of-run outputs */
};

struct pt_session {
	struct pt_session_conf c;
	char *output;                   /* as named (record), absolute (daemon) */
	char *preload;                  /* LD_PRELOAD for the traced commands */
	char *sock, *traces;            /* the socket, PROFTRACE_TRACE_DIR */
	char *capture, *keep;           /* absolute, for the status snapshot */
	char log[128];                  /* PROFTRACE_LOG for commands, or "" */
	char *lib, *visible, *files, *files_visible, *rundir, *userdir;
	struct pt_sb command;           /* record's COMMAND, quoted */
	struct pt_writer *w;
	struct pt_server *s;
	struct pt_tracer *tracer;       /* NULL: nothing is traced */
	struct pt_server_stats st;      /* after pt_session_stop() */
	int ran;                        /* pt_session_stop() was called */
};

/*
 * Everything that can fail before a socket listens: the capture's name
 * (an existing one needs --force), the library and its visible copy, the
 * LD_PRELOAD value, the socket's and trace directory's paths, and the
 * end-of-run outputs' files.  Returns 0, or -1 after a one-line error.
 */
int pt_session_prepare(struct pt_session *ss, const struct pt_session_conf *c);

/*
 * Listen at the socket (first: a busy one must not cost an existing
 * capture), open the capture, take the trace directory and open the run
 * log unless PROFTRACE_TRANSPORT=socket.  Returns 0, or -1 after a
 * one-line error.
 */
int pt_session_start(struct pt_session *ss);

/* Keep the status snapshot `proftrace top` reads (model/status.h):
 * in the run directory (record) or beside the socket (daemon). */
void pt_session_status(struct pt_session *ss);

/* Trace what the library cannot enter (collect/ptrace.h), with frames
 * into the capture; returns the tracer. */
struct pt_tracer *pt_session_tracer(struct pt_session *ss);

/* The loop has ended: let every tracee go, take what is pending, stop
 * listening; the counts are in ss->st. */
void pt_session_stop(struct pt_session *ss);

/* Close the capture and mark the status snapshot ended (wait_status:
 * the command's, as wait gave it, or -1).  Returns 0, or -1 if the
 * capture is incomplete. */
int pt_session_close(struct pt_session *ss, int wait_status);

/* Close the remaining connections now: a waiting `proftrace stop`
 * learns that the capture is complete. */
void pt_session_hang_up(struct pt_session *ss);

/*
 * Free everything, the end-of-run outputs too; a capture still open (the
 * run failed before its start) is removed, and so are the outputs' files
 * when the run never started.
 */
void pt_session_free(struct pt_session *ss);
#endif
