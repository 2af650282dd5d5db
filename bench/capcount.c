/*
 * capcount CAPTURE...: count what captures hold, to check that a benchmark
 * lost nothing.  Reads each capture with the collector's own reader
 * (collector/capture/read.h), so a damaged capture is reported as such.
 *
 * Prints one line of KEY VALUE pairs (bench/run.py parses it):
 *   records connects frames eofs drops lost  capture records by kind
 *   (lost: the sum of the LOSS records), hello images (HELLO of kind
 *   IMAGE), then one count per frame type (hello exec exec_failed spawn
 *   fork reap exit other), frame_bytes (frames, header included),
 *   empty_conns (connections that ended without a single frame: a peer
 *   that connected and then said nothing, e.g. a send that timed out) and
 *   damaged (1 if some capture did not read to its clean end).
 * Exit status: 0, or 1 if a capture could not be read or was damaged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/read.h"

int main(int argc, char **argv)
{
	static const char *const type_names[PT_REC_TYPE_MAX] = {
		[PT_REC_HELLO] = "hello", [PT_REC_EXEC] = "exec",
		[PT_REC_EXEC_FAILED] = "exec_failed", [PT_REC_SPAWN] = "spawn",
		[PT_REC_FORK] = "fork", [PT_REC_REAP] = "reap",
		[PT_REC_EXIT] = "exit",
	};
	uint64_t records = 0, connects = 0, frames = 0, eofs = 0, drops = 0;
	uint64_t lost = 0, images = 0, other = 0, frame_bytes = 0;
	uint64_t by_type[PT_REC_TYPE_MAX] = { 0 };
	uint64_t empty_conns = 0;
	unsigned char *seen = NULL;     /* per conn_id: 1 connected, 2 had a frame */
	size_t nseen = 0;
	int damaged = 0, i, t;

	if (argc < 2) {
		fprintf(stderr, "usage: capcount CAPTURE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		struct pt_reader *r = pt_reader_open(argv[i]);
		struct pt_cap_event ev;
		int rc;

		if (!r)
			return 1;
		memset(seen, 0, nseen);
		while ((rc = pt_reader_next(r, &ev)) == 1) {
			uint64_t id = ev.hdr.conn_id;

			records++;
			if (id && id < (1ull << 32) && id >= nseen) {
				size_t n = nseen ? nseen : 1024;

				while (n <= id)
					n *= 2;
				seen = realloc(seen, n);
				if (!seen) {
					perror("capcount");
					return 1;
				}
				memset(seen + nseen, 0, n - nseen);
				nseen = n;
			}
			if (id < nseen) {
				if (ev.hdr.kind == PT_CAP_FRAME)
					seen[id] = 2;
				else if (ev.hdr.kind == PT_CAP_EOF && seen[id] != 2)
					empty_conns++;
			}
			switch (ev.hdr.kind) {
			case PT_CAP_CONNECT:
				connects++;
				break;
			case PT_CAP_EOF:
				eofs++;
				break;
			case PT_CAP_DROP:
				drops++;
				break;
			case PT_CAP_LOSS:
				if (ev.hdr.length == 8) {
					uint64_t v = 0;

					for (t = 7; t >= 0; t--)
						v = v << 8 | ev.data[t];
					lost += v;
				}
				break;
			case PT_CAP_FRAME:
				frames++;
				frame_bytes += ev.hdr.length;
				t = ev.rec.hdr.type;
				if (t > 0 && t < PT_REC_TYPE_MAX &&
				    type_names[t])
					by_type[t]++;
				else
					other++;
				if (t == PT_REC_HELLO &&
				    ev.rec.u.hello.kind == PT_HELLO_IMAGE)
					images++;
				break;
			}
		}
		if (rc < 0)
			damaged = 1;
		pt_reader_close(r);
	}
	printf("records %llu connects %llu frames %llu eofs %llu drops %llu "
	       "lost %llu images %llu", (unsigned long long)records,
	       (unsigned long long)connects, (unsigned long long)frames,
	       (unsigned long long)eofs, (unsigned long long)drops,
	       (unsigned long long)lost, (unsigned long long)images);
	for (t = 1; t < PT_REC_TYPE_MAX; t++)
		if (type_names[t])
			printf(" %s %llu", type_names[t],
			       (unsigned long long)by_type[t]);
	printf(" other %llu frame_bytes %llu empty_conns %llu damaged %d\n",
	       (unsigned long long)other, (unsigned long long)frame_bytes,
	       (unsigned long long)empty_conns, damaged);
	free(seen);
	return damaged;
}
