/*
 * Output files written around the page cache: see direct-out.h.
 *
 * O_DIRECT wants the buffer, the file offset and the length aligned to the
 * device's logical block size; DIRECT_ALIGN covers every block size in
 * use.  The stream copies what it is given into one of two aligned
 * buffers and hands each full one to a thread that writes it whole, so
 * that the formatting goes on while the device takes the last buffer
 * (a direct write returns when the device has the data), and every
 * direct write starts at a multiple of DIRECT_BUF.  At the close, the
 * aligned part of what is left goes direct and the rest, under
 * DIRECT_ALIGN bytes, through the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/direct-out.h"
#include "base/worker.h"

#define DIRECT_ALIGN 4096
#define DIRECT_BUF   (4u << 20)

struct direct_out {
	int fd;
	int direct;             /* O_DIRECT is still set on fd */
	char *buf[2];           /* DIRECT_BUF bytes each, aligned */
	int cur;                /* the buffer being filled */
	size_t len;             /* bytes in it */
	struct pt_worker w;     /* the writer */
	const char *pending;    /* a full buffer for the thread, or NULL */
	int err;                /* errno of the first failed write, or 0 */
};

/* Back to the page cache for good (a file system that took O_DIRECT at
 * open but refuses it for writes). */
static int drop_direct(struct direct_out *d)
{
	int fl = fcntl(d->fd, F_GETFL);

	if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_DIRECT) < 0)
		return -1;
	d->direct = 0;
	return 0;
}

/* Write n bytes of p, direct while that is allowed.  Returns 0 or -1. */
static int put(struct direct_out *d, const char *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = write(d->fd, p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EINVAL && d->direct) {
			if (drop_direct(d) < 0)
				return -1;
			continue;
		}
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		off += (size_t)w;
		/* A short direct write leaves the rest unaligned. */
		if (off < n && d->direct && (off % DIRECT_ALIGN) &&
		    drop_direct(d) < 0)
			return -1;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct direct_out *d = arg;
	const char *p;

	pt_worker_lock(&d->w);
	for (;;) {
		while (!d->pending && !d->w.quit)
			pt_worker_wait(&d->w);
		if (!d->pending)
			break;
		p = d->pending;
		pt_worker_unlock(&d->w);
		int rc = d->err ? 0 : put(d, p, DIRECT_BUF);
		int e = errno;

		pt_worker_lock(&d->w);
		if (rc < 0 && !d->err)
			d->err = e;
		d->pending = NULL;
		pt_worker_wake(&d->w);
	}
	pt_worker_unlock(&d->w);
	return NULL;
}

/* Wait until the thread has no buffer; returns its error, 0 if none. */
static int wait_idle(struct direct_out *d)
{
	int err;

	pt_worker_lock(&d->w);
	while (d->pending)
		pt_worker_wait(&d->w);
	err = d->err;
	pt_worker_unlock(&d->w);
	return err;
}

static ssize_t direct_write(void *cookie, const char *data, size_t n)
{
	struct direct_out *d = cookie;
	size_t done = 0;

	while (done < n) {
		size_t k = DIRECT_BUF - d->len;

		if (k > n - done)
			k = n - done;
		memcpy(d->buf[d->cur] + d->len, data + done, k);
		d->len += k;
		done += k;
		if (d->len < DIRECT_BUF)
			continue;
		if ((errno = wait_idle(d)))
			return 0;       /* stdio's sign of an error */
		pt_worker_lock(&d->w);
		d->pending = d->buf[d->cur];
		pt_worker_wake(&d->w);
		pt_worker_unlock(&d->w);
		d->cur ^= 1;
		d->len = 0;
	}
	return (ssize_t)n;
}

static void release(struct direct_out *d)
{
	pt_worker_stop(&d->w);
	free(d->buf[0]);
	free(d->buf[1]);
	free(d);
}

static int direct_close(void *cookie)
{
	struct direct_out *d = cookie;
	const char *p = d->buf[d->cur];
	size_t whole = d->len - d->len % DIRECT_ALIGN;
	int err = wait_idle(d);

	if (!err && whole && put(d, p, whole) < 0)
		err = errno;
	if (!err && d->len > whole &&
	    ((d->direct && drop_direct(d) < 0) ||
	     put(d, p + whole, d->len - whole) < 0))
		err = errno;
	if (close(d->fd) < 0 && !err)
		err = errno;
	release(d);
	errno = err;
	return err ? EOF : 0;
}

FILE *pt_direct_fopen(const char *path)
{
	static const cookie_io_functions_t io = {
		.write = direct_write, .close = direct_close,
	};
	struct direct_out *d;
	FILE *f;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT,
		  0666);
	if (fd < 0 && errno == EINVAL)          /* no O_DIRECT here */
		return fopen(path, "w");
	if (fd < 0)
		return NULL;
	d = calloc(1, sizeof *d);
	if (!d || posix_memalign((void **)&d->buf[0], DIRECT_ALIGN, DIRECT_BUF) ||
	    posix_memalign((void **)&d->buf[1], DIRECT_ALIGN, DIRECT_BUF)) {
		if (d) {
			free(d->buf[0]);
			free(d);
		}
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	d->fd = fd;
	d->direct = 1;
	if ((errno = pt_worker_start(&d->w, writer_main, d))) {
		int err = errno;

		free(d->buf[0]);
		free(d->buf[1]);
		free(d);
		close(fd);
		errno = err;
		return NULL;
	}
	f = fopencookie(d, "w", io);
	if (!f) {
		int err = errno;

		close(d->fd);
		d->fd = -1;
		release(d);
		errno = err;
		return NULL;
	}
	/* Our buffers are the stream's: stdio hands each write straight on. */
	setvbuf(f, NULL, _IONBF, 0);
	return f;
}
