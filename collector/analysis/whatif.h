/*
 * What if: the build's wall time under a change (more CPUs, other job
 * slots, some jobs faster, dropped or cached, the serializations with no
 * file dependency under them gone), predicted by running the build's
 * jobs (analysis/deps.h) through the schedule its tools would make
 * (analysis/depsched.h), once as recorded and once changed
 * (doc/man/proftrace-whatif.1.scd).
 */
#ifndef PT_WHATIF_H
#define PT_WHATIF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/deps.h"
#include "model/model.h"

enum pt_whatif_kind {
	PT_WHATIF_CPUS,                 /* n CPUs, the tools at -jn */
	PT_WHATIF_JOBS,                 /* the tools at -jn */
	PT_WHATIF_FASTER,               /* matched jobs take 1/factor */
	PT_WHATIF_DROP,                 /* matched jobs gone */
	PT_WHATIF_CACHED,               /* matched jobs take fetch_ns */
	PT_WHATIF_SERIAL_FREE,          /* no order without a file under it */
};

struct pt_whatif_change {
	enum pt_whatif_kind kind;
	const char *text;               /* as given: "--faster cc1=2" */
	const char *pattern;            /* a glob (* ? [) against the whole
					 * label, command or program, else a
					 * part of one of them */
	size_t job;                     /* with pattern NULL: this job alone */
	double factor;
	int64_t fetch_ns;
	int n;
	size_t matched;                 /* out: the jobs it matched */
};

struct pt_whatif {
	int64_t now_ns;                 /* the recorded wall */
	int64_t base_ns;                /* the schedule of the build as it
					 * was */
	int64_t changed_ns;             /* the same, changed */
	int64_t lost_ns;                /* of now, lost to other load */
	int64_t free_ns;                /* now, without it */
	int64_t predicted_ns;           /* free + changed - base */
	int64_t spread_ns;              /* what one recording can tell */
	double cpus, new_cpus;          /* 0: no limit */
	size_t slots, new_slots;        /* 0: none */
	int has_slots;                  /* make or ninja ran jobs */
	int files;                      /* the capture has file accesses */
	size_t *crit;                   /* the changed schedule's critical
					 * path, jobs, first to last */
	int64_t *crit_ns;               /* each one's time in it */
	size_t ncrit;
	size_t *taken;                  /* jobs --drop took along: only the
					 * dropped ones read their files */
	size_t ntaken;
};

/*
 * Predict the build of d (from m) with the changes c.  Returns 0; -1
 * with *err a malloc'd one-line reason (a change that matches nothing,
 * a drop that others need, --serial-free without file accesses).
 */
int pt_whatif_predict(const struct pt_deps *d, const struct pt_model *m,
		      struct pt_whatif_change *c, size_t nc,
		      struct pt_whatif *w, char **err);

void pt_whatif_free(struct pt_whatif *w);

struct pt_whatif_hint {                 /* a change worth trying */
	char *change;                   /* as whatif's options */
	char *why;                      /* what it is, in a few words */
	int64_t predicted_ns, saving_ns;
};

/*
 * The changes that would save most on d, best first, at most max of
 * them into h (each to free with pt_whatif_hints_free): more CPUs, the
 * serializations gone, the costliest job on the critical path twice as
 * fast; only those that save anything.  *now_ns: the recorded wall
 * without the load it waited for; *spread_ns: what one recording can
 * tell.  Returns how many.
 */
size_t pt_whatif_hints(const struct pt_deps *d, const struct pt_model *m,
		       struct pt_whatif_hint *h, size_t max,
		       int64_t *now_ns, int64_t *spread_ns);

void pt_whatif_hints_free(struct pt_whatif_hint *h, size_t n);

#endif
