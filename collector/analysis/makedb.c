/*
 * A make's database, read again from make itself (analysis/makedb.h).
 *
 * `make -pqk` prints every target make considered for the goals, with
 * its prerequisites (order-only ones after '|'), the recipe and the
 * makefile line it comes from, and the variables; -q runs no recipe, -k
 * has it look at every prerequisite although an earlier one (a phony
 * target) is out of date, so that implicit rules are searched for all.
 * Recipes are expanded here as far as the database tells: automatic
 * variables, variables it lists; a function, a variable from the
 * environment (which may differ from the recording's) or one it does
 * not list is "any text".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/makedb.h"
#include "base/strbuf.h"
#include "base/util.h"

#define ANY '\1'
#define DB_MAX (256u << 20)     /* bytes of database read, at most */
#define DB_SECONDS 60

struct var {
	char *name, *value;
	int any;                        /* from the environment, or set for
					 * some target: any text */
};

struct vars {
	struct var *v;
	size_t n, cap;
};

static uint32_t hstr(const char *s)
{
	return pt_hash_bytes(s, strlen(s));
}

/* ---- targets by name ---- */

static void rehash(struct pt_makedb *db)
{
	size_t i, h;

	free(db->hash);
	db->hcap = db->hcap ? 2 * db->hcap : 1024;
	db->hash = pt_xmalloc(db->hcap * sizeof *db->hash);
	memset(db->hash, 0xff, db->hcap * sizeof *db->hash);
	for (i = 0; i < db->n; i++) {
		for (h = hstr(db->t[i].name) & (db->hcap - 1);
		     db->hash[h] != UINT32_MAX; h = (h + 1) & (db->hcap - 1))
			;
		db->hash[h] = (uint32_t)i;
	}
}

static long find_exact(const struct pt_makedb *db, const char *name)
{
	size_t h;

	if (!db->hcap)
		return -1;
	for (h = hstr(name) & (db->hcap - 1); db->hash[h] != UINT32_MAX;
	     h = (h + 1) & (db->hcap - 1))
		if (!strcmp(db->t[db->hash[h]].name, name))
			return db->hash[h];
	return -1;
}

size_t pt_makedb_target(struct pt_makedb *db, const char *name, size_t len)
{
	char *s = pt_xmalloc(len + 1);
	long at;

	memcpy(s, name, len);
	s[len] = 0;
	if ((at = find_exact(db, s)) >= 0) {
		free(s);
		return (size_t)at;
	}
	if (2 * (db->n + 1) > db->hcap)
		rehash(db);
	db->t = pt_xrealloc(db->t, (db->n + 1) * sizeof *db->t);
	memset(&db->t[db->n], 0, sizeof *db->t);
	db->t[db->n].name = s;
	{
		size_t h;

		for (h = hstr(s) & (db->hcap - 1); db->hash[h] != UINT32_MAX;
		     h = (h + 1) & (db->hcap - 1))
			;
		db->hash[h] = (uint32_t)db->n;
	}
	return db->n++;
}

long pt_makedb_find(const struct pt_makedb *db, const char *name)
{
	size_t n = strlen(db->dir);

	if (name[0] == '/' && !strncmp(name, db->dir, n) && name[n] == '/') {
		long at = find_exact(db, name + n + 1);

		if (at >= 0)
			return at;
	}
	return find_exact(db, name);
}

int pt_makedb_script(const char *exe)
{
	char buf[128], *nl, *sp;
	ssize_t n;
	int fd;

	/* the programs' own directories hold no makefiles */
	if (exe[0] != '/' || !strncmp(exe, "/usr/", 5) ||
	    !strncmp(exe, "/bin/", 5) || !strncmp(exe, "/sbin/", 6))
		return 0;
	if ((fd = open(exe, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 4 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[n] = 0;
	if ((nl = strchr(buf, '\n')))
		*nl = 0;
	if ((sp = strchr(buf + 2, ' ')))
		*sp = 0;
	sp = strrchr(buf, '/');
	return sp && (!strcmp(sp, "/make") || !strcmp(sp, "/gmake"));
}

/* ---- running make ---- */

char *pt_makedb_join(const char *dir, const char *rel)
{
	struct pt_sb sb = PT_SB_INIT;
	char *out, *w, *r;

	if (rel[0] != '/') {
		pt_sb_addstr(&sb, dir);
		pt_sb_addch(&sb, '/');
	}
	pt_sb_addstr(&sb, rel);
	out = pt_sb_detach(&sb, NULL);
	/* lexically normal: no ".", "..", empty components */
	for (r = w = out; *r;) {
		while (*r == '/')
			r++;
		if (!*r)
			break;
		if (r[0] == '.' && (r[1] == '/' || !r[1])) {
			r++;
			continue;
		}
		if (r[0] == '.' && r[1] == '.' && (r[2] == '/' || !r[2])) {
			r += 2;
			while (w > out && *--w != '/')
				;
			continue;
		}
		*w++ = '/';
		while (*r && *r != '/')
			*w++ = *r++;
	}
	if (w == out)
		*w++ = '/';
	*w = 0;
	return out;
}

/* The arguments make -pqk gets from the recorded command line, and the
 * directory make worked in.  Returns the number of arguments. */
static size_t make_args(const struct pt_exec *e, char **av, size_t max,
			char **dir, size_t *goal, size_t *ngoal)
{
	size_t i, n = 0;

	*dir = pt_xstrdup(e->cwd);
	av[n++] = pt_xstrdup(e->exe[0] == '/' && !pt_makedb_script(e->exe) ?
			     e->exe : "make");
	av[n++] = pt_xstrdup("-pqk");
	{
		/* a makefile run by its #! line (debian/rules): make -f it */
		const char *a0 = e->argc ? pt_exec_arg(e, 0) : "";
		const char *b0 = strrchr(a0, '/') ? strrchr(a0, '/') + 1 : a0;

		if (strcmp(b0, "make") && strcmp(b0, "gmake") && a0[0]) {
			av[n++] = pt_xstrdup("-f");
			av[n++] = pt_xstrdup(a0);
		}
	}
	*ngoal = 0;
	/* Lines that name $(MAKE) run even under -q: let them do nothing
	 * (its value is "any text" when recipes are compared). */
	av[n++] = pt_xstrdup("MAKE=:");
	for (i = 1; i < e->argc && n + 3 < max; i++) {
		const char *a = pt_exec_arg(e, i);

		if (a[0] == '-' && a[1] == '-') {
			static const char *const keep[] = { "--file=",
				"--makefile=", "--directory=", "--include-dir=",
				"--environment-overrides", "--no-builtin-rules",
				"--no-builtin-variables", NULL };
			size_t k;

			for (k = 0; keep[k]; k++)
				if (!strncmp(a, keep[k], strlen(keep[k])))
					break;
			if (keep[k]) {
				av[n++] = pt_xstrdup(a);
				if (!strncmp(a, "--directory=", 12)) {
					char *d = pt_makedb_join(*dir, a + 12);

					free(*dir);
					*dir = d;
				}
			} else if ((!strcmp(a, "--file") ||
				    !strcmp(a, "--directory") ||
				    !strcmp(a, "--include-dir") ||
				    !strcmp(a, "--makefile")) &&
				   i + 1 < e->argc) {
				av[n++] = pt_xstrdup(a);
				av[n++] = pt_xstrdup(pt_exec_arg(e, ++i));
				if (!strcmp(a, "--directory")) {
					char *d = pt_makedb_join(*dir, av[n - 1]);

					free(*dir);
					*dir = d;
				}
			}
			continue;
		}
		if (a[0] == '-' && a[1]) {
			const char *p;

			for (p = a + 1; *p; p++) {
				if (strchr("fCIoW", *p)) {
					const char *v = p[1] ? p + 1 :
						i + 1 < e->argc ?
						pt_exec_arg(e, ++i) : NULL;
					char o[3] = { '-', *p, 0 };

					if (!v)
						break;
					if (*p == 'f' || *p == 'C' || *p == 'I') {
						av[n++] = pt_xstrdup(o);
						av[n++] = pt_xstrdup(v);
					}
					if (*p == 'C') {
						char *d = pt_makedb_join(*dir, v);

						free(*dir);
						*dir = d;
					}
					break;
				}
				if (*p == 'j' || *p == 'l') {
					/* an optional number, here or next */
					if (!p[1] && i + 1 < e->argc &&
					    strspn(pt_exec_arg(e, i + 1),
						   "0123456789.") ==
					    strlen(pt_exec_arg(e, i + 1)))
						i++;
					break;
				}
				if (*p == 'e' || *p == 'r' || *p == 'R') {
					char o[3] = { '-', *p, 0 };

					av[n++] = pt_xstrdup(o);
				}
			}
			continue;
		}
		if (!strchr(a, '='))
			goal[(*ngoal)++] = n;
		av[n++] = pt_xstrdup(a);        /* VAR=value or a goal */
	}
	av[n] = NULL;
	return n;
}

static char *run_make(char **av, const char *cwd, size_t *len,
		      const char *marker)
{
	struct pt_sb sb = PT_SB_INIT;
	int fd[2], st;
	pid_t pid;
	int64_t deadline = (int64_t)pt_mono_ns() +
			   (int64_t)DB_SECONDS * 1000000000;

	if (pipe2(fd, O_CLOEXEC) < 0)
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return NULL;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || chdir(cwd) < 0)
			_exit(127);
		dup2(null, 0);
		dup2(fd[1], 1);
		dup2(null, 2);
		/* A make under a make would take its parent's flags. */
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		unsetenv("MAKEOVERRIDES");
		execv(av[0], av);
		execvp("make", av);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		int64_t left = (deadline - (int64_t)pt_mono_ns()) / 1000000;
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			break;
		}
		pt_sb_grow(&sb, 65536);
		r = read(fd[0], sb.buf + sb.len, 65536);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		sb.len += (size_t)r;
		if (sb.len > DB_MAX) {
			kill(pid, SIGKILL);
			break;
		}
	}
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* -q: 0 up to date, 1 not; 2 is an error, and with no database
	 * (the makefile gone) nothing to read. */
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 2 ||
	    !memmem(sb.buf ? sb.buf : "", sb.len, marker, strlen(marker))) {
		pt_sb_release(&sb);
		return NULL;
	}
	pt_sb_addch(&sb, 0);
	*len = sb.len - 1;
	return pt_sb_detach(&sb, NULL);
}

/* ---- expansion ---- */

static const struct var *var_find(const struct vars *vs, const char *name,
				  size_t n)
{
	size_t i;

	for (i = 0; i < vs->n; i++)
		if (strlen(vs->v[i].name) == n &&
		    !memcmp(vs->v[i].name, name, n))
			return &vs->v[i];
	return NULL;
}

struct ctx {
	const struct vars *vs;
	const struct pt_makedb *db;
	const struct pt_makedb_target *t;
	const char *stem;
};

static void expand(struct pt_sb *out, const char *s, size_t n,
		   const struct ctx *c, int depth);

static void add_any(struct pt_sb *out)
{
	if (!out->len || out->buf[out->len - 1] != ANY)
		pt_sb_addch(out, ANY);
}

static void dir_or_file(struct pt_sb *out, const char *s, int which)
{
	const char *sl = strrchr(s, '/');

	if (which == 'D') {
		if (sl)
			pt_sb_add(out, s, (size_t)(sl - s));
		else
			pt_sb_addch(out, '.');
	} else
		pt_sb_addstr(out, sl ? sl + 1 : s);
}

static void automatic(struct pt_sb *out, int v, int part,
		      const struct ctx *c)
{
	const struct pt_makedb_target *t = c->t;
	size_t i, k;

	switch (v) {
	case '@':
		if (part)
			dir_or_file(out, t->name, part);
		else
			pt_sb_addstr(out, t->name);
		return;
	case '<':
		if (!t->npre) {
			add_any(out);
			return;
		}
		if (part)
			dir_or_file(out, c->db->t[t->pre[0]].name, part);
		else
			pt_sb_addstr(out, c->db->t[t->pre[0]].name);
		return;
	case '^':
	case '+':
		for (i = 0; i < t->npre; i++) {
			/* $^ lists each once */
			for (k = 0; v == '^' && k < i; k++)
				if (t->pre[k] == t->pre[i])
					break;
			if (v == '^' && k < i)
				continue;
			if (out->len && out->buf[out->len - 1] != ' ' && i)
				pt_sb_addch(out, ' ');
			if (part)
				dir_or_file(out, c->db->t[t->pre[i]].name, part);
			else
				pt_sb_addstr(out, c->db->t[t->pre[i]].name);
		}
		/* order-only ones are among pre: what they add is unsure */
		if (t->npre)
			add_any(out);
		return;
	case '*':
		if (c->stem)
			pt_sb_addstr(out, c->stem);
		else
			add_any(out);
		return;
	default:
		add_any(out);
	}
}

static void expand(struct pt_sb *out, const char *s, size_t n,
		   const struct ctx *c, int depth)
{
	size_t i = 0;

	if (depth > 30) {
		add_any(out);
		return;
	}
	while (i < n) {
		char ch = s[i];

		if (ch != '$' || i + 1 >= n) {
			pt_sb_addch(out, ch);
			i++;
			continue;
		}
		ch = s[++i];
		if (ch == '$') {
			pt_sb_addch(out, '$');
			i++;
		} else if (ch == '(' || ch == '{') {
			char close = ch == '(' ? ')' : '}';
			size_t start = ++i, lvl = 1;
			const char *name;
			size_t len;

			for (; i < n; i++) {
				if (s[i] == ch)
					lvl++;
				else if (s[i] == close && !--lvl)
					break;
			}
			name = s + start;
			len = i - start;
			if (i < n)
				i++;
			if (len == 2 && strchr("@<^+*", name[0]) &&
			    (name[1] == 'D' || name[1] == 'F')) {
				automatic(out, name[0], name[1], c);
				continue;
			}
			if (len == 1 && strchr("@<^+*?|%", name[0])) {
				automatic(out, name[0], 0, c);
				continue;
			}
			if (memchr(name, ' ', len) || memchr(name, '$', len) ||
			    memchr(name, ':', len) || memchr(name, ',', len) ||
			    memchr(name, '\t', len)) {
				add_any(out);   /* a function, a reference */
				continue;
			}
			{
				const struct var *v = var_find(c->vs, name, len);

				if (!v || v->any || (len == 4 &&
						     !memcmp(name, "MAKE", 4)))
					add_any(out);
				else
					expand(out, v->value, strlen(v->value),
					       c, depth + 1);
			}
		} else {
			i++;
			if (strchr("@<^+*?|%", ch))
				automatic(out, ch, 0, c);
			else {
				const struct var *v = var_find(c->vs, &ch, 1);

				if (!v || v->any)
					add_any(out);
				else
					expand(out, v->value, strlen(v->value),
					       c, depth + 1);
			}
		}
	}
}

/* Blanks and backslash-newlines as one space, none at the ends. */
static char *normal(const char *s, size_t n)
{
	char *o = pt_xmalloc(n + 1), *w = o;
	size_t i;
	int blank = 0;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '\\' && i + 1 < n && s[i + 1] == '\n') {
			i++;
			blank = 1;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n') {
			blank = 1;
			continue;
		}
		if (blank && w > o)
			*w++ = ' ';
		blank = 0;
		*w++ = ch;
	}
	*w = 0;
	return o;
}

/* s matches pattern p, ANY in p standing for any text. */
static int glob(const char *p, const char *s)
{
	const char *star = NULL, *back = NULL;

	while (*s) {
		if (*p == ANY) {
			star = ++p;
			back = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++back;
		} else
			return 0;
	}
	while (*p == ANY)
		p++;
	return !*p;
}

/* ---- reading the database ---- */

static void add_var(struct vars *vs, const char *line, int any)
{
	const char *eq = strstr(line, " = "), *p;
	size_t off = 3;

	if ((p = strstr(line, " := ")) && (!eq || p < eq)) {
		eq = p;
		off = 4;
	}
	if ((p = strstr(line, " ::= ")) && (!eq || p < eq)) {
		eq = p;
		off = 5;
	}
	if (!eq || eq == line || memchr(line, ' ', (size_t)(eq - line)))
		return;
	if (vs->n == vs->cap) {
		vs->cap = vs->cap ? 2 * vs->cap : 256;
		vs->v = pt_xrealloc(vs->v, vs->cap * sizeof *vs->v);
	}
	vs->v[vs->n].name = pt_xmalloc((size_t)(eq - line) + 1);
	memcpy(vs->v[vs->n].name, line, (size_t)(eq - line));
	vs->v[vs->n].name[eq - line] = 0;
	vs->v[vs->n].value = pt_xstrdup(eq + off);
	vs->v[vs->n].any = any;
	vs->n++;
}

/* "NAME = VALUE" after a target's colon: NAME's value in a recipe
 * depends on the target it runs for (and is inherited by that target's
 * prerequisites), so that in every recipe it is any text. */
static void target_var(struct vars *vs, const char *p)
{
	size_t n, i;

	for (;;) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, "override ", 9))
			p += 9;
		else if (!strncmp(p, "export ", 7))
			p += 7;
		else if (!strncmp(p, "private ", 8))
			p += 8;
		else
			break;
	}
	n = strcspn(p, " :+?!=");
	if (!n)
		return;
	for (i = 0; i < vs->n; i++)
		if (strlen(vs->v[i].name) == n &&
		    !memcmp(vs->v[i].name, p, n)) {
			vs->v[i].any = 1;
			return;
		}
	{
		struct pt_sb sb = PT_SB_INIT;

		pt_sb_add(&sb, p, n);
		pt_sb_addstr(&sb, " = x");
		add_var(vs, sb.buf, 1);
		pt_sb_release(&sb);
	}
}

struct raw {                    /* a target's recipe as printed */
	size_t t;
	struct pt_sb text;
	char *stem;
};

/* "#  Also makes: a b": a grouped target's (&:, a pattern rule's several
 * targets) others, made by the same run of its recipe.  Each is taken
 * as a prerequisite of t (and t of each, from their own line): what
 * needs one needs the job that made them all. */
static void also_makes(struct pt_makedb *db, size_t t, const char *p)
{
	while (*p) {
		const char *w;
		size_t o;

		while (*p == ' ')
			p++;
		for (w = p; *p && *p != ' '; p++)
			;
		if (p == w)
			break;
		o = pt_makedb_target(db, w, (size_t)(p - w));
		db->t[t].grouped = 1;
		if (o == t)
			continue;
		db->t[t].pre = pt_xrealloc(db->t[t].pre, (db->t[t].npre + 1) *
					   sizeof *db->t[t].pre);
		db->t[t].pre[db->t[t].npre++] = (uint32_t)o;
	}
}

static void parse(struct pt_makedb *db, char *buf, struct vars *vs,
		  struct raw **raws, size_t *nraw)
{
	char *line = buf, *next;
	int section = 0;                /* 1 variables, 2 files */
	int notatarget = 0, env = 0;
	long cur = -1;
	struct raw *r = NULL;

	for (; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = 0;
		if (!strncmp(line, "# Variables", 11)) {
			section = 1;
			continue;
		}
		if (!strcmp(line, "# Files")) {
			section = 2;
			continue;
		}
		if (!strncmp(line, "# files hash-table", 18) ||
		    !strncmp(line, "# VPATH", 7) ||
		    !strncmp(line, "# Pattern-specific", 18) ||
		    !strncmp(line, "# Implicit Rules", 16) ||
		    !strncmp(line, "# Directories", 13)) {
			section = 0;
			cur = -1;
			continue;
		}
		if (section == 1) {
			if (line[0] == '#') {
				env = !strcmp(line, "# environment");
				continue;
			}
			if (!strncmp(line, "define ", 7)) {
				/* a multi-line value: unknown text */
				char *name = line + 7;

				while (next && strncmp(next, "endef", 5)) {
					next = strchr(next, '\n');
					if (next)
						next++;
				}
				if (next && (next = strchr(next, '\n')))
					next++;
				if (*name) {
					struct pt_sb sb = PT_SB_INIT;

					pt_sb_addf(&sb, "%s = x", name);
					add_var(vs, sb.buf, 1);
					pt_sb_release(&sb);
				}
				continue;
			}
			add_var(vs, line, env);
			env = 0;
			continue;
		}
		if (section != 2)
			continue;
		if (!line[0]) {
			cur = -1;
			r = NULL;
			continue;
		}
		if (!strcmp(line, "# Not a target:")) {
			notatarget = 1;
			continue;
		}
		if (line[0] == '#') {
			const char *p;

			if (cur < 0)
				continue;
			if (strstr(line, "#  Phony target"))
				db->t[cur].phony = 1;
			if (!strncmp(line, "#  Also makes: ", 15))
				also_makes(db, (size_t)cur, line + 15);
			if ((p = strstr(line, "pattern stem: '"))) {
				char *q;

				p += 15;
				if ((q = strrchr(p, '\'')) && r) {
					free(r->stem);
					r->stem = pt_xmalloc((size_t)(q - p) + 1);
					memcpy(r->stem, p, (size_t)(q - p));
					r->stem[q - p] = 0;
				}
			}
			if ((p = strstr(line, "recipe to execute (from '"))) {
				const char *q = strchr(p + 25, '\'');
				const char *l = strstr(p, ", line ");

				if (q && l) {
					struct pt_sb sb = PT_SB_INIT;

					pt_sb_add(&sb, p + 25, (size_t)(q - p - 25));
					pt_sb_addf(&sb, ":%ld", atol(l + 7));
					free(db->t[cur].where);
					db->t[cur].where = pt_sb_detach(&sb, NULL);
				}
			}
			continue;
		}
		if (line[0] == '\t') {
			if (cur >= 0 && r) {
				if (r->text.len)
					pt_sb_addch(&r->text, '\n');
				pt_sb_addstr(&r->text, line + 1);
			}
			continue;
		}
		/* "target: prerequisites | order-only" */
		{
			char *colon = line, *p;
			int skip = notatarget;

			notatarget = 0;
			while ((colon = strchr(colon, ':')) && colon > line &&
			       colon[-1] == '\\')
				colon++;
			if (!colon || skip || colon == line) {
				cur = -1;
				continue;
			}
			p = colon + 1;
			if (*p == ':')
				p++;
			if (strchr(p, '=')) {   /* a target-specific variable */
				target_var(vs, p);
				continue;
			}
			cur = (long)pt_makedb_target(db, line, (size_t)(colon - line));
			if (!strncmp(line, ".NOTPARALLEL", 12) &&
			    colon - line == 12)
				db->notparallel = 1;
			*raws = pt_xrealloc(*raws, (*nraw + 1) * sizeof **raws);
			r = &(*raws)[(*nraw)++];
			memset(r, 0, sizeof *r);
			r->t = (size_t)cur;
			pt_sb_init(&r->text);
			while (*p) {
				char *w;

				while (*p == ' ' || *p == '|')
					p++;
				if (!*p)
					break;
				for (w = p; *p && *p != ' '; p++)
					;
				{
					size_t pre = pt_makedb_target(db, w, (size_t)(p - w));
					struct pt_makedb_target *t = &db->t[cur];

					t->pre = pt_xrealloc(t->pre, (t->npre + 1) *
							     sizeof *t->pre);
					t->pre[t->npre++] = (uint32_t)pre;
				}
			}
		}
	}
}

/* "FILE:N", N the first line of a recipe, as "FILE:M", M the line of
 * its rule (where a prerequisite is added): the line above it, and up
 * over blank and comment lines and a rule's backslash-continued lines. */
static void rule_lines(struct pt_makedb *db)
{
	char *file = NULL, *text = NULL;
	char **line = NULL;
	size_t nline = 0, i;

	for (i = 0; i < db->n; i++) {
		char *w = db->t[i].where, *colon;
		long l;

		if (!w || !(colon = strrchr(w, ':')) || (l = atol(colon + 1)) < 2)
			continue;
		*colon = 0;
		if (!file || strcmp(file, w)) {
			struct pt_sb sb = PT_SB_INIT;
			char *path = pt_makedb_join(db->dir, w), *p;

			free(file);
			free(text);
			free(line);
			file = pt_xstrdup(w);
			line = NULL;
			nline = 0;
			text = NULL;
			if (pt_sb_read_path(&sb, path, 64u << 20) >= 0) {
				pt_sb_addch(&sb, 0);
				text = pt_sb_detach(&sb, NULL);
				for (p = text; p; ) {
					line = pt_xrealloc(line, (nline + 1) *
							   sizeof *line);
					line[nline++] = p;
					if ((p = strchr(p, '\n')))
						*p++ = 0;
				}
			} else
				pt_sb_release(&sb);
			free(path);
		}
		*colon = ':';
		if ((size_t)l > nline)
			continue;
		l--;                    /* the line above, 1-based */
		while (l > 1 && (!line[l - 1][0] || line[l - 1][0] == '#'))
			l--;
		while (l > 1 && line[l - 2][0] &&
		       line[l - 2][strlen(line[l - 2]) - 1] == '\\')
			l--;
		{
			struct pt_sb sb = PT_SB_INIT;

			pt_sb_add(&sb, w, (size_t)(colon - w));
			pt_sb_addf(&sb, ":%ld", l);
			free(db->t[i].where);
			db->t[i].where = pt_sb_detach(&sb, NULL);
		}
	}
	free(file);
	free(text);
	free(line);
}

/*
 * Run the tool (av, n arguments, freed here) in cwd; its output, which
 * must hold marker, in *buf, and a new database of directory dir for it.
 * NULL, dir freed, when the tool could not say.
 */
static struct pt_makedb *db_of_run(char **av, size_t n, const char *cwd,
				   const char *marker, char *dir, char **buf)
{
	struct pt_makedb *db;
	size_t i, len;

	*buf = run_make(av, cwd, &len, marker);
	for (i = 0; i < n; i++)
		free(av[i]);
	if (!*buf) {
		free(dir);
		return NULL;
	}
	db = pt_xcalloc(1, sizeof *db);
	db->dir = dir;
	return db;
}

size_t pt_makedb_goals(const struct pt_exec *e, char **goal, size_t max,
		       char **dir)
{
	char *av[256];
	size_t n, i, at[256], nat, ng = 0;

	n = make_args(e, av, sizeof av / sizeof *av, dir, at, &nat);
	for (i = 0; i < nat && ng < max; i++) {
		goal[ng++] = av[at[i]];
		av[at[i]] = NULL;
	}
	for (i = 0; i < n; i++)
		free(av[i]);
	return ng;
}

/*
 * Number the targets in the order make -j1 takes them: from each goal
 * in turn (the command line's, else .DEFAULT_GOAL), a target after its
 * prerequisites, those in the order listed.
 */
static void walk(struct pt_makedb *db, char *const *goal, size_t ngoal)
{
	size_t *at = pt_xcalloc(db->n + 1, sizeof *at), g, sp;
	uint32_t *stack = pt_xmalloc((db->n + 1) * sizeof *stack);
	uint8_t *seen = pt_xcalloc(db->n + 1, 1);
	long next = 0;

	db->serial = pt_xmalloc((db->n ? db->n : 1) * sizeof *db->serial);
	for (g = 0; g < db->n; g++)
		db->serial[g] = -1;
	for (g = 0; g < ngoal; g++) {
		long t = pt_makedb_find(db, goal[g]);

		if (t < 0 || seen[t])
			continue;

		sp = 0;
		stack[sp++] = (uint32_t)t;
		seen[t] = 1;
		while (sp) {
			uint32_t x = stack[sp - 1];
			const struct pt_makedb_target *tx = &db->t[x];

			if (at[x] < tx->npre) {
				uint32_t p = tx->pre[at[x]++];

				if (!seen[p]) {
					seen[p] = 1;
					stack[sp++] = p;
				}
				continue;
			}
			db->serial[x] = next++;
			sp--;
		}
	}
	free(at);
	free(stack);
	free(seen);
}

struct pt_makedb *pt_makedb_read(const struct pt_exec *e)
{
	char *av[256], *dir, *buf, *goals[256];
	size_t n, i, nraw = 0, goal[256], ngoal;
	struct pt_makedb *db;
	struct vars vs = { 0 };
	struct raw *raws = NULL;
	struct stat st;

	if (!e->argc || !e->cwd[0] || stat(e->cwd, &st) < 0)
		return NULL;
	n = make_args(e, av, sizeof av / sizeof *av, &dir, goal, &ngoal);
	for (i = 0; i < ngoal; i++)
		goals[i] = pt_xstrdup(av[goal[i]]);
	db = db_of_run(av, n, e->cwd, "\n# Files\n", dir, &buf);
	if (!db) {
		for (i = 0; i < ngoal; i++)
			free(goals[i]);
		return NULL;
	}
	{
		/* The database is printed at the end: a sub-make's that ran
		 * anyway came first.  The last one is this make's. */
		char *p = buf, *q;

		while ((q = strstr(p + 1, "\n# Make data base")))
			p = q;
		parse(db, p, &vs, &raws, &nraw);
	}
	for (i = 0; i < nraw; i++) {
		struct pt_makedb_target *t = &db->t[raws[i].t];
		struct ctx c = { &vs, db, t, raws[i].stem };
		const char *s = raws[i].text.buf ? raws[i].text.buf : "";
		const char *end;

		/* One line of the recipe is one command (a backslash-
		 * newline continues it). */
		while (raws[i].text.len && *s) {
			struct pt_sb x = PT_SB_INIT;
			size_t k, lit = 0;
			char *nl;

			for (end = s; *end; end++)
				if (*end == '\n' && (end == s || end[-1] != '\\'))
					break;
			while (s < end && strchr(" \t@+-", *s))
				s++;
			expand(&x, s, (size_t)(end - s), &c, 0);
			nl = normal(x.buf ? x.buf : "", x.len);
			pt_sb_release(&x);
			/* A blank before unknown text is the text's own: it
			 * may be empty ("-O3 $(EMPTY) -c" ran as "-O3 -c");
			 * so is one after unknown text that begins the line
			 * ("$(ENV) prog" ran as "prog"). */
			for (k = 0, lit = 0; nl[k]; k++)
				if (!(nl[k] == ' ' && nl[k + 1] == ANY) &&
				    !(nl[k] == ' ' && lit &&
				      strspn(nl, "\1") >= k))
					nl[lit++] = nl[k];
			nl[lit] = 0;
			lit = 0;
			for (k = 0; nl[k]; k++)
				lit += nl[k] != ANY && nl[k] != ' ';
			/* A line that is mostly unknown would match any. */
			if (lit >= 4) {
				t->recipe = pt_xrealloc(t->recipe,
					(t->nrecipe + 1) * sizeof *t->recipe);
				t->recipe[t->nrecipe++] = nl;
			} else
				free(nl);
			s = *end ? end + 1 : end;
		}
		pt_sb_release(&raws[i].text);
		free(raws[i].stem);
	}
	free(raws);
	rule_lines(db);
	if (!ngoal) {
		const struct var *v = var_find(&vs, ".DEFAULT_GOAL", 13);

		if (v && v->value[0])
			goals[ngoal++] = pt_xstrdup(v->value);
	}
	walk(db, goals, ngoal);
	for (i = 0; i < ngoal; i++)
		free(goals[i]);
	for (i = 0; i < vs.n; i++) {
		free(vs.v[i].name);
		free(vs.v[i].value);
	}
	free(vs.v);
	free(buf);
	db->mark = pt_xcalloc(db->n ? db->n : 1, 1);
	db->stack = pt_xmalloc((db->n ? db->n : 1) * sizeof *db->stack);
	return db;
}

/* ---- ninja: its graph ---- */

struct node {
	char *id, *label;
	int edge;                       /* a build edge, not a file */
	long t;                         /* the file's target */
	uint32_t *in;                   /* an edge's inputs (targets) */
	size_t nin;
};

static struct node *node_of(struct node **v, size_t *n, const char *id,
			    size_t len)
{
	size_t i;

	for (i = *n; i-- > 0;)
		if (strlen((*v)[i].id) == len && !memcmp((*v)[i].id, id, len))
			return &(*v)[i];
	*v = pt_xrealloc(*v, (*n + 1) * sizeof **v);
	memset(&(*v)[*n], 0, sizeof **v);
	(*v)[*n].id = pt_xmalloc(len + 1);
	memcpy((*v)[*n].id, id, len);
	(*v)[*n].id[len] = 0;
	(*v)[*n].t = -1;
	return &(*v)[(*n)++];
}

/* The quoted string at *p: its start, its length; *p past it. */
static const char *quoted(const char **p, size_t *len)
{
	const char *s = strchr(*p, '"'), *e;

	if (!s || !(e = strchr(s + 1, '"')))
		return NULL;
	*len = (size_t)(e - s - 1);
	*p = e + 1;
	return s + 1;
}

struct pt_makedb *pt_makedb_read_ninja(const struct pt_exec *e)
{
	char *av[256], *buf, *line, *next;
	size_t n = 0, i, nn = 0, k;
	struct pt_makedb *db;
	struct node *v = NULL;
	struct stat st;
	char *dir;
	int pass;

	if (!e->argc || !e->cwd[0] || stat(e->cwd, &st) < 0)
		return NULL;
	dir = pt_xstrdup(e->cwd);
	av[n++] = pt_xstrdup(e->exe[0] == '/' ? e->exe : "ninja");
	for (i = 1; i < e->argc && n + 4 < 256; i++) {
		const char *a = pt_exec_arg(e, i);

		if ((!strcmp(a, "-C") || !strcmp(a, "-f")) && i + 1 < e->argc) {
			av[n++] = pt_xstrdup(a);
			av[n++] = pt_xstrdup(pt_exec_arg(e, ++i));
			if (a[1] == 'C') {
				char *d = pt_makedb_join(dir, av[n - 1]);

				free(dir);
				dir = d;
			}
		} else if (!strcmp(a, "-j") || !strcmp(a, "-l") ||
			   !strcmp(a, "-k") || !strcmp(a, "-d") ||
			   !strcmp(a, "-t") || !strcmp(a, "-w"))
			i++;
		else if (a[0] != '-')
			av[n++] = pt_xstrdup(a);        /* a target */
	}
	/* -t graph after the options, the targets last */
	{
		size_t first = 1;

		while (first < n && av[first][0] == '-')
			first += 2;
		memmove(av + first + 2, av + first, (n - first) * sizeof *av);
		av[first] = pt_xstrdup("-t");
		av[first + 1] = pt_xstrdup("graph");
		n += 2;
		av[n] = NULL;
	}
	db = db_of_run(av, n, e->cwd, "digraph ninja", dir, &buf);
	if (!db)
		return NULL;
	/* Labels first (a node may be named after it is used), then the
	 * arrows into edges, then those out of them. */
	for (pass = 0; pass < 3; pass++) {
		char *copy = pt_xstrdup(buf);

		for (line = copy; line && *line; line = next) {
			const char *p = line, *a, *b, *lab;
			size_t la, lb, ll;

			if ((next = strchr(line, '\n')))
				*next++ = 0;
			if (line[0] != '"' || !(a = quoted(&p, &la)))
				continue;
			if (!strncmp(p, " -> ", 4)) {
				struct node *x, *y;

				if (!pass || !(b = quoted(&p, &lb)))
					continue;
				x = node_of(&v, &nn, a, la);
				y = node_of(&v, &nn, b, lb);
				/* pass 1: an edge's inputs; pass 2: its
				 * outputs, which may come first */
				if (!x->edge && y->edge && x->t >= 0) {
					if (pass != 1)
						continue;
					y->in = pt_xrealloc(y->in, (y->nin + 1) *
							    sizeof *y->in);
					y->in[y->nin++] = (uint32_t)x->t;
				} else if (x->edge && y->t >= 0) {
					struct pt_makedb_target *t =
						&db->t[y->t];

					if (pass != 2)
						continue;
					for (k = 0; k < x->nin; k++) {
						t->pre = pt_xrealloc(t->pre,
							(t->npre + 1) *
							sizeof *t->pre);
						t->pre[t->npre++] = x->in[k];
					}
					if (strcmp(x->label, "phony") && !t->where)
						t->where = pt_xstrdup("build.ninja");
				} else if (!x->edge && !y->edge && x->t >= 0 &&
					   y->t >= 0) {
					struct pt_makedb_target *t =
						&db->t[y->t];

					if (pass != 2)
						continue;
					t->pre = pt_xrealloc(t->pre, (t->npre + 1) *
							     sizeof *t->pre);
					t->pre[t->npre++] = (uint32_t)x->t;
					if (!strstr(p, "phony") && !t->where)
						t->where = pt_xstrdup("build.ninja");
				}
				continue;
			}
			if (pass || !(lab = strstr(p, "label=\"")))
				continue;
			lab += 7;
			ll = strcspn(lab, "\"");
			{
				struct node *x = node_of(&v, &nn, a, la);

				free(x->label);
				x->label = pt_xmalloc(ll + 1);
				memcpy(x->label, lab, ll);
				x->label[ll] = 0;
				x->edge = strstr(p, "ellipse") != NULL;
				if (!x->edge)
					x->t = (long)pt_makedb_target(db, lab, ll);
			}
		}
		free(copy);
	}
	for (i = 0; i < nn; i++) {
		free(v[i].id);
		free(v[i].label);
		free(v[i].in);
	}
	free(v);
	free(buf);
	db->mark = pt_xcalloc(db->n ? db->n : 1, 1);
	db->stack = pt_xmalloc((db->n ? db->n : 1) * sizeof *db->stack);
	return db;
}

long pt_makedb_match(const struct pt_makedb *db, const char *cmd, long prefer)
{
	char *c = normal(cmd, strlen(cmd));
	long found = -1;
	size_t i, k;
	int several = 0, preferred = 0;

	for (i = 0; i < db->n; i++)
		for (k = 0; k < db->t[i].nrecipe; k++) {
			const char *p = db->t[i].recipe[k];

			if (p[0] != ANY && p[0] != c[0])
				continue;
			if (glob(p, c)) {
				if (found >= 0 && found != (long)i)
					several = 1;
				found = (long)i;
				/* a later line of its recipe: the same run */
				preferred |= (long)i == prefer && k > 0;
			}
		}
	free(c);
	if (several)
		return preferred ? prefer : -2;         /* which one is unsure */
	return found;
}

long pt_makedb_line(const struct pt_makedb *db, size_t t, const char *cmd)
{
	char *c = normal(cmd, strlen(cmd));
	size_t k;
	long line = -1;

	for (k = 0; k < db->t[t].nrecipe && line < 0; k++)
		if (glob(db->t[t].recipe[k], c))
			line = (long)k;
	free(c);
	return line;
}

long pt_makedb_match_after(const struct pt_makedb *db, const char *cmd,
			   long after)
{
	char *c = normal(cmd, strlen(cmd));
	long from = after >= 0 && db->serial ? db->serial[after] : -1;
	long found = -1;
	size_t i;

	for (i = 0; i < db->n && db->serial; i++) {
		const struct pt_makedb_target *t = &db->t[i];

		if (t->nrecipe && db->serial[i] > from &&
		    (found < 0 || db->serial[i] < db->serial[found]) &&
		    glob(t->recipe[0], c))
			found = (long)i;
	}
	free(c);
	return found;
}

int pt_makedb_reaches(struct pt_makedb *db, size_t a, size_t b)
{
	size_t sp = 0, k;
	int found = 0;

	if (a == b)
		return 1;
	memset(db->mark, 0, db->n);
	db->stack[sp++] = (uint32_t)b;
	db->mark[b] = 1;
	while (sp && !found) {
		const struct pt_makedb_target *t = &db->t[db->stack[--sp]];

		for (k = 0; k < t->npre; k++) {
			uint32_t p = t->pre[k];

			if (p == a) {
				found = 1;
				break;
			}
			if (!db->mark[p]) {
				db->mark[p] = 1;
				db->stack[sp++] = p;
			}
		}
	}
	return found;
}

size_t pt_makedb_nearest(struct pt_makedb *db, size_t b, const uint8_t *stop,
			 uint32_t *out)
{
	size_t sp = 0, n = 0, k;

	memset(db->mark, 0, db->n);
	db->stack[sp++] = (uint32_t)b;
	db->mark[b] = 1;
	while (sp) {
		const struct pt_makedb_target *t = &db->t[db->stack[--sp]];

		for (k = 0; k < t->npre; k++) {
			uint32_t p = t->pre[k];

			if (db->mark[p])
				continue;
			db->mark[p] = 1;
			if (stop[p])
				out[n++] = p;
			else
				db->stack[sp++] = p;
		}
	}
	return n;
}

void pt_makedb_free(struct pt_makedb *db)
{
	size_t i, k;

	if (!db)
		return;
	for (i = 0; i < db->n; i++) {
		free(db->t[i].name);
		free(db->t[i].pre);
		for (k = 0; k < db->t[i].nrecipe; k++)
			free(db->t[i].recipe[k]);
		free(db->t[i].recipe);
		free(db->t[i].where);
	}
	free(db->t);
	free(db->serial);
	free(db->hash);
	free(db->mark);
	free(db->stack);
	free(db->dir);
	free(db);
}
