/* Messages, clocks and I/O helpers; see util.h. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void vwarn(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof line, fmt, ap);
	fprintf(stderr, "proftrace: %s\n", line);
}

void pt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void pt_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t pt_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t pt_real_ns(void) { return clock_ns(CLOCK_REALTIME); }

int pt_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Two lanes of 8 bytes, so that one multiply does not wait for the other:
 * the conversion hashes every string of a capture (2 GB for a million
 * executions), and the long command lines are most of it.
 */
uint32_t pt_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0x6a09e667f3bcc909ull;
	uint64_t v, w;

	for (; n >= 16; p += 16, n -= 16) {
		memcpy(&v, p, 8);
		memcpy(&w, p + 8, 8);
		a = (a ^ v) * 0xff51afd7ed558ccdull;
		a ^= a >> 32;
		b = (b ^ w) * 0xc4ceb9fe1a85ec53ull;
		b ^= b >> 32;
	}
	if (n >= 8) {
		memcpy(&v, p, 8);
		a = (a ^ v) * 0xff51afd7ed558ccdull;
		a ^= a >> 32;
		p += 8;
		n -= 8;
	}
	v = 0;
	if (n)
		memcpy(&v, p, n);
	a = (a ^ v ^ (b * 0x9e3779b97f4a7c15ull)) * 0xc4ceb9fe1a85ec53ull;
	a ^= a >> 29;
	return (uint32_t)a;
}
