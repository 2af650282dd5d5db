/*
 * Fuzz target: the collector's frame decoder (collector/capture/frame.h), fed one
 * connection's bytes the way server.c feeds it: each header checked, each
 * payload (copied to a buffer of its exact size, so that ASan sees any
 * read past it) inflated when deflated, then parsed; the parsed strings
 * are read to the end.  The collector's non-allocating check
 * (pt_record_check) must accept and reject exactly what the parse does.  Stops at the first malformed frame, as the
 * collector drops the connection there.
 *
 * Built for libFuzzer (meson -Dfuzz=true, clang) or with replay.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, i;

	while (size - off >= sizeof(struct pt_frame_header)) {
		struct pt_frame_header h;
		struct pt_record rec;
		const char *why = NULL;
		unsigned char *copy, *inflated = NULL;
		const unsigned char *payload;
		int rc;

		if (pt_frame_header_decode(data + off, &h, &why) < 0)
			break;
		if (size - off - sizeof h < h.length)
			break;
		copy = malloc(h.length ? h.length : 1);
		if (!copy)
			break;
		memcpy(copy, data + off + sizeof h, h.length);
		payload = copy;
		if (h.flags & PT_FRAME_DEFLATED) {
			inflated = pt_frame_inflate(&h, copy, &why);
			if (!inflated) {
				free(copy);
				break;
			}
			payload = inflated;
		}
		rc = pt_record_parse(&h, payload, &rec, &why);
		{
			/* The collector's check must agree with the parse. */
			struct pt_record chk;
			const char *why2 = NULL;

			if (pt_record_check(&h, payload, &chk, &why2) != rc ||
			    (rc == 0 && memcmp(&chk.u, &rec.u, sizeof chk.u)))
				abort();
		}
		if (rc == 0) {
			touch(rec.exe);
			touch(rec.cwd);
			touch(rec.path);
			for (i = 0; i < rec.argc; i++)
				touch(rec.argv[i]);
			for (i = 0; i < rec.envc; i++)
				touch(rec.env[i]);
			pt_record_free(&rec);
		}
		free(inflated);
		free(copy);
		if (rc < 0)
			break;
		off += sizeof h + h.length;
	}
	return 0;
}
