/*
 * Trace files that traced programs write themselves (Chrome Trace Event
 * Format JSON), taken into the capture as TRACE frames when their writer
 * ends (include/proftrace/wire.h, doc/manual.md "Traces that programs
 * write"): the files in the run's trace directory ($PROFTRACE_TRACE_DIR,
 * named after the writer's pid).  (The files that known tools write
 * where their command line says, clang -ftime-trace, Rocq -profile, dune
 * --trace-file, their images send themselves: preload/tracetools.c.)
 *
 * A file is opened without following a last symbolic link and without
 * blocking, taken only when it is a regular file, and cut at
 * PT_TRACE_FILE_MAX bytes; past PT_TRACE_RUN_MAX bytes in a run, files are
 * refused, and so is, unread, a file whose name breaks the naming rule
 * (found when the run ends).  Whatever is refused or cut becomes a TRACE frame with a NOTE,
 * so that the views can count and say it.  Nothing here fails the build.
 */
#ifndef PT_COLLECT_TRACEFILE_H
#define PT_COLLECT_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>

struct pt_tracefiles;

/* Where TRACE frames go: a whole frame of len bytes. */
typedef void pt_tracefiles_put(void *arg, const void *frame, size_t len);

/*
 * Trace files of a run whose trace directory is dir (created 0700 if
 * missing; NULL: none).  Returns NULL with a warning
 * when dir cannot be made or watched: the run goes on without it.
 */
struct pt_tracefiles *pt_tracefiles_new(const char *dir,
					pt_tracefiles_put *put, void *arg);

/* The descriptor to poll for files appearing in the directory, or -1;
 * call pt_tracefiles_ready() when it is readable. */
int pt_tracefiles_fd(const struct pt_tracefiles *t);
void pt_tracefiles_ready(struct pt_tracefiles *t);

/*
 * The image of process pid (the collector's), which calls itself
 * own_pid, ended: its files (named after own_pid) are taken at the next
 * pt_tracefiles_settle().
 */
void pt_tracefiles_ended(struct pt_tracefiles *t, uint32_t pid,
			 uint32_t own_pid);

/*
 * Take the files of the images ended since the last call: one read of
 * the directory's events for all of them, where a build ends images by
 * the hundred a round.  Frames are stamped now.
 */
void pt_tracefiles_settle(struct pt_tracefiles *t);

/*
 * A TRACE record a traced image sent (a relay's or a known tool's file;
 * payload of len bytes, TRACE has no fixed part): does it fit in the
 * run's budget?  Counts it and returns 1; past the budget, puts a TRACE
 * frame of pid saying the file was refused in its stead and returns 0.
 * t NULL: always 1.
 */
int pt_tracefiles_admit(struct pt_tracefiles *t, uint32_t pid,
			const unsigned char *payload, size_t len);

/* The run is over: take every file left in the directory, by the pid
 * its name starts with. */
void pt_tracefiles_sweep(struct pt_tracefiles *t);

/* Remove the directory (what is left in it) and free. */
void pt_tracefiles_free(struct pt_tracefiles *t);

#endif
