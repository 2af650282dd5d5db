/*
 * The stacks of a model, the matter of flame graphs (views/folded.c,
 * views/svg.c).
 *
 * A stack is the chain of labels (pt_exec_label) from a root execution
 * down to one execution; with several captures each stack starts with a
 * frame naming its capture.  The weight is that execution's own share:
 *  - wall: its self time (its wall time less the time covered by its
 *    direct children's intervals), in microseconds;
 *  - cpu: its own user + system CPU time, in microseconds (the CPU of a
 *    program image never includes its children's).
 * Identical stacks are merged (weights summed), and labels are cleaned
 * so that folded lines parse: ';' becomes ',', control characters become
 * spaces, and no label is empty or has spaces at either end.  Stacks are
 * cut at PT_STACKS_MAX_DEPTH frames: executions deeper than that add
 * their weight to one frame "..." at that depth, since each folded line
 * repeats its whole stack and a chain of thousands of nested shells would
 * otherwise make an output quadratic in its depth.
 */
#ifndef PT_STACKS_H
#define PT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "model/model.h"

#define PT_STACKS_MAX_DEPTH 256

enum pt_stacks_weight {
	PT_STACKS_WALL,
	PT_STACKS_CPU,
};

/*
 * The stacks of a model, merged: a tree of frames (the trie of the
 * stacks), each with its own weight in the unit the folded lines print
 * (microseconds), already rounded as they print, so that any other view
 * of the stacks (the SVG flame graph) agrees with the folded lines to the
 * unit.  Top frames are those with parent PT_STACKS_NONE, in order of
 * first appearance; children follow first/next, also in that order.
 */
#define PT_STACKS_NONE UINT32_MAX

struct pt_stacks {
	size_t n;                       /* frames */
	uint32_t *parent, *first, *next;
	int64_t *weight;                /* own weight, >= 0 */
	struct pt_strtab keys;          /* private: parent id + label */
	uint32_t *last;                 /* private: last child */
	size_t cap;                     /* private */
};

/* Build m's stacks into s (free with pt_stacks_free()). */
void pt_stacks_build(struct pt_stacks *s, const struct pt_model *m,
		     enum pt_stacks_weight weight);

/* Label of frame id (cleaned as above) and its length. */
static inline const char *pt_stacks_label(const struct pt_stacks *s,
					  uint32_t id, size_t *len)
{
	*len = s->keys.len[id] - sizeof(uint32_t);
	return pt_strtab_str(&s->keys, id) + sizeof(uint32_t);
}

void pt_stacks_free(struct pt_stacks *s);

#endif
