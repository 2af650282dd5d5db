/*
 * The EXEC of a fork child, left with its parent instead of sent.
 *
 * A fork child that only execs sends its EXEC as the exec begins, and in
 * the fork+exec loop that one message cost each spawn about 60 µs of wall
 * time (doc/performance.md), as the SPAWN sent while a child starts did
 * (defer.c).  The child cannot hold the frame itself: the exec replaces
 * its memory.  So before each fork the owner reserves a slot in a page
 * shared with its fork children; the child lays its EXEC out there, and
 * the parent sends it when it reaps the child, in one message with the
 * held FORK and the REAP (each message a spawn costs is a wake-up of the
 * collector, and one more cost about 30 µs); or before anything that
 * would lose it: its own exec or EXIT, which close the slots still
 * reserved.  A child that finds its slot closed, or no
 * slot, or a frame too big for one, sends the EXEC itself, as before.
 *
 * The page is shared by the whole tree of fork children that have not
 * exec'd yet, so a slot changes hands only by atomic operations on its
 * state, and carries the pid that reserved it.  A vfork child never
 * touches it (it is not the owner).  What a parent killed outright
 * (SIGKILL) had in its slots is lost, as are its held FORKs; so only the
 * EXEC of an image that loads the library, and reports itself all the
 * same, is left here (target.c).
 */
#include <sys/mman.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

enum {
	MB_FREE,
	MB_RESERVED,    /* for the owner's next fork child */
	MB_WRITING,     /* the child is laying its EXEC out */
	MB_READY,       /* the EXEC is there */
	MB_TAKEN,       /* being sent */
	MB_CLOSED,      /* the owner went away: the child sends itself */
};

/*
 * Each slot on a page of its own, its state beside its frame: the child
 * that writes its EXEC touches that page alone (a fork child's first
 * touch of a shared page is a fault), and so does the parent that sends
 * it.  Slots are reserved lowest first, and scans go no further than the
 * highest one this process reserved (pt.mbox_hi): a parent that forks one
 * child at a time reads one page.
 */
struct mb {
	struct {
		int state;
		pid_t owner;    /* the process that reserved it */
		pid_t child;    /* its fork child, once known */
		uint32_t len;
		unsigned char frame[PT_MBOX_BYTES - 16];
	} slot[PT_MBOX_SLOTS];
};

/* In pt (pt-preload.h, where the reason is). */
#define mb ((struct mb *)pt.mbox)
#define mb_failed pt.mbox_failed
#define mb_user pt.mbox_user
#define mb_hi pt.mbox_hi

static int cas(int i, int from, int to)
{
	return __atomic_compare_exchange_n(&mb->slot[i].state, &from, to, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static int state(int i)
{
	return __atomic_load_n(&mb->slot[i].state, __ATOMIC_ACQUIRE);
}

int pt_mbox_reserve(void)
{
	int i;

	if (!mb && !mb_failed) {
		long p = PT_SC6(PT_SYS_MMAP, NULL, sizeof *mb, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p == -1)
			mb_failed = 1;
		else
			pt.mbox = (void *)p;
	}
	if (!mb)
		return -1;
	for (i = 0; i < PT_MBOX_SLOTS; i++) {
		if (cas(i, MB_FREE, MB_RESERVED)) {
			mb->slot[i].owner = pt.owner;
			mb->slot[i].child = 0;
			mb_user = pt.owner;
			if (i >= mb_hi)
				mb_hi = i + 1;
			return i;
		}
	}
	return -1;
}

void pt_mbox_forked(int i, pid_t child)
{
	if (i < 0)
		return;
	if (child > 0)
		__atomic_store_n(&mb->slot[i].child, child, __ATOMIC_RELEASE);
	else
		cas(i, MB_RESERVED, MB_FREE);   /* no child after all */
}

int pt_mbox_put(int i, const struct pt_chan *ch, const struct pt_body *b,
		uint64_t t)
{
	size_t n;

	if (i < 0 || !mb || !ch->owner)
		return -1;
	if (!cas(i, MB_RESERVED, MB_WRITING)) {
		cas(i, MB_CLOSED, MB_FREE);     /* the owner is gone: ours */
		return -1;
	}
	n = pt_encode_record(ch, b, t, mb->slot[i].frame, sizeof mb->slot[i].frame);
	if (!n) {
		cas(i, MB_WRITING, MB_RESERVED);
		return -1;
	}
	mb->slot[i].child = ch->pid;
	mb->slot[i].len = (uint32_t)n;
	if (cas(i, MB_WRITING, MB_READY))
		return 0;
	/* Closed while we wrote: the owner is gone, nobody will send it. */
	cas(i, MB_CLOSED, MB_FREE);
	return -1;
}

int pt_mbox_unput(int i, struct pt_chan *ch)
{
	int rc = -1;

	if (i < 0 || !mb)
		return -1;
	if (cas(i, MB_READY, MB_TAKEN)) {
		rc = pt_chan_write(ch, mb->slot[i].frame, mb->slot[i].len);
		__atomic_store_n(&mb->slot[i].state, MB_RESERVED,
				 __ATOMIC_RELEASE);
	}
	return rc;
}

size_t pt_mbox_take(const struct pt_chan *ch, pid_t child,
		    unsigned char *out)
{
	size_t n = 0;
	int i;

	if (!mb || !ch->owner || child <= 0 || mb_user != ch->pid)
		return 0;
	for (i = 0; i < mb_hi; i++) {
		if (state(i) == MB_FREE || mb->slot[i].owner != ch->pid ||
		    __atomic_load_n(&mb->slot[i].child, __ATOMIC_ACQUIRE) !=
		    child)
			continue;
		if (cas(i, MB_READY, MB_TAKEN)) {
			n = mb->slot[i].len;
			pt_memcpy(out, mb->slot[i].frame, n);
			__atomic_store_n(&mb->slot[i].state, MB_FREE,
					 __ATOMIC_RELEASE);
		} else if (!cas(i, MB_RESERVED, MB_FREE)) {
			cas(i, MB_WRITING, MB_FREE);    /* died mid-write */
		}
	}
	return n;
}

void pt_mbox_flush(struct pt_chan *ch)
{
	int i;

	/* A process that never reserved has nothing here: not even the
	 * page of states is read (a fork child's first touch is a fault). */
	if (!mb || !ch->owner || mb_user != ch->pid)
		return;
	for (i = 0; i < mb_hi; i++) {
		if (state(i) == MB_FREE || mb->slot[i].owner != ch->pid)
			continue;
		if (cas(i, MB_READY, MB_TAKEN)) {
			pt_chan_write(ch, mb->slot[i].frame, mb->slot[i].len);
			__atomic_store_n(&mb->slot[i].state, MB_FREE,
					 __ATOMIC_RELEASE);
		} else if (!cas(i, MB_RESERVED, MB_CLOSED)) {
			/* Its child is writing: it will find the slot closed
			 * and send the EXEC itself. */
			cas(i, MB_WRITING, MB_CLOSED);
		}
	}
}
