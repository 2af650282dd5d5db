/* Protocol Buffers encoding; see pbuf.h. */
#include "base/pbuf.h"

#include <string.h>

#include "base/varint.h"

size_t pt_pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pt_pb_raw_varint(struct pt_sb *sb, uint64_t v)
{
	pt_sb_grow(sb, 10);
	sb->len += pt_uv_put((unsigned char *)sb->buf + sb->len, v);
	sb->buf[sb->len] = '\0';
}

void pt_pb_tag(struct pt_sb *sb, uint32_t field, enum pt_pb_wire wire)
{
	pt_pb_raw_varint(sb, (uint64_t)field << 3 | (uint64_t)wire);
}

void pt_pb_uint(struct pt_sb *sb, uint32_t field, uint64_t v)
{
	pt_pb_tag(sb, field, PT_PB_VARINT);
	pt_pb_raw_varint(sb, v);
}

void pt_pb_int(struct pt_sb *sb, uint32_t field, int64_t v)
{
	pt_pb_uint(sb, field, (uint64_t)v);
}

void pt_pb_sint(struct pt_sb *sb, uint32_t field, int64_t v)
{
	pt_pb_uint(sb, field, pt_zz64((uint64_t)v));
}

void pt_pb_fixed64(struct pt_sb *sb, uint32_t field, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	pt_pb_tag(sb, field, PT_PB_FIXED64);
	pt_sb_add(sb, b, 8);
}

void pt_pb_double(struct pt_sb *sb, uint32_t field, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof bits);
	pt_pb_fixed64(sb, field, bits);
}

void pt_pb_bytes(struct pt_sb *sb, uint32_t field, const void *p, size_t n)
{
	pt_pb_tag(sb, field, PT_PB_LEN);
	pt_pb_raw_varint(sb, n);
	pt_sb_add(sb, p, n);
}

void pt_pb_str(struct pt_sb *sb, uint32_t field, const char *s)
{
	pt_pb_bytes(sb, field, s, strlen(s));
}

size_t pt_pb_open(struct pt_sb *sb, uint32_t field)
{
	pt_pb_tag(sb, field, PT_PB_LEN);
	return sb->len;
}

void pt_pb_close(struct pt_sb *sb, size_t mark)
{
	size_t body = sb->len - mark, k = pt_pb_varint_len(body);

	pt_sb_grow(sb, k);
	memmove(sb->buf + mark + k, sb->buf + mark, body);
	pt_uv_put((unsigned char *)sb->buf + mark, body);
	sb->len += k;
	sb->buf[sb->len] = '\0';
}
