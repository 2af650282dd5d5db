/* Runs A against runs B, with verdicts; see rundiff.h. */
#include "analysis/rundiff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "base/strbuf.h"

#define ROUNDS 2000             /* bootstrap resamples */
#define PRIOR_DF 4.0            /* weight of the pooled noise */
#define ALPHA 0.05
#define FLOOR_S 0.001           /* log(t + 1 ms): zero times are fine */

const char *pt_verdict_name(enum pt_verdict v)
{
	switch (v) {
	case PT_V_SLOWER:
		return "slower";
	case PT_V_FASTER:
		return "faster";
	case PT_V_NOISE:
		return "within noise";
	case PT_V_UNTESTED:
		break;
	}
	return "?";
}

static double weigh(const struct pt_run_val *v, enum pt_diff_weight w)
{
	switch (w) {
	case PT_DIFF_WALL:
		return (double)v->wall / 1e9;
	case PT_DIFF_SELF:
		return (double)v->self / 1e9;
	case PT_DIFF_CPU:
		return (double)v->cpu_us / 1e6;
	}
	return 0;
}

/* The values of both sides, and their logs' mean and sum of squares. */
struct side {
	double x[2][64], *v[2];
	size_t n[2];
	double mean[2], ss[2];
};

/* What the t test keeps of a side once its values are gone. */
struct moments {
	size_t n[2];
	double mean[2], ss[2];
};

static void moments(struct side *s)
{
	int k;
	size_t i;

	for (k = 0; k < 2; k++) {
		double sum = 0, ss = 0;

		for (i = 0; i < s->n[k]; i++)
			sum += log(s->v[k][i] + FLOOR_S);
		s->mean[k] = s->n[k] ? sum / (double)s->n[k] : 0;
		for (i = 0; i < s->n[k]; i++) {
			double dev = log(s->v[k][i] + FLOOR_S) - s->mean[k];

			ss += dev * dev;
		}
		s->ss[k] = ss;
	}
}

/* Fill the medians, ranges, change and interval of row from s. */
static void describe(struct pt_rdiff_row *row, struct side *s, uint64_t seed)
{
	double tmp[64 * 16];
	int k;

	for (k = 0; k < 2; k++) {
		row->n[k] = s->n[k];
		if (!s->n[k])
			continue;
		pt_stats_range(s->v[k], s->n[k], &row->lo[k], &row->hi[k]);
		memcpy(tmp, s->v[k], s->n[k] * sizeof *tmp);
		row->med[k] = pt_stats_median(tmp, s->n[k]);
	}
	row->p = row->q = 1;
	if (!s->n[0] || !s->n[1])
		return;
	row->delta = row->med[1] - row->med[0];
	row->pct = row->med[0] > 0 ? 100 * row->delta / row->med[0] : 0;
	pt_stats_boot_ci(s->v[0], s->n[0], s->v[1], s->n[1], seed, ROUNDS,
			 &row->ci_lo, &row->ci_hi);
	moments(s);
}

/* The t test of row with pooled variance var over df degrees. */
static void t_test(struct pt_rdiff_row *row, const struct moments *s,
		   double var, double df)
{
	double se = sqrt(var * (1.0 / (double)s->n[0] +
				1.0 / (double)s->n[1]));

	if (se <= 0) {
		/* No spread anywhere: any difference is real, none is not. */
		row->p = s->mean[1] != s->mean[0] ? 0 : 1;
		return;
	}
	row->p = pt_stats_t_p((s->mean[1] - s->mean[0]) / se, df);
}

static enum pt_verdict judge(const struct pt_rdiff_row *row, double sig,
			     double min_abs, double min_rel)
{
	double mag = fabs(row->delta);

	if (sig >= ALPHA || mag < min_abs || mag < min_rel * row->med[0] ||
	    mag == 0)
		return PT_V_NOISE;
	if (row->delta > 0 && row->ci_lo > 0)
		return PT_V_SLOWER;
	if (row->delta < 0 && row->ci_hi < 0)
		return PT_V_FASTER;
	return PT_V_NOISE;
}

/* The run-level row of a per-run figure. */
static void run_row(struct pt_rdiff *d, struct pt_rdiff_row *row,
		    double (*get)(const struct pt_run *), uint64_t seed)
{
	struct side s;
	size_t i;
	double df;

	memset(&s, 0, sizeof s);
	s.v[0] = s.x[0];
	s.v[1] = s.x[1];
	for (i = 0; i < d->na + d->nb && i < 128; i++) {
		int k = i >= d->na;

		if (s.n[k] < 64)
			s.v[k][s.n[k]++] = get(&d->r->run[i]);
	}
	row->key = UINT32_MAX;
	describe(row, &s, seed);
	df = (double)(s.n[0] + s.n[1]) - 2;
	if (df < 1 || s.n[0] < 1 || s.n[1] < 1)
		return;
	t_test(row, &(struct moments){ { s.n[0], s.n[1] },
				       { s.mean[0], s.mean[1] },
				       { s.ss[0], s.ss[1] } },
	       (s.ss[0] + s.ss[1]) / df, df);
	row->q = row->p;
	row->verdict = judge(row, row->p, 0, d->min_run);
}

static double get_wall(const struct pt_run *r)
{
	return (double)r->wall / 1e9;
}

static double get_cpu(const struct pt_run *r)
{
	return (double)r->cpu_us / 1e6;
}

static double get_n(const struct pt_run *r)
{
	return (double)r->n;
}

/* The values of key on each side (runs where it occurs). */
static void gather(const struct pt_rdiff *d, uint32_t key, struct side *s,
		   double *cp)
{
	size_t i;

	memset(s, 0, sizeof *s);
	s->v[0] = s->x[0];
	s->v[1] = s->x[1];
	for (i = 0; i < d->na + d->nb; i++) {
		const struct pt_run_val *v = pt_runs_val(d->r, key, i);
		int k = i >= d->na;

		if (!v->n || s->n[k] == 64)
			continue;
		cp[k * 64 + s->n[k]] = (double)v->cp_own / 1e9;
		s->v[k][s->n[k]++] = weigh(v, d->weight);
	}
}

static int cmp_listed(const void *x, const void *y)
{
	const struct pt_rdiff_row *a = x, *b = y;
	int ba = a->verdict == PT_V_SLOWER || a->verdict == PT_V_FASTER;
	int bb = b->verdict == PT_V_SLOWER || b->verdict == PT_V_FASTER;

	if (ba != bb)
		return bb - ba;
	if (ba && fabs(a->cp_effect) != fabs(b->cp_effect))
		return fabs(a->cp_effect) > fabs(b->cp_effect) ? -1 : 1;
	if (fabs(a->delta) != fabs(b->delta))
		return fabs(a->delta) > fabs(b->delta) ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_only(const void *x, const void *y)
{
	const struct pt_rdiff_row *a = x, *b = y;
	double ma = a->n[0] ? a->med[0] : a->med[1];
	double mb = b->n[0] ? b->med[0] : b->med[1];

	if (ma != mb)
		return ma > mb ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

void pt_rdiff_compute(struct pt_rdiff *d, const struct pt_runs *r, size_t na,
		      enum pt_diff_weight weight)
{
	size_t nkeys = pt_runs_nkeys(r), i, ntest = 0, nvar = 0;
	double *vars, *p, *q, prior = 0, cp[128], tmp[64];
	struct moments *mom;
	struct side side, *s = &side;

	d->r = r;
	d->na = na;
	d->nb = r->nruns - na;
	d->weight = weight;
	if (!d->min_rel)
		d->min_rel = 0.10;
	if (!d->min_wall)
		d->min_wall = 0.01;
	if (!d->min_run)
		d->min_run = 0.01;
	run_row(d, &d->wall, get_wall, pt_stats_seed("wall", 4));
	run_row(d, &d->cpu, get_cpu, pt_stats_seed("cpu", 3));
	run_row(d, &d->execs, get_n, pt_stats_seed("n", 1));
	d->execs.verdict = PT_V_UNTESTED;

	d->rows = pt_xcalloc(nkeys ? nkeys : 1, sizeof *d->rows);
	d->only[0] = pt_xcalloc(nkeys ? nkeys : 1, sizeof *d->only[0]);
	d->only[1] = pt_xcalloc(nkeys ? nkeys : 1, sizeof *d->only[1]);
	mom = pt_xcalloc(nkeys ? nkeys : 1, sizeof *mom);
	vars = pt_xcalloc(nkeys ? nkeys : 1, sizeof *vars);
	for (i = 0; i < nkeys; i++) {
		struct pt_rdiff_row row;
		const char *key = pt_runs_key(r, (uint32_t)i);
		size_t k, j;

		memset(&row, 0, sizeof row);
		row.key = (uint32_t)i;
		gather(d, (uint32_t)i, s, cp);
		describe(&row, s, pt_stats_seed(key, strlen(key)));
		if (!s->n[0] || !s->n[1]) {
			k = s->n[1] != 0;
			d->only[k][d->nonly[k]++] = row;
			continue;
		}
		for (k = 0; k < 2; k++) {
			for (j = 0; j < s->n[k]; j++) {
				tmp[j] = cp[k * 64 + j];
				row.cp[k] += tmp[j] > 0;
			}
			row.cp_effect += (k ? 1 : -1) *
					 pt_stats_median(tmp, s->n[k]);
		}
		for (k = 0; k < 2; k++) {
			mom[i].n[k] = s->n[k];
			mom[i].mean[k] = s->mean[k];
			mom[i].ss[k] = s->ss[k];
		}
		if (s->n[0] + s->n[1] > 2)
			vars[nvar++] = (s->ss[0] + s->ss[1]) /
				       (double)(s->n[0] + s->n[1] - 2);
		d->rows[d->nrows++] = row;
	}
	/* The typical noise of a key: the median of their variances. */
	if (nvar) {
		prior = pt_stats_median(vars, nvar);
		d->testable = 1;
	}
	p = pt_xcalloc(d->nrows ? d->nrows : 1, sizeof *p);
	q = pt_xcalloc(d->nrows ? d->nrows : 1, sizeof *q);
	for (i = 0; d->testable && i < d->nrows; i++) {
		struct pt_rdiff_row *row = &d->rows[i];
		const struct moments *m = &mom[row->key];
		double df = (double)(m->n[0] + m->n[1]) - 2;

		t_test(row, m, (PRIOR_DF * prior + m->ss[0] + m->ss[1]) /
			       (PRIOR_DF + df), PRIOR_DF + df);
		p[ntest++] = row->p;
	}
	pt_stats_bh(p, ntest, q);
	for (i = 0; d->testable && i < d->nrows; i++) {
		struct pt_rdiff_row *row = &d->rows[i];

		row->q = q[i];
		row->verdict = judge(row, row->q, d->min_wall * d->wall.med[0],
				     d->min_rel);
		if (row->verdict == PT_V_SLOWER || row->verdict == PT_V_FASTER)
			d->nbeyond++;
	}
	qsort(d->rows, d->nrows, sizeof *d->rows, cmp_listed);
	qsort(d->only[0], d->nonly[0], sizeof *d->only[0], cmp_only);
	qsort(d->only[1], d->nonly[1], sizeof *d->only[1], cmp_only);
	free(p);
	free(q);
	free(vars);
	free(mom);
}

void pt_rdiff_free(struct pt_rdiff *d)
{
	free(d->rows);
	free(d->only[0]);
	free(d->only[1]);
	memset(d, 0, sizeof *d);
}
