/*
 * Inflating a capture ahead of its parser: a thread of the reader's own
 * inflates the file into a ring of chunks, so that inflating and parsing share
 * the two CPUs; the parser takes whole chunks and asks for more bytes
 * only at a chunk's end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/reader.h"
#include "base/strbuf.h"
#include "base/util.h"

/* Drop what the previous event pointed into. */
void pt_reader_release_event(struct pt_reader *r)
{
	pt_record_free(&r->rec);
	free(r->inflated);
	r->inflated = NULL;
}

static void *inflater_main(void *arg)
{
	struct pt_reader *r = arg;
	struct inflater *in = r->inf;
	size_t n;

	pt_worker_lock(&in->w);
	for (;;) {
		size_t slot;

		while (in->count == RING && !in->w.quit)
			pt_worker_wait(&in->w);
		if (in->w.quit)
			break;
		slot = (in->head + in->count) % RING;
		pt_worker_unlock(&in->w);
		n = pt_gunzip_read(r->gz, in->chunk[slot], READ_CHUNK);
		pt_worker_lock(&in->w);
		if (n > 0) {
			in->len[slot] = n;
			in->count++;
		} else {
			in->gz_err = pt_gunzip_error(r->gz, &in->gz_msg);
			in->done = 1;
		}
		pt_worker_wake(&in->w);
		if (in->done)
			break;
	}
	pt_worker_unlock(&in->w);
	return NULL;
}

/* Start inflating r->gz ahead in a thread.  Without one, fill() reads. */
void pt_reader_inflater_start(struct pt_reader *r)
{
	struct inflater *in = pt_xcalloc(1, sizeof *in);
	size_t i;

	for (i = 0; i < RING; i++)
		in->chunk[i] = pt_xmalloc(READ_CHUNK);
	r->inf = in;
	if (pt_worker_start(&in->w, inflater_main, r) == 0)
		return;
	r->inf = NULL;
	for (i = 0; i < RING; i++)
		free(in->chunk[i]);
	free(in);
}

void pt_reader_inflater_stop(struct pt_reader *r)
{
	struct inflater *in = r->inf;
	size_t i;

	if (!in)
		return;
	pt_worker_stop(&in->w);
	for (i = 0; i < RING; i++)
		free(in->chunk[i]);
	free(in);
	r->inf = NULL;
}

/*
 * Append the next inflated chunk to buf, which has room for READ_CHUNK
 * bytes; or, once there is none, set at_eof and what the stream ended
 * with.
 */
static void take_chunk(struct pt_reader *r)
{
	struct inflater *in = r->inf;
	size_t n;

	pt_worker_lock(&in->w);
	while (!in->count && !in->done)
		pt_worker_wait(&in->w);
	if (!in->count) {
		r->at_eof = 1;
		r->gz_err = in->gz_err;
		r->gz_msg = in->gz_msg;
		pt_worker_unlock(&in->w);
		return;
	}
	pt_worker_unlock(&in->w);
	/* The slot is ours until count drops: the thread fills others. */
	n = in->len[in->head];
	memcpy(r->buf + r->end, in->chunk[in->head], n);
	r->end += n;
	pt_worker_lock(&in->w);
	in->head = (in->head + 1) % RING;
	in->count--;
	pt_worker_wake(&in->w);
	pt_worker_unlock(&in->w);
}

/*
 * Make `need` bytes available at buf[pos].  Returns 1, or 0 if the stream
 * ends first (r->gz_err says whether it ended cleanly).
 */
int pt_reader_fill(struct pt_reader *r, size_t need)
{
	if (r->end - r->pos >= need)
		return 1;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->end -= r->pos;
		r->pos = 0;
	}
	if (r->cap < need + READ_CHUNK) {
		r->cap = need + READ_CHUNK > 2 * r->cap ? need + READ_CHUNK
							 : 2 * r->cap;
		r->buf = pt_xrealloc(r->buf, r->cap);
	}
	while (r->end < need && !r->at_eof) {
		size_t want = r->cap - r->end, n;

		if (r->inf) {
			take_chunk(r);
			continue;
		}
		if (want > READ_CHUNK)
			want = READ_CHUNK;
		n = pt_gunzip_read(r->gz, r->buf + r->end, want);
		if (n > 0) {
			r->end += n;
			continue;
		}
		r->at_eof = 1;
		r->gz_err = pt_gunzip_error(r->gz, &r->gz_msg);
	}
	return r->end - r->pos >= need;
}

void pt_reader_consume(struct pt_reader *r, size_t n)
{
	r->pos += n;
	r->off += n;
}
