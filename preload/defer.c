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

#define PT_DEFER_SLOTS 8

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

static struct slot {
	int state;
	pid_t child;
	size_t len;
	unsigned char frame[PT_DEFER_BYTES];
} slots[PT_DEFER_SLOTS];

static int claim(struct slot *s, int from)
{
	return __atomic_compare_exchange_n(&s->state, &from, SLOT_BUSY, 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void release(struct slot *s, int to)
{
	__atomic_store_n(&s->state, to, __ATOMIC_RELEASE);
}

int pt_defer_hold(const struct pt_chan *ch, const struct pt_body *b,
		   pid_t child, uint64_t t)
{
	size_t i, n;

	if (!ch->owner || ch->temp || ch->spool || child <= 0)
		return -1;
	for (i = 0; i < PT_DEFER_SLOTS; i++) {
		if (!claim(&slots[i], SLOT_FREE))
			continue;
		n = pt_encode_record(ch, b, t, slots[i].frame,
				     sizeof slots[i].frame);
		if (!n) {
			release(&slots[i], SLOT_FREE);
			return -1;
		}
		slots[i].child = child;
		slots[i].len = n;
		release(&slots[i], SLOT_READY);
		return 0;
	}
	return -1;
}

size_t pt_defer_take(pid_t child, unsigned char *out)
{
	size_t i, n;

	for (i = 0; i < PT_DEFER_SLOTS; i++) {
		if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) !=
			    SLOT_READY || slots[i].child != child ||
		    !claim(&slots[i], SLOT_READY))
			continue;
		if (slots[i].child != child) {  /* reused in between */
			release(&slots[i], SLOT_READY);
			continue;
		}
		n = slots[i].len;
		memcpy(out, slots[i].frame, n);
		release(&slots[i], SLOT_FREE);
		return n;
	}
	return 0;
}

void pt_defer_flush(const struct pt_chan *ch)
{
	size_t i;

	if (!ch->owner)
		return;
	for (i = 0; i < PT_DEFER_SLOTS; i++) {
		if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) !=
			    SLOT_READY || !claim(&slots[i], SLOT_READY))
			continue;
		pt_chan_write(ch, slots[i].frame, slots[i].len);
		release(&slots[i], SLOT_FREE);
	}
}

void pt_defer_forget(void)
{
	size_t i;

	/* Written only if held: each slot's page is shared with the parent
	 * until written. */
	for (i = 0; i < PT_DEFER_SLOTS; i++)
		if (slots[i].state != SLOT_FREE)
			slots[i].state = SLOT_FREE;
}
