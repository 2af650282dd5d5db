/* Pids across pid namespaces: see pidns.h. */
#include <stdlib.h>
#include <string.h>

#include "model/pidns.h"
#include "base/util.h"

static uint32_t pidns_hash(uint32_t ns, uint32_t nspid)
{
	uint64_t k = ((uint64_t)ns << 32 | nspid) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(k >> 32);
}

static void pidns_rehash(struct pt_pidns *t, uint32_t size)
{
	uint32_t i, j;

	free(t->slot);
	t->slot = calloc(size, sizeof *t->slot);
	if (!t->slot)
		pt_die(1, "out of memory");
	t->mask = size - 1;
	for (i = 0; i < t->n; i++) {
		for (j = pidns_hash(t->ent[i].ns, t->ent[i].nspid) & t->mask;
		     t->slot[j]; j = (j + 1) & t->mask)
			;
		t->slot[j] = i + 1;
	}
}

/* Index of (ns, nspid), created on first sight. */
static uint32_t pidns_index(struct pt_pidns *t, uint32_t ns, uint32_t nspid)
{
	uint32_t j;

	if (!t->slot || (t->n + 1) * 2 > t->mask + 1)
		pidns_rehash(t, t->slot ? 2 * (t->mask + 1) : 64);
	for (j = pidns_hash(ns, nspid) & t->mask; t->slot[j];
	     j = (j + 1) & t->mask) {
		const struct pt_pidns_ent *e = &t->ent[t->slot[j] - 1];

		if (e->ns == ns && e->nspid == nspid)
			return t->slot[j] - 1;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->ent = realloc(t->ent, t->cap * sizeof *t->ent);
		if (!t->ent)
			pt_die(1, "out of memory");
	}
	t->ent[t->n] = (struct pt_pidns_ent){ ns, nspid, 0 };
	t->slot[j] = ++t->n;
	return t->n - 1;
}

uint32_t pt_pidns_ref(struct pt_pidns *t, uint32_t ns, uint32_t nspid)
{
	return PT_PIDNS_REF | pidns_index(t, ns, nspid);
}

void pt_pidns_learn(struct pt_pidns *t, uint32_t ns, uint32_t nspid,
		    uint32_t pid)
{
	uint32_t i = pidns_index(t, ns, nspid);    /* may move t->ent */

	t->ent[i].pid = pid;
}

static const struct pt_pidns_ent *pidns_ent(const struct pt_pidns *t,
					    uint32_t raw)
{
	if (!(raw & PT_PIDNS_REF) || (raw & ~PT_PIDNS_REF) >= t->n)
		return NULL;
	return &t->ent[raw & ~PT_PIDNS_REF];
}

uint32_t pt_pidns_resolve(const struct pt_pidns *t, uint32_t raw)
{
	const struct pt_pidns_ent *e = pidns_ent(t, raw);

	return e && e->pid ? e->pid : raw;
}

uint32_t pt_pidns_shown(const struct pt_pidns *t, uint32_t raw)
{
	const struct pt_pidns_ent *e = pidns_ent(t, raw);

	return e ? (e->pid ? e->pid : e->nspid) : raw;
}

void pt_pidns_free(struct pt_pidns *t)
{
	free(t->ent);
	free(t->slot);
	memset(t, 0, sizeof *t);
}
