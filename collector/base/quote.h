/* Quoting for the outputs: shell words, CSV fields, JSON strings. */
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

/* What pt_quote_json() escapes beyond " and \ and the controls. */
enum {
	PT_JSON_TEXT = 0,       /* \n \t \r as such, DEL as \u007f */
	PT_JSON_SCRIPT = 1,     /* inside <script>: \n \t \r, DEL, < > & and
				 * U+2028, U+2029 as \uXXXX */
	PT_JSON_AS_READ = 2,    /* \n \t \r as \u00XX, DEL as is: a value
				 * read from JSON written back (base/jsonp.h) */
	PT_JSON_BARE = 4,       /* | one of them: without the quotes */
};

/*
 * Append s (n bytes) as a JSON string in double quotes, valid UTF-8:
 * each byte that is not part of valid UTF-8 becomes U+FFFD.
 */
void pt_quote_json(struct pt_sb *sb, const char *s, size_t n, unsigned style);

#endif
