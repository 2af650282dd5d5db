/* Shell words, CSV fields and JSON strings; see quote.h. */
#include "base/quote.h"

#include <string.h>

#include "base/utf8.h"

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

/* Bytes that stand for themselves in a JSON string, by style: printable
 * ASCII but " and \ (and < > & in a script; DEL too as read).  Every byte
 * of every argument of a trace is looked up. */
static const unsigned char json_plain[3][256] = {
	[PT_JSON_TEXT] = { [0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1,
			   [0x5d ... 0x7e] = 1 },
	[PT_JSON_SCRIPT] = { [0x20 ... 0x21] = 1, [0x23 ... 0x25] = 1,
			     [0x27 ... 0x3b] = 1, [0x3d] = 1,
			     [0x3f ... 0x5b] = 1, [0x5d ... 0x7e] = 1 },
	[PT_JSON_AS_READ] = { [0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1,
			      [0x5d ... 0x7f] = 1 },
};

void pt_quote_json(struct pt_sb *sb, const char *s, size_t n, unsigned style)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *plain = json_plain[style & 3];
	size_t i = 0, run, l;

	if (!(style & PT_JSON_BARE))
		pt_sb_addch(sb, '"');
	while (i < n) {
		/* Copy the plain run in one go: most text needs nothing. */
		for (run = i; run < n && plain[p[run]]; run++)
			;
		if (run > i) {
			pt_sb_add(sb, p + i, run - i);
			i = run;
		} else if (p[i] == '"' || p[i] == '\\') {
			char esc[2] = { '\\', (char)p[i++] };

			pt_sb_add(sb, esc, 2);
		} else if ((style & 3) == PT_JSON_TEXT &&
			   (p[i] == '\n' || p[i] == '\t' || p[i] == '\r')) {
			char esc[2] = { '\\', p[i] == '\n' ? 'n' :
					p[i] == '\t' ? 't' : 'r' };

			pt_sb_add(sb, esc, 2);
			i++;
		} else if (p[i] < 0x80) {
			char u[6] = { '\\', 'u', '0', '0', hex[p[i] >> 4],
				      hex[p[i] & 15] };

			pt_sb_add(sb, u, 6);
			i++;
		} else if (!(l = pt_utf8_len(p + i, n - i))) {
			/* Not UTF-8 (a Latin-1 file name, a cut argument):
			 * the replacement character, one per byte. */
			pt_sb_add(sb, "\\ufffd", 6);
			i++;
		} else if ((style & 3) == PT_JSON_SCRIPT && l == 3 &&
			   p[i] == 0xe2 && p[i + 1] == 0x80 &&
			   (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
			/* Line ends to JavaScript before ES2019. */
			pt_sb_add(sb, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029",
				  6);
			i += 3;
		} else {
			pt_sb_add(sb, p + i, l);
			i += l;
		}
	}
	if (!(style & PT_JSON_BARE))
		pt_sb_addch(sb, '"');
}
