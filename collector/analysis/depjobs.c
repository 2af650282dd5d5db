/*
 * proftrace deps's scopes and jobs (analysis/depjobs.h): which tool ran
 * what, as the tools have their jobs (analysis/deps.c says how).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/depjobs.h"
#include "analysis/makedb.h"
#include "analysis/opamdb.h"
#include "base/strbuf.h"
#include "base/util.h"

int pt_depjobs_tool_kind(const struct pt_exec *e)
{
	static const char *const tools[] = { "make", "gmake", "ninja",
		"samu", "dune", "opam", "cargo", NULL };
	const char *p = pt_exec_prog(e), *x = strrchr(e->exe, '/');
	size_t i;

	if (!e->first_child)
		return -1;
	/* the program file too: `debian/rules` is make by its #! line */
	x = x ? x + 1 : e->exe;
	for (i = 0; tools[i]; i++)
		if (!strcmp(p, tools[i]) || !strcmp(x, tools[i]))
			return i < 2 ? PT_DEPS_MAKE :
			       !strcmp(tools[i], "opam") ? PT_DEPS_OPAM :
			       PT_DEPS_NINJA;
	return pt_makedb_script(e->exe) ? PT_DEPS_MAKE : -1;
}

/* ---- building scopes and jobs ---- */

static size_t new_scope(struct pt_depjobs *b, int kind, const struct pt_exec *e,
			size_t parent_job)
{
	if (b->ns == b->cs) {
		b->cs = b->cs ? 2 * b->cs : 16;
		b->s = pt_xrealloc(b->s, b->cs * sizeof *b->s);
	}
	memset(&b->s[b->ns], 0, sizeof *b->s);
	b->s[b->ns].kind = (enum pt_deps_scope_kind)kind;
	b->s[b->ns].e = e;
	b->s[b->ns].parent_job = parent_job;
	b->s[b->ns].start_ns = NONE;
	b->s[b->ns].end_ns = -NONE;
	return b->ns++;
}

static size_t new_job(struct pt_depjobs *b, size_t scope, const struct pt_exec *e)
{
	if (b->nj == b->cj) {
		b->cj = b->cj ? 2 * b->cj : 64;
		b->j = pt_xrealloc(b->j, b->cj * sizeof *b->j);
		b->own = pt_xrealloc(b->own, b->cj * sizeof *b->own);
	}
	memset(&b->j[b->nj], 0, sizeof *b->j);
	memset(&b->own[b->nj], 0, sizeof *b->own);
	b->j[b->nj].e = e;
	b->j[b->nj].scope = scope;
	b->j[b->nj].start_ns = NONE;
	b->j[b->nj].end_ns = -NONE;
	b->j[b->nj].dir = e->cwd;
	return b->nj++;
}

static void own_add(struct own *o, const struct pt_exec *e)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 8;
		o->e = pt_xrealloc(o->e, o->cap * sizeof *o->e);
	}
	o->e[o->n++] = e;
}

static void tool_scope(struct pt_depjobs *b, const struct pt_exec *e, int kind,
		       size_t parent_job, int depth);

/* e and what it started go to job j; a build tool among them is a scope
 * of its own, held by j. */
static void add_exec(struct pt_depjobs *b, size_t j, const struct pt_exec *e,
		     int depth)
{
	const struct pt_exec *c;
	int kind = pt_depjobs_tool_kind(e);

	if (kind >= 0 && depth < 24) {
		tool_scope(b, e, kind, j, depth + 1);
		return;
	}
	own_add(&b->own[j], e);
	for (c = e->first_child; c; c = c->next_sibling)
		add_exec(b, j, c, depth);
}

/* Executions in groups: the images of one pid (an exec chain) are one.
 * Group k is mem[off[k] .. off[k + 1]). */
struct groups {
	const struct pt_exec **mem;
	size_t *off;
	size_t count;
};

static void groups_make(const struct pt_exec *const *x, size_t n,
			struct groups *g)
{
	size_t i, k, *grp = pt_xmalloc((n + 1) * sizeof *grp), *cnt;

	g->count = 0;
	for (i = 0; i < n; i++) {
		for (k = i; k-- > 0;)
			if (x[k]->pid == x[i]->pid && x[i]->pid > 0)
				break;
		grp[i] = k != (size_t)-1 ? grp[k] : g->count++;
	}
	cnt = pt_xcalloc(g->count + 1, sizeof *cnt);
	for (i = 0; i < n; i++)
		cnt[grp[i] + 1]++;
	for (k = 0; k < g->count; k++)
		cnt[k + 1] += cnt[k];
	g->off = pt_xmalloc((g->count + 1) * sizeof *g->off);
	memcpy(g->off, cnt, (g->count + 1) * sizeof *g->off);
	g->mem = pt_xmalloc((n + 1) * sizeof *g->mem);
	for (i = 0; i < n; i++)
		g->mem[cnt[grp[i]]++] = x[i];
	free(cnt);
	free(grp);
}

static void groups_of(const struct pt_exec *first, struct groups *g)
{
	const struct pt_exec **x = NULL, *c;
	size_t n = 0, cap = 0;

	for (c = first; c; c = c->next_sibling) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			x = pt_xrealloc(x, cap * sizeof *x);
		}
		x[n++] = c;
	}
	groups_make(x, n, g);
	free(x);
}

#define GN(g, k) ((g)->off[(k) + 1] - (g)->off[k])
#define GAT(g, k, i) ((g)->mem[(g)->off[k] + (i)])
#define GFIRST(g, k) GAT(g, k, 0)

static void groups_free(struct groups *g)
{
	free(g->mem);
	free(g->off);
}

/* The command make handed over: a shell's -c text, else the words. */
static char *recipe_text(const struct pt_exec *e)
{
	struct pt_sb sb = PT_SB_INIT;
	const char *p = pt_exec_prog(e);
	size_t i;

	if (!strcmp(p, "sh") || !strcmp(p, "bash") || !strcmp(p, "dash")) {
		for (i = 1; i + 1 < e->argc; i++) {
			const char *a = pt_exec_arg(e, i);

			if (a[0] == '-' && strchr(a, 'c')) {
				pt_sb_addstr(&sb, pt_exec_arg(e, i + 1));
				return pt_sb_detach(&sb, NULL);
			}
		}
	}
	for (i = 0; i < e->argc; i++) {
		if (i)
			pt_sb_addch(&sb, ' ');
		pt_sb_addstr(&sb, pt_exec_arg(e, i));
	}
	if (!sb.buf)
		pt_sb_addstr(&sb, "");
	return pt_sb_detach(&sb, NULL);
}

/* The target of make's database whose file e, or what it ran, wrote. */
static long written_target(const struct pt_depjobs *b, const struct pt_makedb *db,
			   const struct pt_exec *e, int depth)
{
	const struct pt_file_access *a;
	const struct pt_exec *c;
	size_t n, i;
	long t;

	a = pt_model_files(b->m, e, &n);
	for (i = 0; i < n; i++)
		if ((a[i].kind == 'w' || a[i].kind == 'n' ||
		     a[i].kind == 'k') &&
		    (t = pt_makedb_find(db, a[i].path)) >= 0 &&
		    (db->t[t].where || db->t[t].nrecipe))
			return t;
	if (depth > 16)
		return -1;
	for (c = e->first_child; c; c = c->next_sibling)
		if (pt_depjobs_tool_kind(c) < 0 &&
		    (t = written_target(b, db, c, depth + 1)) >= 0)
			return t;
	return -1;
}

static struct pt_makedb *db_of(struct pt_depjobs *b, const struct pt_exec *e,
			       int kind)
{
	struct pt_sb key = PT_SB_INIT;
	size_t i;

	pt_sb_addstr(&key, e->cwd);
	for (i = 0; i < e->argc; i++) {
		pt_sb_addch(&key, 0);
		pt_sb_addstr(&key, pt_exec_arg(e, i));
	}
	pt_sb_addch(&key, 0);
	for (i = 0; i < b->ndbc; i++)
		if (b->dbc[i].len == key.len &&
		    !memcmp(b->dbc[i].key, key.buf, key.len)) {
			pt_sb_release(&key);
			return b->dbc[i].db;
		}
	b->dbc = pt_xrealloc(b->dbc, (b->ndbc + 1) * sizeof *b->dbc);
	b->dbc[b->ndbc].key = pt_sb_detach(&key, &b->dbc[b->ndbc].len);
	b->dbc[b->ndbc].db = kind == PT_DEPS_MAKE ? pt_makedb_read(e) :
			     kind == PT_DEPS_OPAM ? pt_opamdb_read(e) :
			     pt_makedb_read_ninja(e);
	return b->dbc[b->ndbc++].db;
}

/* When make had read its makefiles: its last read of a file.  What it
 * started before is $(shell ...) at parse time, no recipe. */
static int64_t parsed_at(const struct pt_depjobs *b, const struct pt_exec *e)
{
	const struct pt_file_access *a;
	size_t n, i;
	int64_t t = e->start_ns;

	a = pt_model_files(b->m, e, &n);
	for (i = 0; i < n; i++)
		if (a[i].kind == 'r' && a[i].time_ns > t)
			t = a[i].time_ns;
	return t;
}

static void tool_scope(struct pt_depjobs *b, const struct pt_exec *e, int kind,
		       size_t parent_job, int depth)
{
	size_t s = new_scope(b, kind, e, parent_job), k, i, back;
	struct groups g;
	struct pt_makedb *db = NULL;
	long *tg;
	size_t *job;
	char **shared;                  /* a line of several recipes */
	int64_t parsed = NONE, first_recipe = NONE;

	groups_of(e->first_child, &g);
	if (kind == PT_DEPS_MAKE || kind == PT_DEPS_OPAM ||
	    !strcmp(pt_exec_prog(e), "ninja") ||
	    (strrchr(e->exe, '/') && !strcmp(strrchr(e->exe, '/'), "/ninja"))) {
		parsed = kind == PT_DEPS_MAKE ? parsed_at(b, e) : NONE;
		db = db_of(b, e, kind);
		b->s[s].db = db;
		b->s[s].declared = db != NULL;
		b->s[s].notparallel = db && db->notparallel;
	}
	tg = pt_xmalloc((g.count + 1) * sizeof *tg);
	job = pt_xmalloc((g.count + 1) * sizeof *job);
	shared = pt_xcalloc(g.count + 1, sizeof *shared);
	for (k = 0; k < g.count; k++) {
		tg[k] = -1;
		if (!db)
			continue;
		for (i = 0; i < GN(&g, k) && tg[k] < 0 &&
			    kind == PT_DEPS_MAKE; i++) {
			const struct pt_exec *x = GAT(&g, k, i);
			char *cmd;

			cmd = recipe_text(x);
			tg[k] = pt_makedb_match(db, cmd, -1);
			/* A line several targets' recipes have (one rule
			 * with several targets): a later line of a run
			 * started lately, side by side with others' lines. */
			for (back = k; tg[k] == -2 && back-- > 0 &&
			     k - back <= 64;)
				if (tg[back] >= 0)
					tg[k] = pt_makedb_match(db, cmd,
								tg[back]);
			if (tg[k] == -2 && !shared[k])
				shared[k] = cmd;
			else
				free(cmd);
		}
	}
	/* A first line that several rules' recipes have (the same
	 * `$(MAKE) -C dir` in two rules): the rule whose next line ran
	 * next, else the one make -j1 comes to next after the recipe
	 * before. */
	for (k = 0; k < g.count; k++) {
		if (tg[k] == -2 && shared[k]) {
			size_t q;

			tg[k] = -1;
			for (q = k + 1; q < g.count && q <= k + 8; q++) {
				const struct pt_exec *x = GFIRST(&g, q);
				char *cmd;

				if (tg[q] == -1)
					continue;       /* $(shell ...) */
				if (tg[q] < 0)
					break;
				cmd = recipe_text(x);
				if (pt_makedb_line(db, (size_t)tg[q], cmd) > 0 &&
				    pt_makedb_line(db, (size_t)tg[q],
						   shared[k]) == 0)
					tg[k] = tg[q];
				free(cmd);
				break;
			}
			for (q = k; tg[k] < 0 && q-- > 0;)
				if (tg[q] >= 0)
					break;
			if (tg[k] < 0)
				tg[k] = pt_makedb_match_after(db, shared[k],
					q == SIZE_MAX ? -1 : tg[q]);
		}
		if (kind == PT_DEPS_OPAM) {
			/* a package's build, install or removal: one
			 * job of its commands */
			tg[k] = pt_opamdb_job(db, GFIRST(&g, k));
			continue;
		}
		if (tg[k] < 0)
			tg[k] = -1;
		free(shared[k]);
		if (db && tg[k] < 0)
			tg[k] = written_target(b, db, GFIRST(&g, k), 0);
		if (tg[k] >= 0 && GFIRST(&g, k)->start_ns < first_recipe)
			first_recipe = GFIRST(&g, k)->start_ns;
	}
	free(shared);
	for (k = 0; k < g.count; k++) {
		const struct pt_exec *f = GFIRST(&g, k);
		size_t j = SIZE_MAX, q;

		job[k] = SIZE_MAX;
		if (kind == PT_DEPS_MAKE && tg[k] < 0 && pt_depjobs_tool_kind(f) < 0 &&
		    (f->start_ns < parsed ||
		     (first_recipe != NONE && f->start_ns < first_recipe)))
			continue;               /* $(shell ...) while parsing */
		/* The lines of one recipe are one job. */
		for (q = 0; q < k && tg[k] >= 0; q++)
			if (tg[q] == tg[k] && job[q] != SIZE_MAX)
				j = job[q];
		if (j == SIZE_MAX) {
			j = new_job(b, s, f);
			if (tg[k] >= 0) {
				b->j[j].target = db->t[tg[k]].name;
				b->j[j].where = db->t[tg[k]].where;
				if (kind != PT_DEPS_OPAM)
					b->j[j].dir = db->dir;
			}
		}
		job[k] = j;
		for (i = 0; i < GN(&g, k); i++)
			add_exec(b, j, GAT(&g, k, i), depth);
	}
	free(tg);
	free(job);
	groups_free(&g);
}

/* From a root down: a chain of single children is a wrapper; the first
 * execution with more than one child group drives the build (a script:
 * each child a job); a build tool is a scope. */
static void driver(struct pt_depjobs *b, size_t scope, const struct groups *rg,
		   size_t k, int depth)
{
	struct groups cg = { NULL, NULL, 0 };
	size_t i, j, c, n = GN(rg, k);
	const struct pt_exec *last = NULL;

	for (i = 0; i < n; i++) {
		const struct pt_exec *x = GAT(rg, k, i);

		if (pt_depjobs_tool_kind(x) >= 0 || depth > 8) {
			j = new_job(b, scope, GFIRST(rg, k));
			for (i = 0; i < n; i++)
				add_exec(b, j, GAT(rg, k, i), 0);
			return;
		}
	}
	/* the child groups of all the images of the chain */
	{
		const struct pt_exec **x = NULL, *ch;
		size_t nx = 0, cap = 0;

		for (i = 0; i < n; i++) {
			last = GAT(rg, k, i);
			for (ch = last->first_child; ch; ch = ch->next_sibling) {
				if (nx == cap) {
					cap = cap ? 2 * cap : 16;
					x = pt_xrealloc(x, cap * sizeof *x);
				}
				x[nx++] = ch;
			}
		}
		groups_make(x, nx, &cg);
		free(x);
	}
	if (cg.count == 1) {
		driver(b, scope, &cg, 0, depth + 1);
	} else if (!cg.count) {
		j = new_job(b, scope, GFIRST(rg, k));
		for (i = 0; i < n; i++)
			own_add(&b->own[j], GAT(rg, k, i));
	} else {
		size_t s;

		j = new_job(b, scope, GFIRST(rg, k));
		for (i = 0; i < n; i++)
			own_add(&b->own[j], GAT(rg, k, i));
		s = new_scope(b, PT_DEPS_SEQ, last, j);
		for (c = 0; c < cg.count; c++) {
			size_t jj = new_job(b, s, GFIRST(&cg, c));

			for (i = 0; i < GN(&cg, c); i++)
				add_exec(b, jj, GAT(&cg, c, i), 0);
		}
	}
	groups_free(&cg);
}

/* ---- spans and own work ---- */

struct ev {
	int64_t t;
	int own, nest;                  /* +1 / -1 */
};

static int cmp_ev(const void *x, const void *y)
{
	const struct ev *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->own + a->nest) - (b->own + b->nest);
}

/* Spans of jobs and scopes from their executions, inner first; a job's
 * own work: when its own processes ran and no tool it started did. */
static void spans(struct pt_depjobs *b)
{
	size_t i, k, s;
	struct ev *ev = NULL;
	size_t nev = 0, cev = 0;

	for (i = 0; i < b->nj; i++) {
		b->j[i].cpu_ns = 0;
		b->j[i].wait_ns = -1;
		for (k = 0; k < b->own[i].n; k++) {
			const struct pt_exec *e = b->own[i].e[k];
			int64_t w = pt_model_wait(b->m, e);

			if (w >= 0)
				b->j[i].wait_ns = (b->j[i].wait_ns > 0 ?
						   b->j[i].wait_ns : 0) + w;
			if (e->start_ns < b->j[i].start_ns)
				b->j[i].start_ns = e->start_ns;
			if (e->end_ns > b->j[i].end_ns)
				b->j[i].end_ns = e->end_ns;
			b->j[i].cpu_ns += pt_exec_cpu_us(e) * 1000;
		}
	}
	for (s = b->ns; s-- > 1;) {
		for (i = 0; i < b->nj; i++)
			if (b->j[i].scope == s) {
				if (b->j[i].start_ns < b->s[s].start_ns)
					b->s[s].start_ns = b->j[i].start_ns;
				if (b->j[i].end_ns > b->s[s].end_ns)
					b->s[s].end_ns = b->j[i].end_ns;
			}
		if (b->s[s].e) {
			if (b->s[s].e->start_ns < b->s[s].start_ns)
				b->s[s].start_ns = b->s[s].e->start_ns;
			if (b->s[s].e->end_ns > b->s[s].end_ns)
				b->s[s].end_ns = b->s[s].e->end_ns;
		}
		if (b->s[s].parent_job != SIZE_MAX) {
			struct pt_deps_job *pj = &b->j[b->s[s].parent_job];

			if (b->s[s].start_ns < pj->start_ns)
				pj->start_ns = b->s[s].start_ns;
			if (b->s[s].end_ns > pj->end_ns)
				pj->end_ns = b->s[s].end_ns;
		}
	}
	for (i = 0; i < b->nj; i++) {
		int own = 0, nest = 0;
		size_t q;
		int64_t prev = 0, d = 0;

		nev = 0;
		for (k = 0; k < b->own[i].n + b->ns; k++) {
			int64_t st, en;
			int isown = k < b->own[i].n;

			if (isown) {
				st = b->own[i].e[k]->start_ns;
				en = b->own[i].e[k]->end_ns;
			} else {
				s = k - b->own[i].n;
				if (b->s[s].parent_job != i)
					continue;
				/* the tool's jobs, not the tool's whole span: a
				 * script's work between them is its own */
				for (q = 0; q < b->nj; q++) {
					if (b->j[q].scope != s ||
					    b->j[q].end_ns <= b->j[q].start_ns)
						continue;
					if (nev + 2 > cev) {
						cev = cev ? 2 * cev : 64;
						ev = pt_xrealloc(ev, cev * sizeof *ev);
					}
					ev[nev++] = (struct ev){ b->j[q].start_ns,
								 0, 1 };
					ev[nev++] = (struct ev){ b->j[q].end_ns,
								 0, -1 };
				}
				continue;
			}
			if (en <= st)
				continue;
			if (nev + 2 > cev) {
				cev = cev ? 2 * cev : 64;
				ev = pt_xrealloc(ev, cev * sizeof *ev);
			}
			ev[nev++] = (struct ev){ st, isown, !isown };
			ev[nev++] = (struct ev){ en, -isown, -!isown };
		}
		qsort(ev, nev, sizeof *ev, cmp_ev);
		for (k = 0; k < nev; k++) {
			if (own > 0 && !nest)
				d += ev[k].t - prev;
			own += ev[k].own;
			nest += ev[k].nest;
			prev = ev[k].t;
		}
		b->j[i].dur_ns = d;
		if (b->j[i].start_ns == NONE)
			b->j[i].start_ns = b->j[i].end_ns = b->j[i].e->start_ns;
	}
	free(ev);
}


void pt_depjobs_build(struct pt_depjobs *b, const struct pt_model *m,
		      int64_t *bstart, int64_t *bend,
		      const struct pt_exec **first)
{
	size_t i, k;

	b->m = m;
	{
		/* Every root: an exec chain of roots (a shell that execs its
		 * last command) is one. */
		const struct pt_exec **roots = NULL;
		struct groups rg;
		size_t nr = 0;

		for (i = 0; i < m->n; i++)
			if (!m->execs[i]->parent) {
				roots = pt_xrealloc(roots, (nr + 1) * sizeof *roots);
				roots[nr++] = m->execs[i];
				if (m->execs[i]->start_ns < *bstart)
					*bstart = m->execs[i]->start_ns;
				if (m->execs[i]->end_ns > *bend)
					*bend = m->execs[i]->end_ns;
				if (!*first)
					*first = m->execs[i];
			}
		new_scope(b, PT_DEPS_SEQ, NULL, SIZE_MAX);
		groups_make(roots, nr, &rg);
		for (k = 0; k < rg.count; k++)
			driver(b, 0, &rg, k, 0);
		groups_free(&rg);
		free(roots);
	}
	spans(b);
}
