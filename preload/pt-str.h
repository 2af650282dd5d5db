/*
 * The string functions the library needs, in its own text.
 *
 * Not libc's: each import is a symbol lookup in every process that loads
 * the library, and each libc page the code runs or reads in a fork child
 * before its exec is a page fault there (pt-sys.h).  The strings are
 * short (argv, environment entries, paths), so plain loops serve; the
 * library is built with -fno-tree-loop-distribute-patterns so that the
 * compiler does not turn them back into calls.
 */
#ifndef PT_STR_H
#define PT_STR_H

#include <stddef.h>
#include <stdint.h>

static inline size_t pt_strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

static inline void *pt_memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

static inline char *pt_strcpy(char *dst, const char *src)
{
	return pt_memcpy(dst, src, pt_strlen(src) + 1);
}

/* Decimal digits of v ending at end (exclusive); returns the first. */
static inline char *pt_put_dec(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

static inline char *pt_strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

static inline const char *pt_memrchr(const char *s, int c, size_t n)
{
	while (n--)
		if (s[n] == (char)c)
			return s + n;
	return NULL;
}

/*
 * Length of the prefix of s without any byte of reject.  The set goes into
 * a bitmap first: a spawn scans all of LD_PRELOAD with it, and a loop over
 * reject for every byte of s cost 2.5 times as many instructions.
 */
static inline size_t pt_strcspn(const char *s, const char *reject)
{
	uint64_t set[4] = { 1 };        /* bit 0: the terminating NUL */
	size_t n = 0;
	unsigned char c;

	for (; (c = (unsigned char)*reject); reject++)
		set[c >> 6] |= (uint64_t)1 << (c & 63);
	for (;; n++) {
		c = (unsigned char)s[n];
		if (set[c >> 6] >> (c & 63) & 1)
			return n;
	}
}

static inline int pt_strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

static inline int pt_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static inline int pt_strncasecmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		int x = pt_lower((unsigned char)*a), y = pt_lower((unsigned char)*b);

		if (x != y)
			return x - y;
		if (!x)
			return 0;
	}
	return 0;
}

/* Does the k-byte LD_PRELOAD item at p name a file whose name begins
 * with the n bytes of stem?  pt_item_is: stem a literal (PT_LIB_STEM). */
static inline int pt_item_has(const char *p, size_t k, const char *stem,
			      size_t n)
{
	const char *slash = pt_memrchr(p, '/', k);
	const char *base = slash ? slash + 1 : p;

	return k - (size_t)(base - p) >= n && !pt_strncmp(base, stem, n);
}
#define pt_item_is(p, k, stem) pt_item_has(p, k, stem, sizeof(stem) - 1)

#endif
