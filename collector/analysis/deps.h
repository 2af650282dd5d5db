/*
 * What the build could have been: its jobs, the dependencies between
 * them found in the files they read and wrote (`record --files`), and
 * the wall time an ideal schedule of the same jobs would take on 1, 2,
 * 4... and unlimited CPUs (doc/man/proftrace-deps.1.scd).
 */
#ifndef PT_DEPS_H
#define PT_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/deps-jobs.h"
#include "analysis/makedb.h"
#include "model/model.h"

struct pt_deps_edge {                   /* a file dependency */
	size_t from, to;                /* jobs */
	const char *path;               /* the first path */
	size_t npaths;
};

struct pt_deps_ideal {
	int cpus;                       /* 0: unlimited */
	int64_t wall_ns;
};

struct pt_deps_ser {                    /* an order the build imposed
					 * with no file dependency under it */
	size_t first, then;             /* the jobs on each side */
	int64_t gain_ns;                /* what the ideal schedule on
					 * sched_cpus saves without it */
	char *why;                      /* where it is declared */
};

enum pt_deps_race_kind {
	PT_DEPS_RAW = 'r',              /* read after the other wrote it */
	PT_DEPS_WAW = 'w',              /* both wrote it */
	PT_DEPS_MISSING = 'm',          /* looked for before the other made it */
	PT_DEPS_DIR = 'k',              /* made in a directory the other made */
	PT_DEPS_RULE = 't',             /* a target whose own rule did not
					 * run: the other's recipe made it,
					 * and a parallel make runs both */
};

struct pt_deps_race {                   /* a file dependency between two
					 * jobs that the build's declared
					 * order does not imply */
	const char *path;
	size_t writer, reader;          /* jobs: the first, the second */
	int kind;                       /* enum pt_deps_race_kind */
	size_t npaths;                  /* paths between the same two */
	char *fix;                      /* the prerequisite to add, where */
};

struct pt_deps_slot {                   /* a job in the drawn schedule */
	int cpu;                        /* 0 .. sched_cpus - 1 */
	int64_t start_ns, end_ns;       /* from the build's start */
	int critical;                   /* on the graph's critical path */
};

struct pt_deps {
	const struct pt_exec *driver;   /* the first root */
	struct pt_deps_job *job;        /* by start */
	size_t njobs, nedges;
	struct pt_deps_edge *edge;      /* by from, then to */
	struct pt_deps_scope *scope;
	size_t nscopes;
	uint64_t *held;                 /* the job that runs a tool before
					 * that tool's jobs: from << 32 | to */
	size_t nheld;
	uint64_t *decl;                 /* the order each tool declared
					 * between its own jobs (or ran them
					 * in, where it declares none): from
					 * << 32 | to, from < to */
	uint8_t *decl_tool;             /* per decl: 1 the tool declared it
					 * (a prerequisite, .NOTPARALLEL),
					 * 0 the order they ran in */
	size_t ndecl;
	int64_t *dur;                   /* per job: its own work, less its
					 * run-queue wait (what a schedule
					 * places) */
	uint8_t *container;             /* per job: it runs a build tool */
	uint8_t *wanted;                /* per job: a goal of its make (all,
					 * install) wants it, not only the
					 * jobs that depend on it */
	uint32_t *job_of;               /* per execution (pt_exec.id): its
					 * job, UINT32_MAX: none */
	size_t nexecs;
	int64_t cpu_ns;                 /* the jobs' CPU time, all */
	int64_t work_ns;                /* the jobs' own time, all */
	int64_t wait_ns;                /* their run-queue wait, -1: unknown
					 * (a capture without it) */
	size_t accesses;                /* file accesses in the model */
	uint64_t dropped;               /* accesses the images did not keep */
	int machine_cpus;               /* 0: unknown */
	int64_t wall_ns;                /* the build's, now */
	int64_t lead_ns, tail_ns;       /* before the first job, after the last */
	struct pt_deps_ideal ideal[24];
	size_t nideal;
	size_t *crit;                   /* the graph's critical path, jobs */
	size_t ncrit;
	struct pt_deps_slot *sched;     /* per job: list scheduling on */
	int sched_cpus;                 /* this machine's CPUs (2 if unknown) */
	int64_t sched_span_ns;
	struct pt_deps_ser *ser;        /* by gain, largest first */
	size_t nser;
	struct pt_deps_race *race;
	size_t nrace;
};

/* pt_deps_build's flags */
#define PT_DEPS_ANY 1u                  /* a capture without file accesses
					 * too: the order is the tools' and
					 * the process tree's alone */

/*
 * Analyse m into d.  Returns 0; -1 with *why set to a one-line
 * explanation when there is nothing to analyse (a capture without file
 * accesses unless flags has PT_DEPS_ANY, no execution that ran jobs).
 */
int pt_deps_build(const struct pt_model *m, struct pt_deps *d,
		  unsigned flags, const char **why);

void pt_deps_free(struct pt_deps *d);

#endif
