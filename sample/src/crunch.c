/* crunch.c - exercise the sample library on deterministic random data. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_CLOCK_GETTIME
#include <time.h>
#endif

#include "sample.h"
#include "version.h" /* generated from VERSION by the Makefile */

#define NBINS 8

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

static double now(void)
{
#ifdef HAVE_CLOCK_GETTIME
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
#else
	return 0.0;
#endif
}

/* serialise little-endian so the checksum does not depend on the host */
static uint32_t crc_of_i64(const int64_t *a, size_t n)
{
	uint32_t crc = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char b[8];
		uint64_t v = (uint64_t)a[i];
		int k;

		for (k = 0; k < 8; k++)
			b[k] = (unsigned char)(v >> (8 * k));
		crc = crc32_update(crc, b, sizeof b);
	}
	return crc;
}

int main(int argc, char **argv)
{
	size_t n = 50000, i, nprimes, bins[NBINS];
	uint32_t seed = 42;
	int timing = 0, argi;
	int64_t *a, *b;
	struct rng r;
	struct stats st;
	struct bitset primes;
	struct strbuf out;
	char n1[32], n2[32], n3[32];
	double t0;

	for (argi = 1; argi < argc; argi++) {
		if (strcmp(argv[argi], "-t") == 0)
			timing = 1;
		else if (strcmp(argv[argi], "--version") == 0) {
			printf("crunch (%s) %s\n", SAMPLE_NAME, SAMPLE_VERSION);
			return 0;
		} else if (strcmp(argv[argi], "-n") == 0 && argi + 1 < argc)
			n = (size_t)strtoul(argv[++argi], NULL, 10);
		else if (strcmp(argv[argi], "-s") == 0 && argi + 1 < argc)
			seed = (uint32_t)strtoul(argv[++argi], NULL, 10);
		else {
			fprintf(stderr,
				"usage: crunch [-t] [-n COUNT] [-s SEED]\n");
			return 2;
		}
	}
	if (n == 0)
		n = 1;

	t0 = now();
	a = malloc(n * sizeof *a);
	b = malloc(n * sizeof *b);
	if (!a || !b)
		return 1;
	rng_seed(&r, seed);
	for (i = 0; i < n; i++)
		a[i] = (int64_t)rng_range(&r, 1000000) - 250000;
	memcpy(b, a, n * sizeof *a);
	isort_i64(a, n);
	msort(b, n, sizeof *b, cmp_i64);
	if (!is_sorted_i64(a, n) || memcmp(a, b, n * sizeof *a) != 0) {
		fprintf(stderr, "crunch: sort mismatch\n");
		return 1;
	}
	stats_compute(a, n, &st);
	histogram(a, n, -250000, 750000, bins, NBINS);

	sb_init(&out);
	sb_printf(&out, "samples: %s (seed %lu)\n",
		  fmt_thousands(n1, sizeof n1, (long long)st.n),
		  (unsigned long)seed);
	sb_printf(&out, "min/median/max: %s / %s / %s\n",
		  fmt_thousands(n1, sizeof n1, st.min),
		  fmt_thousands(n2, sizeof n2, st.median),
		  fmt_thousands(n3, sizeof n3, st.max));
	sb_printf(&out, "mean: %s\n",
		  fmt_fixed(n1, sizeof n1, st.mean_milli, 3));
	sb_printf(&out, "stddev: %s\n",
		  fmt_fixed(n1, sizeof n1, st.stddev_milli, 3));
	for (i = 0; i < NBINS; i++) {
		size_t bar = bins[i] * 40 / n, k;

		sb_printf(&out, "bin %zu: %8s |", i,
			  fmt_thousands(n1, sizeof n1, (long long)bins[i]));
		for (k = 0; k < bar; k++)
			sb_putc(&out, '#');
		sb_putc(&out, '\n');
	}
	sb_printf(&out, "sorted crc32: %08lx\n",
		  (unsigned long)crc_of_i64(a, n));

	rng_shuffle(&r, a, n);
	sb_printf(&out, "shuffled crc32: %08lx\n",
		  (unsigned long)crc_of_i64(a, n));

	nprimes = sieve_primes(&primes, 1000000);
	sb_printf(&out, "primes below 1,000,000: %s\n",
		  fmt_thousands(n1, sizeof n1, (long long)nprimes));
	bitset_free(&primes);

	sb_printf(&out, "kernel matmul: %016llx\n",
		  (unsigned long long)kernel_matmul(seed));
	sb_printf(&out, "kernel poly: %016llx\n",
		  (unsigned long long)kernel_poly(seed));
	fputs(out.buf, stdout);

	if (timing)
		fprintf(stderr, "crunch: %.3f s\n", now() - t0);
	sb_free(&out);
	free(a);
	free(b);
	return 0;
}
