/*
 * libptfiles.so: the files each program image reads, writes,
 * probes and executes (doc/design.md, "File accesses").  Loaded only by
 * `record --files` and `daemon --files`, ahead of libproftrace.so in
 * LD_PRELOAD, so that without them nothing changes in a traced process.
 *
 * No record per access: each access goes into a table in memory (the
 * path made absolute, interned with its kind and the time it was first
 * seen), and the table goes out at the image's end and before an exec,
 * as one or a few FILES records, through libproftrace.so's channel
 * (pt_files_entry, its one entry point for this library, found by a
 * marker in its read-only data: it exports nothing more).
 *
 * The rules of preload/ hold: libc only, no allocation (the table is
 * .bss, touched as it fills), no lock that could wait (a busy table
 * drops the access and counts it), errno preserved, a small stack (paths
 * are built in the table itself), no descriptor, and as libproftrace.so
 * does, no entry in dl_iterate_phdr's list (preload/phdr.c): only its
 * mapping shows.  A vfork child shares the table with its parent: what
 * it opens before its exec counts as the parent's.
 */
/* Each entry point under its own name: open and open64 are two. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pt-preload.h"
#include "pt-phdr.h"
#include "pt-str.h"
#include "pt-sys.h"

#define FILES_MAX   (1u << 18)          /* distinct (kind, path) per image */
#define SLOTS       (1u << 19)          /* hash slots, a power of two */
#define SLOTS_MIN   (1u << 10)          /* those in use at first: one page */
#define POOL_BYTES  (24u << 20)         /* item strings */
#define CHUNK       8192u               /* items per FILES record */
#define ITEM_ROOM   (2 + 2 * PATH_MAX + 2) /* worst item */

struct entry {
	uint32_t off;                   /* item string in pool: "K PATH" */
	uint32_t len;
	uint32_t hash;
	uint64_t us;                    /* first access, after ft.base */
};

static struct {
	int lock;                       /* 0 free, 1 held: tried, never waited */
	int cwd_ok;                     /* cwd below is this process's */
	pid_t owner;
	uint32_t count, top;
	uint32_t mask;                  /* slots in use - 1, 0 before any */
	uint64_t dropped;
	uint64_t base;                  /* CLOCK_MONOTONIC ns the table began */
	uint64_t wait_at;               /* when wait_ns was read, 0: never */
	int64_t wait_ns;                /* run_delay then, -1: unreadable */
	int after_exec;                 /* since the table went out, only an
					 * exec that failed noted anything */
	char cwd[PATH_MAX];
	size_t cwd_len;
} ft;
static struct entry entries[FILES_MAX];
static uint32_t slots[SLOTS];           /* entry index + 1; 0: empty */
static char pool[POOL_BYTES];
static struct pt_item items[3 + CHUNK];   /* BASE, TIMES, FILEs, WAIT */
static char times[CHUNK * 21 + 1];
/* libproftrace.so's entry point (find_entry) */
static pt_files_entry_fn *entry;

/* The stat family of programs built against glibc before 2.33, whose
 * stat() was an inline call of these; still exported. */
int __xstat(int, const char *, struct stat *);
int __xstat64(int, const char *, struct stat64 *);
int __lxstat(int, const char *, struct stat *);
int __lxstat64(int, const char *, struct stat64 *);
int __fxstatat(int, int, const char *, struct stat *, int);
int __fxstatat64(int, int, const char *, struct stat64 *, int);

/* glibc's fortified opens (declared only under _FORTIFY_SOURCE), and
 * execveat (declared only by glibc 2.34 and later). */
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
int execveat(int, const char *, char *const[], char *const[], int);

/* The real functions, found once at load (files_init). */
#define PT_FILES_REAL(name) static __typeof__(name) *real_##name;
#define PT_FILES_NONE(name)
#include "files-hooks.def"
#undef PT_FILES_REAL

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Did a call fail because its path is not there?  Then the path is
 * noted as missing: a later job may make it (doc/format.md, FILES). */
static int absent(int e)
{
	return e == ENOENT || e == ENOTDIR;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	pt_sys_clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The working directory, as the kernel names it now; 0 or -1. */
static int cwd_fresh(void)
{
	if (ft.cwd_ok)
		return 0;
	if (!pt_sys_getcwd(ft.cwd, sizeof ft.cwd) || ft.cwd[0] != '/')
		return -1;
	ft.cwd_len = pt_strlen(ft.cwd);
	ft.cwd_ok = 1;
	return 0;
}

/*
 * Drop "." and empty components and fold "dir/.." in the absolute path
 * p[0..n), in place; its new length.  Lexical, as a build's own names
 * are: the same file reached as "./x.h" and "x.h" is one.
 */
static size_t normalize(char *p, size_t n)
{
	size_t r = 0, w = 0;

	while (r < n) {
		size_t s, len;

		while (r < n && p[r] == '/')
			r++;
		s = r;
		while (r < n && p[r] != '/')
			r++;
		len = r - s;
		if (!len || (len == 1 && p[s] == '.'))
			continue;
		if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
			while (w > 0 && p[w - 1] != '/')
				w--;
			if (w > 0)
				w--;
			continue;
		}
		p[w++] = '/';
		for (size_t i = 0; i < len; i++)
			p[w++] = p[s + i];
	}
	if (!w)
		p[w++] = '/';
	return w;
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

#define PROBES 64

/* The slots in use, less one: the table starts at SLOTS_MIN (also when
 * a hook runs before the constructor) and only grows. */
static uint32_t slot_mask(void)
{
	return ft.mask | (SLOTS_MIN - 1);
}

/*
 * Twice the slots, the entries hashed again into them.  The table grows
 * as it fills, kept at most half full, so that an image that names a
 * few hundred paths touches a page or two of slots, not one page per
 * path of the whole table's 2 MiB: each page first touched is a fault
 * (about 1 µs), which a build's compiles paid for every header.
 */
static void grow(void)
{
	uint32_t m = slot_mask() * 2 + 1, j, i;

	for (i = 0; i <= slot_mask(); i++)
		slots[i] = 0;
	for (j = 0; j < ft.count; j++) {
		for (i = entries[j].hash & m; slots[i]; i = (i + 1) & m)
			;
		slots[i] = j + 1;
	}
	ft.mask = m;
}

/*
 * The slot of (k, path p of n bytes) whose hash is h: its entry's, or
 * where it would go (an empty slot, or one a fork child's emptied table
 * left pointing past its end); *probes: how far it was looked for
 * (PROBES: too far, neither found).  *found: 1 if it is there.
 */
static uint32_t find(char k, const char *p, size_t n, uint32_t h,
		     uint32_t *probes, int *found)
{
	uint32_t i, probe, stale = UINT32_MAX, m = slot_mask();

	*found = 0;
	for (i = h & m, probe = 0; slots[i] && probe < PROBES;
	     i = (i + 1) & m, probe++) {
		const struct entry *e = &entries[slots[i] - 1];
		const char *q;

		if (slots[i] - 1 >= ft.count) {
			if (stale == UINT32_MAX)
				stale = i;
			continue;
		}
		if (e->hash != h)
			continue;
		q = pool + e->off;
		if (q[0] == k && e->len == n + 2 &&
		    !pt_strncmp(q + 2, p, n)) {
			*found = 1;
			break;
		}
	}
	if (!*found && stale != UINT32_MAX) {
		i = stale;
		probe = 0;
	}
	*probes = probe;
	return i;
}

/* Is the path of entry x also read, written or removed by this image?
 * Then its probe says nothing more. */
static int probe_redundant(const struct entry *x)
{
	static const char kinds[] = { 'r', 'w', 'd' };
	const char *path = pool + x->off + 2;
	size_t n = x->len - 2, j;
	uint32_t hp = x->hash ^ (uint32_t)'p' * 0x9e3779b1u, probe;

	for (j = 0; j < sizeof kinds; j++) {
		uint32_t h = hp ^ (uint32_t)kinds[j] * 0x9e3779b1u;
		int found;

		find(kinds[j], path, n, h, &probe, &found);
		if (found)
			return 1;
	}
	return 0;
}

/*
 * Is the absolute, normal path p[0..n) one of the system's own trees,
 * or in one, which a build does not write?  A path missing there, or a
 * directory there looked at, is not noted: every compile looks for each
 * system header in /usr/local/include and in gcc's own directory first,
 * and its driver for each tool in a list of its directories, and stats
 * each; kept, those were 70 % of a build's accesses and doubled its
 * capture, for no dependency a job could make.
 */
static int system_path(const char *p, size_t n)
{
	static const char *const trees[] = {
		"/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/",
		"/sbin/", "/etc/", "/proc/", "/sys/", "/dev/",
	};
	size_t i;

	for (i = 0; i < sizeof trees / sizeof *trees; i++) {
		size_t k = pt_strlen(trees[i]) - 1;     /* without its '/' */

		if (n >= k && !pt_strncmp(p, trees[i], k) &&
		    (n == k || p[k] == '/'))
			return 1;
	}
	return 0;
}

/*
 * Keep (k, p[0..n)), p built in place at the pool's top, after room for
 * "K ": 0 (also when it is there already: its first time stays), -1 when
 * the table has no room.
 */
static int keep(char k, char *p, size_t n)
{
	uint32_t h = hash_bytes(p, n) ^ (uint32_t)k * 0x9e3779b1u, i, probe;
	int found;

	i = find(k, p, n, h, &probe, &found);
	if (found)
		return 0;
	if (ft.count >= FILES_MAX)
		return -1;
	if (2 * (ft.count + 1) > slot_mask() + 1 && slot_mask() + 1 < SLOTS) {
		grow();
		i = find(k, p, n, h, &probe, &found);
	}
	if (probe == PROBES)
		return -1;
	p[-2] = k;
	p[-1] = ' ';
	p[n] = '\0';
	entries[ft.count] = (struct entry){ ft.top, (uint32_t)n + 2, h,
					    (mono_ns() - ft.base) / 1000 };
	slots[i] = ++ft.count;
	ft.top += (uint32_t)n + 3;
	return 0;
}

/* Is (k, p[0..n)) in the table? */
static int known(char k, const char *p, size_t n)
{
	uint32_t probe;
	int found;

	find(k, p, n, hash_bytes(p, n) ^ (uint32_t)k * 0x9e3779b1u, &probe,
	     &found);
	return found;
}

/*
 * Keep a missing path p[0..n), built in place as for keep(), as its
 * first directory that is not there either, if one is not: every path
 * below it is missing too, and one item says so for all (a compiler
 * looks for each of a dozen system headers in its bits/ and sys/ under
 * each -I directory).  What is known comes from the table: a directory
 * noted missing covers the path; one known to exist ('e', an item never
 * sent) ends the walk; else one faccessat of the directory, the first
 * time in the image.  0 or -1 as keep().
 */
static int keep_missing(char *p, size_t n)
{
	size_t s, there = 0;

	for (;;) {
		long r;
		int e;

		for (s = n - 1; s > 0 && p[s] != '/'; s--)
			;
		if (s == 0 || known('e', p, s))
			break;
		if (known('m', p, s))
			return 0;
		p[s] = '\0';
		r = PT_SC3(SYS_faccessat, AT_FDCWD, p, F_OK);
		e = errno;
		p[s] = '/';
		if (r == 0 || !absent(e)) {
			there = s;
			break;
		}
		n = s;
	}
	if (keep('m', p, n) < 0)
		return -1;
	if (there && ft.count < FILES_MAX && POOL_BYTES - ft.top >= ITEM_ROOM) {
		char *q = pool + ft.top + 2;

		if (q != p)
			pt_memcpy(q, p, there);
		keep('e', q, there);
	}
	return 0;
}

/* Set while exec_failed notes its path (below). */
static int noting_exec;

/*
 * Note an access of kind k to path (relative to dirfd).  Under the
 * table's lock, taken without waiting: a signal handler's access while
 * the table is busy, or another thread's, is counted as dropped.
 */
static void note_at(int dirfd, const char *path, char k)
{
	char *p;
	size_t plen, n;

	if (!path || !path[0] || !ft.owner)
		return;
	if (!noting_exec)
		ft.after_exec = 0;
	if (__atomic_exchange_n(&ft.lock, 1, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&ft.dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	plen = pt_strlen(path);
	if (ft.count >= FILES_MAX || plen > PATH_MAX ||
	    POOL_BYTES - ft.top < ITEM_ROOM)
		goto drop;
	/* "K PATH", built in place: kept if new. */
	p = pool + ft.top + 2;
	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			if (cwd_fresh() < 0)
				goto drop;
			pt_memcpy(p, ft.cwd, ft.cwd_len);
			n = ft.cwd_len;
		} else {
			char link[32], *e = link;
			ssize_t got;

			pt_memcpy(e, "/proc/self/fd/", 14);
			e = put_dec(e + 14, (uint64_t)(unsigned)dirfd);
			*e = '\0';
			got = pt_sys_readlink(link, p, PATH_MAX);
			if (got <= 0 || p[0] != '/')
				goto drop;
			n = (size_t)got;
		}
		p[n++] = '/';
	} else {
		n = 0;
	}
	pt_memcpy(p + n, path, plen);
	n = normalize(p, n + plen);
	if ((k == 'm' || k == 's') && system_path(p, n))
		goto out;
	if ((k == 'm' ? keep_missing(p, n) : keep(k, p, n)) == 0)
		goto out;
drop:
	ft.dropped++;
out:
	__atomic_store_n(&ft.lock, 0, __ATOMIC_RELEASE);
}

static void note(const char *path, char k)
{
	note_at(AT_FDCWD, path, k);
}

/*
 * The run-queue wait of this process's main thread since its fork, in
 * ns: /proc/self/schedstat's second field (run_delay), or -1 when it is
 * not read again: unreadable, or read (and so sent) less than a
 * millisecond ago, which the model takes as this image's still.  Three
 * system calls, and eight bytes or so in the capture.
 */
static int64_t read_wait(void)
{
	char buf[80], *p;
	uint64_t now = mono_ns(), v = 0;
	ssize_t got;
	int fd;

	if (ft.wait_at && now - ft.wait_at < 1000000u)
		return -1;
	ft.wait_at = now;
	ft.wait_ns = -1;
	fd = pt_sys_open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	got = pt_sys_read(fd, buf, sizeof buf - 1);
	pt_sys_close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	/* "ON_CPU_NS RUN_DELAY_NS TIMESLICES\n" */
	for (p = buf; *p >= '0' && *p <= '9'; p++)
		;
	if (*p++ != ' ' || *p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	ft.wait_ns = (int64_t)v;
	return ft.wait_ns;
}

/*
 * Send the table and empty it: at the image's end, and before an exec
 * (whose image starts a table of its own).  Not from a vfork child: the
 * table is its parent's.
 */
static void flush_at(int at_exec)
{
	char base[24], wait[24], *e, *w = wait;
	uint32_t i = 0, n, first;
	int64_t wait_ns;

	if (!ft.owner || pt_sys_getpid() != ft.owner)
		return;
	if (__atomic_exchange_n(&ft.lock, 1, __ATOMIC_ACQUIRE))
		return;
	/* Not before an exec: a fork child that only execs would send a
	 * record, and become an execution of its own; its wait goes on in
	 * the counter the new image reads.  At the end, sent even with no
	 * access: the wait is the image's. */
	if (at_exec && !ft.count && !ft.dropped)
		goto out;
	wait_ns = entry ? read_wait() : -1;
	/* In ms, rounded: most images wait under one, "0"; the digits
	 * below were a third of what --files added to a capture. */
	if (wait_ns >= 0)
		w = put_dec(wait, ((uint64_t)wait_ns + 500000) / 1000000);
	if (!ft.count && !ft.dropped && w == wait)
		goto out;
	e = put_dec(base, ft.base);
	*e = '\0';
	items[0] = (struct pt_item){ PT_TAG_FILES_BASE, base,
				     (size_t)(e - base) };
	do {
		/* The times apart from the paths, as differences: an image
		 * reads the headers another read, in the same order, and
		 * the capture's deflate finds the whole list again. */
		uint64_t prev = 0;
		char *t = times;

		for (n = 2; n < 2 + CHUNK && i < ft.count; i++) {
			if ((pool[entries[i].off] == 'p' &&
			     probe_redundant(&entries[i])) ||
			    pool[entries[i].off] == 'e')
				continue;
			items[n++] = (struct pt_item){ PT_TAG_FILE,
				pool + entries[i].off, entries[i].len };
			t = put_dec(t, entries[i].us - prev);
			*t++ = ' ';
			prev = entries[i].us;
		}
		if (t > times)
			t--;
		*t = '\0';
		items[1] = (struct pt_item){ PT_TAG_FILES_TIMES, times,
					     (size_t)(t - times) };
		first = n == 2 ? 2 : 0;     /* no FILE: no BASE, TIMES */
		if (i == ft.count && w > wait)
			items[n++] = (struct pt_item){ PT_TAG_FILES_WAIT, wait,
						       (size_t)(w - wait) };
		if (n == 2u + (uint32_t)(w > wait && i == ft.count) && at_exec &&
		    !(i == ft.count && ft.dropped))
			break;
		if (n == 2 && !(i == ft.count && ft.dropped))
			break;
		if (!entry || entry(items + first, n - first,
					   i == ft.count ? ft.dropped : 0) < 0)
			break;
	} while (i < ft.count);
	ft.count = ft.top = 0;
	ft.dropped = 0;
	ft.base = mono_ns();
out:
	ft.after_exec = 0;
	__atomic_store_n(&ft.lock, 0, __ATOMIC_RELEASE);
}

/* At the image's end: the table, and the wait even when alone. */
static void flush(void)
{
	flush_at(0);
}

/* Before an exec: the table, the wait only beside it. */
static void flush_exec(void)
{
	flush_at(1);
}

/*
 * libproftrace.so's entry point, found once in the constructor: after
 * its marker, in its read-only segment.  The library is the one our
 * next execve comes from (dl_iterate_phdr would not list it: it hides
 * itself there).
 */
static void find_entry(void)
{
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	ElfW(Addr) first = 0;
	Dl_info info;
	int i;

	if (!real_execve || !dladdr((void *)real_execve, &info) ||
	    !info.dli_fname || !info.dli_fbase ||
	    !pt_item_is(info.dli_fname, pt_strlen(info.dli_fname), PT_LIB_STEM))
		return;
	eh = info.dli_fbase;
	ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	/* The base is where the first segment is mapped. */
	for (i = eh->e_phnum; i-- > 0;)
		if (ph[i].p_type == PT_LOAD)
			first = ph[i].p_vaddr & ~(ElfW(Addr))4095;
	for (i = 0; i < eh->e_phnum; i++) {
		const char *p, *end;

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R) ||
		    (ph[i].p_flags & PF_W))
			continue;
		p = (const char *)eh + (ph[i].p_vaddr - first);
		end = p + ph[i].p_memsz;
		p += (16 - ((uintptr_t)p & 15)) & 15;
		for (; p + 16 + 4 <= end; p += 16)
			if (!pt_strncmp(p, PT_FILES_MARKER, 16)) {
				int32_t off;

				pt_memcpy(&off, p + 16, 4);
				entry = (pt_files_entry_fn *)(uintptr_t)
					(p + 16 + off);
				return;
			}
	}
}

static void forked_child(void)
{
	ft.lock = 0;
	ft.count = ft.top = 0;
	ft.dropped = 0;
	ft.owner = pt_sys_getpid();
	ft.base = mono_ns();
	ft.wait_at = 0;                 /* a new process: its own counter */
	ft.after_exec = 0;
}

static void on_end(int status, void *arg)
{
	int saved = errno;

	(void)status;
	(void)arg;
	flush();
	pt_errno_restore(saved);
}

static void note_item(const char *list);

#define FIND(name) real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name)
/* Another library's constructor may call a hook before ours ran. */
#define REAL_OF(name) __extension__({                                     \
	__typeof__(real_##name) f_ = real_##name;                            \
	if (!f_)                                                             \
		f_ = FIND(name);                                             \
	f_;                                                                  \
})

__attribute__((constructor)) static void files_init(void)
{
	int saved = errno;

#define PT_FILES_REAL(name) FIND(name);
#include "files-hooks.def"
#undef PT_FILES_REAL
	/* Registered after libproftrace.so's (its constructor ran first:
	 * this library needs it), so it runs before that one sends EXIT. */
	ft.base = mono_ns();
	find_entry();
	note_item(getenv("LD_PRELOAD"));
	if (entry && on_exit(on_end, NULL) == 0 &&
	    pthread_atfork(NULL, NULL, forked_child) == 0)
		ft.owner = pt_sys_getpid();
	pt_errno_restore(saved);
}

/* Kind of an open by its flags; e: errno after a failed one. */
static char open_kind(int flags, int ok, int e)
{
	if (!ok)
		return absent(e) ? 'm' : 0;
	if (flags & O_PATH)
		return 'p';
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return 'w';
	return 'r';
}

static void note_open(int dirfd, const char *path, int flags, int ret, int e)
{
	char k = open_kind(flags, ret >= 0, e);

	if (k)
		note_at(dirfd, path, k);
}

static char fopen_kind(const char *mode, int ok, int e)
{
	if (!ok)
		return absent(e) ? 'm' : 0;
	if (mode && (mode[0] != 'r' || pt_strchr(mode, '+')))
		return 'w';
	return 'r';
}

#define MODE_ARG(flags, mode)                                               \
	do {                                                                \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {                    \
			va_list ap;                                         \
			va_start(ap, flags);                                \
			mode = va_arg(ap, mode_t);                          \
			va_end(ap);                                         \
		}                                                           \
	} while (0)

#define OPEN_HOOK(name)                                                     \
	PT_EXPORT int name(const char *path, int flags, ...)                \
	{                                                                   \
		mode_t mode = 0;                                            \
		int ret, e;                                                 \
		MODE_ARG(flags, mode);                                      \
		ret = REAL_OF(name)(path, flags, mode);                       \
		e = errno;                                                  \
		note_open(AT_FDCWD, path, flags, ret, e);                   \
		errno = e;                                                  \
		return ret;                                                 \
	}
OPEN_HOOK(open)
OPEN_HOOK(open64)

#define OPENAT_HOOK(name)                                                   \
	PT_EXPORT int name(int dirfd, const char *path, int flags, ...)     \
	{                                                                   \
		mode_t mode = 0;                                            \
		int ret, e;                                                 \
		MODE_ARG(flags, mode);                                      \
		ret = REAL_OF(name)(dirfd, path, flags, mode);                \
		e = errno;                                                  \
		note_open(dirfd, path, flags, ret, e);                      \
		errno = e;                                                  \
		return ret;                                                 \
	}
OPENAT_HOOK(openat)
OPENAT_HOOK(openat64)

/* The rest: call, note what it did, give back errno as the call left it. */
#define HOOK(ret_t, name, params, args, record)                             \
	PT_EXPORT ret_t name params                                         \
	{                                                                   \
		ret_t ret = REAL_OF(name) args;                               \
		int e = errno;                                              \
		record;                                                     \
		errno = e;                                                  \
		return ret;                                                 \
	}

HOOK(int, __open_2, (const char *p, int f), (p, f), note_open(AT_FDCWD, p, f, ret, e))
HOOK(int, __open64_2, (const char *p, int f), (p, f), note_open(AT_FDCWD, p, f, ret, e))
HOOK(int, __openat_2, (int d, const char *p, int f), (d, p, f), note_open(d, p, f, ret, e))
HOOK(int, __openat64_2, (int d, const char *p, int f), (d, p, f), note_open(d, p, f, ret, e))
HOOK(int, creat, (const char *p, mode_t m), (p, m),
     if (ret >= 0) note(p, 'w'); else if (absent(e)) note(p, 'm'))
HOOK(int, creat64, (const char *p, mode_t m), (p, m),
     if (ret >= 0) note(p, 'w'); else if (absent(e)) note(p, 'm'))
HOOK(FILE *, fopen, (const char *p, const char *m), (p, m),
     { char k = fopen_kind(m, ret != NULL, e); if (k) note(p, k); })
HOOK(FILE *, fopen64, (const char *p, const char *m), (p, m),
     { char k = fopen_kind(m, ret != NULL, e); if (k) note(p, k); })
HOOK(FILE *, freopen, (const char *p, const char *m, FILE *s), (p, m, s),
     { char k = fopen_kind(m, ret != NULL, e); if (k && p) note(p, k); })
HOOK(FILE *, freopen64, (const char *p, const char *m, FILE *s), (p, m, s),
     { char k = fopen_kind(m, ret != NULL, e); if (k && p) note(p, k); })
/* A rename may move the working directory: ask the kernel again. */
HOOK(int, rename, (const char *a, const char *b), (a, b),
     if (ret == 0) { note(a, 'd'); note(b, 'n'); ft.cwd_ok = 0; })
HOOK(int, renameat, (int da, const char *a, int db, const char *b),
     (da, a, db, b),
     if (ret == 0) { note_at(da, a, 'd'); note_at(db, b, 'n'); ft.cwd_ok = 0; })
HOOK(int, renameat2, (int da, const char *a, int db, const char *b,
		      unsigned f), (da, a, db, b, f),
     if (ret == 0) { note_at(da, a, 'd'); note_at(db, b, 'n'); ft.cwd_ok = 0; })
HOOK(int, unlink, (const char *p), (p), if (ret == 0) note(p, 'd'))
/* glibc's remove() unlinks or removes the directory by its own
 * internal calls, which no hook of unlink or rmdir sees. */
HOOK(int, remove, (const char *p), (p), if (ret == 0) note(p, 'd'))
HOOK(int, rmdir, (const char *p), (p), if (ret == 0) note(p, 'd'))
HOOK(int, unlinkat, (int d, const char *p, int f), (d, p, f),
     if (ret == 0) note_at(d, p, 'd'))
HOOK(int, link, (const char *a, const char *b), (a, b),
     if (ret == 0) { note(a, 'r'); note(b, 'n'); })
HOOK(int, linkat, (int da, const char *a, int db, const char *b, int f),
     (da, a, db, b, f),
     if (ret == 0) { note_at(da, a, 'r'); note_at(db, b, 'n'); })
HOOK(int, symlink, (const char *a, const char *b), (a, b),
     if (ret == 0) note(b, 'n'))
HOOK(int, symlinkat, (const char *a, int d, const char *b), (a, d, b),
     if (ret == 0) note_at(d, b, 'n'))
/* A directory already there (`mkdir -p`'s parents) was found: as by a
 * stat, which is all `mkdir -p` asks of one that exists. */
HOOK(int, mkdir, (const char *p, mode_t m), (p, m),
     if (ret == 0) note(p, 'k'); else if (e == EEXIST) note(p, 's'))
HOOK(int, mkdirat, (int d, const char *p, mode_t m), (d, p, m),
     if (ret == 0) note_at(d, p, 'k'); else if (e == EEXIST) note_at(d, p, 's'))
HOOK(int, truncate, (const char *p, off_t l), (p, l), if (ret == 0) note(p, 'w'))
HOOK(int, truncate64, (const char *p, off64_t l), (p, l),
     if (ret == 0) note(p, 'w'))
/*
 * The stat family: a file is probed ('p'), a directory looked at ('s'),
 * a path that is not there missing ('m').  An fstat through
 * AT_EMPTY_PATH names no path.
 */
static char stat_kind(int ret, int e, int isdir)
{
	if (ret == 0)
		return isdir ? 's' : 'p';
	return absent(e) ? 'm' : 0;
}

#define STAT_NOTE(s) \
	{ char k_ = stat_kind(ret, e, ret == 0 && S_ISDIR((s)->st_mode)); \
	  if (k_) note(p, k_); }
#define STATAT_NOTE(s) \
	{ char k_ = stat_kind(ret, e, ret == 0 && S_ISDIR((s)->st_mode)); \
	  if (k_ && (!(f & AT_EMPTY_PATH) || p[0])) note_at(d, p, k_); }
#define ACCESS_NOTE(at) \
	{ if (ret == 0) at(p, 'p'); else if (absent(e)) at(p, 'm'); }
#define NOTE_CWD(p_, k_) note(p_, k_)
#define NOTE_DIRFD(p_, k_) note_at(d, p_, k_)

HOOK(int, stat, (const char *p, struct stat *s), (p, s), STAT_NOTE(s))
HOOK(int, stat64, (const char *p, struct stat64 *s), (p, s), STAT_NOTE(s))
HOOK(int, lstat, (const char *p, struct stat *s), (p, s), STAT_NOTE(s))
HOOK(int, lstat64, (const char *p, struct stat64 *s), (p, s), STAT_NOTE(s))
HOOK(int, fstatat, (int d, const char *p, struct stat *s, int f), (d, p, s, f),
     STATAT_NOTE(s))
HOOK(int, fstatat64, (int d, const char *p, struct stat64 *s, int f),
     (d, p, s, f), STATAT_NOTE(s))
/* A statx asked no type: a probe, as before directories were told. */
HOOK(int, statx, (int d, const char *p, int f, unsigned m, struct statx *s),
     (d, p, f, m, s),
     { char k_ = stat_kind(ret, e, ret == 0 && (s->stx_mask & STATX_TYPE) &&
				   S_ISDIR(s->stx_mode));
       if (k_ && (!(f & AT_EMPTY_PATH) || p[0])) note_at(d, p, k_); })
HOOK(int, __xstat, (int v, const char *p, struct stat *s), (v, p, s),
     STAT_NOTE(s))
HOOK(int, __xstat64, (int v, const char *p, struct stat64 *s), (v, p, s),
     STAT_NOTE(s))
HOOK(int, __lxstat, (int v, const char *p, struct stat *s), (v, p, s),
     STAT_NOTE(s))
HOOK(int, __lxstat64, (int v, const char *p, struct stat64 *s), (v, p, s),
     STAT_NOTE(s))
HOOK(int, __fxstatat, (int v, int d, const char *p, struct stat *s, int f),
     (v, d, p, s, f), STATAT_NOTE(s))
HOOK(int, __fxstatat64, (int v, int d, const char *p, struct stat64 *s,
			 int f), (v, d, p, s, f), STATAT_NOTE(s))
HOOK(int, access, (const char *p, int m), (p, m), ACCESS_NOTE(NOTE_CWD))
/* glibc's own access(): they do not go through the hook above. */
HOOK(int, euidaccess, (const char *p, int m), (p, m), ACCESS_NOTE(NOTE_CWD))
HOOK(int, eaccess, (const char *p, int m), (p, m), ACCESS_NOTE(NOTE_CWD))
/* The mkstemp family creates the file named by its template, filled in,
 * by glibc's internal open. */
HOOK(int, mkstemp, (char *t), (t), if (ret >= 0) note(t, 'w'))
HOOK(int, mkstemp64, (char *t), (t), if (ret >= 0) note(t, 'w'))
HOOK(int, mkostemp, (char *t, int f), (t, f), if (ret >= 0) note(t, 'w'))
HOOK(int, mkostemp64, (char *t, int f), (t, f), if (ret >= 0) note(t, 'w'))
HOOK(int, mkstemps, (char *t, int n), (t, n), if (ret >= 0) note(t, 'w'))
HOOK(int, mkstemps64, (char *t, int n), (t, n), if (ret >= 0) note(t, 'w'))
HOOK(int, mkostemps, (char *t, int n, int f), (t, n, f),
     if (ret >= 0) note(t, 'w'))
HOOK(int, mkostemps64, (char *t, int n, int f), (t, n, f),
     if (ret >= 0) note(t, 'w'))
HOOK(int, faccessat, (int d, const char *p, int m, int f), (d, p, m, f),
     ACCESS_NOTE(NOTE_DIRFD))
HOOK(int, chdir, (const char *p), (p), if (ret == 0) ft.cwd_ok = 0)
HOOK(int, fchdir, (int fd), (fd), if (ret == 0) ft.cwd_ok = 0)

/*
 * Before an exec, the image's table goes out: the new image has its
 * own.  (The image executed is its HELLO's, recorded there.)  If the
 * exec fails, what follows starts a new table.
 */

/*
 * The environment's repair (design.md, "File accesses"): a program that
 * hands its child an environment without our LD_PRELOAD item (env -i,
 * subprocess(env=...)) would lose this library for it, libproftrace.so
 * putting back its own item only.  So an exec with an environment puts
 * ours first in LD_PRELOAD, on the stack; libproftrace.so's hook, next,
 * adds its own after it and its variables.  Up to REPAIR_MAX entries and
 * an LD_PRELOAD of REPAIR_BYTES; beyond, the environment goes as given.
 */
#define REPAIR_MAX   256
#define REPAIR_BYTES 2048
static char preload_var[11 + PATH_MAX + 1];     /* "LD_PRELOAD=ITEM" */
static size_t item_len;

/* Our item in LD_PRELOAD, noted by the constructor. */
static void note_item(const char *list)
{
	while (list && *list) {
		size_t k = pt_strcspn(list, ": ");

		if (pt_item_is(list, k, PT_FILES_STEM) && k <= PATH_MAX) {
			pt_memcpy(preload_var, "LD_PRELOAD=", 11);
			pt_memcpy(preload_var + 11, list, k);
			preload_var[11 + k] = '\0';
			item_len = k;
			return;
		}
		list += k;
		list += *list != '\0';
	}
}

/*
 * Does envp need our item (1), or is it there, beyond repair, or set up
 * by another collector (0)?  An LD_PRELOAD that names libproftrace.so
 * without us is a `proftrace record` run without --files under this
 * one: it is left as it is.
 */
static int needs_item(char *const *envp, size_t *n, size_t *at)
{
	size_t i;

	*at = SIZE_MAX;
	if (!item_len || !envp)
		return 0;
	for (i = 0; envp[i]; i++)
		if (envp[i][0] == 'L' && !pt_strncmp(envp[i], "LD_PRELOAD=", 11)) {
			const char *l = envp[i] + 11;

			if (*at == SIZE_MAX)
				*at = i;
			while (*l) {
				size_t k = pt_strcspn(l, ": ");

				if ((k == item_len &&
				     !pt_strncmp(l, preload_var + 11, k)) ||
				    pt_item_is(l, k, PT_LIB_STEM))
					return 0;
				l += k;
				l += *l != '\0';
			}
		}
	*n = i;
	return i <= REPAIR_MAX && (*at == SIZE_MAX ||
		pt_strlen(envp[*at]) + item_len + 2 <= REPAIR_BYTES);
}

/* envp with our item first in LD_PRELOAD, in out and scratch. */
static char *const *with_item(char *const *envp, size_t n, size_t at,
			      char **out, char *scratch)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = envp[i];
	if (at == SIZE_MAX) {
		out[n++] = preload_var;
	} else {
		size_t old = pt_strlen(envp[at] + 11);

		pt_memcpy(scratch, preload_var, 11 + item_len);
		scratch[11 + item_len] = ':';
		pt_memcpy(scratch + 12 + item_len, envp[at] + 11, old + 1);
		out[at] = scratch;
	}
	out[n] = NULL;
	return out;
}

/*
 * The PATH search of execvp, execvpe, execlp and posix_spawnp, for a
 * name without '/': glibc tries each directory by its own internal
 * execve, which no hook sees, so the directories that lack the program
 * are found here first, one faccessat each, up to the first that has it
 * (where glibc's search ends too) and noted missing: a job may put the
 * program there later.  Only under --files; the search itself is left
 * to glibc.  The candidate is built on the stack (a vfork child runs
 * this on its parent's): one path, as glibc's own search does.
 */
static __attribute__((noinline)) void path_search(const char *file)
{
	char cand[PATH_MAX];
	const char *d;
	size_t flen;
	int e = errno;

	if (!file || !file[0] || pt_strchr(file, '/') || !ft.owner)
		return;
	flen = pt_strlen(file);
	d = getenv("PATH");
	if (!d)
		d = "/bin:/usr/bin";    /* glibc's default, confstr(_CS_PATH) */
	for (;;) {
		size_t k = pt_strcspn(d, ":");

		/* An empty entry is the working directory. */
		if (k + 1 + flen < sizeof cand) {
			size_t at = 0;

			if (k) {
				pt_memcpy(cand, d, k);
				cand[k] = '/';
				at = k + 1;
			}
			pt_memcpy(cand + at, file, flen + 1);
			if (PT_SC3(SYS_faccessat, AT_FDCWD, cand, X_OK) == 0)
				break;
			if (absent(errno))
				note(cand, 'm');
		}
		if (!d[k])
			break;
		d += k + 1;
	}
	errno = e;
}

/* After an exec that returned: a path that is not there is missing.
 * A bare name was searched for in PATH: path_search noted that. */
static void exec_failed(int dirfd, const char *p)
{
	int e = errno;

	if (p && p[0] && absent(e) && (dirfd != AT_FDCWD || pt_strchr(p, '/'))) {
		noting_exec = 1;
		note_at(dirfd, p, 'm');
		noting_exec = 0;
	}
	ft.after_exec = 1;
	errno = e;
}

/*
 * Before an execve or execveat of p: the table goes out, unless all it
 * holds since it last went out is what failed execs noted and p is not
 * there either (one faccessat), so that this exec fails too.  A shell
 * that runs a program by trying each PATH directory with execve (dash)
 * sends its misses in one record with the try that succeeds, not one
 * record per try.  (A vfork child sends nothing either way: the table
 * is its parent's.)
 */
static void exec_flush(int dirfd, const char *p)
{
	if (ft.after_exec && p && p[0] &&
	    PT_SC3(SYS_faccessat, dirfd, p, F_OK) < 0 && absent(errno))
		return;
	flush_exec();
}

/* Apart, so that an exec that needs no repair does not touch its frame. */
#define EXEC_REPAIRED(name, params, args)                                   \
	static __attribute__((noinline)) int name##_repaired params         \
	{                                                                   \
		char *out[REPAIR_MAX + 2], scratch[REPAIR_BYTES];           \
                                                                            \
		v = with_item(v, n, at, out, scratch);                      \
		return REAL_OF(name) args;                                  \
	}
#define EXEC_HOOK_ENV(name, params, args, rparams, rargs, before, after)    \
	EXEC_REPAIRED(name, rparams, args)                                  \
	PT_EXPORT int name params                                           \
	{                                                                   \
		int e = errno, r;                                           \
		size_t n, at;                                               \
                                                                            \
		before;                                                     \
		errno = e;                                                  \
		if (needs_item(v, &n, &at))                                 \
			r = name##_repaired rargs;                          \
		else                                                        \
			r = REAL_OF(name) args;                             \
		after;                                                      \
		return r;                                                   \
	}
EXEC_HOOK_ENV(execve, (const char *p, char *const a[], char *const v[]),
	      (p, a, v),
	      (const char *p, char *const a[], char *const *v, size_t n,
	       size_t at), (p, a, v, n, at), exec_flush(AT_FDCWD, p),
	      exec_failed(AT_FDCWD, p))
EXEC_HOOK_ENV(execvpe, (const char *p, char *const a[], char *const v[]),
	      (p, a, v),
	      (const char *p, char *const a[], char *const *v, size_t n,
	       size_t at), (p, a, v, n, at), { path_search(p); flush_exec(); },
	      exec_failed(AT_FDCWD, p))
EXEC_HOOK_ENV(fexecve, (int fd, char *const a[], char *const v[]),
	      (fd, a, v),
	      (int fd, char *const a[], char *const *v, size_t n, size_t at),
	      (fd, a, v, n, at), flush_exec(), )
EXEC_HOOK_ENV(execveat, (int d, const char *p, char *const a[],
			 char *const v[], int f), (d, p, a, v, f),
	      (int d, const char *p, char *const a[], char *const *v, int f,
	       size_t n, size_t at), (d, p, a, v, f, n, at),
	      exec_flush(d, p), exec_failed(d, p))

/* execv and execvp pass environ: repaired, it goes to execve and
 * execvpe instead (which libproftrace.so then records). */
#define EXEC_HOOK_ENVIRON(name, with, before)                               \
	static __attribute__((noinline)) int name##_repaired(               \
		const char *p, char *const a[], size_t n, size_t at)        \
	{                                                                   \
		char *out[REPAIR_MAX + 2], scratch[REPAIR_BYTES];           \
                                                                            \
		return REAL_OF(with)(p, a, with_item(environ, n, at, out,   \
						     scratch));             \
	}                                                                   \
	PT_EXPORT int name(const char *p, char *const a[])                  \
	{                                                                   \
		int e = errno, r;                                           \
		size_t n, at;                                               \
                                                                            \
		before;                                                     \
		flush_exec();                                               \
		errno = e;                                                  \
		if (needs_item(environ, &n, &at))                           \
			r = name##_repaired(p, a, n, at);                   \
		else                                                        \
			r = REAL_OF(name)(p, a);                            \
		exec_failed(AT_FDCWD, p);                                   \
		return r;                                                   \
	}
EXEC_HOOK_ENVIRON(execv, execve, )
EXEC_HOOK_ENVIRON(execvp, execvpe, path_search(p))

/*
 * execl, execlp, execle: the table goes out, then the call goes on as
 * glibc's own does, with the arguments gathered into an array on the
 * stack (as large as glibc's would be) for execv, execvp or execve.
 */
#define EXECL_HOOK(name, next, with_env, before)                            \
	PT_EXPORT int name(const char *p, const char *arg, ...)             \
	{                                                                   \
		va_list ap;                                                 \
		size_t n = 1, i;                                            \
		int e = errno, r;                                           \
                                                                            \
		va_start(ap, arg);                                          \
		while (va_arg(ap, const char *))                            \
			n++;                                                \
		va_end(ap);                                                 \
		{                                                           \
			char *argv[n + 1], *const *envp = NULL;             \
                                                                            \
			argv[0] = (char *)arg;                              \
			va_start(ap, arg);                                  \
			for (i = 1; i <= n; i++)                            \
				argv[i] = va_arg(ap, char *);               \
			if (with_env)                                       \
				envp = va_arg(ap, char *const *);           \
			va_end(ap);                                         \
			(void)envp;                                         \
			before;                                             \
			flush_exec();                                       \
			errno = e;                                          \
			if (with_env)                                       \
				return execve(p, argv, envp);               \
			r = REAL_OF(next)(p, argv);                         \
			exec_failed(AT_FDCWD, p);                           \
			return r;                                           \
		}                                                           \
	}
EXECL_HOOK(execl, execv, 0, )
EXECL_HOOK(execlp, execvp, 0, path_search(p))
EXECL_HOOK(execle, execv, 1, )

/*
 * posix_spawn and posix_spawnp go on to libproftrace.so's hooks; here
 * only what they looked for and did not find (they return the error).
 */
PT_EXPORT int posix_spawn(pid_t *pid, const char *p,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *at, char *const a[],
			  char *const v[])
{
	int r = REAL_OF(posix_spawn)(pid, p, fa, at, a, v), e = errno;

	if (absent(r))
		note(p, 'm');
	errno = e;
	return r;
}

PT_EXPORT int posix_spawnp(pid_t *pid, const char *p,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *at, char *const a[],
			   char *const v[])
{
	int r, e;

	path_search(p);
	r = REAL_OF(posix_spawnp)(pid, p, fa, at, a, v);
	e = errno;
	if (absent(r) && pt_strchr(p, '/'))
		note(p, 'm');
	errno = e;
	return r;
}

/* The list without this library's entry, as preload/phdr.c leaves out
 * libproftrace.so's: ASan's runtime must come first after the program. */
PT_EXPORT int dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *),
			      void *data)
{
	return pt_phdr_iterate_others(REAL_OF(dl_iterate_phdr), fn, data);
}

PT_EXPORT void _exit(int status)
{
	flush();
	REAL_OF(_exit)(status);
	__builtin_unreachable();
}

PT_EXPORT void _Exit(int status)
{
	flush();
	REAL_OF(_Exit)(status);
	__builtin_unreachable();
}
