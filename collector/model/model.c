/*
 * The model: executions rebuilt from captures; see model.h.
 *
 * A capture is read in one pass into compact events (24 bytes each, the
 * strings interned once in a pool shared by all captures), then built:
 *
 *  1. Events are grouped by the pid they are about (a FORK, SPAWN or REAP
 *     is about the child) and each group is sorted by time.  Frames of one
 *     pid come over several connections and the collector interleaves
 *     connections freely, so file order means little; the senders' clock
 *     (CLOCK_MONOTONIC of one machine) orders them.
 *  2. One state machine per pid turns its events into processes (a pid's
 *     lifetime, from birth to reap: pids are reused) and images (one
 *     program of one process; an image is an execution unless it is the
 *     short fork phase before an exec, which is folded away).
 *  3. Each process finds its parent: the image of its parent pid that was
 *     current when it was born (binary search in that pid's images).
 *  4. Fork children take program, arguments and environment from the
 *     image they were forked from; programs that never loaded the library
 *     inherit the environment of the image that started them.
 *  5. The images that are executions are written out as struct pt_exec.
 *
 * Everything is linear but the per-pid sorts, which see a handful of
 * events each and nearly sorted at that.
 *
 * Choices where the record leaves room:
 *  - A child born in a fork phase that is later folded away belongs to
 *    the execution that forked (the phase was part of it).
 *  - An image that ended without EXIT ends at the earlier of its REAP and
 *    its connection's EOF (either can be late; neither is early).
 *  - REAP's rusage covers the child and its own waited-for children: it
 *    is used only for programs that never loaded the library.
 *  - The EOF of an AUX or FOREIGN connection means nothing: the library
 *    opens them for one frame and closes them.
 */
#include "model/model.h"

#include <endian.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/read.h"
#include "model/pidns.h"
#include "base/strbuf.h"
#include "base/util.h"

#define NONE UINT32_MAX

/*
 * How long after a traced child's first HELLO its parent's SPAWN may still
 * be recorded: posix_spawn returns when the child execs, and the parent
 * sends SPAWN only then, so a fast child can be gone before.  A wider
 * window risks taking a reused pid's old process for the new child.
 */
#define SPAWN_WINDOW_NS 2000000000ull

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
 * Arrays from this size on live in mappings of their own (pt_model_init
 * fixes malloc's threshold there), which realloc grows with mremap: a
 * heap block that cannot grow in place is copied, and for the 100 MB
 * array of events that meant 200 MB at once.
 */
#define BIG_ARRAY (1u << 20)

/*
 * realloc for arrays that may grow large.  Unlike the arenas, no
 * huge-page hint: growing a mapping that has huge pages with mremap
 * doubled its RSS here (the event array's last doubling took 100 MB more
 * at once).
 */
static void *xrealloc_big(void *p, size_t n)
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

/* ---- arena: many small allocations, freed at once ---- */

#define ARENA_CHUNK ((4u << 20) - sizeof(struct chunk))

struct chunk {
	struct chunk *next;
	size_t size;                    /* keeps the data 16-byte aligned */
};

struct arena {
	struct chunk *head;
	char *cur;
	size_t left;
};

static void *arena_alloc(struct arena *a, size_t n, size_t align)
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

static void arena_free(struct arena *a)
{
	struct chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(a, 0, sizeof *a);
}

/* Grow *p (n used of *cap elements of size sz) to hold one more. */
static void *grow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 256;
	return xrealloc_big(p, *cap * sz);
}

#define GROW(arr, n, cap) ((arr) = grow((arr), &(cap), (n), sizeof *(arr)))

static uint32_t hash_u64(uint64_t k)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32);
}

/*
 * Open addressing over indices: slot holds index + 1 (0 is empty), the
 * keys live in the caller's arrays.  Kept at most half full.
 */
struct itab {
	uint32_t *slot;
	uint32_t mask;
	uint32_t n;
};

static void itab_free(struct itab *t)
{
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/* Make room for one more entry; hashes re-derived by the callback. */
static void itab_reserve(struct itab *t, uint32_t (*hash)(const void *, uint32_t),
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

/* ---- interned strings and string vectors ---- */

/*
 * A command line's long arguments repeat the short ones: `sh -c "gcc -c
 * x.c -o x.o ..."` is unique to its compile, and its words are gcc's,
 * cc1's and as's arguments.  Such a string (an argument of at least
 * SPLIT_MIN bytes with a space) is kept as the ids of its space-separated
 * words: a fifth of the bytes on a compiler-heavy build.  Its len[] has
 * STR_SPLIT set and its str[] points to a uint32_t count and the ids.
 * Only argument vectors hold split strings (exe, cwd, the environment and
 * metadata are read as C strings); pt_exec_arg() joins them.
 */
#define STR_SPLIT 0x80000000u
#define SPLIT_MIN 64

struct strtab {
	struct arena mem;
	const char **str;               /* id -> string, or its words */
	uint32_t *len, *hash;           /* len: with STR_SPLIT */
	size_t n, cap;
	struct itab t;
	uint32_t *words;                /* scratch for splitting */
	size_t cwords;
};

/*
 * A vector of string ids.  An environment is an array of uint32_t: few
 * distinct ones, read by index.  A command line is packed, each id in
 * 7-bit groups, low first, the high bit saying another follows: a
 * million command lines hold 26 million arguments, and the first ids
 * handed out, a build's common flags and words, take one or two bytes.
 * len[] counts the ids, with VEC_PACKED set for a packed vector.
 */
#define VEC_PACKED 0x80000000u

struct vectab {
	struct arena mem;
	const void **vec;               /* id -> vector */
	uint32_t *len, *hash;
	size_t n, cap;
	struct itab t;
	uint32_t *ids;                  /* scratch for packing */
	size_t cids;
};

/* Decode the id at p into *id; returns where the next one starts. */
static const unsigned char *vec_unpack(const unsigned char *p, uint32_t *id)
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
	out = o = arena_alloc(a, bytes ? bytes : 1, 1);
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

/* A string of a record, measured and hashed by the reading thread. */
struct pstr {
	const char *s;                  /* NUL-terminated; NULL when absent */
	uint32_t len, hash;             /* pt_hash_bytes(s, len) */
};

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
	copy = arena_alloc(&st->mem, (n + 1) * sizeof *copy, sizeof *copy);
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
	itab_reserve(&st->t, str_rehash, st);
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
		itab_reserve(&st->t, str_rehash, st);
		for (j = h & st->t.mask; st->t.slot[j];
		     j = (j + 1) & st->t.mask)
			;
	} else {
		char *c = arena_alloc(&st->mem, len + 1, 1);

		memcpy(c, s, len);
		c[len] = '\0';
		copy = c;
	}
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 4096;
		st->str = xrealloc_big(st->str, st->cap * sizeof *st->str);
		st->len = xrealloc_big(st->len, st->cap * sizeof *st->len);
		st->hash = xrealloc_big(st->hash, st->cap * sizeof *st->hash);
	}
	id = (uint32_t)st->n++;
	st->str[id] = copy;
	st->len[id] = (uint32_t)len | flag;
	st->hash[id] = h;
	st->t.slot[j] = id + 1;
	st->t.n++;
	return id;
}

static uint32_t str_intern_h(struct strtab *st, const char *s, size_t len,
			     uint32_t h)
{
	return str_intern_x(st, s, len, h, 0);
}

static uint32_t str_intern_n(struct strtab *st, const char *s, size_t len)
{
	return str_intern_x(st, s, len, 0, 0);
}

static uint32_t str_intern(struct strtab *st, const char *s)
{
	return str_intern_n(st, s, strlen(s));
}

/*
 * The interned copy of s.  (Not st->str[str_intern(st, s)]: C leaves open
 * whether st->str is read before the call that may move it.)
 */
static const char *str_intern_ptr(struct strtab *st, const char *s, size_t len)
{
	uint32_t id = str_intern_n(st, s, len);

	return st->str[id];
}

/* Hash of a vector's contents, from the hashes of its strings. */
static uint32_t vec_hash(const struct pstr *a, size_t n)
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
static uint32_t vec_intern(struct vectab *vt, struct strtab *st,
			   const struct pstr *a, size_t n, uint32_t h, int argv)
{
	uint32_t j, id, len = (uint32_t)n | (argv ? VEC_PACKED : 0), *v;
	size_t i;

	if (argv)
		h = ~h;
	itab_reserve(&vt->t, vec_rehash, vt);
	for (j = h & vt->t.mask; vt->t.slot[j]; j = (j + 1) & vt->t.mask) {
		const unsigned char *pk;
		uint32_t sid;

		id = vt->t.slot[j] - 1;
		if (vt->hash[id] != h || vt->len[id] != len)
			continue;
		pk = vt->vec[id];
		for (i = 0; i < n; i++) {
			if (argv)
				pk = vec_unpack(pk, &sid);
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
		vt->vec = xrealloc_big(vt->vec, vt->cap * sizeof *vt->vec);
		vt->len = xrealloc_big(vt->len, vt->cap * sizeof *vt->len);
		vt->hash = xrealloc_big(vt->hash, vt->cap * sizeof *vt->hash);
	}
	if (argv) {
		if (n > vt->cids) {
			vt->cids = n > 2 * vt->cids ? n : 2 * vt->cids;
			vt->ids = pt_xrealloc(vt->ids, vt->cids * sizeof *vt->ids);
		}
		v = vt->ids;
	} else {
		v = arena_alloc(&vt->mem, (n ? n : 1) * sizeof *v, sizeof *v);
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

/* ---- the model's private part ---- */

struct capmeta {
	const char **kv;                /* key, value, key, value... */
	size_t n, cap;                  /* strings */
};

struct pt_model_priv {
	struct strtab str;
	struct vectab vec;
	struct arena execs;             /* the struct pt_exec themselves */
	struct pt_exec **list;
	size_t nlist, caplist;
	struct capmeta *meta;
	size_t cap_meta;
	/* pt_exec_arg()'s arguments of one vector, split ones joined. */
};

/* ---- one capture being built ---- */

enum ev_type {
	E_HELLO, E_EXEC, E_EXEC_FAILED, E_SPAWN, E_FORK, E_REAP, E_EXIT, E_EOF,
};

enum ev_flag {
	EVF_TRUNC = 1,                  /* argv was cut by the library */
	EVF_UNBOUND = 2,                /* EOF of a connection without HELLO */
};

/* Dense pid indices fit in the event's 24-bit field. */
#define PID_LIMIT (1u << 24)

struct ev {                             /* millions of these: keep it small */
	uint64_t time;                  /* sender's CLOCK_MONOTONIC */
	uint32_t pid : 24;              /* dense index of the pid it is about */
	uint32_t type : 4;              /* enum ev_type */
	uint32_t flags : 4;             /* enum ev_flag */
	uint32_t other;                 /* raw pid: ppid, or the parent that
					 * sent FORK/SPAWN/REAP */
	uint32_t a, b;                  /* HELLO: hello_x, -; EXEC: argv, exec_x;
					 * SPAWN: argv, path; REAP: status, cpu3;
					 * EXIT: status, cpu3; EOF: conn, - */
	/* (EXIT's `other`: the connection's owner when the sender is not.) */
};

struct hello_x {                        /* what a HELLO carries beyond ev */
	uint64_t start;
	uint32_t exe, cwd, argv, env, conn;
	uint32_t before;                /* cpu3 of CPU_BEFORE, or NONE */
	uint16_t kind, trunc;
};

struct exec_x {                         /* what an EXEC carries beyond ev */
	uint32_t path, cwd;
};

/*
 * The rusage of an EXIT or REAP, two million of them for a million
 * executions: 32 bits each (71 minutes of CPU), and when one does not
 * fit, ut is CPU_BIG and st the index of the whole in build.big.
 */
struct cpu3 {
	uint32_t ut, st, rss;
};

struct cpu_big {
	uint64_t ut, st, rss;
};

#define CPU_BIG UINT32_MAX

enum conn_kind {
	CK_NEW,                         /* no frame yet */
	CK_IMAGE = PT_HELLO_IMAGE,
	CK_FORK = PT_HELLO_FORK,
	CK_FOREIGN = PT_HELLO_FOREIGN,
	CK_AUX = PT_HELLO_AUX,
	CK_NOHELLO = 16,                /* first frame was not a HELLO */
	CK_DROPPED,                     /* the collector dropped it */
};

struct conn {
	uint64_t id;
	uint64_t connect_ns;
	uint32_t owner;                 /* raw pid */
	uint32_t img;                   /* image it belongs to, once known */
	uint32_t peer;                  /* SO_PEERCRED pid, 0 if none */
	/* A sender in another pid namespace than the collector's: that
	 * namespace, and the sender's own pid there (pidns.h). */
	uint32_t ns, nspid;
	uint8_t kind;                   /* enum conn_kind */
	uint8_t owner_exited;           /* its EOF tells nothing more */
	uint8_t in_ns;
};

enum img_kind {
	IK_EXEC,                        /* a program image */
	IK_FORK,                        /* a fork child before (or without) exec */
	IK_SPAWN,                       /* placeholder between SPAWN and HELLO */
};

enum img_flag {
	IF_ENDED = 1 << 0,
	IF_EXITED = 1 << 1,             /* EXIT seen */
	IF_FOLDED = 1 << 2,             /* no execution of its own */
	IF_UNTRACED = 1 << 3,
	IF_KILLED = 1 << 4,
	IF_END_UNKNOWN = 1 << 5,
	IF_TRUNC = 1 << 6,
	IF_REAP_END = 1 << 7,           /* end time from REAP or EOF, refinable */
	IF_RESOLVED = 1 << 8,           /* inherited fields filled in */
	IF_RESOLVING = 1 << 9,
	IF_NOCONN = 1 << 10,            /* HELLO came on an AUX connection */
	IF_CONN = 1 << 11,              /* has a connection of its own */
};

struct img {
	uint64_t start, end;
	uint32_t cpu;                   /* rusage: index in build.cpu, or NONE */
	uint32_t fork_cpu;              /* CPU of the fork phase folded into
					 * it, for its parent: cpu3, or NONE */
	/* Until the images are resolved; then what emit() needs of their
	 * process, which goes away first (see there). */
	union { uint32_t proc; uint32_t pid; };
	union {
		uint32_t prev;          /* previous image of the same process */
		uint32_t ppid;
	};
	union {
		uint32_t pending;       /* EXEC or SPAWN event not yet resolved */
		uint32_t parent;        /* parent image, or NONE */
	};
	uint32_t exe, cwd, argv, env;   /* NONE: inherited, see resolve() */
	int16_t exit_code, signal;
	uint16_t flags;
	uint8_t kind;
};

struct proc {
	uint64_t birth;                 /* for finding the parent */
	uint32_t pid, ppid;
	uint32_t cur;                   /* current image */
	uint32_t parent;                /* parent image, once resolved */
	uint8_t has_birth;              /* FORK or SPAWN record seen */
	uint8_t reaped;
	uint8_t parent_done;
};

struct build {
	struct pt_model *m;
	struct pt_model_priv *p;
	uint32_t capture;

	struct ev *ev;
	size_t nev, cev;
	struct hello_x *hx;
	size_t nhx, chx;
	struct exec_x *xx;
	size_t nxx, cxx;
	struct cpu3 *cpu;
	size_t ncpu, ccpu;
	struct cpu_big *big;
	size_t nbig, cbig;

	struct conn *conns;
	size_t nconn, cconn;
	struct itab conn_t;             /* ids from CONN_DIRECT up */
	uint32_t *conn_ix;              /* id -> index + 1, below CONN_DIRECT */
	size_t nconn_ix;

	uint32_t *pid_raw;              /* dense index -> pid */
	size_t npid, cpid;
	struct itab pid_t;
	uint32_t *pid_img;              /* dense index -> first image; [npid] */

	struct img *img;
	size_t nimg, cimg;
	struct proc *proc;
	size_t nproc, cproc;

	struct anon_reap {              /* REAPs of child 0 (system, pclose) */
		uint32_t parent;
		int32_t status;
		uint64_t time;
	} *anon;
	size_t nanon, canon;

	struct pt_pidns ns;             /* pids of other namespaces */

	struct ev dummy;                /* where events beyond PID_LIMIT go */
	int64_t offset;                 /* Unix epoch ns - monotonic ns */
	int have_offset;
	uint64_t last_ns;               /* latest time seen in the capture */
	size_t neof;                    /* E_EOF events */
};

static uint32_t pid_rehash(const void *ctx, uint32_t i)
{
	return hash_u64(((const struct build *)ctx)->pid_raw[i]);
}

static uint32_t conn_rehash(const void *ctx, uint32_t i)
{
	return hash_u64(((const struct build *)ctx)->conns[i].id);
}

/* Dense index of pid, created on first sight. */
static uint32_t pid_index(struct build *b, uint32_t pid)
{
	uint32_t j;

	itab_reserve(&b->pid_t, pid_rehash, b);
	for (j = hash_u64(pid) & b->pid_t.mask; b->pid_t.slot[j];
	     j = (j + 1) & b->pid_t.mask)
		if (b->pid_raw[b->pid_t.slot[j] - 1] == pid)
			return b->pid_t.slot[j] - 1;
	GROW(b->pid_raw, b->npid, b->cpid);
	b->pid_raw[b->npid] = pid;
	b->pid_t.slot[j] = (uint32_t)++b->npid;
	b->pid_t.n++;
	return (uint32_t)(b->npid - 1);
}

static uint32_t pid_find(const struct build *b, uint32_t pid)
{
	uint32_t j;

	if (!b->pid_t.slot)
		return NONE;
	for (j = hash_u64(pid) & b->pid_t.mask; b->pid_t.slot[j];
	     j = (j + 1) & b->pid_t.mask)
		if (b->pid_raw[b->pid_t.slot[j] - 1] == pid)
			return b->pid_t.slot[j] - 1;
	return NONE;
}

/*
 * The collector numbers connections from 1, so an id is looked up by
 * indexing (a frame's connection is looked up for every frame); ids beyond
 * CONN_DIRECT, which only a damaged or forged capture has, by hashing.
 */
#define CONN_DIRECT (1u << 22)

/* hello_x.conn of a connection without EOF, once reading is done. */
#define CONN_NO_EOF (NONE - 1)

static struct conn *conn_find(struct build *b, uint64_t id)
{
	uint32_t j;

	if (id < CONN_DIRECT) {
		if (id >= b->nconn_ix || !b->conn_ix[id])
			return NULL;
		return &b->conns[b->conn_ix[id] - 1];
	}
	if (!b->conn_t.slot)
		return NULL;
	for (j = hash_u64(id) & b->conn_t.mask; b->conn_t.slot[j];
	     j = (j + 1) & b->conn_t.mask)
		if (b->conns[b->conn_t.slot[j] - 1].id == id)
			return &b->conns[b->conn_t.slot[j] - 1];
	return NULL;
}

static struct conn *conn_get(struct build *b, const struct pt_cap_record *h)
{
	struct conn *c = conn_find(b, h->conn_id);
	uint64_t id = h->conn_id;
	uint32_t j = 0;

	if (c)
		return c;
	if (id < CONN_DIRECT) {
		if (id >= b->nconn_ix) {
			size_t n = b->nconn_ix ? b->nconn_ix : 1024;

			while (n <= id)
				n *= 2;
			b->conn_ix = xrealloc_big(b->conn_ix, n * sizeof *b->conn_ix);
			memset(b->conn_ix + b->nconn_ix, 0,
			       (n - b->nconn_ix) * sizeof *b->conn_ix);
			b->nconn_ix = n;
		}
	} else {
		itab_reserve(&b->conn_t, conn_rehash, b);
		for (j = hash_u64(id) & b->conn_t.mask; b->conn_t.slot[j];
		     j = (j + 1) & b->conn_t.mask)
			;
	}
	GROW(b->conns, b->nconn, b->cconn);
	c = &b->conns[b->nconn++];
	memset(c, 0, sizeof *c);
	c->id = id;
	c->connect_ns = h->recv_ns;
	c->owner = h->peer_pid;
	c->peer = h->peer_pid;
	c->img = NONE;
	if (id < CONN_DIRECT) {
		b->conn_ix[id] = (uint32_t)b->nconn;
	} else {
		b->conn_t.slot[j] = (uint32_t)b->nconn;
		b->conn_t.n++;
	}
	return c;
}

/* ---- reading, in a thread of its own ---- */

/*
 * Inflating and parsing a capture costs about as much CPU as building the
 * model from it, and the two need not wait for each other: a thread reads
 * events into batches and measures and hashes their strings (the part of
 * interning that needs no table), while the caller's thread builds.  On
 * a single CPU, or if the thread cannot be made, the same batches are
 * filled in the caller's thread between builds.
 */

/* One event as the reading thread hands it over. */
struct pev {
	struct pt_cap_record hdr;
	const unsigned char *data;      /* META, LOSS: hdr.length bytes */
	struct pt_record rec;           /* FRAME; its argv and env are unused */
	struct pstr exe, cwd, path;
	const struct pstr *argv, *env;  /* rec.argc, rec.envc entries */
	uint32_t argv_hash, env_hash;   /* vec_hash of argv, env */
	uint64_t before_ut, before_st;  /* HELLO's CPU_BEFORE, if have_before */
	int have_before;
	size_t size;                    /* bytes from this event to the next */
};

#define BATCH_SIZE (1u << 20)
#define NBATCH 4                        /* in flight between the threads */

struct batch {
	unsigned char *mem;             /* struct pev, its pstr, its bytes... */
	size_t cap, used;
};

struct rthread {
	struct pt_reader *r;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch full[NBATCH];      /* queue, in reading order */
	size_t nfull, headfull;
	struct batch spare[NBATCH];     /* consumed, for reuse */
	size_t nspare;
	int done;                       /* the reader's last result is rc */
	int rc;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Measure s into ps; returns the bytes its copy takes. */
static size_t measure(struct pstr *ps, const char *s)
{
	if (!s) {
		memset(ps, 0, sizeof *ps);
		return 0;
	}
	ps->s = s;
	ps->len = (uint32_t)strlen(s);
	return (size_t)ps->len + 1;
}

/* Copy the string ps measures to `to`, hash it, and point ps there. */
static char *put_pstr(struct pstr *ps, char *to)
{
	if (!ps->s)
		return to;
	memcpy(to, ps->s, (size_t)ps->len + 1);
	ps->s = to;
	ps->hash = pt_hash_bytes(to, ps->len);
	return to + ps->len + 1;
}

/*
 * Copy ev into batch bt, with what interning needs computed.  Returns 0, or
 * -1 if it does not fit (bt is left as it was: what is measured past its
 * end is not yet part of it).
 */
static int batch_add(struct batch *bt, const struct pt_cap_event *ev)
{
	const struct pt_record *r = &ev->rec;
	int frame = ev->hdr.kind == PT_CAP_FRAME;
	size_t i, need = align8(sizeof(struct pev)), nstr = 0, bytes = 0;
	struct pev *pe = (struct pev *)(bt->mem + bt->used);
	struct pstr *ps = NULL, exe, cwd, path;
	char *to;

	if (frame) {
		nstr = r->argc + r->envc;
		if (bt->used + need + nstr * sizeof *ps > bt->cap)
			return -1;
		ps = (struct pstr *)(pe + 1);
		bytes = measure(&exe, r->exe) + measure(&cwd, r->cwd) +
			measure(&path, r->path);
		for (i = 0; i < r->argc; i++)
			bytes += measure(&ps[i], r->argv[i]);
		for (i = 0; i < r->envc; i++)
			bytes += measure(&ps[r->argc + i], r->env[i]);
	} else if (ev->hdr.kind == PT_CAP_META || ev->hdr.kind == PT_CAP_LOSS) {
		bytes = ev->hdr.length;
	}
	need += nstr * sizeof *ps + align8(bytes);
	if (bt->used + need > bt->cap)
		return -1;
	to = (char *)(pe + 1) + nstr * sizeof *ps;
	memset(pe, 0, sizeof *pe);
	pe->hdr = ev->hdr;
	pe->size = need;
	if (frame) {
		pe->rec = *r;
		pe->rec.argv = pe->rec.env = NULL;
		pe->rec.exe = pe->rec.cwd = pe->rec.path = NULL;
		pe->rec.cpu_before = NULL;
		if (r->cpu_before) {
			char *end;

			pe->before_ut = strtoull(r->cpu_before, &end, 10);
			pe->before_st = strtoull(end, &end, 10);
			pe->have_before = !*end;
		}
		pe->exe = exe;
		pe->cwd = cwd;
		pe->path = path;
		to = put_pstr(&pe->exe, to);
		to = put_pstr(&pe->cwd, to);
		to = put_pstr(&pe->path, to);
		pe->argv = ps;
		pe->env = ps + r->argc;
		for (i = 0; i < nstr; i++)
			to = put_pstr(&ps[i], to);
		pe->argv_hash = vec_hash(pe->argv, r->argc);
		pe->env_hash = vec_hash(pe->env, r->envc);
	} else if (bytes) {
		memcpy(to, ev->data, bytes);
		pe->data = (const unsigned char *)to;
	}
	bt->used += need;
	return 0;
}

/*
 * Fill bt from the reader, which has already delivered *held (when
 * *have): events up to the end, or as many as fit.  Returns the reader's
 * result: 1 if more may follow, 0 at the clean end, -1 at damage.
 */
static int batch_fill(struct pt_reader *r, struct batch *bt,
		      struct pt_cap_event *held, int *have)
{
	int rc = 1;

	bt->used = 0;
	for (;;) {
		if (!*have) {
			rc = pt_reader_next(r, held);
			if (rc <= 0)
				return rc;
			*have = 1;
		}
		if (batch_add(bt, held) < 0) {
			if (bt->used)
				return 1;
			/* A frame larger than a whole batch: a batch of its
			 * own, made big enough. */
			bt->cap = 2 * bt->cap;
			bt->mem = pt_xrealloc(bt->mem, bt->cap);
			continue;
		}
		*have = 0;
	}
}

static void *reader_main(void *arg)
{
	struct rthread *rt = arg;
	struct pt_cap_event held;
	struct batch bt;
	int have = 0, rc;

	do {
		pthread_mutex_lock(&rt->lock);
		while (!rt->nspare)
			pthread_cond_wait(&rt->cond, &rt->lock);
		bt = rt->spare[--rt->nspare];
		pthread_mutex_unlock(&rt->lock);

		rc = batch_fill(rt->r, &bt, &held, &have);

		pthread_mutex_lock(&rt->lock);
		rt->full[(rt->headfull + rt->nfull++) % NBATCH] = bt;
		if (rc <= 0) {
			rt->done = 1;
			rt->rc = rc;
		}
		pthread_cond_broadcast(&rt->cond);
		pthread_mutex_unlock(&rt->lock);
	} while (rc > 0);
	return NULL;
}

/* ---- reading: records to events ---- */

static uint32_t intern_opt(struct build *b, const struct pstr *s,
			   uint32_t absent)
{
	return s->s ? str_intern_h(&b->p->str, s->s, s->len, s->hash) : absent;
}

static uint32_t intern_argv(struct build *b, const struct pstr *v, size_t n,
			    uint32_t h)
{
	return vec_intern(&b->p->vec, &b->p->str, v, n, h, 1);
}

static uint32_t intern_env(struct build *b, const struct pstr *v, size_t n,
			   uint32_t h)
{
	return vec_intern(&b->p->vec, &b->p->str, v, n, h, 0);
}

static struct ev *new_ev(struct build *b, enum ev_type type, uint32_t pid,
			 uint64_t time)
{
	uint32_t d = pid_index(b, pid);
	struct ev *e;

	if (d >= PID_LIMIT) {
		/* More pids than any kernel hands out: a forged capture. */
		b->m->bad_frames++;
		return &b->dummy;
	}
	GROW(b->ev, b->nev, b->cev);
	e = &b->ev[b->nev++];
	memset(e, 0, sizeof *e);
	e->type = type;
	e->pid = d;
	e->time = time;
	return e;
}

/* A CPU time beyond this (about 2 years) is damage, not a measurement. */
#define CPU_US_MAX (1ull << 46)

static uint32_t new_cpu(struct build *b, uint64_t ut, uint64_t st,
			uint64_t rss)
{
	/* A forged or damaged value must not overflow the sums of every
	 * view downstream: it is no CPU time at all. */
	if (ut > CPU_US_MAX || st > CPU_US_MAX || rss > CPU_US_MAX)
		return NONE;
	GROW(b->cpu, b->ncpu, b->ccpu);
	if (ut >= CPU_BIG || st >= CPU_BIG || rss >= CPU_BIG) {
		GROW(b->big, b->nbig, b->cbig);
		b->big[b->nbig].ut = ut;
		b->big[b->nbig].st = st;
		b->big[b->nbig].rss = rss;
		ut = CPU_BIG;
		st = b->nbig++;
		rss = 0;
	}
	b->cpu[b->ncpu].ut = (uint32_t)ut;
	b->cpu[b->ncpu].st = (uint32_t)st;
	b->cpu[b->ncpu].rss = (uint32_t)rss;
	return (uint32_t)b->ncpu++;
}

static void note_time(struct build *b, uint64_t t)
{
	if (t > b->last_ns)
		b->last_ns = t;
}

/*
 * A pid that a frame on connection c carries, as the collector's pid or a
 * reference standing for it (pidns.h).  outer: the pid is of the namespace
 * the sender's namespace was made in (a namespace's first process names
 * the process it was copied from).
 */
static uint32_t xpid(struct build *b, const struct conn *c, uint32_t pid,
		     int outer)
{
	if (!c->in_ns || !pid || outer)
		return pid;
	if (pid == c->nspid)
		return c->peer;
	return pt_pidns_ref(&b->ns, c->ns, pid);
}

/* A connection's first HELLO: whose it is, and in which pid namespace. */
static void hello_conn(struct build *b, struct conn *c,
		       const struct pt_record *r)
{
	c->kind = (uint8_t)r->u.hello.kind;
	c->owner = r->hdr.pid;
	/* pidns 0: no /proc, or a capture from before the field (doc/format.md):
	 * the pids are taken as they are. */
	if (!c->peer || c->peer == r->hdr.pid || !r->u.hello.pidns)
		return;
	c->in_ns = 1;
	c->ns = r->u.hello.pidns;
	c->nspid = r->hdr.pid;
	c->owner = c->peer;
	pt_pidns_learn(&b->ns, c->ns, c->nspid, c->peer);
}

static void add_frame(struct build *b, const struct pev *cev)
{
	const struct pt_record *r = &cev->rec;
	struct conn *c = conn_get(b, &cev->hdr);
	int first = c->kind == CK_NEW;
	uint64_t t = r->hdr.time_ns;
	struct hello_x *hx;
	struct ev *e;
	uint32_t pid, origin;

	b->m->frames++;
	note_time(b, t);
	if (first)
		c->kind = CK_NOHELLO;
	if (first && r->hdr.type == PT_REC_HELLO &&
	    r->u.hello.kind >= PT_HELLO_IMAGE && r->u.hello.kind <= PT_HELLO_AUX)
		hello_conn(b, c, r);
	pid = xpid(b, c, r->hdr.pid, 0);
	/* The first process of a namespace was copied from one outside. */
	origin = xpid(b, c, r->hdr.origin, r->hdr.pid == 1);
	switch (r->hdr.type) {
	case PT_REC_HELLO:
		if (!b->have_offset && r->u.hello.realtime_ns) {
			b->offset = (int64_t)(r->u.hello.realtime_ns - t);
			b->have_offset = 1;
		}
		if (r->u.hello.kind != PT_HELLO_IMAGE &&
		    r->u.hello.kind != PT_HELLO_FORK &&
		    r->u.hello.kind != PT_HELLO_FOREIGN)
			break;          /* AUX, or a kind from the future */
		e = new_ev(b, E_HELLO, pid, t);
		/* A namespace's first process has parent 0 there: the one it
		 * was copied from, if it says, made it. */
		e->other = r->u.hello.ppid || r->hdr.pid != 1 || !c->in_ns ?
			   xpid(b, c, r->u.hello.ppid, 0) : origin;
		GROW(b->hx, b->nhx, b->chx);
		e->a = (uint32_t)b->nhx;
		hx = &b->hx[b->nhx++];
		hx->kind = (uint16_t)r->u.hello.kind;
		hx->start = r->u.hello.start_ns && r->u.hello.start_ns <= t ?
			    r->u.hello.start_ns : t;
		/* The connection a HELLO opens is the image's own, and its EOF
		 * its end; a HELLO that came on another (AUX) connection
		 * binds nothing. */
		hx->conn = first && c->kind != CK_FOREIGN ?
			   (uint32_t)(c - b->conns) : NONE;
		if (hx->kind == PT_HELLO_IMAGE) {
			hx->exe = intern_opt(b, &cev->exe, 0);
			hx->cwd = intern_opt(b, &cev->cwd, 0);
			hx->argv = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
			hx->env = intern_env(b, cev->env, r->envc, cev->env_hash);
		} else {
			hx->exe = hx->argv = hx->env = NONE;
			hx->cwd = intern_opt(b, &cev->cwd, NONE);
		}
		hx->trunc = r->argv_truncated != 0;
		hx->before = cev->have_before ?
			     new_cpu(b, cev->before_ut, cev->before_st, 0) : NONE;
		break;
	case PT_REC_EXEC:
		e = new_ev(b, E_EXEC, pid, t);
		/* A child the library did not see being made (vfork, clone,
		 * glibc's internal fork in daemon(3)) names the process it was
		 * copied from: its real parent, even once it is reparented. */
		e->other = origin ? origin : xpid(b, c, r->u.exec.ppid, 0);
		e->a = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
		GROW(b->xx, b->nxx, b->cxx);
		e->b = (uint32_t)b->nxx;
		b->xx[b->nxx].path = intern_opt(b, &cev->path, 0);
		b->xx[b->nxx++].cwd = intern_opt(b, &cev->cwd, NONE);
		e->flags = r->argv_truncated ? EVF_TRUNC : 0;
		break;
	case PT_REC_EXEC_FAILED:
		new_ev(b, E_EXEC_FAILED, pid, t);
		break;
	case PT_REC_SPAWN:
		if (!r->u.spawn.child_pid)
			break;
		e = new_ev(b, E_SPAWN, xpid(b, c, r->u.spawn.child_pid, 0), t);
		e->other = pid;
		e->a = intern_argv(b, cev->argv, r->argc, cev->argv_hash);
		e->b = intern_opt(b, &cev->path, 0);
		e->flags = r->argv_truncated ? EVF_TRUNC : 0;
		break;
	case PT_REC_FORK:
		if (!r->u.fork.child_pid)
			break;
		e = new_ev(b, E_FORK, xpid(b, c, r->u.fork.child_pid, 0), t);
		e->other = pid;
		break;
	case PT_REC_REAP:
		if (!r->u.reap.child_pid) {
			GROW(b->anon, b->nanon, b->canon);
			b->anon[b->nanon].parent = pid;
			b->anon[b->nanon].status = r->u.reap.wait_status;
			b->anon[b->nanon++].time = t;
			break;
		}
		e = new_ev(b, E_REAP, xpid(b, c, r->u.reap.child_pid, 0), t);
		e->other = pid;
		e->a = (uint32_t)r->u.reap.wait_status;
		e->b = r->u.reap.have_rusage ?
		       new_cpu(b, r->u.reap.utime_us, r->u.reap.stime_us,
			       r->u.reap.maxrss_kb) : NONE;
		break;
	case PT_REC_EXIT:
		e = new_ev(b, E_EXIT, pid, t);
		/* On an inherited connection: a vfork or clone child's, whose
		 * EXIT may be all that is ever heard of it. */
		if (origin)
			e->other = origin;
		else if (pid != c->owner && c->kind != CK_NOHELLO)
			e->other = c->owner;
		e->a = (uint32_t)r->u.exit.status;
		e->b = new_cpu(b, r->u.exit.utime_us, r->u.exit.stime_us,
			       r->u.exit.maxrss_kb);
		if (pid == c->owner)
			c->owner_exited = 1;
		break;
	default:
		break;                  /* STOP, or a type from the future */
	}
}

static void add_eof(struct build *b, const struct pev *cev)
{
	struct conn *c = conn_find(b, cev->hdr.conn_id);
	struct ev *e;

	note_time(b, cev->hdr.recv_ns);
	/* An AUX or FOREIGN connection is opened for one frame and closed;
	 * a dropped one was closed by the collector.  Their EOF says nothing
	 * about a process ending, nor does one after an EXIT. */
	if (!c || !c->owner || c->owner_exited || c->kind == CK_AUX ||
	    c->kind == CK_FOREIGN || c->kind == CK_DROPPED)
		return;
	e = new_ev(b, E_EOF, c->owner, cev->hdr.recv_ns);
	e->a = (uint32_t)(c - b->conns);
	b->neof++;
	if (c->kind != CK_IMAGE && c->kind != CK_FORK)
		e->flags = EVF_UNBOUND;
}

static void add_meta(struct build *b, const unsigned char *data, size_t n)
{
	struct capmeta *cm = &b->p->meta[b->capture];
	const char *p = (const char *)data, *end;

	if (!n)
		return;                 /* data may be NULL then */
	end = p + n;
	while (p < end) {
		const char *kz = memchr(p, 0, (size_t)(end - p)), *v, *vz;

		if (!kz)
			break;
		v = kz + 1;
		vz = v < end ? memchr(v, 0, (size_t)(end - v)) : NULL;
		if (!vz)
			break;
		if (cm->n + 2 > cm->cap) {
			cm->cap = cm->cap ? 2 * cm->cap : 32;
			cm->kv = pt_xrealloc(cm->kv, cm->cap * sizeof *cm->kv);
		}
		cm->kv[cm->n++] = str_intern_ptr(&b->p->str, p, (size_t)(kz - p));
		cm->kv[cm->n++] = str_intern_ptr(&b->p->str, v, (size_t)(vz - v));
		p = vz + 1;
	}
}

static void add_event(struct build *b, const struct pev *cev)
{
	struct conn *c;
	uint64_t lost;

	switch (cev->hdr.kind) {
	case PT_CAP_META:
		add_meta(b, cev->data, cev->hdr.length);
		break;
	case PT_CAP_CONNECT:
		b->m->connections++;
		note_time(b, cev->hdr.recv_ns);
		conn_get(b, &cev->hdr);
		break;
	case PT_CAP_FRAME:
		add_frame(b, cev);
		break;
	case PT_CAP_EOF:
		add_eof(b, cev);
		break;
	case PT_CAP_DROP:
		b->m->bad_frames++;
		c = conn_find(b, cev->hdr.conn_id);
		if (c)
			c->kind = CK_DROPPED;
		break;
	case PT_CAP_LOSS:
		if (cev->hdr.length >= 8) {
			memcpy(&lost, cev->data, 8);
			b->m->lost_frames += le64toh(lost);
		}
		break;
	default:
		break;
	}
}

/*
 * Read all of r into the build.  Returns the reader's last result (0 or
 * -1).
 */
static int read_all(struct build *b, struct pt_reader *r)
{
	struct rthread rt;
	struct pt_cap_event held;
	pthread_t tid;
	int threaded, have = 0, rc = 1;
	size_t i;

	memset(&rt, 0, sizeof rt);
	rt.r = r;
	for (i = 0; i < NBATCH; i++) {
		rt.spare[i].cap = BATCH_SIZE;
		rt.spare[i].mem = pt_xmalloc(BATCH_SIZE);
	}
	rt.nspare = NBATCH;
	pthread_mutex_init(&rt.lock, NULL);
	pthread_cond_init(&rt.cond, NULL);
	threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		   !pthread_create(&tid, NULL, reader_main, &rt);
	for (;;) {
		struct batch bt;
		size_t off;

		if (threaded) {
			pthread_mutex_lock(&rt.lock);
			while (!rt.nfull && !rt.done)
				pthread_cond_wait(&rt.cond, &rt.lock);
			if (!rt.nfull) {
				rc = rt.rc;
				pthread_mutex_unlock(&rt.lock);
				break;
			}
			bt = rt.full[rt.headfull];
			rt.headfull = (rt.headfull + 1) % NBATCH;
			rt.nfull--;
			pthread_mutex_unlock(&rt.lock);
		} else {
			if (rc <= 0)
				break;
			bt = rt.spare[0];
			rc = batch_fill(r, &bt, &held, &have);
		}
		for (off = 0; off < bt.used;) {
			const struct pev *pe = (const struct pev *)(bt.mem + off);

			add_event(b, pe);
			off += pe->size;
		}
		if (threaded) {
			pthread_mutex_lock(&rt.lock);
			rt.spare[rt.nspare++] = bt;
			pthread_cond_broadcast(&rt.cond);
			pthread_mutex_unlock(&rt.lock);
		} else {
			rt.spare[0] = bt;
		}
	}
	if (threaded)
		pthread_join(tid, NULL);
	pthread_mutex_destroy(&rt.lock);
	pthread_cond_destroy(&rt.cond);
	for (i = 0; i < rt.nspare; i++)
		free(rt.spare[i].mem);
	return rc;
}

/*
 * Once everything is read, the references to pids of other namespaces
 * that a connection taught become the collector's pids: events about
 * such a pid go with the events of that pid.
 */
static void resolve_ns(struct build *b)
{
	size_t npid = b->npid, d, i;
	uint32_t *to;

	if (!b->ns.n)
		return;
	to = pt_xmalloc((npid ? npid : 1) * sizeof *to);
	for (d = 0; d < npid; d++) {
		uint32_t pid = pt_pidns_resolve(&b->ns, b->pid_raw[d]);

		to[d] = pid == b->pid_raw[d] ? (uint32_t)d : pid_index(b, pid);
	}
	for (i = 0; i < b->nev; i++) {
		struct ev *e = &b->ev[i];

		if (to[e->pid] < PID_LIMIT)
			e->pid = to[e->pid];
		e->other = pt_pidns_resolve(&b->ns, e->other);
	}
	for (i = 0; i < b->nanon; i++)
		b->anon[i].parent = pt_pidns_resolve(&b->ns, b->anon[i].parent);
	free(to);
}

/* ---- building: per-pid state machines ---- */

static uint32_t new_proc(struct build *b, uint32_t pid, uint32_t ppid,
			 uint64_t birth, int has_birth)
{
	struct proc *pr;

	GROW(b->proc, b->nproc, b->cproc);
	pr = &b->proc[b->nproc];
	memset(pr, 0, sizeof *pr);
	pr->pid = pid;
	pr->ppid = ppid;
	pr->birth = birth;
	pr->has_birth = (uint8_t)has_birth;
	pr->cur = NONE;
	pr->parent = NONE;
	return (uint32_t)b->nproc++;
}

static uint32_t new_img(struct build *b, uint32_t proc, enum img_kind kind,
			uint64_t start)
{
	struct img *im;

	GROW(b->img, b->nimg, b->cimg);
	im = &b->img[b->nimg];
	memset(im, 0, sizeof *im);
	im->kind = (uint8_t)kind;
	im->start = start;
	im->cpu = im->fork_cpu = NONE;
	im->exit_code = -1;
	im->signal = -1;
	im->proc = proc;
	im->prev = b->proc[proc].cur;
	im->pending = NONE;
	im->exe = im->cwd = im->argv = im->env = NONE;
	b->proc[proc].cur = (uint32_t)b->nimg;
	return (uint32_t)b->nimg++;
}

/* Exit code and signal from a wait status. */
static void set_status(struct img *im, int status)
{
	if (WIFSIGNALED(status)) {
		im->exit_code = -1;
		im->signal = (int16_t)WTERMSIG(status);
		im->flags |= IF_KILLED;
	} else if (WIFEXITED(status)) {
		im->exit_code = (int16_t)WEXITSTATUS(status);
		im->signal = 0;
	}
}

/* The image `i` was replaced by an exec whose new image starts at t. */
static void end_by_exec(struct build *b, uint32_t i, uint64_t t)
{
	struct img *im = &b->img[i];

	im->pending = NONE;
	if (im->kind != IK_EXEC) {
		/* A fork phase that execs, or the placeholder of a spawn, is
		 * no execution of its own. */
		im->flags |= IF_FOLDED | IF_ENDED;
		if (t < im->start)
			im->start = t;
		im->end = t;
		return;
	}
	im->end = t > im->start ? t : im->start;
	im->flags |= IF_ENDED;
	im->exit_code = -1;
	im->signal = 0;
}

/*
 * The current image of proc exec'd: end it and start the new image at t.
 * A fork phase or spawn placeholder that did nothing but exec gives its
 * slot to the new image: that is the common fork+exec, and nothing can
 * refer to the slot (it never had a connection, so no child either).
 */
static uint32_t exec_img(struct build *b, uint32_t proc, uint64_t t)
{
	uint32_t prev = b->proc[proc].cur;
	const struct img *im = &b->img[prev];

	if (im->kind != IK_EXEC && !(im->flags & IF_CONN) &&
	    prev + 1 == b->nimg) {
		b->proc[proc].cur = im->prev;
		b->nimg--;
	} else {
		end_by_exec(b, prev, t);
	}
	return new_img(b, proc, IK_EXEC, t);
}

/*
 * The pending EXEC or SPAWN of proc's current image succeeded into a
 * program that never loaded the library: make its image.
 */
static uint32_t untraced(struct build *b, uint32_t proc)
{
	const struct ev *e = &b->ev[b->img[b->proc[proc].cur].pending];
	uint32_t i = exec_img(b, proc, e->time);
	struct img *im = &b->img[i];

	im->flags |= IF_UNTRACED | (e->flags & EVF_TRUNC ? IF_TRUNC : 0);
	if (e->type == E_EXEC) {
		im->exe = b->xx[e->b].path;
		im->cwd = b->xx[e->b].cwd;
		im->argv = e->a;
	} else {
		im->exe = e->b;
		im->argv = e->a;
	}
	return i;
}

static int finished(const struct build *b, uint32_t proc)
{
	const struct proc *pr = &b->proc[proc];

	return pr->reaped || (b->img[pr->cur].flags & IF_ENDED);
}

/* Give proc's open image an end: the process was not seen to end by t. */
static void close_proc(struct build *b, uint32_t proc, uint64_t t)
{
	uint32_t i = b->proc[proc].cur;
	struct img *im;

	/* (Index first: making an image may move b->img.) */
	if (b->img[i].pending != NONE)
		i = untraced(b, proc);
	im = &b->img[i];
	if (im->flags & IF_ENDED)
		return;
	im->end = t > im->start ? t : im->start;
	im->flags |= IF_ENDED | IF_END_UNKNOWN;
	im->exit_code = -1;
	im->signal = -1;
}

struct pidpass {
	struct build *b;
	uint32_t pid;                   /* raw */
	uint32_t first_img;             /* this pid's images start here */
	uint32_t cur;                   /* current process, NONE */
};

static uint32_t pp_new_proc(struct pidpass *pp, uint32_t ppid, uint64_t birth,
			    int has_birth)
{
	if (pp->cur != NONE)
		close_proc(pp->b, pp->cur, birth);
	pp->cur = new_proc(pp->b, pp->pid, ppid, birth, has_birth);
	return pp->cur;
}

static void ev_fork(struct pidpass *pp, const struct ev *e)
{
	/* The parent takes FORK's time before calling fork(), so the child's
	 * own frames all sort after it: a FORK always starts a process. */
	uint32_t pr = pp_new_proc(pp, e->other, e->time, 1);

	new_img(pp->b, pr, IK_FORK, e->time);
}

/*
 * The arguments of image i as its exec or spawn gave them: that is what
 * the caller ran (`./configure`), where the new image sees what the kernel
 * made of it (`/bin/sh ./configure` for a script).  Unless they were cut
 * and the image's own are whole.
 */
static void exec_argv(struct build *b, uint32_t i, const struct ev *e)
{
	struct img *im = &b->img[i];
	const char *path, *exe;
	size_t np, ne;

	if (im->kind != IK_EXEC || im->flags & IF_UNTRACED || im->exe == NONE)
		return;
	/* Only if the kernel ran that very path (AT_EXECFN, or where the
	 * PATH search found it): on ENOEXEC execvp runs /bin/sh itself, and
	 * then the image's own arguments are what was exec'd. */
	path = b->p->str.str[e->type == E_EXEC ? b->xx[e->b].path : e->b];
	exe = b->p->str.str[im->exe];
	np = strlen(path);
	ne = strlen(exe);
	if (strcmp(path, exe) && (strchr(path, '/') || ne <= np ||
				  exe[ne - np - 1] != '/' ||
				  strcmp(exe + ne - np, path)))
		return;
	if (e->flags & EVF_TRUNC && !(im->flags & IF_TRUNC))
		return;
	im->argv = e->a;
	if (e->flags & EVF_TRUNC)
		im->flags |= IF_TRUNC;
	else
		im->flags &= (uint16_t)~IF_TRUNC;
}

static void ev_spawn(struct pidpass *pp, uint32_t ei)
{
	struct build *b = pp->b;
	const struct ev *e = &b->ev[ei];
	struct proc *pr = pp->cur != NONE ? &b->proc[pp->cur] : NULL;
	uint32_t p, i;

	/* SPAWN is sent after posix_spawn returned: the child may have said
	 * HELLO (even exited) before.  Then it is that process. */
	if (pr && !pr->reaped && !pr->has_birth && pr->ppid == e->other &&
	    pr->birth + SPAWN_WINDOW_NS >= e->time) {
		pr->has_birth = 1;
		pr->birth = e->time;
		for (i = pr->cur; b->img[i].prev != NONE; i = b->img[i].prev)
			;
		exec_argv(b, i, e);
		return;
	}
	p = pp_new_proc(pp, e->other, e->time, 1);
	i = new_img(b, p, IK_SPAWN, e->time);
	b->img[i].pending = ei;
}

static void bind_conn(struct build *b, uint32_t conn, uint32_t img)
{
	if (conn == NONE)
		return;
	if (conn != CONN_NO_EOF)
		b->conns[conn].img = img;
	b->img[img].flags |= IF_CONN;
}

static void ev_hello(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	const struct hello_x *hx = &b->hx[e->a];
	uint64_t s = hx->start;
	uint32_t p = pp->cur, i, pend = NONE;
	struct img *im;
	int after_fork = 0;

	if (hx->kind != PT_HELLO_IMAGE) {
		/* A fork child's own connection: the child the parent's FORK
		 * started, or one we learn of only now (vfork, clone). */
		if (p != NONE && !finished(b, p) &&
		    b->img[b->proc[p].cur].kind == IK_FORK) {
			im = &b->img[b->proc[p].cur];
			im->pending = NONE;
			if (s < im->start)
				im->start = s;
		} else {
			p = pp_new_proc(pp, e->other, s, 0);
			i = new_img(b, p, IK_FORK, s);
			im = &b->img[i];
		}
		if (hx->cwd != NONE)
			im->cwd = hx->cwd;
		bind_conn(b, hx->conn, (uint32_t)(im - b->img));
		return;
	}
	if (p != NONE && !finished(b, p)) {
		const struct proc *pr = &b->proc[p];
		const struct img *cur = &b->img[pr->cur];

		/* A new image of the same process, unless nothing says it
		 * exec'd and it does not even have the same parent: then the
		 * old process's end was missed and the pid is reused. */
		if (cur->pending == NONE && cur->kind == IK_EXEC &&
		    pr->ppid != e->other)
			p = NONE;
	} else {
		p = NONE;
	}
	if (p == NONE) {
		p = pp_new_proc(pp, e->other, s, 0);
		i = new_img(b, p, IK_EXEC, s);
	} else {
		uint32_t prev = b->proc[p].cur;

		pend = b->img[prev].pending;
		if (b->img[prev].kind == IK_EXEC && s < b->img[prev].start)
			s = b->img[prev].start;
		after_fork = b->img[prev].kind == IK_FORK;
		i = exec_img(b, p, s);
	}
	im = &b->img[i];
	/* The first image after a fork: what the process ran before it is
	 * its fork phase, whose slot exec_img() may have given away. */
	if (after_fork)
		im->fork_cpu = hx->before;
	im->exe = hx->exe;
	im->cwd = hx->cwd;
	im->argv = hx->argv;
	im->env = hx->env;
	if (hx->trunc)
		im->flags |= IF_TRUNC;
	if (pend != NONE)
		exec_argv(b, i, &b->ev[pend]);
	if (hx->conn == NONE)
		im->flags |= IF_NOCONN;
	bind_conn(b, hx->conn, i);
}

static void ev_exec(struct pidpass *pp, uint32_t ei)
{
	struct build *b = pp->b;
	const struct ev *e = &b->ev[ei];
	uint32_t p = pp->cur;

	/* A vfork child announces its exec on its parent's connection
	 * before anything else is known of it. */
	if (p == NONE || finished(b, p)) {
		p = pp_new_proc(pp, e->other, e->time, 0);
		new_img(b, p, IK_FORK, e->time);
	}
	b->img[b->proc[p].cur].pending = ei;
}

static void ev_exec_failed(struct pidpass *pp)
{
	struct build *b = pp->b;
	struct img *im;

	if (pp->cur == NONE)
		return;
	im = &b->img[b->proc[pp->cur].cur];
	if (im->pending != NONE && b->ev[im->pending].type == E_EXEC)
		im->pending = NONE;
}

static void ev_exit(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct img *im;

	if (pp->cur == NONE || finished(b, pp->cur)) {
		/* A vfork or clone child that exits without exec has its
		 * EXIT on the parent's connection, and nothing else. */
		if (!e->other)
			return;
		new_img(b, pp_new_proc(pp, e->other, e->time, 0), IK_FORK,
			e->time);
	}
	im = &b->img[b->proc[pp->cur].cur];
	if (im->kind == IK_SPAWN) {
		/* Its HELLO was lost: what SPAWN said is all we know. */
		const struct ev *s = &b->ev[im->pending];

		im->kind = IK_EXEC;
		im->exe = s->b;
		im->argv = s->a;
	}
	im->pending = NONE;         /* an exec without EXEC_FAILED failed */
	im->end = e->time > im->start ? e->time : im->start;
	im->flags |= IF_ENDED | IF_EXITED;
	im->exit_code = (int16_t)(e->a & 255);
	im->signal = 0;
	if (e->b != NONE)
		im->cpu = e->b;
}

static void ev_reap(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct proc *pr;
	struct img *im;

	/* A REAP alone makes no execution: under ptrace the tracer's wait
	 * reports threads and other processes' children too.  A second REAP
	 * of a process is the tracer's and the parent's both reporting. */
	if (pp->cur == NONE || b->proc[pp->cur].reaped)
		return;
	pr = &b->proc[pp->cur];
	/* Only the parent's REAP ends a process: a tracer's wait (strace,
	 * gdb) collects processes that are not its children, and may do so
	 * before the parent's SPAWN for the same process has arrived. */
	if (pr->ppid && pr->ppid != e->other)
		return;
	pr->reaped = 1;
	if (!pr->ppid)
		pr->ppid = e->other;
	im = &b->img[pr->cur];
	if (im->pending != NONE) {
		uint32_t u = untraced(b, pp->cur);

		im = &b->img[u];
		im->end = e->time > im->start ? e->time : im->start;
		im->flags |= IF_ENDED;
		set_status(im, (int)e->a);
		/* The child's rusage: all we will know of a program that
		 * loaded no library. */
		if (e->b != NONE)
			im->cpu = e->b;
		return;
	}
	if (im->flags & IF_EXITED)
		return;
	if (!(im->flags & IF_ENDED) || e->time < im->end)
		im->end = e->time > im->start ? e->time : im->start;
	im->flags |= IF_ENDED | IF_REAP_END | IF_KILLED;
	im->flags &= (uint16_t)~IF_END_UNKNOWN;
	set_status(im, (int)e->a);
	if (im->flags & IF_UNTRACED && e->b != NONE)
		im->cpu = e->b;
}

static void ev_eof(struct pidpass *pp, const struct ev *e)
{
	struct build *b = pp->b;
	struct conn *c = &b->conns[e->a];
	uint32_t i = c->img;
	struct img *im;

	if (e->flags & EVF_UNBOUND) {
		/* Its HELLO travelled on an AUX connection: it belongs to the
		 * image of its pid that was running when it connected. */
		for (i = (uint32_t)b->nimg; i-- > pp->first_img;) {
			im = &b->img[i];
			if (im->start <= c->connect_ns)
				break;
		}
		if (i == NONE || i < pp->first_img ||
		    !(b->img[i].flags & IF_NOCONN))
			return;
		b->img[i].flags &= (uint16_t)~IF_NOCONN;
		c->img = i;
	}
	if (i == NONE)
		return;
	im = &b->img[i];
	if (im->flags & IF_ENDED) {
		if (im->flags & IF_REAP_END && e->time < im->end)
			im->end = e->time > im->start ? e->time : im->start;
		return;
	}
	/* An image that announced an exec closes its connection by exec:
	 * what comes next (HELLO or REAP) tells how it went. */
	if (im->pending != NONE || b->proc[im->proc].cur != i)
		return;
	im->end = e->time > im->start ? e->time : im->start;
	im->flags |= IF_ENDED | IF_KILLED | IF_REAP_END;
	im->exit_code = -1;
	im->signal = -1;
}

/* Events of one pid by time, then file order. */
struct evkey {
	uint64_t time;
	uint32_t i;
};

static int cmp_evkey(const void *x, const void *y)
{
	const struct evkey *a = x, *b = y;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * Sort o[0..n), indices of events in file order.  Most pids' events are
 * in order already; the others are sorted on copies of their keys, since
 * the events themselves lie far apart in a large array.
 */
static void sort_events(uint32_t *o, size_t n, const struct ev *ev,
			struct evkey **keys, size_t *cap)
{
	size_t i, j;

	for (i = 1; i < n && ev[o[i - 1]].time <= ev[o[i]].time; i++)
		;
	if (i >= n)
		return;                 /* ties are in file order already */
	if (n > *cap) {
		*cap = n + 64;
		*keys = pt_xrealloc(*keys, *cap * sizeof **keys);
	}
	for (j = 0; j < n; j++) {
		(*keys)[j].time = ev[o[j]].time;
		(*keys)[j].i = o[j];
	}
	if (n > 32) {
		qsort(*keys, n, sizeof **keys, cmp_evkey);
	} else {
		/* Nearly sorted: insertion sort. */
		for (i = 1; i < n; i++) {
			struct evkey v = (*keys)[i];

			for (j = i; j > 0 && cmp_evkey(&(*keys)[j - 1], &v) > 0; j--)
				(*keys)[j] = (*keys)[j - 1];
			(*keys)[j] = v;
		}
	}
	for (j = 0; j < n; j++)
		o[j] = (*keys)[j].i;
}

static void run_pids(struct build *b)
{
	uint32_t *start = pt_xcalloc(b->npid + 1, sizeof *start);
	uint32_t *order = pt_xmalloc((b->nev ? b->nev : 1) * sizeof *order);
	struct evkey *keys = NULL;
	size_t i, d, nkeys = 0;

	/* Counting sort by pid keeps file order within each pid. */
	for (i = 0; i < b->nev; i++)
		start[b->ev[i].pid + 1]++;
	for (d = 0; d < b->npid; d++)
		start[d + 1] += start[d];
	{
		uint32_t *fill = pt_xmalloc((b->npid + 1) * sizeof *fill);

		memcpy(fill, start, (b->npid + 1) * sizeof *fill);
		for (i = 0; i < b->nev; i++)
			order[fill[b->ev[i].pid]++] = (uint32_t)i;
		free(fill);
	}
	b->pid_img = pt_xmalloc((b->npid + 1) * sizeof *b->pid_img);
	for (d = 0; d < b->npid; d++) {
		struct pidpass pp = {
			.b = b, .pid = b->pid_raw[d],
			.first_img = (uint32_t)b->nimg, .cur = NONE,
		};
		uint32_t *o = order + start[d];
		size_t n = start[d + 1] - start[d];

		b->pid_img[d] = (uint32_t)b->nimg;
		sort_events(o, n, b->ev, &keys, &nkeys);
		for (i = 0; i < n; i++) {
			const struct ev *e = &b->ev[o[i]];

			switch (e->type) {
			case E_HELLO:       ev_hello(&pp, e); break;
			case E_EXEC:        ev_exec(&pp, o[i]); break;
			case E_EXEC_FAILED: ev_exec_failed(&pp); break;
			case E_SPAWN:       ev_spawn(&pp, o[i]); break;
			case E_FORK:        ev_fork(&pp, e); break;
			case E_REAP:        ev_reap(&pp, e); break;
			case E_EXIT:        ev_exit(&pp, e); break;
			case E_EOF:         ev_eof(&pp, e); break;
			}
		}
		if (pp.cur != NONE)
			close_proc(b, pp.cur, b->last_ns);
	}
	b->pid_img[b->npid] = (uint32_t)b->nimg;
	free(keys);
	free(order);
	free(start);
}

/* ---- parents and inheritance ---- */

static uint32_t proc_parent(struct build *b, uint32_t proc, int depth);

/* The execution that image i stands for: folded images defer to the
 * process's parent. */
static uint32_t real_img(struct build *b, uint32_t i, int depth)
{
	while (i != NONE && b->img[i].flags & IF_FOLDED) {
		if (depth > 1000)
			return NONE;
		i = proc_parent(b, b->img[i].proc, depth + 1);
	}
	return i;
}

static uint32_t proc_parent(struct build *b, uint32_t proc, int depth)
{
	struct proc *pr = &b->proc[proc];
	uint32_t d, lo, hi, i;
	const struct img *im;

	if (pr->parent_done)
		return pr->parent;
	pr->parent_done = 1;            /* also breaks any cycle */
	d = pr->ppid ? pid_find(b, pr->ppid) : NONE;
	if (d == NONE)
		return NONE;
	/* Last image of the parent pid that started by the child's birth. */
	lo = b->pid_img[d];
	hi = b->pid_img[d + 1];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->img[mid].start <= pr->birth)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->pid_img[d])
		return NONE;
	i = lo - 1;
	im = &b->img[i];
	/* Ended before the child was born: the pid was someone else's. */
	if ((im->flags & (IF_ENDED | IF_END_UNKNOWN | IF_FOLDED)) == IF_ENDED &&
	    im->end < pr->birth)
		return NONE;
	pr->parent = real_img(b, i, depth);
	return pr->parent;
}

/* Where image i takes what it did not record itself. */
static uint32_t source_img(struct build *b, uint32_t i)
{
	const struct img *im = &b->img[i];

	if (im->kind == IK_EXEC && im->prev != NONE &&
	    b->img[im->prev].kind != IK_SPAWN)
		return im->prev;        /* an untraced exec: its predecessor */
	return proc_parent(b, im->proc, 0);
}

static void fill_from(struct img *im, const struct img *src)
{
	if (im->exe == NONE)
		im->exe = src ? src->exe : 0;
	if (im->argv == NONE)
		im->argv = src ? src->argv : 0;
	if (im->env == NONE)
		im->env = src ? src->env : 0;
	if (im->cwd == NONE)
		im->cwd = src ? src->cwd : 0;
}

/*
 * Fill the inherited fields of image i, and first those of the images it
 * inherits from (iteratively: fork chains can be deep).
 */
static void resolve(struct build *b, uint32_t i, uint32_t **stack, size_t *cap)
{
	size_t n = 0;

	while (i != NONE && !(b->img[i].flags & (IF_RESOLVED | IF_RESOLVING))) {
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*stack = pt_xrealloc(*stack, *cap * sizeof **stack);
		}
		(*stack)[n++] = i;
		b->img[i].flags |= IF_RESOLVING;
		i = source_img(b, i);
	}
	while (n--) {
		uint32_t j = (*stack)[n], src = source_img(b, j);

		fill_from(&b->img[j], src != NONE ? &b->img[src] : NULL);
		b->img[j].flags |= IF_RESOLVED;
	}
}

/* ---- output ---- */

static const char *str_of(const struct pt_model_priv *p, uint32_t id)
{
	return p->str.str[id == NONE ? 0 : id];
}

/* AT_EXECFN and exec paths may be relative to the working directory. */
static const char *absolute_exe(struct pt_model_priv *p, uint32_t exe,
				uint32_t cwd, struct pt_sb *tmp)
{
	const char *e = str_of(p, exe), *c = str_of(p, cwd);

	if (e[0] == '/' || !strchr(e, '/') || c[0] != '/')
		return e;
	while (e[0] == '.' && e[1] == '/')
		for (e += 2; *e == '/'; e++)
			;
	pt_sb_reset(tmp);
	pt_sb_addstr(tmp, c);
	if (tmp->len > 1)
		pt_sb_addch(tmp, '/');
	pt_sb_addstr(tmp, e);
	return str_intern_ptr(&p->str, tmp->buf, tmp->len);
}

/* Saturating, and never before 1970: times are not trusted either. */
static int64_t epoch(const struct build *b, uint64_t mono)
{
	int64_t t;

	if (mono > INT64_MAX)
		mono = INT64_MAX;
	if (__builtin_add_overflow((int64_t)mono, b->offset, &t))
		t = b->offset > 0 ? INT64_MAX : 0;
	return t < 0 ? 0 : t;
}

/*
 * A fork phase's CPU (cpu3 c) is its parent's work (a subshell's loop is
 * the shell's code), as the parent holds its children in the tree: it
 * counts there, or in e itself for a root.
 */
static void add_fork_cpu(struct build *b, struct pt_exec *e, uint32_t c)
{
	struct pt_exec *to = e->parent ? e->parent : e;
	uint64_t ut = b->cpu[c].ut, st = b->cpu[c].st;

	if (b->cpu[c].ut == CPU_BIG) {
		ut = b->big[b->cpu[c].st].ut;
		st = b->big[b->cpu[c].st].st;
	}
	if (to->utime_us < 0 && to->stime_us < 0)
		to->utime_us = to->stime_us = 0;
	if (to->utime_us >= 0)
		to->utime_us += (int64_t)ut;
	if (to->stime_us >= 0)
		to->stime_us += (int64_t)st;
}

static void emit(struct build *b)
{
	struct pt_model_priv *p = b->p;
	size_t n = b->nimg ? b->nimg : 1, i;
	struct pt_exec **out = pt_xcalloc(n, sizeof *out);
	struct pt_sb tmp = PT_SB_INIT;
	uint32_t *stack = NULL;
	size_t scap = 0;

	for (i = 0; i < b->nproc; i++)
		proc_parent(b, (uint32_t)i, 0);
	for (i = 0; i < b->nimg; i++)
		resolve(b, (uint32_t)i, &stack, &scap);
	free(stack);
	/* Each image takes what it needs of its process along, and the
	 * processes go before the executions are allocated. */
	for (i = 0; i < b->nimg; i++) {
		struct img *im = &b->img[i];
		const struct proc *pr = &b->proc[im->proc];

		im->pid = pr->pid;
		im->ppid = pr->ppid;
		im->parent = pr->parent;
	}
	free(b->proc);
	b->proc = NULL;
	b->nproc = b->cproc = 0;
	for (i = 0; i < b->nimg; i++) {
		struct img *im = &b->img[i];
		struct pt_exec *e;
		uint32_t av, ev;

		if (im->flags & IF_FOLDED || im->kind == IK_SPAWN)
			continue;
		e = arena_alloc(&p->execs, sizeof *e, _Alignof(struct pt_exec));
		memset(e, 0, sizeof *e);
		out[i] = e;
		e->capture = b->capture;
		e->pid = (int32_t)pt_pidns_shown(&b->ns, im->pid);
		e->ppid = (int32_t)pt_pidns_shown(&b->ns, im->ppid);
		e->type = im->kind == IK_FORK ? PT_EXEC_FORK : PT_EXEC_EXEC;
		e->flags = (im->flags & IF_UNTRACED ? PT_EXF_UNTRACED : 0) |
			   (im->flags & IF_END_UNKNOWN ? PT_EXF_END_UNKNOWN : 0) |
			   (im->flags & IF_KILLED ? PT_EXF_KILLED : 0) |
			   (im->flags & IF_TRUNC ? PT_EXF_ARGV_TRUNC : 0);
		e->start_ns = epoch(b, im->start);
		e->end_ns = epoch(b, im->end > im->start ? im->end : im->start);
		if (e->end_ns < e->start_ns)
			e->end_ns = e->start_ns;
		e->exit_code = im->exit_code;
		e->signal = im->signal;
		if (im->cpu == NONE) {
			e->utime_us = e->stime_us = e->maxrss_kb = -1;
		} else if (b->cpu[im->cpu].ut == CPU_BIG) {
			const struct cpu_big *c = &b->big[b->cpu[im->cpu].st];

			e->utime_us = (int64_t)c->ut;
			e->stime_us = (int64_t)c->st;
			e->maxrss_kb = (int64_t)c->rss;
		} else {
			e->utime_us = b->cpu[im->cpu].ut;
			e->stime_us = b->cpu[im->cpu].st;
			e->maxrss_kb = b->cpu[im->cpu].rss;
		}
		av = im->argv == NONE ? 0 : im->argv;
		ev = im->env == NONE ? 0 : im->env;
		e->cwd = str_of(p, im->cwd);
		e->exe = absolute_exe(p, im->exe, im->cwd, &tmp);
		e->argv_vec = p->vec.vec[av];
		e->argc = p->vec.len[av] & ~VEC_PACKED;
		e->env_id = p->vec.vec[ev];
		e->envc = p->vec.len[ev];
		e->owner = p;
		e->id = (uint32_t)p->nlist;     /* creation order, for ties */
		GROW(p->list, p->nlist, p->caplist);
		p->list[p->nlist++] = e;
	}
	for (i = 0; i < b->nimg; i++) {
		uint32_t par = b->img[i].parent;

		if (out[i])
			out[i]->parent = par != NONE ? out[par] : NULL;
	}
	for (i = 0; i < b->nimg; i++)
		if (out[i] && b->img[i].fork_cpu != NONE)
			add_fork_cpu(b, out[i], b->img[i].fork_cpu);
	free(out);
	pt_sb_release(&tmp);
}

/* The lookup of connections by id: needed only while reading. */
static void free_conn_index(struct build *b)
{
	itab_free(&b->conn_t);
	free(b->conn_ix);
	b->conn_ix = NULL;
	b->nconn_ix = 0;
}

/*
 * Once all is read, a connection matters only for its EOF, which ends the
 * image that said HELLO on it: keep the connections that have one (a
 * process killed, or the collector stopped before it), renumbered, and
 * free the rest before the per-pid pass adds the images, so the two do
 * not add up.  Most connections end after their EXIT and have none.
 */
static void keep_eof_conns(struct build *b)
{
	uint32_t *to = pt_xmalloc((b->nconn ? b->nconn : 1) * sizeof *to);
	struct conn *kept = NULL;
	size_t i, n = 0;

	for (i = 0; i < b->nconn; i++)
		to[i] = CONN_NO_EOF;
	if (b->neof) {
		kept = pt_xmalloc(b->neof * sizeof *kept);
		for (i = 0; i < b->nev; i++) {
			struct ev *e = &b->ev[i];

			if (e->type != E_EOF)
				continue;
			if (to[e->a] == CONN_NO_EOF) {
				kept[n] = b->conns[e->a];
				to[e->a] = (uint32_t)n++;
			}
			e->a = to[e->a];
		}
	}
	for (i = 0; i < b->nhx; i++)
		if (b->hx[i].conn != NONE)
			b->hx[i].conn = to[b->hx[i].conn];
	free(to);
	free(b->conns);
	free_conn_index(b);
	b->conns = kept;
	b->nconn = b->cconn = n;
}

/* What only reading and the per-pid pass need: gone before the output
 * is allocated, so that the two never add up. */
static void free_events(struct build *b)
{
	free(b->ev);
	free(b->hx);
	free(b->xx);
	free(b->conns);
	free_conn_index(b);
	b->ev = NULL;
	b->hx = NULL;
	b->xx = NULL;
	b->conns = NULL;
}

/*
 * A shell that system() or pclose() waited for inside glibc and that died
 * without EXIT: its status is the REAP of child 0 that its parent sent
 * next.  Few executions lack a status, so they drive the search.
 */
static void apply_anon_reaps(struct build *b, size_t first)
{
	size_t i, k;

	for (i = first; i < b->p->nlist && b->nanon; i++) {
		struct pt_exec *e = b->p->list[i];
		size_t best = SIZE_MAX;

		if (e->exit_code != -1 || e->signal != -1 || e->type != PT_EXEC_EXEC)
			continue;
		for (k = 0; k < b->nanon; k++) {
			int64_t t = (int64_t)b->anon[k].time + b->offset;

			if ((int32_t)b->anon[k].parent == e->ppid &&
			    t >= e->start_ns &&
			    (best == SIZE_MAX || b->anon[k].time < b->anon[best].time))
				best = k;
		}
		if (best == SIZE_MAX)
			continue;
		if (WIFSIGNALED(b->anon[best].status)) {
			e->signal = WTERMSIG(b->anon[best].status);
			e->flags |= PT_EXF_KILLED;
		} else if (WIFEXITED(b->anon[best].status)) {
			e->exit_code = WEXITSTATUS(b->anon[best].status);
			e->signal = 0;
		}
		b->anon[best].parent = 0;       /* used */
	}
}

static void build_free(struct build *b)
{
	free(b->cpu);
	free(b->big);
	free(b->anon);
	free_events(b);
	free(b->pid_raw);
	itab_free(&b->pid_t);
	free(b->pid_img);
	free(b->img);
	free(b->proc);
	pt_pidns_free(&b->ns);
}

/* ---- the API ---- */

void pt_model_init(struct pt_model *m)
{
	/* Fixed, not left to glibc's sliding threshold, which a freed
	 * mapping raises: see BIG_ARRAY. */
	mallopt(M_MMAP_THRESHOLD, BIG_ARRAY);
	memset(m, 0, sizeof *m);
	m->priv = pt_xcalloc(1, sizeof *m->priv);
	/* Id 0 is the empty string and the empty vector. */
	str_intern(&m->priv->str, "");
	vec_intern(&m->priv->vec, &m->priv->str, NULL, 0, vec_hash(NULL, 0), 0);
}

static const char *meta_get(const struct capmeta *cm, const char *key)
{
	const char *found = NULL;
	size_t i;

	for (i = 0; i + 1 < cm->n; i += 2)
		if (!strcmp(cm->kv[i], key))
			found = cm->kv[i + 1];
	return found;
}

/* The capture's own clock pair beats one taken from some HELLO. */
static void meta_offset(struct build *b)
{
	const struct capmeta *cm = &b->p->meta[b->capture];
	const char *r = meta_get(cm, "start_realtime_ns");
	const char *mo = meta_get(cm, "start_monotonic_ns");
	char *end1, *end2;
	unsigned long long rv, mv;

	if (!r || !mo)
		return;
	rv = strtoull(r, &end1, 10);
	mv = strtoull(mo, &end2, 10);
	if (*end1 || *end2 || end1 == r || end2 == mo)
		return;
	b->offset = (int64_t)(rv - mv);
	b->have_offset = 2;
}

/* The capture's end (collector's clock), if it says; else its last event. */
static void meta_end(struct build *b)
{
	const char *s = meta_get(&b->p->meta[b->capture], "end_monotonic_ns");
	char *end;
	unsigned long long v;

	if (!s)
		return;
	v = strtoull(s, &end, 10);
	if (!*end && end != s)
		note_time(b, v);
}

int pt_model_add_capture(struct pt_model *m, const char *path)
{
	struct pt_model_priv *p = m->priv;
	struct pt_reader *r = pt_reader_open(path);
	struct build b;
	size_t first, i, open = 0;
	int rc;

	if (!r)
		return -1;
	if (m->ncaptures == p->cap_meta) {
		p->cap_meta = p->cap_meta ? 2 * p->cap_meta : 4;
		p->meta = pt_xrealloc(p->meta, p->cap_meta * sizeof *p->meta);
	}
	memset(&p->meta[m->ncaptures], 0, sizeof *p->meta);
	memset(&b, 0, sizeof b);
	b.m = m;
	b.p = p;
	b.capture = (uint32_t)m->ncaptures++;
	rc = read_all(&b, r);
	pt_reader_close(r);
	if (rc < 0)
		m->damaged = 1;
	meta_offset(&b);
	meta_end(&b);
	resolve_ns(&b);
	keep_eof_conns(&b);
	run_pids(&b);
	free_events(&b);
	first = p->nlist;
	emit(&b);
	apply_anon_reaps(&b, first);
	build_free(&b);
	if (rc < 0) {
		/* Say what the damage cost: executions it cut off. */
		for (i = first; i < p->nlist; i++)
			open += (p->list[i]->flags & PT_EXF_END_UNKNOWN) != 0;
		pt_warn("%s: %zu of the %zu executions read have no recorded "
			"end", path, open, p->nlist - first);
	}
	return rc < 0 ? 1 : 0;
}

static int cmp_exec(const void *x, const void *y)
{
	const struct pt_exec *a = *(const struct pt_exec *const *)x;
	const struct pt_exec *b = *(const struct pt_exec *const *)y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

void pt_model_finish(struct pt_model *m)
{
	struct pt_model_priv *p = m->priv;
	struct pt_exec **tail;
	size_t i;

	if (p->nlist)
		qsort(p->list, p->nlist, sizeof *p->list, cmp_exec);
	m->execs = p->list;
	m->n = p->nlist;
	for (i = 0; i < m->n; i++) {
		m->execs[i]->id = (uint32_t)i;
		m->execs[i]->first_child = m->execs[i]->next_sibling = NULL;
	}
	/* Children in start order: append each to its parent's list. */
	tail = pt_xcalloc(m->n ? m->n : 1, sizeof *tail);
	for (i = 0; i < m->n; i++) {
		struct pt_exec *e = m->execs[i], *par = e->parent;

		if (!par)
			continue;
		if (tail[par->id])
			tail[par->id]->next_sibling = e;
		else
			par->first_child = e;
		tail[par->id] = e;
	}
	free(tail);
}

/* Write split string id out at `to`, NUL-terminated; returns its end. */
static char *str_join(const struct strtab *st, uint32_t id, char *to)
{
	const uint32_t *w = (const uint32_t *)(const void *)st->str[id];
	uint32_t k;

	for (k = 1; k <= w[0]; k++) {
		if (k > 1)
			*to++ = ' ';
		memcpy(to, st->str[w[k]], st->len[w[k]]);
		to += st->len[w[k]];
	}
	*to = '\0';
	return to + 1;
}

/*
 * What join_args() unpacked and joined last, one per thread: the writers
 * format in two threads at once (par.c).  Keyed on the model as well, so
 * that a vector of a freed model is never taken for one of a new model at
 * the same address (pt_model_free() empties the freeing thread's cache,
 * pt_model_thread_done() another thread's).
 */
static __thread struct argcache {
	const struct pt_model_priv *model;
	const void *vec;
	const char **arg;
	uint32_t *id;
	size_t carg;
	char *buf;
	size_t cbuf;
} arg_cache;

void pt_model_thread_done(void)
{
	free(arg_cache.arg);
	free(arg_cache.id);
	free(arg_cache.buf);
	memset(&arg_cache, 0, sizeof arg_cache);
}

/*
 * e's arguments as C strings, unpacked and its split ones joined in one
 * go, so that
 * what a caller holds of one command line stays valid while it reads the
 * rest of it: until the arguments of another vector are joined.
 */
static const char *const *join_args(const struct pt_exec *e)
{
	/* A cache: the model the ids belong to is not const, its users' view
	 * of it is. */
	struct pt_model_priv *p = (struct pt_model_priv *)(uintptr_t)e->owner;
	const struct strtab *st = &p->str;
	struct argcache *c = &arg_cache;
	const unsigned char *pk = e->argv_vec;
	size_t i, need = 0;
	char *to;

	if (c->model == p && c->vec == e->argv_vec)
		return c->arg;
	if (e->argc > c->carg) {
		c->carg = e->argc > 2 * c->carg ? e->argc : 2 * c->carg;
		c->arg = pt_xrealloc(c->arg, c->carg * sizeof *c->arg);
		c->id = pt_xrealloc(c->id, c->carg * sizeof *c->id);
	}
	for (i = 0; i < e->argc; i++) {
		pk = vec_unpack(pk, &c->id[i]);
		if (st->len[c->id[i]] & STR_SPLIT)
			need += (st->len[c->id[i]] & ~STR_SPLIT) + 1;
	}
	if (need > c->cbuf) {
		c->cbuf = need > 2 * c->cbuf ? need : 2 * c->cbuf;
		c->buf = pt_xrealloc(c->buf, c->cbuf);
	}
	for (i = 0, to = c->buf; i < e->argc; i++) {
		uint32_t id = c->id[i];

		if (st->len[id] & STR_SPLIT) {
			c->arg[i] = to;
			to = str_join(st, id, to);
		} else {
			c->arg[i] = st->str[id];
		}
	}
	c->model = p;
	c->vec = e->argv_vec;
	return c->arg;
}

const char *pt_exec_arg(const struct pt_exec *e, size_t i)
{
	return join_args(e)[i];
}

uint32_t pt_exec_arg_id(const struct pt_exec *e, size_t i)
{
	join_args(e);
	return arg_cache.id[i];
}

const char *pt_exec_envent(const struct pt_exec *e, size_t i)
{
	return e->owner->str.str[e->env_id[i]];
}

const char *pt_exec_env(const struct pt_exec *e, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; i < e->envc; i++) {
		const char *kv = pt_exec_envent(e, i);

		if (!strncmp(kv, name, n) && kv[n] == '=')
			return kv + n + 1;
	}
	return NULL;
}

void pt_exec_set_argv(struct pt_model *m, struct pt_exec *e,
		      const char *const *argv, size_t argc)
{
	struct pt_model_priv *p = m->priv;
	struct pstr *a = pt_xcalloc(argc ? argc : 1, sizeof *a);
	uint32_t id;
	size_t i;

	for (i = 0; i < argc; i++) {
		a[i].s = argv[i];
		a[i].len = (uint32_t)strlen(argv[i]);
		a[i].hash = pt_hash_bytes(argv[i], a[i].len);
	}
	id = vec_intern(&p->vec, &p->str, a, argc, vec_hash(a, argc), 1);
	e->argv_vec = p->vec.vec[id];
	e->argc = argc;
	free(a);
}

const char *pt_model_meta(const struct pt_model *m, size_t capture,
			  const char *key)
{
	if (capture >= m->ncaptures)
		return NULL;
	return meta_get(&m->priv->meta[capture], key);
}

void pt_model_set_meta(struct pt_model *m, size_t capture, const char *key,
		       const char *value)
{
	struct pt_model_priv *p = m->priv;
	struct capmeta *cm;

	if (capture >= m->ncaptures)
		return;
	cm = &p->meta[capture];
	if (cm->n + 2 > cm->cap) {
		cm->cap = cm->cap ? 2 * cm->cap : 32;
		cm->kv = pt_xrealloc(cm->kv, cm->cap * sizeof *cm->kv);
	}
	/* Appended: the last value of a key wins (meta_get). */
	cm->kv[cm->n++] = str_intern_ptr(&p->str, key, strlen(key));
	cm->kv[cm->n++] = str_intern_ptr(&p->str, value, strlen(value));
}

void pt_model_free(struct pt_model *m)
{
	struct pt_model_priv *p = m->priv;
	size_t i;

	if (!p)
		return;
	arena_free(&p->str.mem);
	free(p->str.str);
	free(p->str.len);
	free(p->str.hash);
	itab_free(&p->str.t);
	free(p->str.words);
	pt_model_thread_done();
	arena_free(&p->vec.mem);
	free(p->vec.vec);
	free(p->vec.len);
	free(p->vec.ids);
	free(p->vec.hash);
	itab_free(&p->vec.t);
	arena_free(&p->execs);
	free(p->list);
	for (i = 0; i < m->ncaptures; i++)
		free(p->meta[i].kv);
	free(p->meta);
	free(p);
	memset(m, 0, sizeof *m);
}
