/* Time left from earlier runs; see eta.h. */
#include "analysis/eta.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "model/load.h"

#define PT_ETA_S 1000000000ll

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

/* What one earlier run says of the live one. */
struct guess {
	int64_t left;                   /* time left, ns */
	int64_t overdue;                /* > 0: past its foretold end */
};

/*
 * Where the live run m stands in earlier run r, and at what pace it
 * goes: the pace is the ratio of the durations of the executions both
 * have finished (this run's over r's), so that a run slowed by load, or
 * sped up, is seen as such from its first finished steps on; where it
 * stands is the furthest point of r that this run has reached: the end
 * of each matched execution it has finished, and as far into each one
 * still running as its time in it, at that pace, makes.  What r still
 * took from there, at this run's pace, is the guess.
 */
static struct guess guess_one(const struct pt_eta_run *r,
			      const struct pt_model *m, const uint32_t *hk,
			      int64_t now_real)
{
	struct guess g = { 0, 0 };
	double live = 0, then = 0, pace, tau;
	int64_t at = 0, over = 0, elapsed;
	size_t i;

	if (!m->n)
		return g;
	elapsed = now_real - m->execs[0]->start_ns;
	/* The machine's load changes as the run goes: the executions that
	 * ended lately weigh most, those of a third of the run ago about a
	 * third as much. */
	tau = (double)(elapsed > 15 * PT_ETA_S ? elapsed : 15 * PT_ETA_S) / 3;
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		double w;

		if (hk[i] >= r->nkeys || r->start[hk[i]] < 0 ||
		    (e->flags & PT_EXF_END_UNKNOWN))
			continue;
		w = exp(-(double)(now_real > e->end_ns ? now_real - e->end_ns
						       : 0) / tau);
		live += w * (double)(e->end_ns - e->start_ns);
		then += w * (double)(r->end[hk[i]] - r->start[hk[i]]);
	}
	/* Until a few steps have finished, the pace leans on the earlier
	 * run's own (1): a hundredth of its time. */
	pace = (live + (double)r->wall / 100) / (then + (double)r->wall / 100);
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		int64_t p, dur;

		if (hk[i] >= r->nkeys || r->start[hk[i]] < 0)
			continue;
		dur = r->end[hk[i]] - r->start[hk[i]];
		if (e->flags & PT_EXF_END_UNKNOWN) {
			/* Still running: as far into it as its time at
			 * this pace; past it, it is late by the rest. */
			int64_t in = now_real - e->start_ns;
			int64_t in_then = (int64_t)((double)in / pace);

			if (in_then > dur) {
				int64_t late = in - (int64_t)((double)dur *
							      pace);

				if (late > over)
					over = late;
				in_then = dur;
			}
			p = r->start[hk[i]] + in_then;
		} else {
			p = r->end[hk[i]];
		}
		if (p > at)
			at = p;
	}
	if (at < r->wall) {
		g.left = (int64_t)((double)(r->wall - at) * pace);
		return g;
	}
	/* All of that run's work is done or under way, and this one goes
	 * on: late by what its running steps overstay, or by the whole
	 * run's time at this pace, whichever says more. */
	if (elapsed - (int64_t)((double)r->wall * pace) > over)
		over = elapsed - (int64_t)((double)r->wall * pace);
	g.overdue = over > 0 ? over : 1;
	return g;
}

void pt_eta_guess(struct pt_eta *h, const char *live, int64_t now_real,
		  struct pt_eta_guess *g)
{
	char *paths[] = { (char *)live };
	struct pt_strtab keys;
	struct pt_model m;
	uint32_t *ids, *hk;
	int64_t lo = INT64_MAX, hi = INT64_MIN, sum = 0, late = 0;
	size_t i, k, nlate = 0, n;
	int was, rc;

	uint64_t before = pt_real_ns();

	memset(g, 0, sizeof *g);
	g->at_real = now_real;
	if (!h->nruns || !live || !*live)
		return;
	/* Being written: read up to its last flush, which the loader
	 * would call damage and say so. */
	was = pt_warn_set_muted(1);
	rc = pt_model_load(&m, paths, 1, NULL);
	pt_warn_set_muted(was);
	if (rc < 0)
		return;
	/* A large capture takes a while to read: the guess is as of when
	 * it was read, with what it had then. */
	now_real += (int64_t)(pt_real_ns() - before);
	g->at_real = now_real;
	/* The live run's keys, numbered alike: an own table, looked up in
	 * the history's by string (UINT32_MAX: in no earlier run). */
	pt_strtab_init(&keys);
	ids = key_ids(&keys, &m);
	hk = pt_xcalloc(m.n ? m.n : 1, sizeof *hk);
	for (i = 0; i < m.n; i++) {
		const char *key = pt_strtab_str(&keys, ids[i]);
		int added = 0;

		hk[i] = pt_strtab_intern(&h->keys, key, strlen(key), &added);
		if (added)
			hk[i] = UINT32_MAX;
	}
	for (k = 0; k < h->nruns; k++) {
		struct guess one = guess_one(&h->run[k], &m, hk, now_real);

		if (one.overdue) {
			late += one.overdue;
			nlate++;
		}
		sum += one.left;
		if (one.left < lo)
			lo = one.left;
		if (one.left > hi)
			hi = one.left;
		g->nruns++;
	}
	n = m.n;
	free(hk);
	free(ids);
	pt_strtab_free(&keys);
	pt_model_free(&m);
	if (!g->nruns || !n) {
		g->nruns = 0;
		return;
	}
	g->have = 1;
	g->left_ns = sum / (int64_t)g->nruns;
	g->spread_ns = (hi - lo) / 2;
	/* Never "0 left" while the earlier runs' work is still to come:
	 * when every earlier run is past its end, the run is overdue. */
	if (nlate == g->nruns) {
		g->overdue = 1;
		g->overdue_ns = late / (int64_t)nlate;
	}
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
