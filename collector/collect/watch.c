/* Watching unreachable subtrees through /proc and pidfds; see watch.h. */
#include "collect/watch.h"
#include "collect/outside.h"
#include "collect/ptrace.h"

#include <dirent.h>
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proftrace/wire.h"
#include "base/strbuf.h"
#include "base/util.h"

#define GO_CACHE   256                  /* executables remembered */
#define CMDLINE_MAX (256u << 10)        /* what we read of a command line */
#define STATUS_UNKNOWN (-1)
/*
 * A watched process's thread list is read again every TASKS_EVERY scans;
 * in between, the children files of the threads it had stay open and are
 * read again from offset 0 (a seq_file starts over): one system call per
 * thread and tick instead of three, and a scan of `go build`'s twenty
 * threads is most of what watching costs.
 */
#define TASKS_EVERY 20
/* Paths of executables already judged, so that most frames cost no
 * system call; a power of two. */
#define PATH_CACHE 1024

enum {
	WS_WATCH = 1u << 0,             /* scan its children */
	WS_FOUND = 1u << 1,             /* we recorded it: SPAWN sent */
	WS_SKIP  = 1u << 2,             /* a child that loaded the library */
	WS_ROOT  = 1u << 3,             /* record's command */
};

struct wproc {
	pid_t pid, ppid;
	unsigned state;
	int pidfd;
	int readable;                   /* we may read its exit_code */
	uint64_t start_ticks;           /* /proc/PID/stat starttime */
	uint64_t start_ns;              /* when it began, as best known */
	uint64_t ut_us, st_us, rss_kb;  /* last seen while it ran */
	unsigned gen;                   /* last scan that listed it */
	int gone;                       /* no pidfd, and /proc has no entry */
	int *tfd;                       /* its threads' children files */
	size_t ntask;
	unsigned scans;
};

struct gocache {
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	int go;
};

struct pathcache {
	char *path;                     /* NULL: empty slot */
	int watch;                      /* Go, setuid or setgid */
};

struct pt_watch {
	struct pt_watch_ops ops;
	struct pathcache paths[PATH_CACHE];
	struct wproc **p;
	size_t n, cap;
	pid_t *chk;                     /* pids to check on the next tick */
	size_t nchk, cchk;
	struct gocache go[GO_CACHE];
	size_t ngo, go_next;
	unsigned gen;
	int64_t boot_to_mono;           /* add to CLOCK_BOOTTIME: monotonic */
	long hz;
	pid_t self;
	const struct pt_tracer *tracer; /* whose tracees are not watched */
	struct pt_outside o;            /* frames, and /proc read */
};

/* Parsed /proc/PID/stat. */
struct pstat {
	char state;
	pid_t ppid;
	uint64_t ut, st, start, rss;    /* ticks, ticks, ticks, pages */
	int exit_code;
};

/* ---- reading /proc ---- */

/* Read fd from offset 0 into w->o.buf (NUL-terminated).  Returns length,
 * -1. */
static ssize_t reread(struct pt_watch *w, int fd, size_t max)
{
	ssize_t r;

	pt_sb_reset(&w->o.buf);
	for (;;) {
		pt_sb_grow(&w->o.buf, 4096);
		r = pread(fd, w->o.buf.buf + w->o.buf.len, 4096,
			  (off_t)w->o.buf.len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (w->o.buf.len += (size_t)r) >= max)
			break;
	}
	if (r < 0)
		return -1;
	pt_sb_grow(&w->o.buf, 1);
	w->o.buf.buf[w->o.buf.len] = 0;
	return (ssize_t)w->o.buf.len;
}

static int read_stat(struct pt_watch *w, pid_t pid, struct pstat *ps)
{
	char path[48], *p, *tok, *save;
	int field = 3;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (pt_sb_read_path(&w->o.buf, path, 4096) <= 0)
		return -1;
	/* The command name may hold ") ": the fields follow the last ')'. */
	p = strrchr(w->o.buf.buf, ')');
	if (!p)
		return -1;
	memset(ps, 0, sizeof *ps);
	for (tok = strtok_r(p + 1, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), field++) {
		switch (field) {
		case 3: ps->state = tok[0]; break;
		case 4: ps->ppid = (pid_t)strtol(tok, NULL, 10); break;
		case 14: ps->ut = strtoull(tok, NULL, 10); break;
		case 15: ps->st = strtoull(tok, NULL, 10); break;
		case 22: ps->start = strtoull(tok, NULL, 10); break;
		case 24: ps->rss = strtoull(tok, NULL, 10); break;
		case 52: ps->exit_code = (int)strtol(tok, NULL, 10); break;
		}
	}
	return field > 22 ? 0 : -1;
}


/* Does pid map the preload library (then it speaks for itself)?  Its
 * maps are unreadable when it is another user's: then it cannot have. */
static int has_library(struct pt_watch *w, pid_t pid)
{
	char path[48];

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (pt_sb_read_path(&w->o.buf, path, 16u << 20) < 0)
		return 0;
	return strstr(w->o.buf.buf, "/" PT_LIB_NAME) != NULL;
}

/* ---- Go executables ---- */

/*
 * Does the ELF file at fd have a Go build-id or build-info section, or is
 * it a 32-bit program?  Those may run without the library where no
 * 32-bit build of it is installed (foreign.h), and so their children.
 */
static int elf_is_go(int fd)
{
	Elf64_Ehdr eh;
	ssize_t got = pread(fd, &eh, sizeof eh, 0);

	if (got < EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return 0;
	if (eh.e_ident[EI_CLASS] == ELFCLASS32)
		return 1;
	return got == (ssize_t)sizeof eh &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 && pt_outside_elf_go(fd, &eh);
}

/* Is st (of /proc/PID/exe) a Go program?  Remembered per file. */
static int is_go(struct pt_watch *w, pid_t pid, const struct stat *st)
{
	int64_t mt = (int64_t)st->st_mtim.tv_sec * 1000000000 +
		     st->st_mtim.tv_nsec;
	struct gocache *g;
	char path[48];
	size_t i;
	int fd;

	for (i = 0; i < w->ngo; i++) {
		g = &w->go[i];
		if (g->dev == st->st_dev && g->ino == st->st_ino &&
		    g->mtime_ns == mt)
			return g->go;
	}
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	g = &w->go[w->go_next];
	w->go_next = (w->go_next + 1) % GO_CACHE;
	if (w->ngo < GO_CACHE)
		w->ngo++;
	*g = (struct gocache){ st->st_dev, st->st_ino, mt, elf_is_go(fd) };
	close(fd);
	return g->go;
}

/* ---- the table ---- */

static struct wproc *find_pid(struct pt_watch *w, pid_t pid)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->p[i]->pid == pid)
			return w->p[i];
	return NULL;
}

static struct wproc *add_proc(struct pt_watch *w, pid_t pid, unsigned state)
{
	struct wproc *e = pt_xcalloc(1, sizeof *e);

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->p = pt_xrealloc(w->p, w->cap * sizeof *w->p);
	}
	e->pid = pid;
	e->state = state;
	e->pidfd = -1;
	e->gen = w->gen;
	w->p[w->n++] = e;
	return e;
}

static void close_tasks(struct wproc *e)
{
	size_t i;

	for (i = 0; i < e->ntask; i++)
		close(e->tfd[i]);
	free(e->tfd);
	e->tfd = NULL;
	e->ntask = 0;
}

static void remove_at(struct pt_watch *w, size_t i)
{
	struct wproc *e = w->p[i];

	close_tasks(e);
	if (e->pidfd >= 0) {
		w->ops.watch(w->ops.arg, e->pidfd, 0);
		close(e->pidfd);
	}
	free(e);
	w->p[i] = w->p[--w->n];
}

/* A pidfd for e, registered with the loop.  Fails quietly. */
static void open_pidfd(struct pt_watch *w, struct wproc *e)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, e->pid, 0);

	if (fd < 0)
		return;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (w->ops.watch(w->ops.arg, fd, 1) < 0) {
		close(fd);
		return;
	}
	e->pidfd = fd;
#else
	(void)w;
	(void)e;
#endif
}

/* ---- the interface ---- */

struct pt_watch *pt_watch_new(const struct pt_watch_ops *ops)
{
	struct pt_watch *w = pt_xcalloc(1, sizeof *w);

	w->ops = *ops;
	w->hz = sysconf(_SC_CLK_TCK);
	if (w->hz <= 0)
		w->hz = 100;
	w->self = getpid();
	pt_outside_init(&w->o, ops->put, ops->arg);
	return w;
}

static void check_later(struct pt_watch *w, pid_t pid)
{
	if (pid <= 0)
		return;
	if (w->nchk == w->cchk) {
		w->cchk = w->cchk ? 2 * w->cchk : 64;
		w->chk = pt_xrealloc(w->chk, w->cchk * sizeof *w->chk);
	}
	w->chk[w->nchk++] = pid;
}

/* 1 if the program at path (absolute) is to be watched, 0 if not, -1 if
 * it cannot be told from the path. */
static int path_verdict(struct pt_watch *w, const char *path)
{
	uint32_t h = pt_hash_bytes(path, strlen(path)) & (PATH_CACHE - 1);
	struct pathcache *c = &w->paths[h];
	struct stat st;
	int fd, v;

	if (c->path && !strcmp(c->path, path))
		return c->watch;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	v = (st.st_mode & (S_ISUID | S_ISGID)) || elf_is_go(fd);
	close(fd);
	free(c->path);
	c->path = pt_xstrdup(path);
	c->watch = v;
	return v;
}

/* Queue pid for check_pid() unless exe (relative to cwd) is known to be
 * a program that needs no watching. */
static void check_exe(struct pt_watch *w, pid_t pid, const char *exe,
		      const char *cwd)
{
	char full[4096];

	if (exe && exe[0] != '/' && strchr(exe, '/') && cwd &&
	    snprintf(full, sizeof full, "%s/%s", cwd, exe) < (int)sizeof full)
		exe = full;
	if (exe && exe[0] == '/' && path_verdict(w, exe) == 0)
		return;
	check_later(w, pid);
}

/* The first item of tag in a checked tail, or NULL. */
static const char *tail_item(const unsigned char *p, size_t n, size_t off,
			     enum pt_tag tag)
{
	while (off < n) {
		const unsigned char *z = memchr(p + off + 1, 0, n - off - 1);

		if (!z)
			return NULL;
		if (p[off] == tag)
			return (const char *)p + off + 1;
		off = (size_t)(z - p) + 1;
	}
	return NULL;
}

static void watch_nolib(struct pt_watch *w, pid_t pid);

void pt_watch_frame(struct pt_watch *w, const struct pt_record *rec,
		    pid_t peer, const unsigned char *payload, size_t n)
{
	size_t fixed = rec->hdr.type == PT_REC_HELLO ? 32 : 8;
	struct wproc *e;

	/* /proc is read with the collector's pids.  A sender in another pid
	 * namespace (its own pid is not the one SO_PEERCRED gives) names
	 * pids of that namespace, which mean nothing here: its own image is
	 * checked by its peer pid, the children it names are not. */
	if ((pid_t)rec->hdr.pid != peer && rec->hdr.type != PT_REC_HELLO &&
	    rec->hdr.type != PT_REC_EXEC)
		return;

	switch (rec->hdr.type) {
	case PT_REC_HELLO:
		if (rec->u.hello.kind != PT_HELLO_IMAGE)
			break;
		/* A root that loads the library speaks for its children,
		 * unless it is Go (the check decides). */
		e = find_pid(w, peer);
		if (e && e->state & WS_ROOT)
			e->state &= ~(unsigned)WS_WATCH;
		check_exe(w, peer,
			  tail_item(payload, n, fixed, PT_TAG_EXE),
			  tail_item(payload, n, fixed, PT_TAG_CWD));
		break;
	case PT_REC_EXEC:
		/* A copy of the peer (vfork, clone) says its own pid. */
		if (tail_item(payload, n, fixed, PT_TAG_NOLIB)) {
			watch_nolib(w, (pid_t)rec->hdr.pid == peer ||
				    (pid_t)rec->hdr.origin == peer ?
				    (pid_t)rec->hdr.pid : 0);
			break;
		}
		check_exe(w, peer,
			  tail_item(payload, n, fixed, PT_TAG_PATH),
			  tail_item(payload, n, fixed, PT_TAG_CWD));
		break;
	case PT_REC_SPAWN:
		if (tail_item(payload, n, fixed, PT_TAG_NOLIB)) {
			watch_nolib(w, (pid_t)rec->u.spawn.child_pid);
			break;
		}
		/* A bare name was searched in PATH: not known here. */
		check_exe(w, (pid_t)rec->u.spawn.child_pid,
			  tail_item(payload, n, fixed, PT_TAG_PATH), NULL);
		break;
	}
}

void pt_watch_root(struct pt_watch *w, pid_t pid, char *const *argv,
		   uint64_t start_ns)
{
	struct pt_rec_spawn sp = {
		.child_pid = htole32((uint32_t)pid),
		.call = htole32(PT_CALL_EXECVP),
	};
	struct pstat ps;
	struct wproc *e;
	size_t i;

	pt_outside_begin(&w->o, PT_REC_SPAWN, w->self, start_ns, &sp,
			 sizeof sp);
	pt_outside_item(&w->o, PT_TAG_PATH, argv[0], strlen(argv[0]));
	for (i = 0; argv[i]; i++)
		pt_outside_item(&w->o, PT_TAG_ARG, argv[i], strlen(argv[i]));
	pt_outside_end(&w->o);
	e = add_proc(w, pid, WS_WATCH | WS_ROOT);
	e->ppid = w->self;
	e->start_ns = start_ns;
	if (read_stat(w, pid, &ps) == 0)
		e->start_ticks = ps.start;
}

void pt_watch_set_tracer(struct pt_watch *w, const struct pt_tracer *t)
{
	w->tracer = t;
}

void pt_watch_root_traced(struct pt_watch *w, pid_t pid)
{
	struct wproc *e = find_pid(w, pid);

	if (e && e->state & WS_ROOT)
		e->state &= ~(unsigned)WS_WATCH;
}

void pt_watch_root_end(struct pt_watch *w, pid_t pid, int wait_status,
		       const struct rusage *ru, uint64_t end_ns)
{
	size_t i;

	pt_outside_reap(&w->o, w->self, pid, wait_status, ru != NULL,
			ru ? (uint64_t)ru->ru_utime.tv_sec * 1000000 +
			     (uint64_t)ru->ru_utime.tv_usec : 0,
			ru ? (uint64_t)ru->ru_stime.tv_sec * 1000000 +
			     (uint64_t)ru->ru_stime.tv_usec : 0,
			ru ? (uint64_t)ru->ru_maxrss : 0, 0, end_ns);
	for (i = 0; i < w->n; i++)
		if (w->p[i]->pid == pid && w->p[i]->state & WS_ROOT) {
			remove_at(w, i);
			break;
		}
}

static uint64_t ticks_to_mono(const struct pt_watch *w, uint64_t ticks)
{
	uint64_t ns = ticks * (1000000000ull / (uint64_t)w->hz);

	return (uint64_t)((int64_t)ns + w->boot_to_mono);
}

static uint64_t ticks_to_us(const struct pt_watch *w, uint64_t ticks)
{
	return ticks * (1000000ull / (uint64_t)w->hz);
}

/*
 * A pid announced by a frame: watch its children if its image is Go,
 * comes from a setuid or setgid file, or is not ours to inspect.
 */
static void check_pid(struct pt_watch *w, pid_t pid)
{
	struct wproc *e = find_pid(w, pid);
	char path[48];
	struct stat st;
	struct pstat ps;
	int watch;

	if (e && e->state & (WS_WATCH | WS_FOUND | WS_SKIP))
		return;
	/* Traced: its forks, execs and end are the tracer's to tell. */
	if (pt_tracer_has(w->tracer, pid))
		return;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	if (stat(path, &st) == 0)
		watch = (st.st_mode & (S_ISUID | S_ISGID)) ||
			is_go(w, pid, &st);
	else
		watch = errno == EACCES;
	if (!watch || read_stat(w, pid, &ps) < 0)
		return;
	if (!e) {
		e = add_proc(w, pid, WS_WATCH);
		e->ppid = ps.ppid;
		e->start_ticks = ps.start;
		e->start_ns = ticks_to_mono(w, ps.start);
		open_pidfd(w, e);
	} else {
		e->state |= WS_WATCH;
	}
}

/*
 * An image the library was left out of (PT_TAG_NOLIB: a sandbox hides
 * it): nothing inside will report its children, so watch them, whatever
 * its executable.
 */
static void watch_nolib(struct pt_watch *w, pid_t pid)
{
	struct wproc *e = find_pid(w, pid);
	struct pstat ps;

	if (pid <= 0 || read_stat(w, pid, &ps) < 0)
		return;
	if (e) {
		e->state = (e->state & ~(unsigned)WS_SKIP) | WS_WATCH;
		return;
	}
	e = add_proc(w, pid, WS_WATCH);
	e->ppid = ps.ppid;
	e->start_ticks = ps.start;
	e->start_ns = ticks_to_mono(w, ps.start);
	open_pidfd(w, e);
}

/* Has child, forked by parent, run an exec yet?  Not while it runs the
 * same file with the same command line (Go forks, then execs); of
 * another user's processes, only the command lines can be compared. */
static int has_execed(struct pt_watch *w, pid_t parent, pid_t child)
{
	char pe[4096], ce[4096], path[48];
	char *pcmd;
	size_t plen;
	int same;

	if (pt_proc_link(parent, "exe", pe, sizeof pe) == 0 &&
	    pt_proc_link(child, "exe", ce, sizeof ce) == 0 && strcmp(pe, ce))
		return 1;
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)parent);
	if (pt_sb_read_path(&w->o.buf, path, CMDLINE_MAX) < 0)
		return 1;
	plen = w->o.buf.len;
	pcmd = pt_xmalloc(plen + 1);
	memcpy(pcmd, w->o.buf.buf, plen + 1);
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)child);
	same = pt_sb_read_path(&w->o.buf, path, CMDLINE_MAX) >= 0 &&
	       w->o.buf.len == plen && !memcmp(pcmd, w->o.buf.buf, plen);
	free(pcmd);
	return !same;
}

/* Record child, found under parent: its SPAWN, and watch it. */
static void found(struct pt_watch *w, const struct wproc *pe, pid_t child,
		  const struct pstat *ps, uint64_t now)
{
	struct pt_rec_spawn sp = {
		.child_pid = htole32((uint32_t)child),
		.call = htole32(PT_CALL_SEEN),
	};
	char exe[4096], cwd[4096], path[48];
	int have_exe = pt_proc_link(child, "exe", exe, sizeof exe) == 0;
	int have_cwd = pt_proc_link(child, "cwd", cwd, sizeof cwd) == 0;
	uint64_t t = ticks_to_mono(w, ps->start);
	pid_t parent = pe->pid;
	struct wproc *e;
	struct pstat again;
	size_t i, n;

	e = add_proc(w, child, WS_WATCH | WS_FOUND);
	e->ppid = parent;
	e->start_ticks = ps->start;
	e->readable = have_exe;
	e->ut_us = ticks_to_us(w, ps->ut);
	e->st_us = ticks_to_us(w, ps->st);
	e->rss_kb = ps->rss * ((uint64_t)sysconf(_SC_PAGESIZE) / 1024);
	open_pidfd(w, e);
	/* The pid may have been reused between the listing and the
	 * pidfd: then this is not the child we listed. */
	if (read_stat(w, child, &again) < 0 || again.start != ps->start) {
		remove_at(w, w->n - 1);
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)child);
	if (pt_sb_read_path(&w->o.buf, path, CMDLINE_MAX) < 0)
		w->o.buf.len = 0;
	/* Clock ticks are 10 ms: not before its parent began, which we
	 * may know better. */
	if (t < pe->start_ns)
		t = pe->start_ns;
	if (t > now)
		t = now;
	e->start_ns = t;
	/* Build the frame from a copy: pt_outside_item() reuses nothing, but
	 * the command line lives in w->o.buf. */
	pt_outside_begin(&w->o, PT_REC_SPAWN, parent, t, &sp, sizeof sp);
	if (have_exe)
		pt_outside_item(&w->o, PT_TAG_PATH, exe, strlen(exe));
	else if (w->o.buf.len)
		pt_outside_item(&w->o, PT_TAG_PATH, w->o.buf.buf,
				strlen(w->o.buf.buf));
	for (i = 0; i < w->o.buf.len; i += n + 1) {
		n = strnlen(w->o.buf.buf + i, w->o.buf.len - i);
		pt_outside_item(&w->o, PT_TAG_ARG, w->o.buf.buf + i, n);
	}
	if (have_cwd)
		pt_outside_item(&w->o, PT_TAG_CWD, cwd, strlen(cwd));
	pt_outside_end(&w->o);
	if (e->pidfd < 0)               /* gone already: end unknown */
		pt_outside_reap(&w->o, parent, child, STATUS_UNKNOWN, 0, 0, 0,
				0, PT_REAP_SEEN | PT_REAP_NO_RSS, now);
}

static void consider(struct pt_watch *w, const struct wproc *pe,
		     pid_t child, uint64_t now)
{
	pid_t parent = pe->pid;
	struct wproc *e = find_pid(w, child);
	struct pstat ps;
	char path[48];

	if (e) {
		e->gen = w->gen;
		return;
	}
	/* A zombie was either recorded already or ended unseen. */
	if (read_stat(w, child, &ps) < 0 || ps.ppid != parent ||
	    ps.state == 'Z' || ps.state == 'X' ||
	    !has_execed(w, parent, child))
		return;
	/* In the middle of its exec, its exe may be the new file while its
	 * new command line is not there yet: look again next time. */
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)child);
	if (pt_sb_read_path(&w->o.buf, path, 64) <= 0)
		return;
	if (has_library(w, child)) {
		add_proc(w, child, WS_SKIP)->start_ticks = ps.start;
		return;
	}
	found(w, pe, child, &ps, now);
}

/* List pid's children (of all its threads) and consider each.  Returns
 * -1 if pid is gone. */
/* Open the children files of pe's threads.  Returns -1 if pe is gone. */
static int open_tasks(struct wproc *pe)
{
	char path[320];
	struct dirent *d;
	DIR *dir;
	size_t cap = 0;

	close_tasks(pe);
	snprintf(path, sizeof path, "/proc/%d/task", (int)pe->pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -1 : 0;
	while ((d = readdir(dir))) {
		int fd;

		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%s/children",
			 (int)pe->pid, d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (pe->ntask == cap) {
			cap = cap ? 2 * cap : 8;
			pe->tfd = pt_xrealloc(pe->tfd, cap * sizeof *pe->tfd);
		}
		pe->tfd[pe->ntask++] = fd;
	}
	closedir(dir);
	return 0;
}

static int scan(struct pt_watch *w, struct wproc *pe, uint64_t now)
{
	size_t t;

	if (pe->scans++ % TASKS_EVERY == 0 && open_tasks(pe) < 0)
		return -1;
	for (t = 0; t < pe->ntask; t++) {
		char *p, *end;

		if (reread(w, pe->tfd[t], 1u << 20) <= 0)
			continue;
		/* consider() reuses w->o.buf: take the list out first. */
		p = pt_xmalloc(w->o.buf.len + 1);
		memcpy(p, w->o.buf.buf, w->o.buf.len + 1);
		for (char *q = p;; q = end) {
			long c = strtol(q, &end, 10);

			if (end == q)
				break;
			if (c > 0)
				consider(w, pe, (pid_t)c, now);
		}
		free(p);
	}
	return 0;
}

void pt_watch_tick(struct pt_watch *w)
{
	struct timespec b, m;
	uint64_t now;
	size_t i, n;

	if (!w->n && !w->nchk)
		return;
	w->gen++;
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	w->boot_to_mono = ((int64_t)m.tv_sec - (int64_t)b.tv_sec) *
			  1000000000 + (m.tv_nsec - b.tv_nsec);
	now = pt_mono_ns();
	for (i = 0; i < w->nchk; i++)
		check_pid(w, w->chk[i]);
	w->nchk = 0;
	n = w->n;
	for (i = 0; i < n; i++) {
		struct wproc *e = w->p[i];
		struct pstat ps;

		if (!(e->state & WS_WATCH))
			continue;
		if (e->state & WS_FOUND && read_stat(w, e->pid, &ps) == 0 &&
		    ps.start == e->start_ticks && ps.state != 'Z') {
			uint64_t rss = ps.rss * ((uint64_t)sysconf(
					_SC_PAGESIZE) / 1024);

			e->ut_us = ticks_to_us(w, ps.ut);
			e->st_us = ticks_to_us(w, ps.st);
			if (rss > e->rss_kb)
				e->rss_kb = rss;
		}
		if (scan(w, e, now) < 0 && e->pidfd < 0 &&
		    !(e->state & WS_ROOT))
			e->gone = 1;
	}
	/* Children that loaded the library and are no longer listed have
	 * ended (or moved away): forget them. */
	for (i = w->n; i-- > 0;)
		if ((w->p[i]->state == WS_SKIP && w->p[i]->gen != w->gen) ||
		    w->p[i]->gone)
			remove_at(w, i);
}

int pt_watch_busy(const struct pt_watch *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->p[i]->state & WS_WATCH)
			return 2;
	return w->nchk ? 1 : 0;
}

void pt_watch_ready(struct pt_watch *w, int fd)
{
	uint64_t now = pt_mono_ns();
	struct wproc *e = NULL;
	struct pstat ps;
	int status = STATUS_UNKNOWN, zombie;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->p[i]->pidfd == fd) {
			e = w->p[i];
			break;
		}
	if (!e)
		return;
	zombie = read_stat(w, e->pid, &ps) == 0 &&
		 ps.start == e->start_ticks &&
		 (ps.state == 'Z' || ps.state == 'X');
	/* Another user's exit_code reads 0 whatever it was. */
	if (zombie && e->readable) {
		status = ps.exit_code;
	}
	if (zombie) {
		e->ut_us = ticks_to_us(w, ps.ut);
		e->st_us = ticks_to_us(w, ps.st);
	}
	if (e->state & WS_FOUND)
		pt_outside_reap(&w->o, e->ppid, e->pid, status, 1, e->ut_us,
				e->st_us, e->rss_kb, PT_REAP_SEEN, now);
	else if (status != STATUS_UNKNOWN)
		/* A watched image whose parent may never say: its status. */
		pt_outside_reap(&w->o, zombie ? ps.ppid : e->ppid, e->pid,
				status, 0, 0, 0, 0,
				PT_REAP_SEEN | PT_REAP_NO_RSS, now);
	remove_at(w, i);
}

void pt_watch_free(struct pt_watch *w)
{
	if (!w)
		return;
	while (w->n)
		remove_at(w, w->n - 1);
	free(w->p);
	free(w->chk);
	for (size_t i = 0; i < PATH_CACHE; i++)
		free(w->paths[i].path);
	pt_outside_free(&w->o);
	free(w);
}
