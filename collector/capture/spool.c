/*
 * Reading a spool directory: the files that processes wrote when no
 * collector was listening, each a stream of wire frames, read in name
 * order as the connections of one capture.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/reader.h"
#include "proftrace/wire.h"
#include "base/strbuf.h"
#include "base/util.h"

/* ---- spool directories ---- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pt_reader_open_spool(struct pt_reader *r)
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
	if (r->nfiles)          /* (files is NULL then: qsort's is nonnull) */
		qsort(r->files, r->nfiles, sizeof *r->files, cmp_names);
	else
		/* A spool nothing wrote to, or not the directory meant: an
		 * empty result is worth a word either way. */
		pt_warn("%s: no captures (*.ptcap) and no spool files in this "
			"directory", r->path);
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

	if (!pt_reader_fill(r, PT_FRAME_HDR)) {
		if (r->end == r->pos && pt_reader_stream_ended_cleanly(r))
			return 0;
		return pt_reader_damaged(r, file, "frames", NULL);
	}
	if (pt_frame_header_decode(r->buf + r->pos, &h, &why) < 0)
		return pt_reader_damaged(r, file, "frames", why);
	if (!pt_reader_fill(r, PT_FRAME_HDR + (size_t)h.length))
		return pt_reader_damaged(r, file, "frames", NULL);
	if (pt_reader_decode_frame(r, r->buf + r->pos, PT_FRAME_HDR + h.length,
				   &why) < 0)
		return pt_reader_damaged(r, file, "frames", why);
	r->sp_hdr = h;
	r->sp_len = PT_FRAME_HDR + h.length;
	return 1;
}

static void spool_close_file(struct pt_reader *r)
{
	pt_gunzip_close(r->gz);
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

int pt_reader_next_spool(struct pt_reader *r, struct pt_cap_event *ev)
{
	int rc;

	for (;;) {
		if (r->sp == SP_NEXT_FILE) {
			struct stat st;
			int fd;

			pt_reader_release_event(r);
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
			r->gz = fd < 0 ? NULL : pt_gunzip_open(fd);
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
			pt_reader_consume(r, r->sp_len);
			r->nrec++;
			pt_reader_release_event(r);
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
