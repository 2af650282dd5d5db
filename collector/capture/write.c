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
#include "proftrace/wire.h"
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
	struct pt_v3_state *st;
};

/* Report the first error only: later ones are consequences of it. */
static void fail(struct pt_writer *w, const char *what)
{
	if (!w->failed)
		pt_warn_failure("writing %s: %s", w->path, what);
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
static int add_segs(struct pt_writer *w, const struct pt_v3_seg *sg, size_t nsg)
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
	w->st = pt_v3_new();
	w->out = pt_xmalloc(OUT_SIZE);
	/* windowBits 15 + 16: a gzip wrapper, so that zcat reads it. */
	w->level = LEVEL_SMALL;
	if (deflateInit2(&w->zs, w->level, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		pt_warn("cannot create %s: zlib initialisation failed", path);
		close(fd);
		pt_v3_free(w->st);
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

int pt_writer_add(struct pt_writer *w, enum pt_cap_kind kind, uint64_t conn_id,
		  uint32_t peer_pid, uint32_t peer_uid, uint64_t recv_ns,
		  const void *data, size_t len)
{
	unsigned char hd[PT_V3_HEAD_MAX], body[PT_V3_FIELDS_MAX];
	struct pt_v3_seg sg[PT_V3_MAX_SEGS];
	size_t nsg;

	if (w->failed)
		return -1;
	/* Caller bugs, not data problems: frames are bounded, and the
	 * kinds fit the head byte's four bits. */
	if (len > PT_CAP_RECORD_MAX) {
		pt_warn("writing %s: record of %zu bytes is over the limit",
			w->path, len);
		return -1;
	}
	if ((unsigned)kind > PT_V3_KIND) {
		pt_warn("writing %s: record kind %u cannot be stored", w->path,
			(unsigned)kind);
		return -1;
	}
	nsg = pt_v3_encode(w->st, kind, conn_id, peer_pid, peer_uid, recv_ns,
			   data, len, sg, hd, body);
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
	pt_v3_free(w->st);
	free(w->stage);
	free(w->out);
	free(w->path);
	free(w);
	return rc;
}
