/*
 * The model: executions and their tree, rebuilt from one or more captures.
 *
 * An execution is one program image of one pid: from its start (fork, spawn
 * or the library's constructor) or exec to its next exec or its end.  A
 * fork()ed child that never execs is an execution of its own (type FORK); a
 * child that execs right away is not (its short fork phase is folded away).
 * Programs that load no library (static, setuid, or an unreachable library
 * path) are still executions, known from the parent's EXEC/SPAWN and REAP.
 *
 * Frames from different connections arrive in any order, so the model is
 * built in two steps: pt_model_add_capture() gathers records,
 * pt_model_finish() links them by pid and time.  Everything stays in memory
 * owned by the model.
 */
#ifndef PT_MODEL_H
#define PT_MODEL_H

#include <stddef.h>
#include <stdint.h>

enum pt_exec_type { PT_EXEC_EXEC = 0, PT_EXEC_FORK = 1 };

enum pt_exec_flag {
	PT_EXF_UNTRACED     = 1u << 0,  /* never loaded the library */
	PT_EXF_END_UNKNOWN  = 1u << 1,  /* end time is a best guess */
	PT_EXF_KILLED       = 1u << 2,  /* ended without EXIT (EOF or signal) */
	PT_EXF_ARGV_TRUNC   = 1u << 3,
	PT_EXF_SPAWN_FAILED = 1u << 4,  /* a failed posix_spawn's child: pid
					 * unknown (0), spawn_errno says why */
};

struct pt_model_priv;

struct pt_exec {
	uint32_t id;                    /* index in pt_model.execs (start order) */
	uint32_t capture;               /* which input it came from (0-based) */
	int32_t pid, ppid;
	enum pt_exec_type type;
	uint32_t flags;                 /* enum pt_exec_flag */
	int64_t start_ns, end_ns;       /* Unix epoch ns */
	int exit_code;                  /* -1: unknown */
	int signal;                     /* 0: none, -1: unknown */
	int spawn_errno;                /* PT_EXF_SPAWN_FAILED: its error */
	/* In a lean model (pt_model_set_lean), where argv_vec is empty: the
	 * number + 1 of the capture's record that carries the command line
	 * (pt_model_read_argv), or 0 for none. */
	uint32_t argv_ref;
	int64_t utime_us, stime_us;     /* -1: unknown */
	int64_t maxrss_kb;              /* -1: unknown */
	const char *exe, *cwd;          /* never NULL ("" when unknown) */
	/* The command line and the recorded environment ("NAME=value") are
	 * string ids, the command line packed (a million compiler lines
	 * hold 26 million arguments).  Read them with pt_exec_arg() and
	 * pt_exec_envent(). */
	const void *argv_vec;           /* argc ids, packed */
	size_t argc;
	const uint32_t *env_id;         /* envc entries */
	size_t envc;
	const struct pt_model_priv *owner;      /* whose strings the ids are */
	struct pt_exec *parent;         /* NULL for a root */
	struct pt_exec *first_child, *next_sibling;  /* children in start order */
};

struct pt_model {
	struct pt_exec **execs;         /* sorted by start_ns, then pid */
	size_t n;
	size_t ncaptures;
	/* What the inputs said about themselves and their own damage. */
	uint64_t frames, connections, bad_frames, lost_frames;
	int damaged;                    /* some input was truncated or corrupt */
	int lean;                       /* pt_model_set_lean: no argv kept,
					 * execs NULL (pt_model_exec()) */
	struct pt_model_priv *priv;
};

void pt_model_init(struct pt_model *m);

/*
 * Keep no command lines: an execution's says which record of its
 * capture carries it (pt_exec.argv_ref), for pt_model_read_argv() to
 * hand over in a second reading.  A million compiler command lines are
 * most of a model's memory; a view that needs each only once, as it
 * streams, saves it.  The executions themselves are kept in half the
 * memory, without m->execs: pt_model_exec() and pt_model_parent() read
 * them.  No sub-process traces either.  Call before adding captures.
 */
void pt_model_set_lean(struct pt_model *m);

/*
 * Execution i (start order) of m: m->execs[i], or, in a lean model, which
 * has no m->execs, a copy made in *tmp, without command line, parent or
 * children (pt_model_parent()), valid until the model changes.
 */
const struct pt_exec *pt_model_exec(const struct pt_model *m, size_t i,
				    struct pt_exec *tmp);

/* The index of execution i's parent, or SIZE_MAX for a root. */
size_t pt_model_parent(const struct pt_model *m, size_t i);

/*
 * The second reading of a lean model's capture `path`: for each refs[k]
 * (argv_ref values, ascending, none 0) call fn with the command line of
 * that record, which lives until fn returns.  Returns how many of refs
 * were handed over (fewer if the capture is shorter than it was when
 * read into the model), or -1 if it cannot be opened (a one-line error
 * was printed).
 */
long pt_model_read_argv(const char *path, const uint32_t *refs, size_t n,
			void (*fn)(void *ctx, size_t k, const char *const *argv,
				   size_t argc),
			void *ctx);

/*
 * Read one capture file or spool directory into the model.  Returns 0, 1 if
 * it was damaged (what was intact is kept; a warning was printed), or -1 if
 * it could not be read at all (one-line error printed).
 */
int pt_model_add_capture(struct pt_model *m, const char *path);

/* Build the executions and the tree from everything added. */
void pt_model_finish(struct pt_model *m);

/*
 * Shift each capture's executions in time so that every capture starts
 * when the earliest does: repeated runs of one build, laid over each
 * other rather than end to end.  Ids and start order are rebuilt.
 * shift (NULL, or m->ncaptures entries) gets what was taken off each
 * capture's times, in ns.
 */
void pt_model_align_starts(struct pt_model *m, int64_t *shift);

/*
 * Argument i (< e->argc) of e's command line; never NULL.  Valid until
 * the model is freed, or, for a long argument with spaces (kept as its
 * words and joined here), until an argument of another command line is
 * read in the same thread: hold on to a copy, not the pointer, across
 * executions.  Threads may read a model at once (each keeps its own
 * joined arguments); a thread other than the one that frees the model
 * calls pt_model_thread_done() before it ends.
 */
const char *pt_exec_arg(const struct pt_exec *e, size_t i);

/* Free what pt_exec_arg() keeps for the calling thread. */
void pt_model_thread_done(void);

/*
 * The model's id of argument i of e: arguments with the same id are the
 * same string, for caches keyed on arguments (pt_exec_arg()'s pointer
 * may not be unique).
 */
uint32_t pt_exec_arg_id(const struct pt_exec *e, size_t i);

/* Entry i (< e->envc) of e's recorded environment, "NAME=value". */
const char *pt_exec_envent(const struct pt_exec *e, size_t i);

/* Value of NAME in an execution's recorded environment, or NULL. */
const char *pt_exec_env(const struct pt_exec *e, const char *name);

/*
 * Give e the command line argv[0..argc) (redaction rewrites them).  The
 * strings are copied into the model; vectors are shared between the
 * executions that have the same one.
 */
void pt_exec_set_argv(struct pt_model *m, struct pt_exec *e,
		      const char *const *argv, size_t argc);

/* Metadata of capture i ("host", "command", ...), or NULL. */
const char *pt_model_meta(const struct pt_model *m, size_t capture,
			  const char *key);

/* Set (override) metadata KEY of capture i, e.g. a redacted "command". */
void pt_model_set_meta(struct pt_model *m, size_t capture, const char *key,
		       const char *value);

/*
 * The files an execution accessed (`record --files`): one entry per
 * path and kind of access (enum pt_file_kind of proftrace/wire.h), with
 * the time of the first such access.  The image's executable is not
 * among them (it is pt_exec.exe).
 */
struct pt_file_access {
	const char *path;               /* absolute, interned: equal paths are
					 * the same pointer */
	int64_t time_ns;                /* Unix epoch ns */
	char kind;                      /* 'r' 'w' 'd' 'n' 'k' 'p' 's' 'm':
					 * enum pt_file_kind */
};

/* Execution e's file accesses, *n of them (NULL and 0: none). */
const struct pt_file_access *pt_model_files(const struct pt_model *m,
					    const struct pt_exec *e, size_t *n);

/*
 * Execution e's own run-queue wait in ns: the time its process's main
 * thread was runnable but waiting for a CPU while e ran (from its fork,
 * for a process's first image), as the `record --files` library read it
 * from /proc/self/schedstat at e's end (FILES_WAIT, doc/format.md).
 * -1: not known (no --files, an untraced image, or not readable).
 */
int64_t pt_model_wait(const struct pt_model *m, const struct pt_exec *e);

/* How many file accesses the model holds (0: the capture was made
 * without --files); *dropped (if not NULL): those the images could not
 * keep. */
size_t pt_model_files_count(const struct pt_model *m, uint64_t *dropped);

/*
 * Events that programs wrote about themselves (Chrome trace files taken
 * into the capture: doc/manual.md, "Traces that programs write"), each
 * given to the execution that wrote it, or for a build tool's events
 * that name the pid of a process it ran, to that process's execution.
 */
struct pt_sub {
	int64_t start_ns, dur_ns;       /* Unix epoch ns, within the
					 * execution's span; dur 0: instant */
	const char *name, *cat;         /* never NULL */
	const char *detail;             /* args.detail (clang: the header,
					 * the template), or NULL */
	const char *args;               /* compact JSON object, or NULL */
	int64_t tid;                    /* the writer's thread, as written */
	char ph;                        /* 'X' slice, 'i' instant, 'C' counter */
};

/*
 * The events inside execution e, by start (the longer first at one
 * start); *n is their count (0: none, and NULL is returned).  Valid until
 * the model is freed.
 */
const struct pt_sub *pt_model_subs(const struct pt_model *m,
				   const struct pt_exec *e, size_t *n);

/* What became of the trace files, for the views to say. */
struct pt_sub_stats {
	uint64_t files;                 /* TRACE records read */
	uint64_t events;                /* events given to executions */
	uint64_t refused;               /* files refused whole (a link, a
					 * FIFO, over the run's limit...) */
	uint64_t cut;                   /* files cut (size cap, a NUL) */
	uint64_t malformed;             /* files whose JSON stopped early */
	uint64_t orphans;               /* files no execution wrote */
	uint64_t skipped;               /* events not kept: unknown phase,
					 * unmatched B/E, over the limits */
	uint64_t outside;               /* events out of their execution's
					 * span: left out */
	uint64_t clipped;               /* events cut to that span */
	const char *first_note;         /* the first file's problem, as
					 * "PATH: what", or NULL */
};

const struct pt_sub_stats *pt_model_sub_stats(const struct pt_model *m);

/*
 * One line saying what was refused, cut or left out (appended to sb,
 * no newline), or nothing when all went in.  Returns 1 if it wrote.
 */
struct pt_sb;
int pt_sub_stats_line(const struct pt_model *m, struct pt_sb *sb);

void pt_model_free(struct pt_model *m);

#endif
