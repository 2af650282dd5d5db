/* Time left from earlier runs; see eta.h. */
#include "analysis/eta.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "model/load.h"

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/*
 * Key ids of m's executions (added to h->keys), numbered among equals
 * in start order as runs.c numbers them.
 */
static uint32_t *key_ids(struct pt_strtab *keys, const struct pt_model *m)
{
	struct pt_sb key = PT_SB_INIT;
	struct pt_keynum num;
	uint32_t *ids = pt_xcalloc(m->n ? m->n : 1, sizeof *ids);
	size_t i;

	pt_keynum_init(&num);
	for (i = 0; i < m->n; i++) {
		pt_sb_reset(&key);
		pt_exec_key(m->execs[i], &key);
		pt_keynum_add(&num, &key);
		ids[i] = pt_strtab_intern(keys, key.buf, key.len, NULL);
	}
	pt_keynum_free(&num);
	pt_sb_release(&key);
	return ids;
}

static int64_t run_t0(const struct pt_model *m)
{
	return m->n ? m->execs[0]->start_ns : 0;    /* start order */
}

static void add_run(struct pt_eta *h, const char *path)
{
	char *paths[] = { (char *)path };
	struct pt_eta_run *r;
	struct pt_model m;
	uint32_t *ids;
	int64_t t0, t1 = 0;
	size_t i;
	int was = pt_warn_set_muted(1), rc;

	rc = pt_model_load(&m, paths, 1, NULL);
	pt_warn_set_muted(was);
	if (rc != 0)
		return;                 /* damaged or unreadable: not a guide */
	if (!m.n) {
		pt_model_free(&m);
		return;
	}
	ids = key_ids(&h->keys, &m);
	h->run = pt_xrealloc(h->run, (h->nruns + 1) * sizeof *h->run);
	r = &h->run[h->nruns++];
	r->nkeys = h->keys.n;
	r->start = pt_xmalloc(r->nkeys * sizeof *r->start);
	r->end = pt_xmalloc(r->nkeys * sizeof *r->end);
	for (i = 0; i < r->nkeys; i++)
		r->start[i] = r->end[i] = -1;
	t0 = run_t0(&m);
	for (i = 0; i < m.n; i++) {
		const struct pt_exec *e = m.execs[i];

		r->start[ids[i]] = e->start_ns - t0;
		r->end[ids[i]] = e->end_ns - t0;
		if (e->end_ns - t0 > t1)
			t1 = e->end_ns - t0;
	}
	r->wall = t1;
	free(ids);
	pt_model_free(&m);
}

size_t pt_eta_load(struct pt_eta *h, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	memset(h, 0, sizeof *h);
	pt_strtab_init(&h->keys);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		struct pt_sb sb = PT_SB_INIT;

		if (len < 7 || de->d_name[0] == '.' ||
		    strcmp(de->d_name + len - 6, ".ptcap"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = pt_xrealloc(names, cap * sizeof *names);
		}
		pt_sb_addf(&sb, "%s/%s", dir, de->d_name);
		names[n++] = pt_sb_detach(&sb, NULL);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (i = n > PT_ETA_RUNS ? n - PT_ETA_RUNS : 0; i < n; i++)
		add_run(h, names[i]);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return h->nruns;
}

void pt_eta_guess(struct pt_eta *h, const char *live, int64_t now_real,
		  struct pt_eta_guess *g)
{
	char *paths[] = { (char *)live };
	struct pt_strtab keys;
	struct pt_model m;
	uint32_t *ids;
	int64_t lo = INT64_MAX, hi = INT64_MIN, sum = 0;
	size_t i, k;
	int was, rc;

	memset(g, 0, sizeof *g);
	if (!h->nruns || !live || !*live)
		return;
	/* Being written: read up to its last flush, which the loader
	 * would call damage and say so. */
	was = pt_warn_set_muted(1);
	rc = pt_model_load(&m, paths, 1, NULL);
	pt_warn_set_muted(was);
	if (rc < 0)
		return;
	/* The live run's keys, numbered alike: an own table, looked up in
	 * the history's by string. */
	pt_strtab_init(&keys);
	ids = key_ids(&keys, &m);
	for (k = 0; k < h->nruns; k++) {
		const struct pt_eta_run *r = &h->run[k];
		int64_t at = 0, left;

		for (i = 0; i < m.n; i++) {
			const struct pt_exec *e = m.execs[i];
			const char *key = pt_strtab_str(&keys, ids[i]);
			int64_t p;
			uint32_t hk;
			int added = 0;

			/* Found in the history, or not there at all. */
			hk = pt_strtab_intern(&h->keys,
					      key, strlen(key), &added);
			if (added || hk >= r->nkeys || r->start[hk] < 0)
				continue;
			if (e->flags & PT_EXF_END_UNKNOWN) {
				/* Still running: as far into it as now. */
				int64_t in = now_real - e->start_ns;
				int64_t dur = r->end[hk] - r->start[hk];

				p = r->start[hk] + (in < dur ? in : dur);
			} else {
				p = r->end[hk];
			}
			if (p > at)
				at = p;
		}
		left = r->wall > at ? r->wall - at : 0;
		sum += left;
		if (left < lo)
			lo = left;
		if (left > hi)
			hi = left;
		g->nruns++;
	}
	free(ids);
	pt_strtab_free(&keys);
	pt_model_free(&m);
	if (!g->nruns)
		return;
	g->have = 1;
	g->left_ns = sum / (int64_t)g->nruns;
	g->spread_ns = (hi - lo) / 2;
}

void pt_eta_free(struct pt_eta *h)
{
	size_t i;

	for (i = 0; i < h->nruns; i++) {
		free(h->run[i].start);
		free(h->run[i].end);
	}
	free(h->run);
	pt_strtab_free(&h->keys);
	memset(h, 0, sizeof *h);
}
