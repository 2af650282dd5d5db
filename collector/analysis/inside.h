/*
 * "Inside the programs": what the events that programs wrote about
 * themselves (model.h, pt_sub) add up to over a run, for `proftrace
 * report`: the time of each kind of event (clang: Frontend, Backend,
 * Source, InstantiateFunction...), and for kinds that name a subject
 * (args.detail: a header, a template), the subjects that cost the most
 * in total and how many times they came.  Times are the slices' own
 * durations summed, nested ones included in their parents'.
 */
#ifndef PT_INSIDE_H
#define PT_INSIDE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct pt_inside_row {
	const char *name;
	const char *detail;             /* NULL in by_name */
	int64_t total_ns;
	size_t count;
	uint32_t longest;               /* execution of the longest one */
};

/* Subjects are listed for this many kinds at most. */
#define PT_INSIDE_KINDS 4

struct pt_inside {
	struct pt_inside_row *by_name;  /* kinds by total time, top rows */
	size_t nby_name, kinds;         /* shown; there are `kinds` */
	struct pt_inside_row *by_subject; /* per kind with subjects (in
					 * by_name order), its top rows */
	size_t nby_subject;
	size_t events;                  /* slices in all */
	uint32_t execs;                 /* executions that wrote some */
};

/* Add up m's events, keeping `top` rows per table.  Free with
 * pt_inside_free(). */
void pt_inside_compute(struct pt_inside *in, const struct pt_model *m,
		       size_t top);
void pt_inside_free(struct pt_inside *in);

#endif
