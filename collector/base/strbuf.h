/*
 * A growable byte buffer, used everywhere outside the preload library.
 *
 * Invariants: buf is never NULL after pt_sb_init (it points at a static
 * empty string until the first append), buf[len] is always '\0', and len <
 * alloc whenever alloc != 0.  Appending never fails: on out of memory the
 * program exits with a message, because a converter that silently drops
 * output is worse than one that stops.
 */
#ifndef PT_STRBUF_H
#define PT_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <string.h>

struct pt_sb {
	char *buf;
	size_t len, alloc;
};

#define PT_SB_INIT { pt_sb_empty, 0, 0 }
extern char pt_sb_empty[];

void pt_sb_init(struct pt_sb *sb);
/* pt_sb_grow when the room is not there: reallocates. */
void pt_sb_grow_slow(struct pt_sb *sb, size_t extra);

/*
 * Make room for at least `extra` more bytes beyond len.  Inline, as are the
 * two appends below: the converters call them for every field and every
 * escaped byte of millions of rows.
 */
static inline void pt_sb_grow(struct pt_sb *sb, size_t extra)
{
	if (sb->alloc - sb->len <= extra)       /* also when alloc == 0 */
		pt_sb_grow_slow(sb, extra);
}

static inline void pt_sb_add(struct pt_sb *sb, const void *data, size_t n)
{
	pt_sb_grow(sb, n);
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static inline void pt_sb_addch(struct pt_sb *sb, char c)
{
	pt_sb_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void pt_sb_addstr(struct pt_sb *sb, const char *s);
void pt_sb_addf(struct pt_sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pt_sb_vaddf(struct pt_sb *sb, const char *fmt, va_list ap);
/* Append v in decimal, without printf (the views write millions). */
void pt_sb_add_i64(struct pt_sb *sb, int64_t v);
/* Drop the contents, keep the memory. */
void pt_sb_reset(struct pt_sb *sb);
/*
 * sb anew with the contents of the file path, up to about max bytes
 * (whole reads of 4 KiB), NUL-terminated.  Its length, or -1 if path
 * cannot be opened or read.
 */
ssize_t pt_sb_read_path(struct pt_sb *sb, const char *path, size_t max);
/* Release the memory and return to the initial state. */
void pt_sb_release(struct pt_sb *sb);
/* Hand the buffer to the caller (who frees it); sb is reset. */
char *pt_sb_detach(struct pt_sb *sb, size_t *len);
/* A formatted string, malloc'd (the caller frees it); never NULL. */
char *pt_sb_dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation helpers that exit with a message instead of returning NULL. */
void *pt_xmalloc(size_t n);
void *pt_xcalloc(size_t n, size_t size);
void *pt_xrealloc(void *p, size_t n);
char *pt_xstrdup(const char *s);
/* Say that n bytes could not be had, and exit 70 (for other allocators). */
_Noreturn void pt_out_of_memory(size_t n);

/* Append t (Unix ns) as ISO 8601 UTC with milliseconds: "...T12:34:56.789Z";
 * "?" if the time cannot be represented. */
void pt_sb_add_iso8601(struct pt_sb *sb, int64_t t_ns);

#endif
