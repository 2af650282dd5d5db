/*
 * Synthetic records for the benchmarks (bench/ingest.c, bench/gencapture.c):
 * wire frames laid out exactly as include/proftrace/wire.h specifies, and
 * command lines shaped like a real C build's (gcc, cc1, as, collect2, ld)
 * drawn from a seeded generator, so that every run produces the same bytes.
 */
#ifndef PT_BENCH_SYNTH_H
#define PT_BENCH_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "proftrace/wire.h"

/* ---- a growable byte buffer ---- */

struct bbuf {
	unsigned char *p;
	size_t len, cap;
};

void bb_add(struct bbuf *b, const void *data, size_t n);
void bb_free(struct bbuf *b);

/* ---- frames ---- */

/*
 * Append one frame to b: header (pid, time) and payload made of the fixed
 * part (fixed_len bytes, already little-endian) and then the tail items.
 * Returns the frame's size.
 */
struct sargv;
size_t frame_put(struct bbuf *b, uint8_t type, uint32_t pid, uint64_t t,
		 const void *fixed, size_t fixed_len, const char *exe,
		 const char *path, const struct sargv *argv, const char *cwd,
		 const char *const *env);

void put_le32(unsigned char *p, uint32_t v);
void put_le64(unsigned char *p, uint64_t v);

/* Fixed parts, little-endian. */
void fixed_hello(unsigned char f[32], uint32_t ppid, uint32_t uid,
		 uint32_t kind, uint64_t realtime_ns, uint64_t start_ns);
void fixed_pair(unsigned char f[8], uint32_t a, uint32_t b);  /* EXEC, SPAWN, FORK */
void fixed_reap(unsigned char f[40], uint32_t child, int32_t status,
		uint64_t utime_us, uint64_t stime_us, uint64_t maxrss_kb);
void fixed_exit(unsigned char f[32], int32_t status, uint32_t how,
		uint64_t utime_us, uint64_t stime_us, uint64_t maxrss_kb);

/* ---- seeded generator (xorshift64*) ---- */

struct rng {
	uint64_t s;
};

uint64_t rng_next(struct rng *r);
/* Uniform in [lo, hi]. */
uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi);
/* Roughly log-uniform in [lo, hi]: many short values, a few long ones. */
uint64_t rng_logrange(struct rng *r, uint64_t lo, uint64_t hi);

/* ---- command lines ---- */

#define SARGV_POOL 8192
#define SARGV_MAX  512

/* An argv built in a fixed pool; v[n] is NULL. */
struct sargv {
	char pool[SARGV_POOL];
	size_t used;
	char *v[SARGV_MAX + 1];
	size_t n;
	size_t bytes;                   /* sum of strlen(arg) + 1 */
};

void sargv_init(struct sargv *a);
void sargv_add(struct sargv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The compile of source unit `unit` of directory `dir`, whose whole gcc
 * command line is about `target` bytes (200..3000 in a real build):
 * fills the gcc driver's argv, the cc1 and as argvs it runs, and the
 * names of the source (src), object and temporary assembler file.
 */
struct compile {
	struct sargv gcc, cc1, as;
	char src[128], obj[128], tmp_s[64];
};

void synth_compile(struct rng *r, struct compile *c, unsigned dir,
		   unsigned unit, size_t target);

/* A link of `nobj` objects: gcc driver, collect2 and ld argvs. */
struct link {
	struct sargv gcc, collect2, ld;
	char out[128];
};

void synth_link(struct rng *r, struct link *l, unsigned dir, unsigned nobj);

/* The directory of build directory `dir` (for CWD items). */
const char *synth_cwd(unsigned dir);

#endif
