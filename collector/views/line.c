/* Lines of the text views; see line.h. */
#include "views/line.h"

#include <errno.h>
#include <string.h>

void pt_line_emit(struct pt_sb *line, int width, FILE *f)
{
	size_t i, cols = 0;

	for (i = 0; i < line->len; i++) {
		unsigned char c = (unsigned char)line->buf[i];

		if ((c & 0xc0) == 0x80)
			continue;
		if (cols == (size_t)width)
			break;
		if (c < 0x20 || c == 0x7f)
			line->buf[i] = '?';
		cols++;
	}
	while (i > 0 && line->buf[i - 1] == ' ')
		i--;
	fwrite(line->buf, 1, i, f);
	fputc('\n', f);
	pt_sb_reset(line);
}

size_t pt_line_cols(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

void pt_line_emit_below(struct pt_sb *line, size_t keep, size_t keep_end,
			int width, FILE *f)
{
	struct pt_sb next = PT_SB_INIT;
	size_t lc, indent = PT_LINE_WRAP_INDENT, i;

	if (keep > line->len)
		keep = line->len;
	if (keep_end < keep)
		keep_end = keep;
	if (keep_end > line->len)
		keep_end = line->len;
	lc = pt_line_cols(line->buf + keep, keep_end - keep);
	if (width < 1)
		width = 1;
	if (indent + lc > (size_t)width)
		indent = lc < (size_t)width ? (size_t)width - lc : 0;
	for (i = 0; i < indent; i++)
		pt_sb_addch(&next, ' ');
	pt_sb_add(&next, line->buf + keep, line->len - keep);
	/* What precedes, unless it is only the blanks of an indentation. */
	line->len = keep;
	line->buf[keep] = '\0';
	if (strspn(line->buf, " ") < keep)
		pt_line_emit(line, width, f);
	pt_sb_reset(line);
	pt_line_emit(&next, indent + lc > (size_t)width ?
		     (int)(indent + lc) : width, f);
	pt_sb_release(&next);
}

void pt_line_emit_keep(struct pt_sb *line, size_t keep, size_t keep_end,
		       int width, FILE *f)
{
	if (keep_end > line->len)
		keep_end = line->len;
	if (keep >= keep_end ||
	    pt_line_cols(line->buf, keep_end) <= (size_t)(width > 0 ? width : 0))
		pt_line_emit(line, width, f);
	else
		pt_line_emit_below(line, keep, keep_end, width, f);
}

int pt_text_end(struct pt_text *t)
{
	pt_sb_release(&t->line);
	if (fflush(t->f) != 0 || ferror(t->f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
