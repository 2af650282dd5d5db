/*
 * The run's status snapshot: what `proftrace top` and `record --progress`
 * show while the run goes on.  The collector keeps, for each image it
 * hears of, its pid, parent, start and command line, counts the images
 * started, running, finished and failed and the slowest finished, and
 * rewrites a small text file (doc/format.md, "The status snapshot") at
 * most once a second while something changed: written aside, then
 * renamed over the last one, so that a reader sees one whole snapshot or
 * the one before.  Readers only read: none of them can slow or disturb
 * the run (doc/design.md, "The status snapshot").  The collector's
 * side is collect/status.c; this is the snapshot as read back, which
 * views/top.c draws.
 */
#ifndef PT_STATUS_H
#define PT_STATUS_H

#include <stddef.h>
#include <stdint.h>

/* The slowest finished images a snapshot lists. */
#define PT_STATUS_SLOWEST 5
/* Running images a snapshot lists, the longest-running first. */
#define PT_STATUS_RUNNING 200
/* Packages being built that a snapshot names. */
#define PT_STATUS_PACKAGES 50

/* One execution as a snapshot lists it. */
struct pt_status_exec {
	uint32_t pid, ppid;
	uint64_t start_ns;              /* CLOCK_MONOTONIC */
	uint64_t dur_ns;                /* finished ones: how long it ran */
	char *cmd;
	char *label;                    /* as the report names it, or NULL */
};

/* A snapshot as read back (pt_status_read). */
struct pt_status_snap {
	uint32_t pid;                   /* the collector */
	char *kind;                     /* "record" or "daemon" */
	char *command;                  /* record's COMMAND, or "" */
	char *capture;                  /* absolute path, or "" */
	char *keep;                     /* --keep DIR, absolute, or "" */
	uint64_t start_mono_ns, start_real_ns;
	uint64_t written_mono_ns;
	int ended;                      /* the run is over */
	int exit_code;                  /* record's COMMAND's, once ended; -1 */
	uint64_t end_mono_ns;
	uint64_t started, running, finished, failed;
	/* CPU: what the run's processes used over the last interval (the
	 * running ones and those that ended in it), and all it used so far;
	 * cpu_interval_ns 0: not measured yet. */
	uint64_t cpu_interval_ns, cpu_busy_ns, cpu_total_ns;
	/* Once ended: the signal that killed COMMAND, 0 if it exited. */
	int end_signal;
	struct pt_status_exec *run;     /* the longest-running first */
	size_t nrun;
	struct pt_status_exec slow[PT_STATUS_SLOWEST];
	size_t nslow;
	/* opam packages (OPAM_PACKAGE_NAME.OPAM_PACKAGE_VERSION of the
	 * images): seen with none of their images running now, and those
	 * with some running, named in pkg. */
	uint64_t pkg_done, pkg_running;
	char **pkg;
	size_t npkg;
};

/*
 * Parse the snapshot file at path into *s.  Unknown lines are skipped
 * (later versions may add some).  Returns 0; -1 with errno set when the
 * file cannot be read (ENOENT: no such run, EACCES: not ours), or EINVAL
 * when it is not a snapshot.
 */
int pt_status_read(const char *path, struct pt_status_snap *s);

void pt_status_snap_free(struct pt_status_snap *s);

#endif
