/*
 * expect.c: which announced processes the collector still waits for.
 * Records are built by hand; times are what the table is given.
 */
#include <stdio.h>
#include <string.h>

#include "collect/expect.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	printf("test-expect.c:%d: FAIL: %s\n", __LINE__, #cond); } } while (0)

#define MS 1000000ull

static void frame(struct pt_expect *e, unsigned type, uint32_t pid,
		  uint32_t child, uint64_t now)
{
	struct pt_record r;

	memset(&r, 0, sizeof r);
	r.hdr.type = (uint8_t)type;
	r.hdr.pid = pid;
	switch (type) {
	case PT_REC_SPAWN: r.u.spawn.child_pid = child; break;
	case PT_REC_FORK:  r.u.fork.child_pid = child; break;
	case PT_REC_REAP:  r.u.reap.child_pid = child; break;
	}
	pt_expect_frame(e, &r, now);
}

int main(void)
{
	struct pt_expect e;
	uint32_t pid;

	/* An EXEC announces the pid's next image; its HELLO answers. */
	memset(&e, 0, sizeof e);
	CHECK(!pt_expect_any(&e, 1 * MS));
	frame(&e, PT_REC_EXEC, 100, 0, 1 * MS);
	CHECK(pt_expect_any(&e, 2 * MS));
	frame(&e, PT_REC_HELLO, 100, 0, 3 * MS);
	CHECK(!pt_expect_any(&e, 3 * MS));
	/* ...or its EXEC_FAILED: the old image goes on. */
	frame(&e, PT_REC_EXEC, 100, 0, 4 * MS);
	frame(&e, PT_REC_EXEC_FAILED, 100, 0, 5 * MS);
	CHECK(!pt_expect_any(&e, 5 * MS));

	/* A held SPAWN comes with the REAP of a child already dead. */
	frame(&e, PT_REC_HELLO, 200, 0, 6 * MS);
	frame(&e, PT_REC_EXIT, 200, 0, 7 * MS);
	frame(&e, PT_REC_SPAWN, 100, 200, 8 * MS);
	frame(&e, PT_REC_REAP, 100, 200, 8 * MS);
	CHECK(!pt_expect_any(&e, 8 * MS));

	/* A FORK flushed by a parent that exits: the child is awaited until
	 * it says something, or for PT_EXPECT_NS. */
	frame(&e, PT_REC_FORK, 100, 300, 10 * MS);
	frame(&e, PT_REC_EXIT, 100, 0, 10 * MS);
	CHECK(pt_expect_any(&e, 10 * MS + PT_EXPECT_NS - 1));
	CHECK(!pt_expect_any(&e, 10 * MS + PT_EXPECT_NS));
	frame(&e, PT_REC_FORK, 100, 301, 200 * MS);
	frame(&e, PT_REC_EXEC, 301, 0, 201 * MS);   /* heard, and announced */
	CHECK(pt_expect_any(&e, 202 * MS));
	frame(&e, PT_REC_HELLO, 301, 0, 203 * MS);
	CHECK(!pt_expect_any(&e, 203 * MS));

	/* Announcing again restarts the wait; pid 0 is nobody. */
	frame(&e, PT_REC_SPAWN, 1, 400, 300 * MS);
	frame(&e, PT_REC_SPAWN, 1, 400, 350 * MS);
	CHECK(pt_expect_any(&e, 300 * MS + PT_EXPECT_NS));
	CHECK(!pt_expect_any(&e, 350 * MS + PT_EXPECT_NS));
	frame(&e, PT_REC_REAP, 1, 0, 500 * MS);
	frame(&e, PT_REC_FORK, 1, 0, 500 * MS);
	CHECK(!pt_expect_any(&e, 500 * MS));

	/* More than the table holds: unsure for PT_EXPECT_NS, even once
	 * every one it does hold has answered. */
	for (pid = 1000; pid < 1000 + PT_EXPECT_SLOTS + 1; pid++)
		frame(&e, PT_REC_FORK, 1, pid, 600 * MS);
	for (pid = 1000; pid < 1000 + PT_EXPECT_SLOTS + 1; pid++)
		frame(&e, PT_REC_EXIT, pid, 0, 601 * MS);
	CHECK(pt_expect_any(&e, 601 * MS));
	CHECK(!pt_expect_any(&e, 600 * MS + PT_EXPECT_NS));
	/* Expired slots are free again. */
	for (pid = 2000; pid < 2000 + PT_EXPECT_SLOTS; pid++)
		frame(&e, PT_REC_FORK, 1, pid, 800 * MS);
	for (pid = 2000; pid < 2000 + PT_EXPECT_SLOTS; pid++)
		frame(&e, PT_REC_EXIT, pid, 0, 801 * MS);
	CHECK(!pt_expect_any(&e, 801 * MS));

	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
