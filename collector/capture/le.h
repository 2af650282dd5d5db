/*
 * Little-endian fields in unaligned bytes: every integer in a frame or a
 * capture is read, and written, this way (doc/format.md).
 */
#ifndef PT_LE_H
#define PT_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t pt_get16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof v);
	return le16toh(v);
}

static inline uint32_t pt_get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
	return le32toh(v);
}

static inline uint64_t pt_get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return le64toh(v);
}

static inline void pt_set32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof v);
}

static inline void pt_set64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof v);
}

#endif
