/*
 * Tracing, with ptrace event stops only, the processes the library cannot
 * enter (doc/design.md, "What the collector traces").
 *
 * `record` seizes its command right after its fork, before the exec
 * (PTRACE_SEIZE with PTRACE_O_TRACEFORK | TRACEVFORK | TRACECLONE |
 * TRACEEXEC: no stop at any system call), and so every process it starts
 * is traced from its first instruction, until one of them execs a
 * program that will load the library (a dynamic executable whose
 * environment preloads it): that process is detached at its exec, and
 * its HELLO speaks for it and for everything it starts.  A Go program
 * stays traced even when it loads the library: it forks, execs, waits
 * and exits by raw system calls, which no hook sees.
 *
 * What the stops tell is written into the capture as frames the library
 * could have sent (FORK from the parent, EXEC from the child, REAP from
 * the parent with the status and rusage the tracer's wait4 returns), on
 * the collector's own connection, so every reader knows them.
 *
 * Signals are passed on as they come (signal-delivery stops), and group
 * stops are left with PTRACE_LISTEN, so SIGSTOP, SIGCONT, job control and
 * what the real parent's waitpid reports are as untraced.
 */
#ifndef PT_PTRACE_H
#define PT_PTRACE_H

#include <sys/resource.h>
#include <sys/types.h>

struct pt_tracer;

/* put(arg, frame, len): as struct pt_watch_ops's. */
struct pt_tracer *pt_tracer_new(void (*put)(void *arg, const void *frame,
					    size_t len), void *arg);

/* Is tracing wanted here?  PROFTRACE_PTRACE=0 says no (the /proc watcher
 * alone, as before). */
int pt_tracer_wanted(void);

/*
 * Would tracing the program execvp(3) finds for file take its
 * privileges (a set-user-ID or set-group-ID file, or one with file
 * capabilities: the kernel grants none under an unprivileged tracer)?
 * 1 if so, 0 if not or not found.
 */
int pt_tracer_privileged(const char *file);

/*
 * Trace pid, a child of ours that has not exec'd yet (it waits for us).
 * 0, or -1 when the kernel refuses (already traced, Yama, seccomp): then
 * the root is watched as it always was, and only what its processes ask
 * for is traced.  Either way its end is what pt_tracer_wait() returns.
 */
int pt_tracer_seize_root(struct pt_tracer *t, pid_t pid);

/* pid is the run's root, a child of ours that is not traced (a set-id
 * command): pt_tracer_wait() returns its end. */
void pt_tracer_set_root(struct pt_tracer *t, pid_t pid);

/*
 * What thread tid of process peer (SO_PEERCRED of the connection that
 * asked) asks (what: enum pt_seize_what, wire.h).  PT_SEIZE_EXEC: it is
 * about to exec a program its library cannot enter, and has sent the
 * EXEC, so the tracer sends none for that exec (its FORKs, a later EXEC
 * and its REAP, as for the root's).  PT_SEIZE_SPAWN: it is about to
 * posix_spawn one; the child is traced from its clone, and neither its
 * FORK nor its first EXEC is sent (the library's SPAWN says both).
 * PT_SEIZE_RELEASE: that call returned, or that exec failed; it and its
 * threads are let go at their next stop.  0 (done, or ours already); -2 when the kernel
 * refused and Yama is there (peer may name us with PR_SET_PTRACER and
 * ask again); -1 otherwise (tid is no thread of peer, already traced by
 * another, or refused).
 */
int pt_tracer_seize_asked(struct pt_tracer *t, pid_t tid, pid_t peer,
			  int what);

/* Is pid (a process, not a thread) traced now? */
int pt_tracer_has(const struct pt_tracer *t, pid_t pid);

/* Is anything traced? */
int pt_tracer_active(const struct pt_tracer *t);

/*
 * Collect what the tracees reported (call on SIGCHLD): resume each stop,
 * record forks, execs and ends.  Returns 1 when the root ended, with its
 * wait status and rusage in *ws and *ru, else 0.
 */
int pt_tracer_wait(struct pt_tracer *t, int *ws, struct rusage *ru);

/* Let every tracee go (the run ends): they run on untraced. */
void pt_tracer_detach_all(struct pt_tracer *t);

/* Frames from now on go nowhere (where they went is gone). */
void pt_tracer_mute(struct pt_tracer *t);

void pt_tracer_free(struct pt_tracer *t);

#endif
