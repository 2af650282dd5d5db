/*
 * A protocol buffers writer: the wire format only (varints, fixed-width
 * numbers, length-delimited fields), appending to a pt_sb.  No schema
 * knowledge: callers name field numbers themselves.
 *
 * Nested messages: pt_pb_open() remembers where the message starts and
 * pt_pb_close() writes its tag and length in front of it once its size is
 * known, moving the body up by the few bytes they take.  Messages nest up
 * to PT_PB_DEPTH deep.  Appending never fails (pt_sb exits on out of
 * memory); a close without an open, or nesting too deep, is a programming
 * error and aborts.
 */
#ifndef PT_PBUF_H
#define PT_PBUF_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

#define PT_PB_DEPTH 16

enum pt_pb_wire { PT_PB_VARINT = 0, PT_PB_I64 = 1, PT_PB_LEN = 2,
		  PT_PB_I32 = 5 };

struct pt_pb {
	struct pt_sb *sb;
	size_t depth;
	struct { size_t start; uint32_t field; } open[PT_PB_DEPTH];
};

/* Start writing into sb (appending to what it holds). */
void pt_pb_init(struct pt_pb *pb, struct pt_sb *sb);

/* The bytes of a varint encoding of v (1 to 10). */
size_t pt_pb_varint_size(uint64_t v);

/* Append v as a varint (no tag). */
void pt_pb_varint(struct pt_pb *pb, uint64_t v);

/* Fields: tag and value.  Signed int64/int32 fields take the two's
 * complement as uint64 (pt_pb_uint(pb, f, (uint64_t)v)). */
void pt_pb_uint(struct pt_pb *pb, uint32_t field, uint64_t v);
void pt_pb_fixed64(struct pt_pb *pb, uint32_t field, uint64_t v);
void pt_pb_fixed32(struct pt_pb *pb, uint32_t field, uint32_t v);
void pt_pb_double(struct pt_pb *pb, uint32_t field, double v);
void pt_pb_bytes(struct pt_pb *pb, uint32_t field, const void *data,
		 size_t n);
void pt_pb_string(struct pt_pb *pb, uint32_t field, const char *s);

/* Begin and end an embedded message in field `field`. */
void pt_pb_open(struct pt_pb *pb, uint32_t field);
void pt_pb_close(struct pt_pb *pb);

/*
 * Append to sb the tag and length of field `field` holding n bytes, for a
 * message whose body the caller writes, or has written, elsewhere.
 */
void pt_pb_len_prefix(struct pt_sb *sb, uint32_t field, size_t n);

#endif
