/* What the programs' own events add up to; see inside.h. */
#include "analysis/inside.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

/* One (name, detail) pair: strings are the model's interned ones, so a
 * pointer stands for its string. */
struct acc {
	struct pt_inside_row row;
	int64_t longest_ns;
	uint32_t next;                  /* hash chain */
};

struct table {
	struct acc *v;
	size_t n, cap;
	uint32_t *head;                 /* nbuckets chains, UINT32_MAX ends */
	size_t nbuckets;
};

static uint32_t hash2(const void *a, const void *b)
{
	uint64_t h = ((uintptr_t)a * 0x9e3779b97f4a7c15ull) ^
		     ((uintptr_t)b * 0xff51afd7ed558ccdull);

	return (uint32_t)(h ^ h >> 29);
}

static void rehash(struct table *t)
{
	size_t i;

	free(t->head);
	t->nbuckets = t->nbuckets ? 2 * t->nbuckets : 256;
	t->head = pt_xmalloc(t->nbuckets * sizeof *t->head);
	memset(t->head, 0xff, t->nbuckets * sizeof *t->head);
	for (i = 0; i < t->n; i++) {
		uint32_t b = hash2(t->v[i].row.name, t->v[i].row.detail) %
			     t->nbuckets;

		t->v[i].next = t->head[b];
		t->head[b] = (uint32_t)i;
	}
}

static void add(struct table *t, const char *name, const char *detail,
		int64_t ns, uint32_t exec)
{
	uint32_t b, i;
	struct acc *a;

	if (t->n >= t->nbuckets)
		rehash(t);
	b = hash2(name, detail) % t->nbuckets;
	for (i = t->head[b]; i != UINT32_MAX; i = t->v[i].next)
		if (t->v[i].row.name == name && t->v[i].row.detail == detail)
			break;
	if (i == UINT32_MAX) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 256;
			t->v = pt_xrealloc(t->v, t->cap * sizeof *t->v);
		}
		i = (uint32_t)t->n++;
		memset(&t->v[i], 0, sizeof t->v[i]);
		t->v[i].row.name = name;
		t->v[i].row.detail = detail;
		t->v[i].longest_ns = -1;
		t->v[i].next = t->head[b];
		t->head[b] = i;
	}
	a = &t->v[i];
	a->row.total_ns += ns;
	a->row.count++;
	if (ns > a->longest_ns) {
		a->longest_ns = ns;
		a->row.longest = exec;
	}
}

static int cmp_total(const void *x, const void *y)
{
	const struct acc *a = x, *b = y;
	int c;

	if (a->row.total_ns != b->row.total_ns)
		return a->row.total_ns > b->row.total_ns ? -1 : 1;
	if ((c = strcmp(a->row.name, b->row.name)))
		return c;
	return strcmp(a->row.detail ? a->row.detail : "",
		      b->row.detail ? b->row.detail : "");
}

void pt_inside_compute(struct pt_inside *in, const struct pt_model *m,
		       size_t top)
{
	struct table names = { 0 }, subjects = { 0 };
	size_t i, k, j, shown;

	memset(in, 0, sizeof *in);
	for (i = 0; i < m->n; i++) {
		size_t n;
		const struct pt_sub *s = pt_model_subs(m, m->execs[i], &n);

		if (n)
			in->execs++;
		for (k = 0; k < n; k++) {
			if (s[k].ph != 'X')
				continue;
			in->events++;
			add(&names, s[k].name, NULL, s[k].dur_ns, (uint32_t)i);
			if (s[k].detail)
				add(&subjects, s[k].name, s[k].detail,
				    s[k].dur_ns, (uint32_t)i);
		}
	}
	if (names.n)
		qsort(names.v, names.n, sizeof *names.v, cmp_total);
	if (subjects.n)
		qsort(subjects.v, subjects.n, sizeof *subjects.v, cmp_total);
	in->kinds = names.n;
	in->nby_name = names.n < top ? names.n : top;
	in->by_name = pt_xmalloc((in->nby_name + 1) * sizeof *in->by_name);
	for (i = 0; i < in->nby_name; i++)
		in->by_name[i] = names.v[i].row;
	/* The subjects of the costliest kinds that have any, each kind's
	 * rows together. */
	in->by_subject = pt_xmalloc((PT_INSIDE_KINDS * top + 1) *
				    sizeof *in->by_subject);
	for (i = 0, k = 0; i < names.n && k < PT_INSIDE_KINDS; i++) {
		for (j = 0, shown = 0; j < subjects.n && shown < top; j++)
			if (subjects.v[j].row.name == names.v[i].row.name) {
				in->by_subject[in->nby_subject++] =
					subjects.v[j].row;
				shown++;
			}
		k += shown > 0;
	}
	free(names.v);
	free(names.head);
	free(subjects.v);
	free(subjects.head);
}

void pt_inside_free(struct pt_inside *in)
{
	free(in->by_name);
	free(in->by_subject);
	memset(in, 0, sizeof *in);
}
