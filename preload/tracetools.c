/*
 * Which trace file a known tool will write, from its command line, so
 * that the image sends the file itself at its end (trace.c): a build may
 * remove the file the moment the tool exits (`dune build --trace-file
 * t.json && rm t.json`), or write it where the collector cannot look (a
 * sandbox's private tmpfs), and the image is the one reader that comes
 * before both.
 *
 *   clang -ftime-trace        next to the object: -o X.o gives X.json, no
 *                             -o gives SRC's stem .json in the working
 *                             directory (compiling, -c/-S, only: a link
 *                             writes it next to a temporary object)
 *   clang -ftime-trace=PATH   PATH, or in the directory PATH the stem of
 *                             the output (clang 16 and later)
 *   coqc/rocq ... -profile F  F
 *   dune ... --trace-file F   F (also --trace-file=F)
 *
 * The constructor's cost in every other image is one look at the first
 * byte of each argument (pt_known_setup()).
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

static int str_eq(const char *a, const char *b)
{
	return !pt_strncmp(a, b, pt_strlen(b) + 1);
}

static int has_prefix(const char *s, const char *p)
{
	return !pt_strncmp(s, p, pt_strlen(p));
}

static const char *base_name(const char *s)
{
	const char *slash = pt_memrchr(s, '/', pt_strlen(s));

	return slash ? slash + 1 : s;
}

/* A C, C++ or Objective-C source that clang compiles. */
static int is_source(const char *s)
{
	static const char *const ext[] = { ".c", ".cc", ".cpp", ".cxx",
		".c++", ".C", ".m", ".mm", ".cu", NULL };
	const char *b = base_name(s), *dot = pt_memrchr(b, '.', pt_strlen(b));
	size_t i;

	if (!dot || s[0] == '-')
		return 0;
	for (i = 0; ext[i]; i++)
		if (str_eq(dot, ext[i]))
			return 1;
	return 0;
}

/* Bounded appending to a PATH_MAX buffer; a path that does not fit is
 * dropped whole (returns -1) rather than cut. */
struct path {
	char buf[PATH_MAX];
	size_t len;
	int over;
};

static void path_add(struct path *p, const char *s, size_t n)
{
	if (p->over || p->len + n >= sizeof p->buf) {
		p->over = 1;
		return;
	}
	pt_memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void path_addstr(struct path *p, const char *s)
{
	path_add(p, s, pt_strlen(s));
}

/* s with its last extension replaced by .json. */
static void path_add_json(struct path *p, const char *s)
{
	const char *b = base_name(s), *dot = pt_memrchr(b, '.', pt_strlen(b));

	path_add(p, s, dot ? (size_t)(dot - s) : pt_strlen(s));
	path_addstr(p, ".json");
}

/* The working directory, then a '/', unless s is absolute. */
static void path_start(struct path *p, const char *s)
{
	p->len = 0;
	p->over = 0;
	p->buf[0] = '\0';
	if (s[0] == '/')
		return;
	if (!pt_sys_getcwd(p->buf, sizeof p->buf - 1)) {
		p->over = 1;
		return;
	}
	p->len = pt_strlen(p->buf);
	path_addstr(p, "/");
}

static int is_dir(const char *path)
{
	struct statx stx;

	return PT_SC5(SYS_statx, AT_FDCWD, path, 0, STATX_TYPE, &stx) == 0 &&
	       S_ISDIR(stx.stx_mode);
}

static int clang_file(char *const *argv, struct path *p)
{
	const char *out = NULL, *src = NULL, *opt = NULL;
	int compile = 0, nsrc = 0;
	size_t i;

	for (i = 1; argv[i]; i++) {
		const char *a = argv[i];

		if (str_eq(a, "-ftime-trace"))
			opt = "";
		else if (has_prefix(a, "-ftime-trace="))
			opt = a + sizeof "-ftime-trace=" - 1;
		else if (str_eq(a, "-o") && argv[i + 1])
			out = argv[++i];
		else if (has_prefix(a, "-o") && a[2])
			out = a + 2;
		else if (str_eq(a, "-c") || str_eq(a, "-S"))
			compile = 1;
		else if (is_source(a) && ++nsrc)
			src = a;
	}
	if (!opt || nsrc != 1)
		return -1;
	if (*opt) {
		path_start(p, opt);
		path_addstr(p, opt);
		if (p->over)
			return -1;
		if (opt[pt_strlen(opt) - 1] == '/' || is_dir(p->buf)) {
			if (opt[pt_strlen(opt) - 1] != '/')
				path_addstr(p, "/");
			path_add_json(p, base_name(out ? out : src));
		}
	} else if (compile) {
		const char *o = out ? out : base_name(src);

		path_start(p, o);
		path_add_json(p, o);
	} else {
		return -1;
	}
	return 0;
}

/* The argument after the option opt, or joined to it by '='. */
static int option_file(char *const *argv, const char *opt, struct path *p)
{
	size_t i, n = pt_strlen(opt);
	const char *f = NULL;

	for (i = 1; argv[i] && !f; i++) {
		if (str_eq(argv[i], opt) && argv[i + 1])
			f = argv[i + 1];
		else if (!pt_strncmp(argv[i], opt, n) && argv[i][n] == '=')
			f = argv[i] + n + 1;
	}
	if (!f || !*f)
		return -1;
	path_start(p, f);
	path_addstr(p, f);
	return 0;
}

/* Apart, so that the frame of the common case holds no PATH_MAX. */
static __attribute__((noinline)) void known_file(char *const *argv)
{
	const char *prog = base_name(argv[0]), *from;
	struct path p;
	int r;

	if (has_prefix(prog, "clang")) {
		from = "clang";
		r = clang_file(argv, &p);
	} else if (has_prefix(prog, "coq") || has_prefix(prog, "rocq")) {
		from = "rocq";
		r = option_file(argv, "-profile", &p);
	} else if (str_eq(prog, "dune")) {
		from = "dune";
		r = option_file(argv, "--trace-file", &p);
	} else {
		return;
	}
	if (r == 0 && !p.over)
		pt.trace_known = pt_env_pool_entry(from, p.buf);
}

void pt_known_setup(char *const *argv)
{
	size_t i;

	if (!argv || !argv[0] || pt.off || pt.quiet)
		return;
	for (i = 1; argv[i]; i++)
		if (argv[i][0] == '-' && (has_prefix(argv[i], "-ftime-trace") ||
					  str_eq(argv[i], "-profile") ||
					  has_prefix(argv[i], "--trace-file"))) {
			known_file(argv);
			return;
		}
}
