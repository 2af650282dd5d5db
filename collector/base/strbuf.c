/* Growable buffer and checked allocation; see strbuf.h. */
#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char pt_sb_empty[1];

void pt_out_of_memory(size_t n)
{
	fprintf(stderr, "proftrace: out of memory allocating %zu bytes\n", n);
	exit(70);
}

void *pt_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		pt_out_of_memory(n);
	return p;
}

void *pt_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		pt_out_of_memory(n * size);
	return p;
}

void *pt_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		pt_out_of_memory(n);
	return p;
}

char *pt_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(pt_xmalloc(n), s, n);
}

void pt_sb_init(struct pt_sb *sb)
{
	sb->buf = pt_sb_empty;
	sb->len = sb->alloc = 0;
}

void pt_sb_grow_slow(struct pt_sb *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;

	if (want < sb->len)
		pt_out_of_memory(SIZE_MAX);
	if (want <= sb->alloc)
		return;
	if (want < sb->alloc * 2)
		want = sb->alloc * 2;
	if (want < 64)
		want = 64;
	sb->buf = pt_xrealloc(sb->alloc ? sb->buf : NULL, want);
	if (!sb->alloc)
		sb->buf[0] = '\0';
	sb->alloc = want;
}

void pt_sb_addstr(struct pt_sb *sb, const char *s)
{
	pt_sb_add(sb, s, strlen(s));
}

void pt_sb_vaddf(struct pt_sb *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0,
		      fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= (sb->alloc ? sb->alloc - sb->len : 0)) {
		pt_sb_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void pt_sb_addf(struct pt_sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

void pt_sb_reset(struct pt_sb *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

void pt_sb_release(struct pt_sb *sb)
{
	if (sb->alloc)
		free(sb->buf);
	pt_sb_init(sb);
}

char *pt_sb_detach(struct pt_sb *sb, size_t *len)
{
	char *r;

	if (len)
		*len = sb->len;
	r = sb->alloc ? sb->buf : pt_xstrdup("");
	pt_sb_init(sb);
	return r;
}

void pt_sb_add_iso8601(struct pt_sb *sb, int64_t t_ns)
{
	time_t secs = (time_t)(t_ns / 1000000000);
	int64_t ms = (t_ns % 1000000000) / 1000000;
	struct tm tm;
	char buf[64];

	if (ms < 0) {
		ms += 1000;
		secs--;
	}
	if (!gmtime_r(&secs, &tm)) {
		pt_sb_addstr(sb, "?");
		return;
	}
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	pt_sb_addf(sb, "%s.%03dZ", buf, (int)ms);
}

void pt_sb_add_i64(struct pt_sb *sb, int64_t v)
{
	char buf[24], *p = buf + sizeof buf;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	pt_sb_add(sb, p, (size_t)(buf + sizeof buf - p));
}

ssize_t pt_sb_read_path(struct pt_sb *sb, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = 0;

	pt_sb_reset(sb);
	if (fd < 0)
		return -1;
	while (sb->len < max) {
		pt_sb_grow(sb, 4096);
		r = read(fd, sb->buf + sb->len, 4096);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		sb->len += (size_t)r;
	}
	close(fd);
	pt_sb_grow(sb, 1);
	sb->buf[sb->len] = 0;
	return r < 0 ? -1 : (ssize_t)sb->len;
}

char *pt_sb_dupf(const char *fmt, ...)
{
	struct pt_sb sb = PT_SB_INIT;
	va_list ap;

	va_start(ap, fmt);
	pt_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!sb.buf)
		pt_sb_addstr(&sb, "");
	return pt_sb_detach(&sb, NULL);
}
