/*
 * The run log, the collector's side (doc/design.md, "The transport").
 *
 * Any process of the run can write anything anywhere in the file, so the
 * reader trusts none of it: it parses only its own copy of the bytes; a
 * length counts only once the header's check vouches for it, is bounded
 * by PT_LOG_FRAME_MAX, and is honoured by waiting for bytes, never by
 * allocating them; a record is delivered only when the trailer at its
 * claimed end repeats the check.  Everything else is stepped over, byte
 * by byte, to the next whole record.  A scribbler can lose records of
 * this run, its own and others', but cannot make the reader read outside
 * its buffer, loop, hold more than a record's worth of memory, or wait
 * for ever on a record that something was appended after.
 */
#include "collect/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The buffer grows in steps, so that a large record read piece by piece
 * over several drains is not reallocated for every piece. */
#define LOG_BUF_STEP (64u << 10)

/* A buffer grown for a large record is given back once it holds less
 * than half of this: the next records are most likely small. */
#define LOG_BUF_KEEP (2 * PT_LOG_READ_CHUNK)

/* Hole punching goes by whole pages; a partial page would only be
 * zeroed, which wastes the call. */
#define LOG_PAGE 4096u

enum log_state {
	LOG_WHOLE,              /* a record the reader may deliver */
	LOG_SHORT,              /* may be a record whose rest is not read yet */
	LOG_BAD,                /* cannot be the start of a record */
};

static const unsigned char log_magic[4] = {
	PT_LOG_MAGIC & 0xff, (PT_LOG_MAGIC >> 8) & 0xff,
	(PT_LOG_MAGIC >> 16) & 0xff, (PT_LOG_MAGIC >> 24) & 0xff,
};

/*
 * What the n bytes at p (n > 0) start with: a whole record (*need is its
 * size), the start of one whose rest is not among them (*need is the size
 * it needs, as far as its header says), or no record.  Reads nothing
 * outside p[0..n).
 */
static enum log_state log_classify(const unsigned char *p, size_t n,
				   size_t *need)
{
	uint32_t length, flags, check;
	uint64_t stream;

	*need = PT_LOG_REC_HDR;
	if (n < sizeof log_magic)
		return memcmp(p, log_magic, n) ? LOG_BAD : LOG_SHORT;
	if (memcmp(p, log_magic, sizeof log_magic))
		return LOG_BAD;
	if (n < PT_LOG_REC_HDR)
		return LOG_SHORT;
	length = pt_wire_get32(p + PT_OFF(pt_log_rec, length));
	stream = pt_wire_get64(p + PT_OFF(pt_log_rec, stream));
	flags = pt_wire_get32(p + PT_OFF(pt_log_rec, flags));
	check = pt_wire_get32(p + PT_OFF(pt_log_rec, check));
	if (length > PT_LOG_FRAME_MAX ||
	    check != pt_log_check(length, stream, flags))
		return LOG_BAD;
	*need = (size_t)PT_LOG_REC_HDR + length + PT_LOG_TRAILER;
	if (n < *need)
		return LOG_SHORT;
	/* A writer killed inside its write leaves a header that is right
	 * and a frame cut short: only the trailer tells. */
	if (pt_wire_get32(p + *need - PT_LOG_TRAILER) != check)
		return LOG_BAD;
	return LOG_WHOLE;
}

/*
 * The first position of the buffer at or after from where a whole record
 * starts, or (unless whole_only) where one may start whose rest is not
 * read yet; r->len if there is none.
 */
static size_t log_scan(const struct pt_log_reader *r, size_t from,
		       int whole_only)
{
	const unsigned char *p;
	enum log_state s;
	size_t need;

	while (from < r->len) {
		p = memchr(r->buf + from, log_magic[0], r->len - from);
		if (!p)
			break;
		from = (size_t)(p - r->buf);
		s = log_classify(p, r->len - from, &need);
		if (s == LOG_WHOLE || (s == LOG_SHORT && !whole_only))
			return from;
		from++;
	}
	return r->len;
}

static void log_consume(struct pt_log_reader *r, size_t n)
{
	r->start += n;
	r->off += n;
	r->wait_since = 0;      /* a new record: its wait starts afresh */
}

/* Steps over n damaged bytes; one stretch of them, however many drains
 * it takes to step over, is one resync. */
static void log_lose(struct pt_log_reader *r, size_t n)
{
	if (!n)
		return;
	if (!r->in_loss)
		r->st.resyncs++;
	r->in_loss = 1;
	r->st.lost_bytes += n;
	log_consume(r, n);
}

/*
 * Appends up to want bytes of the file, from the buffer's end on, to the
 * buffer.  Returns the bytes read (0 at the end of the file), or -1 with
 * errno set.
 */
static ssize_t log_read(struct pt_log_reader *r, size_t want)
{
	size_t got = 0, cap;
	unsigned char *b;
	ssize_t n;

	if (r->cap - r->len < want && r->start) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
	}
	if (r->cap - r->len < want) {
		cap = (r->len + want + LOG_BUF_STEP - 1) / LOG_BUF_STEP *
		      LOG_BUF_STEP;
		b = realloc(r->buf, cap);
		if (!b) {
			errno = ENOMEM;
			return -1;
		}
		r->buf = b;
		r->cap = cap;
	}
	while (got < want) {
		n = pread(r->fd, r->buf + r->len + got, want - got,
			  (off_t)(r->off + (r->len - r->start) + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !got)
			return -1;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	r->len += got;
	r->st.bytes_read += got;
	return (ssize_t)got;
}

/* Gives consumed bytes back to tmpfs, a page-aligned range below the
 * read position, so that a long run's log does not stay in memory. */
static void log_punch(struct pt_log_reader *r)
{
	uint64_t to = r->off & ~(uint64_t)(LOG_PAGE - 1);
	int e = errno;

	if (to < r->punched || to - r->punched < PT_LOG_PUNCH_BYTES)
		return;
	/* Where it fails (not tmpfs, an old kernel) the log only keeps its
	 * memory: nothing to report, and nothing to retry. */
	(void)fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)r->punched, (off_t)(to - r->punched));
	r->punched = to;
	errno = e;
}

/* Shrinks a buffer that was grown for a large record once it is mostly
 * empty. */
static void log_trim(struct pt_log_reader *r)
{
	size_t left = r->len - r->start;
	unsigned char *b;

	if (r->cap <= LOG_BUF_KEEP || left > LOG_BUF_KEEP / 2)
		return;
	memmove(r->buf, r->buf + r->start, left);
	r->len = left;
	r->start = 0;
	b = realloc(r->buf, LOG_BUF_KEEP / 2);
	if (b) {
		r->buf = b;
		r->cap = LOG_BUF_KEEP / 2;
	}
}

void pt_log_attach(struct pt_log_reader *r, int fd)
{
	memset(r, 0, sizeof *r);
	r->fd = fd;
}

int pt_log_create(struct pt_log_reader *r)
{
	int fd, e;

	fd = memfd_create("proftrace-log", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	/* Programs open it through /proc, which goes by the mode: nobody
	 * but the collector's user may.  Sealed against shrinking, so that
	 * nobody can move the end of the file below what was read, and
	 * appends after that would never be seen. */
	if (fchmod(fd, 0600) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	pt_log_attach(r, fd);
	return fd;
}

int pt_log_drain(struct pt_log_reader *r, uint64_t now_ns, int final,
		 pt_log_deliver_fn deliver, void *ctx)
{
	const unsigned char *p;
	uint64_t size, limit, end, stream;
	size_t avail, need, want, q;
	uint32_t flags;
	enum log_state s;
	struct stat st;
	int taken = 0, rc = 0, e;
	ssize_t n;

	r->more = 0;
	if (fstat(r->fd, &st) < 0)
		return -1;
	size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	/* The size is taken once: what is appended during the drain waits
	 * for the next, so that writers faster than the reader cannot keep
	 * it here, not even in the final drain. */
	end = r->off + (r->len - r->start);
	limit = size;
	if (!final && limit > end && limit - end > PT_LOG_DRAIN_MAX)
		limit = end + PT_LOG_DRAIN_MAX;
	for (;;) {
		avail = r->len - r->start;
		need = PT_LOG_REC_HDR;
		s = avail ? log_classify(r->buf + r->start, avail, &need) :
			    LOG_SHORT;
		if (s == LOG_WHOLE) {
			p = r->buf + r->start;
			stream = pt_wire_get64(p + PT_OFF(pt_log_rec, stream));
			flags = pt_wire_get32(p + PT_OFF(pt_log_rec, flags));
			if (deliver(ctx, stream, flags, p + PT_LOG_REC_HDR,
				    need - PT_LOG_REC_HDR - PT_LOG_TRAILER) == 0) {
				r->st.frames++;
				taken += taken < INT_MAX;
			} else {
				r->st.refused++;
			}
			r->in_loss = 0;
			log_consume(r, need);
			continue;
		}
		if (s == LOG_BAD) {
			log_lose(r, log_scan(r, r->start + 1, 0) - r->start);
			continue;
		}
		/* The record is not all in the buffer: read on if this drain
		 * may, a chunk at least, its whole rest if the file has it. */
		end = r->off + avail;
		if (end < limit) {
			want = need > avail ? need - avail : 0;
			if (want < PT_LOG_READ_CHUNK)
				want = PT_LOG_READ_CHUNK;
			if (want > limit - end)
				want = (size_t)(limit - end);
			n = log_read(r, want);
			if (n < 0) {
				rc = -1;
				break;
			}
			if (n == 0)     /* shrunk since fstat: not our memfd */
				size = limit = end;
			continue;
		}
		if (end < size) {
			r->more = 1;
			break;
		}
		if (!avail)
			break;
		/* At the end of the file: the record may still be being
		 * written (its size is raised page by page).  Once it has
		 * had its grace, something appended after it proves it was
		 * cut short, since appends never interleave. */
		if (!final) {
			if (!r->wait_since) {
				r->wait_since = now_ns ? now_ns : 1;
				break;
			}
			if (now_ns - r->wait_since < PT_LOG_GRACE_NS)
				break;
		}
		q = log_scan(r, r->start + 1, 1);
		if (q == r->len && !final) {
			/* Nothing after it yet: look again a grace later,
			 * not on every drain, as the scan is over all of it. */
			r->wait_since = now_ns ? now_ns : 1;
			break;
		}
		log_lose(r, q - r->start);
	}
	e = errno;
	log_punch(r);
	log_trim(r);
	errno = e;
	return rc < 0 ? -1 : taken;
}

void pt_log_close(struct pt_log_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->start = r->len = r->cap = 0;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}
