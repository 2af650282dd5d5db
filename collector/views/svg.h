/*
 * The flame graph as one standalone SVG file: the stacks of folded.h
 * (the process tree merged by program label), drawn as flamegraph.pl
 * draws them, with an inline script (click to zoom, search with the
 * matched share, hover details, reset) that needs nothing but a browser.
 *
 * Every frame is an element <g class="f" id="fN"> with
 *  - data-p: the id of its parent frame (absent on the root "all", f0);
 *  - data-v: its value, the sum of the folded weights of the stacks that
 *    start with it (microseconds), so that the folded lines and the SVG
 *    say the same numbers;
 *  - data-o: its offset from the left, in the same unit;
 *  - data-l: its label;
 *  - <title>, on frames at least a pixel wide: the label, then a line of
 *    details (a tooltip where scripts do not run);
 *  - <rect>: x and width proportional to data-o and data-v.
 * Frames narrower than a hundredth of a pixel at full width (visible
 * only beyond a 100-fold zoom) are left out, so that the file stays
 * bounded; their time stays in their parent's width, and the subtitle
 * says how many were left out.
 */
#ifndef PT_SVG_H
#define PT_SVG_H

#include <stdio.h>

#include "analysis/stacks.h"
#include "model/model.h"

#define PT_SVG_WIDTH 1200               /* px */

/* Write m's flame graph to f.  Returns 0, or -1 if a write failed. */
int pt_svg_write(const struct pt_model *m, FILE *f,
		 enum pt_stacks_weight weight);

/* The same, with the weight fixed: for tables of (model, FILE) writers. */
int pt_svg_write_wall(const struct pt_model *m, FILE *f);
int pt_svg_write_cpu(const struct pt_model *m, FILE *f);

#endif
