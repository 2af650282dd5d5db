/*
 * Reading captures and spool directories; see capture-read.h.
 *
 * The input goes through one buffer that records are parsed from in
 * place: a capture holds millions of small records, and a gzread() per
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
#include "capture/le.h"
#include "base/strbuf.h"
#include "base/util.h"

#define READ_CHUNK (64u << 10)  /* small: a corrupt gzip block loses it all */
#define RING       32           /* chunks inflated ahead of the parsing */
#define REC_SIZE   40           /* struct pt_cap_record on disk */
#define FRAME_HDR  32           /* struct pt_frame_header on the wire */
#define HEADER_MAX (64u << 10)  /* file header_size a reader accepts */

enum rstate {
	RS_RUN,                 /* reading */
	RS_END,                 /* clean end reached */
	RS_DAMAGED,             /* a warning was printed; nothing more */
};

enum spool_state {
	SP_NEXT_FILE,           /* open the next file */
	SP_CONNECT,             /* first frame read, CONNECT to deliver */
	SP_FIRST,               /* deliver the frame read for CONNECT */
	SP_FRAMES,              /* read and deliver frames */
};

/*
 * The thread that calls gzread(): each chunk is what one call returned.
 * After the last one it sets done, with what gzerror() said; the reader
 * touches the gzFile again only after it saw done (or stopped the thread).
 */
struct inflater {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned char *chunk[RING];
	size_t len[RING];
	size_t head, count;     /* the reader takes chunk[head]; count full */
	int done;
	int gz_err;
	const char *gz_msg;
	int quit;
};

struct pt_reader {
	char *path;
	gzFile gz;
	struct inflater *inf;   /* NULL: gzread() in fill() */
	unsigned char *buf;
	size_t cap, pos, end;
	uint64_t off;           /* stream offset of buf[pos] */
	int at_eof;             /* gzread has nothing more */
	int gz_err;             /* zlib error seen at the end, or Z_OK */
	const char *gz_msg;
	uint64_t nrec;          /* records (frames, in a spool) delivered */
	enum rstate state;
	unsigned char *inflated;
	struct pt_record rec;   /* the last parsed frame, to free */
	struct pt_sb meta;      /* "key\0value\0" of every META record */
	uint32_t version;       /* of the capture file */
	struct pt_cap2_state *st;       /* version 2, 3: what the writer knew */
	struct pt_sb frame;     /* version 2, 3: the frame rebuilt */

	/* Spool directory mode. */
	int is_dir;
	char **files;
	size_t nfiles, fi;
	enum spool_state sp;
	int sp_damaged;         /* some file was damaged: end with -1 */
	uint32_t sp_pid, sp_uid;
	uint64_t sp_last_ns;
	struct pt_sb file_path;
	struct pt_frame_header sp_hdr;
	size_t sp_len;          /* bytes of the current frame at buf[pos] */
};

/* Drop what the previous event pointed into. */
static void release_event(struct pt_reader *r)
{
	pt_record_free(&r->rec);
	free(r->inflated);
	r->inflated = NULL;
}

static void *inflater_main(void *arg)
{
	struct pt_reader *r = arg;
	struct inflater *in = r->inf;
	int n, err;

	pthread_mutex_lock(&in->lock);
	for (;;) {
		size_t slot;

		while (in->count == RING && !in->quit)
			pthread_cond_wait(&in->cond, &in->lock);
		if (in->quit)
			break;
		slot = (in->head + in->count) % RING;
		pthread_mutex_unlock(&in->lock);
		n = gzread(r->gz, in->chunk[slot], READ_CHUNK);
		pthread_mutex_lock(&in->lock);
		if (n > 0) {
			in->len[slot] = (size_t)n;
			in->count++;
		} else {
			in->gz_msg = gzerror(r->gz, &err);
			in->gz_err = err;
			if (err == Z_ERRNO)
				in->gz_msg = strerror(errno);
			in->done = 1;
		}
		pthread_cond_broadcast(&in->cond);
		if (in->done)
			break;
	}
	pthread_mutex_unlock(&in->lock);
	return NULL;
}

/* Start inflating r->gz ahead in a thread.  Without one, fill() reads. */
static void inflater_start(struct pt_reader *r)
{
	struct inflater *in = pt_xcalloc(1, sizeof *in);
	size_t i;

	for (i = 0; i < RING; i++)
		in->chunk[i] = pt_xmalloc(READ_CHUNK);
	pthread_mutex_init(&in->lock, NULL);
	pthread_cond_init(&in->cond, NULL);
	r->inf = in;
	if (pthread_create(&in->thread, NULL, inflater_main, r) == 0)
		return;
	r->inf = NULL;
	pthread_mutex_destroy(&in->lock);
	pthread_cond_destroy(&in->cond);
	for (i = 0; i < RING; i++)
		free(in->chunk[i]);
	free(in);
}

static void inflater_stop(struct pt_reader *r)
{
	struct inflater *in = r->inf;
	size_t i;

	if (!in)
		return;
	pthread_mutex_lock(&in->lock);
	in->quit = 1;
	pthread_cond_broadcast(&in->cond);
	pthread_mutex_unlock(&in->lock);
	pthread_join(in->thread, NULL);
	pthread_mutex_destroy(&in->lock);
	pthread_cond_destroy(&in->cond);
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

	pthread_mutex_lock(&in->lock);
	while (!in->count && !in->done)
		pthread_cond_wait(&in->cond, &in->lock);
	if (!in->count) {
		r->at_eof = 1;
		r->gz_err = in->gz_err;
		r->gz_msg = in->gz_msg;
		pthread_mutex_unlock(&in->lock);
		return;
	}
	pthread_mutex_unlock(&in->lock);
	/* The slot is ours until count drops: the thread fills others. */
	n = in->len[in->head];
	memcpy(r->buf + r->end, in->chunk[in->head], n);
	r->end += n;
	pthread_mutex_lock(&in->lock);
	in->head = (in->head + 1) % RING;
	in->count--;
	pthread_cond_broadcast(&in->cond);
	pthread_mutex_unlock(&in->lock);
}

/*
 * Make `need` bytes available at buf[pos].  Returns 1, or 0 if the stream
 * ends first (r->gz_err says whether it ended cleanly).
 */
static int fill(struct pt_reader *r, size_t need)
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
		size_t want = r->cap - r->end;
		int n, err;

		if (r->inf) {
			take_chunk(r);
			continue;
		}
		if (want > READ_CHUNK)
			want = READ_CHUNK;
		n = gzread(r->gz, r->buf + r->end, (unsigned)want);
		if (n > 0) {
			r->end += (size_t)n;
			continue;
		}
		r->at_eof = 1;
		r->gz_msg = gzerror(r->gz, &err);
		r->gz_err = err;
		if (err == Z_ERRNO)
			r->gz_msg = strerror(errno);
	}
	return r->end - r->pos >= need;
}

static void consume(struct pt_reader *r, size_t n)
{
	r->pos += n;
	r->off += n;
}

/* Warn once about damage at the current offset and stop. */
static int damaged(struct pt_reader *r, const char *file, const char *unit,
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
static int stream_ended_cleanly(struct pt_reader *r)
{
	return r->gz_err == Z_OK;
}

/*
 * Decode the frame of `len` bytes at p into r->rec (inflating it
 * when needed).  Returns 0, or -1 with *why set.
 */
static int decode_frame(struct pt_reader *r, const unsigned char *p,
			size_t len, const char **why)
{
	struct pt_frame_header h;
	const unsigned char *payload;

	if (len < FRAME_HDR) {
		*why = "frame record shorter than a frame header";
		return -1;
	}
	if (pt_frame_header_decode(p, &h, why) < 0)
		return -1;
	if ((size_t)h.length != len - FRAME_HDR) {
		*why = "frame length disagrees with its record";
		return -1;
	}
	payload = p + FRAME_HDR;
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
	const unsigned char *end = p + n, *k, *v;

	/* Whole pairs only: a dangling key or unterminated value is not
	 * trusted. */
	for (k = p; k < end;) {
		const unsigned char *kz = memchr(k, 0, (size_t)(end - k)), *vz;

		if (!kz)
			return;
		v = kz + 1;
		vz = v < end ? memchr(v, 0, (size_t)(end - v)) : NULL;
		if (!vz)
			return;
		pt_sb_add(&r->meta, k, (size_t)(vz - k) + 1);
		k = vz + 1;
	}
}

/* ---- capture files ---- */

static int open_capture(struct pt_reader *r)
{
	static const char magic[8] = PT_CAP_FILE_MAGIC;
	size_t have;
	uint32_t version, size;

	fill(r, 16);
	have = r->end - r->pos;
	if (have < 16) {
		/* A capture cut before its first flush still starts with the
		 * magic (or is an empty gzip stream): it is a damaged capture,
		 * not some other file. */
		if ((have && !memcmp(r->buf, magic, have < 8 ? have : 8)) ||
		    (!have && r->gz_err == Z_BUF_ERROR && !gzdirect(r->gz))) {
			r->state = RS_DAMAGED;
			damaged(r, r->path, "records", NULL);
			return 0;
		}
		pt_warn("%s: not a proftrace capture", r->path);
		return -1;
	}
	if (memcmp(r->buf, magic, sizeof magic)) {
		pt_warn("%s: not a proftrace capture", r->path);
		return -1;
	}
	version = pt_get32(r->buf + 8);
	size = pt_get32(r->buf + 12);
	if (version < PT_CAP_VERSION_MIN || version > PT_CAP_VERSION) {
		pt_warn("%s: capture format version %u is not supported "
			"(this proftrace reads %d to %d)", r->path, version,
			PT_CAP_VERSION_MIN, PT_CAP_VERSION);
		return -1;
	}
	r->version = version;
	if (version >= 2)
		r->st = pt_cap2_new();
	/* Bounded: a damaged size must not make us buffer gigabytes
	 * before finding that the file is short. */
	if (size < 16 || size > HEADER_MAX) {
		pt_warn("%s: not a proftrace capture (header size %u)",
			r->path, size);
		return -1;
	}
	/* A longer header comes from a newer writer: skip what we do not
	 * know, as the format allows. */
	if (!fill(r, size)) {
		r->state = RS_DAMAGED;
		damaged(r, r->path, "records", NULL);
		return 0;
	}
	consume(r, size);
	return 0;
}

static int next_record(struct pt_reader *r, struct pt_cap_event *ev)
{
	const unsigned char *p;
	const char *why = NULL;
	uint32_t len;

	if (!fill(r, REC_SIZE)) {
		if (r->end == r->pos && stream_ended_cleanly(r))
			return 0;
		return damaged(r, r->path, "records", NULL);
	}
	p = r->buf + r->pos;
	memset(ev, 0, sizeof *ev);
	ev->hdr.magic = pt_get32(p);
	ev->hdr.kind = pt_get16(p + 4);
	ev->hdr.reserved = pt_get16(p + 6);
	ev->hdr.length = pt_get32(p + 8);
	ev->hdr.peer_pid = pt_get32(p + 12);
	ev->hdr.peer_uid = pt_get32(p + 16);
	ev->hdr.reserved2 = pt_get32(p + 20);
	ev->hdr.conn_id = pt_get64(p + 24);
	ev->hdr.recv_ns = pt_get64(p + 32);
	if (ev->hdr.magic != PT_CAP_RECORD_MAGIC)
		return damaged(r, r->path, "records", "bad record magic");
	len = ev->hdr.length;
	if (len > PT_CAP_RECORD_MAX)
		return damaged(r, r->path, "records", "record length over limit");
	if (!fill(r, REC_SIZE + (size_t)len))
		return damaged(r, r->path, "records", NULL);
	consume(r, REC_SIZE);
	ev->data = r->buf + r->pos;
	if (ev->hdr.kind == PT_CAP_FRAME) {
		if (decode_frame(r, ev->data, len, &why) < 0) {
			r->pos -= REC_SIZE;
			r->off -= REC_SIZE;
			return damaged(r, r->path, "records", why);
		}
		ev->rec = r->rec;
	} else if (ev->hdr.kind == PT_CAP_META) {
		add_meta(r, ev->data, len);
	}
	consume(r, len);
	r->nrec++;
	return 1;
}

/* ---- version 2 and 3 records ---- */

/* A cursor over one record's body; any overrun sets bad. */
struct cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v = 0;
	size_t n = c->bad ? 0 : pt_uv_get(c->p, c->end, &v);

	if (!n)
		c->bad = 1;
	c->p += n;
	return v;
}

static uint32_t cur_u32(struct cur *c)
{
	uint64_t v = cur_u64(c);

	if (v > UINT32_MAX)
		c->bad = 1;
	return (uint32_t)v;
}

static uint32_t cur_z32(struct cur *c)
{
	return pt_unzz32(cur_u32(c));
}

static uint64_t cur_z64(struct cur *c)
{
	return pt_unzz64(cur_u64(c));
}

/* The fixed part of a compact frame, back to its little-endian bytes. */
static void get_fixed(struct pt_cap2_state *st, struct cur *c, unsigned type,
		      unsigned char *o, uint32_t pid, uint64_t time,
		      uint32_t peer_uid)
{
	uint64_t off;

	switch (type) {
	case PT_REC_HELLO:
		pt_set32(o, pid + cur_z32(c));
		pt_set32(o + 4, peer_uid + cur_z32(c));
		pt_set32(o + 8, cur_u32(c));
		pt_set32(o + 12, cur_u32(c));
		off = st->clock_off + cur_z64(c);
		st->clock_off = off;
		pt_set64(o + 16, time + off);
		pt_set64(o + 24, time - cur_z64(c));
		break;
	case PT_REC_EXEC_FAILED:
		pt_set32(o, cur_u32(c));
		pt_set32(o + 4, cur_u32(c));
		break;
	case PT_REC_EXEC:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		pt_set32(o, pid + cur_z32(c));
		pt_set32(o + 4, cur_u32(c));
		break;
	case PT_REC_REAP:
		pt_set32(o, pid + cur_z32(c));
		pt_set32(o + 4, cur_z32(c));
		pt_set32(o + 8, cur_u32(c));
		pt_set32(o + 12, cur_u32(c));
		pt_set64(o + 16, cur_u64(c));
		pt_set64(o + 24, cur_u64(c));
		pt_set64(o + 32, cur_u64(c));
		break;
	case PT_REC_EXIT:
		pt_set32(o, cur_z32(c));
		pt_set32(o + 4, cur_u32(c));
		pt_set64(o + 8, cur_u64(c));
		pt_set64(o + 16, cur_u64(c));
		pt_set64(o + 24, cur_u64(c));
		break;
	}
}

/*
 * Append a tail that holds references to r->frame, expanded.  Returns 0,
 * or -1 with *why set.
 */
static int expand_tail(struct pt_reader *r, struct cur *c, uint32_t pid,
		       const char **why)
{
	const struct pt_cap2_ref *ref = pt_cap2_ref(r->st, pid);
	struct pt_sb *f = &r->frame;

	while (c->p < c->end) {
		unsigned t = *c->p;
		const unsigned char *nul;

		if (f->len > FRAME_HDR + PT_FRAME_MAX) {
			*why = "frame length over limit";
			return -1;
		}
		if (t < 0x80) {
			nul = c->p + 1 < c->end ?
			      memchr(c->p + 1, 0, (size_t)(c->end - c->p - 1)) :
			      NULL;
			if (!nul) {
				*why = "unterminated string in record tail";
				return -1;
			}
			pt_sb_add(f, c->p, (size_t)(nul + 1 - c->p));
			c->p = nul + 1;
			continue;
		}
		c->p++;
		if (!ref || t > PT_CAP2_REF_EXE ||
		    (t == PT_CAP2_REF_CWD && !ref->has_cwd) ||
		    (t == PT_CAP2_REF_EXE && !ref->has_path)) {
			*why = "reference to nothing in a frame's tail";
			return -1;
		}
		if (t == PT_CAP2_REF_ARGS) {
			pt_sb_add(f, ref->buf, ref->args_len);
			continue;
		}
		pt_sb_addch(f, t == PT_CAP2_REF_CWD ? PT_TAG_CWD : PT_TAG_EXE);
		if (t == PT_CAP2_REF_CWD)
			pt_sb_add(f, ref->buf + ref->args_len, ref->cwd_len);
		else
			pt_sb_add(f, ref->buf + ref->args_len + ref->cwd_len,
				  ref->path_len);
		pt_sb_addch(f, '\0');
	}
	return 0;
}

/*
 * Rebuild the compact frame in the rest of the body into r->frame.
 * Returns 0, or -1 with *why set.
 */
static int rebuild_frame(struct pt_reader *r, struct cur *c, unsigned head,
			 uint32_t peer_pid, uint32_t peer_uid, const char **why)
{
	struct pt_cap2_state *st = r->st;
	struct pt_sb *f = &r->frame;
	unsigned char h[FRAME_HDR + 64];
	uint32_t pid, origin;
	uint64_t time, ov;
	size_t fixed;
	unsigned type;

	if (c->p >= c->end) {
		*why = "frame record without a frame";
		return -1;
	}
	type = *c->p++;
	pid = peer_pid + cur_z32(c);
	ov = cur_u64(c);                /* 0, or 1 + the difference */
	if (ov > 1ull << 32)
		c->bad = 1;
	origin = ov ? pid + pt_unzz32(ov - 1) : 0;
	time = st->time_ns + cur_z64(c);
	st->time_ns = time;
	fixed = pt_record_fixed_size(type);
	memset(h, 0, sizeof h);
	get_fixed(st, c, type, h + FRAME_HDR, pid, time, peer_uid);
	if (c->bad) {
		*why = "malformed frame record";
		return -1;
	}
	pt_set32(h, PT_WIRE_MAGIC);
	h[4] = PT_CAP2_WIRE_VERSION;
	h[5] = (unsigned char)type;
	pt_set32(h + 8, pid);
	pt_set32(h + 20, origin);
	pt_set64(h + 24, time);
	pt_sb_reset(f);
	pt_sb_add(f, h, FRAME_HDR + fixed);
	if (head & PT_CAP2_REFS) {
		if (expand_tail(r, c, pid, why) < 0)
			return -1;
	} else {
		pt_sb_add(f, c->p, (size_t)(c->end - c->p));
	}
	if (f->len > FRAME_HDR + PT_FRAME_MAX) {
		*why = "frame length over limit";
		return -1;
	}
	pt_set32((unsigned char *)f->buf + 12, (uint32_t)(f->len - FRAME_HDR));
	pt_set32((unsigned char *)f->buf + 16, (uint32_t)(f->len - FRAME_HDR));
	return 0;
}

static int next_record_v2(struct pt_reader *r, struct pt_cap_event *ev)
{
	struct pt_cap2_state *st = r->st;
	const unsigned char *p;
	const char *why = NULL;
	struct cur c = { 0 };
	uint64_t len;
	size_t hn;
	unsigned head, kind;

	if (!fill(r, 1)) {
		if (r->end == r->pos && stream_ended_cleanly(r))
			return 0;
		return damaged(r, r->path, "records", NULL);
	}
	fill(r, 11);                    /* head and length, unless at the end */
	p = r->buf + r->pos;
	head = p[0];
	hn = pt_uv_get(p + 1, r->buf + r->end, &len);
	if (!hn)
		return damaged(r, r->path, "records", r->end - r->pos >= 11 ?
			       "bad record length" : NULL);
	if (len > PT_CAP2_BODY_MAX)
		return damaged(r, r->path, "records", "record length over limit");
	if (!fill(r, 1 + hn + (size_t)len))
		return damaged(r, r->path, "records", NULL);
	p = r->buf + r->pos;
	c.p = p + 1 + hn;
	c.end = c.p + len;
	kind = head & PT_CAP2_KIND;
	if ((kind != PT_CAP_FRAME && (head & PT_CAP2_REFS ||
				      (head & PT_CAP2_RECV_US &&
				       (r->version < 3 ||
					!(head & PT_CAP2_RECV))))) ||
	    (head & PT_CAP2_RAW && head & PT_CAP2_REFS))
		return damaged(r, r->path, "records", "bad record flags");

	memset(ev, 0, sizeof *ev);
	ev->hdr.magic = PT_CAP_RECORD_MAGIC;
	ev->hdr.kind = (uint16_t)kind;
	ev->hdr.conn_id = st->conn + cur_z64(&c);
	st->conn = ev->hdr.conn_id;
	if (head & PT_CAP2_PEER) {
		st->peer_pid += cur_z32(&c);
		st->peer_uid += cur_z32(&c);
		pt_cap2_set_peer(st, ev->hdr.conn_id, st->peer_pid,
				 st->peer_uid);
	}
	pt_cap2_peer(st, ev->hdr.conn_id, &ev->hdr.peer_pid,
		     &ev->hdr.peer_uid);
	if (head & PT_CAP2_RECV)
		st->recv_ns += kind != PT_CAP_FRAME && head & PT_CAP2_RECV_US ?
			       cur_z64(&c) * 1000u : cur_z64(&c);
	/* Frames have no receive time of their own: the latest known is
	 * the best there is, and keeps the times in order. */
	ev->hdr.recv_ns = st->recv_ns;
	if (c.bad)
		return damaged(r, r->path, "records", "malformed record header");

	if (kind == PT_CAP_FRAME && !(head & PT_CAP2_RAW)) {
		if (rebuild_frame(r, &c, head, ev->hdr.peer_pid,
				  ev->hdr.peer_uid, &why) < 0)
			return damaged(r, r->path, "records", why);
		ev->data = (const unsigned char *)r->frame.buf;
		ev->hdr.length = (uint32_t)r->frame.len;
	} else {
		ev->data = c.p;
		ev->hdr.length = (uint32_t)(c.end - c.p);
	}
	if (kind == PT_CAP_FRAME) {
		if (decode_frame(r, ev->data, ev->hdr.length, &why) < 0)
			return damaged(r, r->path, "records", why);
		ev->rec = r->rec;
		if (!(head & PT_CAP2_RAW))
			pt_cap2_note_frame(st, ev->data, ev->hdr.length);
	} else if (kind == PT_CAP_META) {
		add_meta(r, ev->data, ev->hdr.length);
	}
	consume(r, 1 + hn + (size_t)len);
	r->nrec++;
	return 1;
}

/* ---- spool directories ---- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int open_spool(struct pt_reader *r)
{
	DIR *d = opendir(r->path);
	struct dirent *de;
	size_t cap = 0;

	if (!d) {
		pt_warn("%s: %s", r->path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (r->nfiles == cap) {
			cap = cap ? 2 * cap : 64;
			r->files = pt_xrealloc(r->files, cap * sizeof *r->files);
		}
		r->files[r->nfiles++] = pt_xstrdup(de->d_name);
	}
	closedir(d);
	/* Sorted, so that the same directory always converts the same. */
	qsort(r->files, r->nfiles, sizeof *r->files, cmp_names);
	r->is_dir = 1;
	return 0;
}

/*
 * Read the next frame of the current spool file to buf[pos].  Returns 1,
 * 0 at the clean end of the file, -1 on damage (warned).
 */
static int spool_frame(struct pt_reader *r)
{
	const char *why = NULL;
	const char *file = r->file_path.buf;
	struct pt_frame_header h;

	if (!fill(r, FRAME_HDR)) {
		if (r->end == r->pos && stream_ended_cleanly(r))
			return 0;
		return damaged(r, file, "frames", NULL);
	}
	if (pt_frame_header_decode(r->buf + r->pos, &h, &why) < 0)
		return damaged(r, file, "frames", why);
	if (!fill(r, FRAME_HDR + (size_t)h.length))
		return damaged(r, file, "frames", NULL);
	if (decode_frame(r, r->buf + r->pos, FRAME_HDR + h.length, &why) < 0)
		return damaged(r, file, "frames", why);
	r->sp_hdr = h;
	r->sp_len = FRAME_HDR + h.length;
	return 1;
}

static void spool_close_file(struct pt_reader *r)
{
	if (r->gz)
		gzclose(r->gz);
	r->gz = NULL;
	r->pos = r->end = 0;
	r->off = 0;
	r->at_eof = 0;
	r->gz_err = Z_OK;
	r->sp = SP_NEXT_FILE;
	r->fi++;
}

static void spool_event(struct pt_reader *r, struct pt_cap_event *ev,
			enum pt_cap_kind kind)
{
	memset(ev, 0, sizeof *ev);
	ev->hdr.magic = PT_CAP_RECORD_MAGIC;
	ev->hdr.kind = (uint16_t)kind;
	ev->hdr.peer_pid = r->sp_pid;
	ev->hdr.peer_uid = r->sp_uid;
	ev->hdr.conn_id = r->fi + 1;
	/* A spool file has no receive times: the frames' own times are the
	 * best there is, and the file's end is its last frame. */
	ev->hdr.recv_ns = r->sp_last_ns;
	if (kind == PT_CAP_FRAME) {
		ev->hdr.length = (uint32_t)r->sp_len;
		ev->data = r->buf + r->pos;
		ev->rec = r->rec;
	}
}

static int next_spool(struct pt_reader *r, struct pt_cap_event *ev)
{
	int rc;

	for (;;) {
		if (r->sp == SP_NEXT_FILE) {
			struct stat st;
			int fd;

			release_event(r);
			if (r->fi >= r->nfiles)
				return r->sp_damaged ? -1 : 0;
			pt_sb_reset(&r->file_path);
			pt_sb_addf(&r->file_path, "%s/%s", r->path,
				   r->files[r->fi]);
			fd = open(r->file_path.buf, O_RDONLY | O_CLOEXEC |
						    O_NOFOLLOW);
			/* The file's owner made it (O_EXCL): the uid that
			 * SO_PEERCRED would have given. */
			r->sp_uid = fd >= 0 && fstat(fd, &st) == 0 ?
				    (uint32_t)st.st_uid : 0;
			r->gz = fd < 0 ? NULL : gzdopen(fd, "rb");
			if (!r->gz) {
				if (fd >= 0)
					close(fd);
				pt_warn("%s: %s", r->file_path.buf,
					strerror(errno));
				r->sp_damaged = 1;
				r->fi++;
				continue;
			}
			r->nrec = 0;
			rc = spool_frame(r);
			if (rc <= 0) {
				r->sp_damaged |= rc < 0;
				spool_close_file(r);
				continue;
			}
			r->sp_pid = r->rec.hdr.pid;
			r->sp_last_ns = r->rec.hdr.time_ns;
			r->sp = SP_CONNECT;
		}
		switch (r->sp) {
		case SP_CONNECT:
			spool_event(r, ev, PT_CAP_CONNECT);
			r->sp = SP_FIRST;
			return 1;
		case SP_FIRST:
			r->sp = SP_FRAMES;
			break;
		case SP_FRAMES:
			consume(r, r->sp_len);
			r->nrec++;
			release_event(r);
			rc = spool_frame(r);
			if (rc <= 0) {
				r->sp_damaged |= rc < 0;
				spool_event(r, ev, PT_CAP_EOF);
				spool_close_file(r);
				return 1;
			}
			break;
		default:
			continue;
		}
		if (r->rec.hdr.time_ns > r->sp_last_ns)
			r->sp_last_ns = r->rec.hdr.time_ns;
		spool_event(r, ev, PT_CAP_FRAME);
		return 1;
	}
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
		if (open_spool(r) < 0)
			goto fail;
		return r;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	r->gz = fd < 0 ? NULL : gzdopen(fd, "rb");
	if (!r->gz) {
		pt_warn("%s: %s", path, fd < 0 ? strerror(errno)
						 : "cannot read");
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	gzbuffer(r->gz, 128u << 10);
	inflater_start(r);
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
		rc = next_spool(r, ev);
	} else {
		release_event(r);
		rc = r->version >= 2 ? next_record_v2(r, ev)
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
	release_event(r);
	inflater_stop(r);
	if (r->gz)
		gzclose(r->gz);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	free(r->buf);
	free(r->path);
	pt_sb_release(&r->meta);
	pt_sb_release(&r->file_path);
	pt_sb_release(&r->frame);
	pt_cap2_free(r->st);
	free(r);
}
