/*
 * The environment as the library reads it at load: what the exec hooks
 * put back (envexec.c), kept in pt's pool; what HELLO records of it; and
 * what proftrace added to it, which the image takes out of its `environ`
 * (pt_env_hide), so that the program sees the environment it was given
 * (design.md, pitfall 3).
 */
#include <dlfcn.h>

#include "pt-env.h"
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

#define VAR(name) { name "=", sizeof name }  /* "NAME=" and its length */
const struct pt_env_var pt_env_vars[V_COUNT] = {
	[V_PRELOAD] = VAR("LD_PRELOAD"), [V_SOCKET] = VAR(PT_ENV_SOCKET),
	[V_DIR] = VAR(PT_ENV_DIR), [V_LIST] = VAR(PT_ENV_LIST),
	[V_TRACE] = VAR(PT_ENV_TRACE_DIR), [V_LOG] = VAR(PT_ENV_LOG),
	[V_ADDED] = VAR(PT_ENV_ADDED), [V_FILES] = VAR(PT_ENV_FILES),
};
#undef VAR
_Static_assert(V_COUNT <= sizeof pt.env_at / sizeof pt.env_at[0],
	       "pt.env_at holds a place for each variable");

/*
 * Every image and every spawn asks this of every variable: all but a few
 * are told apart by their first two letters, and ours, but LD_PRELOAD, by
 * the letter after the "PROFTRACE_" they share (each a different one).
 */
int pt_env_var_index(const char *e)
{
	int i;

	if (e[0] == 'L')
		return pt_strncmp(e, "LD_PRELOAD=", 11) ? -1 : V_PRELOAD;
	if (e[0] != 'P' || e[1] != 'R' || pt_strncmp(e, "PROFTRACE_", 10))
		return -1;
	for (i = V_PRELOAD + 1; i < V_COUNT; i++)
		if (e[10] == pt_env_vars[i].name[10] &&
		    !pt_strncmp(e + 11, pt_env_vars[i].name + 11,
				pt_env_vars[i].len - 11))
			return i;
	return -1;
}

/*
 * The value of each variable of pt_env_vars in envp, the first entry of
 * its name as getenv() has it, or NULL.  One pass.
 */
static void lookup_all(char *const *envp, const char *val[V_COUNT])
{
	size_t n;
	int i;

	for (i = 0; i < V_COUNT; i++)
		val[i] = NULL;
	for (n = 0; envp && envp[n]; n++)
		if ((i = pt_env_var_index(envp[n])) >= 0 && !val[i]) {
			val[i] = envp[n] + pt_env_vars[i].len;
			pt.env_at[i] = (uint32_t)n + 1;  /* for pt_env_hide */
		}
	pt.env_n = n;
}

/* Is the k-byte LD_PRELOAD item at p the file-access library's? */
#define is_files(p, k) pt_item_is(p, k, PT_FILES_STEM)


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

unsigned pt_env_added_mask(const char *list)
{
	const char *p = list;
	unsigned mask = 0;
	int i;

	while (*p) {
		size_t k = pt_strcspn(p, ":");

		/* Length and last letter tell them apart but for one compare */
		for (i = 0; i < V_ADDED; i++)
			if (k == pt_env_vars[i].len - 1 &&
			    p[k - 1] == pt_env_vars[i].name[k - 1] &&
			    !pt_strncmp(p, pt_env_vars[i].name, k))
				mask |= 1u << i;
		p += k;
		p += *p != '\0';
	}
	return mask;
}

/*
 * PROFTRACE_FILES=1 with a bare LD_PRELOAD: libptfiles.so, the file in
 * our own directory, goes into LD_PRELOAD just before our item, in the
 * initial array itself (the program sees it there, as it would under
 * `record --files`), so that every image this one starts loads it as
 * `record --files` has it load; repair puts it back with ours
 * (add_missing).  This image, loaded already, records none of its own
 * accesses.  Nothing when the list names it already, does not name us,
 * or the file cannot be read.  Only under PROFTRACE_FILES: its PATH_MAX
 * frame and its one system call are no other image's.
 */
static __attribute__((noinline)) void files_setup(char **envp,
						  const char *preload)
{
	static const char name[] = PT_FILES_NAME;
	const char *lib = PT_STR(lib_path), *slash, *p, *ours = NULL;
	char path[PATH_MAX];
	size_t dir, k, rest;
	uint16_t at;

	if (!preload || !pt.lib_path || !pt.env_at[V_PRELOAD])
		return;
	for (p = preload; *p; p += k, p += *p != '\0') {
		k = pt_strcspn(p, ": ");
		if (is_files(p, k))
			return;
		if (!ours && k && is_ours(p, k))
			ours = p;
	}
	slash = pt_memrchr(lib, '/', pt_strlen(lib));
	dir = slash ? (size_t)(slash - lib) + 1 : 0;
	if (!ours || dir + sizeof name > sizeof path)
		return;
	pt_memcpy(path, lib, dir);
	pt_memcpy(path + dir, name, sizeof name);
	if (pt_sys_readable(path) < 0 ||
	    !(pt.files_entry = pool_add(path, dir + sizeof name - 1, NULL, NULL,
					PATH_MAX)))
		return;
	/* "LD_PRELOAD=" what comes before our item, "FILES:", then ours on */
	at = pool_add(preload - 11, 11 + (size_t)(ours - preload),
		      PT_STR(files_entry), ":", 2 * PATH_MAX);
	rest = pt_strlen(ours);
	if (!at || pt.pool_used + rest > sizeof pt.pool ||
	    pt.pool_used - 1 - at + rest >= 2 * PATH_MAX) {
		pt.files_entry = 0;
		return;
	}
	pt_memcpy(pt.pool + pt.pool_used - 1, ours, rest + 1);
	pt.pool_used += rest;
	envp[pt.env_at[V_PRELOAD] - 1] = pt.pool + at;
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
	if (val[V_ADDED])       /* the marker goes, whatever it names */
		pt.env_added = pt_env_added_mask(val[V_ADDED]) | 1u << V_ADDED;
	find_preload_entry(val[V_PRELOAD]);
	note_foreign();
	if (val[V_FILES] && val[V_FILES][0] == '1' && !val[V_FILES][1])
		files_setup((char **)envp, val[V_PRELOAD]);
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

/*
 * An LD_PRELOAD entry e without its last item, which must be ours: in
 * the pool, or NULL when nothing else is left (take the variable out).
 * e itself when the last item is not ours or the rest does not fit.
 */
static char *preload_without_own(char *e)
{
	const char *v = e + 11, *end = v + pt_strlen(v), *item = end;
	uint16_t at;

	while (item > v && item[-1] != ':' && item[-1] != ' ')
		item--;
	if (!is_ours(item, (size_t)(end - item)))
		return e;
	while (item > v && (item[-1] == ':' || item[-1] == ' '))
		item--;
	if (item == v)
		return NULL;
	at = pool_add(e, (size_t)(item - e), NULL, NULL, 2 * PATH_MAX);
	return at ? pt.pool + at : e;
}

void pt_env_hide(char **envp)
{
	char **env = envp, *gone[PT_ENV_HIDDEN_MAX], *e;
	size_t at[PT_ENV_HIDDEN_MAX], n = pt.env_n, i, j, k = 0, m;
	unsigned drop = pt.env_added;
	int v;

	/* What pt_env_setup() found where it is: the first entry of each
	 * name, which getenv() and ld.so read. */
	if (!drop || !env || environ != env)
		return;
	for (v = 0; v < V_COUNT; v++) {
		if (!(drop & 1u << v) || !pt.env_at[v])
			continue;
		i = pt.env_at[v] - 1;
		if (v == V_PRELOAD && (e = preload_without_own(env[i]))) {
			if (e != env[i])
				env[i] = e, pt.env_own_preload = 1;
			continue;
		}
		/* in the order of the array */
		for (m = k++; m && at[m - 1] > i; m--)
			at[m] = at[m - 1];
		at[m] = i;
	}
	if (!k)
		return;
	/* The array is the one on the stack, ld.so's: the entries stay in
	 * it, the ones taken out moved before what environ now starts at.
	 * Its end stays where it was, since the auxiliary vector follows it
	 * and some read it from there (Go's runtime, hand-made startup
	 * code): they walk it from argv and still see every entry. */
	for (m = 0; m < k; m++)
		gone[m] = env[at[m]];
	for (i = n, j = n, m = k; i-- > 0;) {
		if (m && i == at[m - 1])
			m--;
		else
			env[--j] = env[i];
	}
	pt_memcpy(env, gone, k * sizeof *gone);
	environ = env + k;
	pt.env_whole = env;
	pt.env_view = env + k;
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

