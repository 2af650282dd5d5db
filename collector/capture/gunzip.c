/*
 * Reading a gzip file without losing what precedes damage; see gunzip.h.
 *
 * What gzread() does and this keeps: a file that does not start with the
 * gzip magic is read as it is; gzip members that follow one another are
 * one stream; bytes after the last member that are not another member
 * are ignored, as gzip(1) ignores them.
 */
#include "capture/gunzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/*
 * File bytes read at once.  Weak: the fuzz targets link a smaller one, as
 * ASan serves allocations this large with mmap and munmap, and the page
 * faults cut the fuzzing speed fivefold (test/fuzz/gunzip-shim.c).
 */
__attribute__((weak)) size_t pt_gunzip_in_size(void)
{
	return 128u << 10;
}

struct pt_gunzip {
	int fd;
	z_stream z;
	int zinit;              /* inflateInit2 done */
	int looked;             /* the first bytes were looked at */
	int direct;             /* not gzip: copied as they are */
	int member_end;         /* a member ended: another, or the end */
	int in_eof;             /* read() gave 0 */
	int done;               /* nothing more: err says why */
	int err;
	const char *msg;
	unsigned char *in;
	size_t in_size;         /* of in: pt_gunzip_in_size() */
};

struct pt_gunzip *pt_gunzip_open(int fd)
{
	struct pt_gunzip *g = calloc(1, sizeof *g);

	if (!g || !(g->in = malloc(g->in_size = pt_gunzip_in_size()))) {
		free(g);
		return NULL;
	}
	g->fd = fd;
	g->err = Z_OK;
	return g;
}

static void fail(struct pt_gunzip *g, int err, const char *msg)
{
	g->done = 1;
	g->err = err;
	g->msg = msg;
}

/*
 * Read more of the file behind what input is left, so that at least
 * `want` bytes are there if the file has them.  Returns 0, or -1 when
 * read() failed (then the stream is done).
 */
static int more_input(struct pt_gunzip *g, size_t want)
{
	if (g->z.avail_in && g->z.next_in != g->in)
		memmove(g->in, g->z.next_in, g->z.avail_in);
	g->z.next_in = g->in;
	while (g->z.avail_in < want && !g->in_eof) {
		ssize_t n = read(g->fd, g->in + g->z.avail_in,
				 g->in_size - g->z.avail_in);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(g, Z_ERRNO, strerror(errno));
			return -1;
		}
		if (n == 0)
			g->in_eof = 1;
		g->z.avail_in += (uInt)n;
	}
	return 0;
}

static int gzip_magic(const struct pt_gunzip *g)
{
	return g->z.avail_in >= 2 && g->z.next_in[0] == 0x1f &&
	       g->z.next_in[1] == 0x8b;
}

/* Look at the first bytes: gzip, or a file read as it is. */
static void look(struct pt_gunzip *g)
{
	g->looked = 1;
	if (more_input(g, 2) < 0)
		return;
	if (!gzip_magic(g)) {
		g->direct = 1;
		return;
	}
	/* windowBits 15 + 16: a gzip wrapper, its CRC-32 and length checked. */
	if (inflateInit2(&g->z, 15 + 16) != Z_OK) {
		fail(g, Z_MEM_ERROR, "out of memory");
		return;
	}
	g->zinit = 1;
}

/* A plain file: what input is left, then the file itself. */
static size_t read_direct(struct pt_gunzip *g, unsigned char *out, size_t len)
{
	size_t got = 0;

	if (g->z.avail_in) {
		got = g->z.avail_in < len ? g->z.avail_in : len;
		memcpy(out, g->z.next_in, got);
		g->z.next_in += got;
		g->z.avail_in -= (uInt)got;
		return got;
	}
	while (!g->in_eof) {
		ssize_t n = read(g->fd, out, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(g, Z_ERRNO, strerror(errno));
			break;
		}
		if (n == 0)
			g->in_eof = 1;
		return (size_t)n;
	}
	g->done = 1;
	return 0;
}

/* After a member's end: another member, or the end of the stream. */
static void next_member(struct pt_gunzip *g)
{
	if (more_input(g, 2) < 0)
		return;
	if (!gzip_magic(g)) {
		/* Nothing more, or trailing bytes that are not gzip. */
		g->done = 1;
		return;
	}
	inflateReset(&g->z);
	g->member_end = 0;
}

size_t pt_gunzip_read(struct pt_gunzip *g, void *buf, size_t len)
{
	unsigned char *out = buf;
	size_t got = 0;

	if (!g->looked)
		look(g);
	if (g->direct && !g->done)
		return read_direct(g, out, len);
	/* inflate() counts in uInt. */
	if (len > (1u << 30))
		len = 1u << 30;
	while (got < len && !g->done) {
		int rc;

		if (g->member_end) {
			next_member(g);
			continue;
		}
		if (!g->z.avail_in && !g->in_eof && more_input(g, 1) < 0)
			break;
		g->z.next_out = out + got;
		g->z.avail_out = (uInt)(len - got);
		rc = inflate(&g->z, Z_NO_FLUSH);
		got = len - g->z.avail_out;
		switch (rc) {
		case Z_OK:
			break;
		case Z_STREAM_END:
			g->member_end = 1;
			break;
		case Z_BUF_ERROR:
			/* No progress: input ran out inside a member (more is
			 * read on the next turn unless the file ended). */
			if (g->z.avail_in)
				fail(g, Z_DATA_ERROR, "compressed data error");
			else if (g->in_eof)
				fail(g, Z_BUF_ERROR, "unexpected end of file");
			break;
		case Z_MEM_ERROR:
			fail(g, Z_MEM_ERROR, "out of memory");
			break;
		default:
			fail(g, Z_DATA_ERROR, g->z.msg ? g->z.msg
					      : "compressed data error");
			break;
		}
	}
	return got;
}

int pt_gunzip_error(const struct pt_gunzip *g, const char **msg)
{
	*msg = g->msg;
	return g->err;
}

int pt_gunzip_direct(const struct pt_gunzip *g)
{
	return g->direct;
}

void pt_gunzip_close(struct pt_gunzip *g)
{
	if (!g)
		return;
	if (g->zinit)
		inflateEnd(&g->z);
	if (g->fd >= 0)
		close(g->fd);
	free(g->in);
	free(g);
}
