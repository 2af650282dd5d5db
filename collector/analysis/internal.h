/*
 * Inside analysis/: what its files share.  The interface is
 * analysis/analysis.h.
 */
#ifndef PT_ANALYSIS_INTERNAL_H
#define PT_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

#define NONE UINT32_MAX

/*
 * Append s to sb for display: control characters become spaces (a
 * newline in a sh -c script must not break a line of output), invalid
 * UTF-8 bytes become '?', so that whatever reads a label reads text.
 */
void pt_label_add_clean(struct pt_sb *sb, const char *s, size_t n);

/*
 * The critical path, walked backwards from the end of the run.  In the
 * window [lo, cursor] of an execution (or of the whole run), the child
 * that finished last, at or before cursor, is the one it waited for: the
 * time between that child's end and cursor is the execution's own, the
 * walk descends into the child over [max(child start, lo), child end],
 * and continues in the parent from the child's start.  Children still
 * running at cursor did not hold anything up and are passed over.  When
 * no child is left, the rest of the window back to lo is the
 * execution's own.  A child's "end" is that of its whole subtree, so an
 * orphan that outlives its parent still leads the path to it.  The own
 * times of all steps, plus the time nothing ran, add up to the wall time.
 */
void pt_critical_path(struct pt_analysis *a);

void pt_sweep_profile(struct pt_analysis *a, size_t nalone);

int pt_label_under_tmp(const char *path);

#endif
