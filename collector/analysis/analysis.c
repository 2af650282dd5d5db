/* Labels, grouping, self times, parallelism, critical path; see analysis.h. */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/quote.h"
#include "base/util.h"

#define NONE UINT32_MAX

/* ---- small string helpers ---- */

int pt_term_width(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (c && atoi(c) > 0)
		return atoi(c);
	return 100;
}

const char *pt_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s)
		return path;
	/* "dir/" names the directory: keep it whole rather than say "". */
	return s[1] ? s + 1 : path;
}

void pt_sb_add_iso8601(struct pt_sb *sb, int64_t t_ns)
{
	time_t secs = (time_t)(t_ns / 1000000000);
	int64_t ms = (t_ns % 1000000000) / 1000000;
	struct tm tm;
	char buf[64];

	if (ms < 0) {
		ms += 1000;
		secs--;
	}
	if (!gmtime_r(&secs, &tm)) {
		pt_sb_addstr(sb, "?");
		return;
	}
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	pt_sb_addf(sb, "%s.%03dZ", buf, (int)ms);
}

size_t pt_utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are invalid. */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

/*
 * Append s to sb for display: control characters become spaces (a
 * newline in a sh -c script must not break a line of output), invalid
 * UTF-8 bytes become '?', so that whatever reads a label reads text.
 */
static void add_clean(struct pt_sb *sb, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	pt_sb_grow(sb, n);
	while (i < n) {
		size_t l = pt_utf8_len(p + i, n - i);

		if (l == 0) {
			sb->buf[sb->len++] = '?';
			i++;
		} else if (l == 1) {
			sb->buf[sb->len++] = p[i] < 0x20 || p[i] == 0x7f ?
					     ' ' : (char)p[i];
			i++;
		} else {
			memcpy(sb->buf + sb->len, p + i, l);
			sb->len += l;
			i += l;
		}
	}
	sb->buf[sb->len] = '\0';
}

/* Cut sb back to at most max bytes from `from` on, at a UTF-8 boundary. */
static void cut_label(struct pt_sb *sb, size_t from, size_t max)
{
	size_t end;

	if (sb->len - from <= max)
		return;
	end = from + max - 3;
	while (end > from && ((unsigned char)sb->buf[end] & 0xc0) == 0x80)
		end--;
	sb->len = end;
	pt_sb_addstr(sb, "...");
}

/* ---- labels ---- */

static const char *const compilers[] = {
	"cc", "gcc", "g++", "c++", "clang", "clang++", "cpp", "cc1",
	"cc1plus", "cc1obj", "cc1objplus", "lto1", "f951", "as", "gas", "ld",
	"ld.bfd", "ld.gold", "ld.lld", "lld", "mold", "collect2", "tcc", "icc",
	"icx", "nvcc", "gfortran", "nasm", "yasm", "ocamlc", "ocamlopt",
	"ocamlfind", "ocamldep", "ocamllex", "ocamlyacc", "ocamlmklib",
	"menhir", "rustc", "javac", "ghc", "zig", "go", "gnatmake", "gcj",
	NULL,
};

static const char *const source_exts[] = {
	"c", "h", "cc", "cp", "cxx", "cpp", "CPP", "c++", "C", "i", "ii", "m",
	"mm", "s", "S", "sx", "asm", "ml", "mli", "mll", "mly", "re", "rei",
	"rs", "go", "f", "for", "f90", "f95", "f03", "F", "F90", "java", "hs",
	"lhs", "d", "zig", "cu", "adb", "ads", "pas", "v", "sv", NULL,
};

static int in_list(const char *const *list, const char *s, size_t n)
{
	for (; *list; list++)
		if (strlen(*list) == n && !memcmp(*list, s, n))
			return 1;
	return 0;
}

/*
 * Is prog a compiler, assembler or linker?  Versioned and cross names
 * count: gcc-12, x86_64-linux-gnu-gcc-12, clang-15, ocamlopt.opt.
 */
static int is_compiler(const char *prog)
{
	size_t n = strlen(prog);
	const char *dash;

	if (n > 4 && !strcmp(prog + n - 4, ".opt"))
		n -= 4;
	for (;;) {
		/* A trailing "-12" or "-12.1" is a version. */
		size_t k = n;

		while (k > 0 && ((prog[k - 1] >= '0' && prog[k - 1] <= '9') ||
				 prog[k - 1] == '.'))
			k--;
		if (k > 0 && k < n && prog[k - 1] == '-')
			n = k - 1;
		else
			break;
	}
	if (in_list(compilers, prog, n))
		return 1;
	/* Cross tools: the part after the target triplet. */
	dash = memrchr(prog, '-', n);
	return dash && in_list(compilers, dash + 1,
			       n - (size_t)(dash + 1 - prog));
}

static int has_source_ext(const char *arg)
{
	const char *base = pt_basename(arg), *dot = strrchr(base, '.');

	return dot && dot != base && in_list(source_exts, dot + 1,
					      strlen(dot + 1));
}

static int under_tmp(const char *path)
{
	static const char *const dirs[] = {
		"/tmp/", "/var/tmp/", "/dev/shm/", NULL,
	};
	const char *const *d;

	for (d = dirs; *d; d++)
		if (!strncmp(path, *d, strlen(*d)))
			return 1;
	return 0;
}

/*
 * Options of make whose value is the next argument.  -j and -l take it
 * only when it is a number: "make -j install" builds install.
 */
static int takes_value(const char *prog, const char *opt)
{
	static const char *const make_opts[] = {
		"-C", "-f", "-I", "-o", "-W", "-j", "-l", "--directory",
		"--file", "--makefile", "--include-dir", NULL,
	};

	if (strcmp(prog, "make") && strcmp(prog, "gmake"))
		return 0;
	return in_list(make_opts, opt, strlen(opt));
}

int64_t pt_cpu_part_us(int64_t us)
{
	return us < 0 ? 0 : us > PT_CPU_MAX_US ? PT_CPU_MAX_US : us;
}

int64_t pt_exec_cpu_us(const struct pt_exec *e)
{
	return pt_cpu_part_us(e->utime_us) + pt_cpu_part_us(e->stime_us);
}

void pt_exec_quote(const struct pt_exec *e, struct pt_sb *sb)
{
	size_t i;

	for (i = 0; i < e->argc; i++) {
		if (i)
			pt_sb_addch(sb, ' ');
		pt_quote_shell(sb, pt_exec_arg(e, i));
	}
}

const char *pt_exec_prog(const struct pt_exec *e)
{
	if (e->argc > 0 && pt_exec_arg(e, 0)[0])
		return pt_basename(pt_exec_arg(e, 0));
	if (e->exe && e->exe[0])
		return pt_basename(e->exe);
	return "?";
}

static int is_dep_file(const char *arg)
{
	size_t n = strlen(arg);

	return n > 2 && !strcmp(arg + n - 2, ".d");
}

/* The argument of a compiler's command line that names its work. */
static const char *compiler_work(const struct pt_exec *e)
{
	const char *out = NULL, *tmp_src = NULL;
	size_t i;

	for (i = 1; i < e->argc; i++) {
		const char *a = pt_exec_arg(e, i);

		if (!strcmp(a, "-o") && i + 1 < e->argc) {
			out = pt_exec_arg(e, ++i);
			continue;
		}
		if (!strncmp(a, "-o", 2) && a[2] && a[1] == 'o') {
			out = a + 2;
			continue;
		}
		/* Dependency output: the file after -MF, -MT, -MQ, and after
		 * -MD or -MMD as gcc passes them to cc1 (a .d file, which is
		 * also D's source extension). */
		if (i + 1 < e->argc &&
		    (!strcmp(a, "-MF") || !strcmp(a, "-MT") || !strcmp(a, "-MQ") ||
		     ((!strcmp(a, "-MD") || !strcmp(a, "-MMD")) &&
		      is_dep_file(pt_exec_arg(e, i + 1))))) {
			i++;
			continue;
		}
		if (a[0] == '-' || !has_source_ext(a))
			continue;
		if (!under_tmp(a))
			return a;
		if (!tmp_src)
			tmp_src = a;
	}
	/* gcc's own temporaries (/tmp/ccXXXXXX.s) say nothing: prefer the
	 * target, which an assembler or linker always has. */
	if (out && !under_tmp(out))
		return out;
	return tmp_src ? tmp_src : out;
}

static const char *first_operand(const struct pt_exec *e, const char *prog)
{
	size_t i;

	/* ar's first word is its operation ("rcs"): the archive follows. */
	if (!strcmp(prog, "ar") && e->argc > 2)
		return pt_exec_arg(e, 2);

	for (i = 1; i < e->argc; i++) {
		const char *a = pt_exec_arg(e, i);

		if (a[0] == '-' && a[1]) {
			if (!strcmp(a, "--"))
				return i + 1 < e->argc ? pt_exec_arg(e, i + 1) : NULL;
			if (takes_value(prog, a) && i + 1 < e->argc &&
			    (!strchr("jl", a[1]) || a[2] ||
			     strspn(pt_exec_arg(e, i + 1), "0123456789.") ==
			     strlen(pt_exec_arg(e, i + 1))))
				i++;
			continue;
		}
		if (a[0])
			return a;
	}
	return NULL;
}

void pt_exec_label(const struct pt_exec *e, struct pt_sb *sb)
{
	const char *prog = pt_exec_prog(e), *work = NULL;
	size_t from = sb->len;

	add_clean(sb, prog, strlen(prog));
	if (e->type == PT_EXEC_FORK) {
		pt_sb_addstr(sb, " (fork)");
		cut_label(sb, from, PT_LABEL_MAX);
		return;
	}
	work = is_compiler(prog) ? compiler_work(e) : NULL;
	if (!work)
		work = first_operand(e, prog);
	if (work) {
		if (work[0] == '/')
			work = pt_basename(work);
		pt_sb_addch(sb, ' ');
		/* Cap what gets cleaned: a sh -c script may be megabytes. */
		add_clean(sb, work, strnlen(work, PT_LABEL_MAX + 4));
	}
	cut_label(sb, from, PT_LABEL_MAX);
}

void pt_exec_package(const struct pt_exec *e, struct pt_sb *sb)
{
	const char *name = pt_exec_env(e, "OPAM_PACKAGE_NAME");
	const char *version = pt_exec_env(e, "OPAM_PACKAGE_VERSION");

	if (!name || !name[0])
		return;
	pt_sb_addstr(sb, name);
	if (version && version[0]) {
		pt_sb_addch(sb, '.');
		pt_sb_addstr(sb, version);
	}
}

/* ---- grouping ---- */

int pt_group_parse(const char *spec, int allow_command, struct pt_group_by *g)
{
	memset(g, 0, sizeof *g);
	if (!strcmp(spec, "exe"))
		g->kind = PT_GROUP_EXE;
	else if (!strcmp(spec, "package"))
		g->kind = PT_GROUP_PACKAGE;
	else if (!strcmp(spec, "cwd"))
		g->kind = PT_GROUP_CWD;
	else if (allow_command && !strcmp(spec, "command"))
		g->kind = PT_GROUP_COMMAND;
	else if (!strncmp(spec, "env:", 4) && spec[4]) {
		g->kind = PT_GROUP_ENV;
		g->env = spec + 4;
	} else
		return -1;
	return 0;
}

const char *pt_group_name(const struct pt_group_by *g)
{
	switch (g->kind) {
	case PT_GROUP_EXE:
		return "program";
	case PT_GROUP_PACKAGE:
		return "package";
	case PT_GROUP_CWD:
		return "directory";
	case PT_GROUP_ENV:
		return g->env;
	case PT_GROUP_COMMAND:
		return "command";
	}
	return "?";
}

void pt_group_key(const struct pt_group_by *g, const struct pt_exec *e,
		  struct pt_sb *sb)
{
	const char *v;
	size_t len = sb->len;

	switch (g->kind) {
	case PT_GROUP_EXE:
		v = pt_exec_prog(e);
		add_clean(sb, v, strlen(v));
		return;
	case PT_GROUP_PACKAGE:
		pt_exec_package(e, sb);
		if (sb->len == len)
			pt_sb_addstr(sb, "(none)");
		return;
	case PT_GROUP_CWD:
		if (e->cwd[0])
			add_clean(sb, e->cwd, strlen(e->cwd));
		else
			pt_sb_addstr(sb, "(unknown)");
		return;
	case PT_GROUP_ENV:
		v = pt_exec_env(e, g->env);
		if (v)
			add_clean(sb, v, strlen(v));
		else
			pt_sb_addstr(sb, "(unset)");
		return;
	case PT_GROUP_COMMAND:
		pt_exec_key(e, sb);
		return;
	}
}

/* ---- diff keys ---- */

static int tmp_component(const char *path, size_t n)
{
	const char *p = path, *end = path + n;

	if (under_tmp(path))
		return 1;
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t len = (size_t)((slash ? slash : end) - p);

		/* Directories only: the last component is the file. */
		if (!slash)
			break;
		if ((len == 3 && !strncasecmp(p, "tmp", 3)) ||
		    (len == 4 && !strncasecmp(p, "temp", 4)) ||
		    (len > 4 && !strncasecmp(p + len - 4, ".tmp", 4)))
			return 1;
		p = slash + 1;
	}
	return 0;
}

/* Append one absolute path (n bytes at p), normalized for matching. */
static void add_norm_path(struct pt_sb *sb, const char *p, size_t n)
{
	const char *base = p + n, *dot;

	while (base > p && base[-1] != '/')
		base--;
	if (base == p + n && n > 1) {
		/* "/a/b/": the directory's own name. */
		const char *end = p + n - 1;

		base = end;
		while (base > p && base[-1] != '/')
			base--;
		pt_sb_add(sb, base, (size_t)(end - base));
		return;
	}
	if (tmp_component(p, n)) {
		/* Temporary names are random; only the kind of file stays. */
		pt_sb_addstr(sb, "$TMP/");
		dot = memrchr(base, '.', (size_t)(p + n - base));
		if (dot && dot > base && p + n - dot <= 9)
			pt_sb_add(sb, dot, (size_t)(p + n - dot));
		return;
	}
	pt_sb_add(sb, base, (size_t)(p + n - base));
}

/* Is arg[i] where an absolute path begins (see pt_exec_key)? */
static int path_starts(const char *arg, size_t i)
{
	size_t k;

	if (arg[i] != '/')
		return 0;
	if (i == 0)
		return 1;
	if (strchr("=,:", arg[i - 1]))
		return 1;
	/* "-I/usr/include", "-L/x": an option's letters glued to a path. */
	if (arg[0] != '-')
		return 0;
	for (k = 1; k < i; k++)
		if (!((arg[k] >= 'a' && arg[k] <= 'z') ||
		      (arg[k] >= 'A' && arg[k] <= 'Z') || arg[k] == '-'))
			return 0;
	return 1;
}

static void add_norm_arg(struct pt_sb *sb, const char *arg)
{
	size_t i = 0, n = strlen(arg);

	while (i < n) {
		if (path_starts(arg, i)) {
			size_t end = i + strcspn(arg + i, ",:;= ");

			add_norm_path(sb, arg + i, end - i);
			i = end;
		} else {
			pt_sb_addch(sb, arg[i++]);
		}
	}
}

static int key_safe(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr("_@%+=:,./-$", c)))
			return 0;
	}
	return 1;
}

void pt_exec_key(const struct pt_exec *e, struct pt_sb *sb)
{
	struct pt_sb arg = PT_SB_INIT;
	size_t i;

	pt_sb_addstr(sb, pt_exec_prog(e));
	if (e->type == PT_EXEC_FORK)
		pt_sb_addstr(sb, " (fork)");
	for (i = 1; i < e->argc; i++) {
		pt_sb_reset(&arg);
		add_norm_arg(&arg, pt_exec_arg(e, i));
		pt_sb_addch(sb, ' ');
		/* "$TMP" stays readable: this is a key, never run. */
		if (arg.len && key_safe(arg.buf))
			pt_sb_add(sb, arg.buf, arg.len);
		else
			pt_quote_shell(sb, arg.buf);
	}
	pt_sb_release(&arg);
}

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

/* ---- the tree: depth, subtree end and size, self time ---- */

struct end_key {
	int64_t end;
	uint32_t id;
};

static int cmp_end_key(const void *x, const void *y)
{
	const struct end_key *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Wall time of x covered by the union of its direct children. */
static int64_t children_cover(const struct pt_exec *x)
{
	const struct pt_exec *c;
	int64_t cover = 0, from = 0, to = 0;
	int open = 0;

	/* Children come in start order: one sweep merges their intervals. */
	for (c = x->first_child; c; c = c->next_sibling) {
		int64_t s = c->start_ns > x->start_ns ? c->start_ns
						      : x->start_ns;
		int64_t e = c->end_ns < x->end_ns ? c->end_ns : x->end_ns;

		if (e <= s)
			continue;
		if (open && s <= to) {
			if (e > to)
				to = e;
			continue;
		}
		if (open)
			cover += to - from;
		from = s;
		to = e;
		open = 1;
	}
	if (open)
		cover += to - from;
	return cover;
}

void pt_analyze_tree(struct pt_analysis *a, const struct pt_model *m)
{
	size_t n = m->n, i;
	struct end_key *ek;

	memset(a, 0, sizeof *a);
	a->m = m;
	a->self_ns = pt_xcalloc(n, sizeof *a->self_ns);
	a->sub_end = pt_xcalloc(n, sizeof *a->sub_end);
	a->sub_n = pt_xcalloc(n, sizeof *a->sub_n);
	a->depth = pt_xcalloc(n, sizeof *a->depth);
	a->by_end = pt_xcalloc(n, sizeof *a->by_end);
	if (!n)
		return;
	a->t0 = m->execs[0]->start_ns;
	a->t1 = m->execs[0]->end_ns;
	for (i = 0; i < n; i++) {
		const struct pt_exec *e = m->execs[i];

		if (e->start_ns < a->t0)
			a->t0 = e->start_ns;
		if (e->end_ns > a->t1)
			a->t1 = e->end_ns;
		a->sub_end[i] = e->end_ns;
		a->sub_n[i] = 1;
		a->self_ns[i] = e->end_ns - e->start_ns - children_cover(e);
	}
	/*
	 * Depth-first over each root's tree through the child/sibling links:
	 * depth on the way down, subtree end and size on the way up.  Only
	 * roots start a walk, so a (corrupt) parent cycle is never entered.
	 */
	for (i = 0; i < n; i++) {
		const struct pt_exec *x = m->execs[i];

		if (x->parent)
			continue;
		for (;;) {
			if (x->first_child) {
				x = x->first_child;
				a->depth[x->id] = a->depth[x->parent->id] + 1;
				continue;
			}
			/* Leaving x: fold it into its parent, climb. */
			while (x->parent && !x->next_sibling) {
				const struct pt_exec *p = x->parent;

				if (a->sub_end[x->id] > a->sub_end[p->id])
					a->sub_end[p->id] = a->sub_end[x->id];
				a->sub_n[p->id] += a->sub_n[x->id];
				x = p;
			}
			if (!x->parent)
				break;
			if (a->sub_end[x->id] > a->sub_end[x->parent->id])
				a->sub_end[x->parent->id] = a->sub_end[x->id];
			a->sub_n[x->parent->id] += a->sub_n[x->id];
			x = x->next_sibling;
			a->depth[x->id] = a->depth[x->parent->id] + 1;
		}
	}
	ek = pt_xmalloc(n * sizeof *ek);
	for (i = 0; i < n; i++) {
		ek[i].end = m->execs[i]->end_ns;
		ek[i].id = (uint32_t)i;
	}
	qsort(ek, n, sizeof *ek, cmp_end_key);
	for (i = 0; i < n; i++)
		a->by_end[i] = ek[i].id;
	free(ek);
}

/* ---- the sweep ---- */

void pt_sweep_init(struct pt_sweep *s, const struct pt_analysis *a)
{
	size_t n = a->m->n, nc = a->m->ncaptures ? a->m->ncaptures : 1;

	memset(s, 0, sizeof *s);
	s->a = a;
	s->cap_running = pt_xcalloc(nc, sizeof *s->cap_running);
	s->cap_busy = pt_xcalloc(nc, sizeof *s->cap_busy);
	s->dirty = pt_xcalloc(nc, sizeof *s->dirty);
	s->dirty_flag = pt_xcalloc(nc, 1);
	s->busy_set = pt_xcalloc(n, sizeof *s->busy_set);
	s->run = pt_xcalloc(n, 1);
	s->active_children = pt_xcalloc(n, sizeof *s->active_children);
	s->busy_pos = pt_xcalloc(n, sizeof *s->busy_pos);
}

void pt_sweep_free(struct pt_sweep *s)
{
	free(s->cap_running);
	free(s->cap_busy);
	free(s->dirty);
	free(s->dirty_flag);
	free(s->busy_set);
	free(s->run);
	free(s->active_children);
	free(s->busy_pos);
	memset(s, 0, sizeof *s);
}

static void mark(struct pt_sweep *s, uint32_t cap)
{
	if (!s->dirty_flag[cap]) {
		s->dirty_flag[cap] = 1;
		s->dirty[s->ndirty++] = cap;
	}
}

static void busy_add(struct pt_sweep *s, const struct pt_exec *x)
{
	s->busy_set[s->busy] = x->id;
	s->busy_pos[x->id] = ++s->busy;
	s->cap_busy[x->capture]++;
	mark(s, x->capture);
}

static void busy_del(struct pt_sweep *s, const struct pt_exec *x)
{
	uint32_t pos = s->busy_pos[x->id] - 1, last = s->busy_set[--s->busy];

	s->busy_set[pos] = last;
	s->busy_pos[last] = pos + 1;
	s->busy_pos[x->id] = 0;
	s->cap_busy[x->capture]--;
	mark(s, x->capture);
}

/*
 * "Active" = running, or with an active child.  active_children[x] counts
 * x's active children; x is busy when it runs and counts none.  A change
 * of x's activity climbs only until an ancestor whose own activity does
 * not change, so a start or end costs O(1) but for chains of exited
 * ancestors.
 */
static void became_active(struct pt_sweep *s, const struct pt_exec *p)
{
	for (; p; p = p->parent) {
		if (s->active_children[p->id]++)
			return;
		if (s->run[p->id]) {
			busy_del(s, p);
			return;
		}
	}
}

static void became_inactive(struct pt_sweep *s, const struct pt_exec *p)
{
	for (; p; p = p->parent) {
		if (--s->active_children[p->id])
			return;
		if (s->run[p->id]) {
			busy_add(s, p);
			return;
		}
	}
}

static void start(struct pt_sweep *s, const struct pt_exec *x)
{
	s->run[x->id] = 1;
	s->running++;
	s->cap_running[x->capture]++;
	mark(s, x->capture);
	if (!s->active_children[x->id]) {
		busy_add(s, x);
		became_active(s, x->parent);
	}
}

static void end(struct pt_sweep *s, const struct pt_exec *x)
{
	s->run[x->id] = 0;
	s->running--;
	s->cap_running[x->capture]--;
	mark(s, x->capture);
	if (!s->active_children[x->id]) {
		busy_del(s, x);
		became_inactive(s, x->parent);
	}
}

static int zero_length(const struct pt_exec *x)
{
	return x->end_ns <= x->start_ns;
}

int pt_sweep_next(struct pt_sweep *s)
{
	const struct pt_model *m = s->a->m;
	const uint32_t *by_end = s->a->by_end;
	size_t n = m->n, i;
	int64_t t;

	for (i = 0; i < s->ndirty; i++)
		s->dirty_flag[s->dirty[i]] = 0;
	s->ndirty = 0;
	while (s->si < n && zero_length(m->execs[s->si]))
		s->si++;
	while (s->ei < n && zero_length(m->execs[by_end[s->ei]]))
		s->ei++;
	if (s->si >= n && s->ei >= n)
		return 0;
	t = s->si < n ? m->execs[s->si]->start_ns : INT64_MAX;
	if (s->ei < n && m->execs[by_end[s->ei]]->end_ns < t)
		t = m->execs[by_end[s->ei]]->end_ns;
	s->t = t;
	/* Ends first: a job that ends as the next starts never counts
	 * twice, not even for an instant. */
	while (s->ei < n && m->execs[by_end[s->ei]]->end_ns == t) {
		const struct pt_exec *x = m->execs[by_end[s->ei++]];

		if (!zero_length(x))
			end(s, x);
	}
	while (s->si < n && m->execs[s->si]->start_ns == t) {
		const struct pt_exec *x = m->execs[s->si++];

		if (!zero_length(x))
			start(s, x);
	}
	return 1;
}

/* ---- parallelism profile ---- */

static void add_level(struct pt_analysis *a, uint32_t level, int64_t dt,
		      size_t *cap)
{
	if (dt <= 0)
		return;
	if (level >= *cap) {
		size_t nc = *cap ? *cap : 16;

		while (nc <= level)
			nc *= 2;
		a->level_ns = pt_xrealloc(a->level_ns,
					  nc * sizeof *a->level_ns);
		memset(a->level_ns + *cap, 0,
		       (nc - *cap) * sizeof *a->level_ns);
		*cap = nc;
	}
	a->level_ns[level] += dt;
	if (level + 1 > a->nlevels)
		a->nlevels = level + 1;
	if (level > a->peak)
		a->peak = level;
}

/* Keep the `max` longest stretches, longest first (earlier on ties). */
static void keep_stretch(struct pt_analysis *a, size_t max,
			 const struct pt_stretch *st)
{
	int64_t len = st->to - st->from;
	size_t i;

	if (len <= 0 || !max)
		return;
	if (a->nalone == max &&
	    a->alone[max - 1].to - a->alone[max - 1].from >= len)
		return;
	i = a->nalone < max ? a->nalone++ : max - 1;
	while (i > 0 && a->alone[i - 1].to - a->alone[i - 1].from < len) {
		a->alone[i] = a->alone[i - 1];
		i--;
	}
	a->alone[i] = *st;
}

static void profile(struct pt_analysis *a, size_t nalone)
{
	struct pt_sweep s;
	struct pt_stretch cur = { NONE, 0, 0 };
	size_t cap = 0;
	int64_t prev = a->t0, weighted = 0;
	uint32_t busy = 0;

	a->alone = pt_xcalloc(nalone ? nalone : 1, sizeof *a->alone);
	pt_sweep_init(&s, a);
	while (pt_sweep_next(&s)) {
		/* [prev, s.t) had `busy` busy executions: the state the
		 * previous instant left, which `cur` describes when one
		 * execution ran alone. */
		add_level(a, busy, s.t - prev, &cap);
		weighted += (int64_t)busy * (s.t - prev);
		if (cur.exec != NONE)
			cur.to = s.t;
		prev = s.t;
		busy = s.busy;
		if (busy == 1 && cur.exec == s.busy_set[0])
			continue;       /* still the same one alone */
		if (cur.exec != NONE)
			keep_stretch(a, nalone, &cur);
		cur.exec = busy == 1 ? s.busy_set[0] : NONE;
		cur.from = cur.to = s.t;
	}
	pt_sweep_free(&s);
	if (cur.exec != NONE)
		keep_stretch(a, nalone, &cur);
	add_level(a, 0, a->t1 - prev, &cap);
	a->average = a->t1 > a->t0 ? (double)weighted / (double)(a->t1 - a->t0)
				   : 0;
}

/* ---- critical path ---- */

struct cp_frame {
	uint32_t exec;                  /* NONE: the whole run */
	uint32_t step;
	int64_t lo, cursor;
	size_t k, kend, kbeg;
};

static int cmp_by_sub_end(const void *x, const void *y, void *ctx)
{
	const struct pt_analysis *a = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int64_t si, sj;

	/* Latest subtree end first; on a tie the one that started first
	 * (it covers more of the path), then the lower id. */
	if (a->sub_end[i] != a->sub_end[j])
		return a->sub_end[i] > a->sub_end[j] ? -1 : 1;
	si = a->m->execs[i]->start_ns;
	sj = a->m->execs[j]->start_ns;
	if (si != sj)
		return si < sj ? -1 : 1;
	return i < j ? -1 : i > j;
}

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

static void u32_push(struct u32vec *v, uint32_t x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->v = pt_xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = x;
}

/* Push x's children that have time on the path (sorted) onto pool. */
static void push_children(struct pt_analysis *a, struct u32vec *pool,
			  const struct pt_exec *x)
{
	const struct pt_model *m = a->m;
	size_t beg = pool->n, i;

	if (x) {
		const struct pt_exec *c;

		for (c = x->first_child; c; c = c->next_sibling)
			if (a->sub_end[c->id] > c->start_ns)
				u32_push(pool, c->id);
	} else {
		for (i = 0; i < m->n; i++)
			if (!m->execs[i]->parent &&
			    a->sub_end[i] > m->execs[i]->start_ns)
				u32_push(pool, (uint32_t)i);
	}
	qsort_r(pool->v + beg, pool->n - beg, sizeof *pool->v, cmp_by_sub_end,
		a);
}

static uint32_t add_step(struct pt_analysis *a, size_t *cap, uint32_t exec,
			 uint32_t depth, int64_t from, int64_t to)
{
	struct pt_cp_step *st;

	if (a->ncp == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		a->cp = pt_xrealloc(a->cp, *cap * sizeof *a->cp);
	}
	st = &a->cp[a->ncp];
	st->exec = exec;
	st->depth = depth;
	st->from = from;
	st->to = to;
	st->own = 0;
	return (uint32_t)a->ncp++;
}

static int cmp_step(const void *x, const void *y)
{
	const struct pt_cp_step *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/*
 * The critical path, walked backwards from the end of the run.  In the
 * window [lo, cursor] of an execution (or of the whole run), the child
 * that finished last, at or before cursor, is the one it waited for: the
 * time between that child's end and cursor is the execution's own, the
 * walk descends into the child over [max(child start, lo), child end],
 * and continues in the parent from the child's start.  Children still
 * running at cursor did not hold anything up and are passed over.  When
 * no child is left, the rest of the window back to lo is the
 * execution's own.  A child's "end" is that of its whole subtree, so an
 * orphan that outlives its parent still leads the path to it.  The own
 * times of all steps, plus the time nothing ran, add up to the wall time.
 */
static void critical_path(struct pt_analysis *a)
{
	const struct pt_model *m = a->m;
	struct cp_frame *stack = NULL;
	struct u32vec pool = { NULL, 0, 0 };
	size_t depth = 0, scap = 0, cpcap = 0;

	if (!m->n)
		return;
	stack = pt_xmalloc(16 * sizeof *stack);
	scap = 16;
	stack[0].exec = NONE;
	stack[0].lo = a->t0;
	stack[0].cursor = a->t1;
	stack[0].kbeg = stack[0].k = 0;
	push_children(a, &pool, NULL);
	stack[0].kend = pool.n;
	stack[0].step = add_step(a, &cpcap, NONE, 0, a->t0, a->t1);
	depth = 1;
	while (depth) {
		struct cp_frame *f = &stack[depth - 1];
		const struct pt_exec *c;
		int64_t clo, cend;
		uint32_t cid;

		while (f->k < f->kend && a->sub_end[pool.v[f->k]] > f->cursor)
			f->k++;
		if (f->k == f->kend || a->sub_end[pool.v[f->k]] <= f->lo) {
			a->cp[f->step].own += f->cursor - f->lo;
			pool.n = f->kbeg;
			depth--;
			continue;
		}
		cid = pool.v[f->k++];
		c = m->execs[cid];
		cend = a->sub_end[cid];
		clo = c->start_ns > f->lo ? c->start_ns : f->lo;
		a->cp[f->step].own += f->cursor - cend;
		f->cursor = clo;
		if (depth == scap) {
			scap *= 2;
			stack = pt_xrealloc(stack, scap * sizeof *stack);
			f = &stack[depth - 1];
		}
		stack[depth].exec = cid;
		stack[depth].lo = clo;
		stack[depth].cursor = cend;
		stack[depth].kbeg = stack[depth].k = pool.n;
		push_children(a, &pool, c);
		stack[depth].kend = pool.n;
		stack[depth].step = add_step(a, &cpcap, cid, (uint32_t)depth,
					     clo, cend);
		depth++;
	}
	free(stack);
	free(pool.v);
	qsort(a->cp, a->ncp, sizeof *a->cp, cmp_step);
}

void pt_analyze(struct pt_analysis *a, const struct pt_model *m,
		size_t nalone)
{
	pt_analyze_tree(a, m);
	profile(a, nalone);
	critical_path(a);
}

void pt_analysis_free(struct pt_analysis *a)
{
	free(a->self_ns);
	free(a->sub_end);
	free(a->sub_n);
	free(a->depth);
	free(a->by_end);
	free(a->level_ns);
	free(a->alone);
	free(a->cp);
	memset(a, 0, sizeof *a);
}
