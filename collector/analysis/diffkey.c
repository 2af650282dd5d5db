/*
 * Diff keys: what makes an execution of one run the same work as one of
 * another run.  The command line stays, but for what differs from run to
 * run without the work being different: the checkout's directory, random
 * and pid-bearing temporary names, and a build tool's job count.  Any
 * other path stays as written: it names the same file in both runs.
 * doc/manual.md ("Matching executions across runs") is the reference.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "base/quote.h"
#include "base/util.h"

static int is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/*
 * Does this run of letters and digits look generated?  mkstemp and
 * mktemp fill six or more places from 62 characters, so such a run
 * almost always holds a digit or both cases; a run of three digits or
 * more is a pid or a counter.  A word of one case ("conftest", "main")
 * stays.
 */
static int random_run(const char *s, size_t n)
{
	size_t i, digits = 0, lower = 0, upper = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= '0' && c <= '9')
			digits++;
		else if (c >= 'a' && c <= 'z')
			lower++;
		else
			upper++;
	}
	if (digits == n)
		return n >= 3;
	return n >= 6 && (digits || (lower && upper));
}

/*
 * Append one component of a temporary path with its generated parts as
 * '*': "ccQ2x9Zk.s" -> "cc*.s" (gcc's temporaries: "cc" and six
 * characters, whatever they are), "conftest.7F4odU" -> "conftest.*" (and
 * "conftest.FMCIRS": autoconf's six places, whatever they are),
 * "build-48213" -> "build-*".
 */
static void add_temp_component(struct pt_sb *sb, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		if (!is_alnum((unsigned char)p[i])) {
			pt_sb_addch(sb, p[i++]);
			continue;
		}
		while (j < n && is_alnum((unsigned char)p[j]))
			j++;
		if (i == 0 && j - i == 8 && !strncmp(p, "cc", 2))
			pt_sb_addstr(sb, "cc*");
		else if (i == 9 && j - i == 6 && !strncmp(p, "conftest.", 9))
			/* autoconf's mktemp -d conftest.XXXXXX: six places,
			 * of one case about one time in a hundred */
			pt_sb_addch(sb, '*');
		else if (random_run(p + i, j - i))
			pt_sb_addch(sb, '*');
		else
			pt_sb_add(sb, p + i, j - i);
		i = j;
	}
}

/* Append the components of a path (n bytes at p), as temporary names. */
static void add_temp_path(struct pt_sb *sb, const char *p, size_t n)
{
	const char *end = p + n;

	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *stop = slash ? slash : end;

		add_temp_component(sb, p, (size_t)(stop - p));
		if (slash)
			pt_sb_addch(sb, '/');
		p = stop + 1;
	}
}

/*
 * Length of the part of path (n bytes) up to and including the directory
 * that makes it temporary: /tmp/, /var/tmp/, /dev/shm/, or a directory
 * named tmp, temp or *.tmp; 0 if there is none.
 */
static size_t temp_prefix(const char *path, size_t n)
{
	static const char *const dirs[] = {
		"/tmp/", "/var/tmp/", "/dev/shm/", NULL,
	};
	const char *const *d;
	const char *p = path, *end = path + n;

	for (d = dirs; *d; d++)
		if (n > strlen(*d) && !strncmp(path, *d, strlen(*d)))
			return strlen(*d);
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t len;

		/* Directories only: the last component is the file. */
		if (!slash)
			break;
		len = (size_t)(slash - p);
		if ((len == 3 && !strncasecmp(p, "tmp", 3)) ||
		    (len == 4 && !strncasecmp(p, "temp", 4)) ||
		    (len > 4 && !strncasecmp(p + len - 4, ".tmp", 4)))
			return (size_t)(slash + 1 - path);
		p = slash + 1;
	}
	return 0;
}

/* Append one absolute path (n bytes at p), normalized for matching. */
static void add_norm_path(struct pt_sb *sb, const char *p, size_t n,
			  const char *checkout, size_t nco)
{
	size_t tmp;

	/* The checkout first: it may itself lie under /tmp. */
	if (nco && n >= nco && !memcmp(p, checkout, nco) &&
	    (n == nco || p[nco] == '/')) {
		pt_sb_addstr(sb, "$SRC");
		pt_sb_add(sb, p + nco, n - nco);
		return;
	}
	tmp = temp_prefix(p, n);
	if (tmp) {
		pt_sb_addstr(sb, "$TMP/");
		add_temp_path(sb, p + tmp, n - tmp);
		return;
	}
	/* Anything else is the same path on every machine that has it
	 * ("--prefix=/usr", "-I/usr/include"): as it is. */
	pt_sb_add(sb, p, n);
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

static void add_norm_arg(struct pt_sb *sb, const char *arg,
			 const char *checkout, size_t nco)
{
	size_t i = 0, n = strlen(arg);

	/* configure's scratch files, wherever they are. */
	if (!strncmp(arg, "conftest", 8) || !strncmp(arg, "./conftest", 10)) {
		add_temp_path(sb, arg, n);
		return;
	}
	while (i < n) {
		if (path_starts(arg, i)) {
			size_t end = i + strcspn(arg + i, ",:;= ");

			add_norm_path(sb, arg + i, end - i, checkout, nco);
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

		if (!(is_alnum(c) || strchr("_@%+=:,./-$*", c)))
			return 0;
	}
	return 1;
}

/* Build tools whose job count changes how, not what, they build. */
static int runs_jobs(const char *prog)
{
	static const char *const tools[] = {
		"make", "gmake", "bmake", "ninja", "samu", "dune", "cargo",
		"opam", "meson", NULL,
	};
	const char *const *t;

	for (t = tools; *t; t++)
		if (!strcmp(prog, *t))
			return 1;
	return 0;
}

static int all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/*
 * How many arguments from i on are a job count or a jobserver's
 * descriptors (0 if arg i is neither): "-j8", "-j", "-j 8", "--jobs=8",
 * "--jobs 8", "-l4" and "--jobserver-auth=3,4".
 */
static size_t jobs_args(const struct pt_exec *e, size_t i)
{
	const char *a = pt_exec_arg(e, i);
	const char *next = i + 1 < e->argc ? pt_exec_arg(e, i + 1) : "";

	if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "-l") ||
	    !strcmp(a, "--load-average"))
		return all_digits(next) ? 2 : 1;
	if ((!strncmp(a, "-j", 2) || !strncmp(a, "-l", 2)) && all_digits(a + 2))
		return 1;
	if (!strncmp(a, "--jobs=", 7) || !strncmp(a, "--load-average=", 15) ||
	    !strncmp(a, "--jobserver-", 12))
		return 1;
	return 0;
}

const char *pt_exec_checkout(const struct pt_exec *e)
{
	const char *cwd;

	while (e->parent)
		e = e->parent;
	cwd = e->cwd;
	/* Not a checkout: nothing, the root, or a temporary directory
	 * itself (everything of every run would be under it). */
	if (!cwd[0] || !strcmp(cwd, "/") || !strcmp(cwd, "/tmp") ||
	    !strcmp(cwd, "/var/tmp") || !strcmp(cwd, "/dev/shm"))
		return "";
	return cwd;
}

void pt_exec_key(const struct pt_exec *e, struct pt_sb *sb)
{
	struct pt_sb arg = PT_SB_INIT;
	const char *prog = pt_exec_prog(e), *checkout = pt_exec_checkout(e);
	size_t i, nco = strlen(checkout), skip;
	int jobs = runs_jobs(prog);

	while (nco > 1 && checkout[nco - 1] == '/')
		nco--;
	pt_sb_addstr(sb, prog);
	if (e->type == PT_EXEC_FORK)
		pt_sb_addstr(sb, " (fork)");
	for (i = 1; i < e->argc; i++) {
		if (jobs && (skip = jobs_args(e, i)) > 0) {
			i += skip - 1;
			continue;
		}
		pt_sb_reset(&arg);
		add_norm_arg(&arg, pt_exec_arg(e, i), checkout, nco);
		pt_sb_addch(sb, ' ');
		/* "$TMP" and '*' stay readable: this is a key, never run. */
		if (arg.len && key_safe(arg.buf))
			pt_sb_add(sb, arg.buf, arg.len);
		else
			pt_quote_shell(sb, arg.buf);
	}
	pt_sb_release(&arg);
}
