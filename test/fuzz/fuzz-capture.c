/*
 * Fuzz target: reading a capture (or a spool directory) into the model and
 * writing every output from it.  The first input byte chooses how the rest
 * is presented:
 *   bit 0  gzip-compressed (else written as is: the reader takes a plain
 *          file too, which lets the fuzzer reach the record structure)
 *   bit 1  as the one file of a spool directory (else as a capture file)
 *   bit 2  also redact argv ('[0-9]+' and 'a.*b') before the outputs
 * Then pt_model_add_capture, pt_model_finish, and the CSV, JSON and folded
 * writers into /dev/null.
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

#include "views/csv.h"
#include "views/folded.h"
#include "views/json.h"
#include "model/model.h"
#include "model/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

static void setup(void)
{
	fuzz_setup();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_redact *red = NULL;
	struct pt_model m;
	unsigned mode;
	const char *path;

	if (!devnull)
		setup();
	if (!size)
		return 0;
	mode = data[0];
	data++;
	size--;
	path = fuzz_written(mode);
	if (write_input(path, data, size, mode & 1) < 0)
		return 0;
	pt_model_init(&m);
	if (pt_model_add_capture(&m, fuzz_opened(mode)) >= 0) {
		pt_model_finish(&m);
		if (mode & 4) {
			red = pt_redact_new();
			pt_redact_add(red, "[0-9]+");
			pt_redact_add(red, "a.*b");
			pt_redact_model(red, &m);
		}
		pt_csv_write(&m, devnull);
		pt_json_write(&m, devnull);
		pt_folded_write_wall(&m, devnull);
		pt_folded_write_cpu(&m, devnull);
	}
	pt_model_free(&m);
	pt_redact_free(red);
	unlink(path);
	return 0;
}
