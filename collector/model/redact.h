/*
 * Redaction: masking secrets in command lines before anything is output.
 *
 * `--redact REGEX` (POSIX extended syntax, regcomp(3)) may be given several
 * times.  Every match of every pattern in every argv element of every
 * execution, and in each capture's recorded command line (metadata key
 * "command"), is replaced by "***"; the patterns apply in the order given,
 * each to the result of the one before.  An empty match masks nothing.
 * Matching is per argument: `--password hunter2` is two arguments, so
 * mask the value itself (e.g. 'hunter2', or '^ghp_.*').
 *
 * It rewrites the model, not the capture: the capture keeps the full
 * command lines, and whatever reads the model afterwards (CSV, JSON,
 * folded stacks, the summary) sees the masked ones.
 *
 * Typical use:
 *   r = pt_redact_new();
 *   if (pt_redact_add(r, optarg) < 0) ...usage error...
 *   pt_model_finish(&m);  pt_redact_model(r, &m);  ...output...
 *   pt_model_free(&m);    pt_redact_free(r);      // in this order
 */
#ifndef PT_REDACT_H
#define PT_REDACT_H

#include "model/model.h"

struct pt_redact;

/* An empty set of patterns (redacts nothing). */
struct pt_redact *pt_redact_new(void);

/*
 * Add a pattern.  Returns 0, or -1 after printing a one-line error naming
 * the pattern and what regcomp found wrong with it.
 */
int pt_redact_add(struct pt_redact *r, const char *regex);

/*
 * Mask m's argv strings and recorded command lines; call after
 * pt_model_finish().  The new strings belong to r, which must outlive
 * every use of m.
 */
void pt_redact_model(struct pt_redact *r, struct pt_model *m);

/*
 * s with every match masked, as a malloc'd string the caller frees, or
 * NULL when nothing matched (or r has no pattern): for command lines
 * that are not the model's (a lean model's, read again).
 */
char *pt_redact_string(const struct pt_redact *r, const char *s);

/* Free r (NULL is fine), after the model it redacted is done with. */
void pt_redact_free(struct pt_redact *r);

#endif
