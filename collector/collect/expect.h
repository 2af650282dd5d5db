/*
 * Processes the collector has been told about but has not heard from yet:
 * the image an EXEC is about to start, the child of a SPAWN or FORK.  Until
 * it says something (or is reaped), more frames may come from a process
 * that holds no connection at the moment, so `record` must not end the
 * capture.  An announced process that stays silent for PT_EXPECT_NS (a
 * static program, one started without the library) is no longer waited
 * for: the same patience the capture's end had before it could tell.
 *
 * A fixed table: when it is full, pt_expect_any() says "yes" for
 * PT_EXPECT_NS rather than forget someone.
 */
#ifndef PT_EXPECT_H
#define PT_EXPECT_H

#include <stdint.h>

#include "capture/frame.h"

#define PT_EXPECT_SLOTS 64
#define PT_EXPECT_NS    (100 * 1000000ull)

struct pt_expect {
	struct {
		uint32_t pid;
		uint64_t since;         /* 0: free */
	} slot[PT_EXPECT_SLOTS];
	uint64_t full_until;    /* the table overflowed: unsure until then */
};

/* Update the table with one valid frame received at now. */
void pt_expect_frame(struct pt_expect *e, const struct pt_record *rec,
		     uint64_t now);

/* Is some process announced within PT_EXPECT_NS still silent? */
int pt_expect_any(const struct pt_expect *e, uint64_t now);

#endif
