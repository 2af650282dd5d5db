/*
 * Folded stacks, the input of flame graph tools (flamegraph.pl, inferno,
 * speedscope): one line per distinct stack, "a;b;c 1234\n".
 *
 * A stack is the chain of labels (pt_exec_label) from a root execution
 * down to one execution; with several captures each stack starts with a
 * frame naming its capture.  The weight is that execution's own share:
 *  - wall: its self time (its wall time less the time covered by its
 *    direct children's intervals), in microseconds;
 *  - cpu: its own user + system CPU time, in microseconds (the CPU of a
 *    program image never includes its children's).
 * Identical stacks are merged (weights summed), zero weights omitted, and
 * labels are cleaned so that lines parse: ';' becomes ',', control
 * characters become spaces, and no label is empty or has spaces at either
 * end.  Stacks are cut at PT_FOLDED_MAX_DEPTH frames: executions deeper
 * than that add their weight to one frame "..." at that depth, since each
 * line repeats its whole stack and a chain of thousands of nested shells
 * would otherwise make an output quadratic in its depth.
 */
#ifndef PT_FOLDED_H
#define PT_FOLDED_H

#include <stdio.h>

#include "model/model.h"

#define PT_FOLDED_MAX_DEPTH 256

enum pt_folded_weight {
	PT_FOLDED_WALL,
	PT_FOLDED_CPU,
};

/* Write m's stacks to f.  Returns 0, or -1 if a write failed. */
int pt_folded_write(const struct pt_model *m, FILE *f,
		    enum pt_folded_weight weight);

/* The same, with the weight fixed: for tables of (model, FILE) writers. */
int pt_folded_write_wall(const struct pt_model *m, FILE *f);
int pt_folded_write_cpu(const struct pt_model *m, FILE *f);

#endif
