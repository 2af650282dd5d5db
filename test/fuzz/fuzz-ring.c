/*
 * Fuzz target: the collector's reader of the shared ring
 * (collector/collect/ring.c), fed a data area, a head and a tail of any
 * value, as a process of the run that scribbles over the ring could leave
 * them.  The ring is a buffer of its exact size, so that ASan sees any
 * read outside it; each frame delivered is copied to a buffer of its
 * exact size and checked as the collector checks a frame (header, then
 * pt_record_check).  The reader must never read outside the ring, never
 * take more than the data size per drain, and end every input with the
 * ring read to its head or given up.
 *
 * Input: byte 0, bits 0-3 the data size (64 bytes << (n % 11)), bit 4 the
 * way the ring is filled; bytes 1-8 the tail, bytes 9-16 the head's
 * distance from it (raw) or a reservation never published (written); the
 * rest, raw: the data area, from its start; written: frames as a
 * connection carries them, each put into the ring by the library's
 * writer (preload/ring.c), the reservation after the first.
 *
 * Built for libFuzzer (meson -Dfuzz=true, clang) or with replay.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/frame.h"
#include "collect/ring.h"
#include "pt-ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pt_ring_reader rd;

static int deliver(void *ctx, const unsigned char *frame, size_t len)
{
	struct pt_frame_header h;
	struct pt_record rec;
	const char *why = NULL;
	unsigned char *copy;
	int rc = -1;

	(void)ctx;
	if (len < PT_FRAME_HDR || len > PT_RING_FRAME_MAX)
		abort();        /* the reader promised this much */
	copy = malloc(len);
	if (!copy)
		return -1;
	memcpy(copy, frame, len);
	if (pt_frame_header_decode(copy, &h, &why) == 0 &&
	    len == PT_FRAME_HDR + (size_t)h.length && !(h.flags & PT_FRAME_DEFLATED))
		rc = pt_record_check(&h, copy + PT_FRAME_HDR, &rec, &why);
	free(copy);
	return rc < 0 ? -1 : 0;
}

static void fill_written(unsigned char *map, uint64_t ring, const uint8_t *p,
			 size_t n, uint64_t hole)
{
	struct pt_ring_header *h = (struct pt_ring_header *)(void *)map;
	size_t off = 0, len;
	int first = 1;

	while (n - off >= PT_FRAME_HDR) {
		len = PT_FRAME_HDR + pt_wire_get32(p + off + PT_OFF(pt_frame_header, length));
		if (len > n - off)
			len = n - off;
		pt_ring_put(map, ring, p + off, len);
		off += len;
		if (first && hole % 8 == 0 && hole <= ring - (h->head - h->tail))
			h->head += hole;
		first = 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_ring_header *h;
	uint64_t ring, tail, arg, before, i;
	unsigned char *map;
	size_t n;

	if (size < 17)
		return 0;
	ring = 64ull << (data[0] % 16 % 11);
	tail = pt_wire_get64(data + 1);
	arg = pt_wire_get64(data + 9);
	map = calloc(1, PT_RING_HDR + ring);
	if (!map)
		return 0;
	h = (struct pt_ring_header *)(void *)map;
	h->magic = PT_RING_MAGIC;
	h->version = PT_RING_VERSION;
	h->size = ring;
	h->tail = tail;         /* any value: the writer must not trust it */
	h->head = tail;
	n = size - 17;
	if (data[0] & 16) {
		fill_written(map, ring, data + 17, n, arg % (ring + 1));
	} else {
		memcpy(map + PT_RING_HDR, data + 17, n < ring ? n : ring);
		h->head = tail + arg;
	}
	pt_ring_attach(&rd, map, ring, tail);
	for (i = 0; i < 4 && !rd.dead; i++) {
		before = rd.tail;
		pt_ring_drain(&rd, 1 + i * (PT_RING_GRACE_NS / 2), i == 3, deliver, NULL);
		if (rd.tail - before > ring)
			abort();
	}
	if (!rd.dead && rd.tail != h->head)
		abort();
	free(map);
	return 0;
}
