/*
 * The environment: what the library reads at load, what HELLO records, and
 * the repair that keeps children traced when a program hands them an
 * environment without LD_PRELOAD or PROFTRACE_* (env -i, execve with
 * {NULL}, Python's subprocess(env=...); design.md, pitfall 3).
 *
 * Repair runs in exec hooks, possibly in a vfork child: it builds the new
 * array in memory the caller provides on its stack and allocates nothing.
 */
#include <dlfcn.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

static const char *const allowlist[] = { PT_ENV_ALLOWLIST };

static void note_initials(void);

/*
 * Add the n bytes at a, then the strings b and c (or NULL), as one string
 * to pt.pool.  Returns its offset, or 0 (the empty string) if the result
 * would reach max bytes or does not fit.
 */
static uint16_t pool_add(const char *a, size_t n, const char *b, const char *c,
			 size_t max)
{
	size_t nb = b ? pt_strlen(b) : 0, nc = c ? pt_strlen(c) : 0;
	size_t at = pt.pool_used ? pt.pool_used : 1, len = n + nb + nc;

	if (len >= max || at + len + 1 > sizeof pt.pool)
		return 0;
	pt_memcpy(pt.pool + at, a, n);
	if (nb)                         /* memcpy from NULL, even of 0 bytes, */
		pt_memcpy(pt.pool + at + n, b, nb);        /* is undefined */
	if (nc)
		pt_memcpy(pt.pool + at + n + nb, c, nc);
	pt.pool[at + len] = '\0';
	pt.pool_used = at + len + 1;
	return (uint16_t)at;
}

/* "NAME=value" added to the pool, as pool_add(). */
static uint16_t pool_entry(const char *name, const char *val, size_t max)
{
	return pool_add(name, pt_strlen(name), "=", val, max);
}

/* The variables the library reads at load, by their index in it. */
enum { V_PRELOAD, V_SOCKET, V_DIR, V_LIST, V_TRACE, V_LOG, V_COUNT };

#define VAR(name) { name "=", sizeof name }  /* "NAME=" and its length */
static const struct {
	char name[24];
	size_t len;
} read_at_load[V_COUNT] = {
	[V_PRELOAD] = VAR("LD_PRELOAD"), [V_SOCKET] = VAR(PT_ENV_SOCKET),
	[V_DIR] = VAR(PT_ENV_DIR), [V_LIST] = VAR(PT_ENV_LIST),
	[V_TRACE] = VAR(PT_ENV_TRACE_DIR), [V_LOG] = VAR(PT_ENV_LOG),
};
#undef VAR

/*
 * The index in read_at_load of the variable entry e sets, or -1.  Every
 * image and every spawn asks this of every variable: all but a few are
 * told apart by their first two letters.
 */
static int var_index(const char *e)
{
	int i;

	if (e[0] != 'L' && e[0] != 'P')
		return -1;
	for (i = 0; i < V_COUNT; i++)
		if (e[1] == read_at_load[i].name[1] &&
		    !pt_strncmp(e, read_at_load[i].name, read_at_load[i].len))
			return i;
	return -1;
}

/*
 * The value of each variable of read_at_load in envp, the first entry of
 * its name as getenv() has it, or NULL.  One pass.
 */
static void lookup_all(char *const *envp, const char *val[V_COUNT])
{
	int i;

	for (i = 0; i < V_COUNT; i++)
		val[i] = NULL;
	for (; envp && *envp; envp++)
		if ((i = var_index(*envp)) >= 0 && !val[i])
			val[i] = *envp + read_at_load[i].len;
}

/* Is `entry` one of the ':'- or ' '-separated items of list? */
static int list_has(const char *list, const char *entry, size_t len)
{
	const char *p = list;

	while (*p) {
		size_t k = pt_strcspn(p, ": ");

		if (k == len && !pt_strncmp(p, entry, len))
			return 1;
		p += k;
		p += *p != '\0';
	}
	return 0;
}

/* Is the k-byte LD_PRELOAD item at p one of ours? */
static int is_ours(const char *p, size_t k)
{
	const char *slash = pt_memrchr(p, '/', k);
	const char *base = slash ? slash + 1 : p;

	return k - (size_t)(base - p) >= 12 && !pt_strncmp(base, "libproftrace",
							   12);
}

/*
 * Does LD_PRELOAD's list name a copy of the library other than ours (len
 * bytes at entry)?  Then another collector (a `proftrace record` run
 * under this one) set the environment up for itself.
 */
static int list_has_other_copy(const char *list, const char *entry,
			       size_t len)
{
	const char *p = list;

	while (*p) {
		size_t k = pt_strcspn(p, ": ");

		if (is_ours(p, k) && (k != len || pt_strncmp(p, entry, len)))
			return 1;
		p += k;
		p += *p != '\0';
	}
	return 0;
}

/* Our file's path in the pool, from the loader (dladdr: about 2,000
 * instructions, so only where LD_PRELOAD does not say it plainly); 0 if
 * unknown. */
static uint16_t own_path(void)
{
	Dl_info info;

	if (!dladdr((void *)own_path, &info) || !info.dli_fname)
		return 0;
	return pool_add(info.dli_fname, pt_strlen(info.dli_fname), NULL, NULL,
			PATH_MAX);
}

/* Our own item of LD_PRELOAD, as written there (it may hold $LIB). */
static void find_preload_entry(const char *preload)
{
	const char *p = preload;

	while (p && *p) {
		size_t k = pt_strcspn(p, ": ");

		if (is_ours(p, k)) {
			pt.preload_entry = pool_add(p, k, NULL, NULL, PATH_MAX);
			break;
		}
		p += k;
		p += *p != '\0';
	}
	/* Loaded some other way (ld.so.preload, a renamed copy): our path. */
	if (!pt.preload_entry) {
		pt.preload_entry = own_path();
		pt.lib_path = pt.preload_entry;
		return;
	}
	/* What exec hooks check is readable: where this process found us
	 * when the entry holds $LIB (ld.so expands it) or is a bare name
	 * (ld.so searches the library path for it). */
	pt.lib_path = pt.preload_entry;
	if (pt_strchr(PT_STR(preload_entry), '$') ||
	    !pt_strchr(PT_STR(preload_entry), '/'))
		pt.lib_path = own_path();
}

#ifdef PT_FOREIGN_LOADER
/*
 * Into buf (cap bytes): what the ld.so at loader expands $LIB to, "lib32"
 * or "lib/i386-linux-gnu": the directory of its own file, less "/" or
 * "/usr/" (glibc's $LIB is where its libc was built to live).  Only the
 * last component's symbolic links are followed, as /lib is /usr/lib on a
 * merged /usr.  0 if the loader is not there.
 */
static int loader_lib(const char *loader, char *buf, size_t cap)
{
	char link[PATH_MAX];
	const char *slash;
	size_t n = pt_strlen(loader), k;
	ssize_t got;
	int hops;

	if (n + 1 > cap)
		return 0;
	pt_memcpy(buf, loader, n + 1);
	for (hops = 0; hops < 8; hops++) {
		got = pt_sys_readlink(buf, link, sizeof link - 1);
		if (got < 0)
			break;
		link[got] = '\0';
		k = link[0] == '/' ? 0 :
		    (size_t)(pt_memrchr(buf, '/', n) - buf) + 1;
		if (k + (size_t)got + 1 > cap)
			return 0;
		pt_memcpy(buf + k, link, (size_t)got + 1);
		n = k + (size_t)got;
	}
	if (got < 0 && errno != EINVAL)         /* EINVAL: not a link */
		return 0;
	slash = pt_memrchr(buf, '/', n);
	if (!slash || slash == buf)
		return 0;
	n = (size_t)(slash - buf);
	k = !pt_strncmp(buf, "/usr/", 5) ? 5 : 1;
	if (n <= k)
		return 0;
	pt_memcpy(buf, buf + k, n - k);
	buf[n - k] = '\0';
	return 1;
}
#endif

#ifdef PT_FOREIGN_LOADER
/*
 * Does a build of the other class sit where our entry e ($LIB in it, or a
 * bare name) leads a loader of that class?  1 or 0; -1 if the loader is
 * not there.  Apart from note_foreign(), so that the common case, a path,
 * takes none of its two PATH_MAX buffers: a frame that size is stack
 * pages, probed and so faulted in, at every image's start.
 */
static __attribute__((noinline)) int other_build_found(const char *e)
{
	char flib[PATH_MAX], path[PATH_MAX];
	const char *d;
	size_t fl, at = 0;
	int ok = 0;

	if (!loader_lib(PT_FOREIGN_LOADER, flib, sizeof flib))
		return -1;
	fl = pt_strlen(flib);
	if ((d = pt_strchr(e, '$'))) {
		/* "$LIB" or "${LIB}", once: anything else, not ours to expand */
		size_t pre = (size_t)(d - e), skip =
			!pt_strncmp(d, "$LIB", 4) ? 4 :
			!pt_strncmp(d, "${LIB}", 6) ? 6 : 0;

		if (skip && pre + fl + pt_strlen(d + skip) < sizeof path) {
			pt_memcpy(path, e, pre);
			pt_memcpy(path + pre, flib, fl);
			pt_strcpy(path + pre + fl, d + skip);
			ok = !pt_strchr(path, '$') && pt_sys_readable(path) == 0;
		}
	} else if (!pt_strchr(e, '/')) {
		/* Where the loader looks by default, and beside us: under
		 * our prefix, where the install puts the other build (and
		 * names its directory to the loader). */
		const char *roots[3] = { "/", "/usr/", PT_STR(lib_path) };
		size_t i, el = pt_strlen(e), rl[3] = { 1, 5, 0 }, ol;
		const char *our = pt_memrchr(roots[2], '/',
					     pt_strlen(roots[2]));

		/* lib_path is PREFIX/<our $LIB>/NAME: keep "PREFIX/" */
		if (our && loader_lib(PT_NATIVE_LOADER, path, sizeof path) &&
		    (ol = pt_strlen(path)) < (size_t)(our - roots[2]) &&
		    !pt_strncmp(our - ol, path, ol) && our[-(long)ol - 1] == '/')
			rl[2] = (size_t)(our - roots[2]) - ol;
		for (i = 0; i < 3 && !ok; i++) {
			at = rl[i];
			if (!at || at + fl + 1 + el >= sizeof path)
				continue;
			pt_memcpy(path, roots[i], at);
			pt_memcpy(path + at, flib, fl);
			path[at + fl] = '/';
			pt_memcpy(path + at + fl + 1, e, el + 1);
			ok = pt_sys_readable(path) == 0;
		}
	}
	return ok;
}
#endif

/*
 * Would a program of the other class find a build of the library from our
 * LD_PRELOAD entry?  Through $LIB, the file it expands to for that class;
 * by a bare name, a file in that class's default directories; a path,
 * never (it names one build).  Once per process, at load time.
 */
static void note_foreign(void)
{
#ifdef PT_FOREIGN_LOADER
	const char *e = PT_STR(preload_entry);
	int saved = errno, found;

	if (!*e)
		return;
	if (pt_strchr(e, '/') && !pt_strchr(e, '$')) {
		/* A path names one build, never one for the other class.
		 * Whether such programs can run here at all is asked at the
		 * first exec that needs it (target.c): an image that never
		 * execs, most of a build's, is spared the loader's links. */
		pt.foreign_missing = PT_FOREIGN_UNKNOWN;
		return;
	}
	found = other_build_found(e);
	if (found >= 0)
		pt.foreign_missing = !found;
	pt_errno_restore(saved);
#endif
}

int pt_env_take_log(const char *log)
{
	const char *p = log;
	uint64_t id[3] = { 0, 0, 0 };
	int i;

	/* "PIDNS:DEV:INO:PATH": the run log, for images in the collector's
	 * pid namespace; put back at exec as the socket's path is. */
	for (i = 0; i < 3 && *p >= '0' && *p <= '9'; i++) {
		while (*p >= '0' && *p <= '9')
			id[i] = id[i] * 10 + (uint64_t)(*p++ - '0');
		if (*p++ != ':')
			break;
	}
	if (i != 3 || *p != '/' || !id[0] || id[0] > UINT32_MAX ||
	    !(pt.log_path = pool_add(p, pt_strlen(p), NULL, NULL, PATH_MAX)))
		return -1;
	pt.log_pidns = (uint32_t)id[0];
	pt.log_dev = id[1];
	pt.log_ino = id[2];
	/* Last, and released: another thread's exec hook may read it now
	 * (conn.c learns it at load), and must find the pool's string whole. */
	__atomic_store_n(&pt.env_log, pool_entry(PT_ENV_LOG, log, 2 * PATH_MAX),
			 __ATOMIC_RELEASE);
	return pt.env_log ? 0 : -1;
}

void pt_env_setup(char *const *envp)
{
	const char *val[V_COUNT], *sock, *dir, *list, *trace, *log;
	char uid[16], *u = uid + sizeof uid;
	unsigned v;

	lookup_all(envp, val);
	sock = val[V_SOCKET];
	dir = val[V_DIR];
	list = val[V_LIST];
	trace = val[V_TRACE];
	log = val[V_LOG];
	find_preload_entry(val[V_PRELOAD]);
	note_foreign();
	if (pt.preload_entry)
		pt.env_preload = pool_entry("LD_PRELOAD", PT_STR(preload_entry),
					    2 * PATH_MAX);
	if (sock)
		pt.socket_path = pool_add(sock, pt_strlen(sock), NULL, NULL,
					  PT_SUN_PATH_MAX);
	if (pt.socket_path) {
		pt.env_socket = pool_entry(PT_ENV_SOCKET, sock, 2 * PATH_MAX);
	} else {
		v = (unsigned)pt_sys_getuid();
		*--u = '\0';
		do
			*--u = (char)('0' + v % 10);
		while ((v /= 10));
		pt.socket_path = pool_add(PT_RUNDIR_PREFIX,
					  pt_strlen(PT_RUNDIR_PREFIX), u,
					  "/" PT_SOCKET_NAME, PT_SUN_PATH_MAX);
	}
	if (log)
		pt_env_take_log(log);
	if (dir && (pt.spool_dir = pool_add(dir, pt_strlen(dir), NULL, NULL,
					    PATH_MAX)))
		pt.env_dir = pool_entry(PT_ENV_DIR, dir, 2 * PATH_MAX);
	if (list)
		pt.env_list = pool_entry(PT_ENV_LIST, list, 1024);
	if (trace)
		pt.env_trace = pool_entry(PT_ENV_TRACE_DIR, trace, 2 * PATH_MAX);
	note_initials();
}

uint16_t pt_env_pool_entry(const char *name, const char *val)
{
	return pool_entry(name, val, 2 * PATH_MAX);
}

uint16_t pt_env_pool_string(const char *s)
{
	return pool_add(s, pt_strlen(s), NULL, NULL, PATH_MAX);
}

/* Names whose values are never recorded, even when asked for. */
static int secret_name(const char *name, size_t len)
{
	static const char *const words[] = {
		"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL",
	};
	size_t i, j;

	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		size_t w = pt_strlen(words[i]);

		for (j = 0; j + w <= len; j++)
			if (!pt_strncasecmp(name + j, words[i], w))
				return 1;
	}
	return 0;
}

/* Note the first letter of each name HELLO may record. */
static void note_initials(void)
{
	size_t i;

	for (i = 0; i < sizeof allowlist / sizeof allowlist[0]; i++)
		pt.env_initials[(unsigned char)allowlist[i][0] / 32] |=
			1u << (unsigned char)allowlist[i][0] % 32;
	if (pt.env_list) {
		const char *p = PT_STR(env_list) + sizeof PT_ENV_LIST;

		while (*p) {
			size_t k = pt_strcspn(p, ":, ");

			if (k)
				pt.env_initials[(unsigned char)*p / 32] |=
					1u << (unsigned char)*p % 32;
			p += k;
			p += *p != '\0';
		}
	}
}

int pt_env_recorded(const char *entry)
{
	const char *eq;
	size_t len, i;
	unsigned char c = (unsigned char)entry[0];

	/* Most variables end here, on their first letter. */
	if (!(pt.env_initials[c / 32] & 1u << c % 32))
		return 0;
	eq = pt_strchr(entry, '=');
	if (!eq)
		return 0;
	len = (size_t)(eq - entry);
	/* Membership first: the secret scan is the costly part, and every
	 * variable of every process passes through here. */
	for (i = 0; i < sizeof allowlist / sizeof allowlist[0]; i++)
		if (allowlist[i][0] == entry[0] && pt_strlen(allowlist[i]) == len &&
		    !pt_strncmp(entry, allowlist[i], len))
			return !secret_name(entry, len);
	if (pt.env_list) {
		const char *list = PT_STR(env_list) + sizeof PT_ENV_LIST;
		const char *p = list;

		while (*p) {
			size_t k = pt_strcspn(p, ":, ");

			if (k == len && *p == *entry && !pt_strncmp(p, entry, len))
				return !secret_name(entry, len);
			p += k;
			p += *p != '\0';
		}
	}
	return 0;
}

size_t pt_env_count(char *const *envp)
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/*
 * Would ld.so, in an image exec'd now, find every descriptor below the
 * soft limit taken, so that it cannot open the library (nor any other)?
 * The library holds none of them itself.  Asked only under a soft limit
 * small enough for a program to fill (PT_STARVE_FDS): one prlimit64, and
 * then at most that many fcntl calls.  Leaves errno to the caller.
 */
#define PT_STARVE_FDS 64
static int loader_starved(void)
{
	struct pt_nofile l;
	int starved = 1;
	long fd;

	if (pt_sys_get_nofile(&l) < 0 || l.cur > PT_STARVE_FDS)
		return 0;
	for (fd = 0; starved && fd < (long)l.cur; fd++) {
		int r = pt_sys_fcntl((int)fd, F_GETFD, 0);

		starved = r >= 0 && !(r & FD_CLOEXEC);
	}
	return starved;
}

/*
 * Would ld.so in an image exec'd now fail to open the library (and say
 * so on the program's stderr)?  One system call per exec: the only test
 * that sees every way the library can vanish from view (chroot, a change
 * of user, bwrap's pivot_root through raw system calls, a deleted file).
 * Or it would find no descriptor to open it with: then the program's
 * own libraries cannot be loaded either, and ld.so is to say only that.
 */
static int lib_hidden(void)
{
	int saved = errno, hidden = 0;

	if (pt.lib_path && pt_sys_readable(PT_STR(lib_path)) < 0)
		hidden = errno == ENOENT || errno == EACCES ||
			 errno == ENOTDIR || errno == ELOOP;
	hidden = hidden || loader_starved();
	pt_errno_restore(saved);
	return hidden;
}

/* Is e one of the PROFTRACE_* variables the library reads? */
static int is_pt_var(const char *e)
{
	return var_index(e) > V_PRELOAD;
}

/* envp's first LD_PRELOAD entry among n, or NULL. */
static const char *preload_of(char *const *envp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (envp[i][0] == 'L' && !pt_strncmp(envp[i], "LD_PRELOAD=", 11))
			return envp[i];
	return NULL;
}

/*
 * envp with our items taken out of LD_PRELOAD, and LD_PRELOAD itself
 * when nothing else is left in it; with all, the PROFTRACE_* variables
 * too.  The rest keeps its order and, in LD_PRELOAD, its separators.
 * envp itself when there is nothing to take out, or when LD_PRELOAD does
 * not fit in scratch.
 */
static char *const *without_lib(char *const *envp, size_t n, char **out,
				char *scratch, size_t scratch_len, int all)
{
	const char *pre = preload_of(envp, n), *p;
	size_t i, j = 0, k, k1;
	int removed = 0, pre_removed = 0, last_ours = 0;
	char *w = scratch + 11;

	if (pre && pt_strlen(pre) + 1 > scratch_len)
		return envp;
	for (p = pre ? pre + 11 : ""; *p; p += k1) {
		k = pt_strcspn(p, ": ");
		k1 = k + (p[k] != '\0');        /* the item and its separator */
		last_ours = k && is_ours(p, k);
		pre_removed |= last_ours;
		if (!last_ours) {
			pt_memcpy(w, p, k1);
			w += k1;
		}
	}
	if (last_ours && w > scratch + 11)      /* "a:ours": the ':' too */
		w--;
	*w = '\0';
	if (pre_removed)
		pt_memcpy(scratch, pre, 11);
	for (i = 0; i < n; i++) {
		if (envp[i] == pre && pre_removed) {
			removed = 1;
			if (w > scratch + 11)
				out[j++] = scratch;
		} else if (all && is_pt_var(envp[i])) {
			removed = 1;
		} else {
			out[j++] = envp[i];
		}
	}
	out[j] = NULL;
	return removed ? out : envp;
}

char *const *pt_env_untraced(char *const *envp, size_t n, char **out,
			     char *scratch, size_t scratch_len)
{
	return without_lib(envp, n, out, scratch, scratch_len, 1);
}

size_t pt_env_preload_size(char *const *envp, size_t n)
{
	const char *pre = preload_of(envp, n);

	return pre ? pt_strlen(pre) + 1 : 1;
}

char *const *pt_env_repair(char *const *envp, size_t n, char **out,
			   char *scratch, size_t scratch_len, const char *file,
			   int search)
{
	static char *const empty[] = { NULL };
	const char *pre = NULL;
	const char *entry = PT_STR(preload_entry);
	size_t entry_len = pt_strlen(entry), i, j = 0;
	/* What each PROFTRACE_* variable would be put back as (0: nothing),
	 * in read_at_load's order, which is the order they are added in. */
	uint16_t add[V_COUNT] = {
		[V_SOCKET] = pt.env_socket, [V_DIR] = pt.env_dir,
		[V_LIST] = pt.env_list, [V_TRACE] = pt.env_trace,
		[V_LOG] = __atomic_load_n(&pt.env_log, __ATOMIC_ACQUIRE),
	};
	int need_pre, need_any, only_ours, k;

	if (!envp)
		envp = empty;
	if (n <= PT_ENV_MAX && (lib_hidden() || pt_target_foreign(file, search)))
		return without_lib(envp, n, out, scratch, scratch_len, 0);
	for (i = 0; i < n; i++) {
		k = var_index(envp[i]);
		if (k == V_PRELOAD)
			pre = envp[i];
		else if (k > V_PRELOAD)
			add[k] = 0;     /* the program's own value stays */
	}
	/* The common case, LD_PRELOAD=<our entry> and nothing else, in one
	 * comparison: every spawn of a build passes here. */
	only_ours = pre && entry_len &&
		    !pt_strncmp(pre + 11, entry, entry_len + 1);
	/* One library per process: the innermost collector's.  Adding ours
	 * beside another copy would load both, each reporting every event. */
	if (pre && !only_ours && list_has_other_copy(pre + 11, entry, entry_len))
		return envp;
	need_pre = entry_len && !only_ours &&
		   (!pre || !list_has(pre + 11, entry, entry_len));
	need_any = need_pre;
	for (k = V_PRELOAD + 1; k < V_COUNT; k++)
		need_any |= add[k] != 0;
	if (!need_any || n > PT_ENV_MAX)
		return envp;

	for (i = 0; i < n; i++) {
		size_t plen;

		out[j] = envp[i];
		if (envp[i] == pre && need_pre &&
		    (plen = pt_strlen(pre)) + 1 + entry_len + 1 <= scratch_len) {
			/* Theirs first: a library they preload keeps its place. */
			pt_memcpy(scratch, pre, plen);
			scratch[plen] = ':';
			pt_memcpy(scratch + plen + 1, entry, entry_len + 1);
			out[j] = scratch;
		}
		j++;
	}
	if (need_pre && !pre)
		out[j++] = PT_STR(env_preload);
	for (k = V_PRELOAD + 1; k < V_COUNT; k++)
		if (add[k])
			out[j++] = pt.pool + add[k];
	out[j] = NULL;
	return out;
}
