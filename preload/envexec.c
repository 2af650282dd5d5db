/*
 * The environment an exec hands on: repaired, so that children stay
 * traced when a program gives them one without LD_PRELOAD or PROFTRACE_*
 * (env -i, execve with {NULL}, Python's subprocess(env=...); design.md,
 * pitfall 3); what load took out put back; or, under seccomp, untraced.
 * It runs in exec hooks, maybe in a vfork child: it builds the new array
 * in memory the caller provides on its stack and allocates nothing.  What
 * it adds it names in PROFTRACE_ADDED, and the image to come takes those
 * variables out of its `environ` at load (pt_env_hide).
 */
#include <sys/mman.h>

#include "pt-env.h"
#include "pt-sys.h"

/*
 * Is `entry` (len bytes) one of the ':'- or ' '-separated items of list?
 * With other: does LD_PRELOAD's list name a copy of the library other
 * than entry, ours?  Then another collector (a `proftrace record` run
 * under this one) set the environment up for itself.
 */
static int list_has(const char *list, const char *entry, size_t len,
		    int other)
{
	const char *p = list;

	while (*p) {
		size_t k = pt_strcspn(p, ": ");

		if (other ? is_ours(p, k) &&
			    (k != len || pt_strncmp(p, entry, len)) :
			    k == len && !pt_strncmp(p, entry, len))
			return 1;
		p += k;
		p += *p != '\0';
	}
	return 0;
}

size_t pt_envexec_count(char *const *envp)
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
 * 1: out of view; 2: no descriptor; 0: neither.
 */
static int lib_hidden(void)
{
	int saved = errno, hidden = 0;

	if (pt.lib_path && pt_sys_readable(PT_STR(lib_path)) < 0)
		hidden = errno == ENOENT || errno == EACCES ||
			 errno == ENOTDIR || errno == ELOOP;
	hidden = hidden ? 1 : loader_starved() ? 2 : 0;
	pt_errno_restore(saved);
	return hidden;
}

/* Is e one of the PROFTRACE_* variables the library reads? */
static int is_pt_var(const char *e)
{
	return pt_env_var_index(e) > V_PRELOAD;
}

/* envp's first LD_PRELOAD entry among n, or NULL. */
static inline const char *preload_of(char *const *envp, size_t n)
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

char *const *pt_envexec_untraced(char *const *envp, size_t n, char **out,
			     char *scratch, size_t scratch_len)
{
	return without_lib(envp, n, out, scratch, scratch_len, 1);
}

size_t pt_envexec_preload_size(char *const *envp, size_t n)
{
	const char *pre = preload_of(envp, n);

	return pre ? pt_strlen(pre) + 1 : 1;
}

/*
 * "LD_PRELOAD=/proc/PID/root<lib_path>" at the end of scratch (cap bytes),
 * PID the collector's, for a process that a sandbox hides the library's
 * file from but not the collector's /proc entry (root's `bwrap --tmpfs
 * /tmp`, a chroot): ld.so follows that link into the collector's root,
 * where the file is.  The run log's path names the collector, and its
 * identity is checked first (as open_log does), so that a pid of another
 * namespace or a reused one is not taken for it.  Where the kernel
 * refuses the link (an ordinary user's sandbox, in a user namespace),
 * nothing: the image then runs without the library, as before.  Returns
 * the entry's length, 0 if none.  Only when the library is hidden.
 */
static __attribute__((noinline)) size_t lib_elsewhere(char *scratch,
						     size_t cap)
{
	const char *log = PT_STR(log_path), *lib = PT_STR(lib_path);
	size_t pl, ll = pt_strlen(lib), n;
	struct statx stx;
	char *e;

	if (!pt.log_path || !pt.lib_path || lib[0] != '/' ||
	    pt_strncmp(log, "/proc/", 6))
		return 0;
	for (pl = 6; log[pl] >= '0' && log[pl] <= '9'; pl++)
		;
	if (pl == 6 || log[pl] != '/')
		return 0;
	n = 11 + pl + 5 + ll + 1;       /* "LD_PRELOAD=" "/proc/PID" "/root" */
	if (n > cap / 2 ||
	    pt_sys_path_stat(log, &stx) < 0 || !S_ISREG(stx.stx_mode) ||
	    stx.stx_nlink != 0 || stx.stx_ino != pt.log_ino ||
	    pt_statx_dev(&stx) != pt.log_dev)
		return 0;
	e = scratch + cap - n;
	pt_memcpy(e, "LD_PRELOAD=", 11);
	pt_memcpy(e + 11, log, pl);
	pt_memcpy(e + 11 + pl, "/root", 5);
	pt_memcpy(e + 11 + pl + 5, lib, ll + 1);
	return pt_sys_readable(e + 11) == 0 ? n : 0;
}

/*
 * "PROFTRACE_ADDED=NAME:..." of the variables of mask (indexes in
 * pt_env_vars), into buf (cap bytes); NULL if it does not fit.
 */
static char *marker(unsigned mask, char *buf, size_t cap)
{
	size_t at = sizeof PT_ENV_ADDED, len;   /* "PROFTRACE_ADDED=" */
	int i;

	if (at + 1 > cap)
		return NULL;
	pt_memcpy(buf, PT_ENV_ADDED "=", at);
	for (i = 0; i < V_ADDED; i++) {
		if (!(mask & 1u << i))
			continue;
		len = pt_env_vars[i].len - 1;
		if (at + 1 + len + 1 > cap)
			return NULL;
		if (buf[at - 1] != '=')
			buf[at++] = ':';
		pt_memcpy(buf + at, pt_env_vars[i].name, len);
		at += len;
	}
	buf[at] = '\0';
	return buf;
}

/*
 * envp with what keeps children traced added to what it lacks, built in
 * out[] and scratch as pt_envexec_repair() says; envp itself when it lacks
 * nothing.  Apart from the checks of pt_envexec_repair(), whose stack an
 * exec passed through cannot spare.
 */
static char *const *add_missing(char *const *envp, size_t n, char **out,
				char *scratch, size_t scratch_len,
				const char *env_pre)
{
	const char *pre = NULL, *old_mark = NULL, *files;
	const char *entry = env_pre + 11;       /* after "LD_PRELOAD=" */
	size_t entry_len = pt_strlen(entry), i, j = 0, used = 0, flen = 0;
	unsigned mask = 0;
	char *mark;
	/* What each PROFTRACE_* variable would be put back as (0: nothing),
	 * in pt_env_vars's order, which is the order they are added in. */
	uint16_t add[V_COUNT] = {
		[V_SOCKET] = pt.env_socket, [V_DIR] = pt.env_dir,
		[V_LIST] = pt.env_list, [V_TRACE] = pt.env_trace,
		[V_LOG] = __atomic_load_n(&pt.env_log, __ATOMIC_ACQUIRE),
	};
	int need_pre, need_any, only_ours, k;

	for (i = 0; i < n; i++) {
		k = pt_env_var_index(envp[i]);
		if (k == V_PRELOAD)
			pre = envp[i];
		else if (k == V_ADDED && !old_mark)
			old_mark = envp[i];
		else if (k > V_PRELOAD)
			add[k] = 0;     /* the program's own value stays */
	}
	/* The common case, LD_PRELOAD=<our entry> and nothing else, in one
	 * comparison: every spawn of a build passes here. */
	only_ours = pre && entry_len &&
		    !pt_strncmp(pre + 11, entry, entry_len + 1);
	/* One library per process: the innermost collector's.  Adding ours
	 * beside another copy would load both, each reporting every event. */
	if (pre && !only_ours && list_has(pre + 11, entry, entry_len, 1))
		return envp;
	need_pre = entry_len && !only_ours &&
		   (!pre || !list_has(pre + 11, entry, entry_len, 0));
	need_any = need_pre;
	for (k = V_PRELOAD + 1; k < V_COUNT; k++)
		need_any |= add[k] != 0;
	if (!need_any || n > PT_ENV_MAX)
		return envp;
	/* PROFTRACE_FILES=1 (files_setup): the file library, and its ':',
	 * goes in just before ours, unless the list has it already. */
	files = pt.files_entry && env_pre == PT_STR(env_preload) ?
		PT_STR(files_entry) : NULL;
	if (files && need_pre && !(pre && list_has(pre + 11, files,
						  pt_strlen(files), 0)))
		flen = pt_strlen(files) + 1;

	for (i = 0; i < n; i++) {
		size_t plen;

		if (envp[i] == old_mark)
			continue;       /* ours, below, says what was added */
		out[j] = envp[i];
		if (envp[i] == pre && need_pre &&
		    (plen = pt_strlen(pre)) + 1 + flen + entry_len + 1 <=
		    scratch_len) {
			/* Theirs first: a library they preload keeps its place. */
			pt_memcpy(scratch, pre, plen);
			scratch[plen] = ':';
			if (flen) {
				pt_memcpy(scratch + plen + 1, files, flen - 1);
				scratch[plen + flen] = ':';
			}
			pt_memcpy(scratch + plen + 1 + flen, entry,
				  entry_len + 1);
			out[j] = scratch;
			used = plen + 1 + flen + entry_len + 1;
			mask |= 1u << V_PRELOAD;
		}
		j++;
	}
	if (need_pre && !pre && flen && 11 + flen + entry_len + 1 <= scratch_len) {
		pt_memcpy(scratch, "LD_PRELOAD=", 11);
		pt_memcpy(scratch + 11, files, flen - 1);
		scratch[10 + flen] = ':';
		pt_memcpy(scratch + 11 + flen, entry, entry_len + 1);
		out[j++] = scratch;
		used = 11 + flen + entry_len + 1;
		mask |= 1u << V_PRELOAD;
	} else if (need_pre && !pre) {
		out[j++] = (char *)env_pre;
		mask |= 1u << V_PRELOAD;
	}
	for (k = V_PRELOAD + 1; k < V_COUNT; k++)
		if (add[k]) {
			out[j++] = pt.pool + add[k];
			mask |= 1u << k;
		}
	/* What an older marker named is still proftrace's (the initial
	 * array passed on, with LD_PRELOAD of the user's appended to).  The
	 * image to come takes out what the marker names (pt_env_hide);
	 * without room for it, they stay in its sight. */
	if (old_mark)       /* the initial one was read at load */
		mask |= envp == (char *const *)pt.env_whole ?
			pt.env_added & ~(1u << V_ADDED) :
			pt_env_added_mask(old_mark + sizeof PT_ENV_ADDED);
	if (mask && (mark = marker(mask, scratch + used, scratch_len - used)))
		out[j++] = mark;
	out[j] = NULL;
	return out;
}

char *const *pt_envexec_repair(char *const *envp, size_t n, char **out,
			   char *scratch, size_t scratch_len, const char *file,
			   int search)
{
	static char *const empty[] = { NULL };
	const char *env_pre = PT_STR(env_preload);
	int hidden;

	if (!envp)
		envp = empty;
	/* The program's environment as load left it: what was taken out is
	 * still there, before it, and goes along as it came. */
	if (envp == (char *const *)pt.env_view) {
		n += (size_t)(pt.env_view - pt.env_whole);
		envp = pt.env_whole;
	}
	if (n <= PT_ENV_MAX && ((hidden = lib_hidden()) ||
				pt_target_foreign(file, search))) {
		size_t alt = 0;

		if (hidden == 1 && !pt_target_foreign(file, search))
			alt = lib_elsewhere(scratch, scratch_len);
		if (!alt) {
			if (hidden == 1)
				pt.lib_left_out = pt_sys_getpid();
			return without_lib(envp, n, out, scratch, scratch_len,
					   0);
		}
		/* The entry that can be opened instead of ours, kept at
		 * scratch's end; the rest of scratch as before, our old
		 * entry taken out first. */
		scratch_len -= alt;
		env_pre = scratch + scratch_len;
		envp = without_lib(envp, n, out, scratch, scratch_len, 0);
		for (n = 0; envp[n]; n++)
			;
	}
	return add_missing(envp, n, out, scratch, scratch_len, env_pre);
}

/* Bytes of the longest PROFTRACE_ADDED=... marker() makes, with its NUL */
#define MARK_MAX 160

/*
 * What pt_envexec_passed() starts from: the whole initial array for the
 * view of it, or envp; NULL where it passes envp on as it is.
 */
static char *const *passed_from(char *const *envp)
{
	/* Nothing taken out at load: the program sees, and passes on, what
	 * it was given, as before. */
	if (!pt.env_whole || !envp)
		return NULL;
	if (envp == (char *const *)pt.env_view)
		/* whole, but for our item of LD_PRELOAD, the view's being the
		 * user's part */
		return pt.env_own_preload ? pt.env_whole : NULL;
	return envp;
}

size_t pt_envexec_passed_need(char *const *envp)
{
	char *const *from = passed_from(envp);
	size_t n = from ? pt_envexec_count(from) : 0;

	if (!from || n > PT_ENV_MAX)
		return 0;
	return (n + PT_ENV_EXTRA + 1) * sizeof(char *) +
	       pt_envexec_preload_size(from, n) +
	       pt_strlen(PT_STR(preload_entry)) + 1 + MARK_MAX +
	       (pt.files_entry ? pt_strlen(PT_STR(files_entry)) + 1 : 0);
}

char *const *pt_envexec_passed(char *const *envp, char *buf, size_t buf_len,
			   struct pt_envexec_map *m)
{
	char *const *from = passed_from(envp);
	size_t n, len;
	char **out;
	char *const *use;
	long p;
	int saved = errno;

	m->base = NULL;
	if (!from)
		return envp == (char *const *)pt.env_view && envp ?
		       (char *const *)pt.env_whole : envp;
	envp = from;
	if ((n = pt_envexec_count(envp)) > PT_ENV_MAX)
		return envp;
	len = (n + PT_ENV_EXTRA + 1) * sizeof(char *);
	if (buf && buf_len > len)       /* the caller's stack had room */
		return add_missing(envp, n, (char **)buf, buf + len,
				   buf_len - len, PT_STR(env_preload));
	/* A vfork or clone(CLONE_VM) child shares its parent's memory: a
	 * mapping made there would stay in it. */
	if (!pt_is_owner())
		return envp;
	len += 2 * PATH_MAX;
	p = PT_SC6(PT_SYS_MMAP, NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == -1) {
		errno = saved;
		return envp;
	}
	out = (char **)p;
	use = add_missing(envp, n, out, (char *)(out + n + PT_ENV_EXTRA + 1),
			  2 * PATH_MAX, PT_STR(env_preload));
	if (use != out) {
		PT_SC2(SYS_munmap, p, len);
		errno = saved;
		return use;
	}
	m->base = (void *)p;
	m->len = len;
	return use;
}

void pt_envexec_unmap(struct pt_envexec_map *m)
{
	int saved = errno;

	if (m->base)
		PT_SC2(SYS_munmap, m->base, m->len);
	errno = saved;
}
