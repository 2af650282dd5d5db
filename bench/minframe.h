/*
 * What the floor libraries (minrec.c, minring.c, minappend.c) send: the
 * least a HELLO and an EXIT can be, laid out alike by all three so that
 * they differ in their transport alone.
 */
#ifndef PT_BENCH_MINFRAME_H
#define PT_BENCH_MINFRAME_H

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proftrace/wire.h"

/* Largest frame they send: a header and a fixed part. */
#define MINFRAME_MAX (sizeof(struct pt_frame_header) + 64)

static inline uint64_t minframe_clock(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The frame of type with the fixed part body (len <= 64 bytes) at out;
 * returns its size. */
static inline size_t minframe_make(unsigned char *out, unsigned type,
				   const void *body, size_t len)
{
	struct pt_frame_header h = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = (uint8_t)type, .pid = (uint32_t)syscall(SYS_getpid),
		.length = (uint32_t)len, .raw_length = (uint32_t)len,
	};

	h.time_ns = minframe_clock(CLOCK_MONOTONIC);
	memcpy(out, &h, sizeof h);
	memcpy(out + sizeof h, body, len);
	return sizeof h + len;
}

/* A HELLO of a program image: its parent and its clocks, no tail. */
static inline void minframe_hello(struct pt_rec_hello *hello)
{
	memset(hello, 0, sizeof *hello);
	hello->kind = PT_HELLO_IMAGE;
	hello->ppid = (uint32_t)syscall(SYS_getppid);
	hello->realtime_ns = minframe_clock(CLOCK_REALTIME);
	hello->start_ns = minframe_clock(CLOCK_MONOTONIC);
}

#endif
