/* Markdown helpers; see md.h. */
#include "views/md.h"

#include <errno.h>

#include <stdarg.h>
#include <string.h>

#include "analysis/analysis.h"
#include "base/utf8.h"

void pt_md_init(struct pt_md *md, FILE *f)
{
	md->f = f;
	pt_sb_init(&md->out);
	pt_sb_init(&md->tmp);
}

void pt_md_release(struct pt_md *md)
{
	pt_sb_release(&md->out);
	pt_sb_release(&md->tmp);
}

void pt_md_code(struct pt_md *md, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct pt_sb *c = &md->tmp;
	size_t i = 0, run = 0, longest = 0, k;

	pt_sb_reset(c);
	while (i < len) {
		size_t l = pt_utf8_len(p + i, len - i);

		if (c->len + 4 > PT_MD_CELL_MAX) {
			pt_sb_addstr(c, "...");
			break;
		}
		if (!l) {
			pt_sb_addstr(c, "\xef\xbf\xbd");
			i++;
		} else if (l == 1 && (p[i] < 0x20 || p[i] == 0x7f)) {
			pt_sb_addch(c, '?');
			i++;
		} else {
			pt_sb_add(c, p + i, l);
			i += l;
		}
	}
	/* Spaces at either end, as the text reports' line ends, go. */
	while (c->len && c->buf[c->len - 1] == ' ')
		c->buf[--c->len] = '\0';
	for (k = 0; k < c->len && c->buf[k] == ' '; k++)
		;
	memmove(c->buf, c->buf + k, c->len - k + 1);
	c->len -= k;
	for (i = 0; i < c->len; i++) {
		run = c->buf[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (k = 0; k <= longest; k++)
		pt_sb_addch(&md->out, '`');
	/* One space each side, which the span drops: the content may
	 * start or end with a backtick. */
	pt_sb_addch(&md->out, ' ');
	for (i = 0; i < c->len; i++) {
		if (c->buf[i] == '|')
			pt_sb_addch(&md->out, '\\');
		pt_sb_addch(&md->out, c->buf[i]);
	}
	pt_sb_addch(&md->out, ' ');
	for (k = 0; k <= longest; k++)
		pt_sb_addch(&md->out, '`');
}

void pt_md_code_str(struct pt_md *md, const char *s)
{
	pt_md_code(md, s, strlen(s));
}

static void flush(struct pt_md *md)
{
	fwrite(md->out.buf, 1, md->out.len, md->f);
	pt_sb_reset(&md->out);
}

void pt_md_line(struct pt_md *md, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_sb_vaddf(&md->out, fmt, ap);
	va_end(ap);
	pt_sb_addch(&md->out, '\n');
	flush(md);
}

void pt_md_header(struct pt_md *md, const char *const *cols, size_t n,
		  const char *last)
{
	size_t i;

	pt_sb_addch(&md->out, '\n');
	for (i = 0; i < n; i++)
		pt_sb_addf(&md->out, "| %s ", cols[i] + (cols[i][0] == '<'));
	if (last)
		pt_sb_addf(&md->out, "| %s ", last);
	pt_sb_addstr(&md->out, "|\n");
	for (i = 0; i < n; i++)
		pt_sb_addstr(&md->out, cols[i][0] == '<' ? "|---" : "|---:");
	pt_sb_addstr(&md->out, last ? "|---|\n" : "|\n");
	flush(md);
}

void pt_md_left_out(struct pt_md *md, size_t n, const char *what)
{
	if (n)
		pt_md_line(md, "\n*%zu more %s not shown*", n, what);
}

int pt_md_end(struct pt_md *md)
{
	FILE *f = md->f;

	pt_md_release(md);
	if (fflush(f) != 0 || ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
