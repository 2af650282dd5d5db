/*
 * The data of the HTML report (views/html.c): what the page shows, as
 * JSON, in two parts.  The head (the run's header and summary) is small
 * and goes into the page as it is, so that the page says what the run was
 * even where the rest cannot be read; the body (string tables, one array
 * per column of the executions, the analyses) is handed out in pieces
 * to be compressed.  doc/views.md describes the page, and report.js is
 * the reader of every field written here.
 */
#ifndef PT_HTML_DATA_H
#define PT_HTML_DATA_H

#include "analysis/report.h"
#include "base/strbuf.h"

/* Takes the text in sb so far (and resets it); 0, or -1 to stop. */
typedef int pt_html_sink_fn(void *arg, struct pt_sb *sb);

/* Append the head of r's run (see above) to sb. */
void pt_html_head(const struct pt_report *r, struct pt_sb *sb);

/*
 * Write the body of r's run through sink, a piece whenever sb holds more than
 * about a megabyte and the rest at the end.  Returns 0, or -1 if the sink
 * did.
 */
int pt_html_body(const struct pt_report *r, struct pt_sb *sb,
		 pt_html_sink_fn *sink, void *arg);

#endif
