/*
 * Unit tests of the capture format: what the writer writes, the reader
 * gives back exactly, in format version 2 as in version 1.
 *
 *   test-capture            the tests below
 *   test-capture CAPTURE [OUT]  round-trip a real capture through the
 *                           writer and compare every event (for captures
 *                           made by older or other writers); OUT keeps
 *                           the copy
 *
 * The records cover what the encoding treats specially: every frame type,
 * a HELLO repeating its pid's EXEC or SPAWN (references), one repeating
 * only part of it, frames the compact form cannot hold (deflated flag,
 * another wire version, a short fixed part, tags of 0x80 and above), times
 * and pids going backwards, connection ids that share a table slot, a
 * frame larger than the staging buffer.  Then every prefix of the
 * uncompressed stream, and every byte of it damaged: the reader delivers
 * exactly the intact records before the damage and then says where.
 * Below that, the gzip reader (gunzip.c) against zlib itself: members in
 * a row, trailing bytes, plain and empty files, and on a cut or flipped
 * file every byte zlib inflates before it stops.
 */
#include <endian.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/gunzip.h"
#include "capture/read.h"
#include "capture/v3.h"
#include "capture/write.h"
#include "proftrace/wire.h"
#include "proftrace/wire.h"

static int failures;
static char dir[64];

#define CHECK(cond) check((cond), #cond, __LINE__)

static int check(int ok, const char *what, int line)
{
	if (!ok) {
		printf("test-capture.c:%d: FAIL: %s\n", line, what);
		failures++;
	}
	return ok;
}

/* ---- the records a test writes and expects back ---- */

struct rec {
	unsigned kind;
	uint64_t conn, recv;
	uint32_t pid, uid;
	unsigned char *data;
	size_t len;
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static void add(struct recs *rs, unsigned kind, uint64_t conn, uint32_t pid,
		uint32_t uid, uint64_t recv, const void *data, size_t len)
{
	struct rec *r;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 64;
		rs->v = realloc(rs->v, rs->cap * sizeof *rs->v);
	}
	r = &rs->v[rs->n++];
	r->kind = kind;
	r->conn = conn;
	r->pid = pid;
	r->uid = uid;
	r->recv = recv;
	r->data = malloc(len + 1);
	if (len)
		memcpy(r->data, data, len);
	r->len = len;
}

static void free_recs(struct recs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		free(rs->v[i].data);
	free(rs->v);
	memset(rs, 0, sizeof *rs);
}

/* A frame being built. */
struct fb {
	unsigned char *buf;
	size_t len, cap;
};

static void fb_add(struct fb *f, const void *p, size_t n)
{
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2;
		f->buf = realloc(f->buf, f->cap);
	}
	memcpy(f->buf + f->len, p, n);
	f->len += n;
}

static void fb_start(struct fb *f, unsigned type, uint32_t pid, uint64_t t)
{
	unsigned char h[32] = { 0 };

	pt_wire_put32(h, PT_WIRE_MAGIC);
	h[4] = PT_WIRE_VERSION;
	h[5] = (unsigned char)type;
	pt_wire_put32(h + 8, pid);
	pt_wire_put64(h + 24, t);
	f->len = 0;
	fb_add(f, h, sizeof h);
}

static void fb_u32(struct fb *f, uint32_t v)
{
	unsigned char b[4];

	pt_wire_put32(b, v);
	fb_add(f, b, 4);
}

static void fb_u64(struct fb *f, uint64_t v)
{
	unsigned char b[8];

	pt_wire_put64(b, v);
	fb_add(f, b, 8);
}

static void fb_str(struct fb *f, unsigned tag, const char *s)
{
	unsigned char t = (unsigned char)tag;

	fb_add(f, &t, 1);
	fb_add(f, s, strlen(s) + 1);
}

static void fb_end(struct fb *f)
{
	pt_wire_put32(f->buf + 12, (uint32_t)(f->len - 32));
	pt_wire_put32(f->buf + 16, (uint32_t)(f->len - 32));
}

static void hello(struct fb *f, uint32_t pid, uint32_t ppid, uint64_t t,
		  const char *exe, const char *const *argv, const char *cwd)
{
	fb_start(f, PT_REC_HELLO, pid, t);
	fb_u32(f, ppid);
	fb_u32(f, 1000);
	fb_u32(f, PT_HELLO_IMAGE);
	fb_u32(f, 0);
	fb_u64(f, t + 1700000000000000000ull + (t % 997));
	fb_u64(f, t - 12345);
	if (exe)
		fb_str(f, PT_TAG_EXE, exe);
	for (; argv && *argv; argv++)
		fb_str(f, PT_TAG_ARG, *argv);
	if (cwd)
		fb_str(f, PT_TAG_CWD, cwd);
	fb_str(f, PT_TAG_ENV, "CI_JOB_ID=7");
	fb_end(f);
}

static void exec_like(struct fb *f, unsigned type, uint32_t pid, uint32_t a,
		      uint64_t t, const char *path, const char *const *argv,
		      const char *cwd)
{
	fb_start(f, type, pid, t);
	fb_u32(f, a);
	fb_u32(f, type == PT_REC_SPAWN ? PT_CALL_POSIX_SPAWN : PT_CALL_EXECVE);
	if (path)
		fb_str(f, PT_TAG_PATH, path);
	for (; argv && *argv; argv++)
		fb_str(f, PT_TAG_ARG, *argv);
	if (cwd)
		fb_str(f, PT_TAG_CWD, cwd);
	fb_end(f);
}

static void reap(struct fb *f, uint32_t pid, uint32_t child, int32_t status,
		 uint64_t t, uint64_t ut, uint64_t st, uint64_t rss)
{
	fb_start(f, PT_REC_REAP, pid, t);
	fb_u32(f, child);
	fb_u32(f, (uint32_t)status);
	fb_u32(f, 1);
	fb_u32(f, 0);
	fb_u64(f, ut);
	fb_u64(f, st);
	fb_u64(f, rss);
	fb_end(f);
}

static void exit_frame(struct fb *f, uint32_t pid, int32_t status, uint64_t t)
{
	fb_start(f, PT_REC_EXIT, pid, t);
	fb_u32(f, (uint32_t)status);
	fb_u32(f, PT_EXIT_RETURN);
	fb_u64(f, 1234);
	fb_u64(f, 567);
	fb_u64(f, 8910);
	fb_end(f);
}

#define V(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define T(ms) (5000000000000ull + (uint64_t)(ms) * 1000000ull)

static void frame(struct recs *rs, struct fb *f, uint64_t conn, uint32_t peer,
		  uint64_t recv)
{
	add(rs, PT_CAP_FRAME, conn, peer, 1000, recv, f->buf, f->len);
}

/* A small build: make, a forked sh that execs gcc, a spawned cc1. */
static void small_build(struct recs *rs, int big)
{
	static const char meta[] = "host\0box\0command\0make\0";
	const char *gcc[] = { "gcc", "-O2", "-c", "x.c", "-o", "x.o", NULL };
	const char *cc1[] = { "cc1", "-quiet", "x.c", "-o", "/tmp/x.s", NULL };
	struct fb f = { 0 };
	uint64_t one = htole64(1);

	add(rs, PT_CAP_META, 0, 0, 0, T(0), meta, sizeof meta);
	add(rs, PT_CAP_CONNECT, 1, 100, 1000, T(1), NULL, 0);
	hello(&f, 100, 1, T(1), "/usr/bin/make", V("make", "-j2"), "/src");
	frame(rs, &f, 1, 100, T(1) + 10);
	exec_like(&f, PT_REC_FORK, 100, 101, T(2), NULL, NULL, NULL);
	frame(rs, &f, 1, 100, T(2) + 10);
	/* The forked child execs gcc on its parent's connection. */
	exec_like(&f, PT_REC_EXEC, 101, 100, T(3), "/usr/bin/gcc", gcc, "/src");
	frame(rs, &f, 1, 100, T(3) + 10);
	add(rs, PT_CAP_CONNECT, 2, 101, 1000, T(4), NULL, 0);
	hello(&f, 101, 100, T(4), "/usr/bin/gcc", gcc, "/src");
	frame(rs, &f, 2, 101, T(4) + 10);
	exec_like(&f, PT_REC_SPAWN, 101, 102, T(5), "/usr/lib/cc1", cc1, NULL);
	frame(rs, &f, 2, 101, T(5) + 10);
	/* A connection id in the same table slot as 2, interleaved. */
	add(rs, PT_CAP_CONNECT, 2 + PT_V3_CONN_SLOTS, 102, 1000, T(6), NULL,
	    0);
	/* The same argv but another cwd: only the args are referenced. */
	hello(&f, 102, 101, T(6), "/usr/lib/cc1", cc1, "/elsewhere");
	frame(rs, &f, 2 + PT_V3_CONN_SLOTS, 102, T(6) + 10);
	exit_frame(&f, 102, 0, T(9));
	frame(rs, &f, 2 + PT_V3_CONN_SLOTS, 102, T(9) + 10);
	/* Times going backwards (another CPU's clock read earlier). */
	reap(&f, 101, 102, 0, T(8), 100, 20, 3000);
	frame(rs, &f, 2, 101, T(9) + 20);
	add(rs, PT_CAP_EOF, 2 + PT_V3_CONN_SLOTS, 102, 1000, T(9) + 30, NULL,
	    0);
	/* A HELLO whose args differ from its reference by one. */
	exec_like(&f, PT_REC_SPAWN, 101, 103, T(10), "/usr/bin/as",
		  V("as", "-o", "x.o"), NULL);
	frame(rs, &f, 2, 101, T(10) + 10);
	add(rs, PT_CAP_CONNECT, 3, 103, 1000, T(11), NULL, 0);
	hello(&f, 103, 101, T(11), "/usr/bin/as", V("as", "-o", "y.o"),
	      "/src");
	frame(rs, &f, 3, 103, T(11) + 10);
	/* ARG items not in one run: stored as they are. */
	fb_start(&f, PT_REC_HELLO, 103, T(11) + 5);
	fb_u32(&f, 101); fb_u32(&f, 1000); fb_u32(&f, PT_HELLO_FORK);
	fb_u32(&f, 7); fb_u64(&f, 3); fb_u64(&f, T(12));
	fb_str(&f, PT_TAG_ARG, "as"); fb_str(&f, PT_TAG_CWD, "/src");
	fb_str(&f, PT_TAG_ARG, "-o"); fb_str(&f, PT_TAG_ARG, "x.o");
	fb_end(&f);
	frame(rs, &f, 3, 103, T(11) + 20);
	/* A tag of 0x80 and above: the tail must be kept as it is. */
	fb_start(&f, PT_REC_EXEC_FAILED, 103, T(12));
	fb_u32(&f, 2); fb_u32(&f, PT_CALL_EXECVP);
	fb_str(&f, 0x80, "odd"); fb_str(&f, 0xff, "");
	fb_end(&f);
	frame(rs, &f, 3, 103, T(12) + 10);
	/* A HELLO with a tag of 0x80 after its pid was named by a SPAWN. */
	exec_like(&f, PT_REC_SPAWN, 101, 104, T(13), "/usr/bin/as",
		  V("as"), NULL);
	frame(rs, &f, 2, 101, T(13) + 10);
	hello(&f, 104, 101, T(13) + 1, "/usr/bin/as", V("as"), "/src");
	f.len--;                        /* the ENV item's NUL... */
	fb_str(&f, 0x81, "x");          /* ...becomes part of a longer one */
	fb_end(&f);
	frame(rs, &f, 3, 103, T(13) + 20);
	/* A frame the compact form cannot hold: stored raw. */
	{
		unsigned char z[128];
		uLongf zn = sizeof z;

		exit_frame(&f, 103, 1, T(14));
		if (compress2(z, &zn, f.buf + 32, f.len - 32, 9) != Z_OK)
			abort();
		f.len = 32;
		fb_add(&f, z, zn);
		f.buf[6] = PT_FRAME_DEFLATED;
		pt_wire_put32(f.buf + 12, (uint32_t)zn);
		frame(rs, &f, 3, 103, T(14) + 10);
	}
	/* A type from the future, origin set, negative status, pid wrap. */
	fb_start(&f, 42, 4000000000u, T(15));
	pt_wire_put32(f.buf + 20, 17);
	fb_str(&f, 9, "future");
	fb_end(&f);
	frame(rs, &f, 3, 103, T(15) + 10);
	exit_frame(&f, 103, -1, T(16));
	pt_wire_put32(f.buf + 20, 103);
	frame(rs, &f, 3, 7, T(16) + 10);        /* another peer */
	add(rs, PT_CAP_LOSS, 3, 7, 1000, T(16) + 20, &one, sizeof one);
	add(rs, PT_CAP_DROP, 3, 7, 0, T(16) + 30, "why\0", 4);
	add(rs, PT_CAP_EOF, 1, 100, 1000, T(17), NULL, 0);
	add(rs, PT_CAP_EOF, 2, 101, 1000, T(17), NULL, 0);
	/* Unknown record kind: kept. */
	add(rs, 9, 5, 1, 2, 3, "x", 1);
	if (big) {
		/* Larger than the writer's staging buffer (128 KiB). */
		char arg[1000];
		size_t i;

		memset(arg, 'a', sizeof arg - 1);
		arg[sizeof arg - 1] = 0;
		exec_like(&f, PT_REC_EXEC, 200, 1, T(20), "/bin/big", NULL,
			  "/");
		for (i = 0; i < 300; i++)
			fb_str(&f, PT_TAG_ARG, arg);
		fb_end(&f);
		frame(rs, &f, 4, 200, T(20));
		hello(&f, 200, 1, T(21), "/bin/big", NULL, "/");
		f.len -= sizeof "CI_JOB_ID=7" + 1;
		for (i = 0; i < 300; i++)
			fb_str(&f, PT_TAG_ARG, arg);
		fb_end(&f);
		frame(rs, &f, 5, 200, T(21));
	}
	free(f.buf);
}

/* ---- writing and reading ---- */

static void write_v2(const char *path, const struct recs *rs)
{
	struct pt_writer *w = pt_writer_open(path, 1);
	size_t i;

	if (!w)
		exit(2);
	for (i = 0; i < rs->n; i++) {
		const struct rec *r = &rs->v[i];

		CHECK(pt_writer_add(w, r->kind, r->conn, r->pid, r->uid,
				    r->recv, r->data, r->len) == 0);
	}
	CHECK(pt_writer_close(w) == 0);
}

static void write_v1(const char *path, const struct recs *rs)
{
	gzFile gz = gzopen(path, "wb1");
	unsigned char h[40];
	size_t i;

	memcpy(h, PT_CAP_FILE_MAGIC, 8);
	pt_wire_put32(h + 8, 1);
	pt_wire_put32(h + 12, 16);
	gzwrite(gz, h, 16);
	for (i = 0; i < rs->n; i++) {
		const struct rec *r = &rs->v[i];

		memset(h, 0, sizeof h);
		pt_wire_put32(h, PT_CAP_RECORD_MAGIC);
		h[4] = (unsigned char)r->kind;
		pt_wire_put32(h + 8, (uint32_t)r->len);
		pt_wire_put32(h + 12, r->pid);
		pt_wire_put32(h + 16, r->uid);
		pt_wire_put64(h + 24, r->conn);
		pt_wire_put64(h + 32, r->recv);
		gzwrite(gz, h, sizeof h);
		if (r->len)
			gzwrite(gz, r->data, (unsigned)r->len);
	}
	gzclose(gz);
}

/* The reader's view of a record equals what was written (frames' receive
 * times are not kept in version 2). */
static int same(const struct pt_cap_event *ev, const struct rec *r, int v2)
{
	return ev->hdr.kind == r->kind && ev->hdr.conn_id == r->conn &&
	       ev->hdr.peer_pid == r->pid && ev->hdr.peer_uid == r->uid &&
	       (ev->hdr.recv_ns == r->recv || (v2 && r->kind == PT_CAP_FRAME)) &&
	       ev->hdr.length == r->len && ev->hdr.magic == PT_CAP_RECORD_MAGIC &&
	       (!r->len || !memcmp(ev->data, r->data, r->len)) &&
	       (r->kind != PT_CAP_FRAME || ev->rec.hdr.type == r->data[5]);
}

/*
 * Read path: returns the reader's last result (0 clean end, -1 damage) and
 * sets *n to the events delivered that equal rs's, in order, up to the
 * first that does not.
 */
static int read_back(const char *path, const struct recs *rs, int v2,
		     size_t *n)
{
	struct pt_reader *r = pt_reader_open(path);
	struct pt_cap_event ev;
	int rc, differs = 0;

	*n = 0;
	if (!r)
		return -2;
	while ((rc = pt_reader_next(r, &ev)) == 1) {
		if (!differs && *n < rs->n && same(&ev, &rs->v[*n], v2))
			++*n;
		else
			differs = 1;
	}
	pt_reader_close(r);
	return rc;
}

static void roundtrip(int big)
{
	struct recs rs = { 0 };
	char p1[128], p2[128];
	size_t n;

	small_build(&rs, big);
	snprintf(p1, sizeof p1, "%s/v1.ptcap", dir);
	snprintf(p2, sizeof p2, "%s/v2.ptcap", dir);
	write_v1(p1, &rs);
	write_v2(p2, &rs);
	CHECK(read_back(p1, &rs, 0, &n) == 0);
	CHECK(n == rs.n);
	CHECK(read_back(p2, &rs, 1, &n) == 0);
	CHECK(n == rs.n);
	free_recs(&rs);
}

/*
 * deflate's level follows the input: 6 while it is quiet, 2 from the
 * moment 2 MB came in since the last flush, 6 again after a quiet flush.
 * The switches happen mid-stream; every record must still read back.
 */
static void levels(void)
{
	struct recs rs = { 0 };
	struct pt_writer *w;
	struct fb f = { 0 };
	char path[128], arg[40];
	size_t i, n, from = 0;
	int k;

	snprintf(path, sizeof path, "%s/levels.ptcap", dir);
	w = pt_writer_open(path, 1);
	if (!w)
		exit(2);
	/* The last busy phase ends at the close, with no flush between. */
	for (k = 0; k < 6; k++) {
		/* Quiet, busy (60,000 HELLOs: 11.5 MB as written), quiet... */
		size_t count = k % 2 ? 60000 : 10;

		for (i = 0; i < count; i++) {
			uint32_t pid = (uint32_t)(1000 + i % 30000);

			snprintf(arg, sizeof arg, "src/dir%zu/file%zu.c", i % 7, i);
			hello(&f, pid, 1, T(k * 100000 + i), "/usr/bin/gcc",
			      V("gcc", "-O2", "-c", arg, "-o", "file.o",
				"-I/usr/include/some/long/path/here",
				"-DSOME_DEFINE=some-long-value-too"),
			      "/home/ci/builds/project");
			frame(&rs, &f, 10 + i, pid, T(k * 100000 + i));
		}
		for (; from < rs.n; from++) {
			const struct rec *r = &rs.v[from];

			CHECK(pt_writer_add(w, r->kind, r->conn, r->pid, r->uid,
					    r->recv, r->data, r->len) == 0);
		}
		if (k % 2)
			CHECK(pt_writer_level(w) == 2);
		if (k == 5)
			break;
		CHECK(pt_writer_flush(w, 1) == 0);
		if (!(k % 2))
			CHECK(pt_writer_level(w) == 6);
	}
	CHECK(pt_writer_close(w) == 0);
	CHECK(read_back(path, &rs, 1, &n) == 0);
	CHECK(n == rs.n);
	free(f.buf);
	free_recs(&rs);
}

/*
 * More than 2 MB since the last flush, all of it in one frame that
 * bypasses the staging buffer: the level check comes at the close, after
 * the stream is finished, and must not touch it.
 */
static void level_at_close(void)
{
	struct recs rs = { 0 };
	struct pt_writer *w;
	struct fb f = { 0 };
	char path[128], *big = malloc(3u << 20);
	size_t i, n;

	snprintf(path, sizeof path, "%s/level-close.ptcap", dir);
	for (i = 0; i < (3u << 20) - 1; i++)
		big[i] = (char)('a' + (i * 7919) % 23);
	big[i] = 0;
	hello(&f, 100, 1, T(1), "/bin/sh", V("sh"), "/");
	frame(&rs, &f, 1, 100, T(1));
	hello(&f, 101, 100, T(2), "/bin/sh", V("sh", "-c", big), "/");
	frame(&rs, &f, 2, 101, T(2));
	w = pt_writer_open(path, 1);
	if (!w)
		exit(2);
	CHECK(pt_writer_add(w, rs.v[0].kind, rs.v[0].conn, rs.v[0].pid,
			    rs.v[0].uid, rs.v[0].recv, rs.v[0].data,
			    rs.v[0].len) == 0);
	CHECK(pt_writer_flush(w, 1) == 0);
	CHECK(pt_writer_add(w, rs.v[1].kind, rs.v[1].conn, rs.v[1].pid,
			    rs.v[1].uid, rs.v[1].recv, rs.v[1].data,
			    rs.v[1].len) == 0);
	CHECK(pt_writer_close(w) == 0);
	CHECK(read_back(path, &rs, 1, &n) == 0);
	CHECK(n == rs.n);
	free(big);
	free(f.buf);
	free_recs(&rs);
}

/* ---- damage ---- */

static unsigned char *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0;
	int k;

	*len = 0;
	for (;;) {
		if (*len + 65536 > cap) {
			cap = 2 * (*len + 65536);
			buf = realloc(buf, cap);
		}
		k = gzread(gz, buf + *len, 65536);
		if (k <= 0)
			break;
		*len += (size_t)k;
	}
	gzclose(gz);
	return buf;
}

static void gzip_file(const char *path, const unsigned char *p, size_t n)
{
	gzFile gz = gzopen(path, "wb1");

	if (n)
		gzwrite(gz, p, (unsigned)n);
	gzclose(gz);
}

/* Where each version 2 record ends in the uncompressed stream. */
static size_t record_ends(const unsigned char *p, size_t n, size_t *ends)
{
	size_t off = 16, k = 0;

	while (off < n) {
		uint64_t len = 0;
		size_t hn = pt_uv_get(p + off + 1, p + n, &len);

		off += 1 + hn + len;
		ends[k++] = off;
	}
	return k;
}

static void damage(void)
{
	struct recs rs = { 0 };
	char p2[128], pd[128];
	unsigned char *raw, *bad;
	size_t n, len, nrec, *ends, i, k, cut;
	int rc, err = dup(2), null = open("/dev/null", O_WRONLY);

	small_build(&rs, 0);
	snprintf(p2, sizeof p2, "%s/v2.ptcap", dir);
	snprintf(pd, sizeof pd, "%s/damaged.ptcap", dir);
	write_v2(p2, &rs);
	raw = gunzip_file(p2, &len);
	ends = calloc(len, sizeof *ends);
	nrec = record_ends(raw, len, ends);
	CHECK(nrec == rs.n && ends[nrec - 1] == len);

	/* The reader's thousands of warnings are expected. */
	dup2(null, 2);
	/* Every prefix: the whole records in it, then "truncated". */
	for (cut = 16, k = 0; cut < len; cut++) {
		while (k < nrec && ends[k] <= cut)
			k++;
		gzip_file(pd, raw, cut);
		rc = read_back(pd, &rs, 1, &n);
		if (!CHECK(n == k &&
			   rc == ((k ? ends[k - 1] : 16) == cut ? 0 : -1)))
			printf("  cut at %zu: %zu records, rc %d; "
				"want %zu\n", cut, n, rc, k);
	}
	/* Every byte damaged: what precedes its record is delivered. */
	bad = malloc(len);
	for (i = 16, k = 0; i < len; i++) {
		static const unsigned char x[] = { 0xff, 0x01, 0x80, 0x40 };
		size_t j;

		while (k < nrec && ends[k] <= i)
			k++;
		for (j = 0; j < sizeof x; j++) {
			memcpy(bad, raw, len);
			bad[i] ^= x[j];
			gzip_file(pd, bad, len);
			rc = read_back(pd, &rs, 1, &n);
			/* A damaged byte may still decode to something
			 * (a number, a string byte): then it is delivered,
			 * but never instead of a record before it. */
			if (!CHECK(rc >= -1 && n >= k))
				printf("  byte %zu ^ %#x: %zu records "
					"intact, want %zu\n", i, x[j], n, k);
		}
	}
	dup2(err, 2);
	close(err);
	close(null);
	printf("%zu records, %zu bytes: every prefix cut, every byte damaged "
	       "4 ways\n", nrec, len);
	free(bad);
	free(ends);
	free(raw);
	free_recs(&rs);
}

/*
 * Receive times (version 3): a difference in whole microseconds is stored
 * as microseconds under the head's RECV_US flag, any other in nanoseconds;
 * both read back exactly.  The flag is damage in a version 2 file and
 * without RECV.
 */
static void recv_microseconds(void)
{
	static const uint64_t recv[] = {
		5000, 7000, 7001, 2001, 1000, UINT64_MAX - 999, 0,
		UINT64_MAX, 123456789000,
	};
	struct recs rs = { 0 };
	char path[128];
	unsigned char *raw, *bad;
	size_t len, n, i, off = 16, second = 0;
	uint64_t prev = 0;

	for (i = 0; i < sizeof recv / sizeof *recv; i++)
		add(&rs, i % 2 ? PT_CAP_EOF : PT_CAP_CONNECT, 1, 10, 0,
		    recv[i], NULL, 0);
	snprintf(path, sizeof path, "%s/recv.ptcap", dir);
	write_v2(path, &rs);
	CHECK(read_back(path, &rs, 1, &n) == 0);
	CHECK(n == rs.n);
	raw = gunzip_file(path, &len);
	CHECK(pt_wire_get32(raw + 8) == 3);
	/* head, length; body: conn, the peer (first record), recv. */
	for (i = 0; i < rs.n && off < len; i++) {
		const unsigned char *p = raw + off, *end = raw + len;
		uint64_t blen = 0, v = 0, want = recv[i] - prev;
		int us = (int64_t)want % 1000 == 0;
		size_t k = 1 + pt_uv_get(p + 1, end, &blen);

		k += pt_uv_get(p + k, end, &v);
		if (p[0] & PT_V3_PEER) {
			k += pt_uv_get(p + k, end, &v);
			k += pt_uv_get(p + k, end, &v);
		}
		pt_uv_get(p + k, end, &v);
		if (!CHECK((p[0] & (PT_V3_RECV | PT_V3_RECV_US)) ==
			   (PT_V3_RECV | (us ? PT_V3_RECV_US : 0u)) &&
			   v == pt_zz64(us ? (uint64_t)((int64_t)want / 1000)
					   : want)))
			printf("  record %zu: head %#x, field %llu\n", i, p[0],
			       (unsigned long long)v);
		off += 1 + pt_uv_get(p + 1, end, &blen) + blen;
		if (i == 0)
			second = off;
		prev = recv[i];
	}
	/* The flag in a version 2 capture is damage from the first record
	 * on; without RECV, at the second record, the first delivered. */
	bad = malloc(len);
	memcpy(bad, raw, len);
	pt_wire_put32(bad + 8, 2);
	gzip_file(path, bad, len);
	CHECK(read_back(path, &rs, 1, &n) == -1 && n == 0);
	memcpy(bad, raw, len);
	CHECK(bad[second] & PT_V3_RECV_US);
	bad[second] &= (unsigned char)~PT_V3_RECV;
	gzip_file(path, bad, len);
	CHECK(read_back(path, &rs, 1, &n) == -1 && n == 1);
	free(bad);
	free(raw);
	free_recs(&rs);
}

/* ---- a real capture, through the writer ---- */

static int roundtrip_file(const char *path, const char *out)
{
	struct pt_reader *r = pt_reader_open(path);
	struct pt_cap_event ev;
	struct recs rs = { 0 };
	char p2[128];
	size_t n;
	int rc;

	if (!r)
		return 2;
	while ((rc = pt_reader_next(r, &ev)) == 1)
		add(&rs, ev.hdr.kind, ev.hdr.conn_id, ev.hdr.peer_pid,
		    ev.hdr.peer_uid, ev.hdr.recv_ns, ev.data, ev.hdr.length);
	pt_reader_close(r);
	snprintf(p2, sizeof p2, "%s", out ? out : "");
	if (!out)
		snprintf(p2, sizeof p2, "%s/copy.ptcap", dir);
	write_v2(p2, &rs);
	CHECK(read_back(p2, &rs, 1, &n) == 0);
	CHECK(n == rs.n);
	printf("%s: %zu records (read: %s), written again and read back: "
	       "%zu equal\n", path, rs.n, rc ? "damaged" : "clean", n);
	free_recs(&rs);
	return failures ? 1 : 0;
}

/* ---- the gzip reader (capture/gunzip.c) ---- */

/* gzip members of p[0..n) at level 6, appended to out. */
static size_t gz_member(unsigned char *out, const unsigned char *p, size_t n)
{
	z_stream z;
	size_t len;

	memset(&z, 0, sizeof z);
	deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)deflateBound(&z, n);
	deflate(&z, Z_FINISH);
	len = z.total_out;
	deflateEnd(&z);
	return len;
}

/*
 * What zlib inflates from gz[0..n) before it stops, asking one byte of
 * output at a time (so that nothing it produced is lost with an error):
 * the length, and the error (Z_OK at the clean end of one member).
 */
static size_t inflate_ref(const unsigned char *gz, size_t n, unsigned char *out,
			  size_t cap, int *err)
{
	z_stream z;
	size_t got = 0;
	int rc = Z_OK;

	memset(&z, 0, sizeof z);
	inflateInit2(&z, 15 + 16);
	z.next_in = (unsigned char *)(uintptr_t)gz;
	z.avail_in = (uInt)n;
	while (got < cap) {
		z.next_out = out + got;
		z.avail_out = 1;
		rc = inflate(&z, Z_NO_FLUSH);
		got += 1 - z.avail_out;
		if (rc != Z_OK)
			break;
	}
	inflateEnd(&z);
	*err = rc == Z_STREAM_END ? Z_OK : rc == Z_BUF_ERROR ? Z_BUF_ERROR
								: Z_DATA_ERROR;
	return got;
}

/* Read the file holding p[0..n) through pt_gunzip, `chunk` at a time. */
static size_t gunzip_via(const unsigned char *p, size_t n, size_t chunk,
			 unsigned char *out, size_t cap, int *err, int *direct)
{
	char path[128];
	struct pt_gunzip *g;
	const char *msg;
	size_t got = 0, k;
	int fd;

	snprintf(path, sizeof path, "%s/gunzip.bin", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, p, n) == (ssize_t)n);
	close(fd);
	g = pt_gunzip_open(open(path, O_RDONLY));
	while (got < cap &&
	       (k = pt_gunzip_read(g, out + got, cap - got < chunk ?
						 cap - got : chunk)) > 0)
		got += k;
	*err = pt_gunzip_error(g, &msg);
	CHECK((*err == Z_OK) == (msg == NULL));
	*direct = pt_gunzip_direct(g);
	pt_gunzip_close(g);
	return got;
}

static void gunzip(void)
{
	size_t n = 300000, cap = 4 * n, len, len2, got, want, i;
	unsigned char *data = malloc(n), *gz = malloc(2 * n + 4096);
	unsigned char *out = malloc(cap), *ref = malloc(cap);
	unsigned x = 1;
	int err, rerr, direct;

	/* Half text-like, half noise: both kinds of deflate block. */
	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = i < n / 2 ? (unsigned char)"gcc -c -O2 x.c\n"[i % 15]
				    : (unsigned char)(x >> 16);
	}
	len = gz_member(gz, data, n);

	/* Whole, in odd pieces. */
	got = gunzip_via(gz, len, 1000, out, cap, &err, &direct);
	CHECK(got == n && !memcmp(out, data, n) && err == Z_OK && !direct);

	/* Two members in a row, then bytes that are no member. */
	len2 = len + gz_member(gz + len, data, 1000);
	memcpy(gz + len2, "xyz", 3);
	got = gunzip_via(gz, len2 + 3, 65536, out, cap, &err, &direct);
	CHECK(got == n + 1000 && !memcmp(out, data, n) &&
	      !memcmp(out + n, data, 1000) && err == Z_OK);

	/* Not gzip: as it is.  Empty: nothing, cleanly. */
	got = gunzip_via((const unsigned char *)"PFTRCAP", 7, 3, out, cap,
			 &err, &direct);
	CHECK(got == 7 && !memcmp(out, "PFTRCAP", 7) && err == Z_OK && direct);
	got = gunzip_via(gz, 0, 3, out, cap, &err, &direct);
	CHECK(got == 0 && err == Z_OK);

	/* Cut anywhere after the magic (one byte of it is no gzip file):
	 * what zlib makes of the prefix, then "cut short". */
	for (i = 2; i < len; i += 1499) {
		got = gunzip_via(gz, i, 65536, out, cap, &err, &direct);
		want = inflate_ref(gz, i, ref, cap, &rerr);
		CHECK(got == want && !memcmp(out, ref, got) &&
		      err == Z_BUF_ERROR);
	}

	/* A bit flipped anywhere after the header: every byte zlib produced
	 * before it stopped, then the error; in the trailer's CRC-32 or
	 * length, all of the data, then the error. */
	for (i = 10; i < len; i += 1409) {
		gz[i] ^= 0x10;
		got = gunzip_via(gz, len, 65536, out, cap, &err, &direct);
		want = inflate_ref(gz, len, ref, cap, &rerr);
		CHECK(got == want && !memcmp(out, ref, got) && err == rerr);
		gz[i] ^= 0x10;
	}
	for (i = len - 8; i < len; i++) {
		gz[i] ^= 0x10;
		got = gunzip_via(gz, len, 65536, out, cap, &err, &direct);
		CHECK(got == n && !memcmp(out, data, n) && err == Z_DATA_ERROR);
		gz[i] ^= 0x10;
	}
	free(data);
	free(gz);
	free(out);
	free(ref);
}

int main(int argc, char **argv)
{
	char cmd[128];
	int rc;

	strcpy(dir, "/tmp/pt-test-capture-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	if (argc > 1) {
		rc = roundtrip_file(argv[1], argc > 2 ? argv[2] : NULL);
	} else {
		roundtrip(0);
		roundtrip(1);
		levels();
		level_at_close();
		damage();
		gunzip();
		recv_microseconds();
		rc = failures ? 1 : 0;
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 2;
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return rc;
}
