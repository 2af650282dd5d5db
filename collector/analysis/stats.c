/* Statistics for comparing runs; see stats.h. */
#include "analysis/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double pt_stats_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void pt_stats_range(const double *v, size_t n, double *lo, double *hi)
{
	size_t i;

	*lo = *hi = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double resample_median(const double *v, size_t n, double *tmp,
			      uint64_t *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		tmp[i] = v[next(s) % n];
	return pt_stats_median(tmp, n);
}

void pt_stats_boot_ci(const double *a, size_t na, const double *b, size_t nb,
		      uint64_t seed, size_t rounds, double *lo, double *hi)
{
	double *d = pt_xcalloc(rounds, sizeof *d);
	double *tmp = pt_xcalloc(na > nb ? na : nb, sizeof *tmp);
	uint64_t s = seed;
	size_t i, k;

	for (i = 0; i < rounds; i++)
		d[i] = resample_median(b, nb, tmp, &s) -
		       resample_median(a, na, tmp, &s);
	qsort(d, rounds, sizeof *d, cmp_double);
	/* The 2.5th and 97.5th percentiles, nearest rank. */
	k = (size_t)(0.025 * (double)rounds);
	*lo = d[k];
	*hi = d[rounds - 1 - k];
	free(tmp);
	free(d);
}

/* One step of the modified Lentz method: the convergents' ratios c, d
 * updated by a partial numerator; returns the factor for the value. */
static double lentz(double *c, double *d, double num)
{
	const double tiny = 1e-300;

	*d = 1 + num * *d;
	*c = 1 + num / *c;
	if (fabs(*d) < tiny)
		*d = tiny;
	if (fabs(*c) < tiny)
		*c = tiny;
	*d = 1 / *d;
	return *d * *c;
}

/*
 * The continued fraction of the regularized incomplete beta function
 * I_x(a, b), evaluated with the modified Lentz method (used on the side
 * of x where it converges fast).
 */
static double beta_cf(double a, double b, double x)
{
	double c = 1, d = 1 - (a + b) * x / (a + 1), h, delta;
	int m;

	if (fabs(d) < 1e-300)
		d = 1e-300;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 300; m++) {
		/* Even step, then odd step. */
		h *= lentz(&c, &d, m * (b - m) * x /
				   ((a + 2 * m - 1) * (a + 2 * m)));
		delta = lentz(&c, &d, -(a + m) * (a + b + m) * x /
				      ((a + 2 * m) * (a + 2 * m + 1)));
		h *= delta;
		if (fabs(delta - 1) < 1e-12)
			break;
	}
	return h;
}

static double inc_beta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
		    b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double pt_stats_t_p(double t, double df)
{
	if (!isfinite(t))
		return isnan(t) ? 1 : 0;
	return inc_beta(df / 2, 0.5, df / (df + t * t));
}

struct ranked {
	double p;
	size_t i;
};

static int cmp_ranked(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

void pt_stats_bh(const double *p, size_t n, double *q)
{
	struct ranked *r;
	double run = 1;
	size_t k;

	if (!n)
		return;
	r = pt_xcalloc(n, sizeof *r);
	for (k = 0; k < n; k++)
		r[k] = (struct ranked){ p[k], k };
	qsort(r, n, sizeof *r, cmp_ranked);
	/* q of rank k is min over ranks >= k of p * n / rank. */
	for (k = n; k-- > 0;) {
		double v = r[k].p * (double)n / (double)(k + 1);

		if (v < run)
			run = v;
		q[r[k].i] = run;
	}
	free(r);
}

uint64_t pt_stats_seed(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
