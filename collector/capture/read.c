/*
 * Reading captures and spool directories; see capture-read.h.
 *
 * The input goes through one buffer that records are parsed from in
 * place: a capture holds millions of small records, and a read call per
 * field would cost more than the inflating.  Offsets in messages count
 * uncompressed bytes, the only positions a reader of a damaged gzip stream
 * can know.
 *
 * A capture file is inflated by a thread of its own, a ring of chunks
 * ahead of the parsing (struct inflater): for a million executions, zlib
 * and its CRC are a third of what the reading costs, and the loading
 * thread that calls pt_reader_next() is the one a conversion waits for.
 *
 * Version 2 and 3 records are rebuilt into the version 1 form (a whole frame, a
 * full record header), so that everything above the reader sees one
 * format; the rebuilt frame goes through the same checks as a stored one.
 */
#include "capture/read.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/v3.h"
#include "proftrace/wire.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "capture/reader.h"
#define REC_SIZE   40           /* struct pt_cap_record on disk */
#define HEADER_MAX (64u << 10)  /* file header_size a reader accepts */

/* Warn once about damage at the current offset and stop. */
int pt_reader_damaged(struct pt_reader *r, const char *file, const char *unit,
		   const char *why)
{
	const char *what = r->is_dir ? "spool file" : "capture";

	if (!why && r->gz_err != Z_OK && r->gz_err != Z_BUF_ERROR)
		why = r->gz_msg;
	if (why)
		pt_warn("%s: %s is corrupt at byte %llu (after %llu %s): %s; "
			"converting what precedes it", file, what,
			(unsigned long long)r->off, (unsigned long long)r->nrec,
			unit, why);
	else
		pt_warn("%s: %s is truncated at byte %llu (after %llu %s); "
			"converting what precedes it", file, what,
			(unsigned long long)r->off, (unsigned long long)r->nrec,
			unit);
	return -1;
}

/* A stream that ended where it was read up to: clean, or cut short. */
int pt_reader_stream_ended_cleanly(struct pt_reader *r)
{
	return r->gz_err == Z_OK;
}

/*
 * Decode the frame of `len` bytes at p into r->rec (inflating it
 * when needed).  Returns 0, or -1 with *why set.
 */
int pt_reader_decode_frame(struct pt_reader *r, const unsigned char *p,
			size_t len, const char **why)
{
	struct pt_frame_header h;
	const unsigned char *payload;

	if (len < PT_FRAME_HDR) {
		*why = "frame record shorter than a frame header";
		return -1;
	}
	if (pt_frame_header_decode(p, &h, why) < 0)
		return -1;
	if ((size_t)h.length != len - PT_FRAME_HDR) {
		*why = "frame length disagrees with its record";
		return -1;
	}
	payload = p + PT_FRAME_HDR;
	if (h.flags & PT_FRAME_DEFLATED) {
		r->inflated = pt_frame_inflate(&h, payload, why);
		if (!r->inflated)
			return -1;
		payload = r->inflated;
		h.flags &= (uint16_t)~PT_FRAME_DEFLATED;
		h.length = h.raw_length;
	}
	return pt_record_parse(&h, payload, &r->rec, why);
}

static void add_meta(struct pt_reader *r, const unsigned char *p, size_t n)
{
	const unsigned char *end = p + n;
	const char *k, *v;
	size_t kn, vn;

	/* A pair is contiguous: key, NUL, value, NUL. */
	while (pt_cap_meta_next(&p, end, &k, &kn, &v, &vn))
		pt_sb_add(&r->meta, k, kn + 1 + vn + 1);
}

/* ---- capture files ---- */

static int open_capture(struct pt_reader *r)
{
	static const char magic[8] = PT_CAP_FILE_MAGIC;
	size_t have;
	uint32_t version, size;

	pt_reader_fill(r, 16);
	have = r->end - r->pos;
	if (have < 16) {
		/* A capture cut before its first flush still starts with the
		 * magic (or is a gzip stream cut or damaged before its first
		 * byte): it is a damaged capture, not some other file. */
		if ((have && !memcmp(r->buf, magic, have < 8 ? have : 8)) ||
		    (!have && r->gz_err != Z_OK && !pt_gunzip_direct(r->gz))) {
			r->state = RS_DAMAGED;
			pt_reader_damaged(r, r->path, "records", NULL);
			return 0;
		}
		pt_warn("%s: not a proftrace capture", r->path);
		return -1;
	}
	if (memcmp(r->buf, magic, sizeof magic)) {
		pt_warn("%s: not a proftrace capture", r->path);
		return -1;
	}
	version = pt_wire_get32(r->buf + PT_OFF(pt_cap_file_header, version));
	size = pt_wire_get32(r->buf + PT_OFF(pt_cap_file_header, header_size));
	if (version < PT_CAP_VERSION_MIN || version > PT_CAP_VERSION) {
		pt_warn("%s: capture format version %u is not supported "
			"(this proftrace reads %d to %d)", r->path, version,
			PT_CAP_VERSION_MIN, PT_CAP_VERSION);
		return -1;
	}
	r->version = version;
	if (version >= 2)
		r->st = pt_v3_new();
	/* Bounded: a damaged size must not make us buffer gigabytes
	 * before finding that the file is short. */
	if (size < 16 || size > HEADER_MAX) {
		pt_warn("%s: not a proftrace capture (header size %u)",
			r->path, size);
		return -1;
	}
	/* A longer header comes from a newer writer: skip what we do not
	 * know, as the format allows. */
	if (!pt_reader_fill(r, size)) {
		r->state = RS_DAMAGED;
		pt_reader_damaged(r, r->path, "records", NULL);
		return 0;
	}
	pt_reader_consume(r, size);
	return 0;
}

static int next_record(struct pt_reader *r, struct pt_cap_event *ev)
{
	const unsigned char *p;
	const char *why = NULL;
	uint32_t len;

	if (!pt_reader_fill(r, REC_SIZE)) {
		if (r->end == r->pos && pt_reader_stream_ended_cleanly(r))
			return 0;
		return pt_reader_damaged(r, r->path, "records", NULL);
	}
	p = r->buf + r->pos;
	memset(ev, 0, sizeof *ev);
#define GET(n, field) \
	ev->hdr.field = pt_wire_get##n(p + PT_OFF(pt_cap_record, field))
	GET(32, magic);
	GET(16, kind);
	GET(16, reserved);
	GET(32, length);
	GET(32, peer_pid);
	GET(32, peer_uid);
	GET(32, reserved2);
	GET(64, conn_id);
	GET(64, recv_ns);
#undef GET
	if (ev->hdr.magic != PT_CAP_RECORD_MAGIC)
		return pt_reader_damaged(r, r->path, "records", "bad record magic");
	len = ev->hdr.length;
	if (len > PT_CAP_RECORD_MAX)
		return pt_reader_damaged(r, r->path, "records", "record length over limit");
	if (!pt_reader_fill(r, REC_SIZE + (size_t)len))
		return pt_reader_damaged(r, r->path, "records", NULL);
	pt_reader_consume(r, REC_SIZE);
	ev->data = r->buf + r->pos;
	if (ev->hdr.kind == PT_CAP_FRAME) {
		if (pt_reader_decode_frame(r, ev->data, len, &why) < 0) {
			r->pos -= REC_SIZE;
			r->off -= REC_SIZE;
			return pt_reader_damaged(r, r->path, "records", why);
		}
		ev->rec = r->rec;
	} else if (ev->hdr.kind == PT_CAP_META) {
		add_meta(r, ev->data, len);
	}
	pt_reader_consume(r, len);
	r->nrec++;
	return 1;
}

/* A record of a version 2 or 3 capture (the codec is capture/v3.c). */
static int next_v3(struct pt_reader *r, struct pt_cap_event *ev)
{
	struct pt_v3_state *st = r->st;
	const unsigned char *p;
	const char *why = NULL;
	const unsigned char *body;
	uint64_t len;
	size_t hn;
	unsigned head, kind;

	if (!pt_reader_fill(r, 1)) {
		if (r->end == r->pos && pt_reader_stream_ended_cleanly(r))
			return 0;
		return pt_reader_damaged(r, r->path, "records", NULL);
	}
	pt_reader_fill(r, 11);  /* head and length, unless at the end */
	p = r->buf + r->pos;
	head = p[0];
	hn = pt_uv_get(p + 1, r->buf + r->end, &len);
	if (!hn)
		return pt_reader_damaged(r, r->path, "records",
					 r->end - r->pos >= 11 ?
					 "bad record length" : NULL);
	if (len > PT_V3_BODY_MAX)
		return pt_reader_damaged(r, r->path, "records",
					 "record length over limit");
	if (!pt_reader_fill(r, 1 + hn + (size_t)len))
		return pt_reader_damaged(r, r->path, "records", NULL);
	body = r->buf + r->pos + 1 + hn;
	memset(ev, 0, sizeof *ev);
	if (pt_v3_decode(st, r->version, head, body, body + len, &ev->hdr,
			 &ev->data, &r->frame, &why) < 0)
		return pt_reader_damaged(r, r->path, "records", why);
	kind = ev->hdr.kind;
	if (kind == PT_CAP_FRAME) {
		if (pt_reader_decode_frame(r, ev->data, ev->hdr.length,
					   &why) < 0)
			return pt_reader_damaged(r, r->path, "records", why);
		ev->rec = r->rec;
		if (!(head & PT_V3_RAW))
			pt_v3_note_frame(st, ev->data, ev->hdr.length);
	} else if (kind == PT_CAP_META) {
		add_meta(r, ev->data, ev->hdr.length);
	}
	pt_reader_consume(r, 1 + hn + (size_t)len);
	r->nrec++;
	return 1;
}

/* ---- the API ---- */

struct pt_reader *pt_reader_open(const char *path)
{
	struct pt_reader *r;
	struct stat st;
	int fd;

	if (stat(path, &st) < 0) {
		pt_warn("%s: %s", path, strerror(errno));
		return NULL;
	}
	r = pt_xcalloc(1, sizeof *r);
	r->path = pt_xstrdup(path);
	r->gz_err = Z_OK;
	pt_sb_init(&r->meta);
	pt_sb_init(&r->file_path);
	pt_sb_init(&r->frame);
	if (S_ISDIR(st.st_mode)) {
		if (pt_reader_open_spool(r) < 0)
			goto fail;
		return r;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	r->gz = fd < 0 ? NULL : pt_gunzip_open(fd);
	if (!r->gz) {
		pt_warn("%s: %s", path, fd < 0 ? strerror(errno)
						 : "out of memory");
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	pt_reader_inflater_start(r);
	if (open_capture(r) < 0)
		goto fail;
	return r;
fail:
	pt_reader_close(r);
	return NULL;
}

int pt_reader_next(struct pt_reader *r, struct pt_cap_event *ev)
{
	int rc;

	if (r->state == RS_END)
		return 0;
	if (r->state == RS_DAMAGED)
		return -1;
	if (r->is_dir) {
		rc = pt_reader_next_spool(r, ev);
	} else {
		pt_reader_release_event(r);
		rc = r->version >= 2 ? next_v3(r, ev)
				     : next_record(r, ev);
	}
	if (rc <= 0)
		r->state = rc < 0 ? RS_DAMAGED : RS_END;
	return rc;
}

const char *pt_reader_meta(struct pt_reader *r, const char *key)
{
	const char *p = r->meta.buf, *end = r->meta.buf + r->meta.len;
	const char *found = NULL;

	/* The last value wins: a later META may correct an earlier one. */
	while (p < end) {
		const char *v = p + strlen(p) + 1;

		if (!strcmp(p, key))
			found = v;
		p = v + strlen(v) + 1;
	}
	return found;
}

const char *pt_reader_meta_pairs(struct pt_reader *r, size_t *len)
{
	*len = r->meta.len;
	return r->meta.buf;
}

void pt_reader_close(struct pt_reader *r)
{
	size_t i;

	if (!r)
		return;
	pt_reader_release_event(r);
	pt_reader_inflater_stop(r);
	pt_gunzip_close(r->gz);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	free(r->buf);
	free(r->path);
	pt_sb_release(&r->meta);
	pt_sb_release(&r->file_path);
	pt_sb_release(&r->frame);
	pt_v3_free(r->st);
	free(r);
}
