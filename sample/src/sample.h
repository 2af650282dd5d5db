/* sample.h - shared declarations for the proftrace sample library. */
#ifndef SAMPLE_H
#define SAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* hash.c: open-addressing string -> count table */
struct hentry {
	char *key;
	size_t klen;
	uint32_t hash;
	long count;
};

struct htable {
	struct hentry *slots;
	size_t cap;
	size_t len;
};

uint32_t hash_fnv1a(const void *p, size_t n);
void ht_init(struct htable *t);
void ht_free(struct htable *t);
long *ht_upsert(struct htable *t, const char *key, size_t klen);
const struct hentry *ht_find(const struct htable *t, const char *key, size_t klen);
struct hentry **ht_collect(const struct htable *t, size_t *n);

/* sort.c */
typedef int (*cmp_fn)(const void *a, const void *b);
void msort(void *base, size_t n, size_t size, cmp_fn cmp);
void isort_i64(int64_t *a, size_t n);
int is_sorted_i64(const int64_t *a, size_t n);

/* fmt.c */
char *fmt_thousands(char *buf, size_t n, long long v);
char *fmt_hex(char *buf, size_t n, const void *p, size_t len);
char *fmt_pad(char *buf, size_t n, const char *s, int width, int left);
char *fmt_fixed(char *buf, size_t n, long long num, int scale);

/* strbuf.c */
struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
};

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
void sb_putc(struct strbuf *sb, int c);
void sb_write(struct strbuf *sb, const void *p, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sb_read_fd(struct strbuf *sb, int fd);

/* checksum.c (uses the generated crc_table.h) */
uint32_t crc32_update(uint32_t crc, const void *p, size_t n);
uint32_t crc32(const void *p, size_t n);
uint32_t adler32(const void *p, size_t n);

/* rng.c: xorshift64* generator */
struct rng {
	uint64_t s;
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
uint32_t rng_range(struct rng *r, uint32_t n);
void rng_shuffle(struct rng *r, int64_t *a, size_t n);

/* stats.c */
struct stats {
	size_t n;
	int64_t min, max, median;
	long long mean_milli;   /* mean * 1000, rounded */
	long long stddev_milli; /* population stddev * 1000, rounded */
};

void stats_compute(const int64_t *sorted, size_t n, struct stats *st);
void histogram(const int64_t *a, size_t n, int64_t lo, int64_t hi,
	       size_t *bins, size_t nbins);

/* tokenize.c */
typedef void (*token_fn)(const char *word, size_t len, void *ctx);
size_t tokenize(const char *text, size_t n, token_fn fn, void *ctx);

/* bitset.c */
struct bitset {
	uint64_t *w;
	size_t nbits;
};

void bitset_init(struct bitset *b, size_t nbits);
void bitset_free(struct bitset *b);
void bitset_set(struct bitset *b, size_t i);
void bitset_clear(struct bitset *b, size_t i);
int bitset_test(const struct bitset *b, size_t i);
size_t bitset_count(const struct bitset *b);
size_t sieve_primes(struct bitset *b, size_t limit);

/* kernels.c: deliberately heavy code (the slowest file to compile) */
uint64_t kernel_matmul(uint32_t seed);
uint64_t kernel_poly(uint32_t seed);

#endif /* SAMPLE_H */
