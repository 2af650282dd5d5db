/*
 * analysis/stats.c against values from statistical tables and worked
 * examples: Student's t at its 5 % critical values, Benjamini-Hochberg on
 * the example of their 1995 paper's kind (by hand), medians, and the
 * bootstrap interval's bounds for samples whose outcome is known.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/stats.h"

static int failures;

static void near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol)) {
		printf("FAIL %s: got %.6g, want %.6g\n", what, got, want);
		failures++;
	}
}

static void test_t(void)
{
	/* Two-sided 5 % critical values of Student's t (any table). */
	static const struct { double t, df; } crit[] = {
		{ 12.706, 1 }, { 4.303, 2 }, { 2.776, 4 }, { 2.228, 10 },
		{ 2.042, 30 }, { 1.984, 100 },
	};
	size_t i;

	for (i = 0; i < sizeof crit / sizeof *crit; i++)
		near(pt_stats_t_p(crit[i].t, crit[i].df), 0.05, 0.0005,
		     "t at its 5 % critical value");
	/* 1 % values, and symmetry. */
	near(pt_stats_t_p(4.604, 4), 0.01, 0.0002, "t 4.604, 4 df");
	near(pt_stats_t_p(-2.776, 4), 0.05, 0.0005, "negative t");
	near(pt_stats_t_p(0, 7), 1.0, 1e-9, "t = 0");
}

static void test_bh(void)
{
	/* By hand: sorted p 0.001 0.008 0.039 0.041 0.042 0.06 0.074 0.205
	 * (n = 8); q_k = min over j >= k of p_j * 8 / j. */
	static const double p[] = {
		0.041, 0.001, 0.205, 0.008, 0.06, 0.039, 0.074, 0.042,
	};
	static const double q[] = {
		0.0672, 0.008, 0.205, 0.032, 0.08, 0.0672, 0.08457, 0.0672,
	};
	double got[8];
	size_t i;

	pt_stats_bh(p, 8, got);
	for (i = 0; i < 8; i++)
		near(got[i], q[i], 0.0001, "Benjamini-Hochberg q");
}

static void test_median(void)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, lo, hi;

	near(pt_stats_median(odd, 3), 3, 0, "median of 3");
	near(pt_stats_median(even, 4), 2.5, 0, "median of 4");
	pt_stats_range((double[]){ 2, -1, 7 }, 3, &lo, &hi);
	near(lo, -1, 0, "min");
	near(hi, 7, 0, "max");
}

static void test_boot(void)
{
	/* Three a side, all of B above all of A: the interval runs from the
	 * smallest possible change of median to the largest. */
	static const double a[] = { 1.0, 1.1, 1.2 }, b[] = { 2.0, 2.1, 2.3 };
	double lo, hi, lo2, hi2;

	pt_stats_boot_ci(a, 3, b, 3, 42, 2000, &lo, &hi);
	near(lo, 2.0 - 1.2, 1e-12, "lower bound: min B - max A");
	near(hi, 2.3 - 1.0, 1e-12, "upper bound: max B - min A");
	/* Seeded: the same again. */
	pt_stats_boot_ci(a, 3, b, 3, 42, 2000, &lo2, &hi2);
	near(lo2, lo, 0, "same seed, same interval");
	near(hi2, hi, 0, "same seed, same interval");
	/* Identical samples of one value: a point at zero. */
	pt_stats_boot_ci((double[]){ 1, 1 }, 2, (double[]){ 1, 1 }, 2, 7, 500,
			 &lo, &hi);
	near(lo, 0, 0, "no spread: lower");
	near(hi, 0, 0, "no spread: upper");
}

int main(void)
{
	test_t();
	test_bh();
	test_median();
	test_boot();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
