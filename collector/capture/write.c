/*
 * Writing a capture; see capture-write.h.
 *
 * deflate is driven directly (not gzwrite) so that write errors come back
 * with their errno and are reported once, and so that small records are
 * batched in a staging buffer: one deflate() call per record would cost
 * more than the compression itself at 300k frames a second.
 *
 * Records are written in format version 3 (capture-v2.h): besides making
 * the file smaller, fewer bytes for deflate is what makes ingest faster,
 * as deflate is most of the collector's CPU.
 */
#include "capture/write.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/v3.h"
#include "capture/frame.h"
#include "capture/le.h"
#include "base/strbuf.h"
#include "base/util.h"

#define STAGE_SIZE  (128u << 10)        /* records gathered before deflate */
#define OUT_SIZE    (128u << 10)
#define FLUSH_NS    1000000000ull       /* at most this long between flushes */

/*
 * deflate's level follows the input.  On recorded frames level 6 makes a
 * stream a tenth (a short build's) to 28 % (long compiler lines) smaller
 * than level 1, at 60 % of its speed (73 against 122 MB/s here); level 2
 * runs as fast as level 1 and is 7 % smaller.  A build sends kilobytes to
 * a megabyte a second, the ingest benchmark over 100 MB/s, where deflate
 * is most of the collector's CPU.  So: level 6 while less than
 * QUIET_BYTES came in since the last flush (per second, when flushes are
 * further apart), which costs at most 3 % of a CPU more than level 1;
 * level 2 from the moment more does, until an interval is quiet again.
 * (Not level 1: after deflateParams() from 6, zlib's level 1 compresses
 * 2-4 % worse than a stream begun at level 1; level 2 does not.)
 */
#define LEVEL_SMALL 6
#define LEVEL_FAST  2
#define QUIET_BYTES (2u << 20)

struct pt_writer {
	int fd;
	char *path;
	z_stream zs;
	unsigned char *stage;
	size_t stage_len;
	unsigned char *out;
	int failed;                     /* an error was reported; write no more */
	int dirty;                      /* data added since the last flush */
	uint64_t last_flush_ns;
	int level;                      /* deflate's, see LEVEL_SMALL */
	uLong in_at_flush;              /* zs.total_in at the last flush */
	struct pt_cap2_state *st;
};

#define FRAME_HDR 32
#define MAX_SEGS  16                    /* a record's pieces, see add_segs */

struct seg {
	const void *p;
	size_t n;
};

/* Report the first error only: later ones are consequences of it. */
static void fail(struct pt_writer *w, const char *what)
{
	if (!w->failed)
		pt_warn("writing %s: %s", w->path, what);
	w->failed = 1;
}

/* Feed n bytes to deflate with the given flush mode and write the output. */
static int deflate_out(struct pt_writer *w, const void *p, size_t n, int flush)
{
	int rc;

	if (w->failed)
		return -1;
	w->zs.next_in = (unsigned char *)p;
	w->zs.avail_in = (uInt)n;
	do {
		size_t have;

		w->zs.next_out = w->out;
		w->zs.avail_out = OUT_SIZE;
		rc = deflate(&w->zs, flush);
		if (rc == Z_STREAM_ERROR) {
			fail(w, "compression failed");
			return -1;
		}
		have = OUT_SIZE - w->zs.avail_out;
		if (have && pt_write_all(w->fd, w->out, have) < 0) {
			fail(w, strerror(errno));
			return -1;
		}
		/* Z_FINISH is done only at Z_STREAM_END; the others once
		 * deflate leaves output space unused (all input consumed). */
	} while (flush == Z_FINISH ? rc != Z_STREAM_END
				   : w->zs.avail_out == 0);
	return 0;
}

/*
 * Change deflate's level, emitting what the old one still holds.  Stays
 * at the old level if zlib will not switch (never an error by itself).
 */
static int set_level(struct pt_writer *w, int level)
{
	int rc, tries = 0;

	if (w->failed)
		return -1;
	if (level == w->level)
		return 0;
	w->zs.avail_in = 0;
	do {
		size_t have;

		w->zs.next_out = w->out;
		w->zs.avail_out = OUT_SIZE;
		rc = deflateParams(&w->zs, level, Z_DEFAULT_STRATEGY);
		have = OUT_SIZE - w->zs.avail_out;
		if (have && pt_write_all(w->fd, w->out, have) < 0) {
			fail(w, strerror(errno));
			return -1;
		}
	} while (rc == Z_BUF_ERROR && ++tries < 16);
	if (rc == Z_STREAM_ERROR) {
		fail(w, "compression failed");
		return -1;
	}
	if (rc == Z_OK)
		w->level = level;
	return 0;
}

static int drain_stage(struct pt_writer *w, int flush)
{
	int rc;

	if (!w->stage_len && flush == Z_NO_FLUSH)
		return w->failed ? -1 : 0;
	rc = deflate_out(w, w->stage, w->stage_len, flush);

	w->stage_len = 0;
	/* Not at a flush: pt_writer_flush() chooses then, and after
	 * Z_FINISH there is nothing left to choose for. */
	if (rc == 0 && flush == Z_NO_FLUSH && w->level != LEVEL_FAST &&
	    w->zs.total_in - w->in_at_flush > QUIET_BYTES)
		rc = set_level(w, LEVEL_FAST);
	return rc;
}

static void stage(struct pt_writer *w, const void *p, size_t n)
{
	memcpy(w->stage + w->stage_len, p, n);
	w->stage_len += n;
}

/*
 * Append the pieces of one record.  A piece too big for the staging
 * buffer (a large frame's tail) is deflated where it lies instead of being
 * copied.
 */
static int add_segs(struct pt_writer *w, const struct seg *sg, size_t nsg)
{
	size_t i;

	for (i = 0; i < nsg; i++) {
		if (!sg[i].n)
			continue;
		if (w->stage_len + sg[i].n > STAGE_SIZE &&
		    drain_stage(w, Z_NO_FLUSH) < 0)
			return -1;
		if (sg[i].n > STAGE_SIZE) {
			if (deflate_out(w, sg[i].p, sg[i].n, Z_NO_FLUSH) < 0)
				return -1;
		} else {
			stage(w, sg[i].p, sg[i].n);
		}
	}
	return 0;
}

struct pt_writer *pt_writer_open(const char *path, int overwrite)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	struct pt_cap_file_header fh;
	struct pt_writer *w;
	int fd;

	flags |= overwrite ? O_TRUNC : O_EXCL;
	fd = open(path, flags, 0644);
	if (fd < 0) {
		if (errno == ELOOP)
			pt_warn("cannot create %s: it is a symbolic link", path);
		else
			pt_warn("cannot create %s: %s", path, strerror(errno));
		return NULL;
	}
	w = pt_xcalloc(1, sizeof *w);
	w->fd = fd;
	w->path = pt_xstrdup(path);
	w->stage = pt_xmalloc(STAGE_SIZE);
	w->st = pt_cap2_new();
	w->out = pt_xmalloc(OUT_SIZE);
	/* windowBits 15 + 16: a gzip wrapper, so that zcat reads it. */
	w->level = LEVEL_SMALL;
	if (deflateInit2(&w->zs, w->level, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		pt_warn("cannot create %s: zlib initialisation failed", path);
		close(fd);
		pt_cap2_free(w->st);
		free(w->stage);
		free(w->out);
		free(w->path);
		free(w);
		return NULL;
	}

	memset(&fh, 0, sizeof fh);
	memcpy(fh.magic, PT_CAP_FILE_MAGIC, sizeof fh.magic);
	fh.version = htole32(PT_CAP_VERSION);
	fh.header_size = htole32(sizeof fh);
	stage(w, &fh, sizeof fh);
	w->dirty = 1;
	/* Flush at once: a full disk or read-only file system shows up now,
	 * before anything is recorded, and the file is a valid gzip stream. */
	if (pt_writer_flush(w, 1) < 0) {
		pt_writer_close(w);
		return NULL;
	}
	return w;
}

/* Can the frame be stored compact and read back byte for byte? */
static int compactable(const unsigned char *f, size_t len)
{
	uint32_t length;

	if (len < FRAME_HDR || pt_get32(f) != PT_WIRE_MAGIC ||
	    f[4] != PT_CAP2_WIRE_VERSION || pt_get16(f + 6) != 0)
		return 0;
	length = pt_get32(f + 12);
	return length == len - FRAME_HDR && pt_get32(f + 16) == length &&
	       length <= PT_FRAME_MAX &&
	       length >= pt_record_fixed_size(f[5]);
}

/* The fixed part of a frame as varints; returns the bytes written. */
static size_t put_fixed(struct pt_cap2_state *st, unsigned char *o,
			const unsigned char *f, uint32_t peer_uid)
{
	const unsigned char *p = f + FRAME_HDR;
	uint32_t pid = pt_get32(f + 8);
	uint64_t time = pt_get64(f + 24), off;
	size_t n = 0;

	switch (f[5]) {
	case PT_REC_HELLO:
		n += pt_uv_put(o + n, pt_zz32(pt_get32(p) - pid));
		n += pt_uv_put(o + n, pt_zz32(pt_get32(p + 4) - peer_uid));
		n += pt_uv_put(o + n, pt_get32(p + 8));
		n += pt_uv_put(o + n, pt_get32(p + 12));
		/* The two clocks move together: their offset barely
		 * changes from one HELLO to the next. */
		off = pt_get64(p + 16) - time;
		n += pt_uv_put(o + n, pt_zz64(off - st->clock_off));
		st->clock_off = off;
		n += pt_uv_put(o + n, pt_zz64(time - pt_get64(p + 24)));
		break;
	case PT_REC_EXEC_FAILED:
		n += pt_uv_put(o + n, pt_get32(p));
		n += pt_uv_put(o + n, pt_get32(p + 4));
		break;
	case PT_REC_EXEC:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		n += pt_uv_put(o + n, pt_zz32(pt_get32(p) - pid));
		n += pt_uv_put(o + n, pt_get32(p + 4));
		break;
	case PT_REC_REAP:
		n += pt_uv_put(o + n, pt_zz32(pt_get32(p) - pid));
		n += pt_uv_put(o + n, pt_zz32(pt_get32(p + 4)));
		n += pt_uv_put(o + n, pt_get32(p + 8));
		n += pt_uv_put(o + n, pt_get32(p + 12));
		n += pt_uv_put(o + n, pt_get64(p + 16));
		n += pt_uv_put(o + n, pt_get64(p + 24));
		n += pt_uv_put(o + n, pt_get64(p + 32));
		break;
	case PT_REC_EXIT:
		n += pt_uv_put(o + n, pt_zz32(pt_get32(p)));
		n += pt_uv_put(o + n, pt_get32(p + 4));
		n += pt_uv_put(o + n, pt_get64(p + 8));
		n += pt_uv_put(o + n, pt_get64(p + 16));
		n += pt_uv_put(o + n, pt_get64(p + 24));
		break;
	}
	return n;
}

static void add_seg(struct seg *sg, size_t *nsg, const void *p, size_t n)
{
	if (!n)
		return;
	if (*nsg && (const unsigned char *)sg[*nsg - 1].p + sg[*nsg - 1].n ==
		    (const unsigned char *)p) {
		sg[*nsg - 1].n += n;
		return;
	}
	sg[(*nsg)++] = (struct seg){ p, n };
}

/*
 * The tail of a HELLO (payload bytes [from, n)) as pieces, with what its
 * pid's EXEC or SPAWN already said replaced by references.  Returns 1 if
 * some reference was used.
 */
static int hello_tail(const struct pt_cap2_ref *ref, const unsigned char *p,
		      size_t from, size_t n, struct seg *sg, size_t *nsg)
{
	static const unsigned char mark[3] = {
		PT_CAP2_REF_ARGS, PT_CAP2_REF_CWD, PT_CAP2_REF_EXE,
	};
	size_t pos, run = from, a0 = 0, a1 = 0;
	int used = 0, nruns = 0, in_args = 0;

	/* The ARG items are replaced only as one run, as they were sent. */
	for (pos = from; pos < n;) {
		size_t next = pos + strlen((const char *)p + pos + 1) + 2;

		if (p[pos] == PT_TAG_ARG) {
			if (!in_args) {
				nruns++;
				a0 = pos;
			}
			in_args = 1;
			a1 = next;
		} else {
			in_args = 0;
		}
		pos = next;
	}
	if (nruns != 1 || a1 - a0 != ref->args_len ||
	    memcmp(p + a0, ref->buf, ref->args_len))
		a0 = a1 = 0;
	for (pos = from; pos < n;) {
		size_t sl = strlen((const char *)p + pos + 1);
		const unsigned char *m = NULL;

		if (pos == a0 && a1) {
			add_seg(sg, nsg, p + run, pos - run);
			add_seg(sg, nsg, mark, 1);
			run = pos = a1;
			used = 1;
			continue;
		}
		if (p[pos] == PT_TAG_CWD && ref->has_cwd && sl == ref->cwd_len &&
		    !memcmp(p + pos + 1, ref->buf + ref->args_len, sl))
			m = mark + 1;
		else if (p[pos] == PT_TAG_EXE && ref->has_path &&
			 sl == ref->path_len &&
			 !memcmp(p + pos + 1, ref->buf + ref->args_len +
				 ref->cwd_len, sl))
			m = mark + 2;
		if (m && *nsg + 3 < MAX_SEGS) {
			add_seg(sg, nsg, p + run, pos - run);
			add_seg(sg, nsg, m, 1);
			run = pos + sl + 2;
			used = 1;
		}
		pos += sl + 2;
	}
	add_seg(sg, nsg, p + run, n - run);
	return used;
}

int pt_writer_add(struct pt_writer *w, enum pt_cap_kind kind, uint64_t conn_id,
		  uint32_t peer_pid, uint32_t peer_uid, uint64_t recv_ns,
		  const void *data, size_t len)
{
	struct pt_cap2_state *st = w->st;
	const unsigned char *f = data;
	unsigned char hd[1 + 10], body[256];
	struct seg sg[MAX_SEGS];
	size_t nsg = 1, nb = 0, total, i;
	uint32_t cpid, cuid;
	unsigned head = (unsigned)kind & PT_CAP2_KIND;

	if (w->failed)
		return -1;
	/* Caller bugs, not data problems: frames are bounded, and the
	 * kinds fit the head byte's four bits. */
	if (len > PT_CAP_RECORD_MAX) {
		pt_warn("writing %s: record of %zu bytes is over the limit",
			w->path, len);
		return -1;
	}
	if ((unsigned)kind > PT_CAP2_KIND) {
		pt_warn("writing %s: record kind %u cannot be stored", w->path,
			(unsigned)kind);
		return -1;
	}
	nb += pt_uv_put(body + nb, pt_zz64(conn_id - st->conn));
	st->conn = conn_id;
	pt_cap2_peer(st, conn_id, &cpid, &cuid);
	if (cpid != peer_pid || cuid != peer_uid) {
		head |= PT_CAP2_PEER;
		nb += pt_uv_put(body + nb, pt_zz32(peer_pid - st->peer_pid));
		nb += pt_uv_put(body + nb, pt_zz32(peer_uid - st->peer_uid));
		st->peer_pid = peer_pid;
		st->peer_uid = peer_uid;
		pt_cap2_set_peer(st, conn_id, peer_pid, peer_uid);
	}
	/* A frame carries its own time; when the collector received it
	 * adds nothing but bytes. */
	if (kind != PT_CAP_FRAME) {
		uint64_t d = recv_ns - st->recv_ns;
		int64_t sd = (int64_t)d;

		head |= PT_CAP2_RECV;
		if (sd % 1000 == 0) {
			head |= PT_CAP2_RECV_US;
			d = (uint64_t)(sd / 1000);
		}
		nb += pt_uv_put(body + nb, pt_zz64(d));
		st->recv_ns = recv_ns;
	}
	if (kind == PT_CAP_FRAME && compactable(f, len)) {
		uint32_t pid = pt_get32(f + 8), origin = pt_get32(f + 20);
		uint64_t time = pt_get64(f + 24);
		size_t fixed = pt_record_fixed_size(f[5]);
		const struct pt_cap2_ref *ref;

		body[nb++] = f[5];
		nb += pt_uv_put(body + nb, pt_zz32(pid - peer_pid));
		nb += pt_uv_put(body + nb, origin ? pt_zz32(origin - pid) + 1
						  : 0);
		nb += pt_uv_put(body + nb, pt_zz64(time - st->time_ns));
		st->time_ns = time;
		nb += put_fixed(st, body + nb, f, peer_uid);
		sg[nsg++] = (struct seg){ body, nb };
		if (f[5] == PT_REC_HELLO && (ref = pt_cap2_ref(st, pid)) &&
		    pt_cap2_tail_plain(f + FRAME_HDR, fixed,
				       len - FRAME_HDR) == 0) {
			if (hello_tail(ref, f + FRAME_HDR, fixed,
				       len - FRAME_HDR, sg, &nsg))
				head |= PT_CAP2_REFS;
		} else {
			add_seg(sg, &nsg, f + FRAME_HDR + fixed,
				len - FRAME_HDR - fixed);
		}
		pt_cap2_note_frame(st, f, len);
	} else {
		if (kind == PT_CAP_FRAME)
			head |= PT_CAP2_RAW;
		sg[nsg++] = (struct seg){ body, nb };
		add_seg(sg, &nsg, data, len);
	}
	for (total = 0, i = 1; i < nsg; i++)
		total += sg[i].n;
	hd[0] = (unsigned char)head;
	sg[0] = (struct seg){ hd, 1 + pt_uv_put(hd + 1, total) };
	if (add_segs(w, sg, nsg) < 0)
		return -1;
	w->dirty = 1;
	return 0;
}

int pt_writer_meta(struct pt_writer *w, const char *const *kv, size_t npairs)
{
	struct pt_sb sb = PT_SB_INIT;
	size_t i;
	int rc;

	for (i = 0; i < 2 * npairs; i++) {
		pt_sb_addstr(&sb, kv[i] ? kv[i] : "");
		pt_sb_addch(&sb, '\0');
	}
	rc = pt_writer_add(w, PT_CAP_META, 0, 0, 0, pt_recv_time(pt_mono_ns()),
			   sb.buf, sb.len);
	pt_sb_release(&sb);
	return rc;
}

int pt_writer_flush(struct pt_writer *w, int force)
{
	uint64_t now;

	if (w->failed)
		return -1;
	if (!w->dirty)
		return 0;
	now = pt_mono_ns();
	if (!force && now - w->last_flush_ns < FLUSH_NS)
		return 0;
	if (drain_stage(w, Z_SYNC_FLUSH) < 0)
		return -1;
	{
		uint64_t in = w->zs.total_in - w->in_at_flush;
		uint64_t span = now - w->last_flush_ns;

		/* in / max(span, 1 s) < QUIET_BYTES per second */
		if (span < FLUSH_NS)
			span = FLUSH_NS;
		if (set_level(w, in < QUIET_BYTES * (span / (double)FLUSH_NS) ?
				 LEVEL_SMALL : LEVEL_FAST) < 0)
			return -1;
	}
	w->in_at_flush = w->zs.total_in;
	w->dirty = 0;
	w->last_flush_ns = now;
	return 0;
}

int pt_writer_level(const struct pt_writer *w)
{
	return w->level;
}

int pt_writer_close(struct pt_writer *w)
{
	int rc;

	if (!w)
		return -1;
	if (!w->failed)
		drain_stage(w, Z_FINISH);
	deflateEnd(&w->zs);
	if (close(w->fd) < 0)
		fail(w, strerror(errno));
	rc = w->failed ? -1 : 0;
	pt_cap2_free(w->st);
	free(w->stage);
	free(w->out);
	free(w->path);
	free(w);
	return rc;
}
