/*
 * Reading captures (collector/capture/capture.h) and spool directories.
 *
 * The reader yields one event at a time in file order.  It never trusts the
 * input: a record whose header or frame is malformed ends the reading of
 * that capture with a message naming the byte offset of the damage; every
 * intact record before it has already been delivered.
 */
#ifndef PT_CAPTURE_READ_H
#define PT_CAPTURE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/frame.h"

struct pt_reader;

/* One event of a capture, valid until the next pt_reader_next(). */
struct pt_cap_event {
	struct pt_cap_record hdr;       /* host byte order */
	const unsigned char *data;      /* hdr.length bytes */
	struct pt_record rec;           /* parsed frame, when kind == FRAME */
};

/*
 * Open a capture file, or a spool directory ($PROFTRACE_DIR: every file in
 * it is read as the frames of one connection).  Returns NULL and prints a
 * one-line error ("not a proftrace capture", "capture format version N is
 * not supported", errno text) when the file cannot be read at all.  A
 * capture file is inflated ahead by a thread of the reader's own, which
 * pt_reader_close() stops; one thread at a time calls the other functions.
 */
struct pt_reader *pt_reader_open(const char *path);

/*
 * Next event: 1 and *ev filled, 0 at the clean end, -1 at damage or
 * truncation (a one-line warning has been printed, naming path and offset).
 */
int pt_reader_next(struct pt_reader *r, struct pt_cap_event *ev);

/* Metadata value from the capture's META records, or NULL. */
const char *pt_reader_meta(struct pt_reader *r, const char *key);

/* Every META pair read so far, in order ("key\0value\0"...; a later
 * value of a key overrides an earlier one): *len bytes. */
const char *pt_reader_meta_pairs(struct pt_reader *r, size_t *len);

/* Stop the reader's thread and free it; NULL is ignored. */
void pt_reader_close(struct pt_reader *r);

#endif
