/* fmt.c - small string formatters (thousands separators, hex, padding). */
#include "config.h"

#include <string.h>

#include "sample.h"

/* Widest cheap unsigned type: plain long where it is 64 bits (config.h). */
#if defined SIZEOF_LONG && SIZEOF_LONG >= 8
typedef unsigned long uwide;
#else
typedef unsigned long long uwide;
#endif

char *fmt_thousands(char *buf, size_t n, long long v)
{
	char tmp[32];
	uwide u;
	size_t len = 0, digits = 0, i;
	int neg = v < 0;

	u = neg ? (uwide)0 - (uwide)v : (uwide)v;
	do {
		if (digits && digits % 3 == 0)
			tmp[len++] = ',';
		tmp[len++] = (char)('0' + u % 10);
		u /= 10;
		digits++;
	} while (u);
	if (neg)
		tmp[len++] = '-';
	if (n == 0)
		return buf;
	if (len >= n)
		len = n - 1;
	for (i = 0; i < len; i++)
		buf[i] = tmp[len - 1 - i];
	buf[len] = '\0';
	return buf;
}

char *fmt_hex(char *buf, size_t n, const void *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *s = p;
	size_t i, k = 0;

	if (n == 0)
		return buf;
	for (i = 0; i < len && k + 2 < n; i++) {
		buf[k++] = digits[s[i] >> 4];
		buf[k++] = digits[s[i] & 15];
	}
	buf[k] = '\0';
	return buf;
}

char *fmt_pad(char *buf, size_t n, const char *s, int width, int left)
{
	size_t slen = strlen(s), w = width > 0 ? (size_t)width : 0, pad, k = 0;

	if (n == 0)
		return buf;
	pad = slen < w ? w - slen : 0;
	if (!left)
		while (pad && k + 1 < n) {
			buf[k++] = ' ';
			pad--;
		}
	while (*s && k + 1 < n)
		buf[k++] = *s++;
	while (pad && k + 1 < n) {
		buf[k++] = ' ';
		pad--;
	}
	buf[k] = '\0';
	return buf;
}

char *fmt_fixed(char *buf, size_t n, long long num, int scale)
{
	char ip[32], fp[24];
	unsigned long long u, div = 1;
	int i, neg = num < 0;

	if (scale < 0)
		scale = 0;
	if (scale > 18)
		scale = 18;
	for (i = 0; i < scale; i++)
		div *= 10;
	u = neg ? 0ull - (unsigned long long)num : (unsigned long long)num;
	fmt_thousands(ip, sizeof ip, (long long)(u / div));
	u %= div;
	for (i = scale - 1; i >= 0; i--) {
		fp[i] = (char)('0' + u % 10);
		u /= 10;
	}
	fp[scale] = '\0';
	if (n == 0)
		return buf;
	buf[0] = '\0';
	if (neg && n > 1) {
		buf[0] = '-';
		buf[1] = '\0';
	}
	strncat(buf, ip, n - strlen(buf) - 1);
	if (scale) {
		strncat(buf, ".", n - strlen(buf) - 1);
		strncat(buf, fp, n - strlen(buf) - 1);
	}
	return buf;
}
