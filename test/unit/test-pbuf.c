/*
 * Unit tests of the protobuf writer (base/pbuf.c) against the wire
 * format's published examples: field 1 = 150 is 08 96 01, field 2 =
 * "testing" is 12 07 74 65 73 74 69 6e 67, a message holding the first
 * as field 3 is 1a 03 08 96 01; zigzag maps -1, 1, -2 to 1, 2, 3; a
 * negative int64 takes ten bytes; fixed64 and double are little-endian.
 * And what the examples do not show: a nested message whose body needs a
 * two- or three-byte length keeps its body intact, at any depth.
 */
#include <stdio.h>
#include <string.h>

#include "base/pbuf.h"

static int failures;

static void expect(const char *what, struct pt_sb *sb, const char *hex)
{
	char got[4096] = "";
	size_t i, n = 0;

	for (i = 0; i < sb->len && n + 4 < sizeof got; i++)
		n += (size_t)snprintf(got + n, sizeof got - n, "%s%02x",
				      i ? " " : "", (unsigned char)sb->buf[i]);
	if (strcmp(got, hex)) {
		fprintf(stderr, "FAIL: %s: got %s, want %s\n", what, got, hex);
		failures++;
	}
	pt_sb_reset(sb);
}

/* A length below 2^14, as the wire format writes it (by hand). */
static void add_len(struct pt_sb *sb, size_t n)
{
	if (n < 128) {
		pt_sb_addch(sb, (char)n);
	} else {
		pt_sb_addch(sb, (char)(n | 0x80));
		pt_sb_addch(sb, (char)(n >> 7));
	}
}

int main(void)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t m, m2, i;
	char body[300];

	pt_pb_uint(&sb, 1, 150);
	expect("varint 150", &sb, "08 96 01");
	pt_pb_str(&sb, 2, "testing");
	expect("string", &sb, "12 07 74 65 73 74 69 6e 67");
	m = pt_pb_open(&sb, 3);
	pt_pb_uint(&sb, 1, 150);
	pt_pb_close(&sb, m);
	expect("nested", &sb, "1a 03 08 96 01");
	m = pt_pb_open(&sb, 4);
	pt_pb_close(&sb, m);
	expect("empty message", &sb, "22 00");

	pt_pb_sint(&sb, 1, -1);
	pt_pb_sint(&sb, 1, 1);
	pt_pb_sint(&sb, 1, -2);
	pt_pb_sint(&sb, 1, 2147483647);
	expect("zigzag", &sb, "08 01 08 02 08 03 08 fe ff ff ff 0f");
	pt_pb_int(&sb, 1, -1);
	expect("int64 -1", &sb, "08 ff ff ff ff ff ff ff ff ff 01");
	pt_pb_uint(&sb, 1, UINT64_MAX);
	expect("uint64 max", &sb, "08 ff ff ff ff ff ff ff ff ff 01");
	pt_pb_uint(&sb, 47, 0);
	expect("field 47, two-byte tag", &sb, "f8 02 00");
	pt_pb_fixed64(&sb, 47, 0x0102030405060708ull);
	expect("fixed64", &sb, "f9 02 08 07 06 05 04 03 02 01");
	pt_pb_double(&sb, 1, 1.0);
	expect("double", &sb, "09 00 00 00 00 00 00 f0 3f");
	pt_pb_bytes(&sb, 2, "", 0);
	expect("empty bytes", &sb, "12 00");

	/* Bodies of 127, 128 and 300 bytes, in a message in a message:
	 * the lengths grow to two bytes and the bodies move intact. */
	memset(body, 'x', sizeof body);
	for (i = 0; i < 3; i++) {
		size_t n = i == 0 ? 125 : i == 1 ? 126 : 298;
		struct pt_sb want = PT_SB_INIT;

		m = pt_pb_open(&sb, 1);
		m2 = pt_pb_open(&sb, 2);
		pt_sb_add(&sb, body, n);
		pt_pb_close(&sb, m2);
		pt_pb_uint(&sb, 3, 1);
		pt_pb_close(&sb, m);
		/* inner: 12 LEN body; outer body: inner + 18 01 */
		{
			size_t in = 1 + (n < 128 ? 1 : 2) + n, out = in + 2;

			pt_sb_addch(&want, 0x0a);
			add_len(&want, out);
			pt_sb_addch(&want, 0x12);
			add_len(&want, n);
			pt_sb_add(&want, body, n);
			pt_sb_add(&want, "\x18\x01", 2);
		}
		if (sb.len != want.len || memcmp(sb.buf, want.buf, sb.len) ||
		    sb.buf[sb.len] != '\0') {
			fprintf(stderr, "FAIL: nested bodies of %zu bytes\n", n);
			failures++;
		}
		pt_sb_reset(&sb);
		pt_sb_release(&want);
	}
	if (pt_pb_varint_len(0) != 1 || pt_pb_varint_len(127) != 1 ||
	    pt_pb_varint_len(128) != 2 || pt_pb_varint_len(UINT64_MAX) != 10) {
		fprintf(stderr, "FAIL: varint lengths\n");
		failures++;
	}
	pt_sb_release(&sb);
	if (!failures)
		printf("ok: pbuf\n");
	return failures != 0;
}
