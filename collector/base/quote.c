/* Shell words and CSV fields; see quote.h. */
#include "base/quote.h"

#include <string.h>

/*
 * The characters that need no quoting in a POSIX shell word: the same set
 * as Python's shlex.quote() for ASCII.  Bytes >= 0x80 are quoted too, so
 * that the output never depends on the reader's locale.  A table: every
 * byte of every command line of a conversion goes through it.
 */
static const unsigned char shell_safe[256] = {
	['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['0' ... '9'] = 1,
	['_'] = 1, ['@'] = 1, ['%'] = 1, ['+'] = 1, ['='] = 1, [':'] = 1,
	[','] = 1, ['.'] = 1, ['/'] = 1, ['-'] = 1,
};

void pt_quote_shell(struct pt_sb *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	const char *q;

	while (shell_safe[*p])          /* not NUL */
		p++;
	if (!*p && p != (const unsigned char *)s) {
		pt_sb_add(sb, s, (size_t)(p - (const unsigned char *)s));
		return;
	}
	/* Inside single quotes every byte but ' stands for itself, newlines
	 * and invalid UTF-8 included; ' ends the quote, is escaped, and the
	 * quote resumes. */
	pt_sb_addch(sb, '\'');
	while ((q = strchr(s, '\''))) {
		pt_sb_add(sb, s, (size_t)(q - s));
		pt_sb_add(sb, "'\\''", 4);
		s = q + 1;
	}
	pt_sb_addstr(sb, s);
	pt_sb_addch(sb, '\'');
}

void pt_quote_argv(struct pt_sb *sb, const char *const *argv, size_t argc)
{
	size_t i;

	for (i = 0; i < argc; i++) {
		if (i)
			pt_sb_addch(sb, ' ');
		pt_quote_shell(sb, argv[i] ? argv[i] : "");
	}
}

void pt_quote_csv(struct pt_sb *sb, const char *s)
{
	const char *q;

	if (!s[strcspn(s, ",\"\r\n")]) {
		pt_sb_addstr(sb, s);
		return;
	}
	pt_sb_addch(sb, '"');
	while ((q = strchr(s, '"'))) {
		pt_sb_add(sb, s, (size_t)(q - s) + 1);
		pt_sb_addch(sb, '"');
		s = q + 1;
	}
	pt_sb_addstr(sb, s);
	pt_sb_addch(sb, '"');
}
