/*
 * A key shown in a column of limited width: whole when it fits, else its
 * short label, " · ", and as many whole words of the key as fit, then
 * "..." — never a word cut in the middle, and the file a command works
 * on always shown.
 */
#ifndef PT_KEYFIT_H
#define PT_KEYFIT_H

#include <stddef.h>

#include "base/strbuf.h"

/* Append key (or its short form) to sb, in at most room columns. */
void pt_key_fit(struct pt_sb *sb, const char *key, const char *label,
		size_t room);

#endif
