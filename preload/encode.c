/*
 * Laying out records as wire frames, and getting large ones across.
 *
 * The common frame (a few hundred bytes) is built in a stack buffer and
 * sent as one message.  A frame that does not fit (a compiler line of many
 * KiB, a 1 MiB argument list) is measured first, then either deflated in
 * one malloc'd piece (owner context: zlib is dlopen()ed here, and only
 * here, so that small processes never map it) or, in a vfork child where
 * nothing may be allocated and in a fork child, streamed raw through the
 * stack buffer.  A fork child of a threaded program may hold, as inherited,
 * the loader's lock of a thread that does not exist there, and
 * dlopen would wait for ever (doc/design.md, pitfall 13).  Either
 * way it travels on a connection of its own, so its messages cannot
 * interleave with another thread's frames.
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

#define PT_SMALL_FRAME 4096             /* stack buffer, hence the size */
#define PT_DEFLATE_MIN 1024             /* below this, deflate saves nothing */

/*
 * An output buffer that either overflows (counting what would not fit) or
 * hands each full buffer to a sink.
 */
struct enc {
	unsigned char *buf;
	size_t cap, len;
	size_t total;                   /* bytes emitted so far, all told */
	int overflow;
	const struct pt_chan *sink;     /* streaming: send full buffers here */
	int failed;
};

static void enc_put(struct enc *e, const void *p, size_t n)
{
	const unsigned char *s = p;

	e->total += n;
	while (n && !e->overflow) {
		size_t k;

		if (e->len == e->cap) {
			if (!e->sink || pt_chan_write(e->sink, e->buf, e->len) < 0) {
				e->overflow = 1;
				e->failed |= e->sink != NULL;
				return;
			}
			e->len = 0;
		}
		k = e->cap - e->len < n ? e->cap - e->len : n;
		pt_memcpy(e->buf + e->len, s, k);
		e->len += k;
		s += k;
		n -= k;
	}
}

static void enc_item(struct enc *e, enum pt_tag tag, const char *s)
{
	unsigned char t = (unsigned char)tag;

	enc_put(e, &t, 1);
	enc_put(e, s, pt_strlen(s) + 1);
}

/*
 * The CWD item, pt_sys_getcwd() writing straight into the frame: a PATH_MAX
 * buffer of its own would take a page of stack more in every process, and
 * a page fault costs as much as a dozen system calls (doc/performance.md).
 * When it does not fit, the frame is a large one, and send_large() asks
 * again with a buffer.
 */
static void enc_cwd(struct enc *e)
{
	char *dst;

	if (e->overflow || e->sink || e->cap - e->len < 2) {
		e->overflow = 1;
		return;
	}
	dst = (char *)e->buf + e->len + 1;
	if (pt_sys_getcwd(dst, e->cap - e->len - 1)) {
		size_t n = pt_strlen(dst) + 1;

		e->buf[e->len] = PT_TAG_CWD;
		e->len += 1 + n;
		e->total += 1 + n;
	} else if (errno == ERANGE) {
		e->overflow = 1;
	}                               /* else no working directory: no item */
}

static void emit_body(struct enc *e, const struct pt_body *b)
{
	char *const *p;
	size_t i;

	enc_put(e, b->fixed, b->fixed_len);
	if (b->exe)
		enc_item(e, PT_TAG_EXE, b->exe);
	if (b->path)
		enc_item(e, PT_TAG_PATH, b->path);
	for (p = b->argv; p && *p; p++)
		enc_item(e, PT_TAG_ARG, *p);
	if (b->cwd)
		enc_item(e, PT_TAG_CWD, b->cwd);
	else if (b->want_cwd)
		enc_cwd(e);
	for (p = b->envp; p && *p; p++)
		if (pt_env_recorded(*p))
			enc_item(e, PT_TAG_ENV, *p);
	if (b->cpu_before)
		enc_item(e, PT_TAG_CPU_BEFORE, b->cpu_before);
	if (b->err)
		enc_item(e, PT_TAG_ERRNO, b->err);
	for (i = 0; i < b->nitems; i++) {
		unsigned char t = (unsigned char)b->items[i].tag;

		enc_put(e, &t, 1);
		enc_put(e, b->items[i].s, b->items[i].n);
		enc_put(e, "", 1);
	}
}

static void put_header(unsigned char *h, const struct pt_chan *ch,
		       const struct pt_body *b, uint16_t flags, uint32_t len,
		       uint32_t raw_len, uint64_t t)
{
	struct pt_frame_header fh = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = b->type, .flags = flags, .pid = (uint32_t)ch->pid,
		.length = len, .raw_length = raw_len,
		.origin = ch->owner ? 0 : (uint32_t)pt.owner, .time_ns = t,
	};

	pt_wire_put_header(h, &fh);
}

/* zlib, loaded on first need.  Owner context only (dlopen allocates). */
typedef int (*compress2_fn)(unsigned char *, unsigned long *,
			    const unsigned char *, unsigned long, int);
typedef unsigned long (*bound_fn)(unsigned long);

static int load_zlib(compress2_fn *c, bound_fn *b)
{
	static compress2_fn zc;
	static bound_fn zb;
	static int tried;

	if (!tried) {
		void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);

		tried = 1;
		if (h) {
			zc = (compress2_fn)dlsym(h, "compress2");
			zb = (bound_fn)dlsym(h, "compressBound");
		}
	}
	*c = zc;
	*b = zb;
	return zc && zb ? 0 : -1;
}

/* Send a whole frame held in memory over a connection of its own. */
static int send_alone(struct pt_chan *ch, const unsigned char *frame, size_t n)
{
	struct pt_chan aux;
	size_t off;
	int rc = 0;

	if (ch->spool)          /* a file takes any size in one write */
		return pt_chan_write(ch, frame, n);
	if (pt_conn_open(&aux, PT_HELLO_AUX, 0, ch->pid) < 0)
		return -1;
	for (off = 0; off < n && rc == 0; off += PT_MSG_MAX) {
		size_t k = n - off < PT_MSG_MAX ? n - off : PT_MSG_MAX;

		rc = pt_chan_write(&aux, frame + off, k);
	}
	pt_chan_put(&aux);
	return rc;
}

/* Owner context: build the large frame in memory, deflated if that helps. */
static int send_large_owned(struct pt_chan *ch, const struct pt_body *b,
			    size_t raw, uint64_t t)
{
	struct enc e = { 0 };
	compress2_fn zc;
	bound_fn zb;
	unsigned char *frame, *z = NULL;
	int rc;

	frame = malloc(32 + raw);
	if (!frame)
		return -1;
	e.buf = frame + 32;
	e.cap = raw;
	emit_body(&e, b);
	put_header(frame, ch, b, 0, (uint32_t)raw, (uint32_t)raw, t);
	if (raw >= PT_DEFLATE_MIN && load_zlib(&zc, &zb) == 0) {
		unsigned long zlen = zb(raw);

		z = malloc(32 + zlen);
		if (z && zc(z + 32, &zlen, frame + 32, raw, 6) == 0 && zlen < raw) {
			put_header(z, ch, b, PT_FRAME_DEFLATED, (uint32_t)zlen,
				   (uint32_t)raw, t);
			free(frame);
			frame = z;
			raw = zlen;
			z = NULL;
		}
	}
	rc = send_alone(ch, frame, 32 + raw);
	free(z);
	free(frame);
	return rc;
}

/* Foreign context: stream the frame raw through a stack buffer. */
static int send_large_streamed(struct pt_chan *ch, const struct pt_body *b,
			       size_t raw, uint64_t t)
{
	unsigned char buf[PT_SMALL_FRAME];
	struct pt_chan aux = *ch;
	struct enc e = { .buf = buf, .cap = sizeof buf };
	int rc;

	if (!ch->spool && pt_conn_open(&aux, PT_HELLO_AUX, 0, ch->pid) < 0)
		return -1;
	e.sink = &aux;
	put_header(buf, ch, b, 0, (uint32_t)raw, (uint32_t)raw, t);
	e.len = 32;
	emit_body(&e, b);
	rc = e.failed ? -1 : pt_chan_write(&aux, buf, e.len);
	if (!ch->spool)
		pt_chan_put(&aux);
	return rc;
}

/*
 * A frame too large for the stack buffer, a rare path that may take more
 * stack: measure it, with the working directory in a buffer of its own so
 * that both passes see the same one, and send it as one piece.
 */
static __attribute__((noinline)) int send_large(struct pt_chan *ch,
						const struct pt_body *b,
						uint64_t t)
{
	char cwd[PATH_MAX];
	struct pt_body full = *b;
	struct enc count = { 0 };       /* no room: counts only */

	if (b->want_cwd && !b->cwd) {
		full.want_cwd = 0;
		full.cwd = pt_sys_getcwd(cwd, sizeof cwd);
	}
	emit_body(&count, &full);
	if (count.total > PT_FRAME_MAX)
		return -1;              /* the collector would refuse it */
	if (ch->owner && !pt.forked)
		return send_large_owned(ch, &full, count.total, t);
	return send_large_streamed(ch, &full, count.total, t);
}

size_t pt_encode_record(const struct pt_chan *ch, const struct pt_body *b,
			uint64_t t, unsigned char *out, size_t cap)
{
	struct enc e = { .buf = out + 32, .cap = cap - 32 };
	int saved = errno;

	emit_body(&e, b);
	errno = saved;
	if (e.overflow)
		return 0;
	put_header(out, ch, b, 0, (uint32_t)e.len, (uint32_t)e.len, t);
	return 32 + e.len;
}

int pt_send_record(struct pt_chan *ch, const struct pt_body *b, uint64_t t)
{
	unsigned char buf[PT_SMALL_FRAME];
	struct enc e = { .buf = buf + 32, .cap = sizeof buf - 32 };
	int saved = errno, rc;

	if (ch->fd < 0)
		return -1;
	emit_body(&e, b);
	if (!e.overflow) {
		put_header(buf, ch, b, 0, (uint32_t)e.len, (uint32_t)e.len, t);
		rc = pt_chan_write(ch, buf, 32 + e.len);
	} else {
		rc = send_large(ch, b, t);
	}
	errno = saved;
	return rc;
}
