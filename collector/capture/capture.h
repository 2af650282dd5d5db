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

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

PT_ASSERT_SIZE(pt_cap_file_header, 16);
PT_ASSERT_OFF(pt_cap_file_header, magic, 0);
PT_ASSERT_OFF(pt_cap_file_header, version, 8);
PT_ASSERT_OFF(pt_cap_file_header, header_size, 12);

PT_ASSERT_SIZE(pt_cap_record, 40);
PT_ASSERT_OFF(pt_cap_record, magic, 0);
PT_ASSERT_OFF(pt_cap_record, kind, 4);
PT_ASSERT_OFF(pt_cap_record, reserved, 6);
PT_ASSERT_OFF(pt_cap_record, length, 8);
PT_ASSERT_OFF(pt_cap_record, peer_pid, 12);
PT_ASSERT_OFF(pt_cap_record, peer_uid, 16);
PT_ASSERT_OFF(pt_cap_record, reserved2, 20);
PT_ASSERT_OFF(pt_cap_record, conn_id, 24);
PT_ASSERT_OFF(pt_cap_record, recv_ns, 32);

/*
 * Walk a META record's "key\0value\0" pairs: each call takes the pair at
 * *p (before end), sets key and value (NUL-terminated inside the record,
 * their lengths in *klen and *vlen) and advances *p.  Returns 1, or 0 at
 * the end or at a pair that is not whole: a dangling key or an
 * unterminated value is not trusted, and nothing after it is read.
 */
static inline int pt_cap_meta_next(const unsigned char **p,
				   const unsigned char *end,
				   const char **key, size_t *klen,
				   const char **val, size_t *vlen)
{
	const unsigned char *k = *p, *kz, *v, *vz;

	if (k >= end || !(kz = memchr(k, 0, (size_t)(end - k))))
		return 0;
	v = kz + 1;
	if (v >= end || !(vz = memchr(v, 0, (size_t)(end - v))))
		return 0;
	*key = (const char *)k;
	*klen = (size_t)(kz - k);
	*val = (const char *)v;
	*vlen = (size_t)(vz - v);
	*p = vz + 1;
	return 1;
}

#endif
