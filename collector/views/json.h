/*
 * The trace exporter: Chrome Trace Event Format, object form, for
 * ui.perfetto.dev, chrome://tracing and speedscope.  doc/views.md and
 * doc/man/proftrace-convert.1.scd describe the output; what consumers rely on:
 *
 *  - one complete ("X") event per execution, ts and dur in integer
 *    microseconds from the earliest start (never negative);
 *  - one process (pid = capture index + 1) per capture, its executions
 *    packed into lanes (tid) so that no two events of one lane overlap or
 *    even touch;
 *  - a flow ("s"/"f", integer id, "bp":"e") from each parent to each child;
 *  - a counter ("C") "running processes" per capture;
 *  - a top-level "metadata" object (host, kernel, cpus, start time, ...).
 */
#ifndef PT_JSON_H
#define PT_JSON_H

#include <stdio.h>

#include "base/quote.h"
#include "model/model.h"

/*
 * Write m to f as trace JSON.  Returns 0, or -1 if a write failed (errno
 * tells why).  Strings are always valid UTF-8 JSON: control characters are
 * escaped, and each byte that is not part of valid UTF-8 becomes U+FFFD.
 */
int pt_json_write(const struct pt_model *m, FILE *f);

/* Append s (n bytes) to the JSON string being built in sb, escaped as
 * above, without the surrounding quotes (pt_quote_json's, base/quote.h). */
static inline void pt_json_escape(struct pt_sb *sb, const char *s, size_t n)
{
	pt_quote_json(sb, s, n, PT_JSON_TEXT | PT_JSON_BARE);
}

#endif
