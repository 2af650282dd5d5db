/*
 * Capture file: what the collector writes and the converters read.
 *
 * A capture is one gzip stream (zcat prints it) holding a file header and
 * then capture records.  Readers deliver each record as a pt_cap_record
 * header followed by `length` bytes, whatever the version on disk:
 *   META     NUL-terminated "key\0value\0" pairs (host, kernel, command...)
 *   CONNECT  nothing; a peer connected (pid/uid from SO_PEERCRED)
 *   FRAME    one whole wire frame (include/proftrace/wire.h), inflated and
 *            with PT_FRAME_DEFLATED cleared
 *   EOF      nothing; the peer closed its end (or died)
 *   DROP     NUL-terminated reason: the collector dropped this connection
 *   LOSS     8 bytes: little-endian count of frames known to be lost
 * The collector flushes the stream at least once a second, so a capture cut
 * short by a crash reads up to its last flush.  doc/format.md specifies it.
 */
#ifndef PROFTRACE_CAPTURE_H
#define PROFTRACE_CAPTURE_H

#include <stdint.h>

#include "proftrace/wire.h"

#define PT_CAP_FILE_MAGIC   "PFTRCAP"     /* 8 bytes with the NUL */
#define PT_CAP_VERSION      3          /* what the writer writes */
#define PT_CAP_VERSION_MIN  1          /* the oldest the reader reads */
#define PT_CAP_RECORD_MAGIC 0x50414350u   /* "PCAP" as bytes */
#define PT_CAP_RECORD_MAX   (PT_FRAME_MAX + 64)

struct pt_cap_file_header {             /* 16 bytes */
	char     magic[8];              /* PT_CAP_FILE_MAGIC */
	uint32_t version;               /* PT_CAP_VERSION */
	uint32_t header_size;           /* sizeof this struct; skip the rest */
};

enum pt_cap_kind {
	PT_CAP_META    = 1,
	PT_CAP_CONNECT = 2,
	PT_CAP_FRAME   = 3,
	PT_CAP_EOF     = 4,
	PT_CAP_DROP    = 5,
	PT_CAP_LOSS    = 6,
};

struct pt_cap_record {                  /* 40 bytes */
	uint32_t magic;                 /* PT_CAP_RECORD_MAGIC */
	uint16_t kind;                  /* enum pt_cap_kind */
	uint16_t reserved;
	uint32_t length;                /* bytes that follow */
	uint32_t peer_pid;              /* SO_PEERCRED of the connection */
	uint32_t peer_uid;
	uint32_t reserved2;
	uint64_t conn_id;               /* unique per capture, from 1 */
	uint64_t recv_ns;               /* collector's CLOCK_MONOTONIC */
};

#endif
