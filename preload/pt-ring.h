/*
 * The library's side of the shared ring (ring.c; the layout is in
 * proftrace/wire.h, the design in doc/design.md, "The shared ring").
 *
 * Self-contained, so that the collector's tests can drive real writers:
 * the functions take the mapping and the data area's size, and use
 * nothing of the library's state.
 */
#ifndef PT_RING_H
#define PT_RING_H

#include <stddef.h>
#include <stdint.h>

#include "proftrace/wire.h"

/*
 * Whether the mapping at map (PT_RING_HDR + size bytes) is the ring of
 * this run that this process may write to: magic, version and size as
 * expected, the run id of $PROFTRACE_RING, the collector's uid equal to
 * uid, the same pid namespace (pidns 0: not known, not compared), not
 * given up by the collector.  Returns 0 if so, -1 if not: then the
 * caller unmaps it and uses the socket.
 */
int pt_ring_usable(const void *map, uint64_t size,
		   const uint8_t run_id[PT_RING_RUN_ID], uint32_t uid,
		   uint32_t pidns);

/*
 * Writes the frame of len bytes (its header and payload) into the ring as
 * one record and publishes it.  Returns 0 once it is there; -1 when it
 * was not written (no room, larger than PT_RING_FRAME_MAX, or the
 * collector gave the ring up), counted in the header's `spilled`: the
 * caller sends the frame over a socket.  Never blocks, never sets errno.
 */
int pt_ring_put(void *map, uint64_t size, const void *frame, size_t len);

#endif
