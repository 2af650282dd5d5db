/* Many runs summarized as one; see runsum.h. */
#include "analysis/runsum.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "base/strbuf.h"

static struct pt_runsum_stat stat_of(double *v, size_t n)
{
	struct pt_runsum_stat s = { 0, 0, 0 };

	if (!n)
		return s;
	pt_stats_range(v, n, &s.lo, &s.hi);
	s.med = pt_stats_median(v, n);
	return s;
}

/* The figures of key over the runs where it occurs. */
static void key_row(const struct pt_runs *r, uint32_t key,
		    struct pt_runsum_row *row, double *tmp)
{
	size_t i, n = 0;
	int f;

	memset(row, 0, sizeof *row);
	row->key = key;
	for (f = 0; f < 5; f++) {
		n = 0;
		for (i = 0; i < r->nruns; i++) {
			const struct pt_run_val *v = pt_runs_val(r, key, i);

			if (!v->n || (f == 3 && v->rss_kb < 0))
				continue;
			tmp[n++] = f == 0 ? (double)v->wall / 1e9 :
				   f == 1 ? (double)v->self / 1e9 :
				   f == 2 ? (double)v->cpu_us / 1e6 :
				   f == 3 ? (double)v->rss_kb / 1024.0 :
				   (double)v->cp_own / 1e9;
		}
		switch (f) {
		case 0:
			row->wall = stat_of(tmp, n);
			break;
		case 1:
			row->self = stat_of(tmp, n);
			break;
		case 2:
			row->cpu = stat_of(tmp, n);
			break;
		case 3:
			row->rss = stat_of(tmp, n);
			break;
		default:
			row->cp_own = stat_of(tmp, n).med;
		}
	}
	row->n = n;
	row->spread = row->wall.med > 0 ?
		      100 * (row->wall.hi - row->wall.lo) / row->wall.med : 0;
}

static int cmp_wall(const void *x, const void *y)
{
	const struct pt_runsum_row *a = x, *b = y;

	if (a->wall.med != b->wall.med)
		return a->wall.med > b->wall.med ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

void pt_runsum_compute(struct pt_runsum *s, const struct pt_runs *r)
{
	size_t nkeys = pt_runs_nkeys(r), i, f;
	double *tmp = pt_xcalloc(r->nruns ? r->nruns : 1, sizeof *tmp);
	const struct pt_run *pr;

	memset(s, 0, sizeof *s);
	s->r = r;
	for (f = 0; f < 6; f++) {
		struct pt_runsum_stat *st[] = { &s->wall, &s->cpu, &s->parallel,
						&s->execs, &s->failed,
						&s->rss };
		size_t n = 0;

		for (i = 0; i < r->nruns; i++) {
			pr = &r->run[i];
			if (f == 5 && pr->rss_kb < 0)
				continue;
			tmp[n++] = f == 0 ? (double)pr->wall / 1e9 :
				   f == 1 ? (double)pr->cpu_us / 1e6 :
				   f == 2 ? pr->parallel :
				   f == 3 ? (double)pr->n :
				   f == 4 ? (double)pr->failed :
				   (double)pr->rss_kb / 1024.0;
		}
		*st[f] = stat_of(tmp, n);
	}
	s->rows = pt_xcalloc(nkeys ? nkeys : 1, sizeof *s->rows);
	for (i = 0; i < nkeys; i++)
		key_row(r, (uint32_t)i, &s->rows[i], tmp);
	s->nrows = nkeys;
	qsort(s->rows, s->nrows, sizeof *s->rows, cmp_wall);

	if (r->nruns) {
		s->path_run = pt_runs_common_path(r, 0, r->nruns,
						  &s->path_count);
		pr = &r->run[s->path_run];
		s->path = pt_xcalloc(pr->ncp ? pr->ncp : 1, sizeof *s->path);
		for (i = 0; i < pr->ncp; i++)
			key_row(r, pr->cp[i], &s->path[i], tmp);
		s->npath = pr->ncp;
	}
	free(tmp);
}

void pt_runsum_free(struct pt_runsum *s)
{
	free(s->rows);
	free(s->path);
	memset(s, 0, sizeof *s);
}
