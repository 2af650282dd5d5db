/* Run-time directory, socket path and preload library; see rundir.h. */
#include "collect/rundir.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftrace/wire.h"
#include "pt-config.h"
#include "base/strbuf.h"
#include "base/util.h"

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

/*
 * Whether the ELF file open at fd, of this program's class and byte order,
 * is a position-independent executable (DF_1_PIE): ld.so refuses to
 * preload one, though its type is ET_DYN as a library's.
 */
static int is_pie(int fd, const ElfW(Ehdr) *eh)
{
	ElfW(Phdr) ph;
	ElfW(Dyn) dyn;
	size_t i, k;

	if (eh->e_phentsize != sizeof ph)
		return 0;
	for (i = 0; i < eh->e_phnum && i < 4096; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh->e_phoff +
						      i * sizeof ph)) !=
		    sizeof ph)
			return 0;
		if (ph.p_type != PT_DYNAMIC)
			continue;
		for (k = 0; k < ph.p_filesz / sizeof dyn && k < 4096; k++) {
			if (pread(fd, &dyn, sizeof dyn, (off_t)(ph.p_offset +
							k * sizeof dyn)) !=
			    sizeof dyn || dyn.d_tag == DT_NULL)
				return 0;
			if (dyn.d_tag == DT_FLAGS_1)
				return (dyn.d_un.d_val & DF_1_PIE) != 0;
		}
		return 0;
	}
	return 0;
}

/*
 * Why the file at path cannot be preloaded into this program's processes,
 * or NULL if it can: anything else would be preloaded all the same, and
 * ld.so would print its complaint in every process of the command.
 */
static const char *not_loadable(const char *path)
{
	/* This program's own ELF header, as the linker maps it. */
	extern const ElfW(Ehdr) __ehdr_start;
	const ElfW(Ehdr) *self = &__ehdr_start;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *why = NULL;
	ElfW(Ehdr) eh;
	ssize_t n;

	if (fd < 0)
		return strerror(errno);
	n = pread(fd, &eh, sizeof eh, 0);
	/* e_type and e_machine sit at the same place in both classes. */
	if (n < (ssize_t)offsetof(ElfW(Ehdr), e_version) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		why = "not an ELF file";
	else if (eh.e_ident[EI_CLASS] != self->e_ident[EI_CLASS] ||
		 eh.e_ident[EI_DATA] != self->e_ident[EI_DATA] ||
		 eh.e_machine != self->e_machine)
		why = "built for another architecture";
	else if (n != sizeof eh || eh.e_type != ET_DYN || is_pie(fd, &eh))
		why = "not a shared object";
	close(fd);
	return why;
}

char *pt_rundir_find_lib(void)
{
	const char *env = getenv("PROFTRACE_LIB");
	const char *cand, *why;
	char *abs;

	if (env && *env)
		cand = env;
	else if (running_from_build_tree())
		cand = PT_BUILD_PRELOAD_DIR "/" PT_LIB_NAME;
	else
		cand = PT_LIBDIR "/" PT_LIB_NAME;

	/* Absolute: traced processes change directories. */
	abs = realpath(cand, NULL);
	if (!abs || access(abs, R_OK) < 0) {
		pt_warn("cannot use the preload library %s: %s%s", cand,
			strerror(errno),
			env && *env ? "" : " (set PROFTRACE_LIB to its path)");
		free(abs);
		return NULL;
	}
	if ((why = not_loadable(abs))) {
		pt_warn("cannot use the preload library %s: %s", abs, why);
		free(abs);
		return NULL;
	}
	return abs;
}

/* The whole file at path, malloc'd, or NULL with errno set. */
static unsigned char *read_file(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (n == cap)
			buf = pt_xrealloc(buf, cap = cap ? 2 * cap : 256 << 10);
		r = read(fd, buf + n, cap - n);
		if (r == 0)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			free(buf);
			close(fd);
			errno = err;
			return NULL;
		}
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

/* FNV-1a, 64 bits: names a copy by its contents. */
static uint64_t fnv64(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/*
 * The shared library directory, open: made 0755 if missing; refused
 * unless it is a directory of ours that nobody else can write to (what
 * is in it is loaded into every traced process).  -1 with a message.
 */
static int open_lib_dir(const char *path)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		pt_warn("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		pt_warn("cannot use %s: %s%s", path, strerror(errno),
			errno == ENOTDIR || errno == ELOOP ?
			" (not a directory: refusing to use it)" : "");
		goto fail;
	}
	if (st.st_uid != geteuid() || st.st_mode & 022) {
		pt_warn("%s belongs to uid %u or is writable by others (mode "
			"%03o); refusing to use it", path, (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 0777));
		goto fail;
	}
	/* Made under a restrictive umask: others must read the library. */
	if ((st.st_mode & 0755) != 0755 && fchmod(fd, 0755) < 0) {
		pt_warn("cannot chmod %s: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Is dir/name already a copy we made of exactly these bytes? */
static int same_copy(int dir, const char *name, const unsigned char *data,
		     size_t n)
{
	struct stat st;
	unsigned char *have;
	size_t got = 0;
	ssize_t r;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), same;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_mode & 022 ||
	    (st.st_mode & 0444) != 0444 || (size_t)st.st_size != n) {
		close(fd);
		return 0;
	}
	have = pt_xmalloc(n ? n : 1);
	while (got < n && ((r = read(fd, have + got, n - got)) > 0 ||
			   (r < 0 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	same = got == n && !memcmp(have, data, n);
	free(have);
	close(fd);
	return same;
}

char *pt_rundir_visible_lib(const char *lib)
{
	struct pt_sb dir = PT_SB_INIT, tmp = PT_SB_INIT, dst = PT_SB_INIT;
	unsigned char *data = NULL;
	char name[64];
	size_t n;
	int dfd = -1, out, err;

	if (!strncmp(lib, "/usr/", 5))
		return pt_xstrdup(lib);

	pt_sb_addf(&dir, "%slib-%u", PT_RUNDIR_PREFIX, (unsigned)geteuid());
	if (!(data = read_file(lib, &n))) {
		pt_warn("cannot read %s: %s", lib, strerror(errno));
		goto fail;
	}
	if ((dfd = open_lib_dir(dir.buf)) < 0)
		goto fail;
	{
		/* Named after the file: libproftrace-HASH.so, libptfiles-HASH.so */
		const char *base = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
		int stem = (int)strcspn(base, ".");

		snprintf(name, sizeof name, "%.*s-%016llx.so",
			 stem > 32 ? 32 : stem, base,
			 (unsigned long long)fnv64(data, n));
	}
	pt_sb_addf(&dst, "%s/%s", dir.buf, name);
	if (same_copy(dfd, name, data, n))
		goto done;
	/* Written aside, then renamed: a process may be mapping the name's
	 * old file, and a file changing under it would crash it. */
	pt_sb_addf(&tmp, "%s/.%s.XXXXXX", dir.buf, name);
	out = mkostemp(tmp.buf, O_CLOEXEC);
	if (out < 0)
		goto copy_fail;
	if (pt_write_all(out, data, n) < 0 || fchmod(out, 0644) < 0) {
		close(out);
		goto unlink_fail;
	}
	if (close(out) < 0 || rename(tmp.buf, dst.buf) < 0)
		goto unlink_fail;
done:
	close(dfd);
	free(data);
	pt_sb_release(&dir);
	pt_sb_release(&tmp);
	return pt_sb_detach(&dst, NULL);
unlink_fail:
	err = errno;
	unlink(tmp.buf);
	errno = err;
copy_fail:
	pt_warn("cannot copy %s to %s (where build sandboxes and other users "
		"can read it): %s", lib, dir.buf, strerror(errno));
fail:
	if (dfd >= 0)
		close(dfd);
	free(data);
	pt_sb_release(&dir);
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
	size_t pre = strlen(lib) - PT_LEN("/" PT_LIB_NAME);
	size_t n = dl ? strlen(dl) : 0;

	if (dl && n && !strcmp(lib, PT_LIBDIR "/" PT_LIB_NAME) && pre > n &&
	    lib[pre - n - 1] == '/' && !strncmp(lib + pre - n, dl, n)) {
		pt_sb_add(sb, lib, pre - n);
		pt_sb_addstr(sb, "$LIB/" PT_LIB_NAME);
		return;
	}
	pt_sb_addstr(sb, lib);
}

char *pt_rundir_preload_value(const char *old, const char *lib)
{
	struct pt_sb sb = PT_SB_INIT;
	const char *p = old ? old : "";

	/* ld.so separates LD_PRELOAD entries by spaces or colons. */
	while (*p) {
		size_t n = strcspn(p, ": ");
		const char *base = p + n;

		while (base > p && base[-1] != '/')
			base--;
		if (n && strncmp(base, PT_LIB_STEM, PT_LEN(PT_LIB_STEM)) &&
		    strncmp(base, PT_FILES_STEM, PT_LEN(PT_FILES_STEM))) {
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

char *pt_rundir_preload_files(const char *old, const char *files,
			       const char *lib)
{
	char *v = pt_rundir_preload_value(old, lib), *last = v, *p;
	struct pt_sb sb = PT_SB_INIT;

	/* Before the library: its hooks forward to libproftrace.so's. */
	for (p = v; *p; p++)
		if (*p == ':' || *p == ' ')
			last = p + 1;
	pt_sb_add(&sb, v, (size_t)(last - v));
	pt_sb_addf(&sb, "%s:%s", files, last);
	free(v);
	return pt_sb_detach(&sb, NULL);
}

char *pt_rundir_files_lib(const char *lib)
{
	const char *slash = strrchr(lib, '/');
	struct pt_sb sb = PT_SB_INIT;
	char *abs;

	pt_sb_add(&sb, lib, slash ? (size_t)(slash - lib + 1) : 0);
	pt_sb_addstr(&sb, PT_FILES_NAME);
	abs = realpath(sb.buf, NULL);
	if (!abs || access(abs, R_OK) < 0) {
		pt_warn("cannot use the file-access library %s beside %s: %s",
			sb.buf, lib, strerror(errno));
		free(abs);
		abs = NULL;
	}
	pt_sb_release(&sb);
	return abs;
}

char *pt_rundir_absolute(const char *path)
{
	struct pt_sb sb = PT_SB_INIT;
	char *cwd;

	if (path[0] == '/')
		return pt_xstrdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		pt_die(1, "getcwd: %s", strerror(errno));
	pt_sb_addf(&sb, "%s/%s", cwd, path);
	free(cwd);
	return pt_sb_detach(&sb, NULL);
}
