/* Lines of the text views; see line.h. */
#include "views/line.h"

#include <errno.h>

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
