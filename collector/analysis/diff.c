/* The diff's figures; see diff.h. */
#include "analysis/diff.h"

#include <stdlib.h>
#include <string.h>

#include "model/load.h"
#include "base/strbuf.h"

static int64_t weigh(const struct pt_diff_side *s, const struct pt_exec *e,
		     enum pt_diff_weight w)
{
	switch (w) {
	case PT_DIFF_WALL:
		return e->end_ns - e->start_ns;
	case PT_DIFF_SELF:
		return s->a.self_ns[e->id];
	case PT_DIFF_CPU:
		return pt_exec_cpu_us(e) * 1000;
	}
	return 0;
}

int pt_diff_load(struct pt_diff *d, int side, const char *path,
		 struct pt_redact *red)
{
	struct pt_diff_side *s = &d->s[side];
	char *paths[] = { (char *)path };
	int rc = pt_model_load(&s->m, paths, 1, red);
	size_t i;

	if (rc < 0)
		return -1;
	pt_analyze_tree(&s->a, &s->m);
	for (i = 0; i < s->m.n; i++) {
		const struct pt_exec *e = s->m.execs[i];

		s->cpu_us += pt_exec_cpu_us(e);
		if (e->exit_code > 0 || e->signal > 0)
			s->failed++;
	}
	return rc;
}

/* Every key with its time and executions in each run. */
static struct pt_diff_row *tally(struct pt_diff *d, size_t *nrows)
{
	struct pt_sb key = PT_SB_INIT, lab = PT_SB_INIT;
	struct pt_diff_row *rows = NULL;
	size_t side, i, cap = 0;

	*nrows = 0;
	for (side = 0; side < 2; side++) {
		const struct pt_diff_side *s = &d->s[side];

		for (i = 0; i < s->m.n; i++) {
			const struct pt_exec *e = s->m.execs[i];
			uint32_t id;
			int added;

			pt_sb_reset(&key);
			pt_group_key(&d->group, e, &key);
			id = pt_strtab_intern(&d->keys, key.buf, key.len,
					      &added);
			if (added) {
				if (*nrows == cap) {
					cap = cap ? 2 * cap : 256;
					rows = pt_xrealloc(rows, cap *
							   sizeof *rows);
					d->label = pt_xrealloc(d->label, cap *
							sizeof *d->label);
				}
				pt_sb_reset(&lab);
				if (d->group.kind == PT_GROUP_COMMAND)
					pt_exec_label(e, &lab);
				else
					pt_sb_add(&lab, key.buf, key.len);
				d->label[id] = pt_strtab_intern(&d->labels,
								lab.buf,
								lab.len, NULL);
				memset(&rows[id], 0, sizeof rows[id]);
				rows[id].id = id;
				(*nrows)++;
			}
			rows[id].t[side] += weigh(s, e, d->weight);
			rows[id].n[side]++;
		}
	}
	pt_sb_release(&key);
	pt_sb_release(&lab);
	return rows;
}

static int64_t absdelta(const struct pt_diff_row *r)
{
	int64_t v = r->t[1] - r->t[0];

	return v < 0 ? -v : v;
}

static int cmp_delta(const void *x, const void *y)
{
	const struct pt_diff_row *a = x, *b = y;
	int64_t da = absdelta(a), db = absdelta(b);

	if (da != db)
		return da > db ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_a(const void *x, const void *y)
{
	const struct pt_diff_row *a = x, *b = y;

	if (a->t[0] != b->t[0])
		return a->t[0] > b->t[0] ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_b(const void *x, const void *y)
{
	const struct pt_diff_row *a = x, *b = y;

	if (a->t[1] != b->t[1])
		return a->t[1] > b->t[1] ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

void pt_diff_compute(struct pt_diff *d)
{
	struct pt_diff_row *rows;
	size_t i, n, side;

	pt_strtab_init(&d->keys);
	pt_strtab_init(&d->labels);
	rows = tally(d, &n);
	d->both = pt_xcalloc(n ? n : 1, sizeof *d->both);
	for (side = 0; side < 2; side++)
		d->only[side] = pt_xcalloc(n ? n : 1, sizeof *d->only[side]);
	for (i = 0; i < n; i++) {
		if (rows[i].n[0] && rows[i].n[1]) {
			d->both[d->nboth++] = rows[i];
			continue;
		}
		side = rows[i].n[1] != 0;
		d->only[side][d->nonly[side]++] = rows[i];
		d->only_total[side] += rows[i].t[side];
		d->only_runs[side] += rows[i].n[side];
	}
	qsort(d->both, d->nboth, sizeof *d->both, cmp_delta);
	qsort(d->only[0], d->nonly[0], sizeof *d->only[0], cmp_a);
	qsort(d->only[1], d->nonly[1], sizeof *d->only[1], cmp_b);
	for (i = 0; i < d->nboth && d->nchanged < d->top; i++) {
		if (!absdelta(&d->both[i]) && d->nchanged)
			break;
		d->nchanged++;
	}
	free(rows);
}

void pt_diff_free(struct pt_diff *d, int sides)
{
	int i;

	for (i = 0; i < sides; i++) {
		pt_analysis_free(&d->s[i].a);
		pt_model_free(&d->s[i].m);
	}
	free(d->both);
	free(d->only[0]);
	free(d->only[1]);
	free(d->label);
	pt_strtab_free(&d->keys);
	pt_strtab_free(&d->labels);
}

const char *pt_diff_weight_name(enum pt_diff_weight w)
{
	return w == PT_DIFF_WALL ? "wall time" :
	       w == PT_DIFF_SELF ? "self time" : "CPU time";
}
