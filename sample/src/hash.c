/* hash.c - a tiny open-addressing hash table mapping strings to counts. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sample.h"

uint32_t hash_fnv1a(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 16777619u;
	}
	return h;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		abort();
	return p;
}

void ht_init(struct htable *t)
{
	t->cap = 64;
	t->len = 0;
	t->slots = xcalloc(t->cap, sizeof *t->slots);
}

void ht_free(struct htable *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
	t->slots = NULL;
	t->cap = t->len = 0;
}

static struct hentry *probe(struct hentry *slots, size_t cap,
			    const char *key, size_t klen, uint32_t h)
{
	size_t i = h & (cap - 1);

	for (;;) {
		struct hentry *e = &slots[i];

		if (!e->key)
			return e;
		if (e->hash == h && e->klen == klen &&
		    memcmp(e->key, key, klen) == 0)
			return e;
		i = (i + 1) & (cap - 1);
	}
}

static void grow(struct htable *t)
{
	size_t ncap = t->cap * 2, i;
	struct hentry *ns = xcalloc(ncap, sizeof *ns);

	for (i = 0; i < t->cap; i++) {
		struct hentry *e = &t->slots[i];

		if (e->key)
			*probe(ns, ncap, e->key, e->klen, e->hash) = *e;
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
}

long *ht_upsert(struct htable *t, const char *key, size_t klen)
{
	uint32_t h = hash_fnv1a(key, klen);
	struct hentry *e;

	if ((t->len + 1) * 4 >= t->cap * 3)
		grow(t);
	e = probe(t->slots, t->cap, key, klen, h);
	if (!e->key) {
		e->key = malloc(klen + 1);
		if (!e->key)
			abort();
		memcpy(e->key, key, klen);
		e->key[klen] = '\0';
		e->klen = klen;
		e->hash = h;
		e->count = 0;
		t->len++;
	}
	return &e->count;
}

const struct hentry *ht_find(const struct htable *t, const char *key,
			     size_t klen)
{
	const struct hentry *e;

	e = probe(t->slots, t->cap, key, klen, hash_fnv1a(key, klen));
	return e->key ? e : NULL;
}

struct hentry **ht_collect(const struct htable *t, size_t *n)
{
	struct hentry **out = xcalloc(t->len + 1, sizeof *out);
	size_t i, k = 0;

	for (i = 0; i < t->cap; i++)
		if (t->slots[i].key)
			out[k++] = &t->slots[i];
	*n = k;
	return out;
}
