/*
 * Statistics for comparing runs: medians, a bootstrap interval for a
 * change of median, a t test whose noise is pooled across keys, and the
 * Benjamini-Hochberg false-discovery-rate adjustment.  Pure functions of
 * their inputs: the bootstrap draws from a generator seeded by the
 * caller, so the same data gives the same interval on every machine.
 */
#ifndef PT_STATS_H
#define PT_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Median of v[0..n) (n >= 1); v is reordered. */
double pt_stats_median(double *v, size_t n);

/* Smallest and largest of v[0..n) (n >= 1). */
void pt_stats_range(const double *v, size_t n, double *lo, double *hi);

/*
 * 95 % percentile-bootstrap interval of median(b) - median(a), from
 * `rounds` resamples of each side drawn with seed.  na, nb >= 1.
 */
void pt_stats_boot_ci(const double *a, size_t na, const double *b, size_t nb,
		      uint64_t seed, size_t rounds, double *lo, double *hi);

/* Two-sided p-value of Student's t with df degrees of freedom (> 0). */
double pt_stats_t_p(double t, double df);

/*
 * Benjamini-Hochberg: q[i] is the smallest false discovery rate at which
 * p[i] would be declared a discovery among all n.
 */
void pt_stats_bh(const double *p, size_t n, double *q);

/* A 64-bit hash of n bytes, for seeds that follow the data, not the order. */
uint64_t pt_stats_seed(const void *data, size_t n);

#endif
