/*
 * The jobs and scopes of proftrace deps, the types both analysis/deps.h
 * (the result) and analysis/depjobs.h (how they are found) hold.  A
 * header of types alone, so that neither of the two includes the other.
 */
#ifndef PT_DEPS_JOBS_H
#define PT_DEPS_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/makedb.h"
#include "model/model.h"

struct pt_deps_job {
	const struct pt_exec *e;        /* its first execution */
	int64_t start_ns, end_ns;       /* its span, with the tools it ran */
	int64_t dur_ns;                 /* its own work: the time its own
					 * processes ran, less what they
					 * waited for a tool they started */
	int64_t cpu_ns;                 /* their CPU time */
	int64_t wait_ns;                /* their run-queue wait, -1: unknown */
	char *cmd;                      /* command line, as the CSV quotes it */
	const char *target;             /* the make target whose recipe it
					 * is, or NULL */
	const char *dir;                /* the directory its tool ran in */
	const char *where;              /* "Makefile:12": the recipe's */
	size_t scope;                   /* which tool ran it (scopes) */
};

enum pt_deps_scope_kind {
	PT_DEPS_SEQ,                    /* a script: children it waited for
					 * are ordered */
	PT_DEPS_MAKE,                   /* make: its database, else timing */
	PT_DEPS_NINJA,                  /* ninja, another tool: timing */
	PT_DEPS_OPAM,                   /* opam: a job per package, the
					 * order its opam files declare */
};

struct pt_deps_scope {                  /* a tool that ran jobs */
	enum pt_deps_scope_kind kind;
	const struct pt_exec *e;        /* NULL: the capture's roots */
	size_t parent_job;              /* SIZE_MAX: none */
	int64_t start_ns, end_ns;
	int declared;                   /* its declared order was read */
	int notparallel;
	struct pt_makedb *db;           /* make's or ninja's database,
					 * opam's packages, or NULL */
};

#endif
