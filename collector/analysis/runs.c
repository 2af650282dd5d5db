/* Many runs of one build, matched by key; see runs.h. */
#include "analysis/runs.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "model/load.h"

void pt_runs_init(struct pt_runs *r, const struct pt_group_by *g,
		  size_t maxruns)
{
	memset(r, 0, sizeof *r);
	r->group = *g;
	r->maxruns = maxruns ? maxruns : 1;
	r->run = pt_xcalloc(r->maxruns, sizeof *r->run);
	pt_strtab_init(&r->keys);
	pt_strtab_init(&r->labels);
}

/* The row of key (new rows zeroed: absent from every run so far). */
static struct pt_run_val *row(struct pt_runs *r, uint32_t key)
{
	if (key >= r->capkeys) {
		size_t cap = r->capkeys ? 2 * r->capkeys : 256, i;

		while (cap <= key)
			cap *= 2;
		r->v = pt_xrealloc(r->v, cap * r->maxruns * sizeof *r->v);
		memset(r->v + r->capkeys * r->maxruns, 0,
		       (cap - r->capkeys) * r->maxruns * sizeof *r->v);
		r->label = pt_xrealloc(r->label, cap * sizeof *r->label);
		for (i = r->capkeys; i < cap; i++)
			r->label[i] = UINT32_MAX;
		r->capkeys = cap;
	}
	return &r->v[(size_t)key * r->maxruns];
}

/*
 * Key id of every execution of m.  Command keys are numbered among
 * equals in start order (m->execs is in start order).
 */
static uint32_t *key_ids(struct pt_runs *r, const struct pt_model *m)
{
	struct pt_sb key = PT_SB_INIT, lab = PT_SB_INIT;
	struct pt_keynum num;
	uint32_t *ids = pt_xcalloc(m->n ? m->n : 1, sizeof *ids);
	size_t i;

	pt_keynum_init(&num);
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];

		pt_sb_reset(&key);
		pt_group_key(&r->group, e, &key);
		if (r->group.kind == PT_GROUP_COMMAND)
			pt_keynum_add(&num, &key);
		ids[i] = pt_strtab_intern(&r->keys, key.buf, key.len, NULL);
		row(r, ids[i]);
		if (r->label[ids[i]] == UINT32_MAX) {
			pt_sb_reset(&lab);
			if (r->group.kind == PT_GROUP_COMMAND)
				pt_exec_label(e, &lab);
			else
				pt_sb_add(&lab, key.buf, key.len);
			r->label[ids[i]] = pt_strtab_intern(&r->labels,
							    lab.buf, lab.len,
							    NULL);
		}
	}
	pt_keynum_free(&num);
	pt_sb_release(&key);
	pt_sb_release(&lab);
	return ids;
}

static void tally(struct pt_runs *r, struct pt_run *run,
		  const struct pt_model *m, const struct pt_analysis *a,
		  const uint32_t *ids)
{
	size_t i, k = (size_t)(run - r->run);

	run->rss_kb = -1;
	for (i = 0; i < m->n; i++) {
		const struct pt_exec *e = m->execs[i];
		struct pt_run_val *v = &r->v[(size_t)ids[i] * r->maxruns + k];

		if (!v->n)
			v->rss_kb = -1;
		v->n++;
		v->wall += e->end_ns - e->start_ns;
		v->self += a->self_ns[i];
		v->cpu_us += pt_exec_cpu_us(e);
		if (e->maxrss_kb > v->rss_kb)
			v->rss_kb = e->maxrss_kb;
		if (e->maxrss_kb > run->rss_kb)
			run->rss_kb = e->maxrss_kb;
		run->cpu_us += pt_exec_cpu_us(e);
		if (e->exit_code > 0 || e->signal > 0)
			run->failed++;
	}
	run->cp = pt_xcalloc(a->ncp ? a->ncp : 1, sizeof *run->cp);
	for (i = 0; i < a->ncp; i++) {
		const struct pt_cp_step *st = &a->cp[i];

		if (st->exec == UINT32_MAX)
			continue;
		r->v[(size_t)ids[st->exec] * r->maxruns + k].cp_own += st->own;
		/* The path's main steps, for telling paths apart: the
		 * smallest ones change from run to run by chance. */
		if (st->own * 100 >= run->wall && st->own > 0) {
			run->cp[run->ncp++] = ids[st->exec];
			run->cp_main += st->own;
		}
	}
}

int pt_runs_add(struct pt_runs *r, const char *path, struct pt_redact *red)
{
	struct pt_run *run;
	struct pt_model m;
	struct pt_analysis a;
	char *paths[] = { (char *)path };
	uint32_t *ids;
	const char *pipe;
	int rc;

	if (r->nruns == r->maxruns)
		return -1;
	rc = pt_model_load(&m, paths, 1, red);
	if (rc < 0)
		return -1;
	run = &r->run[r->nruns++];
	run->path = path;
	run->damaged = rc > 0;
	pt_analyze(&a, &m, 0);
	run->t0 = a.t0;
	run->wall = a.t1 - a.t0;
	run->parallel = a.average;
	run->n = m.n;
	pipe = pt_model_meta(&m, 0, "CI_PIPELINE_ID");
	if (!pipe)
		pipe = pt_model_meta(&m, 0, "GITHUB_RUN_ID");
	run->pipeline = pipe ? strdup(pipe) : NULL;
	ids = key_ids(r, &m);
	tally(r, run, &m, &a, ids);
	free(ids);
	pt_analysis_free(&a);
	pt_model_free(&m);
	return rc;
}

size_t pt_runs_common_path(const struct pt_runs *r, size_t from, size_t to,
			   size_t *count)
{
	size_t i, j, best = from, bestn = 0;

	for (i = from; i < to; i++) {
		const struct pt_run *x = &r->run[i];
		size_t n = 0;

		for (j = from; j < to; j++) {
			const struct pt_run *y = &r->run[j];

			if (x->ncp == y->ncp &&
			    !memcmp(x->cp, y->cp, x->ncp * sizeof *x->cp))
				n++;
		}
		if (n > bestn) {
			bestn = n;
			best = i;
		}
	}
	*count = bestn;
	return best;
}

int pt_runs_one_pipeline(const struct pt_run *run, size_t n,
			 const char **why)
{
	size_t i, j;

	*why = "their times do not overlap: repeated runs";
	if (n < 2)
		return 0;
	for (i = 1; i < n; i++)
		if (!run[0].pipeline || !run[i].pipeline ||
		    strcmp(run[0].pipeline, run[i].pipeline))
			break;
	if (i == n) {
		*why = "one CI pipeline id: jobs of one pipeline";
		return 1;
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (run[i].t0 < run[j].t0 + run[j].wall &&
			    run[j].t0 < run[i].t0 + run[i].wall) {
				*why = "their times overlap: jobs of one "
				       "pipeline";
				return 1;
			}
	return 0;
}

void pt_runs_free(struct pt_runs *r)
{
	size_t i;

	for (i = 0; i < r->nruns; i++) {
		free(r->run[i].cp);
		free((char *)r->run[i].pipeline);
	}
	free(r->run);
	free(r->v);
	free(r->label);
	pt_strtab_free(&r->keys);
	pt_strtab_free(&r->labels);
	memset(r, 0, sizeof *r);
}
