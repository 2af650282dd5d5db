/* Quoting for the outputs: shell words and CSV fields. */
#ifndef PT_QUOTE_H
#define PT_QUOTE_H

#include "base/strbuf.h"

/*
 * Append s as one POSIX shell word: unchanged if it has only safe
 * characters, otherwise in single quotes with ' written as '\''.  Python's
 * shlex.split() gives s back.  The empty string becomes ''.
 */
void pt_quote_shell(struct pt_sb *sb, const char *s);

/* Append argv joined by spaces, each element shell-quoted. */
void pt_quote_argv(struct pt_sb *sb, const char *const *argv, size_t argc);

/* Append s as an RFC 4180 field: quoted when it holds , " CR or LF. */
void pt_quote_csv(struct pt_sb *sb, const char *s);

#endif
