/* rng.c - xorshift64* pseudo random numbers (deterministic for tests). */
#include "config.h"

#include "sample.h"

void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 step so that small seeds still give a good state */
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	r->s = z ? z : 1;
}

uint64_t rng_next(struct rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint32_t rng_range(struct rng *r, uint32_t n)
{
	/* Lemire's multiply-shift with rejection: unbiased */
	uint64_t m = (uint64_t)(uint32_t)(rng_next(r) >> 32) * n;
	uint32_t lo = (uint32_t)m;

	if (lo < n) {
		uint32_t t = (0u - n) % n;

		while (lo < t) {
			m = (uint64_t)(uint32_t)(rng_next(r) >> 32) * n;
			lo = (uint32_t)m;
		}
	}
	return (uint32_t)(m >> 32);
}

void rng_shuffle(struct rng *r, int64_t *a, size_t n)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t j = rng_range(r, (uint32_t)i);
		int64_t t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}
