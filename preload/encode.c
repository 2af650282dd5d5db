/*
 * Laying out records as wire frames (include/proftrace/wire.h), into
 * memory only: this file sends nothing (conn.c does).
 *
 * The common frame (a few hundred bytes) is laid out in the caller's
 * buffer.  A frame that does not fit (a compiler line of many KiB, a 1 MiB
 * argument list) is measured first, then either laid out in one malloc'd
 * piece and deflated (owner context: zlib is dlopen()ed here, and only
 * here, so that small processes never map it) or, in a vfork child where
 * nothing may be allocated and in a fork child, streamed raw through a
 * buffer of the caller's, each full buffer handed to a sink.  A fork child
 * of a threaded program may hold, as inherited, the loader's lock of a
 * thread that does not exist there, and dlopen would wait for ever
 * (doc/design.md, pitfall 13).
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
	pt_encode_sink *sink;           /* streaming: full buffers go here */
	void *sink_arg;
	int failed;
};

static void enc_put(struct enc *e, const void *p, size_t n)
{
	const unsigned char *s = p;

	e->total += n;
	while (n && !e->overflow) {
		size_t k;

		if (e->len == e->cap) {
			if (!e->sink || e->sink(e->sink_arg, e->buf, e->len) < 0) {
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
 * When it does not fit, the frame is a large one, and its sender asks
 * again with a buffer (pt_encode_body_size).
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

size_t pt_encode_body_size(const struct pt_body *b)
{
	struct enc count = { 0 };       /* no room: counts only */

	emit_body(&count, b);
	return count.total;
}

unsigned char *pt_encode_alloc(const struct pt_chan *ch,
			       const struct pt_body *b, size_t raw,
			       uint64_t t, size_t *len)
{
	struct enc e = { 0 };
	compress2_fn zc;
	bound_fn zb;
	unsigned char *frame, *z;

	frame = malloc(PT_FRAME_HDR + raw);
	if (!frame)
		return NULL;
	e.buf = frame + PT_FRAME_HDR;
	e.cap = raw;
	emit_body(&e, b);
	put_header(frame, ch, b, 0, (uint32_t)raw, (uint32_t)raw, t);
	*len = PT_FRAME_HDR + raw;
	if (raw >= PT_DEFLATE_MIN && load_zlib(&zc, &zb) == 0) {
		unsigned long zlen = zb(raw);

		z = malloc(PT_FRAME_HDR + zlen);
		if (z && zc(z + PT_FRAME_HDR, &zlen, frame + PT_FRAME_HDR, raw, 6) == 0 && zlen < raw) {
			put_header(z, ch, b, PT_FRAME_DEFLATED, (uint32_t)zlen,
				   (uint32_t)raw, t);
			free(frame);
			*len = PT_FRAME_HDR + zlen;
			return z;
		}
		free(z);
	}
	return frame;
}

int pt_encode_stream(const struct pt_chan *ch, const struct pt_body *b,
		     size_t raw, uint64_t t, unsigned char *buf, size_t cap,
		     pt_encode_sink *sink, void *arg)
{
	struct enc e = { .buf = buf, .cap = cap, .sink = sink,
			 .sink_arg = arg };

	put_header(buf, ch, b, 0, (uint32_t)raw, (uint32_t)raw, t);
	e.len = PT_FRAME_HDR;
	emit_body(&e, b);
	return e.failed ? -1 : sink(arg, buf, e.len);
}

size_t pt_encode_record(const struct pt_chan *ch, const struct pt_body *b,
			uint64_t t, unsigned char *out, size_t cap)
{
	struct enc e = { .buf = out + PT_FRAME_HDR, .cap = cap - PT_FRAME_HDR };
	int saved = errno;

	emit_body(&e, b);
	pt_errno_restore(saved);
	if (e.overflow)
		return 0;
	put_header(out, ch, b, 0, (uint32_t)e.len, (uint32_t)e.len, t);
	return PT_FRAME_HDR + e.len;
}
