/*
 * What the build could have been: its jobs, the dependencies between
 * them found in the files they read and wrote (`record --files`), and
 * the wall time an ideal schedule of the same jobs would take on 1, 2,
 * 4... and unlimited CPUs (doc/proftrace-deps.1.md).
 */
#ifndef PT_DEPS_H
#define PT_DEPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct pt_deps_job {
	const struct pt_exec *e;        /* the execution the driver ran */
	int64_t start_ns, end_ns;       /* its whole subtree's span */
	char *cmd;                      /* command line, as the CSV quotes it */
};

struct pt_deps_ideal {
	int cpus;                       /* 0: unlimited */
	int64_t wall_ns;
};

struct pt_deps_ser {                    /* ran one after the other, with
					 * no path between them */
	size_t first, then;             /* jobs */
	int64_t gain_ns;                /* what running them side by side
					 * saves: the shorter of the two */
};

struct pt_deps_race {                   /* read while another job was going
					 * to write it, or writing it, with
					 * the two unordered */
	const char *path;
	size_t writer, reader;          /* jobs */
};

struct pt_deps_slot {                   /* a job in the drawn schedule */
	int cpu;                        /* 0 .. sched_cpus - 1 */
	int64_t start_ns, end_ns;       /* from the build's start */
	int critical;                   /* on the graph's critical path */
};

struct pt_deps {
	const struct pt_exec *driver;   /* whose children are the jobs */
	struct pt_deps_job *job;        /* by start */
	size_t njobs, nedges;
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

/*
 * Analyse m into d.  Returns 0; -1 with *why set to a one-line
 * explanation when there is nothing to analyse (a capture without file
 * accesses, no execution that ran jobs).
 */
int pt_deps_build(const struct pt_model *m, struct pt_deps *d,
		  const char **why);

void pt_deps_free(struct pt_deps *d);

#endif
