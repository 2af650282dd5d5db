/* Run-time directory, socket path and preload library; see rundir.h. */
#include "rundir.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftrace/wire.h"
#include "pt-config.h"
#include "strbuf.h"
#include "util.h"

#define LIB_NAME "libproftrace.so"

/* Named by the real uid, as the library names it (preload/env.c). */
static char *user_dir_path(void)
{
	struct pt_sb sb = PT_SB_INIT;

	pt_sb_addf(&sb, "%s%u", PT_RUNDIR_PREFIX, (unsigned)getuid());
	return pt_sb_detach(&sb, NULL);
}

/* The checks that make the directory safe to put a socket in. */
static int check_dir(const char *path, const struct stat *st)
{
	if (!S_ISDIR(st->st_mode)) {
		pt_warn("%s exists and is not a directory (a symbolic link?); "
			"refusing to use it", path);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		pt_warn("%s belongs to uid %u, not to us; refusing to use it",
			path, (unsigned)st->st_uid);
		return -1;
	}
	if (st->st_mode & 077) {
		pt_warn("%s is accessible to other users (mode %03o); refusing "
			"to use it (chmod 700 it)", path,
			(unsigned)(st->st_mode & 0777));
		return -1;
	}
	return 0;
}

char *pt_rundir_user(void)
{
	char *path = user_dir_path();
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno != ENOENT) {
			pt_warn("cannot use %s: %s", path, strerror(errno));
			goto fail;
		}
		/* EEXIST: made by a concurrent run; check it like any other. */
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			pt_warn("cannot create %s: %s", path, strerror(errno));
			goto fail;
		}
		if (lstat(path, &st) < 0) {
			pt_warn("cannot use %s: %s", path, strerror(errno));
			goto fail;
		}
	}
	if (check_dir(path, &st) < 0)
		goto fail;
	return path;
fail:
	free(path);
	return NULL;
}

char *pt_rundir_socket(int create)
{
	struct pt_sb sb = PT_SB_INIT;
	char *dir = create ? pt_rundir_user() : user_dir_path();

	if (!dir)
		return NULL;
	pt_sb_addf(&sb, "%s/%s", dir, PT_SOCKET_NAME);
	free(dir);
	return pt_sb_detach(&sb, NULL);
}

char *pt_rundir_make_run(void)
{
	struct pt_sb sb = PT_SB_INIT;
	char *dir = pt_rundir_user();

	if (!dir)
		return NULL;
	pt_sb_addf(&sb, "%s/record-XXXXXX", dir);
	free(dir);
	if (!mkdtemp(sb.buf)) {
		pt_warn("cannot create a directory in %s%u: %s",
			PT_RUNDIR_PREFIX, (unsigned)getuid(), strerror(errno));
		pt_sb_release(&sb);
		return NULL;
	}
	return pt_sb_detach(&sb, NULL);
}

void pt_rundir_remove(const char *dir)
{
	struct pt_sb sb = PT_SB_INIT;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		pt_warn("cannot remove %s: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		pt_sb_reset(&sb);
		pt_sb_addf(&sb, "%s/%s", dir, de->d_name);
		/* Only what we put there: plain files and the socket. */
		if (unlink(sb.buf) < 0 && errno != ENOENT)
			pt_warn("cannot remove %s: %s", sb.buf, strerror(errno));
	}
	closedir(d);
	pt_sb_release(&sb);
	if (rmdir(dir) < 0)
		pt_warn("cannot remove %s: %s", dir, strerror(errno));
}

/* Is this program the one built next to PT_BUILD_PRELOAD_DIR? */
static int running_from_build_tree(void)
{
	char exe[PATH_MAX], build[PATH_MAX];
	char *top = pt_xstrdup(PT_BUILD_PRELOAD_DIR);
	char *slash = strrchr(top, '/');
	int inside = 0;
	size_t n;

	if (slash)
		*slash = '\0';
	if (realpath("/proc/self/exe", exe) && realpath(top, build)) {
		n = strlen(build);
		inside = !strncmp(exe, build, n) && exe[n] == '/';
	}
	free(top);
	return inside;
}

char *pt_rundir_find_lib(void)
{
	const char *env = getenv("PROFTRACE_LIB");
	const char *cand;
	char *abs;

	if (env && *env)
		cand = env;
	else if (running_from_build_tree())
		cand = PT_BUILD_PRELOAD_DIR "/" LIB_NAME;
	else
		cand = PT_LIBDIR "/" LIB_NAME;

	/* Absolute: traced processes change directories. */
	abs = realpath(cand, NULL);
	if (!abs || access(abs, R_OK) < 0) {
		pt_warn("cannot use the preload library %s: %s%s", cand,
			strerror(errno),
			env && *env ? "" : " (set PROFTRACE_LIB to its path)");
		free(abs);
		return NULL;
	}
	return abs;
}

static int copy_fd(int in, int out)
{
	char buf[64 << 10];
	ssize_t n;

	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (pt_write_all(out, buf, (size_t)n) < 0)
			return -1;
	}
	return 0;
}

char *pt_rundir_visible_lib(const char *lib, const char *dir)
{
	struct pt_sb tmp = PT_SB_INIT, dst = PT_SB_INIT;
	int in = -1, out = -1;

	if (!strncmp(lib, "/usr/", 5) || !strncmp(lib, "/tmp/", 5))
		return pt_xstrdup(lib);

	pt_sb_addf(&tmp, "%s/." LIB_NAME ".XXXXXX", dir);
	pt_sb_addf(&dst, "%s/" LIB_NAME, dir);
	in = open(lib, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		goto fail;
	out = mkostemp(tmp.buf, O_CLOEXEC);
	if (out < 0)
		goto fail;
	if (copy_fd(in, out) < 0 || fchmod(out, 0755) < 0 || close(out) < 0) {
		out = -1;
		unlink(tmp.buf);
		goto fail;
	}
	out = -1;
	/* rename, not overwrite in place: a running process may map the old
	 * copy, and a file changing under it would crash it. */
	if (rename(tmp.buf, dst.buf) < 0) {
		unlink(tmp.buf);
		goto fail;
	}
	close(in);
	pt_sb_release(&tmp);
	return pt_sb_detach(&dst, NULL);
fail:
	pt_warn("cannot copy %s to %s (where build sandboxes can see it): %s",
		lib, dir, strerror(errno));
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	pt_sb_release(&tmp);
	pt_sb_release(&dst);
	return NULL;
}

/*
 * The directory ld.so's $LIB stands for in this process ("lib/x86_64-linux-gnu"
 * on Debian, "lib64" on Fedora): where libc itself was found, less the
 * leading "/" or "/usr/".
 */
static const char *dollar_lib(void)
{
	static char lib[PATH_MAX];
	Dl_info info;
	char *slash;

	if (!lib[0] && dladdr((void *)strlen, &info) && info.dli_fname &&
	    realpath(info.dli_fname, lib) && (slash = strrchr(lib, '/')))
		*slash = '\0';
	if (!strncmp(lib, "/usr/", 5))
		return lib + 5;
	return lib[0] == '/' ? lib + 1 : NULL;
}

/*
 * The installed library is named through $LIB, which ld.so expands per
 * program: a 32-bit program then loads the 32-bit build installed beside
 * it instead of printing "wrong ELF class" (design.md, pitfall 7).
 */
static void append_lib(struct pt_sb *sb, const char *lib)
{
	const char *dl = dollar_lib();
	size_t pre = strlen(lib) - strlen("/" LIB_NAME), n = dl ? strlen(dl) : 0;

	if (dl && n && !strcmp(lib, PT_LIBDIR "/" LIB_NAME) && pre > n &&
	    lib[pre - n - 1] == '/' && !strncmp(lib + pre - n, dl, n)) {
		pt_sb_add(sb, lib, pre - n);
		pt_sb_addstr(sb, "$LIB/" LIB_NAME);
		return;
	}
	pt_sb_addstr(sb, lib);
}

char *pt_preload_value(const char *old, const char *lib)
{
	struct pt_sb sb = PT_SB_INIT;
	const char *p = old ? old : "";

	/* ld.so separates LD_PRELOAD entries by spaces or colons. */
	while (*p) {
		size_t n = strcspn(p, ": ");
		const char *base = p + n;

		while (base > p && base[-1] != '/')
			base--;
		if (n && strncmp(base, "libproftrace", 12)) {
			pt_sb_add(&sb, p, n);
			pt_sb_addch(&sb, ':');
		}
		p += n;
		if (*p)
			p++;
	}
	append_lib(&sb, lib);
	return pt_sb_detach(&sb, NULL);
}
