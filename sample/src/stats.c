/* stats.c - summary statistics and histograms over int64 samples. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "sample.h"

static long long round_milli(double v)
{
	double m = v * 1000.0;

	return (long long)(m < 0 ? m - 0.5 : m + 0.5);
}

void stats_compute(const int64_t *sorted, size_t n, struct stats *st)
{
	double mean = 0.0, m2 = 0.0;
	size_t i;

	memset(st, 0, sizeof *st);
	st->n = n;
	if (n == 0)
		return;
	st->min = sorted[0];
	st->max = sorted[n - 1];
	st->median = n % 2 ? sorted[n / 2]
			   : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	/* Welford's online algorithm */
	for (i = 0; i < n; i++) {
		double x = (double)sorted[i], d = x - mean;

		mean += d / (double)(i + 1);
		m2 += d * (x - mean);
	}
	st->mean_milli = round_milli(mean);
	st->stddev_milli = round_milli(sqrt(m2 / (double)n));
}

void histogram(const int64_t *a, size_t n, int64_t lo, int64_t hi,
	       size_t *bins, size_t nbins)
{
	size_t i;
	int64_t span = hi - lo;

	memset(bins, 0, nbins * sizeof *bins);
	if (span <= 0 || nbins == 0)
		return;
	for (i = 0; i < n; i++) {
		int64_t v = a[i];
		size_t b;

		if (v < lo || v >= hi)
			continue;
		b = (size_t)((v - lo) * (int64_t)nbins / span);
		bins[b < nbins ? b : nbins - 1]++;
	}
}
