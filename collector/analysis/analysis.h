/*
 * Analyses shared by the views (report, trace JSON, folded stacks, diff):
 * labels, grouping, self times, the parallelism profile and the critical
 * path.  doc/man/proftrace-report.1.scd defines every number; the definitions
 * are repeated next to the code that computes them.
 *
 * All times are nanoseconds on the model's one time axis (Unix epoch).  An
 * execution's interval is [start_ns, end_ns]; every computation here is
 * linear or O(n log n) in the number of executions, and allocates per
 * model, never per execution.
 */
#ifndef PT_ANALYSIS_H
#define PT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "base/strbuf.h"
#include "base/utf8.h"          /* pt_utf8_len() */

/* Longest label, in bytes: a longer argument is left out, a longer
 * program name cut (with "..."). */
#define PT_LABEL_MAX 64

/*
 * Append the short label of e to sb: the program's name and the argument
 * that says what it works on.  For compilers, assemblers and linkers that
 * is the source file (or the -o target when the source is a temporary
 * file); for anything else the first argument that is not an option.
 * The argument is whole: a file name may lose its directories (always
 * when absolute), anything else that does not fit in PT_LABEL_MAX bytes
 * (a sh -c script) is left out, with the option before it kept
 * ("sh -c").  Control characters become spaces; a fork child is
 * "NAME (fork)".
 */
void pt_exec_label(const struct pt_exec *e, struct pt_sb *sb);

/* The same label from a command line (argv[0..argc), exe the program's
 * path or NULL) as a record carries it: a live view names what runs as
 * the report will. */
void pt_argv_label(const char *const *argv, size_t argc, const char *exe,
		   struct pt_sb *sb);

/*
 * Append the title of capture c in the traces: "HOST: COMMAND" (the
 * command cut to 120 bytes, at a character boundary), "HOST #N: ..."
 * among several captures, "capture" for an unknown host.
 */
void pt_capture_title(const struct pt_model *m, size_t c, struct pt_sb *sb);

/*
 * Known user + system CPU of e in microseconds (unknown parts count 0).
 * Each part is capped at PT_CPU_MAX_US, so that sums over millions of
 * executions of a corrupt capture cannot overflow.
 */
#define PT_CPU_MAX_US (1ll << 40)       /* 12.7 days */
int64_t pt_exec_cpu_us(const struct pt_exec *e);
int64_t pt_cpu_part_us(int64_t us);

/* Append e's command line to sb, quoted for a POSIX shell. */
void pt_exec_quote(const struct pt_exec *e, struct pt_sb *sb);

/* Program name of e: basename of argv[0], else of exe; "?" if neither. */
const char *pt_exec_prog(const struct pt_exec *e);

/* The same from argv[0] (or NULL) and exe, where the command line is not
 * the model's (a lean model's, read again). */
const char *pt_prog_name(const char *arg0, const char *exe);

/*
 * Append OPAM_PACKAGE_NAME.OPAM_PACKAGE_VERSION (or the name alone) to sb;
 * nothing when e has no package.
 */
void pt_exec_package(const struct pt_exec *e, struct pt_sb *sb);

/* ---- grouping ---- */

enum pt_group_kind {
	PT_GROUP_EXE,           /* program name (pt_exec_prog) */
	PT_GROUP_PACKAGE,       /* opam package, "(none)" */
	PT_GROUP_CWD,           /* working directory, "(unknown)" */
	PT_GROUP_ENV,           /* value of a recorded variable, "(unset)" */
	PT_GROUP_COMMAND,       /* normalized command line (pt_exec_key) */
};

struct pt_group_by {
	enum pt_group_kind kind;
	const char *env;        /* PT_GROUP_ENV: the variable's name */
};

/*
 * Parse "exe", "package", "cwd", "env:NAME" or (if allow_command)
 * "command".  Returns 0, or -1 if spec is none of them.
 */
int pt_group_parse(const char *spec, int allow_command, struct pt_group_by *g);

/* A name for a table's column: "program", "package", "directory",
 * "command", or the variable's name. */
const char *pt_group_name(const struct pt_group_by *g);

/* Append e's group under g to sb. */
void pt_group_key(const struct pt_group_by *g, const struct pt_exec *e,
		  struct pt_sb *sb);

/*
 * Append the key under which `proftrace diff` matches e across runs: the
 * program name, then each argument after argv[0], separated by spaces and
 * shell-quoted, where
 *  - a path under the checkout (the working directory of e's root
 *    execution, unless that is / or a temporary directory itself)
 *    becomes "$SRC/" and the rest of the path: runs of one build from
 *    another directory, even one under /tmp, match;
 *  - a path under a temporary directory (/tmp/, /var/tmp/, /dev/shm/, or
 *    after a component named tmp, temp or *.tmp) becomes "$TMP/" and the
 *    rest, whose generated parts (mkstemp's six characters, gcc's
 *    "ccXXXXXX", pids) become '*': "/tmp/ccQ2x9Zk.s" -> "$TMP/cc*.s",
 *    mktemp's "tmp.x8Qz0aPL2c" -> "tmp.*", "x-48213" -> "x-*";
 *    configure's "conftest*" arguments likewise;
 *  - any other absolute path stays as it is ("--prefix=/usr",
 *    "-I/usr/include"): it names the same thing in every run;
 *  - a build tool's job count and jobserver ("make -j8", "--jobs=2",
 *    "-l4", "--jobserver-auth=3,4") is left out;
 * and nothing else changes.  Executions with the same key in one run are
 * told apart by the caller (pt_runs numbers them in start order).
 */
void pt_exec_key(const struct pt_exec *e, struct pt_sb *sb);

/* The checkout directory pt_exec_key() reduces to "$SRC", or "". */
const char *pt_exec_checkout(const struct pt_exec *e);

/* ---- interning: strings (or any bytes) to dense ids ---- */

struct pt_strtab {
	struct pt_sb data;      /* the keys, each followed by a NUL */
	size_t *off;            /* id -> offset in data */
	uint32_t *len;          /* id -> key length */
	size_t n, cap;
	uint32_t *slots;        /* open addressing; id + 1, 0 = empty */
	uint32_t *hashes;       /* id -> hash */
	size_t nslots;
};

void pt_strtab_init(struct pt_strtab *t);
/* Id of key (len bytes), added if new; *added (may be NULL) says which. */
uint32_t pt_strtab_intern(struct pt_strtab *t, const void *key, size_t len,
			  int *added);
/* The key of id, NUL-terminated; valid until the next intern. */
static inline const char *pt_strtab_str(const struct pt_strtab *t,
					uint32_t id)
{
	return t->data.buf + t->off[id];
}
void pt_strtab_free(struct pt_strtab *t);

/*
 * Numbering among equals: the second and later of a key get " #2",
 * " #3"... appended, in the order they come (executions in start order,
 * so that the same step of two runs of a build gets the same key).
 */
struct pt_keynum {
	struct pt_strtab seen;
	uint32_t *count;        /* seen id -> how many so far */
	size_t cap;
};

void pt_keynum_init(struct pt_keynum *k);
/* Count key's text in sb, and append its number from the second on. */
void pt_keynum_add(struct pt_keynum *k, struct pt_sb *key);
void pt_keynum_free(struct pt_keynum *k);

/* ---- per-execution numbers and whole-run profiles ---- */

/* A stretch of time during which one execution was the only busy one. */
struct pt_stretch {
	uint32_t exec;
	int64_t from, to;
};

/*
 * One step of the critical path: execution `exec` lay on the path during
 * [from, to]; its own time on it is `own` (the span less the spans of the
 * steps below it); `depth` counts from the whole run, which is the first
 * step (exec UINT32_MAX, depth 0, its own time being off the path), so
 * that roots are at depth 1.
 */
struct pt_cp_step {
	uint32_t exec;
	uint32_t depth;
	int64_t from, to, own;
};

struct pt_analysis {
	const struct pt_model *m;
	int64_t t0, t1;                 /* earliest start, latest end */
	int64_t *self_ns;               /* per id: see pt_analyze() */
	int64_t *sub_end;               /* per id: latest end in its subtree */
	uint32_t *sub_n;                /* per id: executions in its subtree */
	uint32_t *depth;                /* per id: 0 for a root */
	uint32_t *by_end;               /* ids sorted by end_ns, then id */

	/* Parallelism: level_ns[k] is the time during which exactly k
	 * executions were busy (see pt_sweep), for k < nlevels. */
	int64_t *level_ns;
	size_t nlevels;
	uint32_t peak;                  /* highest level held for > 0 ns */
	double average;                 /* time-weighted mean level */
	struct pt_stretch *alone;       /* longest first, nalone of them */
	size_t nalone;

	/* Critical path, in time order (a parent before its children). */
	struct pt_cp_step *cp;
	size_t ncp;
};

/*
 * Compute everything above for m (after pt_model_finish).  `nalone` is how
 * many of the longest single-busy stretches to keep.
 *
 * self_ns of an execution is its wall time less the time covered by the
 * union of its direct children's intervals (clipped to its own interval).
 */
void pt_analyze(struct pt_analysis *a, const struct pt_model *m,
		size_t nalone);
void pt_analysis_free(struct pt_analysis *a);

/*
 * Only the per-execution part (t0/t1, self_ns, sub_end, sub_n, depth,
 * by_end): what the trace and folded writers need.
 */
void pt_analyze_tree(struct pt_analysis *a, const struct pt_model *m);

/* ---- the sweep over starts and ends ---- */

/*
 * Walks the time axis, applying at each distinct instant every start and
 * end that happens then.  After pt_sweep_next() returns 1, `t` is that
 * instant and the counters hold the state right after it (until the next
 * instant).  Executions of zero length never count as running.
 *
 * "Busy" executions are those running with no running descendant: when
 * make runs sh which runs cc, only cc is busy.  A process that waits for
 * its children is not doing the work, and a child orphaned by an exited
 * parent still keeps its grandparent from being counted.
 */
struct pt_sweep {
	int64_t t;
	uint32_t running;               /* all captures */
	uint32_t busy;
	uint32_t *cap_running;          /* per capture */
	uint32_t *cap_busy;
	uint32_t *dirty;                /* captures changed at t ... */
	size_t ndirty;                  /* ... this many */
	uint32_t *busy_set;             /* ids of the busy executions */

	/* private */
	const struct pt_analysis *a;
	size_t si, ei;
	uint8_t *run, *dirty_flag;
	uint32_t *active_children, *busy_pos;
};

/* a needs only pt_analyze_tree()'s part. */
void pt_sweep_init(struct pt_sweep *s, const struct pt_analysis *a);
int pt_sweep_next(struct pt_sweep *s);
void pt_sweep_free(struct pt_sweep *s);

#endif
