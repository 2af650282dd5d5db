/*
 * The model's memory: an arena for many small allocations freed at once,
 * open-addressing index tables, and interned strings and string vectors,
 * so that a million executions' argv cost one copy per distinct string.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/build.h"
#include "base/strbuf.h"
#include "base/util.h"

/*
 * A model of a million executions fills most of a gigabyte, and on a
 * virtual machine a page fault per 4 KiB page costs as much as the work
 * done in the page: ask for transparent huge pages where they are given on
 * request (madvise mode).  Only whole aligned huge pages inside [p, p+n).
 */
#define HUGE_PAGE (2u << 20)

static void huge_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);  /* only a hint */
#else
	(void)p;
	(void)n;
#endif
}

/*
 * realloc for arrays that may grow large.  Unlike the arenas, no
 * huge-page hint: growing a mapping that has huge pages with mremap
 * doubled its RSS here (the event array's last doubling took 100 MB more
 * at once).
 */
void *pt_xrealloc_big(void *p, size_t n)
{
	if (n >= BIG_ARRAY && p && malloc_usable_size(p) < BIG_ARRAY) {
		/* Moving to a mapping: the last copy this array sees. */
		void *q = pt_xmalloc(n);

		memcpy(q, p, malloc_usable_size(p));
		free(p);
		p = q;
	} else {
		p = pt_xrealloc(p, n);
	}
	return p;
}

void *pt_arena_alloc(struct arena *a, size_t n, size_t align)
{
	uintptr_t p = ((uintptr_t)a->cur + align - 1) & ~(uintptr_t)(align - 1);
	struct chunk *c;
	void *mem;

	if (a->cur && p - (uintptr_t)a->cur + n <= a->left) {
		a->left -= p - (uintptr_t)a->cur + n;
		a->cur = (char *)p + n;
		return (void *)p;
	}
	if (n > ARENA_CHUNK / 4) {
		/* Large: a chunk of its own, behind the current one. */
		c = pt_xmalloc(sizeof *c + n);
		c->size = n;
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = NULL;
			a->head = c;
		}
		return c + 1;
	}
	/* Aligned, so that the chunk is made of whole huge pages. */
	if (posix_memalign(&mem, HUGE_PAGE, sizeof *c + ARENA_CHUNK))
		pt_die(1, "out of memory");
	huge_hint(mem, sizeof *c + ARENA_CHUNK);
	c = mem;
	c->size = ARENA_CHUNK;
	c->next = a->head;
	a->head = c;
	a->cur = (char *)(c + 1) + n;
	a->left = ARENA_CHUNK - n;
	return c + 1;
}

void pt_arena_free(struct arena *a)
{
	struct chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(a, 0, sizeof *a);
}

/* Grow *p (n used of *cap elements of size sz) to hold one more. */
void *pt_grow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 256;
	return pt_xrealloc_big(p, *cap * sz);
}

uint32_t pt_hash_u64(uint64_t k)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32);
}

void pt_itab_free(struct itab *t)
{
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/* Make room for one more entry; hashes re-derived by the callback. */
void pt_itab_reserve(struct itab *t, uint32_t (*hash)(const void *, uint32_t),
			 const void *ctx)
{
	uint32_t *old = t->slot, oldn = old ? t->mask + 1 : 0, i, newn;

	if (old && (t->n + 1) * 2 <= oldn)
		return;
	newn = oldn ? 2 * oldn : 1024;
	t->slot = pt_xcalloc(newn, sizeof *t->slot);
	if (newn * sizeof *t->slot >= 4 * HUGE_PAGE)
		huge_hint(t->slot, newn * sizeof *t->slot);
	t->mask = newn - 1;
	for (i = 0; i < oldn; i++) {
		uint32_t j;

		if (!old[i])
			continue;
		for (j = hash(ctx, old[i] - 1) & t->mask; t->slot[j];
		     j = (j + 1) & t->mask)
			;
		t->slot[j] = old[i];
	}
	free(old);
}
#define SPLIT_MIN 64

/* Decode the id at p into *id; returns where the next one starts. */
const unsigned char *pt_vec_unpack(const unsigned char *p, uint32_t *id)
{
	uint32_t v = 0;
	int shift = 0;

	do {
		v |= (uint32_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	*id = v;
	return p;
}

/* Packed copy of ids[0..n) in the arena. */
static const void *vec_pack(struct arena *a, const uint32_t *ids, size_t n)
{
	unsigned char *out, *o;
	size_t i, bytes = 0;

	for (i = 0; i < n; i++) {
		uint32_t v = ids[i];

		do
			bytes++;
		while (v >>= 7);
	}
	out = o = pt_arena_alloc(a, bytes ? bytes : 1, 1);
	for (i = 0; i < n; i++) {
		uint32_t v = ids[i];

		while (v >= 0x80) {
			*o++ = (unsigned char)(v | 0x80);
			v >>= 7;
		}
		*o++ = (unsigned char)v;
	}
	return out;
}

static uint32_t str_rehash(const void *ctx, uint32_t id)
{
	return ((const struct strtab *)ctx)->hash[id];
}

static uint32_t vec_rehash(const void *ctx, uint32_t id)
{
	return ((const struct vectab *)ctx)->hash[id];
}

/* Whether string id holds exactly s[0..len). */
static int str_equal(const struct strtab *st, uint32_t id, const char *s,
		     size_t len)
{
	const uint32_t *w;
	uint32_t k;

	if (!(st->len[id] & STR_SPLIT))
		return st->len[id] == len && !memcmp(st->str[id], s, len);
	if ((st->len[id] & ~STR_SPLIT) != len)
		return 0;
	/* The words and their spaces add up to len: no read goes past s. */
	w = (const uint32_t *)(const void *)st->str[id];
	for (k = 1; k <= w[0]; k++) {
		if (k > 1 && *s++ != ' ')
			return 0;
		if (memcmp(st->str[w[k]], s, st->len[w[k]]))
			return 0;
		s += st->len[w[k]];
	}
	return 1;
}

static uint32_t str_intern_x(struct strtab *st, const char *s, size_t len,
			     uint32_t h, int split);

/*
 * s[0..len) as the ids of its words, in the arena: [count, ids...]; or
 * NULL if its words are so short that their ids would take more room
 * than its bytes (a run of spaces would take four times as much).
 */
static const char *str_split(struct strtab *st, const char *s, size_t len)
{
	const char *end = s + len, *sp;
	uint32_t *copy;
	size_t n = 0;

	for (sp = s; (sp = memchr(sp, ' ', (size_t)(end - sp))); sp++)
		if (++n >= len / 4)
			return NULL;
	n = 0;
	for (;;) {
		sp = memchr(s, ' ', (size_t)(end - s));
		if (n + 1 >= st->cwords) {
			st->cwords = st->cwords ? 2 * st->cwords : 256;
			st->words = pt_xrealloc(st->words,
						st->cwords * sizeof *st->words);
		}
		/* Words are short and common: never split themselves. */
		st->words[++n] = str_intern_x(st, s, (size_t)((sp ? sp : end) - s),
					      0, 0);
		if (!sp)
			break;
		s = sp + 1;
	}
	st->words[0] = (uint32_t)n;
	copy = pt_arena_alloc(&st->mem, (n + 1) * sizeof *copy, sizeof *copy);
	memcpy(copy, st->words, (n + 1) * sizeof *copy);
	return (const char *)(void *)copy;
}

/*
 * The id of s[0..len), whose pt_hash_bytes() is h (0 to compute it here),
 * added if new.  split: s is an argument, which may be kept split; a
 * string read as a C string is never handed out split.
 */
static uint32_t str_intern_x(struct strtab *st, const char *s, size_t len,
			     uint32_t h, int split)
{
	const char *copy;
	uint32_t j, id, flag = 0;

	if (!h)
		h = pt_hash_bytes(s, len);
	pt_itab_reserve(&st->t, str_rehash, st);
	for (j = h & st->t.mask; st->t.slot[j]; j = (j + 1) & st->t.mask) {
		id = st->t.slot[j] - 1;
		if (st->hash[id] == h && (split || !(st->len[id] & STR_SPLIT)) &&
		    str_equal(st, id, s, len))
			return id;
	}
	copy = split && len >= SPLIT_MIN && memchr(s, ' ', len) ?
	       str_split(st, s, len) : NULL;
	if (copy) {
		/* Interning the words may move the table: find j again. */
		flag = STR_SPLIT;
		pt_itab_reserve(&st->t, str_rehash, st);
		for (j = h & st->t.mask; st->t.slot[j];
		     j = (j + 1) & st->t.mask)
			;
	} else {
		char *c = pt_arena_alloc(&st->mem, len + 1, 1);

		memcpy(c, s, len);
		c[len] = '\0';
		copy = c;
	}
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 4096;
		st->str = pt_xrealloc_big(st->str, st->cap * sizeof *st->str);
		st->len = pt_xrealloc_big(st->len, st->cap * sizeof *st->len);
		st->hash = pt_xrealloc_big(st->hash, st->cap * sizeof *st->hash);
	}
	id = (uint32_t)st->n++;
	st->str[id] = copy;
	st->len[id] = (uint32_t)len | flag;
	st->hash[id] = h;
	st->t.slot[j] = id + 1;
	st->t.n++;
	return id;
}

uint32_t pt_str_intern_h(struct strtab *st, const char *s, size_t len,
			     uint32_t h)
{
	return str_intern_x(st, s, len, h, 0);
}

static uint32_t str_intern_n(struct strtab *st, const char *s, size_t len)
{
	return str_intern_x(st, s, len, 0, 0);
}

uint32_t pt_str_intern(struct strtab *st, const char *s)
{
	return str_intern_n(st, s, strlen(s));
}

/*
 * The interned copy of s.  (Not st->str[str_intern(st, s)]: C leaves open
 * whether st->str is read before the call that may move it.)
 */
const char *pt_str_intern_ptr(struct strtab *st, const char *s, size_t len)
{
	uint32_t id = str_intern_n(st, s, len);

	return st->str[id];
}

/* Hash of a vector's contents, from the hashes of its strings. */
uint32_t pt_vec_hash(const struct pstr *a, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	size_t i;

	for (i = 0; i < n; i++) {
		h = (h ^ ((uint64_t)a[i].len << 32 | a[i].hash)) *
		    0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

/*
 * Intern the vector a[0..n) whose vec_hash is h; argv: it is a command
 * line, whose strings may be kept split (an environment never is, and the
 * two kinds never share a vector).  Most vectors are seen before (the
 * environment of every process, the argv that SPAWN and then HELLO
 * carry): those are found by comparing contents, without touching the
 * string table once per element.
 */
uint32_t pt_vec_intern(struct vectab *vt, struct strtab *st,
			   const struct pstr *a, size_t n, uint32_t h, int argv)
{
	uint32_t j, id, len = (uint32_t)n | (argv ? VEC_PACKED : 0), *v;
	size_t i;

	if (argv)
		h = ~h;
	pt_itab_reserve(&vt->t, vec_rehash, vt);
	for (j = h & vt->t.mask; vt->t.slot[j]; j = (j + 1) & vt->t.mask) {
		const unsigned char *pk;
		uint32_t sid;

		id = vt->t.slot[j] - 1;
		if (vt->hash[id] != h || vt->len[id] != len)
			continue;
		pk = vt->vec[id];
		for (i = 0; i < n; i++) {
			if (argv)
				pk = pt_vec_unpack(pk, &sid);
			else
				sid = ((const uint32_t *)vt->vec[id])[i];
			if (st->hash[sid] != a[i].hash ||
			    !str_equal(st, sid, a[i].s, a[i].len))
				break;
		}
		if (i == n)
			return id;
	}
	if (vt->n == vt->cap) {
		vt->cap = vt->cap ? 2 * vt->cap : 4096;
		vt->vec = pt_xrealloc_big(vt->vec, vt->cap * sizeof *vt->vec);
		vt->len = pt_xrealloc_big(vt->len, vt->cap * sizeof *vt->len);
		vt->hash = pt_xrealloc_big(vt->hash, vt->cap * sizeof *vt->hash);
	}
	if (argv) {
		if (n > vt->cids) {
			vt->cids = n > 2 * vt->cids ? n : 2 * vt->cids;
			vt->ids = pt_xrealloc(vt->ids, vt->cids * sizeof *vt->ids);
		}
		v = vt->ids;
	} else {
		v = pt_arena_alloc(&vt->mem, (n ? n : 1) * sizeof *v, sizeof *v);
	}
	for (i = 0; i < n; i++)
		v[i] = str_intern_x(st, a[i].s, a[i].len, a[i].hash, argv);
	id = (uint32_t)vt->n++;
	vt->vec[id] = argv ? vec_pack(&vt->mem, v, n) : v;
	vt->len[id] = len;
	vt->hash[id] = h;
	vt->t.slot[j] = id + 1;
	vt->t.n++;
	return id;
}
