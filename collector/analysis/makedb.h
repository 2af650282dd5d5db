/*
 * The order a make declared: its database (`make -pq`, read again in the
 * directory the recorded make ran in, with the same makefiles, variables
 * and goals), the targets, their prerequisites and their recipes, for
 * proftrace deps (analysis/deps.c) to tell which of a make's jobs it had
 * ordered and which it ran in this order by chance.
 */
#ifndef PT_MAKEDB_H
#define PT_MAKEDB_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct pt_makedb_target {
	char *name;                     /* as the makefile names it */
	uint32_t *pre;                  /* prerequisites, normal and
					 * order-only, and the other targets
					 * of a grouped rule: targets of
					 * this db */
	size_t npre;
	char **recipe;                  /* its lines, expanded where the
					 * database tells how ('\1': any
					 * text), blanks collapsed */
	size_t nrecipe;
	char *where;                    /* "Makefile:12" of the recipe, or
					 * NULL */
	int phony;
	int grouped;                    /* one run of its recipe makes the
					 * others of its rule too (&:) */
};

struct pt_makedb {
	char *dir;                      /* where make ran, after its -C */
	struct pt_makedb_target *t;
	size_t n;
	int notparallel;                /* .NOTPARALLEL: every job ordered */
	long *serial;                   /* each target's place in make -j1's
					 * walk from the goals (prerequisites
					 * first, in their order), -1: not
					 * reached */
	uint32_t *hash;                 /* by name; internal */
	size_t hcap;
	uint8_t *mark;                  /* internal: reach() */
	uint32_t *stack;
};

/*
 * The database of the make that e ran: `make -pq` in its directory, with
 * its -f, -C, -I, variable and goal arguments.  Returns NULL when the
 * directory or the makefile is gone or make cannot be run (then the
 * caller has only the recorded timing).
 */
struct pt_makedb *pt_makedb_read(const struct pt_exec *e);

/*
 * The same for ninja: its graph (`ninja -t graph`, with the recorded -C,
 * -f and targets), each output a target, the edge's inputs (explicit,
 * implicit and order-only) its prerequisites.  No recipes: ninja's jobs
 * are known by the outputs they write.  NULL as above.
 */
struct pt_makedb *pt_makedb_read_ninja(const struct pt_exec *e);

/* The target named name[0..len) of db, added (no prerequisites, no
 * recipe) if db has none: for a reader of another tool's order
 * (analysis/opamdb.c). */
size_t pt_makedb_target(struct pt_makedb *db, const char *name, size_t len);

/*
 * The goals on make command line e (none: its default goal), at most
 * max, malloc'd into goal, and the directory it works in (malloc'd, into
 * *dir).  Returns how many.
 */
size_t pt_makedb_goals(const struct pt_exec *e, char **goal, size_t max,
		       char **dir);
/* Is exe a makefile that runs by its #! line (debian/rules)? */
int pt_makedb_script(const char *exe);

/* rel in dir (rel itself if absolute), lexically normal (no ".", "..",
 * empty components); malloc'd. */
char *pt_makedb_join(const char *dir, const char *rel);

/* The target named name (relative to db->dir, or absolute), or -1. */
long pt_makedb_find(const struct pt_makedb *db, const char *name);

/*
 * Which target's recipe ran command cmd (the text a shell was given, or
 * the words of a program make ran itself): the target, or -1.  Where
 * the recipes of several targets match (one rule with several targets,
 * its lines the same for each), prefer (the target of a line before)
 * when cmd is a later line of its recipe: the same run; else -2.
 */
long pt_makedb_match(const struct pt_makedb *db, const char *cmd,
		     long prefer);

/*
 * Of the targets whose recipe begins with command cmd (one line in the
 * recipes of several rules), the one make -j1 comes to first after
 * target after (-1: from its start).  Returns -1 when none comes after.
 */
long pt_makedb_match_after(const struct pt_makedb *db, const char *cmd,
			   long after);
/* Which line of target t's recipe command cmd is, or -1. */
long pt_makedb_line(const struct pt_makedb *db, size_t t, const char *cmd);
/* Does target b depend on target a, directly or through others? */
int pt_makedb_reaches(struct pt_makedb *db, size_t a, size_t b);

/*
 * The targets b depends on nearest: those with stop[t] set that b
 * reaches through targets without it, into out (room for db->n).
 * Returns how many.
 */
size_t pt_makedb_nearest(struct pt_makedb *db, size_t b, const uint8_t *stop,
			 uint32_t *out);

void pt_makedb_free(struct pt_makedb *db);

#endif
