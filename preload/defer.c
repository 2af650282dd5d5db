/*
 * SPAWN and FORK frames held back until their child is reaped.
 *
 * A SPAWN sent as posix_spawn() returns reaches the collector while the
 * child is starting, and in the spawn loop that one message cost each
 * spawn about 50 µs; the same frame sent in one message with the child's
 * REAP, once the child has ended, cost nothing measurable
 * (doc/performance.md).  So the owner keeps each SPAWN or FORK, laid out
 * as it would have been sent, in a slot, and sends it with its child's
 * REAP; or before anything that would lose it: an exec, the EXIT, a fork
 * child taking the state over (it forgets the slots; the parent still
 * sends them).  With no free slot, or a frame too big for one, the frame
 * goes at once, as before.  What is lost is only what a parent killed
 * outright (SIGKILL) held: the children that report themselves are
 * recorded all the same.
 *
 * Threads of the owner may spawn and reap at once, and a SIGCHLD handler
 * may reap in the middle of a spawn: a slot changes hands only by atomic
 * operations, never by waiting.  A vfork child, which shares the slots
 * with its suspended parent, never touches them.
 */
#include <string.h>

#include "pt-preload.h"
#include "pt-str.h"

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

/* The slots' states, children and lengths are in pt (pt-preload.h), and
 * so are the first PT_DEFER_SMALL slots' frames; the large ones here. */
static unsigned char held[PT_DEFER_SLOTS][PT_DEFER_BYTES];

#define NSLOTS (PT_DEFER_SMALL + PT_DEFER_SLOTS)

static unsigned char *frame(size_t i)
{
	return i < PT_DEFER_SMALL ? pt.defer_small[i] :
	       held[i - PT_DEFER_SMALL];
}

static size_t room(size_t i)
{
	return i < PT_DEFER_SMALL ? PT_DEFER_SMALL_BYTES : PT_DEFER_BYTES;
}

static int claim(size_t i, int from)
{
	return __atomic_compare_exchange_n(&pt.defer_state[i], &from,
					   SLOT_BUSY, 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static void release(size_t i, int to)
{
	__atomic_store_n(&pt.defer_state[i], to, __ATOMIC_RELEASE);
}

static int ready(size_t i)
{
	return __atomic_load_n(&pt.defer_state[i], __ATOMIC_ACQUIRE) ==
	       SLOT_READY;
}

int pt_defer_hold(const struct pt_chan *ch, const struct pt_body *b,
		  pid_t child, uint64_t t)
{
	size_t i, n;

	if (!ch->owner || child <= 0)
		return -1;
	/* A FORK (a few fixed fields) in a small slot; a SPAWN, whose
	 * layout may read the working directory, is laid out once. */
	for (i = b->type == PT_REC_FORK ? 0 : PT_DEFER_SMALL; i < NSLOTS; i++) {
		if (!claim(i, SLOT_FREE))
			continue;
		n = pt_encode_record(ch, b, t, frame(i), room(i));
		if (!n) {
			release(i, SLOT_FREE);
			if (i < PT_DEFER_SMALL) {       /* a larger slot, then */
				i = PT_DEFER_SMALL - 1;
				continue;
			}
			return -1;
		}
		pt.defer_child[i] = child;
		pt.defer_len[i] = (uint32_t)n;
		release(i, SLOT_READY);
		return 0;
	}
	return -1;
}

int pt_defer_holds(pid_t child)
{
	size_t i;

	for (i = 0; i < NSLOTS; i++)
		if (ready(i) && pt.defer_child[i] == child)
			return 1;
	return 0;
}

size_t pt_defer_take(pid_t child, unsigned char *out)
{
	size_t i, n;

	for (i = 0; i < NSLOTS; i++) {
		if (!ready(i) || pt.defer_child[i] != child ||
		    !claim(i, SLOT_READY))
			continue;
		if (pt.defer_child[i] != child) {       /* reused in between */
			release(i, SLOT_READY);
			continue;
		}
		n = pt.defer_len[i];
		pt_memcpy(out, frame(i), n);
		release(i, SLOT_FREE);
		return n;
	}
	return 0;
}

void pt_defer_flush(struct pt_chan *ch)
{
	size_t i;

	if (!ch->owner)
		return;
	for (i = 0; i < NSLOTS; i++) {
		if (!ready(i) || !claim(i, SLOT_READY))
			continue;
		pt_chan_write(ch, frame(i), pt.defer_len[i]);
		release(i, SLOT_FREE);
	}
}

void pt_defer_forget(void)
{
	size_t i;

	for (i = 0; i < NSLOTS; i++)
		pt.defer_state[i] = SLOT_FREE;
}
