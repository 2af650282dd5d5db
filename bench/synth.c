/* Synthetic frames and command lines; see synth.h. */
#include "synth.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bb_add(struct bbuf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p) {
			perror("bench");
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

void bb_free(struct bbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

void put_le64(unsigned char *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static void item(struct bbuf *b, enum pt_tag tag, const char *s)
{
	unsigned char t = (unsigned char)tag;

	bb_add(b, &t, 1);
	bb_add(b, s, strlen(s) + 1);
}

size_t frame_put(struct bbuf *b, uint8_t type, uint32_t pid, uint64_t t,
		 const void *fixed, size_t fixed_len, const char *exe,
		 const char *path, const struct sargv *argv, const char *cwd,
		 const char *const *env)
{
	unsigned char h[32];
	size_t start = b->len, i, len;

	memset(h, 0, sizeof h);
	bb_add(b, h, sizeof h);
	bb_add(b, fixed, fixed_len);
	if (exe)
		item(b, PT_TAG_EXE, exe);
	if (path)
		item(b, PT_TAG_PATH, path);
	for (i = 0; argv && i < argv->n; i++)
		item(b, PT_TAG_ARG, argv->v[i]);
	if (cwd)
		item(b, PT_TAG_CWD, cwd);
	for (i = 0; env && env[i]; i++)
		item(b, PT_TAG_ENV, env[i]);
	len = b->len - start - sizeof h;
	put_le32(h, PT_WIRE_MAGIC);
	h[4] = PT_WIRE_VERSION;
	h[5] = type;
	put_le32(h + 8, pid);
	put_le32(h + 12, (uint32_t)len);
	put_le32(h + 16, (uint32_t)len);
	put_le64(h + 24, t);
	memcpy(b->p + start, h, sizeof h);
	return b->len - start;
}

void fixed_hello(unsigned char f[32], uint32_t ppid, uint32_t uid,
		 uint32_t kind, uint64_t realtime_ns, uint64_t start_ns)
{
	memset(f, 0, 32);
	put_le32(f, ppid);
	put_le32(f + 4, uid);
	put_le32(f + 8, kind);
	put_le64(f + 16, realtime_ns);
	put_le64(f + 24, start_ns);
}

void fixed_pair(unsigned char f[8], uint32_t a, uint32_t b)
{
	put_le32(f, a);
	put_le32(f + 4, b);
}

void fixed_reap(unsigned char f[40], uint32_t child, int32_t status,
		uint64_t utime_us, uint64_t stime_us, uint64_t maxrss_kb)
{
	memset(f, 0, 40);
	put_le32(f, child);
	put_le32(f + 4, (uint32_t)status);
	put_le32(f + 8, 1);
	put_le64(f + 16, utime_us);
	put_le64(f + 24, stime_us);
	put_le64(f + 32, maxrss_kb);
}

void fixed_exit(unsigned char f[32], int32_t status, uint32_t how,
		uint64_t utime_us, uint64_t stime_us, uint64_t maxrss_kb)
{
	put_le32(f, (uint32_t)status);
	put_le32(f + 4, how);
	put_le64(f + 8, utime_us);
	put_le64(f + 16, stime_us);
	put_le64(f + 24, maxrss_kb);
}

/* ---- generator ---- */

uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->s ? r->s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rng_next(r) % ((uint64_t)hi - lo + 1));
}

uint64_t rng_logrange(struct rng *r, uint64_t lo, uint64_t hi)
{
	/* Pick an octave, then a value inside it. */
	unsigned octaves = 0, k;
	uint64_t a = lo, b;

	while ((lo << (octaves + 1)) <= hi && octaves < 40)
		octaves++;
	k = rng_range(r, 0, octaves);
	a = lo << k;
	b = k == octaves ? hi : (lo << (k + 1)) - 1;
	if (b < a)
		b = a;
	return a + rng_next(r) % (b - a + 1);
}

/* ---- command lines ---- */

void sargv_init(struct sargv *a)
{
	a->used = 0;
	a->n = 0;
	a->bytes = 0;
	a->v[0] = NULL;
}

void sargv_add(struct sargv *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (a->n >= SARGV_MAX || a->used >= SARGV_POOL - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(a->pool + a->used, SARGV_POOL - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= SARGV_POOL - a->used)
		return;                 /* does not fit: leave it out */
	a->v[a->n++] = a->pool + a->used;
	a->v[a->n] = NULL;
	a->used += (size_t)n + 1;
	a->bytes += (size_t)n + 1;
}

static const char *const words[] = {
	"core", "util", "net", "io", "parse", "lex", "hash", "vec", "str",
	"json", "xml", "http", "crypto", "zip", "image", "audio", "sched",
	"alloc", "log", "test", "config", "plugin", "ui", "db", "cache",
};
#define NWORDS (sizeof words / sizeof words[0])
#define GCC_LIBEXEC "/usr/lib/gcc/x86_64-linux-gnu/12"

const char *synth_cwd(unsigned dir)
{
	static char buf[128];

	snprintf(buf, sizeof buf, "/home/ci/builds/project/src/%s%u",
		 words[dir % NWORDS], dir);
	return buf;
}

/* -I and -D flags until the command line is about `target` bytes long. */
static void add_flags(struct rng *r, struct sargv *a, struct sargv *flags,
		      size_t target)
{
	while (a->bytes < target && a->n < SARGV_MAX - 40) {
		const char *w = words[rng_range(r, 0, NWORDS - 1)];
		unsigned k = rng_range(r, 0, 9);

		if (k < 5) {
			sargv_add(flags, "-I/home/ci/builds/project/src/%s/include", w);
		} else if (k < 8) {
			sargv_add(flags, "-DHAVE_%c%c%c_H=1", w[0] & ~0x20,
				  w[1] & ~0x20, k + '0');
		} else {
			sargv_add(flags, "-W%s", k == 8 ? "no-unused-parameter"
						       : "shadow");
		}
		sargv_add(a, "%s", flags->v[flags->n - 1]);
	}
}

void synth_compile(struct rng *r, struct compile *c, unsigned dir,
		   unsigned unit, size_t target)
{
	static struct sargv flags;      /* shared between gcc and cc1 */
	const char *w = words[unit % NWORDS];
	size_t i;

	snprintf(c->src, sizeof c->src, "%s_%u.c", w, unit);
	snprintf(c->obj, sizeof c->obj, "%s_%u.o", w, unit);
	snprintf(c->tmp_s, sizeof c->tmp_s, "/tmp/cc%06x.s",
		 (unsigned)(rng_next(r) & 0xffffff));
	sargv_init(&flags);
	sargv_init(&c->gcc);
	sargv_add(&c->gcc, "gcc");
	sargv_add(&c->gcc, "-DHAVE_CONFIG_H");
	sargv_add(&c->gcc, "-I.");
	sargv_add(&c->gcc, "-I../../include");
	add_flags(r, &c->gcc, &flags, target > 160 ? target - 160 : 0);
	sargv_add(&c->gcc, "-g");
	sargv_add(&c->gcc, "-O2");
	sargv_add(&c->gcc, "-MT");
	sargv_add(&c->gcc, "%s", c->obj);
	sargv_add(&c->gcc, "-MD");
	sargv_add(&c->gcc, "-MP");
	sargv_add(&c->gcc, "-MF");
	sargv_add(&c->gcc, ".deps/%s_%u.Tpo", w, unit);
	sargv_add(&c->gcc, "-c");
	sargv_add(&c->gcc, "-o");
	sargv_add(&c->gcc, "%s", c->obj);
	sargv_add(&c->gcc, "%s", c->src);

	sargv_init(&c->cc1);
	sargv_add(&c->cc1, GCC_LIBEXEC "/cc1");
	sargv_add(&c->cc1, "-quiet");
	sargv_add(&c->cc1, "-I.");
	sargv_add(&c->cc1, "-I../../include");
	for (i = 0; i < flags.n; i++)
		sargv_add(&c->cc1, "%s", flags.v[i]);
	sargv_add(&c->cc1, "-MD");
	sargv_add(&c->cc1, ".deps/%s_%u.d", w, unit);
	sargv_add(&c->cc1, "%s", c->src);
	sargv_add(&c->cc1, "-quiet");
	sargv_add(&c->cc1, "-dumpbase");
	sargv_add(&c->cc1, "%s", c->src);
	sargv_add(&c->cc1, "-mtune=generic");
	sargv_add(&c->cc1, "-march=x86-64");
	sargv_add(&c->cc1, "-g");
	sargv_add(&c->cc1, "-O2");
	sargv_add(&c->cc1, "-o");
	sargv_add(&c->cc1, "%s", c->tmp_s);

	sargv_init(&c->as);
	sargv_add(&c->as, "as");
	sargv_add(&c->as, "--gdwarf-5");
	sargv_add(&c->as, "--64");
	sargv_add(&c->as, "-o");
	sargv_add(&c->as, "%s", c->obj);
	sargv_add(&c->as, "%s", c->tmp_s);
}

static void link_tail(struct sargv *a, const char *out)
{
	sargv_add(a, "--build-id");
	sargv_add(a, "--eh-frame-hdr");
	sargv_add(a, "-m");
	sargv_add(a, "elf_x86_64");
	sargv_add(a, "--hash-style=gnu");
	sargv_add(a, "--as-needed");
	sargv_add(a, "-dynamic-linker");
	sargv_add(a, "/lib64/ld-linux-x86-64.so.2");
	sargv_add(a, "-pie");
	sargv_add(a, "-o");
	sargv_add(a, "%s", out);
	sargv_add(a, "/usr/lib/x86_64-linux-gnu/Scrt1.o");
	sargv_add(a, "/usr/lib/x86_64-linux-gnu/crti.o");
	sargv_add(a, GCC_LIBEXEC "/crtbeginS.o");
	sargv_add(a, "-L" GCC_LIBEXEC);
	sargv_add(a, "-L/usr/lib/x86_64-linux-gnu");
	sargv_add(a, "-L/lib/x86_64-linux-gnu");
}

void synth_link(struct rng *r, struct link *l, unsigned dir, unsigned nobj)
{
	const char *w = words[dir % NWORDS];
	unsigned i;

	snprintf(l->out, sizeof l->out, "%s%u-tool", w, dir);
	sargv_init(&l->gcc);
	sargv_init(&l->collect2);
	sargv_init(&l->ld);
	sargv_add(&l->gcc, "gcc");
	sargv_add(&l->gcc, "-g");
	sargv_add(&l->gcc, "-O2");
	sargv_add(&l->gcc, "-o");
	sargv_add(&l->gcc, "%s", l->out);
	sargv_add(&l->collect2, GCC_LIBEXEC "/collect2");
	sargv_add(&l->collect2, "-plugin");
	sargv_add(&l->collect2, GCC_LIBEXEC "/liblto_plugin.so");
	sargv_add(&l->collect2, "-plugin-opt=" GCC_LIBEXEC "/lto-wrapper");
	sargv_add(&l->collect2, "-plugin-opt=-fresolution=/tmp/cc%06x.res",
		  (unsigned)(rng_next(r) & 0xffffff));
	link_tail(&l->collect2, l->out);
	sargv_add(&l->ld, "/usr/bin/ld");
	sargv_add(&l->ld, "-plugin");
	sargv_add(&l->ld, GCC_LIBEXEC "/liblto_plugin.so");
	link_tail(&l->ld, l->out);
	for (i = 0; i < nobj && l->ld.bytes < 2800; i++) {
		const char *o = words[(dir + i) % NWORDS];

		sargv_add(&l->gcc, "%s_%u.o", o, i);
		sargv_add(&l->collect2, "%s_%u.o", o, i);
		sargv_add(&l->ld, "%s_%u.o", o, i);
	}
	sargv_add(&l->gcc, "../lib/libproject.a");
	sargv_add(&l->gcc, "-lm");
	sargv_add(&l->gcc, "-lz");
	sargv_add(&l->collect2, "../lib/libproject.a");
	sargv_add(&l->ld, "../lib/libproject.a");
	for (i = 0; i < 2; i++) {
		struct sargv *a = i ? &l->ld : &l->collect2;

		sargv_add(a, "-lm");
		sargv_add(a, "-lz");
		sargv_add(a, "-lgcc");
		sargv_add(a, "--push-state");
		sargv_add(a, "--as-needed");
		sargv_add(a, "-lgcc_s");
		sargv_add(a, "--pop-state");
		sargv_add(a, "-lc");
		sargv_add(a, GCC_LIBEXEC "/crtendS.o");
		sargv_add(a, "/usr/lib/x86_64-linux-gnu/crtn.o");
	}
}
