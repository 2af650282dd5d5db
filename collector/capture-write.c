/*
 * Writing a capture; see capture-write.h.
 *
 * deflate is driven directly (not gzwrite) so that write errors come back
 * with their errno and are reported once, and so that small records are
 * batched in a staging buffer: one deflate() call per record would cost
 * more than the compression itself at 300k frames a second.
 */
#include "capture-write.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "strbuf.h"
#include "util.h"

#define STAGE_SIZE  (128u << 10)        /* records gathered before deflate */
#define OUT_SIZE    (128u << 10)
#define FLUSH_NS    1000000000ull       /* at most this long between flushes */

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

static int drain_stage(struct pt_writer *w, int flush)
{
	int rc;

	if (!w->stage_len && flush == Z_NO_FLUSH)
		return w->failed ? -1 : 0;
	rc = deflate_out(w, w->stage, w->stage_len, flush);

	w->stage_len = 0;
	return rc;
}

static void stage(struct pt_writer *w, const void *p, size_t n)
{
	memcpy(w->stage + w->stage_len, p, n);
	w->stage_len += n;
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
	w->out = pt_xmalloc(OUT_SIZE);
	/* windowBits 15 + 16: a gzip wrapper, so that zcat reads it. */
	if (deflateInit2(&w->zs, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		pt_warn("cannot create %s: zlib initialisation failed", path);
		close(fd);
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
	struct pt_cap_record r;

	if (w->failed)
		return -1;
	if (len > PT_CAP_RECORD_MAX) {
		/* A caller bug, not a data problem: frames are bounded. */
		pt_warn("writing %s: record of %zu bytes is over the limit",
			w->path, len);
		return -1;
	}
	memset(&r, 0, sizeof r);
	r.magic = htole32(PT_CAP_RECORD_MAGIC);
	r.kind = htole16((uint16_t)kind);
	r.length = htole32((uint32_t)len);
	r.peer_pid = htole32(peer_pid);
	r.peer_uid = htole32(peer_uid);
	r.conn_id = htole64(conn_id);
	r.recv_ns = htole64(recv_ns);

	if (w->stage_len + sizeof r + len > STAGE_SIZE &&
	    drain_stage(w, Z_NO_FLUSH) < 0)
		return -1;
	stage(w, &r, sizeof r);
	if (sizeof r + len > STAGE_SIZE) {
		/* Large frame: deflate it in place rather than copy it. */
		if (drain_stage(w, Z_NO_FLUSH) < 0 ||
		    deflate_out(w, data, len, Z_NO_FLUSH) < 0)
			return -1;
	} else if (len) {
		stage(w, data, len);
	}
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
	rc = pt_writer_add(w, PT_CAP_META, 0, 0, 0, pt_mono_ns(),
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
	w->dirty = 0;
	w->last_flush_ns = now;
	return 0;
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
	free(w->stage);
	free(w->out);
	free(w->path);
	free(w);
	return rc;
}
