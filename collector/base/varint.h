/*
 * LEB128 varints and zigzag, as the capture format (capture/v3.h) and
 * Protocol Buffers (base/pbuf.h) both encode integers.
 */
#ifndef PT_VARINT_H
#define PT_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* Write v at p, which has room for 10 bytes; returns the bytes used. */
static inline size_t pt_uv_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* Bytes used, or 0 if [p, end) holds no whole varint of at most 64 bits. */
static inline size_t pt_uv_get(const unsigned char *p,
			       const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < 10 && p + i < end; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			if (i == 9 && p[i] > 1)
				return 0;       /* over 64 bits */
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

static inline uint64_t pt_zz64(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static inline uint64_t pt_unzz64(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

/* 32-bit fields: the difference modulo 2^32, as a signed 32-bit value. */
static inline uint64_t pt_zz32(uint32_t d)
{
	return (uint32_t)((d << 1) ^ (uint32_t)-(int32_t)(d >> 31));
}

static inline uint32_t pt_unzz32(uint64_t v)
{
	uint32_t u = (uint32_t)v;

	return (u >> 1) ^ (uint32_t)-(int32_t)(u & 1);
}

#endif
