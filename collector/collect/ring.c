/*
 * The shared ring, the collector's side (doc/design.md, "The shared
 * ring").
 *
 * Every byte of the ring can be written by any process of the run, so
 * the reader trusts none of it: head is read once per drain and bounded;
 * a record counts only when its stamp is the complement of its own
 * position; its length is read once, bounded by what head allows and by
 * PT_RING_FRAME_MAX, and the frame is copied out before anything looks
 * at it.  A scribbler can lose records of this run, its own and others',
 * but cannot make the reader read outside the mapping, loop, or wait.
 */
#include "collect/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static struct pt_ring_header *ring_header(const struct pt_ring_reader *r)
{
	return (struct pt_ring_header *)(void *)r->map;
}

static unsigned char *ring_data(const struct pt_ring_reader *r)
{
	return r->map + PT_RING_HDR;
}

static uint64_t ring_stamp_at(const struct pt_ring_reader *r, uint64_t pos)
{
	return __atomic_load_n((uint64_t *)(void *)(ring_data(r) +
		((pos + PT_OFF(pt_ring_rec, stamp)) & (r->size - 1))),
		__ATOMIC_ACQUIRE);
}

static void ring_copy_out(const struct pt_ring_reader *r, uint64_t pos,
			  unsigned char *dst, size_t n)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = n < r->size - off ? n : (size_t)(r->size - off);

	memcpy(dst, ring_data(r) + off, first);
	memcpy(dst + first, ring_data(r), n - first);
}

void pt_ring_attach(struct pt_ring_reader *r, void *map, uint64_t size,
		    uint64_t tail)
{
	memset(r, 0, offsetof(struct pt_ring_reader, frame));
	r->map = map;
	r->size = size;
	r->tail = tail & ~(uint64_t)7;  /* records start on the 8-byte grid */
}

int pt_ring_create(struct pt_ring_reader *r, uint64_t size)
{
	struct pt_ring_header *h;
	struct stat st;
	void *map;
	int fd, e;

	if (size < PT_RING_DATA_MIN || size > PT_RING_DATA_MAX ||
	    (size & (size - 1))) {
		errno = EINVAL;
		return -1;
	}
	fd = memfd_create("proftrace-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	/* Sealed at its size: a process that truncated it would turn the
	 * collector's next read into SIGBUS, not an error. */
	if (ftruncate(fd, (off_t)(PT_RING_HDR + size)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	map = mmap(NULL, PT_RING_HDR + size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	pt_ring_attach(r, map, size, 0);
	h = map;
	if (getrandom(h->run_id, sizeof h->run_id, 0) != sizeof h->run_id) {
		munmap(map, PT_RING_HDR + size);
		goto fail;
	}
	h->size = size;
	h->uid = (uint32_t)geteuid();
	h->pidns = stat("/proc/self/ns/pid", &st) == 0 ? (uint32_t)st.st_ino : 0;
	h->version = PT_RING_VERSION;
	__atomic_store_n(&h->magic, PT_RING_MAGIC, __ATOMIC_RELEASE);
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

static void ring_give_up(struct pt_ring_reader *r, uint64_t head,
			 const char *why)
{
	/* head may be anything here: what is counted lost is bounded by
	 * what writers could have reserved, the data area. */
	uint64_t left = head - r->tail;

	r->st.lost_bytes += left <= r->size ? left : r->size;
	r->dead = why;
	__atomic_store_n(&ring_header(r)->dead, 1, __ATOMIC_RELEASE);
}

/*
 * The record at the tail is missing or malformed: moves the tail to the
 * next position below limit that holds its own stamp, counting the bytes
 * stepped over.  Returns 1 if the tail moved, 0 if no stamp was found:
 * the tail stays, and the scan waits another grace (unless final: then
 * everything up to limit is given up).
 */
static int ring_resync(struct pt_ring_reader *r, uint64_t limit, int final)
{
	uint64_t q;

	for (q = r->tail + 8; q < limit && limit - q >= PT_RING_REC_HDR; q += 8)
		if (ring_stamp_at(r, q) == ~q)
			break;
	if (q >= limit || limit - q < PT_RING_REC_HDR) {
		if (!final) {
			r->wait_since = 0;
			return 0;
		}
		q = limit;
	}
	r->st.lost_bytes += q - r->tail;
	r->st.resyncs++;
	r->tail = q;
	r->wait_since = 0;
	return 1;
}

/* Whether the record at the tail has been waited for long enough (every
 * move of the tail starts the wait afresh). */
static int ring_waited(struct pt_ring_reader *r, uint64_t now_ns, int final)
{
	if (final)
		return 1;
	if (!r->wait_since) {
		r->wait_since = now_ns ? now_ns : 1;
		return 0;
	}
	return now_ns - r->wait_since >= PT_RING_GRACE_NS;
}

size_t pt_ring_drain(struct pt_ring_reader *r, uint64_t now_ns, int final,
		     pt_ring_deliver_fn deliver, void *ctx)
{
	struct pt_ring_header *h = ring_header(r);
	uint64_t head, limit, left, need = 0;
	uint32_t len = 0, flags;
	unsigned char *rec;
	size_t taken = 0;
	int published, sane;

	if (r->dead)
		return 0;
	head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	/* Writers reserve only room they saw free (preload/ring.c), so
	 * tail <= head <= tail + size unless someone wrote over the header. */
	if (head < r->tail || head - r->tail > r->size || (head & 7)) {
		ring_give_up(r, head, head < r->tail ? "head behind the tail" :
			     (head & 7) ? "head off the 8-byte grid" :
			     "head further ahead than the ring's size");
		return 0;
	}
	limit = head;
	while (r->tail < limit) {
		left = limit - r->tail;
		published = left >= PT_RING_REC_HDR &&
			    ring_stamp_at(r, r->tail) == ~r->tail;
		sane = 0;
		if (published) {
			rec = ring_data(r) + (r->tail & (r->size - 1));
			len = __atomic_load_n((uint32_t *)(void *)(rec + PT_OFF(pt_ring_rec, length)),
					      __ATOMIC_RELAXED);
			flags = __atomic_load_n((uint32_t *)(void *)(rec + PT_OFF(pt_ring_rec, flags)),
						__ATOMIC_RELAXED);
			need = PT_RING_RECORD_BYTES(len);
			sane = need <= left && !flags && len >= PT_FRAME_HDR &&
			       len <= PT_RING_FRAME_MAX;
		}
		if (!sane) {
			/* Not published yet (its writer still writing, or
			 * killed), or published but not by a writer that
			 * followed the rules (counted as refused): step to
			 * the next stamp, once the records after it have had
			 * the grace to be written. */
			if (!ring_waited(r, now_ns, final) ||
			    !ring_resync(r, limit, final))
				break;
			r->st.refused += (uint64_t)published;
			continue;
		}
		ring_copy_out(r, r->tail + PT_RING_REC_HDR, r->frame, len);
		if (deliver(ctx, r->frame, len) == 0) {
			r->st.frames++;
			taken++;
		} else {
			r->st.refused++;
		}
		r->tail += need;
		r->wait_since = 0;
	}
	__atomic_store_n(&h->tail, r->tail, __ATOMIC_RELEASE);
	return taken;
}

void pt_ring_close(struct pt_ring_reader *r)
{
	if (r->map)
		munmap(r->map, PT_RING_HDR + r->size);
	r->map = NULL;
}
