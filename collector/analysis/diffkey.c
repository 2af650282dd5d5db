/*
 * Diff keys: what makes an execution of one run the same work as one of
 * another run (the command line with temporary names and the checkout's
 * directory normalised).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/quote.h"
#include "base/util.h"

/* ---- diff keys ---- */

static int tmp_component(const char *path, size_t n)
{
	const char *p = path, *end = path + n;

	if (pt_label_under_tmp(path))
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
