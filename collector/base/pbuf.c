/* A protocol buffers wire-format writer (pbuf.h). */
#include <stdlib.h>
#include <string.h>

#include "base/pbuf.h"

void pt_pb_init(struct pt_pb *pb, struct pt_sb *sb)
{
	pb->sb = sb;
	pb->depth = 0;
}

size_t pt_pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

static void sb_varint(struct pt_sb *sb, uint64_t v)
{
	pt_sb_grow(sb, 10);
	sb->len += put_varint((unsigned char *)sb->buf + sb->len, v);
	sb->buf[sb->len] = '\0';
}

void pt_pb_varint(struct pt_pb *pb, uint64_t v)
{
	sb_varint(pb->sb, v);
}

static void tag(struct pt_sb *sb, uint32_t field, enum pt_pb_wire w)
{
	sb_varint(sb, (uint64_t)field << 3 | w);
}

void pt_pb_uint(struct pt_pb *pb, uint32_t field, uint64_t v)
{
	tag(pb->sb, field, PT_PB_VARINT);
	sb_varint(pb->sb, v);
}

/* Little-endian, whatever the host's order. */
static void sb_le(struct pt_sb *sb, uint64_t v, size_t n)
{
	unsigned char b[8];
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	pt_sb_add(sb, b, n);
}

void pt_pb_fixed64(struct pt_pb *pb, uint32_t field, uint64_t v)
{
	tag(pb->sb, field, PT_PB_I64);
	sb_le(pb->sb, v, 8);
}

void pt_pb_fixed32(struct pt_pb *pb, uint32_t field, uint32_t v)
{
	tag(pb->sb, field, PT_PB_I32);
	sb_le(pb->sb, v, 4);
}

void pt_pb_double(struct pt_pb *pb, uint32_t field, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof bits);
	pt_pb_fixed64(pb, field, bits);
}

void pt_pb_len_prefix(struct pt_sb *sb, uint32_t field, size_t n)
{
	tag(sb, field, PT_PB_LEN);
	sb_varint(sb, n);
}

void pt_pb_bytes(struct pt_pb *pb, uint32_t field, const void *data,
		 size_t n)
{
	pt_pb_len_prefix(pb->sb, field, n);
	pt_sb_add(pb->sb, data, n);
}

void pt_pb_string(struct pt_pb *pb, uint32_t field, const char *s)
{
	pt_pb_bytes(pb, field, s, strlen(s));
}

void pt_pb_open(struct pt_pb *pb, uint32_t field)
{
	if (pb->depth == PT_PB_DEPTH)
		abort();
	pb->open[pb->depth].start = pb->sb->len;
	pb->open[pb->depth].field = field;
	pb->depth++;
}

/* The body is written first and moved up once: a span's attributes are a
 * few hundred bytes, so the move costs less than measuring them twice. */
void pt_pb_close(struct pt_pb *pb)
{
	unsigned char head[16];
	struct pt_sb *sb = pb->sb;
	size_t start, n, h;

	if (!pb->depth)
		abort();
	pb->depth--;
	start = pb->open[pb->depth].start;
	n = sb->len - start;
	h = put_varint(head, (uint64_t)pb->open[pb->depth].field << 3 |
		       PT_PB_LEN);
	h += put_varint(head + h, n);
	pt_sb_grow(sb, h);
	memmove(sb->buf + start + h, sb->buf + start, n);
	memcpy(sb->buf + start, head, h);
	sb->len += h;
	sb->buf[sb->len] = '\0';
}
