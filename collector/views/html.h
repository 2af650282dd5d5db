/*
 * `proftrace convert -f html`: one self-contained HTML page (data, script
 * and style inline; it asks for nothing when opened) that shows the run:
 * header, the process tree over time, the critical path, parallelism, a
 * flame graph and tables.  doc/views.md shows it.
 */
#ifndef PT_HTML_H
#define PT_HTML_H

#include <stdio.h>

#include "model/model.h"

/* Write the page of m to f.  Returns 0, or -1 with errno set if f
 * could not be written. */
int pt_html_write(const struct pt_model *m, FILE *f);

#endif
