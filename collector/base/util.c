/* Messages, clocks and I/O helpers; see util.h. */
#include "base/util.h"

#include <errno.h>
#include <sys/ioctl.h>
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

static int muted;

/* The failures said while muted, for pt_warn_failures_flush(). */
#define DEFERRED_MAX 8
static char *deferred[DEFERRED_MAX];
static unsigned ndeferred, nmore;

void pt_warn_mute(void)
{
	muted = 1;
}

void pt_warn_failure(const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	if (!muted) {
		vwarn(fmt, ap);
	} else {
		vsnprintf(line, sizeof line, fmt, ap);
		if (ndeferred < DEFERRED_MAX &&
		    (deferred[ndeferred] = strdup(line)))
			ndeferred++;
		else
			nmore++;
	}
	va_end(ap);
}

void pt_warn_failures_flush(void)
{
	for (unsigned i = 0; i < ndeferred; i++) {
		fprintf(stderr, "proftrace: %s\n", deferred[i]);
		free(deferred[i]);
	}
	if (nmore)
		fprintf(stderr, "proftrace: and %u more failures\n", nmore);
	fflush(stderr);
	ndeferred = nmore = 0;
}

int pt_warn_set_muted(int on)
{
	int was = muted;

	muted = on;
	return was;
}

void pt_warn(const char *fmt, ...)
{
	va_list ap;

	if (muted)
		return;
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

uint64_t pt_recv_time(uint64_t mono_ns)
{
	return (mono_ns + 999) / 1000 * 1000;
}

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
 * executions), and the long command lines are most of it.  The last
 * bytes are read as one load that may overlap bytes already hashed,
 * never a byte-wise copy: most strings are short, and a call to memcpy
 * with a variable length was a third of the time per string.
 */
static inline uint64_t load8(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t load4(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

uint32_t pt_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0x6a09e667f3bcc909ull;
	uint64_t v;
	size_t left = n;

	for (; left >= 16; p += 16, left -= 16) {
		a = (a ^ load8(p)) * 0xff51afd7ed558ccdull;
		a ^= a >> 32;
		b = (b ^ load8(p + 8)) * 0xc4ceb9fe1a85ec53ull;
		b ^= b >> 32;
	}
	if (left > 8) {
		a = (a ^ load8(p)) * 0xff51afd7ed558ccdull;
		a ^= a >> 32;
		v = load8(p + left - 8);
	} else if (n >= 8) {
		v = load8(p + left - 8);        /* overlaps what was hashed */
	} else if (left >= 4) {
		v = load4(p) << 32 | load4(p + left - 4);
	} else {
		v = left ? (uint64_t)p[0] << 16 | (uint64_t)p[left / 2] << 8 |
			   p[left - 1] : 0;
	}
	/* A whole round for the last word: the final multiply alone would
	 * leave its top bits out of the 32 returned. */
	a = (a ^ v) * 0xff51afd7ed558ccdull;
	a ^= a >> 32;
	a = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xc4ceb9fe1a85ec53ull;
	a ^= a >> 29;
	return (uint32_t)a;
}

int pt_term_width(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (c && atoi(c) > 0)
		return atoi(c);
	return 100;
}

int pt_proc_link(pid_t pid, const char *name, char *out, size_t n)
{
	char path[48];
	ssize_t r;

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	r = readlink(path, out, n - 1);
	if (r < 0)
		return -1;
	out[r] = 0;
	return 0;
}
