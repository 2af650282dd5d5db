/*
 * The build's jobs as its tools had them, the file dependencies between
 * them, the order the tools declared, the races (a file dependency the
 * declared order does not imply), the serializations (an imposed order
 * with no file dependency under it, by what an ideal schedule saves
 * without it) and the ideal wall times (analysis/deps.h).
 *
 * Scopes and jobs.  A scope is a tool that ran jobs: make (a recipe is
 * a job: its lines, the make's children of one target, with what they
 * ran), ninja (an edge: one child), the script that drives the build
 * (the first execution from a root down that started more than one
 * program: each child a job), and the capture's roots together.  A job
 * that runs a build tool anywhere below it (`cd sub && $(MAKE)`, dh
 * running make, a make exec'd by a shell) holds that tool's scope; its
 * own work is the rest.  An image and what its pid exec'd are one job.
 *
 * Declared order between two jobs: at the lowest scope holding both,
 * the two jobs of that scope they belong to are ordered when make's
 * database (analysis/makedb.h) has one target depend on the other, or
 * make read .NOTPARALLEL; where the targets are not known (ninja, a
 * script, a make whose directory is gone), when the two did not run at
 * the same time.  Two sub-makes of one recipe are ordered when they
 * did not run at the same time (the recipe ran them one after the
 * other).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/deps.h"
#include "analysis/depjobs.h"
#include "analysis/depsched.h"
#include "analysis/makedb.h"
#include "base/strbuf.h"
#include "base/util.h"

/* Pairs of jobs looked at for one path, at most: a log every job
 * appends to would otherwise cost jobs squared. */
#define PAIRS_PER_PATH 200000u
#define SER_MAX 10
#define RACE_MAX 50
#define CUTS_MAX 400

/* ---- the declared order ---- */

struct chain {
	size_t scope[32], job[32];
	size_t n;
};

static void chain_of(const struct pt_deps *d, size_t j, struct chain *c)
{
	c->n = 0;
	while (j != SIZE_MAX && c->n < 32) {
		c->job[c->n] = j;
		c->scope[c->n++] = d->job[j].scope;
		j = d->scope[d->job[j].scope].parent_job;
	}
}

static int overlap(int64_t s1, int64_t e1, int64_t s2, int64_t e2)
{
	return s1 < e2 && s2 < e1;
}

struct lca {
	size_t scope, ux, uy;           /* the scope, x's and y's jobs in it */
	size_t sx, sy;                  /* the scopes just below, when ux ==
					 * uy (SIZE_MAX: x or y is ux itself) */
};

static void lca_of(const struct pt_deps *d, size_t x, size_t y,
		   struct lca *l)
{
	struct chain cx, cy;
	size_t i, k;

	chain_of(d, x, &cx);
	chain_of(d, y, &cy);
	for (i = 0; i < cx.n; i++)
		for (k = 0; k < cy.n; k++)
			if (cx.scope[i] == cy.scope[k]) {
				l->scope = cx.scope[i];
				l->ux = cx.job[i];
				l->uy = cy.job[k];
				l->sx = i ? cx.scope[i - 1] : SIZE_MAX;
				l->sy = k ? cy.scope[k - 1] : SIZE_MAX;
				return;
			}
	l->scope = 0;
	l->ux = cx.job[cx.n - 1];
	l->uy = cy.job[cy.n - 1];
	l->sx = l->sy = SIZE_MAX;
}

/* Is the order of jobs x and y declared (or, where nothing declares
 * it, did they not run at the same time)? */
static int ordered(struct pt_deps *d, size_t x, size_t y)
{
	struct lca l;
	const struct pt_deps_scope *s;
	const struct pt_deps_job *a, *b;

	lca_of(d, x, y, &l);
	if (l.ux == l.uy) {
		if (l.sx == SIZE_MAX || l.sy == SIZE_MAX)
			return 1;
		return !overlap(d->scope[l.sx].start_ns, d->scope[l.sx].end_ns,
				d->scope[l.sy].start_ns, d->scope[l.sy].end_ns);
	}
	s = &d->scope[l.scope];
	a = &d->job[l.ux];
	b = &d->job[l.uy];
	if (s->db) {
		long ta, tb;

		if (s->notparallel)
			return 1;
		ta = a->target ? pt_makedb_find(s->db, a->target) : -1;
		tb = b->target ? pt_makedb_find(s->db, b->target) : -1;
		if (ta >= 0 && tb >= 0)
			return pt_makedb_reaches(s->db, (size_t)ta, (size_t)tb) ||
			       pt_makedb_reaches(s->db, (size_t)tb, (size_t)ta);
	}
	return !overlap(a->start_ns, a->end_ns, b->start_ns, b->end_ns);
}

/* ---- paths: who wrote and who read each, first time per job ---- */

struct touch {
	uint32_t job;
	int64_t r, w, k, del, miss;     /* first read or probe, write or new
					 * name, mkdir, delete, failed look:
					 * NONE for none */
	int64_t dstat;                  /* a stat that found a directory */
	uint8_t strong;                 /* really read, not probed */
};

struct pathent {
	const char *path;
	struct touch *t;
	size_t n, cap;
};

struct pathtab {
	struct pathent *e;
	size_t n, cap;                  /* cap: a power of two */
};

static size_t ptr_hash(const void *p)
{
	return (size_t)(((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ull);
}

static struct pathent *path_get(struct pathtab *pt, const char *path)
{
	size_t h, i;

	if (2 * (pt->n + 1) > pt->cap) {
		struct pathtab nt = { NULL, 0, pt->cap ? 2 * pt->cap : 4096 };

		nt.e = pt_xcalloc(nt.cap, sizeof *nt.e);
		for (i = 0; i < pt->cap; i++)
			if (pt->e[i].path) {
				for (h = ptr_hash(pt->e[i].path) & (nt.cap - 1);
				     nt.e[h].path; h = (h + 1) & (nt.cap - 1))
					;
				nt.e[h] = pt->e[i];
			}
		nt.n = pt->n;
		free(pt->e);
		*pt = nt;
	}
	for (h = ptr_hash(path) & (pt->cap - 1); pt->e[h].path;
	     h = (h + 1) & (pt->cap - 1))
		if (pt->e[h].path == path)
			return &pt->e[h];
	pt->e[h].path = path;
	pt->n++;
	return &pt->e[h];
}

static void touch(struct pathtab *pt, const char *path, uint32_t job,
		  int64_t t, int kind)
{
	struct pathent *pe;
	struct touch *x;

	/* Devices and the kernel's files carry no build's data. */
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
	    !strncmp(path, "/sys/", 5) || !strcmp(path, "/dev"))
		return;
	pe = path_get(pt, path);
	/* Jobs are gathered one after the other: the job's is last. */
	if (!pe->n || pe->t[pe->n - 1].job != job) {
		if (pe->n == pe->cap) {
			pe->cap = pe->cap ? 2 * pe->cap : 4;
			pe->t = pt_xrealloc(pe->t, pe->cap * sizeof *pe->t);
		}
		pe->t[pe->n++] = (struct touch){ job, NONE, NONE, NONE, NONE,
						 NONE, NONE, 0 };
	}
	x = &pe->t[pe->n - 1];
	switch (kind) {
	case 'x':                       /* executed */
	case 'r':
		x->strong = 1;
		/* fall through */
	case 'p':
		if (t < x->r)
			x->r = t;
		break;
	case 'w':
	case 'n':
		if (t < x->w)
			x->w = t;
		break;
	case 'k':
		if (t < x->k)
			x->k = t;
		break;
	case 'd':
		if (t < x->del)
			x->del = t;
		break;
	case 'm':
		if (t < x->miss)
			x->miss = t;
		break;
	case 's':
		/* a directory found: mkdir -p, install -d, test -d look
		 * for it and would make it themselves */
		if (t < x->dstat)
			x->dstat = t;
		break;
	}
}

static void gather(const struct pt_model *m, struct pathtab *pt,
		   const struct own *o, uint32_t job)
{
	size_t k, n, i;

	for (k = 0; k < o->n; k++) {
		const struct pt_exec *e = o->e[k];
		const struct pt_file_access *a;

		if (e->type == PT_EXEC_EXEC && e->exe[0] == '/' &&
		    !(e->flags & PT_EXF_UNTRACED))
			touch(pt, e->exe, job, e->start_ns, 'x');
		a = pt_model_files(m, e, &n);
		for (i = 0; i < n; i++)
			touch(pt, a[i].path, job, a[i].time_ns, a[i].kind);
	}
}

/* Directories made, by name (their paths' strings, not pointers). */
struct dirtab {
	struct pathent **e;
	size_t cap;
};

static struct pathent *dir_find(const struct dirtab *dt, const char *s,
				size_t n)
{
	size_t h;

	if (!dt->cap)
		return NULL;
	for (h = pt_hash_bytes(s, n) & (dt->cap - 1); dt->e[h];
	     h = (h + 1) & (dt->cap - 1))
		if (!strncmp(dt->e[h]->path, s, n) && !dt->e[h]->path[n])
			return dt->e[h];
	return NULL;
}

static int64_t wmin(const struct touch *t)
{
	return t->w < t->k ? t->w : t->k;
}

/* Written, then removed by the same job: its temporary file. */
static int temporary(const struct touch *t)
{
	return t->del != NONE && t->del > wmin(t);
}

/* ---- pairs of jobs: edges, races, memo ---- */

struct pairtab {                        /* (x, y) -> value + 1 */
	uint64_t *key;
	size_t *val;
	size_t n, cap;
};

static size_t *pair_slot(struct pairtab *p, size_t x, size_t y)
{
	uint64_t k = (uint64_t)x << 32 | (uint32_t)y;
	size_t h, i;

	if (2 * (p->n + 1) > p->cap) {
		struct pairtab q = { NULL, NULL, p->n, p->cap ? 2 * p->cap : 1024 };

		q.key = pt_xmalloc(q.cap * sizeof *q.key);
		q.val = pt_xcalloc(q.cap, sizeof *q.val);
		for (i = 0; i < p->cap; i++)
			if (p->val[i]) {
				for (h = ptr_hash((void *)(uintptr_t)(p->key[i] << 3)) &
					 (q.cap - 1);
				     q.val[h]; h = (h + 1) & (q.cap - 1))
					;
				q.key[h] = p->key[i];
				q.val[h] = p->val[i];
			}
		free(p->key);
		free(p->val);
		*p = q;
	}
	for (h = ptr_hash((void *)(uintptr_t)(k << 3)) & (p->cap - 1);
	     p->val[h]; h = (h + 1) & (p->cap - 1))
		if (p->key[h] == k)
			return &p->val[h];
	p->key[h] = k;
	p->n++;
	return &p->val[h];              /* 0: new */
}

static void pairtab_free(struct pairtab *p)
{
	free(p->key);
	free(p->val);
}

struct state {
	struct pt_deps *d;
	struct pairtab edges, races, memo;
	size_t cedge, crace;
	const uint8_t *container;       /* per job: it holds a tool */
	const struct own *own;          /* each job's executions, */
	const size_t *perm;             /* at own[perm[job]] */
};

static int is_ordered(struct state *st, size_t x, size_t y)
{
	size_t *v = pair_slot(&st->memo, x < y ? x : y, x < y ? y : x);

	if (!*v)
		*v = (size_t)ordered(st->d, x, y) + 1;
	return (int)*v - 1;
}

static const char *rel(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strncmp(path, dir, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

/* What to add where, in one sentence. */
/*
 * Another target of the rule that makes target a, when the race is
 * theirs: with b, b itself (two jobs of one rule wrote one file); else
 * the target named path (the file a wrote was another target of its
 * rule, which a reader got from a's job).  One rule: the same recipe
 * at the same line (an explicit rule with several targets, as
 * `parse.c parse.h: parse.y` for a parser generator; a pattern rule's
 * recipes differ by target).  -1: none.
 */
static long one_rule(const struct pt_makedb *db, const char *a, const char *b,
		     const char *path)
{
	long ta = pt_makedb_find(db, a), tb = b ? pt_makedb_find(db, b) :
					  pt_makedb_find(db, path);
	const struct pt_makedb_target *x, *y;
	size_t k;

	if (ta < 0 || tb < 0 || ta == tb)
		return -1;
	x = &db->t[ta];
	y = &db->t[tb];
	if (x->grouped || !x->where || !y->where || strcmp(x->where, y->where) ||
	    x->nrecipe != y->nrecipe || !x->nrecipe)
		return -1;
	for (k = 0; k < x->nrecipe; k++)
		if (strcmp(x->recipe[k], y->recipe[k]))
			return -1;
	return tb;
}

static char *fix_text(const struct pt_deps *d, const struct lca *l,
		      const char *path, int kind, size_t x, size_t y)
{
	struct pt_sb sb = PT_SB_INIT;
	const struct pt_deps_scope *s = &d->scope[l->scope];
	const struct pt_deps_job *a = &d->job[l->ux], *b = &d->job[l->uy];

	if (l->ux == l->uy) {
		const struct pt_deps_scope *sx = &d->scope[l->sx];
		const struct pt_deps_scope *sy = &d->scope[l->sy];

		pt_sb_addf(&sb, "one job runs the %s in %s and the %s in %s "
			   "at the same time: run the first before the second",
			   pt_exec_prog(sx->e), sx->e->cwd,
			   pt_exec_prog(sy->e), sy->e->cwd);
		if (a->target)
			pt_sb_addf(&sb, " (recipe of %s%s%s)", a->target,
				   a->where ? ", " : "",
				   a->where ? a->where : "");
	} else if (s->kind == PT_DEPS_NINJA && s->db && b->target) {
		const char *r = rel(path, s->db->dir);

		if (kind == PT_DEPS_WAW)
			pt_sb_addf(&sb, "two edges write %s: leave it to one, or "
				   "order them (build.ninja)", r);
		else if (kind == PT_DEPS_DIR)
			pt_sb_addf(&sb, "the edge of %s creates a file in a "
				   "directory another edge makes: add it as an "
				   "order-only input (build %s: ... || DIR) "
				   "(build.ninja)", b->target, b->target);
		else
			pt_sb_addf(&sb, "add %s as an input of %s, order-only "
				   "if it is a header (build %s: ... || %s) "
				   "(build.ninja)", r, b->target, b->target, r);
	} else if (s->kind == PT_DEPS_MAKE && s->db && a->target &&
		   b->target) {
		const char *r = rel(path, s->db->dir);
		const char *wh = b->where ? b->where : "its makefile";

		long tr = one_rule(s->db, a->target, kind == PT_DEPS_WAW ?
				   b->target : NULL, path);

		if (kind == PT_DEPS_RULE && tr < 0) {
			long t = pt_makedb_find(s->db, path);
			const char *tw = t >= 0 && s->db->t[t].where ?
					 s->db->t[t].where : "its makefile";

			pt_sb_addf(&sb, "%s has a rule of its own (%s), which %s "
				   "waits for, but the recipe of %s made it: in "
				   "parallel make runs both; add %s as a "
				   "prerequisite of %s, or leave %s to one rule",
				   r, tw, b->target, a->target, a->target, r, r);
		} else if (tr >= 0) {
			pt_sb_addf(&sb, "%s and %s are made by one rule (%s) that "
				   "make runs once for each: make them a grouped "
				   "target (%s %s &: ...), or one a prerequisite "
				   "of the other with the recipe on the first",
				   a->target, s->db->t[tr].name,
				   a->where ? a->where : "its makefile",
				   a->target, s->db->t[tr].name);
		} else if (kind == PT_DEPS_DIR) {
			const char *sl = strrchr(r, '/');
			size_t dl = sl ? (size_t)(sl - r) : 0;

			if (!dl && r == path) {
				sl = strrchr(path, '/');
				dl = (size_t)(sl - path);
			}
			pt_sb_addf(&sb, "add %.*s as an order-only prerequisite "
				   "of %s (%s: | %.*s) (%s)", (int)dl, r,
				   b->target, b->target, (int)dl, r, wh);
		} else if (kind == PT_DEPS_WAW)
			pt_sb_addf(&sb, "%s and %s both write %s: add %s as a "
				   "prerequisite of %s, or leave %s to one "
				   "rule (%s)", a->target, b->target, r,
				   a->target, b->target, r, wh);
		else if (pt_makedb_find(s->db, path) >= 0 && strcmp(r, path))
			pt_sb_addf(&sb, "add %s as a prerequisite of %s (%s)",
				   r, b->target, wh);
		else
			pt_sb_addf(&sb, "add %s as a prerequisite of %s (%s)",
				   a->target, b->target, wh);
	} else if (s->kind == PT_DEPS_OPAM && s->db && a->target &&
		   b->target) {
		int nl = (int)strcspn(a->target, ".");

		if (kind == PT_DEPS_WAW)
			pt_sb_addf(&sb, "%s and %s both write %s: leave it to "
				   "one package, or add \"%.*s\" to the "
				   "depends of %s (%s)", a->target, b->target,
				   path, nl, a->target, b->target,
				   b->where ? b->where : "its opam file");
		else
			pt_sb_addf(&sb, "add \"%.*s\" to the depends of %s "
				   "(%s)", nl, a->target, b->target,
				   b->where ? b->where : "its opam file");
	} else if (s->kind == PT_DEPS_MAKE || s->kind == PT_DEPS_NINJA ||
		   s->kind == PT_DEPS_OPAM) {
		pt_sb_addf(&sb, "%s in %s ran the two at the same time: "
			   "declare that the second needs %s",
			   pt_exec_prog(s->e), s->e->cwd, path);
	} else
		pt_sb_addf(&sb, "the two ran at the same time: let %s wait "
			   "for the first",
			   s->e ? "the script" : "the second");
	(void)x;
	(void)y;
	return pt_sb_detach(&sb, NULL);
}

static void add_edge(struct state *st, size_t x, size_t y, const char *path)
{
	struct pt_deps *d = st->d;
	size_t *v;

	if (x >= y)
		return;         /* start order: the graph has no cycle */
	v = pair_slot(&st->edges, x, y);
	if (*v) {
		struct pt_deps_edge *e = &d->edge[*v - 1];

		e->npaths++;
		if (strcmp(path, e->path) < 0)
			e->path = path;
		return;
	}
	if (d->nedges == st->cedge) {
		st->cedge = st->cedge ? 2 * st->cedge : 256;
		d->edge = pt_xrealloc(d->edge, st->cedge * sizeof *d->edge);
	}
	d->edge[d->nedges] = (struct pt_deps_edge){ x, y, path, 1 };
	*v = ++d->nedges;
}

/*
 * Would a serial run of scope's tool run job a before job b?  For make,
 * where one target lists both as prerequisites, in that list's order
 * (what make -j1 does); else, or when none does, in the order they
 * started, which for two jobs started together is chance.
 */
static int serially_first(const struct pt_deps *d, size_t scope, size_t a,
			  size_t b)
{
	const struct pt_deps_scope *s = &d->scope[scope];
	const struct pt_deps_job *ja = &d->job[a], *jb = &d->job[b];
	long ta, tb;
	size_t i, k;

	if (s->kind == PT_DEPS_MAKE && s->db && ja->target && jb->target &&
	    (ta = pt_makedb_find(s->db, ja->target)) >= 0 &&
	    (tb = pt_makedb_find(s->db, jb->target)) >= 0)
		for (i = 0; i < s->db->n; i++) {
			const struct pt_makedb_target *t = &s->db->t[i];
			int at = -1, bt = -1;

			for (k = 0; k < t->npre; k++) {
				if (t->pre[k] == (uint32_t)ta && at < 0)
					at = (int)k;
				if (t->pre[k] == (uint32_t)tb && bt < 0)
					bt = (int)k;
			}
			if (at >= 0 && bt >= 0)
				return at < bt;
		}
	return a <= b;
}

/*
 * The job to order before y in x's stead: where y's recipe runs a make
 * of the same directory for a goal that needs x's target (a man page's
 * rule running `$(MAKE) prog`), that goal's job, whose one prerequisite
 * orders all its own; else x.
 */
static size_t via_goal(const struct state *st, size_t x, size_t y)
{
	const struct pt_deps *d = st->d;
	struct lca l;
	const struct pt_deps_scope *s;
	const struct own *o;
	long ta;
	size_t k, n, g, j, found = x;

	lca_of(d, x, y, &l);
	s = &d->scope[l.scope];
	if (!s->db || l.ux == l.uy || !d->job[l.ux].target ||
	    (ta = pt_makedb_find(s->db, d->job[l.ux].target)) < 0)
		return x;
	/* its makes: those that ran jobs are scopes, the others its own */
	o = &st->own[st->perm[l.uy]];
	for (k = 0; k < d->nscopes + o->n && found == x; k++) {
		const struct pt_exec *e;
		char *goal[16], *dir;

		if (k < d->nscopes) {
			if (d->scope[k].parent_job != l.uy ||
			    d->scope[k].kind != PT_DEPS_MAKE || !d->scope[k].e)
				continue;
			e = d->scope[k].e;
		} else {
			e = o->e[k - d->nscopes];
			if (strcmp(pt_exec_prog(e), "make") &&
			    strcmp(pt_exec_prog(e), "gmake") &&
			    !pt_makedb_script(e->exe))
				continue;
		}
		n = pt_makedb_goals(e, goal, 16, &dir);
		for (g = 0; g < n; g++) {
			char *path = pt_makedb_join(dir, goal[g]);
			long tg = pt_makedb_find(s->db, path);

			free(path);
			if (found != x || tg < 0 ||
			    !pt_makedb_reaches(s->db, (size_t)ta, (size_t)tg))
				continue;
			for (j = 0; j < d->njobs; j++)
				if (d->job[j].scope == l.scope && j != l.uy &&
				    d->job[j].target &&
				    pt_makedb_find(s->db, d->job[j].target) == tg) {
					found = j;
					break;
				}
		}
		for (g = 0; g < n; g++)
			free(goal[g]);
		free(dir);
	}
	return found;
}

/* A file dependency from x to y (x first): an edge, and a race when the
 * declared order does not imply it. */
static void depend(struct state *st, size_t x, size_t y, const char *path,
		   int kind, int edge)
{
	struct pt_deps *d = st->d;
	struct lca l;
	size_t *v;

	if (edge)
		add_edge(st, x, y, path);
	if (kind != PT_DEPS_RULE)
		x = via_goal(st, x, y);
	if (kind != PT_DEPS_RULE && is_ordered(st, x, y))
		return;
	lca_of(d, x, y, &l);
	v = pair_slot(&st->races, l.ux < l.uy ? l.ux : l.uy,
		      l.ux < l.uy ? l.uy : l.ux);
	if (*v) {
		struct pt_deps_race *r = &d->race[*v - 1];

		r->npaths++;
		/* shown, by rank: two jobs that hold no tool (the compiles,
		 * not the sub-makes that probed their output); the two
		 * jobs of the common tool in the order a serial run takes
		 * them (serially_first: the fix then puts the first before
		 * the second); the
		 * strongest kind; the first path in order */
		{
			struct lca o;
			int kx = !st->container[x] + !st->container[y];
			int ko = !st->container[r->writer] +
				 !st->container[r->reader];
			int fx = serially_first(d, l.scope, l.ux, l.uy), fo;

			lca_of(d, r->writer, r->reader, &o);
			fo = serially_first(d, o.scope, o.ux, o.uy);
			/* a rule that did not run first: its fix is the
			 * one that holds */
			if ((kind == PT_DEPS_RULE) != (r->kind == PT_DEPS_RULE) ?
			    kind == PT_DEPS_RULE :
			    kx != ko ? kx > ko : fx != fo ? fx > fo :
			    (kind == PT_DEPS_RAW) != (r->kind == PT_DEPS_RAW) ?
			    kind == PT_DEPS_RAW :
			    kind == r->kind && strcmp(path, r->path) < 0) {
				r->kind = kind;
				r->path = path;
				r->writer = x;
				r->reader = y;
			}
		}
		return;
	}
	if (d->nrace == st->crace) {
		st->crace = st->crace ? 2 * st->crace : 16;
		d->race = pt_xrealloc(d->race, st->crace * sizeof *d->race);
	}
	d->race[d->nrace] = (struct pt_deps_race){ path, x, y, kind, 1, NULL };
	*v = ++d->nrace;
}

/*
 * A file written by job x that a make above it has a rule of its own
 * for, a rule that did not run in that make (the file was there by the
 * time make came to it, made by another of its recipes, often through a
 * sub-make: two rules run `$(MAKE) -C dir`).  In parallel make comes to
 * the rule before the file is there and runs both recipes at once.  A
 * race unless the rule waits for the recipe that made the file; it is
 * paired with the make's first job that needs the target.  ran[s]: the
 * targets of scope s's make that ran a recipe.
 */
static void rule_deps(struct state *st, struct pathent *pe, uint8_t **ran)
{
	struct pt_deps *d = st->d;
	size_t a, i, k, y;

	for (a = 0; a < pe->n; a++) {
		const struct touch *w = &pe->t[a];
		struct chain c;

		if (w->w == NONE || temporary(w))
			continue;
		chain_of(d, w->job, &c);
		for (i = 0; i < c.n; i++) {
			const struct pt_deps_scope *s = &d->scope[c.scope[i]];
			const struct pt_deps_job *u = &d->job[c.job[i]];
			long t, tu;

			if (s->kind != PT_DEPS_MAKE || !s->db || !ran[c.scope[i]] ||
			    s->notparallel || !u->target ||
			    (t = pt_makedb_find(s->db, pe->path)) < 0 ||
			    !s->db->t[t].nrecipe || s->db->t[t].phony ||
			    ran[c.scope[i]][t] ||
			    (tu = pt_makedb_find(s->db, u->target)) < 0 ||
			    tu == t ||
			    pt_makedb_reaches(s->db, (size_t)tu, (size_t)t) ||
			    pt_makedb_reaches(s->db, (size_t)t, (size_t)tu))
				continue;
			for (k = 0; k < s->db->t[tu].npre; k++)
				if (s->db->t[tu].pre[k] == (uint32_t)t)
					break;          /* a grouped target */
			if (k < s->db->t[tu].npre)
				continue;
			for (y = 0; y < d->njobs; y++) {
				long ty;

				if (d->job[y].scope != c.scope[i] ||
				    y == c.job[i] || !d->job[y].target ||
				    (ty = pt_makedb_find(s->db,
							 d->job[y].target)) < 0 ||
				    !pt_makedb_reaches(s->db, (size_t)t,
						       (size_t)ty))
					continue;
				depend(st, w->job, y, pe->path, PT_DEPS_RULE, 0);
				break;
			}
		}
	}
}

static void path_deps(struct state *st, struct pathent *pe,
		      const struct dirtab *dt)
{
	size_t a, b, pairs = 0;

	for (a = 0; a < pe->n && pairs < PAIRS_PER_PATH; a++) {
		const struct touch *w = &pe->t[a];
		int64_t wt = wmin(w);

		if (wt == NONE || temporary(w))
			continue;
		for (b = 0; b < pe->n && pairs < PAIRS_PER_PATH; b++) {
			const struct touch *r = &pe->t[b];

			if (b == a || temporary(r))
				continue;
			pairs++;
			if (r->r != NONE && wt < r->r && r->r < wmin(r))
				depend(st, w->job, r->job, pe->path,
				       PT_DEPS_RAW, 1);
			else if (r->r != NONE && wt < r->r && wmin(r) == NONE)
				depend(st, w->job, r->job, pe->path,
				       PT_DEPS_RAW, 1);
			else if (r->strong && r->r < wt && wmin(r) == NONE &&
				 wt < NONE)
				/* read before the other wrote it: the old
				 * contents, or the new ones in another order */
				depend(st, w->job, r->job, pe->path,
				       PT_DEPS_RAW, 0);
			if (w->w != NONE && r->w != NONE && w->w < r->w)
				depend(st, w->job, r->job, pe->path,
				       PT_DEPS_WAW, 1);
			if (r->miss != NONE && r->miss < wt && wmin(r) == NONE)
				/* the maker first: it is what the looker
				 * needs before it */
				depend(st, w->job, r->job, pe->path,
				       PT_DEPS_MISSING, 0);
		}
	}
	/* Made in a directory another job made. */
	if (dt->cap) {
		const char *sl = strrchr(pe->path, '/');
		struct pathent *de;

		if (!sl || sl == pe->path ||
		    !(de = dir_find(dt, pe->path, (size_t)(sl - pe->path))))
			return;
		for (a = 0; a < de->n; a++) {
			const struct touch *mk = &de->t[a];

			if (mk->k == NONE)
				continue;
			for (b = 0; b < pe->n; b++) {
				const struct touch *f = &pe->t[b];
				size_t q;
				int own = 0;

				if (f->job == mk->job || wmin(f) == NONE ||
				    wmin(f) < mk->k)
					continue;
				for (q = 0; q < de->n; q++)
					if (de->t[q].job == f->job &&
					    (de->t[q].k != NONE ||
					     de->t[q].miss != NONE ||
					     de->t[q].dstat != NONE))
						own = 1;        /* mkdir -p */
				if (!own)
					depend(st, mk->job, f->job, pe->path,
					       PT_DEPS_DIR, 1);
			}
		}
	}
}

static int cmp_u64(const void *x, const void *y)
{
	const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int cmp_ser(const void *x, const void *y)
{
	const struct pt_deps_ser *a = x, *b = y;

	if (a->gain_ns != b->gain_ns)
		return a->gain_ns > b->gain_ns ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int cmp_race(const void *x, const void *y)
{
	const struct pt_deps_race *a = x, *b = y;

	if (a->writer != b->writer)
		return a->writer < b->writer ? -1 : 1;
	if (a->reader != b->reader)
		return a->reader < b->reader ? -1 : 1;
	return strcmp(a->path, b->path);
}

static int cmp_edge_s(const void *x, const void *y)
{
	const struct pt_deps_edge *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->to < b->to ? -1 : a->to > b->to;
}

/* Where the order across a cut is declared, in one sentence. */
static char *ser_why(struct pt_deps *d, size_t x, size_t y)
{
	struct pt_sb sb = PT_SB_INIT;
	struct lca l;
	const struct pt_deps_scope *s;
	const struct pt_deps_job *a, *b;

	lca_of(d, x, y, &l);
	s = &d->scope[l.scope];
	a = &d->job[l.ux];
	b = &d->job[l.uy];
	if (l.ux == l.uy && l.sx != SIZE_MAX && l.sy != SIZE_MAX) {
		const struct pt_deps_scope *sx = &d->scope[l.sx];
		const struct pt_deps_scope *sy = &d->scope[l.sy];

		pt_sb_addf(&sb, "one job runs the %s in %s, then the %s in %s",
			   pt_exec_prog(sx->e),
			   sx->db ? sx->db->dir : sx->e->cwd,
			   pt_exec_prog(sy->e),
			   sy->db ? sy->db->dir : sy->e->cwd);
		if (a->target)
			pt_sb_addf(&sb, " (recipe of %s%s%s)", a->target,
				   a->where ? ", " : "", a->where ? a->where : "");
	} else if (l.ux == l.uy) {
		pt_sb_addstr(&sb, "one job runs both");
	} else if (s->kind == PT_DEPS_MAKE && s->notparallel) {
		pt_sb_addf(&sb, ".NOTPARALLEL (make in %s)",
			   s->db ? s->db->dir : s->e->cwd);
	} else if (s->kind == PT_DEPS_OPAM && s->db && a->target &&
		   b->target &&
		   pt_makedb_reaches(s->db,
				     (size_t)pt_makedb_find(s->db, a->target),
				     (size_t)pt_makedb_find(s->db, b->target))) {
		pt_sb_addf(&sb, "%.*s depends on \"%.*s\" (%s)",
			   (int)strcspn(b->target, " "), b->target,
			   (int)strcspn(a->target, "."), a->target,
			   b->where ? b->where : "its opam file");
	} else if (s->kind == PT_DEPS_MAKE && s->db && a->target &&
		   b->target &&
		   pt_makedb_reaches(s->db,
				     (size_t)pt_makedb_find(s->db, a->target),
				     (size_t)pt_makedb_find(s->db, b->target))) {
		pt_sb_addf(&sb, "%s depends on %s (%s)", b->target, a->target,
			   b->where ? b->where : s->db->dir);
	} else if (s->kind == PT_DEPS_SEQ && s->e) {
		struct pt_sb c = PT_SB_INIT;

		pt_exec_quote(s->e, &c);
		pt_sb_addf(&sb, "the script %s runs them one after the other",
			   c.buf ? c.buf : pt_exec_prog(s->e));
		pt_sb_release(&c);
	} else {
		/* A tool's own choice (make -j1, a jobserver's slots, the
		 * capture's roots): nothing declared to change. */
		pt_sb_release(&sb);
		return NULL;
	}
	return pt_sb_detach(&sb, NULL);
}

/* Edges of the schedule's graph: the file dependencies, and with cuts,
 * each job before a cut to its barrier node (n + c), the barrier to each
 * job after it; cut `skip` left out. */
static size_t cut_edges(const struct pt_deps *d, const size_t *seg,
			size_t ncuts, size_t skip, uint64_t **out)
{
	size_t n = d->njobs, i, ne = 0;
	uint64_t *e = pt_xmalloc((d->nedges + d->nheld + 2 * n + 1) *
				 sizeof *e);

	for (i = 0; i < d->nedges; i++)
		e[ne++] = (uint64_t)d->edge[i].from << 32 | d->edge[i].to;
	for (i = 0; i < d->nheld; i++)
		e[ne++] = d->held[i];
	for (i = 0; i < n && ncuts; i++) {
		size_t s = seg[i], after, before;

		if (s == SIZE_MAX)
			continue;
		/* the barrier after segment s: cut s, or s + 1 if skipped */
		after = s == skip ? s + 1 : s;
		if (after < ncuts)
			e[ne++] = (uint64_t)i << 32 | (n + after);
		if (s) {
			before = s - 1;
			if (before == skip)
				before = s >= 2 ? s - 2 : SIZE_MAX;
			if (before != SIZE_MAX)
				e[ne++] = (uint64_t)(n + before) << 32 | i;
		}
	}
	*out = e;
	return ne;
}

static int64_t makespan(const struct pt_deps *d, const int64_t *dur0,
			const size_t *seg, size_t ncuts, size_t skip,
			size_t cpus)
{
	size_t n = d->njobs + ncuts;
	uint64_t *e;
	size_t ne = cut_edges(d, seg, ncuts, skip, &e);
	struct pt_depsched_graph g;
	int64_t *dur = pt_xcalloc(n + 1, sizeof *dur);
	int64_t *lv = pt_xcalloc(n + 1, sizeof *lv), span;

	memcpy(dur, dur0, d->njobs * sizeof *dur);
	pt_depsched_graph_make(&g, n, e, ne);
	pt_depsched_levels(&g, dur, lv);
	span = pt_depsched_schedule(&g, dur, lv, cpus, d->njobs, NULL, NULL);
	pt_depsched_graph_free(&g);
	free(e);
	free(dur);
	free(lv);
	return span;
}

/* Is there a path from a to b (a < b) in g? */
static int reaches(const struct pt_depsched_graph *g, size_t a, size_t b, uint8_t *seen,
		   uint32_t *stack)
{
	size_t sp = 0, k;

	if (a >= b)
		return 0;
	memset(seen, 0, g->n);
	stack[sp++] = (uint32_t)a;
	seen[a] = 1;
	while (sp) {
		uint32_t j = stack[--sp];

		for (k = g->succ_first[j]; k < g->succ_first[j + 1]; k++) {
			uint32_t s = g->succ[k];

			if (s == b)
				return 1;
			if (s < b && !seen[s]) {
				seen[s] = 1;
				stack[sp++] = s;
			}
		}
	}
	return 0;
}

/*
 * A cut that the jobs right after it would wait at anyway, each needing
 * the job before it through its files (a package's install after its
 * build, a link after the last compile), is no order of the build's
 * making: its two segments become one, so that the cut before them
 * weighs what it holds.  Segments of more than 64 jobs are not looked
 * at.  Returns the cuts left; seg and lastof renumbered.
 */
static size_t merge_cuts(const struct pt_depsched_graph *g, size_t *seg,
			 size_t nj, size_t *lastof, size_t ncuts, uint8_t *seen,
			 uint32_t *stack)
{
	size_t *to = pt_xmalloc((ncuts + 2) * sizeof *to), *cnt, i, k, n = 0;

	cnt = pt_xcalloc(ncuts + 2, sizeof *cnt);
	for (i = 0; i < nj; i++)
		if (seg[i] != SIZE_MAX)
			cnt[seg[i]]++;
	to[0] = 0;
	for (k = 0; k < ncuts; k++) {
		int held = cnt[k + 1] > 0 && cnt[k + 1] <= 64;

		for (i = 0; i < nj && held; i++)
			if (seg[i] == k + 1 &&
			    !reaches(g, lastof[k], i, seen, stack))
				held = 0;
		if (!held)
			lastof[n++] = lastof[k];
		to[k + 1] = n;
	}
	for (i = 0; i < nj; i++)
		if (seg[i] != SIZE_MAX)
			seg[i] = to[seg[i]];
	free(to);
	free(cnt);
	return n;
}

/*
 * opam's packages that waited for one they read nothing of: a job of an
 * opam scope that started after the last of its declared dependencies
 * ended, that one reaching it through no file.  The cuts name such a
 * wait where nothing else ran; this names it also where other packages
 * ran (opam -j).  Its gain is how long the job waited past its tool's
 * first package job and the dependencies it does read.
 */
static void opam_waits(struct pt_deps *d, const struct pt_depsched_graph *g,
		       int64_t thr, uint8_t *seen, uint32_t *stack)
{
	size_t n = d->njobs, i, k, *last = pt_xmalloc((n + 1) * sizeof *last);
	int64_t *ready = pt_xmalloc((n + 1) * sizeof *ready);
	int64_t *first = pt_xmalloc((d->nscopes + 1) * sizeof *first);

	for (i = 0; i < d->nscopes; i++)
		first[i] = INT64_MAX;
	for (i = 0; i < n; i++) {
		const struct pt_deps_job *j = &d->job[i];

		last[i] = SIZE_MAX;
		if (j->target && j->start_ns < first[j->scope])
			first[j->scope] = j->start_ns;
	}
	for (i = 0; i < n; i++)
		ready[i] = first[d->job[i].scope];
	for (k = 0; k < d->ndecl; k++) {
		size_t x = (size_t)(d->decl[k] >> 32), y = (size_t)(uint32_t)d->decl[k];

		if (d->decl_tool[k] != 1 ||
		    d->scope[d->job[y].scope].kind != PT_DEPS_OPAM)
			continue;
		if (last[y] == SIZE_MAX || d->job[x].end_ns > d->job[last[y]].end_ns)
			last[y] = x;
	}
	for (k = 0; k < d->ndecl; k++) {
		size_t x = (size_t)(d->decl[k] >> 32), y = (size_t)(uint32_t)d->decl[k];

		if (d->decl_tool[k] == 1 && last[y] != SIZE_MAX && x != last[y] &&
		    d->job[x].end_ns > ready[y] && reaches(g, x, y, seen, stack))
			ready[y] = d->job[x].end_ns;
	}
	for (i = 0; i < n; i++) {
		size_t x = last[i];
		int64_t gain;
		char *why;

		if (x == SIZE_MAX || d->job[i].start_ns < d->job[x].end_ns ||
		    (gain = d->job[i].start_ns - ready[i]) < thr ||
		    reaches(g, x, i, seen, stack))
			continue;
		for (k = 0; k < d->nser; k++)
			if (d->ser[k].first == x && d->ser[k].then == i)
				break;
		if (k < d->nser || !(why = ser_why(d, x, i)))
			continue;
		d->ser = pt_xrealloc(d->ser, (d->nser + 1) * sizeof *d->ser);
		d->ser[d->nser++] = (struct pt_deps_ser){ x, i, gain, why };
	}
	free(last);
	free(ready);
	free(first);
}

static int has_nested(const struct pt_deps *d, size_t j)
{
	size_t s;

	for (s = 1; s < d->nscopes; s++)
		if (d->scope[s].parent_job == j)
			return 1;
	return 0;
}

static int cmp_perm(const void *x, const void *y, void *ctx)
{
	const struct pt_deps_job *j = ctx;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	if (j[a].start_ns != j[b].start_ns)
		return j[a].start_ns < j[b].start_ns ? -1 : 1;
	if (j[a].e->id != j[b].e->id)
		return j[a].e->id < j[b].e->id ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* ---- the declared order as edges ---- */

static void add_decl(struct pt_deps *d, size_t *cap, size_t x, size_t y,
		     int tool)
{
	if (d->ndecl == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		d->decl = pt_xrealloc(d->decl, *cap * sizeof *d->decl);
		d->decl_tool = pt_xrealloc(d->decl_tool, *cap);
	}
	d->decl_tool[d->ndecl] = (uint8_t)tool;
	d->decl[d->ndecl++] = (uint64_t)x << 32 | y;
}

/* A declared order the run kept (a database read after the build may
 * not be the one it ran with); the clocks of two processes: a
 * millisecond's slack. */
static int ended_before(const struct pt_deps *d, size_t x, size_t y)
{
	return d->job[x].end_ns <= d->job[y].start_ns + 1000000;
}

static int cmp_end(const void *x, const void *y, void *ctx)
{
	const struct pt_deps_job *j = ctx;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	if (j[a].end_ns != j[b].end_ns)
		return j[a].end_ns < j[b].end_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The order jobs js[0..k) (by start) ran in: x before y when x ended
 * before y started, only the nearest such x of each y (the rest follow
 * through it).  With known (or NULL), only pairs one of which it does
 * not mark. */
static void run_order(struct pt_deps *d, size_t *cap, const size_t *js,
		      size_t k, const uint8_t *known)
{
	size_t *by_end = pt_xmalloc((k ? k : 1) * sizeof *by_end), i, lo, hi;

	memcpy(by_end, js, k * sizeof *by_end);
	qsort_r(by_end, k, sizeof *by_end, cmp_end, d->job);
	for (i = 0; i < k; i++) {
		const struct pt_deps_job *y = &d->job[js[i]];
		int64_t latest = INT64_MIN;

		/* the jobs that ended before y started: by_end[0..lo) */
		for (lo = 0, hi = k; lo < hi;) {
			size_t mid = (lo + hi) / 2;

			if (d->job[by_end[mid]].end_ns <= y->start_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* x is nearest when no other of them started after x ended */
		while (lo--) {
			const struct pt_deps_job *x = &d->job[by_end[lo]];

			if (x->end_ns <= latest)
				break;
			if (by_end[lo] < js[i] &&
			    (!known || !known[by_end[lo]] || !known[js[i]]))
				add_decl(d, cap, by_end[lo], js[i], 0);
			if (x->start_ns > latest)
				latest = x->start_ns;
		}
	}
	free(by_end);
}

/*
 * Mark the jobs of db's make that a goal wants: a target without a
 * recipe that nothing depends on (all, install) reaches them through
 * targets without recipes alone.  jobof[t]: the job of target t where
 * stop[t].
 */
static void goal_wanted(struct pt_deps *d, const struct pt_makedb *db,
			const uint8_t *stop, const uint32_t *jobof)
{
	size_t n = db->n, i, k, *first = pt_xcalloc(n + 2, sizeof *first);
	uint32_t *up = NULL, *seen = pt_xcalloc(n + 1, sizeof *seen);
	uint32_t *stack = pt_xmalloc((n + 1) * sizeof *stack);

	for (i = 0; i < n; i++)
		for (k = 0; k < db->t[i].npre; k++)
			first[db->t[i].pre[k] + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	up = pt_xmalloc((first[n] + 1) * sizeof *up);
	{
		size_t *at = pt_xmalloc((n + 1) * sizeof *at);

		memcpy(at, first, (n + 1) * sizeof *at);
		for (i = 0; i < n; i++)
			for (k = 0; k < db->t[i].npre; k++)
				up[at[db->t[i].pre[k]]++] = (uint32_t)i;
		free(at);
	}
	for (i = 0; i < n; i++) {
		size_t sp = 0;
		int wanted = 0;

		if (!stop[i])
			continue;
		/* up from the job's target, through targets that ran no
		 * recipe, to one nothing depends on */
		for (k = first[i]; k < first[i + 1]; k++)
			if (!stop[up[k]] && seen[up[k]] != i + 1) {
				seen[up[k]] = (uint32_t)i + 1;
				stack[sp++] = up[k];
			}
		while (sp && !wanted) {
			uint32_t t = stack[--sp];

			if (first[t] == first[t + 1])
				wanted = 1;
			for (k = first[t]; k < first[t + 1]; k++)
				if (!stop[up[k]] && seen[up[k]] != i + 1) {
					seen[up[k]] = (uint32_t)i + 1;
					stack[sp++] = up[k];
				}
		}
		d->wanted[jobof[i]] = (uint8_t)wanted;
	}
	free(first);
	free(up);
	free(seen);
	free(stack);
}

/* The order each scope declared between its own jobs, as edges (from <<
 * 32 | to, from < to): make's and ninja's prerequisites where the
 * database names both targets, one job after the other under
 * .NOTPARALLEL; elsewhere (a script, the roots, a job whose target is
 * not known) the order they ran in. */
static void declared_edges(struct pt_deps *d)
{
	size_t *first = pt_xcalloc(d->nscopes + 1, sizeof *first);
	size_t *js = pt_xmalloc((d->njobs ? d->njobs : 1) * sizeof *js);
	uint8_t *known = pt_xcalloc(d->njobs ? d->njobs : 1, 1);
	size_t i, s, cap = 0;

	for (i = 0; i < d->njobs; i++)
		first[d->job[i].scope + 1]++;
	for (s = 0; s < d->nscopes; s++)
		first[s + 1] += first[s];
	{
		size_t *at = pt_xmalloc((d->nscopes + 1) * sizeof *at);

		memcpy(at, first, (d->nscopes + 1) * sizeof *at);
		for (i = 0; i < d->njobs; i++)
			js[at[d->job[i].scope]++] = i;
		free(at);
	}
	for (s = 0; s < d->nscopes; s++) {
		struct pt_makedb *db = d->scope[s].db;
		const size_t *sj = js + first[s];
		size_t k = first[s + 1] - first[s], q;

		if (db && d->scope[s].notparallel) {
			for (q = 1; q < k; q++)
				add_decl(d, &cap, sj[q - 1], sj[q], 1);
			continue;
		}
		if (db) {
			uint32_t *jobof = pt_xmalloc((db->n ? db->n : 1) *
						     sizeof *jobof);
			uint8_t *stop = pt_xcalloc(db->n ? db->n : 1, 1);
			uint32_t *near = pt_xmalloc((db->n ? db->n : 1) *
						    sizeof *near);

			for (q = 0; q < k; q++) {
				long t = d->job[sj[q]].target ?
					 pt_makedb_find(db, d->job[sj[q]].target) : -1;

				if (t < 0 || stop[t])
					continue;
				stop[t] = 1;
				jobof[t] = (uint32_t)sj[q];
				known[sj[q]] = 1;
			}
			for (q = 0; q < k; q++) {
				size_t y = sj[q], nn, c;
				long t;

				if (!known[y])
					continue;
				t = pt_makedb_find(db, d->job[y].target);
				nn = pt_makedb_nearest(db, (size_t)t, stop, near);
				for (c = 0; c < nn; c++)
					if (jobof[near[c]] < y &&
					    ended_before(d, jobof[near[c]], y))
						add_decl(d, &cap, jobof[near[c]], y,
							 1);
			}
			goal_wanted(d, db, stop, jobof);
			free(jobof);
			free(stop);
			free(near);
		}
		run_order(d, &cap, sj, k, db ? known : NULL);
	}
	free(first);
	free(js);
	free(known);
}

int pt_deps_build(const struct pt_model *m, struct pt_deps *d,
		  unsigned flags, const char **why)
{
	struct pt_depjobs b = { 0 };
	struct pathtab pt = { 0 };
	struct dirtab dt = { 0 };
	struct state st = { 0 };
	size_t i, k, *perm, *inv, nleaf = 0;
	int64_t *dur, *level, first = INT64_MAX, last = INT64_MIN;
	int64_t bstart = INT64_MAX, bend = INT64_MIN;
	uint8_t *container, **ran;
	const char *cpus;
	int conc = 0;
	struct pt_depsched_graph g;

	memset(d, 0, sizeof *d);
	d->accesses = pt_model_files_count(m, &d->dropped);
	if (!d->accesses && !(flags & PT_DEPS_ANY)) {
		*why = "the capture holds no file accesses: record it with "
		       "proftrace record --files";
		return -1;
	}
	if (m->ncaptures > 1) {
		*why = "deps reads one build: give it one capture (the "
		       "captures of several builds are no one schedule)";
		return -1;
	}
	pt_depjobs_build(&b, m, &bstart, &bend, &d->driver);
	if (!b.nj) {
		*why = "the capture has no execution";
		free(b.s);
		return -1;
	}
	/* Jobs by start: edges go forward only. */
	perm = pt_xmalloc(b.nj * sizeof *perm);
	inv = pt_xmalloc(b.nj * sizeof *inv);
	for (i = 0; i < b.nj; i++)
		perm[i] = i;
	qsort_r(perm, b.nj, sizeof *perm, cmp_perm, b.j);
	for (i = 0; i < b.nj; i++)
		inv[perm[i]] = i;
	d->njobs = b.nj;
	d->job = pt_xmalloc(b.nj * sizeof *d->job);
	for (i = 0; i < b.nj; i++)
		d->job[i] = b.j[perm[i]];
	for (i = 0; i < b.ns; i++)
		if (b.s[i].parent_job != SIZE_MAX)
			b.s[i].parent_job = inv[b.s[i].parent_job];
	d->scope = b.s;
	d->nscopes = b.ns;
	container = pt_xcalloc(b.nj, 1);
	d->nexecs = m->n;
	d->job_of = pt_xmalloc((m->n ? m->n : 1) * sizeof *d->job_of);
	d->wanted = pt_xcalloc(b.nj, 1);
	memset(d->job_of, 0xff, (m->n ? m->n : 1) * sizeof *d->job_of);
	declared_edges(d);
	for (i = 0; i < b.nj; i++) {
		size_t p = d->scope[d->job[i].scope].parent_job;

		if (p != SIZE_MAX && p < i) {
			d->held = pt_xrealloc(d->held, (d->nheld + 1) *
					      sizeof *d->held);
			d->held[d->nheld++] = (uint64_t)p << 32 | i;
		}
	}
	for (i = 0; i < b.nj; i++) {
		struct pt_sb sb = PT_SB_INIT;

		pt_exec_quote(d->job[i].e, &sb);
		if (!sb.buf)
			pt_sb_addstr(&sb, "");
		d->job[i].cmd = pt_sb_detach(&sb, NULL);
		for (k = 0; k < b.own[perm[i]].n; k++)
			d->job_of[b.own[perm[i]].e[k]->id] = (uint32_t)i;
		gather(m, &pt, &b.own[perm[i]], (uint32_t)i);
		{
			/* What a tool itself read (its makefiles, build.ninja)
			 * is the job's that runs it. */
			size_t s;

			for (s = 1; s < b.ns; s++)
				if (b.s[s].parent_job == i && b.s[s].e) {
					struct own one = { &b.s[s].e, 1, 1 };

					gather(m, &pt, &one, (uint32_t)i);
				}
		}
		container[i] = (uint8_t)has_nested(d, i);
		d->work_ns += d->job[i].dur_ns;
		d->cpu_ns += d->job[i].cpu_ns;
		nleaf += !container[i];
		if (d->job[i].start_ns < first)
			first = d->job[i].start_ns;
		if (d->job[i].end_ns > last)
			last = d->job[i].end_ns;
	}
	if (nleaf < 2) {
		*why = "no execution started more than one program: there are "
		       "no jobs to schedule";
		for (i = 0; i < b.nj; i++) {
			free(b.own[i].e);
			free(d->job[i].cmd);
		}
		for (i = 0; i < pt.cap; i++)
			free(pt.e[i].t);
		free(pt.e);
		free(b.own);
		free(b.j);
		for (i = 0; i < b.ndbc; i++) {
			free(b.dbc[i].key);
			pt_makedb_free(b.dbc[i].db);
		}
		free(b.dbc);
		free(perm);
		free(inv);
		free(container);
		free(d->job);
		free(d->job_of);
		free(d->decl);
		free(d->decl_tool);
		free(d->wanted);
		free(b.s);
		memset(d, 0, sizeof *d);
		return -1;
	}
	d->wall_ns = bend - bstart;
	d->lead_ns = first > bstart ? first - bstart : 0;
	d->tail_ns = bend > last ? bend - last : 0;

	/* Directories made, by name. */
	{
		size_t nd = 0;

		for (i = 0; i < pt.cap; i++)
			for (k = 0; pt.e[i].path && k < pt.e[i].n; k++)
				if (pt.e[i].t[k].k != NONE) {
					nd++;
					break;
				}
		if (nd) {
			dt.cap = 16;
			while (dt.cap < 2 * nd)
				dt.cap *= 2;
			dt.e = pt_xcalloc(dt.cap, sizeof *dt.e);
			for (i = 0; i < pt.cap; i++)
				for (k = 0; pt.e[i].path && k < pt.e[i].n; k++)
					if (pt.e[i].t[k].k != NONE) {
						const char *p = pt.e[i].path;
						size_t h;

						for (h = pt_hash_bytes(p, strlen(p)) &
							 (dt.cap - 1);
						     dt.e[h]; h = (h + 1) & (dt.cap - 1))
							;
						dt.e[h] = &pt.e[i];
						break;
					}
		}
	}
	st.d = d;
	st.container = container;
	st.own = b.own;
	st.perm = perm;
	ran = pt_xcalloc(d->nscopes + 1, sizeof *ran);
	for (i = 0; i < d->njobs; i++) {
		const struct pt_deps_scope *s = &d->scope[d->job[i].scope];
		long t;

		if (!s->db || !d->job[i].target ||
		    (t = pt_makedb_find(s->db, d->job[i].target)) < 0)
			continue;
		if (!ran[d->job[i].scope])
			ran[d->job[i].scope] = pt_xcalloc(s->db->n + 1, 1);
		ran[d->job[i].scope][t] = 1;
	}
	for (i = 0; i < pt.cap; i++)
		if (pt.e[i].path) {
			path_deps(&st, &pt.e[i], &dt);
			rule_deps(&st, &pt.e[i], ran);
		}
	for (i = 0; i < d->nscopes; i++)
		free(ran[i]);
	free(ran);
	/* qsort's array may not be NULL, even empty */
	if (d->nedges)
		qsort(d->edge, d->nedges, sizeof *d->edge, cmp_edge_s);
	if (d->nrace)
		qsort(d->race, d->nrace, sizeof *d->race, cmp_race);
	for (i = 0; i < d->nrace; i++) {
		struct lca l;

		lca_of(d, d->race[i].writer, d->race[i].reader, &l);
		d->race[i].fix = fix_text(d, &l, d->race[i].path,
					  d->race[i].kind, d->race[i].writer,
					  d->race[i].reader);
	}

	/* Durations: each job's own work (a job that holds a tool's jobs:
	 * what it did besides, before them: the script's own work between
	 * its jobs is work). */
	dur = pt_xcalloc(b.nj + 1, sizeof *dur);
	level = pt_xcalloc(b.nj + 1, sizeof *level);
	d->wait_ns = -1;
	for (i = 0; i < b.nj; i++) {
		int64_t w = d->job[i].wait_ns;

		dur[i] = d->job[i].dur_ns;
		if (w < 0)
			continue;
		/* Load-free: less the time its processes were runnable but
		 * waited for a CPU. */
		d->wait_ns = (d->wait_ns > 0 ? d->wait_ns : 0) + w;
		dur[i] = dur[i] > w ? dur[i] - w : 0;
		/* The waits of processes that ran side by side add up past
		 * the time they shared: never less than the CPU it used. */
		if (dur[i] < d->job[i].cpu_ns)
			dur[i] = d->job[i].cpu_ns < d->job[i].dur_ns ?
				 d->job[i].cpu_ns : d->job[i].dur_ns;
	}
	{
		uint64_t *e = pt_xmalloc((d->nedges + d->nheld + 1) * sizeof *e);

		for (i = 0; i < d->nedges; i++)
			e[i] = (uint64_t)d->edge[i].from << 32 | d->edge[i].to;
		memcpy(e + d->nedges, d->held, d->nheld * sizeof *e);
		qsort(e, d->nedges + d->nheld, sizeof *e, cmp_u64);
		pt_depsched_graph_make(&g, b.nj, e, d->nedges + d->nheld);
		free(e);
	}
	pt_depsched_levels(&g, dur, level);
	{
		size_t at = SIZE_MAX;
		int64_t best = -1;

		for (i = 0; i < g.n; i++)
			if (!g.npred[i] && level[i] > best) {
				best = level[i];
				at = i;
			}
		/* Jobs that hold a tool's are on it as nothing: not named. */
		while (at != SIZE_MAX) {
			size_t next = SIZE_MAX;

			if (dur[at]) {
				d->crit = pt_xrealloc(d->crit, (d->ncrit + 1) *
						      sizeof *d->crit);
				d->crit[d->ncrit++] = at;
			}
			for (k = g.succ_first[at]; k < g.succ_first[at + 1]; k++)
				if (level[g.succ[k]] == level[at] - dur[at] &&
				    (next == SIZE_MAX || !dur[next]))
					next = g.succ[k];
			at = next;
		}
	}

	/* The most jobs that ran at once: the recorded schedule is one of
	 * the candidates on that many CPUs or more. */
	{
		struct pt_depsched_heap h = { pt_xmalloc((g.n + 1) * sizeof(int64_t)),
				  pt_xmalloc((g.n + 1) * sizeof(uint32_t)), 0 };

		for (i = 0; i < g.n; i++) {
			if (container[i])
				continue;
			while (h.n && h.key[0] <= d->job[i].start_ns)
				pt_depsched_heap_pop(&h);
			pt_depsched_heap_push(&h, d->job[i].end_ns, (uint32_t)i);
			if ((int)h.n > conc)
				conc = (int)h.n;
		}
		free(h.key);
		free(h.val);
	}
	cpus = pt_model_meta(m, 0, "cpus");
	d->machine_cpus = cpus ? atoi(cpus) : 0;
	{
		int64_t crit = 0, unl, prev = INT64_MAX;
		int p;

		for (i = 0; i < g.n; i++)
			if (level[i] > crit)
				crit = level[i];
		unl = d->lead_ns + crit + d->tail_ns;
		for (p = 1; d->nideal + 1 < sizeof d->ideal / sizeof *d->ideal;
		     p *= 2) {
			int64_t w = d->lead_ns + pt_depsched_schedule(&g, dur, level,
							  (size_t)p, g.n, NULL,
							  NULL) +
				    d->tail_ns;

			/* More CPUs never make a schedule worse; the recorded
			 * one fits on as many as ran at once. */
			if (w > prev)
				w = prev;
			if (p >= conc && w > d->wall_ns)
				w = d->wall_ns;
			if (w < unl)
				w = unl;
			d->ideal[d->nideal++] = (struct pt_deps_ideal){ p, w };
			prev = w;
			if ((w <= unl && p >= d->machine_cpus) ||
			    (size_t)p >= g.n)
				break;
		}
		if (unl > prev)
			unl = prev;
		d->ideal[d->nideal++] = (struct pt_deps_ideal){ 0, unl };
	}
	/* The schedule on this machine's CPUs, to be drawn. */
	d->sched_cpus = d->machine_cpus > 0 ? d->machine_cpus : 2;
	d->sched = pt_xcalloc(g.n ? g.n : 1, sizeof *d->sched);
	{
		int64_t *sst = pt_xmalloc((g.n ? g.n : 1) * sizeof *sst);
		int *cp = pt_xmalloc((g.n ? g.n : 1) * sizeof *cp);

		d->sched_span_ns = d->lead_ns + pt_depsched_schedule(&g, dur, level,
					(size_t)d->sched_cpus, g.n, sst, cp) +
				   d->tail_ns;
		for (i = 0; i < g.n; i++)
			d->sched[i] = (struct pt_deps_slot){ cp[i],
				d->lead_ns + sst[i], d->lead_ns + sst[i] + dur[i],
				0 };
		for (i = 0; i < d->ncrit; i++)
			d->sched[d->crit[i]].critical = 1;
		free(sst);
		free(cp);
	}

	/* Serializations: a cut is a moment when one job started with
	 * nothing running, every job before it done; each is an order the
	 * build imposed.  Its gain: the ideal schedule on this machine's
	 * CPUs with every cut as a barrier, less the same without it. */
	{
		size_t *seg = pt_xmalloc((b.nj + 1) * sizeof *seg);
		size_t ncuts = 0, *lastof = NULL, prevj = SIZE_MAX;
		int64_t maxend = INT64_MIN, all, thr;
		uint8_t *seen;
		uint32_t *stack;

		for (i = 0; i < b.nj; i++) {
			seg[i] = SIZE_MAX;
			if (container[i] || !d->job[i].dur_ns)
				continue;
			if (prevj != SIZE_MAX && d->job[i].start_ns >= maxend &&
			    ncuts < CUTS_MAX) {
				lastof = pt_xrealloc(lastof, (ncuts + 1) *
						     sizeof *lastof);
				lastof[ncuts++] = prevj;
			}
			seg[i] = ncuts;
			if (d->job[i].end_ns > maxend) {
				maxend = d->job[i].end_ns;
				prevj = i;
			}
		}
		thr = d->wall_ns / 100 > 10000000 ? d->wall_ns / 100 : 10000000;
		seen = pt_xmalloc(b.nj + 1);
		stack = pt_xmalloc((b.nj + 1) * sizeof *stack);
		ncuts = merge_cuts(&g, seg, b.nj, lastof, ncuts, seen, stack);
		if (ncuts) {
			all = makespan(d, dur, seg, ncuts, SIZE_MAX,
				       (size_t)d->sched_cpus);
			for (k = 0; k < ncuts; k++) {
				int64_t gain = all - makespan(d, dur, seg, ncuts,
							      k,
							      (size_t)d->sched_cpus);
				size_t then = SIZE_MAX;
				char *wy;

				if (gain < thr)
					continue;
				/* a job after the cut that needs nothing
				 * of the one before it */
				wy = NULL;
				for (i = 0; i < b.nj && !wy; i++)
					if (seg[i] == k + 1 &&
					    !reaches(&g, lastof[k], i, seen, stack) &&
					    (wy = ser_why(d, lastof[k], i)))
						then = i;
				if (!wy)
					continue;
				d->ser = pt_xrealloc(d->ser, (d->nser + 1) *
						     sizeof *d->ser);
				d->ser[d->nser++] = (struct pt_deps_ser){
					lastof[k], then, gain, wy };
			}
		}
		opam_waits(d, &g, thr, seen, stack);
		if (d->nser)
			qsort(d->ser, d->nser, sizeof *d->ser, cmp_ser);
		for (i = SER_MAX; i < d->nser; i++)
			free(d->ser[i].why);
		if (d->nser > SER_MAX)
			d->nser = SER_MAX;
		free(seg);
		free(lastof);
		free(seen);
		free(stack);
	}

	for (i = 0; i < pt.cap; i++)
		free(pt.e[i].t);
	free(pt.e);
	free(dt.e);
	for (i = 0; i < b.nj; i++)
		free(b.own[i].e);
	free(b.own);
	free(b.j);
	for (i = 0; i < b.ndbc; i++)
		free(b.dbc[i].key);
	free(b.dbc);            /* the databases are the scopes' now */
	free(perm);
	free(inv);
	d->container = container;
	pairtab_free(&st.edges);
	pairtab_free(&st.races);
	pairtab_free(&st.memo);
	pt_depsched_graph_free(&g);
	d->dur = dur;
	free(level);
	return 0;
}

void pt_deps_free(struct pt_deps *d)
{
	size_t i, k;

	for (i = 0; i < d->njobs; i++)
		free(d->job[i].cmd);
	free(d->job);
	free(d->job_of);
	free(d->dur);
	free(d->container);
	free(d->edge);
	free(d->decl);
	free(d->decl_tool);
	free(d->wanted);
	free(d->held);
	for (i = 0; i < d->nscopes; i++) {
		/* one database may serve several scopes: free it once */
		for (k = 0; k < i; k++)
			if (d->scope[k].db == d->scope[i].db)
				break;
		if (k == i)
			pt_makedb_free(d->scope[i].db);
	}
	free(d->scope);
	free(d->crit);
	free(d->sched);
	for (i = 0; i < d->nser; i++)
		free(d->ser[i].why);
	free(d->ser);
	for (i = 0; i < d->nrace; i++)
		free(d->race[i].fix);
	free(d->race);
	memset(d, 0, sizeof *d);
}
