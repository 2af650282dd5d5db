/* Processes announced but not heard from; see expect.h. */
#include "collect/expect.h"

static int live(const struct pt_expect *e, unsigned i, uint64_t now)
{
	return e->slot[i].since && now - e->slot[i].since < PT_EXPECT_NS;
}

static void forget(struct pt_expect *e, uint32_t pid)
{
	unsigned i;

	for (i = 0; i < PT_EXPECT_SLOTS; i++)
		if (e->slot[i].since && e->slot[i].pid == pid)
			e->slot[i].since = 0;
}

static void expect(struct pt_expect *e, uint32_t pid, uint64_t now)
{
	unsigned i, free_slot = PT_EXPECT_SLOTS;

	if (!pid)
		return;
	for (i = 0; i < PT_EXPECT_SLOTS; i++) {
		if (live(e, i, now) && e->slot[i].pid == pid) {
			e->slot[i].since = now;
			return;
		}
		if (!live(e, i, now) && free_slot == PT_EXPECT_SLOTS)
			free_slot = i;
	}
	if (free_slot == PT_EXPECT_SLOTS) {
		e->full_until = now + PT_EXPECT_NS;
		return;
	}
	e->slot[free_slot].pid = pid;
	e->slot[free_slot].since = now ? now : 1;
}

void pt_expect_frame(struct pt_expect *e, const struct pt_record *rec,
		     uint64_t now)
{
	/* Whatever a process sends, it is not silent. */
	forget(e, rec->hdr.pid);
	switch (rec->hdr.type) {
	case PT_REC_EXEC:
		expect(e, rec->hdr.pid, now);   /* its next image */
		break;
	case PT_REC_SPAWN:
		expect(e, rec->u.spawn.child_pid, now);
		break;
	case PT_REC_FORK:
		expect(e, rec->u.fork.child_pid, now);
		break;
	case PT_REC_REAP:
		/* Dead: whatever it had to say has been said (and a SPAWN
		 * or FORK held until the reap comes with it, after). */
		forget(e, rec->u.reap.child_pid);
		break;
	}
}

int pt_expect_any(const struct pt_expect *e, uint64_t now)
{
	unsigned i;

	if (now < e->full_until)
		return 1;
	for (i = 0; i < PT_EXPECT_SLOTS; i++)
		if (live(e, i, now))
			return 1;
	return 0;
}
