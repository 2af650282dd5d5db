/*
 * Frames into the shared ring (doc/design.md, "The shared ring").
 *
 * A writer reserves room with one compare-and-swap on head, copies its
 * record in, and publishes it by storing the stamp, the complement of the
 * record's position, last.  The swap succeeds only from the head the
 * writer saw room after, and the tail only grows, so no reservation ever
 * reaches past what the collector has read: head - tail never exceeds the
 * data size, and the collector takes anything else for scribbling.
 *
 * No lock, no allocation, no system call, nothing that sets errno: as
 * safe in a vfork or posix_spawn child, or a signal handler, as a write to
 * the stack, and a fork child writes through the mapping it inherited
 * with nothing to set up again.
 *
 * A writer never waits.  When the ring has no room, or the collector has
 * given it up, or the frame is larger than a record may be, the caller
 * sends the frame over a socket instead and the spill is counted in the
 * header, so a full ring costs that frame a connection and loses nothing.
 */
#include "pt-ring.h"
#include "pt-str.h"

static void ring_copy(unsigned char *data, uint64_t size, uint64_t pos,
		      const void *src, size_t n)
{
	uint64_t off = pos & (size - 1);
	size_t first = n < size - off ? n : (size_t)(size - off);

	pt_memcpy(data + off, src, first);
	pt_memcpy(data, (const unsigned char *)src + first, n - first);
}

/* The record header at pos, its stamp stored last so that it publishes. */
static void ring_publish(unsigned char *data, uint64_t size, uint64_t pos,
			 uint32_t length)
{
	unsigned char *rec = data + (pos & (size - 1));

	/* pos is a multiple of 8 and the data area's size of 16 or more: the
	 * two words never wrap, and the stamp is aligned for the atomic. */
	__atomic_store_n((uint32_t *)(void *)(rec + PT_OFF(pt_ring_rec, length)),
			 length, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(void *)(rec + PT_OFF(pt_ring_rec, flags)),
			 0, __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)(void *)(data + ((pos + PT_OFF(pt_ring_rec, stamp)) &
						      (size - 1))),
			 ~pos, __ATOMIC_RELEASE);
}

int pt_ring_usable(const void *map, uint64_t size,
		   const uint8_t run_id[PT_RING_RUN_ID], uint32_t uid,
		   uint32_t pidns)
{
	const struct pt_ring_header *h = map;
	size_t i;

	if (h->magic != PT_RING_MAGIC || h->version != PT_RING_VERSION ||
	    h->size != size || h->uid != uid ||
	    (pidns && h->pidns && h->pidns != pidns) ||
	    __atomic_load_n(&h->dead, __ATOMIC_ACQUIRE))
		return -1;
	for (i = 0; i < PT_RING_RUN_ID; i++)
		if (h->run_id[i] != run_id[i])
			return -1;
	return 0;
}

int pt_ring_put(void *map, uint64_t size, const void *frame, size_t len)
{
	struct pt_ring_header *h = map;
	unsigned char *data = (unsigned char *)map + PT_RING_HDR;
	uint64_t need = PT_RING_RECORD_BYTES(len), pos, used;

	if (len > PT_RING_FRAME_MAX || __atomic_load_n(&h->dead, __ATOMIC_RELAXED))
		goto spill;
	pos = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	do {
		/* Any process of the run can write over head; a position
		 * off the 8-byte grid would put the record header across
		 * the data area's end, and this write outside the mapping. */
		used = pos - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
		if ((pos & 7) || used > size || need > size - used)
			goto spill;
	} while (!__atomic_compare_exchange_n(&h->head, &pos, pos + need, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	ring_copy(data, size, pos + PT_RING_REC_HDR, frame, len);
	ring_publish(data, size, pos, (uint32_t)len);
	return 0;
spill:
	__atomic_fetch_add(&h->spilled, 1, __ATOMIC_RELAXED);
	return -1;
}
