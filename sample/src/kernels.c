/*
 * kernels.c - fixed-size integer kernels, stamped out by macros.
 *
 * Every size gets its own fully unrolled matrix multiply and polynomial
 * evaluator, which makes this translation unit noticeably slower to
 * compile at -O2 than the rest of the sample.  That is on purpose: it
 * gives a proftrace profile an obvious "slowest command".
 */
#include "config.h"

#include "sample.h"

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

#define DEF_MATMUL(N)                                                        \
	static uint64_t matmul_##N(uint32_t seed)                            \
	{                                                                    \
		uint32_t a[N][N], b[N][N], c[N][N];                          \
		uint64_t sum = 0;                                            \
		int i, j, k;                                                 \
                                                                             \
		for (i = 0; i < N; i++)                                      \
			for (j = 0; j < N; j++) {                            \
				a[i][j] = mix32(seed + (uint32_t)(i * N + j)); \
				b[i][j] = mix32(~seed + (uint32_t)(j * N + i)); \
			}                                                    \
		for (i = 0; i < N; i++)                                      \
			for (j = 0; j < N; j++) {                            \
				uint32_t s = 0;                              \
				_Pragma("GCC unroll 32")                     \
				for (k = 0; k < N; k++)                      \
					s += a[i][k] * b[k][j];              \
				c[i][j] = s;                                 \
			}                                                    \
		for (i = 0; i < N; i++)                                      \
			for (j = 0; j < N; j++)                              \
				sum = sum * 31u + c[i][j];                   \
		return sum;                                                  \
	}

#define DEF_POLY(N)                                                          \
	static uint64_t poly_##N(uint32_t seed)                              \
	{                                                                    \
		uint32_t coef[N];                                            \
		uint64_t acc = 0;                                            \
		uint32_t x;                                                  \
		int i;                                                       \
                                                                             \
		_Pragma("GCC unroll 32")                                     \
		for (i = 0; i < N; i++)                                      \
			coef[i] = mix32(seed ^ (uint32_t)(i * 2654435761u)); \
		for (x = 1; x <= 64; x++) {                                  \
			uint32_t y = 0;                                      \
			_Pragma("GCC unroll 32")                             \
			for (i = N - 1; i >= 0; i--)                         \
				y = y * x + coef[i];                         \
			acc ^= (uint64_t)y << (x % 32);                      \
		}                                                            \
		return acc;                                                  \
	}

#define DEF_BOTH(N) DEF_MATMUL(N) DEF_POLY(N)

DEF_BOTH(2) DEF_BOTH(3) DEF_BOTH(4) DEF_BOTH(5) DEF_BOTH(6) DEF_BOTH(7)
DEF_BOTH(8) DEF_BOTH(9) DEF_BOTH(10) DEF_BOTH(11) DEF_BOTH(12)
DEF_BOTH(13) DEF_BOTH(14) DEF_BOTH(15) DEF_BOTH(16)

typedef uint64_t (*kernel_fn)(uint32_t seed);

#define K(N) matmul_##N
static const kernel_fn matmuls[] = {
	K(2), K(3), K(4), K(5), K(6), K(7), K(8), K(9), K(10), K(11), K(12),
	K(13), K(14), K(15), K(16),
};
#undef K

#define K(N) poly_##N
static const kernel_fn polys[] = {
	K(2), K(3), K(4), K(5), K(6), K(7), K(8), K(9), K(10), K(11), K(12),
	K(13), K(14), K(15), K(16),
};
#undef K

uint64_t kernel_matmul(uint32_t seed)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < sizeof matmuls / sizeof matmuls[0]; i++)
		h = (h ^ matmuls[i](seed + (uint32_t)i)) * 0x100000001b3ull;
	return h;
}

uint64_t kernel_poly(uint32_t seed)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < sizeof polys / sizeof polys[0]; i++)
		h = (h ^ polys[i](seed + (uint32_t)i)) * 0x100000001b3ull;
	return h;
}
