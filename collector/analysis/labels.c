/*
 * Labels: what an execution is called in reports and flame graphs
 * ("cc src/foo.c", not the whole command line), its program, its CPU and
 * its opam package.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/quote.h"
#include "base/util.h"
#include "base/utf8.h"

/*
 * Append s to sb for display: control characters become spaces (a
 * newline in a sh -c script must not break a line of output), invalid
 * UTF-8 bytes become '?', so that whatever reads a label reads text.
 */
/* The last component of path; path itself when it ends in '/'. */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s)
		return path;
	/* "dir/" names the directory: keep it whole rather than say "". */
	return s[1] ? s + 1 : path;
}

void pt_label_add_clean(struct pt_sb *sb, const char *s, size_t n)
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
	const char *base = base_name(arg), *dot = strrchr(base, '.');

	return dot && dot != base && in_list(source_exts, dot + 1,
					      strlen(dot + 1));
}

int pt_label_under_tmp(const char *path)
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

const char *pt_prog_name(const char *arg0, const char *exe)
{
	if (arg0 && arg0[0])
		return base_name(arg0);
	if (exe && exe[0])
		return base_name(exe);
	return "?";
}

const char *pt_exec_prog(const struct pt_exec *e)
{
	return pt_prog_name(e->argc > 0 ? pt_exec_arg(e, 0) : NULL, e->exe);
}

/* A command line, as the model or a record holds it. */
struct argv {
	const char *const *v;
	size_t argc;
};

#define ARG(e, i) ((e)->v[i])

static int is_dep_file(const char *arg)
{
	size_t n = strlen(arg);

	return n > 2 && !strcmp(arg + n - 2, ".d");
}

/* The argument of a compiler's command line that names its work. */
static const char *compiler_work(const struct argv *e)
{
	const char *out = NULL, *tmp_src = NULL;
	size_t i;

	for (i = 1; i < e->argc; i++) {
		const char *a = ARG(e, i);

		if (!strcmp(a, "-o") && i + 1 < e->argc) {
			out = ARG(e, ++i);
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
		      is_dep_file(ARG(e, i + 1))))) {
			i++;
			continue;
		}
		if (a[0] == '-' || !has_source_ext(a))
			continue;
		if (!pt_label_under_tmp(a))
			return a;
		if (!tmp_src)
			tmp_src = a;
	}
	/* gcc's own temporaries (/tmp/ccXXXXXX.s) say nothing: prefer the
	 * target, which an assembler or linker always has. */
	if (out && !pt_label_under_tmp(out))
		return out;
	return tmp_src ? tmp_src : out;
}

static const char *first_operand(const struct argv *e, const char *prog)
{
	size_t i;

	/* ar's first word is its operation ("rcs"): the archive follows. */
	if (!strcmp(prog, "ar") && e->argc > 2)
		return ARG(e, 2);

	for (i = 1; i < e->argc; i++) {
		const char *a = ARG(e, i);

		if (a[0] == '-' && a[1]) {
			if (!strcmp(a, "--"))
				return i + 1 < e->argc ? ARG(e, i + 1) : NULL;
			if (takes_value(prog, a) && i + 1 < e->argc &&
			    (!strchr("jl", a[1]) || a[2] ||
			     strspn(ARG(e, i + 1), "0123456789.") ==
			     strlen(ARG(e, i + 1))))
				i++;
			continue;
		}
		if (a[0])
			return a;
	}
	return NULL;
}

/*
 * Is arg a file name rather than, say, a sh -c script or a --trace
 * pattern?  Only a file name may be shortened to its last component:
 * the last '/' of a script lies anywhere inside it.
 */
static int is_path_arg(const char *arg)
{
	return !arg[strcspn(arg, " \t\n\r\v\f'\"`$;&|<>(){}*?\\")];
}

/* The index of argument a (a pointer into e's arguments), or argc. */
static size_t arg_index(const struct argv *e, const char *a)
{
	size_t i;

	for (i = 1; i < e->argc; i++)
		if (ARG(e, i) == a)
			return i;
	return e->argc;
}

void pt_argv_label(const char *const *argv, size_t argc, const char *exe,
		   struct pt_sb *sb)
{
	const struct argv view = { argv, argc }, *e = &view;
	const char *prog = pt_prog_name(argc > 0 ? argv[0] : NULL, exe);
	const char *work = NULL, *arg;
	size_t from = sb->len, room, n, i;

	pt_label_add_clean(sb, prog, strlen(prog));
	work = is_compiler(prog) ? compiler_work(e) : NULL;
	if (!work)
		work = first_operand(e, prog);
	cut_label(sb, from, PT_LABEL_MAX);
	if (!work)
		return;
	/*
	 * The argument goes in whole or not at all: a cut one misquotes the
	 * command.  A file name may lose its directories (they are in the
	 * command line), nothing else may lose anything.
	 */
	room = sb->len - from + 1 < PT_LABEL_MAX ?
	       PT_LABEL_MAX - (sb->len - from + 1) : 0;
	arg = work;
	n = strnlen(work, room + 1);
	if (is_path_arg(work) && (work[0] == '/' || n > room))
		work = base_name(work);
	n = strnlen(work, room + 1);
	if (n == 0)
		return;
	if (n <= room) {
		pt_sb_addch(sb, ' ');
		pt_label_add_clean(sb, work, n);
		return;
	}
	/* Too long (a script, a pattern): the option that introduced it
	 * says what kind of work it is ("sh -c", "python3 -c"). */
	i = arg_index(e, arg);
	if (i > 1 && i < e->argc) {
		const char *opt = ARG(e, i - 1);

		n = strlen(opt);
		if (opt[0] == '-' && n <= room && is_path_arg(opt)) {
			pt_sb_addch(sb, ' ');
			pt_sb_add(sb, opt, n);
		}
	}
}

void pt_exec_label(const struct pt_exec *e, struct pt_sb *sb)
{
	const char *stack[64], **v = stack;
	size_t i, from = sb->len;

	if (e->type == PT_EXEC_FORK) {
		const char *prog = pt_exec_prog(e);

		pt_label_add_clean(sb, prog, strlen(prog));
		pt_sb_addstr(sb, " (fork)");
		cut_label(sb, from, PT_LABEL_MAX);
		return;
	}
	/* The arguments of one command line stay valid together
	 * (pt_exec_arg). */
	if (e->argc > 64)
		v = pt_xmalloc(e->argc * sizeof *v);
	for (i = 0; i < e->argc; i++)
		v[i] = pt_exec_arg(e, i);
	pt_argv_label(e->argc ? v : NULL, e->argc, e->exe, sb);
	if (v != stack)
		free(v);
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

void pt_capture_title(const struct pt_model *m, size_t c, struct pt_sb *sb)
{
	const char *host = pt_model_meta(m, c, "host");
	const char *cmd = pt_model_meta(m, c, "command");

	pt_sb_addstr(sb, host && host[0] ? host : "capture");
	if (m->ncaptures > 1)
		pt_sb_addf(sb, " #%zu", c + 1);
	if (cmd && cmd[0]) {
		size_t n = strnlen(cmd, 120);

		/* Cut at a character boundary, not inside one. */
		while (n > 0 && cmd[n] &&
		       ((unsigned char)cmd[n] & 0xc0) == 0x80)
			n--;
		pt_sb_addstr(sb, ": ");
		pt_sb_add(sb, cmd, n);
	}
}
