/* The short summary that `proftrace record` prints when its run ends. */
#ifndef PT_SUMMARY_H
#define PT_SUMMARY_H

#include <stdio.h>

#include "model/model.h"

/*
 * Print to f the executions seen, the wall and CPU time, lost frames if
 * any, and the five slowest commands (one line each, cut to about 100
 * bytes, control characters as '?').  Write errors are not reported.
 */
void pt_summary_print(const struct pt_model *m, FILE *f);

#endif
