/*
 * Watching the processes the library cannot reach from inside.
 *
 * Some programs start others without going through libc (Go forks and
 * execs by raw system calls), some load no library at all (static
 * programs), and a setuid program's environment loses LD_PRELOAD for its
 * whole subtree.  Their children say nothing.  The collector watches such
 * processes from outside: on each tick it lists their children in
 * /proc/PID/task/TID/children, and for each child that has not loaded the
 * library it reads /proc (start time, command line, executable and
 * working directory where readable), opens a pidfd to see its end at
 * once, and reads its exit status from /proc/PID/stat while it is a
 * zombie, when its parent has not reaped it first.
 *
 * What it finds is written into the capture as frames the library could
 * have sent on the parent's behalf: a SPAWN (call PT_CALL_SEEN) and a
 * REAP (PT_REAP_SEEN), on a connection of the collector's own, so that
 * every reader, old ones included, hangs them under their parent.
 *
 * Watched: the root command of `record` until it says HELLO (a static
 * root never does), images whose executable is a Go program (ELF section
 * .note.go.buildid or .go.buildinfo, cached per file), images started
 * from a setuid or setgid file or that we may not inspect (another
 * user's), images whose EXEC or SPAWN says the library was left out of
 * them (PT_TAG_NOLIB: a sandbox hides it), and everything found this
 * way.
 */
#ifndef PT_WATCH_H
#define PT_WATCH_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "capture/frame.h"

struct pt_watch;

/*
 * put(arg, frame, len) stores one whole frame (header in little-endian
 * order, as the library sends it); watch(arg, fd, on) registers (on=1)
 * or removes (on=0) a pidfd with the event loop, which then calls
 * pt_watch_ready().
 */
struct pt_watch_ops {
	void (*put)(void *arg, const void *frame, size_t len);
	int (*watch)(void *arg, int fd, int on);
	void *arg;
};

struct pt_watch *pt_watch_new(const struct pt_watch_ops *ops);

/* Look at a frame the collector received (rec as pt_record_check() fills
 * it, payload its n checked bytes): HELLO, EXEC and SPAWN name processes
 * to check on the next tick, unless their executable is known to need
 * no watching; an EXEC or SPAWN that says NOLIB, one to watch at once. */
void pt_watch_frame(struct pt_watch *w, const struct pt_record *rec,
		    pid_t peer, const unsigned char *payload, size_t n);

/*
 * `record` started its command as pid (a fork at start_ns, monotonic, by
 * this process): record it as our SPAWN, and watch it until it says
 * HELLO.
 */
void pt_watch_root(struct pt_watch *w, pid_t pid, char *const *argv,
		   uint64_t start_ns);

struct pt_tracer;

/* Processes t traces (collect/ptrace.h) are never watched. */
void pt_watch_set_tracer(struct pt_watch *w, const struct pt_tracer *t);

/* `record` traces its command (collect/ptrace.h): watch nothing under
 * it. */
void pt_watch_root_traced(struct pt_watch *w, pid_t pid);

/* `record` waited for its command: its REAP, with the exact status. */
void pt_watch_root_end(struct pt_watch *w, pid_t pid, int wait_status,
		       const struct rusage *ru, uint64_t end_ns);

/* Scan the watched processes' children.  Cheap when nothing is watched. */
void pt_watch_tick(struct pt_watch *w);

/* 2: a process is watched (tick on time); 1: only frames' pids wait to
 * be checked (tick at the next round); 0: nothing. */
int pt_watch_busy(const struct pt_watch *w);

/* The pidfd fd is readable: its process ended. */
void pt_watch_ready(struct pt_watch *w, int fd);

/* Close every pidfd and free. */
void pt_watch_free(struct pt_watch *w);

#endif
