/*
 * Inside analysis/: proftrace deps's scopes and jobs, built from the
 * model (analysis/depjobs.c) for analysis/deps.c.  A scope is a tool that
 * ran jobs (make, ninja, the script that drives the build, the capture's
 * roots); a job is one recipe of a make, one edge of ninja, one child of
 * a script, holding the scopes of the build tools it ran.
 */
#ifndef PT_DEPJOBS_H
#define PT_DEPJOBS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/deps-jobs.h"
#include "model/model.h"

#define NONE INT64_MAX                  /* no such time */

struct own {                            /* a job's own executions */
	const struct pt_exec **e;
	size_t n, cap;
};

struct dbcache {                        /* a tool's database, by its
					 * directory and command line */
	char *key;                      /* NUL-separated: len bytes */
	size_t len;
	struct pt_makedb *db;
};

struct pt_depjobs {
	const struct pt_model *m;
	struct pt_deps_job *j;          /* in the order they were made */
	struct own *own;                /* [nj]: each job's executions */
	size_t nj, cj;
	struct pt_deps_scope *s;        /* [0]: the capture's roots */
	size_t ns, cs;
	struct dbcache *dbc;
	size_t ndbc;
};

/* The kind of scope e is as a build tool (enum pt_deps_scope_kind), or
 * -1 when it is none or started nothing. */
int pt_depjobs_tool_kind(const struct pt_exec *e);

/*
 * Build m's scopes and jobs into b (zeroed), with each job's span, own
 * work, CPU time and run-queue wait; the databases of the tools are read
 * (analysis/makedb.h).  *bstart and *bend (INT64_MAX and INT64_MIN on
 * entry) get the span of the capture's roots, *first its first root.
 */
void pt_depjobs_build(struct pt_depjobs *b, const struct pt_model *m,
		      int64_t *bstart, int64_t *bend,
		      const struct pt_exec **first);

#endif
