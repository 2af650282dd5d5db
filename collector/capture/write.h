/*
 * Writing a capture (capture/capture.h): a gzip stream, flushed at least
 * once a second so that a crash loses at most the last second.
 */
#ifndef PT_CAPTURE_WRITE_H
#define PT_CAPTURE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

struct pt_writer;

/*
 * Create (O_EXCL unless `overwrite`) the capture at path and write its file
 * header.  Returns NULL with a one-line error printed.
 */
struct pt_writer *pt_writer_open(const char *path, int overwrite);

/*
 * Append one record (written in format version 3: a FRAME's recv_ns is not
 * kept, the rest reads back exactly).  Returns 0, or -1 after printing the
 * error once.
 */
int pt_writer_add(struct pt_writer *w, enum pt_cap_kind kind, uint64_t conn_id,
		  uint32_t peer_pid, uint32_t peer_uid, uint64_t recv_ns,
		  const void *data, size_t len);

/* Append a META record holding the given key/value pairs. */
int pt_writer_meta(struct pt_writer *w, const char *const *kv, size_t npairs);

/*
 * Flush if the last flush is older than a second (or always if force).
 * Also where deflate's level is chosen again: 6 after a quiet interval, 1
 * after a busy one (capture-write.c).
 */
int pt_writer_flush(struct pt_writer *w, int force);

/* The deflate level in use. */
int pt_writer_level(const struct pt_writer *w);

/* Finish the gzip stream and close. Returns 0, or -1 if anything failed. */
int pt_writer_close(struct pt_writer *w);

#endif
