/*
 * Folded stacks, the input of flame graph tools (flamegraph.pl, inferno,
 * speedscope): one line per distinct stack (analysis/stacks.h),
 * "a;b;c 1234\n", with zero weights omitted.
 */
#ifndef PT_FOLDED_H
#define PT_FOLDED_H

#include <stdio.h>

#include "analysis/stacks.h"
#include "model/model.h"

/* Write m's stacks to f.  Returns 0, or -1 if a write failed. */
int pt_folded_write(const struct pt_model *m, FILE *f,
		    enum pt_stacks_weight weight);

/* The same, with the weight fixed: for tables of (model, FILE) writers. */
int pt_folded_write_wall(const struct pt_model *m, FILE *f);
int pt_folded_write_cpu(const struct pt_model *m, FILE *f);

#endif
