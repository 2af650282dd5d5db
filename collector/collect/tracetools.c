/*
 * Which trace file a known tool will write, from its command line
 * (pt_tracefiles_known(), tracefile.h):
 *
 *   clang -ftime-trace        next to the object: -o X.o gives X.json, no
 *                             -o gives SRC's stem .json in the working
 *                             directory (compiling, -c/-S, only: a link
 *                             writes it next to a temporary object)
 *   clang -ftime-trace=PATH   PATH, or in the directory PATH the stem of
 *                             the output (clang 16 and later)
 *   coqc/rocq ... -profile F  F
 *   dune ... --trace-file F   F (also --trace-file=F)
 */
#include "collect/tracefile.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proftrace/wire.h"
#include "base/strbuf.h"
#include "base/util.h"

#define MAX_ARGS 4096

static const char *base_name(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* A C, C++ or Objective-C source that clang compiles. */
static int is_source(const char *s)
{
	static const char *const ext[] = { ".c", ".cc", ".cpp", ".cxx",
		".c++", ".C", ".m", ".mm", ".cu", NULL };
	const char *dot = strrchr(base_name(s), '.');
	size_t i;

	if (!dot || s[0] == '-')
		return 0;
	for (i = 0; ext[i]; i++)
		if (!strcmp(dot, ext[i]))
			return 1;
	return 0;
}

/* p with its last extension replaced by .json, appended to sb. */
static void add_json_name(struct pt_sb *sb, const char *p)
{
	const char *dot = strrchr(p, '.');

	if (!dot || dot < base_name(p))
		dot = p + strlen(p);
	pt_sb_add(sb, p, (size_t)(dot - p));
	pt_sb_addstr(sb, ".json");
}

static char *clang_file(const char *const *argv, size_t argc,
			const char *cwd)
{
	const char *out = NULL, *src = NULL, *opt = NULL;
	struct pt_sb sb = PT_SB_INIT;
	int compile = 0, nsrc = 0, isdir;
	struct stat st;
	size_t i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-ftime-trace"))
			opt = "";
		else if (has_prefix(a, "-ftime-trace="))
			opt = a + strlen("-ftime-trace=");
		else if (!strcmp(a, "-o") && i + 1 < argc)
			out = argv[++i];
		else if (has_prefix(a, "-o") && a[2])
			out = a + 2;
		else if (!strcmp(a, "-c") || !strcmp(a, "-S"))
			compile = 1;
		else if (is_source(a) && ++nsrc)
			src = a;
	}
	if (!opt || nsrc != 1)
		return NULL;
	if (*opt && opt[0] != '/' && cwd)
		pt_sb_addf(&sb, "%s/%s", cwd, opt);
	else
		pt_sb_addstr(&sb, opt);
	isdir = *opt && (opt[strlen(opt) - 1] == '/' ||
			 (stat(sb.buf, &st) == 0 && S_ISDIR(st.st_mode)));
	pt_sb_reset(&sb);
	if (*opt && !isdir)
		pt_sb_addstr(&sb, opt);
	else if (*opt) {
		pt_sb_addf(&sb, "%s/", opt);
		add_json_name(&sb, base_name(out ? out : src));
	} else if (compile && out) {
		add_json_name(&sb, out);
	} else if (compile) {
		add_json_name(&sb, base_name(src));
	} else {
		return NULL;
	}
	return pt_sb_detach(&sb, NULL);
}

/* The argument after the option opt (or joined to it by '='). */
static char *option_file(const char *const *argv, size_t argc,
			 const char *opt)
{
	size_t i, n = strlen(opt);

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], opt) && i + 1 < argc)
			return pt_xstrdup(argv[i + 1]);
		if (!strncmp(argv[i], opt, n) && argv[i][n] == '=')
			return pt_xstrdup(argv[i] + n + 1);
	}
	return NULL;
}

char *pt_tracefiles_known(const unsigned char *payload, size_t len)
{
	const char *argv[MAX_ARGS], *cwd = NULL, *s, *from = NULL;
	size_t fixed = sizeof(struct pt_rec_hello), pos = 0, n, argc = 0;
	struct pt_sb sb = PT_SB_INIT;
	char *file = NULL;
	const char *prog;
	unsigned tag;
	int maybe = 0;

	if (len < fixed)
		return NULL;
	while (pt_wire_next_item(payload + fixed, len - fixed, &pos, &tag,
				 &s, &n) > 0 && argc < MAX_ARGS) {
		if (tag == PT_TAG_ARG) {
			argv[argc++] = s;
			/* The common case ends here: no option of a tool. */
			if (s[0] == '-' && (has_prefix(s, "-ftime-trace") ||
					    !strcmp(s, "-profile") ||
					    has_prefix(s, "--trace-file")))
				maybe = 1;
		} else if (tag == PT_TAG_CWD) {
			cwd = s;
		}
	}
	if (!maybe || !argc)
		return NULL;
	prog = base_name(argv[0]);
	if (has_prefix(prog, "clang")) {
		from = "clang";
		file = clang_file(argv, argc, cwd);
	} else if (has_prefix(prog, "coq") || has_prefix(prog, "rocq")) {
		from = "rocq";
		file = option_file(argv, argc, "-profile");
	} else if (!strcmp(prog, "dune")) {
		from = "dune";
		file = option_file(argv, argc, "--trace-file");
	}
	if (!file || !*file) {
		free(file);
		return NULL;
	}
	pt_sb_addstr(&sb, from);
	pt_sb_addch(&sb, '\0');
	if (file[0] != '/' && cwd)
		pt_sb_addf(&sb, "%s/", cwd);
	pt_sb_addstr(&sb, file);
	free(file);
	return pt_sb_detach(&sb, NULL);
}
