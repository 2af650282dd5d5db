/*
 * Fuzz target: the capture reader alone (collector/capture/read.h), on a
 * capture file or a spool directory, every event read to its end.  The
 * first input byte chooses the presentation, as in fuzz-capture.c:
 *   bit 0  gzip-compressed (else written as is)
 *   bit 1  as the one file of a spool directory
 * fuzz-capture.c adds the model and the outputs on top; this one is much
 * faster, so it goes much further into the reader.
 *
 * Built for libFuzzer (meson -Dfuzz=true, clang) or with replay.c.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz-input.h"

#include "capture/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_cap_event ev;
	struct pt_reader *r;
	const char *path;
	unsigned mode;
	size_t i;

	fuzz_setup();
	if (!size)
		return 0;
	mode = data[0];
	path = fuzz_written(mode);
	if (write_input(path, data + 1, size - 1, mode & 1) < 0)
		return 0;
	r = pt_reader_open(fuzz_opened(mode));
	if (r) {
		while (pt_reader_next(r, &ev) > 0) {
			if (ev.hdr.length)
				sink += ev.data[ev.hdr.length - 1];
			if (ev.hdr.kind != 3)   /* PT_CAP_FRAME */
				continue;
			touch(ev.rec.exe);
			touch(ev.rec.cwd);
			touch(ev.rec.path);
			for (i = 0; i < ev.rec.argc; i++)
				touch(ev.rec.argv[i]);
			for (i = 0; i < ev.rec.envc; i++)
				touch(ev.rec.env[i]);
		}
		touch(pt_reader_meta(r, "host"));
		touch(pt_reader_meta(r, "command"));
		pt_reader_close(r);
	}
	unlink(path);
	return 0;
}
