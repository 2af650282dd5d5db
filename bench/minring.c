/*
 * The floor of a shared ring, the transport considered and not taken
 * (doc/design.md, "The transport"):
 * a preload library that maps a ring it inherits and writes a HELLO and
 * an EXIT into it, each reserved with one atomic add and published by a
 * stamp, as the design's library would.  No hooks, no socket, no
 * environment repair, no collector: what it costs above the empty library
 * is what a program image costs with this transport, whatever the library
 * around it does.
 *
 * The ring is a descriptor the process inherits, named with its size by
 * PTBENCH_RING=FD:BYTES (bench/counts.py creates it); the first 4 KiB are
 * the header, whose first word is `head`, the rest the data area.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "minframe.h"

#define MINRING_HDR 4096

static unsigned char *minring_map;
static uint64_t minring_size;   /* data area bytes, a power of two */

static void minring_copy(uint64_t pos, const void *src, size_t len)
{
	unsigned char *data = minring_map + MINRING_HDR;
	uint64_t off = pos & (minring_size - 1);
	size_t first = len < minring_size - off ? len : (size_t)(minring_size - off);

	memcpy(data + off, src, first);
	memcpy(data, (const unsigned char *)src + first, len - first);
}

static void minring_write(unsigned type, const void *body, size_t len)
{
	unsigned char rec[16 + MINFRAME_MAX];
	uint64_t *head = (uint64_t *)minring_map;
	uint32_t flen = (uint32_t)minframe_make(rec + 16, type, body, len);
	uint64_t need = (16 + flen + 7) & ~(uint64_t)7, pos, stamp;

	memcpy(rec, &flen, 4);
	memset(rec + 4, 0, 12);
	pos = __atomic_fetch_add(head, need, __ATOMIC_RELAXED);
	/* the record, then its stamp (the complement of its position) last */
	minring_copy(pos, rec, 16 + flen);
	stamp = ~pos;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	minring_copy(pos + 8, &stamp, 8);
}

__attribute__((constructor)) static void minring_init(void)
{
	const char *v = getenv("PTBENCH_RING");
	struct pt_rec_hello hello;
	char *end;
	long fd;
	void *m;

	if (!v)
		return;
	fd = strtol(v, &end, 10);
	if (*end != ':')
		return;
	minring_size = strtoull(end + 1, NULL, 10);
	if (minring_size < 65536 || (minring_size & (minring_size - 1)))
		return;
	m = mmap(NULL, MINRING_HDR + minring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 (int)fd, 0);
	if (m == MAP_FAILED)
		return;
	minring_map = m;
	minframe_hello(&hello);
	minring_write(PT_REC_HELLO, &hello, sizeof hello);
}

__attribute__((destructor)) static void minring_fini(void)
{
	struct pt_rec_exit ex = { .how = PT_EXIT_EXIT };

	if (minring_map)
		minring_write(PT_REC_EXIT, &ex, sizeof ex);
}
