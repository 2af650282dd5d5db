/*
 * A string table for the analyses' own keys (labels, groups, diff keys):
 * strings interned to small ids.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/util.h"

/* ---- interning ---- */

void pt_strtab_init(struct pt_strtab *t)
{
	memset(t, 0, sizeof *t);
	pt_sb_init(&t->data);
}

static void strtab_rehash(struct pt_strtab *t)
{
	size_t n = t->nslots ? 2 * t->nslots : 256, i;

	free(t->slots);
	t->slots = pt_xcalloc(n, sizeof *t->slots);
	t->nslots = n;
	for (i = 0; i < t->n; i++) {
		size_t j = t->hashes[i] & (n - 1);

		while (t->slots[j])
			j = (j + 1) & (n - 1);
		t->slots[j] = (uint32_t)i + 1;
	}
}

static uint32_t strtab_lookup(const struct pt_strtab *t, const void *key,
			      size_t len, uint32_t h, size_t *slot)
{
	size_t j, mask;

	if (!t->nslots) {
		*slot = 0;
		return NONE;
	}
	mask = t->nslots - 1;
	for (j = h & mask; t->slots[j]; j = (j + 1) & mask) {
		uint32_t id = t->slots[j] - 1;

		if (t->hashes[id] == h && t->len[id] == len &&
		    !memcmp(t->data.buf + t->off[id], key, len))
			return id;
	}
	*slot = j;
	return NONE;
}

uint32_t pt_strtab_intern(struct pt_strtab *t, const void *key, size_t len,
			  int *added)
{
	uint32_t h = pt_hash_bytes(key, len), id;
	size_t slot;

	id = strtab_lookup(t, key, len, h, &slot);
	if (added)
		*added = id == NONE;
	if (id != NONE)
		return id;
	if ((t->n + 1) * 2 > t->nslots) {
		strtab_rehash(t);
		strtab_lookup(t, key, len, h, &slot);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->off = pt_xrealloc(t->off, t->cap * sizeof *t->off);
		t->len = pt_xrealloc(t->len, t->cap * sizeof *t->len);
		t->hashes = pt_xrealloc(t->hashes, t->cap * sizeof *t->hashes);
	}
	id = (uint32_t)t->n++;
	t->off[id] = t->data.len;
	t->len[id] = (uint32_t)len;
	t->hashes[id] = h;
	pt_sb_add(&t->data, key, len);
	pt_sb_addch(&t->data, '\0');
	t->slots[slot] = id + 1;
	return id;
}

void pt_strtab_free(struct pt_strtab *t)
{
	pt_sb_release(&t->data);
	free(t->off);
	free(t->len);
	free(t->slots);
	free(t->hashes);
	memset(t, 0, sizeof *t);
	pt_sb_init(&t->data);
}

void pt_keynum_init(struct pt_keynum *k)
{
	pt_strtab_init(&k->seen);
	k->count = NULL;
	k->cap = 0;
}

void pt_keynum_add(struct pt_keynum *k, struct pt_sb *key)
{
	uint32_t id = pt_strtab_intern(&k->seen, key->buf, key->len, NULL);

	if (id >= k->cap) {
		size_t old = k->cap;

		k->cap = k->cap ? 2 * k->cap : 256;
		while (k->cap <= id)
			k->cap *= 2;
		k->count = pt_xrealloc(k->count, k->cap * sizeof *k->count);
		memset(k->count + old, 0, (k->cap - old) * sizeof *k->count);
	}
	if (++k->count[id] > 1)
		pt_sb_addf(key, " #%u", k->count[id]);
}

void pt_keynum_free(struct pt_keynum *k)
{
	free(k->count);
	pt_strtab_free(&k->seen);
}
