/* bitset.c - a fixed-size bitset and a sieve of Eratosthenes. */
#include "config.h"

#include <stdlib.h>

#include "sample.h"

static unsigned popcount64(uint64_t x)
{
#ifdef HAVE_BUILTIN_POPCOUNTLL
	return (unsigned)__builtin_popcountll(x);
#else
	unsigned c = 0;

	while (x) {
		x &= x - 1;
		c++;
	}
	return c;
#endif
}

void bitset_init(struct bitset *b, size_t nbits)
{
	b->nbits = nbits;
	b->w = calloc(nbits / 64 + 1, sizeof *b->w);
	if (!b->w)
		abort();
}

void bitset_free(struct bitset *b)
{
	free(b->w);
	b->w = NULL;
	b->nbits = 0;
}

void bitset_set(struct bitset *b, size_t i)
{
	b->w[i / 64] |= (uint64_t)1 << (i % 64);
}

void bitset_clear(struct bitset *b, size_t i)
{
	b->w[i / 64] &= ~((uint64_t)1 << (i % 64));
}

int bitset_test(const struct bitset *b, size_t i)
{
	return (int)((b->w[i / 64] >> (i % 64)) & 1);
}

size_t bitset_count(const struct bitset *b)
{
	size_t i, c = 0;

	for (i = 0; i < b->nbits / 64 + 1; i++)
		c += popcount64(b->w[i]);
	return c;
}

size_t sieve_primes(struct bitset *b, size_t limit)
{
	size_t i, j;

	bitset_init(b, limit + 1);
	for (i = 2; i <= limit; i++)
		bitset_set(b, i);
	for (i = 2; i * i <= limit; i++)
		if (bitset_test(b, i))
			for (j = i * i; j <= limit; j += i)
				bitset_clear(b, j);
	return bitset_count(b);
}
