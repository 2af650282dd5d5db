/* strbuf.c - a growable byte buffer. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_UNISTD_H
#include <unistd.h>
#endif

#include "sample.h"

void sb_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

static void reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1, ncap = sb->cap ? sb->cap : 64;
	char *nb;

	if (need <= sb->cap)
		return;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(sb->buf, ncap);
	if (!nb)
		abort();
	sb->buf = nb;
	sb->cap = ncap;
}

void sb_write(struct strbuf *sb, const void *p, size_t n)
{
	reserve(sb, n);
	memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_putc(struct strbuf *sb, int c)
{
	char ch = (char)c;

	sb_write(sb, &ch, 1);
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_write(sb, s, strlen(s));
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reserve(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

int sb_read_fd(struct strbuf *sb, int fd)
{
	for (;;) {
		ssize_t r;

		reserve(sb, 8192);
		r = read(fd, sb->buf + sb->len, 8192);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		sb->len += (size_t)r;
		sb->buf[sb->len] = '\0';
	}
	return 0;
}
