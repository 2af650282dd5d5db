/*
 * Protocol Buffers encoding, by hand: the wire format's varints, fixed
 * 64-bit fields and length-delimited fields (strings, bytes, nested
 * messages) appended to a pt_sb.  No schema, no reflection: the caller
 * knows its message's field numbers and types.
 *
 * A nested message is written in place: pt_pb_open() writes its tag and
 * returns a mark; pt_pb_close() measures what was appended since and
 * inserts its length as a minimal varint, moving the body up by those
 * one to ten bytes.  So lengths cost what they must and no more (no
 * padded four-byte lengths), at the price of one memmove per message:
 * cheap for the small messages trace packets are.  Marks are offsets, so
 * they stay valid while the buffer grows; messages nest as deep as the
 * caller likes, and are closed innermost first.
 *
 * Appending never fails (pt_sb exits on out of memory).
 */
#ifndef PT_PBUF_H
#define PT_PBUF_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

enum pt_pb_wire {
	PT_PB_VARINT = 0,
	PT_PB_FIXED64 = 1,
	PT_PB_LEN = 2,
	PT_PB_FIXED32 = 5,
};

/* Bytes that v takes as a varint (1 to 10). */
size_t pt_pb_varint_len(uint64_t v);

/* A bare varint, no tag. */
void pt_pb_raw_varint(struct pt_sb *sb, uint64_t v);

/* Tag of field `field` (>= 1) with wire type `wire`. */
void pt_pb_tag(struct pt_sb *sb, uint32_t field, enum pt_pb_wire wire);

/*
 * Varint fields: uint32/uint64/bool/enum take v as it is; int32 and
 * int64 too (a negative value is its two's complement, ten bytes);
 * sint32/sint64 want pt_pb_sint (zigzag).
 */
void pt_pb_uint(struct pt_sb *sb, uint32_t field, uint64_t v);
void pt_pb_int(struct pt_sb *sb, uint32_t field, int64_t v);
void pt_pb_sint(struct pt_sb *sb, uint32_t field, int64_t v);

/* fixed64 / sfixed64 / double (as its bits), little-endian. */
void pt_pb_fixed64(struct pt_sb *sb, uint32_t field, uint64_t v);
void pt_pb_double(struct pt_sb *sb, uint32_t field, double v);

/* A length-delimited field holding the n bytes at p (string or bytes). */
void pt_pb_bytes(struct pt_sb *sb, uint32_t field, const void *p, size_t n);
void pt_pb_str(struct pt_sb *sb, uint32_t field, const char *s);

/*
 * Start a nested message (or packed repeated field) `field`; everything
 * appended until pt_pb_close(sb, mark) is its body.
 */
size_t pt_pb_open(struct pt_sb *sb, uint32_t field);
void pt_pb_close(struct pt_sb *sb, size_t mark);

#endif
