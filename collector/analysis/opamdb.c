/*
 * The order opam declared: each package an opam command built, installed
 * or removed, a target of a pt_makedb per phase ("a.1", "a.1 install",
 * "a.1 remove"), after the phases of the same run that its opam file
 * depends on, for proftrace deps (analysis/deps.c).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/opamdb.h"
#include "base/strbuf.h"
#include "base/util.h"

#define OPAMFILE_MAX (1u << 20)

enum { PH_BUILD, PH_INSTALL, PH_REMOVE, PH_COUNT };
static const char *const phase_name[PH_COUNT] = { "", " install", " remove" };

struct pkg {                            /* a package of the run */
	char *name;                     /* "name.version" */
	char *text;                     /* its opam file, or NULL */
	char *where;                    /* that file's path */
	struct pt_sb cmds[PH_COUNT];    /* the commands of its build,
					 * install and remove fields: each
					 * word a line ('\1': any text,
					 * '\2' first: may be left out), an
					 * empty line after each command */
	long t[PH_COUNT];               /* its targets, -1: none */
};

/* The opam file of package pkg ("name.version") that a command of it
 * ran in cwd: the one the switch keeps, else the source's own. */
static char *opam_file(const char *cwd, const char *pkg, char **where)
{
	const char *sw = strstr(cwd, "/.opam-switch/");
	size_t nl = strcspn(pkg, ".");
	struct pt_sb sb = PT_SB_INIT, path = PT_SB_INIT;
	int step;

	for (step = sw ? 0 : 1; step < 3; step++) {
		pt_sb_reset(&path);
		if (step == 0)
			pt_sb_addf(&path, "%.*s/.opam-switch/packages/%s/opam",
				   (int)(sw - cwd), cwd, pkg);
		else if (step == 1)
			pt_sb_addf(&path, "%s/%.*s.opam", cwd, (int)nl, pkg);
		else
			pt_sb_addf(&path, "%s/opam", cwd);
		pt_sb_reset(&sb);
		if (pt_sb_read_path(&sb, path.buf, OPAMFILE_MAX) > 0) {
			*where = pt_sb_detach(&path, NULL);
			return pt_sb_detach(&sb, NULL);
		}
	}
	pt_sb_release(&sb);
	pt_sb_release(&path);
	return NULL;
}

/* Past a comment or a string at p (opam's syntax), or p itself. */
static const char *skip_token(const char *p)
{
	const char *e;

	if (*p == '#')
		return p + strcspn(p, "\n");
	if (p[0] == '(' && p[1] == '*')
		return (e = strstr(p + 2, "*)")) ? e + 2 : p + strlen(p);
	if (*p == '"') {
		for (e = p + 1; *e && *e != '"'; e++)
			if (*e == '\\' && e[1])
				e++;
		return *e ? e + 1 : e;
	}
	return p;
}

/* Past the filter { ... } at p; *post: it names `post` (a package opam
 * installs after the one that depends on it). */
static const char *skip_filter(const char *p, int *post)
{
	int depth = 0;

	*post = 0;
	while (*p) {
		const char *q = skip_token(p);

		if (q != p) {
			p = q;
			continue;
		}
		if (*p == '{')
			depth++;
		else if (*p == '}' && !--depth)
			return p + 1;
		else if (!strncmp(p, "post", 4) && !strchr("_-", p[4]) &&
			 !(p[4] >= 'a' && p[4] <= 'z') &&
			 !(p[-1] >= 'a' && p[-1] <= 'z'))
			*post = 1;
		p++;
	}
	return p;
}

/* The value of field in opam file text, or NULL. */
static const char *field_of(const char *text, const char *field)
{
	size_t fl = strlen(field);
	const char *p;

	for (p = text; (p = strstr(p, field)); p += fl)
		if ((p == text || p[-1] == '\n') && p[fl] == ':')
			return p + fl + 1;
	return NULL;
}

/*
 * Walk the value at p: a list of strings and words with filters, nested
 * lists, or one item.  word(ctx, s, len, depth) for each string (s in
 * its quotes) and word, filter(ctx, post) after each filter.
 */
static void walk(const char *p, void *ctx,
		 void (*word)(void *, const char *, size_t, int),
		 void (*filter)(void *, int))
{
	int depth = 0, post;

	while (*p) {
		const char *q = skip_token(p);

		if (*p == '"') {
			word(ctx, p, (size_t)(q - p), depth);
			p = q;
		} else if (q != p) {
			p = q;
		} else if (*p == '{') {
			p = skip_filter(p, &post);
			filter(ctx, post);
		} else if (*p == '[') {
			depth++;
			p++;
		} else if (*p == ']') {
			if (--depth <= 0)
				return;
			word(ctx, NULL, 0, depth);
			p++;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   *p == '%' || *p == '_') {
			size_t n = strcspn(p, " \t\r\n[]{}\"");

			word(ctx, p, n, depth);
			p += n;
		} else if (*p == '\n' && depth <= 0 && p[1] && p[1] != ' ' &&
			   p[1] != '\t' && p[1] != '[' && p[1] != '\n') {
			return;         /* a one-line value, the next field */
		} else {
			p++;
		}
	}
}

struct deps_ctx {
	struct pkg *pk;
	size_t n, self;
	size_t *out, nout;              /* packages depended on */
	long pending;
};

static void deps_commit(struct deps_ctx *c)
{
	if (c->pending >= 0)
		c->out[c->nout++] = (size_t)c->pending;
	c->pending = -1;
}

static void deps_word(void *ctx, const char *s, size_t len, int depth)
{
	struct deps_ctx *c = ctx;
	size_t i;

	(void)depth;
	deps_commit(c);
	if (!s || s[0] != '"' || len < 2)
		return;
	for (i = 0; i < c->n; i++)
		if (i != c->self && !strncmp(c->pk[i].name, s + 1, len - 2) &&
		    c->pk[i].name[len - 2] == '.')
			break;
	if (i < c->n && c->nout < c->n)
		c->pending = (long)i;
}

static void deps_filter(void *ctx, int post)
{
	struct deps_ctx *c = ctx;

	if (post)
		c->pending = -1;
	deps_commit(c);
}

struct cmd_ctx {
	struct pt_sb *sb;
	int depth0;                     /* the depth of a command's words */
	size_t words;                   /* of the command being read */
	size_t last;                    /* where its last word starts */
};

static void cmd_end(struct cmd_ctx *c)
{
	if (c->words)
		pt_sb_addch(c->sb, '\n');
	c->words = 0;
}

/* A word of a command: its text, each %{...}% in it '\1' (any text); a
 * variable alone, '\1'. */
static void cmd_word(void *ctx, const char *s, size_t len, int depth)
{
	struct cmd_ctx *c = ctx;
	const char *e;

	if (!c->depth0)
		c->depth0 = depth;
	if (!s || depth < c->depth0) {  /* a command's list ended */
		cmd_end(c);
		return;
	}
	c->last = c->sb->len;
	if (s[0] == '"' && len >= 2) {
		for (e = s + len - 1, s++; s < e;) {
			const char *v = memmem(s, (size_t)(e - s), "%{", 2);
			const char *ve = v ? memmem(v, (size_t)(e - v), "}%", 2) :
					 NULL;

			if (!ve) {
				pt_sb_add(c->sb, s, (size_t)(e - s));
				break;
			}
			pt_sb_add(c->sb, s, (size_t)(v - s));
			pt_sb_addch(c->sb, '\1');
			s = ve + 2;
		}
	} else {
		pt_sb_addch(c->sb, '\1');
	}
	pt_sb_addch(c->sb, '\n');
	c->words++;
}

/* A filter after a word: the word may be left out ('\2' before it); a
 * filter after a whole command leaves it as it is. */
static void cmd_filter(void *ctx, int post)
{
	struct cmd_ctx *c = ctx;

	(void)post;
	if (!c->words || c->last >= c->sb->len)
		return;
	pt_sb_addch(c->sb, 0);
	memmove(c->sb->buf + c->last + 1, c->sb->buf + c->last,
		c->sb->len - 1 - c->last);
	c->sb->buf[c->last] = '\2';
	c->last = c->sb->len;
}

/* The commands of field (build, install, remove) into sb, as struct pkg
 * says. */
static void commands_of(const char *text, const char *field, struct pt_sb *sb)
{
	const char *v = field_of(text, field);
	struct cmd_ctx c = { sb, 0, 0, 0 };

	if (!v)
		return;
	walk(v, &c, cmd_word, cmd_filter);
	cmd_end(&c);
}

/* Steps a command's match may take: a word of several variables
 * against a long argument, or many words that may be left out, would
 * otherwise try every way. */
#define MATCH_STEPS 100000

/* Does text s match word w[0..wl) ('\1': any text)?  Returns how many
 * characters of w were literal and matched, or -1; *steps counts down. */
static long glob_word(const char *w, size_t wl, const char *s, long *steps)
{
	const char *star;
	long n = 0;

	if (--*steps < 0)
		return -1;
	if (!(star = memchr(w, '\1', wl)))
		return strlen(s) == wl && !memcmp(s, w, wl) ? (long)wl : -1;
	if (strncmp(s, w, (size_t)(star - w)))
		return -1;
	n = star - w;
	s += star - w;
	wl -= (size_t)(star - w) + 1;
	w = star + 1;
	for (;; s++) {
		long r = glob_word(w, wl, s, steps);

		if (r >= 0)
			return n + r;
		if (!*s || *steps < 0)
			return -1;
	}
}

/* How well command e from its word ai matches the command cw (its
 * words, one a line, up to an empty line): the literal characters
 * matched, or -1. */
static long match_words(const struct pt_exec *e, size_t ai, const char *cw,
			long *steps)
{
	size_t wl = strcspn(cw, "\n");
	long best = -1, r;
	int optional = cw[0] == '\2';

	if (!cw[0] || cw[0] == '\n')
		return ai == e->argc ? 0 : -1;
	if (--*steps < 0)
		return -1;
	if (optional && (best = match_words(e, ai, cw + wl + 1, steps)) >= 0 &&
	    ai == e->argc)
		return best;
	if (ai < e->argc) {
		const char *a = pt_exec_arg(e, ai), *w = cw + optional;
		size_t l = wl - (size_t)optional;
		long m = glob_word(w, l, a, steps);

		/* the program by its name or its path */
		if (m < 0 && !ai && strrchr(a, '/'))
			m = glob_word(w, l, strrchr(a, '/') + 1, steps);
		if (m >= 0 &&
		    (r = match_words(e, ai + 1, cw + wl + 1, steps)) >= 0 &&
		    m + r > best)
			best = m + r;
	}
	return best;
}

/* The best match of e among the commands cmds (struct pkg), or -1. */
static long best_of(const struct pt_exec *e, const char *cmds)
{
	long best = -1, r;

	while (*cmds) {
		const char *end = strstr(cmds, "\n\n");
		long steps = MATCH_STEPS;

		if ((r = match_words(e, 0, cmds, &steps)) > best)
			best = r;
		if (!end)
			break;
		cmds = end + 2;
	}
	return best;
}

/* The phase command e of a package runs, by the package's commands of
 * each (struct pkg; the closest match, a build where none is closer). */
static int phase_of(const struct pt_exec *e, char *const cmds[PH_COUNT])
{
	const char *x = e->argc ? strrchr(pt_exec_arg(e, 0), '/') : NULL;
	long best = -1, r;
	int ph, got = PH_BUILD;

	if (!e->argc)
		return PH_BUILD;
	/* opam's sandbox wrapper says it: sandbox.sh install CMD... */
	if (x && !strcmp(x, "/sandbox.sh") && e->argc > 1) {
		if (!strcmp(pt_exec_arg(e, 1), "install"))
			return PH_INSTALL;
		if (!strcmp(pt_exec_arg(e, 1), "remove"))
			return PH_REMOVE;
		return PH_BUILD;
	}
	for (ph = 0; ph < PH_COUNT; ph++)
		if ((r = best_of(e, cmds[ph])) > best) {
			best = r;
			got = ph;
		}
	return got;
}

static size_t pkg_of(struct pkg **pk, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*pk)[i].name, name))
			return i;
	*pk = pt_xrealloc(*pk, (*n + 1) * sizeof **pk);
	memset(&(*pk)[*n], 0, sizeof **pk);
	(*pk)[*n].name = pt_xstrdup(name);
	for (i = 0; i < PH_COUNT; i++) {
		(*pk)[*n].cmds[i] = (struct pt_sb)PT_SB_INIT;
		(*pk)[*n].t[i] = -1;
	}
	return (*n)++;
}

static void add_pre(struct pt_makedb *db, long t, long pre)
{
	struct pt_makedb_target *x;

	if (t < 0 || pre < 0 || t == pre)
		return;
	x = &db->t[t];
	x->pre = pt_xrealloc(x->pre, (x->npre + 1) * sizeof *x->pre);
	x->pre[x->npre++] = (uint32_t)pre;
}

/* The target of phase ph of package p, made if need be. */
static long phase_target(struct pt_makedb *db, struct pkg *p, int ph)
{
	struct pt_sb sb = PT_SB_INIT;

	if (p->t[ph] >= 0)
		return p->t[ph];
	pt_sb_addf(&sb, "%s%s", p->name, phase_name[ph]);
	p->t[ph] = (long)pt_makedb_target(db, sb.buf, sb.len);
	if (p->where && !db->t[p->t[ph]].where)
		db->t[p->t[ph]].where = pt_xstrdup(p->where);
	pt_sb_release(&sb);
	return p->t[ph];
}

struct pt_makedb *pt_opamdb_read(const struct pt_exec *opam)
{
	struct pt_makedb *db = pt_xcalloc(1, sizeof *db);
	struct pt_sb name = PT_SB_INIT;
	const struct pt_exec *c;
	struct pkg *pk = NULL;
	size_t n = 0, i, k;

	db->dir = pt_xstrdup(opam->cwd);
	for (c = opam->first_child; c; c = c->next_sibling) {
		struct pkg *p;
		size_t at;

		pt_sb_reset(&name);
		pt_exec_package(c, &name);
		if (!name.len)
			continue;
		at = pkg_of(&pk, &n, name.buf);     /* may move pk */
		p = &pk[at];
		if (p->text || p->where)
			continue;
		p->text = opam_file(c->cwd, p->name, &p->where);
		if (!p->where)
			p->where = pt_xstrdup("");      /* looked: none */
		for (k = 0; k < PH_COUNT; k++)
			commands_of(p->text ? p->text : "", k == PH_BUILD ?
				    "build" : phase_name[k] + 1, &p->cmds[k]);
	}
	for (i = 0; i < n; i++)
		if (!pk[i].where[0]) {
			free(pk[i].where);
			pk[i].where = NULL;
		}
	for (c = opam->first_child; c; c = c->next_sibling) {
		pt_sb_reset(&name);
		pt_exec_package(c, &name);
		if (name.len) {
			size_t at = pkg_of(&pk, &n, name.buf);  /* known */
			struct pkg *p = &pk[at];
			char *cmds[PH_COUNT] = { p->cmds[0].buf, p->cmds[1].buf,
						 p->cmds[2].buf };

			phase_target(db, p, phase_of(c, cmds));
		}
	}
	pt_sb_release(&name);
	/* Each package's build target, which keeps the package's commands
	 * of each phase as its recipe lines for pt_opamdb_job. */
	for (i = 0; i < n; i++) {
		long at = phase_target(db, &pk[i], PH_BUILD);
		struct pt_makedb_target *t = &db->t[at];    /* after: moves */

		t->recipe = pt_xmalloc(PH_COUNT * sizeof *t->recipe);
		for (k = 0; k < PH_COUNT; k++)
			t->recipe[k] = pt_sb_detach(&pk[i].cmds[k], NULL);
		t->nrecipe = PH_COUNT;
	}
	/* A package's build waits for the install of what it depends on;
	 * its install for its build. */
	for (i = 0; i < n; i++) {
		struct deps_ctx dc = { pk, n, i, NULL, 0, -1 };
		const char *v;

		add_pre(db, pk[i].t[PH_INSTALL], pk[i].t[PH_BUILD]);
		if (!pk[i].text)
			continue;
		dc.out = pt_xmalloc((n + 1) * sizeof *dc.out);
		if ((v = field_of(pk[i].text, "depends")))
			walk(v, &dc, deps_word, deps_filter);
		deps_commit(&dc);
		if ((v = field_of(pk[i].text, "depopts")))
			walk(v, &dc, deps_word, deps_filter);
		deps_commit(&dc);
		for (k = 0; k < dc.nout; k++) {
			const struct pkg *d = &pk[dc.out[k]];
			long first = pk[i].t[PH_BUILD] >= 0 ? pk[i].t[PH_BUILD] :
				     pk[i].t[PH_INSTALL];

			add_pre(db, first, d->t[PH_INSTALL] >= 0 ?
				d->t[PH_INSTALL] : d->t[PH_BUILD]);
		}
		free(dc.out);
	}
	for (i = 0; i < n; i++) {
		free(pk[i].name);
		free(pk[i].text);
		free(pk[i].where);
		for (k = 0; k < PH_COUNT; k++)
			pt_sb_release(&pk[i].cmds[k]);
	}
	free(pk);
	if (!db->n) {
		pt_makedb_free(db);
		return NULL;
	}
	db->mark = pt_xcalloc(db->n, 1);
	db->stack = pt_xmalloc(db->n * sizeof *db->stack);
	return db;
}

long pt_opamdb_job(const struct pt_makedb *db, const struct pt_exec *e)
{
	struct pt_sb sb = PT_SB_INIT;
	const struct pt_makedb_target *p;
	long t;
	int ph;

	pt_exec_package(e, &sb);
	if (!sb.len || (t = pt_makedb_find(db, sb.buf)) < 0) {
		pt_sb_release(&sb);
		return -1;
	}
	p = &db->t[t];
	ph = p->nrecipe == PH_COUNT ? phase_of(e, p->recipe) : PH_BUILD;
	if (ph != PH_BUILD) {
		pt_sb_addstr(&sb, phase_name[ph]);
		t = pt_makedb_find(db, sb.buf);
	}
	pt_sb_release(&sb);
	return t;
}
