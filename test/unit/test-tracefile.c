/*
 * Unit test of the run's budget of trace files (collect/tracefile.c):
 * the files that traced images send themselves (a known tool's, a
 * relay's) count against the same 256 MiB as those the collector takes,
 * and one past it is replaced by a frame that says it was refused, under
 * its own tool and path, so that the views count it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proftrace/wire.h"
#include "capture/frame.h"
#include "collect/tracefile.h"

static int failures;
static unsigned puts_seen;
static char put_from[16], put_path[64], put_note[128];
static uint32_t put_pid;

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); \
		       fputc('\n', stderr); failures++; } while (0)

static void put(void *arg, const void *frame, size_t len)
{
	const unsigned char *p = frame;
	struct pt_frame_header h;
	const char *why, *s;
	size_t pos = 0, n;
	unsigned tag;

	(void)arg;
	puts_seen++;
	if (pt_frame_header_decode(p, &h, &why) < 0 ||
	    h.type != PT_REC_TRACE || PT_FRAME_HDR + h.length != len) {
		FAIL("put a frame that does not decode");
		return;
	}
	put_pid = h.pid;
	while (pt_wire_next_item(p + PT_FRAME_HDR, h.length, &pos, &tag, &s,
				 &n) > 0) {
		if (tag == PT_TAG_TRACE_FROM)
			snprintf(put_from, sizeof put_from, "%s", s);
		else if (tag == PT_TAG_PATH)
			snprintf(put_path, sizeof put_path, "%s", s);
		else if (tag == PT_TAG_TRACE_NOTE)
			snprintf(put_note, sizeof put_note, "%s", s);
		else if (tag == PT_TAG_TRACE_JSON)
			FAIL("the refusal carries the file's JSON");
	}
}

/* A TRACE payload as the library sends it, with json_len bytes of JSON. */
static unsigned char *payload(const char *from, const char *path,
			      size_t json_len, size_t *len)
{
	size_t fl = strlen(from), pl = strlen(path);
	unsigned char *p = malloc(3 + (fl + 1) + (pl + 1) + json_len + 1), *q = p;

	*q++ = PT_TAG_TRACE_FROM;
	memcpy(q, from, fl + 1);
	q += fl + 1;
	*q++ = PT_TAG_PATH;
	memcpy(q, path, pl + 1);
	q += pl + 1;
	*q++ = PT_TAG_TRACE_JSON;
	memset(q, ' ', json_len);
	q[0] = '[';
	q[json_len - 1] = ']';
	q += json_len;
	*q++ = '\0';
	*len = (size_t)(q - p);
	return p;
}

int main(void)
{
	struct pt_tracefiles *t = pt_tracefiles_new(NULL, put, NULL);
	size_t len, i, files = PT_TRACE_RUN_MAX / PT_TRACE_FILE_MAX;
	unsigned char *big = payload("clang", "/b/x.json", PT_TRACE_FILE_MAX,
				     &len);
	unsigned char *one;
	size_t one_len;

	if (!pt_tracefiles_admit(NULL, 1, big, len))
		FAIL("no budget at all refused a file");
	for (i = 0; i < files; i++)
		if (!pt_tracefiles_admit(t, 100 + (uint32_t)i, big, len))
			FAIL("file %zu of %zu refused within the budget", i + 1,
			     files);
	if (puts_seen)
		FAIL("%u frames put within the budget", puts_seen);
	one = payload("dune", "/b/trace.json", 2, &one_len);
	if (pt_tracefiles_admit(t, 7, one, one_len))
		FAIL("a file past the run's budget was admitted");
	if (puts_seen != 1 || put_pid != 7 || strcmp(put_from, "dune") ||
	    strcmp(put_path, "/b/trace.json") ||
	    strncmp(put_note, "refused: the run's", 18))
		FAIL("the refusal: %u frames, pid %u, from [%s] path [%s] "
		     "note [%s]", puts_seen, put_pid, put_from, put_path,
		     put_note);
	free(big);
	free(one);
	pt_tracefiles_free(t);
	if (failures)
		return 1;
	printf("tracefile: ok\n");
	return 0;
}
