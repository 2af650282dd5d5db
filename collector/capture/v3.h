/*
 * Capture format versions 2 and 3: the record encoding and the state that
 * the writer and the reader both keep (doc/format.md, "Version 2 and 3
 * records").  Version 3 only adds RECV_US.
 *
 * Each record is a head byte (kind in the low four bits, flags above), a
 * LEB128 length and that many body bytes.  Most of a version 1 record
 * header is implied: the numbers are varints of the difference from a value
 * both sides remember (the previous record's, the connection's, the pid's),
 * so the writer and the reader must update that memory identically, record
 * by record.  Every table here is direct-mapped and of fixed size: a slot
 * that was taken over by another key simply gives the default, which the
 * writer then overrides with an explicit value.  The encoding is therefore
 * lossless for any input, and a hostile capture cannot make a reader keep
 * more than a bounded amount of it.
 */
#ifndef PT_CAPTURE_V3_H
#define PT_CAPTURE_V3_H

#include <stddef.h>
#include <stdint.h>

#include "base/varint.h"
#include "capture/capture.h"

/* Head byte. */
#define PT_V3_KIND      0x0fu /* enum pt_cap_kind */
#define PT_V3_PEER      0x10u /* peer_pid and peer_uid follow */
#define PT_V3_RECV      0x20u /* recv_ns follows */
#define PT_V3_RAW       0x40u /* FRAME: the frame's bytes as they are */
#define PT_V3_REFS      0x80u /* FRAME: the tail holds references */
/* Not a FRAME, with RECV (version 3): recv counts microseconds.  The
 * collector's receive times are whole microseconds, and the ten bits of
 * nanoseconds below them were a third of what gzip could not compress. */
#define PT_V3_RECV_US   0x40u

/* References in a compact FRAME's tail (never wire tags there). */
#define PT_V3_REF_ARGS  0x80u /* the ARG items of the pid's reference */
#define PT_V3_REF_CWD   0x81u /* a CWD item: the reference's CWD */
#define PT_V3_REF_EXE   0x82u /* an EXE item: the reference's PATH */

/* Compact frames are of this wire version; others are stored RAW. */
#define PT_V3_WIRE_VERSION 1

/* Body bytes a reader accepts: the largest frame, raw, plus the fields. */
#define PT_V3_BODY_MAX  (PT_CAP_RECORD_MAX + 64)

#define PT_V3_CONN_SLOTS 4096u
#define PT_V3_REF_SLOTS  1024u
/* Command lines longer than this are not remembered (bounds memory). */
#define PT_V3_REF_MAX    (32u << 10)

/*
 * What an EXEC or SPAWN said about the program a pid is about to run: its
 * HELLO usually repeats it, and then says "the same" in a few bytes.
 */
struct pt_v3_ref {
	uint32_t pid;
	int valid;
	unsigned char *buf;             /* args, then cwd, then path */
	size_t args_len, cwd_len, path_len;     /* cwd/path without NUL */
	int has_cwd, has_path;
	size_t alloc;
};

struct pt_v3_state {
	uint64_t conn;                  /* conn_id of the previous record */
	uint64_t recv_ns;               /* latest explicit recv_ns */
	uint32_t peer_pid, peer_uid;    /* latest explicit peer */
	uint64_t time_ns;               /* time_ns of the previous frame */
	uint64_t clock_off;             /* realtime - time of the last HELLO */
	struct {
		uint64_t id;
		uint32_t pid, uid;
	} conns[PT_V3_CONN_SLOTS];
	struct pt_v3_ref refs[PT_V3_REF_SLOTS];
};

/* Allocate a state for the start of a capture.  Never fails (exits). */
struct pt_v3_state *pt_v3_new(void);
void pt_v3_free(struct pt_v3_state *st);

/* The peer a record of conn_id has without an explicit PEER. */
void pt_v3_peer(const struct pt_v3_state *st, uint64_t conn_id,
		  uint32_t *pid, uint32_t *uid);
void pt_v3_set_peer(struct pt_v3_state *st, uint64_t conn_id,
		      uint32_t pid, uint32_t uid);

/* The reference of pid, or NULL. */
const struct pt_v3_ref *pt_v3_ref(const struct pt_v3_state *st,
				      uint32_t pid);

/*
 * After a whole frame (32-byte header and payload, plain): remember what
 * an EXEC or SPAWN names.  The frame has been checked by the caller (its
 * tail items are terminated).
 */
void pt_v3_note_frame(struct pt_v3_state *st, const unsigned char *frame,
			size_t len);

/*
 * Walk the tail items of a plain payload from `start`: 0 if every item is
 * terminated and no tag is 0x80 or above (so references may replace some),
 * -1 otherwise.
 */
int pt_v3_tail_plain(const unsigned char *p, size_t start, size_t n);

/* Pieces of one encoded record, written in order (scatter-gather). */
#define PT_V3_MAX_SEGS 16
/* Room pt_v3_encode needs for the head byte and length, and for the
 * record's fields. */
#define PT_V3_HEAD_MAX   11
#define PT_V3_FIELDS_MAX 256

struct pt_v3_seg {
	const void *p;
	size_t n;
};

size_t pt_v3_encode(struct pt_v3_state *st, enum pt_cap_kind kind,
		    uint64_t conn_id, uint32_t peer_pid, uint32_t peer_uid,
		    uint64_t recv_ns, const void *data, size_t len,
		    struct pt_v3_seg *sg, unsigned char *hd,
		    unsigned char *body);

struct pt_sb;
int pt_v3_decode(struct pt_v3_state *st, unsigned version, unsigned head,
		 const unsigned char *p, const unsigned char *end,
		 struct pt_cap_record *hdr, const unsigned char **data,
		 struct pt_sb *frame, const char **why);

#endif
