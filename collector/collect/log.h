/*
 * The collector's side of the run log: creating it, and reading the
 * records programs appended (doc/design.md, "The transport"; the layout
 * is in proftrace/wire.h).
 */
#ifndef PT_COLLECT_LOG_H
#define PT_COLLECT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "proftrace/wire.h"

/* How long an incomplete record at the end of the log is waited for
 * before the reader looks past it: an append in progress finishes in
 * well under that unless its writer was killed or stopped. */
#define PT_LOG_GRACE_NS 500000000ull

/* New bytes one drain reads at most (except a final one), so that a
 * drain takes bounded time however fast programs append. */
#define PT_LOG_DRAIN_MAX (4u << 20)

/* Bytes read ahead at once when the next record is not yet all in the
 * buffer: fewer system calls for small records. */
#define PT_LOG_READ_CHUNK (1u << 20)

/* Consumed bytes are given back to tmpfs once this many have gathered:
 * a long run would otherwise keep its whole log in memory. */
#define PT_LOG_PUNCH_BYTES (1u << 20)

/* What a reader has seen, for the capture's LOSS records and the summary. */
struct pt_log_stats {
	uint64_t frames;        /* handed to the deliver function, and taken */
	uint64_t refused;       /* whole, but refused by the deliver function */
	uint64_t resyncs;       /* stretches of damaged bytes stepped over */
	uint64_t lost_bytes;    /* bytes stepped over: records cut short by a
				 * killed writer, scribbles, and what was left
				 * incomplete at the run's end */
	uint64_t bytes_read;    /* read from the file */
};

struct pt_log_reader {
	int fd;                 /* the run log; the reader's to close */
	uint64_t off;           /* file offset of the first byte not consumed */
	uint64_t punched;       /* bytes below this were given back to tmpfs */
	unsigned char *buf;     /* bytes read, buf[start..len) not consumed */
	size_t start;
	size_t len;
	size_t cap;
	uint64_t wait_since;    /* when the record at off was first found
				 * incomplete at the end; 0: not waiting */
	int in_loss;            /* the bytes last stepped over have not yet
				 * been followed by a whole record */
	int more;               /* the last drain stopped at PT_LOG_DRAIN_MAX
				 * with more in the file: drain again soon */
	struct pt_log_stats st;
};

/*
 * Takes one record's frame: len bytes (header and payload, not checked
 * by the reader) of the given stream and flags (enum pt_log_flag), valid
 * until the call returns.  Must not drain the same reader.  Returns 0 if
 * the frame was taken, -1 if it was refused: the reader counts it and
 * goes on.
 */
typedef int (*pt_log_deliver_fn)(void *ctx, uint64_t stream, uint32_t flags,
				 const unsigned char *frame, size_t len);

/*
 * A new, empty run log in a memfd only its owner may open, sealed so
 * that nobody can shrink it under the reader, and r set up to read it.
 * Returns the memfd (close-on-exec; r owns it, pt_log_close closes it),
 * or -1 with errno set; r is then unchanged.
 */
int pt_log_create(struct pt_log_reader *r);

/*
 * r set up to read the log open (readable) on fd from its start: for
 * tests and fuzzing, which build the file themselves.  r owns fd from
 * then on, and punches what it has read out of the file, as out of its
 * own memfd.
 */
void pt_log_attach(struct pt_log_reader *r, int fd);

/*
 * Hands each whole record appended since the last call to deliver, in
 * file order, never waiting, and reading at most PT_LOG_DRAIN_MAX new
 * bytes (r->more says when it stopped there).  Damaged bytes (a record
 * cut short, scribbles) are stepped over to the next whole record and
 * counted.  An incomplete record at the end is waited for: after
 * PT_LOG_GRACE_NS of now_ns (CLOCK_MONOTONIC) it is stepped over only if
 * a whole record follows it.  final: nothing more will be appended, so
 * the drain reads to the size the file had when it began, and what is
 * incomplete there is counted lost at once.  Returns the frames taken,
 * or -1 with errno set if the file could not be read or the buffer not
 * grown (r stays consistent: a later drain goes on from where it was).
 */
int pt_log_drain(struct pt_log_reader *r, uint64_t now_ns, int final,
		 pt_log_deliver_fn deliver, void *ctx);

/* Frees the buffer and closes the log's descriptor. */
void pt_log_close(struct pt_log_reader *r);

#endif
