/* Trace files that programs write, into the capture; see tracefile.h. */
#include "collect/tracefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftrace/wire.h"
#include "base/strbuf.h"
#include "base/util.h"

struct pending {
	uint32_t pid;                   /* the pid the name starts with */
	char *name;
};

struct pt_tracefiles {
	char *dir;                      /* NULL: no directory */
	int dirfd, ino;                 /* the directory, its inotify */
	pt_tracefiles_put *put;
	void *arg;
	struct pending *pend;
	size_t npend, cpend;
	int overflow;                   /* inotify lost events: look at all */
	struct ended { uint32_t pid, own_pid; } *ended; /* to settle */
	size_t nended, cended;
	uint64_t bytes;                 /* kept so far in the run */
	struct pt_sb frame;
};

/* The pid a directory entry's name starts with ("123.json", "123-x.json"),
 * or 0 when it does not follow the naming rule. */
static uint32_t name_pid(const char *name)
{
	unsigned long v = 0;
	const char *p = name, *dot;

	while (*p >= '0' && *p <= '9' && v <= UINT32_MAX)
		v = v * 10 + (unsigned long)(*p++ - '0');
	if (p == name || v == 0 || v > UINT32_MAX ||
	    (*p != '.' && *p != '-' && *p != '_'))
		return 0;
	dot = strrchr(name, '.');
	return dot && !strcmp(dot, ".json") ? (uint32_t)v : 0;
}

/* The naming rule a name with no pid (name_pid() 0) breaks, as a note. */
static const char *name_rule(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot || strcmp(dot, ".json"))
		return "refused: its name does not end in .json";
	return "refused: its name does not start with its writer's pid "
	       "(PID.json, PID-NAME.json)";
}

static void pend_add(struct pt_tracefiles *t, const char *name)
{
	uint32_t pid = name_pid(name);
	size_t i;

	if (!pid && name[0] == '.')
		return;                 /* a writer's temporary file */
	for (i = 0; i < t->npend; i++)
		if (!strcmp(t->pend[i].name, name))
			return;
	if (t->npend == t->cpend) {
		t->cpend = t->cpend ? 2 * t->cpend : 16;
		t->pend = pt_xrealloc(t->pend, t->cpend * sizeof *t->pend);
	}
	t->pend[t->npend].pid = pid;
	t->pend[t->npend++].name = pt_xstrdup(name);
}

static void scan_dir(struct pt_tracefiles *t);

struct pt_tracefiles *pt_tracefiles_new(const char *dir,
					pt_tracefiles_put *put, void *arg)
{
	struct pt_tracefiles *t = pt_xcalloc(1, sizeof *t);
	struct stat st;

	t->put = put;
	t->arg = arg;
	t->dirfd = t->ino = -1;
	pt_sb_init(&t->frame);
	if (!dir)
		return t;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		pt_warn("cannot create the trace directory %s: %s", dir,
			strerror(errno));
		return t;
	}
	/* Only a directory of our own: another user's could feed us files. */
	t->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->dirfd < 0 || fstat(t->dirfd, &st) < 0 ||
	    st.st_uid != geteuid() || (st.st_mode & 022)) {
		pt_warn("not using the trace directory %s: %s", dir,
			t->dirfd < 0 ? strerror(errno) : "not ours alone");
		if (t->dirfd >= 0)
			close(t->dirfd);
		t->dirfd = -1;
		return t;
	}
	t->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (t->ino >= 0 && inotify_add_watch(t->ino, dir, IN_CLOSE_WRITE |
					     IN_MOVED_TO | IN_CREATE) < 0) {
		close(t->ino);
		t->ino = -1;
	}
	if (t->ino < 0)
		t->overflow = 1;        /* look at the whole directory */
	t->dir = pt_xstrdup(dir);
	/* What a collector that died left here is of no process of ours. */
	scan_dir(t);
	while (t->npend) {
		t->npend--;
		unlinkat(t->dirfd, t->pend[t->npend].name, 0);
		free(t->pend[t->npend].name);
	}
	t->overflow = t->ino < 0;
	return t;
}

int pt_tracefiles_fd(const struct pt_tracefiles *t)
{
	return t ? t->ino : -1;
}

void pt_tracefiles_ready(struct pt_tracefiles *t)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (!t || t->ino < 0)
		return;
	while ((n = read(t->ino, buf, sizeof buf)) > 0) {
		const char *p = buf;

		while (p + sizeof(struct inotify_event) <= buf + n) {
			const struct inotify_event *ev = (const void *)p;

			if (ev->mask & IN_Q_OVERFLOW)
				t->overflow = 1;
			else if (ev->len && !(ev->mask & IN_ISDIR))
				pend_add(t, ev->name);
			p += sizeof *ev + ev->len;
		}
	}
}

/* Everything in the directory is pending (start, overflow, the end). */
static void scan_dir(struct pt_tracefiles *t)
{
	struct dirent *de;
	DIR *d;
	int fd;

	t->overflow = 0;
	if (t->dirfd < 0 || (fd = dup(t->dirfd)) < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			pend_add(t, de->d_name);
	closedir(d);
}

/* ---- one file into one frame ---- */

static void item(struct pt_sb *sb, unsigned tag, const char *s, size_t n)
{
	pt_sb_addch(sb, (char)tag);
	pt_sb_add(sb, s, n);
	pt_sb_addch(sb, '\0');
}

static void item_str(struct pt_sb *sb, unsigned tag, const char *s)
{
	item(sb, tag, s, strlen(s));
}

/* Start a TRACE frame in t->frame: room for the header, then FROM, PATH. */
static void frame_begin(struct pt_tracefiles *t, const char *from,
			size_t from_len, const char *path, size_t path_len)
{
	struct pt_sb *sb = &t->frame;

	pt_sb_reset(sb);
	pt_sb_grow(sb, PT_FRAME_HDR);
	sb->len = PT_FRAME_HDR;
	item(sb, PT_TAG_TRACE_FROM, from, from_len);
	item(sb, PT_TAG_PATH, path, path_len);
}

/* Put the frame of t->frame as pid's, stamped now. */
static void frame_put(struct pt_tracefiles *t, uint32_t pid)
{
	struct pt_frame_header h;
	struct pt_sb *sb = &t->frame;

	memset(&h, 0, sizeof h);
	h.magic = PT_WIRE_MAGIC;
	h.version = PT_WIRE_VERSION;
	h.type = PT_REC_TRACE;
	h.pid = pid;
	h.length = h.raw_length = (uint32_t)(sb->len - PT_FRAME_HDR);
	h.time_ns = pt_mono_ns();
	pt_wire_put_header((unsigned char *)sb->buf, &h);
	t->put(t->arg, sb->buf, sb->len);
	if (sb->alloc > (1u << 20))
		pt_sb_release(sb);
}

/* The note of a file refused because the run's budget is spent. */
static const char *over_budget(char *buf, size_t size)
{
	snprintf(buf, size, "refused: the run's %u MiB of trace files were "
		 "taken", PT_TRACE_RUN_MAX >> 20);
	return buf;
}

/*
 * Read the file at dirfd/path into a TRACE frame of pid and put it.
 * Returns 0 when the file was not there at all (nothing is said), 1
 * otherwise.  pid 0: the name breaks the naming rule, and the file is
 * refused unread (its events belong to no process we can tell).
 */
static int take(struct pt_tracefiles *t, int dirfd, const char *path,
		uint32_t pid, const char *shown)
{
	struct pt_sb *sb = &t->frame;
	const char *note = NULL;
	char size[24], notebuf[96];
	struct stat st;
	size_t got = 0, json_at = 0;
	int fd;

	if (!pid) {
		if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		frame_begin(t, "dir", 3, shown, strlen(shown));
		item_str(sb, PT_TAG_TRACE_NOTE, name_rule(path));
		fd = -1;
		goto send;
	}
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return 0;
	frame_begin(t, "dir", 3, shown, strlen(shown));
	if (fd < 0) {
		note = errno == ELOOP ? "refused: a symbolic link (not followed)"
				      : "refused: cannot be opened";
		item_str(sb, PT_TAG_TRACE_NOTE, note);
		goto send;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		item_str(sb, PT_TAG_TRACE_NOTE,
			 "refused: not a regular file");
		goto send;
	}
	snprintf(size, sizeof size, "%lld", (long long)st.st_size);
	item_str(sb, PT_TAG_TRACE_SIZE, size);
	if (t->bytes >= PT_TRACE_RUN_MAX) {
		item_str(sb, PT_TAG_TRACE_NOTE,
			 over_budget(notebuf, sizeof notebuf));
		goto send;
	}
	/* Room for the file up to the cap; what the size said may change. */
	pt_sb_grow(sb, PT_TRACE_FILE_MAX + 2);
	json_at = sb->len;
	sb->buf[sb->len++] = PT_TAG_TRACE_JSON;
	while (got < PT_TRACE_FILE_MAX) {
		ssize_t n = read(fd, sb->buf + sb->len + got,
				 PT_TRACE_FILE_MAX - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	{
		/* A JSON text has no NUL: keep what comes before one. */
		char *nul = memchr(sb->buf + sb->len, 0, got);
		char one;

		if (nul) {
			got = (size_t)(nul - (sb->buf + sb->len));
			note = "cut at a NUL byte";
		} else if (got == PT_TRACE_FILE_MAX &&
			   read(fd, &one, 1) == 1) {
			snprintf(notebuf, sizeof notebuf, "cut at %u MiB",
				 PT_TRACE_FILE_MAX >> 20);
			note = notebuf;
		}
	}
	t->bytes += got;
	sb->len += got;
	sb->buf[sb->len++] = '\0';
	if (note) {
		/* The note goes before the JSON: move the JSON up. */
		size_t nl = strlen(note) + 2, jl = sb->len - json_at;

		pt_sb_grow(sb, nl);
		memmove(sb->buf + json_at + nl, sb->buf + json_at, jl);
		sb->buf[json_at] = PT_TAG_TRACE_NOTE;
		memcpy(sb->buf + json_at + 1, note, nl - 1);
		sb->len += nl;
	}
send:
	if (fd >= 0)
		close(fd);
	frame_put(t, pid);
	return 1;
}

int pt_tracefiles_admit(struct pt_tracefiles *t, uint32_t pid,
			const unsigned char *payload, size_t len)
{
	const char *str, *from = "", *path = "";
	size_t pos = 0, n, from_len = 0, path_len = 0, json = 0;
	char notebuf[96];
	unsigned tag;

	if (!t)
		return 1;
	while (pt_wire_next_item(payload, len, &pos, &tag, &str, &n) > 0) {
		if (tag == PT_TAG_TRACE_FROM) {
			from = str;
			from_len = n;
		} else if (tag == PT_TAG_PATH) {
			path = str;
			path_len = n;
		} else if (tag == PT_TAG_TRACE_JSON) {
			json = n;
		}
	}
	if (t->bytes + json <= PT_TRACE_RUN_MAX) {
		t->bytes += json;
		return 1;
	}
	frame_begin(t, from, from_len, path, path_len);
	item_str(&t->frame, PT_TAG_TRACE_NOTE,
		 over_budget(notebuf, sizeof notebuf));
	frame_put(t, pid);
	return 0;
}

/* Take pending entry i (removing it from the list and the directory). */
static void take_pending(struct pt_tracefiles *t, size_t i, uint32_t pid)
{
	struct pending p = t->pend[i];
	struct pt_sb shown = PT_SB_INIT;

	t->pend[i] = t->pend[--t->npend];
	pt_sb_addf(&shown, "%s/%s", t->dir, p.name);
	if (take(t, t->dirfd, p.name, pid, shown.buf))
		unlinkat(t->dirfd, p.name, 0);
	pt_sb_release(&shown);
	free(p.name);
}

void pt_tracefiles_ended(struct pt_tracefiles *t, uint32_t pid,
			 uint32_t own_pid)
{
	if (!t || t->dirfd < 0)
		return;
	if (t->nended == t->cended) {
		t->cended = t->cended ? 2 * t->cended : 64;
		t->ended = pt_xrealloc(t->ended, t->cended * sizeof *t->ended);
	}
	t->ended[t->nended++] = (struct ended){ pid, own_pid };
}

void pt_tracefiles_settle(struct pt_tracefiles *t)
{
	size_t i, e;

	if (!t || !t->nended)
		return;
	/* Each writer closed its file before it ended: its event is queued
	 * by now, if not read. */
	pt_tracefiles_ready(t);
	if (t->overflow)
		scan_dir(t);
	for (e = 0; e < t->nended; e++)
		for (i = t->npend; i-- > 0;)
			if (t->pend[i].pid == t->ended[e].own_pid)
				take_pending(t, i, t->ended[e].pid);
	t->nended = 0;
}

void pt_tracefiles_sweep(struct pt_tracefiles *t)
{
	if (!t || t->dirfd < 0)
		return;
	pt_tracefiles_settle(t);
	pt_tracefiles_ready(t);
	scan_dir(t);
	/* By the pid in the name: the model matches it with the pid's
	 * execution at the time the file's events say. */
	while (t->npend)
		take_pending(t, t->npend - 1, t->pend[t->npend - 1].pid);
}

void pt_tracefiles_free(struct pt_tracefiles *t)
{
	size_t i;

	if (!t)
		return;
	if (t->dirfd >= 0) {
		t->npend = 0;
		scan_dir(t);
		for (i = 0; i < t->npend; i++)
			unlinkat(t->dirfd, t->pend[i].name, 0);
		close(t->dirfd);
		rmdir(t->dir);
	}
	for (i = 0; i < t->npend; i++)
		free(t->pend[i].name);
	if (t->ino >= 0)
		close(t->ino);
	free(t->pend);
	free(t->ended);
	free(t->dir);
	pt_sb_release(&t->frame);
	free(t);
}
