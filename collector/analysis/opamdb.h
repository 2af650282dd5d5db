/*
 * Inside analysis/: the order opam declared between the packages of one
 * opam command (analysis/opamdb.c), as a make's database is one
 * (analysis/makedb.h).
 */
#ifndef PT_OPAMDB_H
#define PT_OPAMDB_H

#include "analysis/makedb.h"
#include "model/model.h"

/*
 * The packages opam (an opam execution) ran commands for, named
 * "name.version" as OPAM_PACKAGE_NAME and OPAM_PACKAGE_VERSION give
 * them: a target for each phase that ran ("a.1" its build, "a.1
 * install", "a.1 remove"), a build after the installs of the packages of
 * the run its opam file depends on (depends and depopts, less {post}), an
 * install after its build.  `where` is the file read: the one the switch
 * keeps, else the package source's.  A build target's two recipe lines
 * are the package's install and remove commands, for pt_opamdb_job.
 * NULL when no command named a package.
 */
struct pt_makedb *pt_opamdb_read(const struct pt_exec *opam);

/* The target of db (pt_opamdb_read's) whose phase command e, a child of
 * that opam, runs: by its package, and by its words against the
 * package's install and remove commands (an opam sandbox wrapper names
 * the phase itself).  -1 for opam's own commands. */
long pt_opamdb_job(const struct pt_makedb *db, const struct pt_exec *e);

#endif
