/*
 * The collector's side of the shared ring: creating it, and draining what
 * writers published (doc/design.md, "The shared ring"; the layout is in
 * proftrace/wire.h).
 */
#ifndef PT_COLLECT_RING_H
#define PT_COLLECT_RING_H

#include <stddef.h>
#include <stdint.h>

#include "proftrace/wire.h"

/* How long a missing stamp at the tail is waited for before the reader
 * steps over it: a writer needs a few hundred instructions between its
 * reservation and its stamp, so only a killed or stopped one is slower. */
#define PT_RING_GRACE_NS 500000000ull

/* What a reader has seen, for the capture's LOSS records and the summary. */
struct pt_ring_stats {
	uint64_t frames;        /* handed to the deliver function, and taken */
	uint64_t refused;       /* published, but refused by the deliver function */
	uint64_t resyncs;       /* times the tail was moved over a hole */
	uint64_t lost_bytes;    /* bytes stepped over: records never
				 * published, scribbles, and what was left
				 * when the ring was given up */
};

struct pt_ring_reader {
	unsigned char *map;     /* the mapping: header, then data */
	uint64_t size;          /* data bytes: the reader's own, never re-read */
	uint64_t tail;          /* the reader's own; the header's is a copy */
	uint64_t wait_since;    /* when the record at the tail was first found
				 * missing or malformed; 0: not waiting */
	const char *dead;       /* why the ring was given up, NULL if it was not */
	struct pt_ring_stats st;
	unsigned char frame[PT_RING_FRAME_MAX]; /* the copy every check runs on */
};

/*
 * Takes one frame out of the ring: len bytes (header and payload) at
 * frame, a copy that stays valid until the call returns.  Returns 0 if the
 * frame was taken, -1 if it was refused (malformed, or from a pid that
 * may not write): the reader counts it and goes on.
 */
typedef int (*pt_ring_deliver_fn)(void *ctx, const unsigned char *frame,
				  size_t len);

/*
 * A new ring of size data bytes (a power of two, PT_RING_DATA_MIN to
 * PT_RING_DATA_MAX) in a sealed memfd, its header filled in with a random
 * run id, and r set up to read it.  Returns the memfd (close-on-exec), or
 * -1 with errno set; r is then unchanged.
 */
int pt_ring_create(struct pt_ring_reader *r, uint64_t size);

/*
 * r set up to read the ring mapped at map with size data bytes (a power of
 * two, 16 or more), from position tail (rounded down to a multiple of 8):
 * for tests and fuzzing, which build the memory themselves.
 */
void pt_ring_attach(struct pt_ring_reader *r, void *map, uint64_t size,
		    uint64_t tail);

/*
 * Hands each record published since the last call to deliver, in the
 * order of their positions, and frees their room for writers.  Never
 * waits, and reads at most the data area's size per call.  A record not
 * yet published at the tail is waited for up to PT_RING_GRACE_NS of
 * now_ns (CLOCK_MONOTONIC), then stepped over to the next published
 * record.  final: every writer is gone, so what is still unpublished is
 * stepped over at once.  When the header shows the ring was scribbled on
 * (head behind the tail, more than the data size ahead of it, or not a
 * multiple of 8), the ring is given up: r->dead says why, the header tells
 * writers to use the socket, and what was left is counted lost.  Returns
 * the frames taken.
 */
size_t pt_ring_drain(struct pt_ring_reader *r, uint64_t now_ns, int final,
		     pt_ring_deliver_fn deliver, void *ctx);

/* Unmaps the ring (the memfd is the caller's to close). */
void pt_ring_close(struct pt_ring_reader *r);

#endif
