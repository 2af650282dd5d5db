/*
 * Trace files that a program in a sandbox writes (doc/manual.md, "Traces
 * that programs write"; design.md).  The collector takes the files of
 * $PROFTRACE_TRACE_DIR itself when their writer ends; but a sandbox may
 * show that directory read-only, or not at all (bubblewrap with / bound
 * read-only, opam's private /tmp).  So the constructor asks once whether
 * the image may write there: one faccessat, the only cost in the common
 * case.  When it may not, the image gets a relay directory it can write
 * (in $TMPDIR, /tmp, /dev/shm, /var/tmp or its working directory, named
 * .proftrace-relay-PID), through the same variable; every image that
 * inherits a relay (its name says so) sends, at its end, the files of
 * its pid found there over its own connection, and removes them.
 *
 * Only the owner does any of it (not a vfork child), and only in the
 * constructor and at the end, never on a fork or exec path.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

#define RELAY_NAME ".proftrace-relay-"
#define VAR_LEN    (sizeof PT_ENV_TRACE_DIR)        /* "NAME=" */
/* A file's time is the kernel's coarse clock, a tick behind ours. */
#define MTIME_SLACK_NS 20000000u

static const char *trace_dir(void)
{
	return PT_STR(env_trace) + VAR_LEN;
}

/* Is the directory a relay (by its last component's name)? */
static int is_relay(const char *dir)
{
	const char *base = pt_memrchr(dir, '/', pt_strlen(dir));

	base = base ? base + 1 : dir;
	return !pt_strncmp(base, RELAY_NAME, sizeof RELAY_NAME - 1);
}

static char *put_uint(char *end, unsigned long v)
{
	*--end = '\0';
	return pt_put_dec(end, v);
}

/*
 * The image may not write into the trace directory: make it a relay and
 * point the environment there.  Apart, so that the common case's frame
 * stays small (its buffers would be stack pages touched in every process).
 */
static __attribute__((noinline)) void make_relay(char **envp)
{
	static const char *const bases[] = { "/tmp", "/dev/shm", "/var/tmp",
					     NULL };
	char path[PATH_MAX], cwd[PATH_MAX], num[24], *pid;
	const char *tmpdir = NULL;
	size_t i, k, len;
	uint16_t entry;

	pid = put_uint(num + sizeof num, (unsigned long)pt.owner);
	for (i = 0; envp && envp[i]; i++)
		if (!pt_strncmp(envp[i], "TMPDIR=", 7) && envp[i][7] == '/')
			tmpdir = envp[i] + 7;
	for (k = tmpdir ? 0 : 1; k < 1 + sizeof bases / sizeof *bases; k++) {
		const char *base = k ? bases[k - 1] : tmpdir;

		/* Last, the working directory: absolute, for children that
		 * change theirs. */
		if (!base && !(base = pt_sys_getcwd(cwd, sizeof cwd)))
			continue;
		len = pt_strlen(base);
		if (len + 1 + sizeof RELAY_NAME + pt_strlen(pid) >= sizeof path)
			continue;
		pt_memcpy(path, base, len);
		path[len] = '/';
		pt_memcpy(path + len + 1, RELAY_NAME, sizeof RELAY_NAME - 1);
		pt_strcpy(path + len + sizeof RELAY_NAME, pid);
		if (PT_SC3(SYS_mkdirat, AT_FDCWD, path, 0700) == 0)
			break;
	}
	if (k == 1 + sizeof bases / sizeof *bases ||
	    !(entry = pt_env_pool_entry(PT_ENV_TRACE_DIR, path)))
		return;
	/* The program and its children see the relay from now on. */
	for (i = 0; envp && envp[i]; i++)
		if (!pt_strncmp(envp[i], PT_ENV_TRACE_DIR "=", VAR_LEN)) {
			envp[i] = pt.pool + entry;
			break;
		}
	pt.env_trace = entry;
	pt.trace_relay = 2;
}

void pt_trace_setup(char **envp)
{
	if (!pt.env_trace || pt.off || pt.quiet)
		return;
	if (is_relay(trace_dir())) {
		/* Its maker's pid names it: an image of the same process
		 * (after an exec) removes it in the maker's stead. */
		char num[24];
		const char *dir = trace_dir(), *pid;
		size_t n = pt_strlen(dir);

		pid = put_uint(num + sizeof num, (unsigned long)pt.owner);
		pt.trace_relay = n > pt_strlen(pid) &&
				 !pt_strncmp(dir + n - pt_strlen(pid), pid,
					     pt_strlen(pid)) &&
				 dir[n - pt_strlen(pid) - 1] == '-' ? 2 : 1;
		return;
	}
	/* The common case: the collector's directory, writable.  (Before
	 * Linux 5.8, no faccessat2: faccessat, with the real ids.) */
	if (PT_SC5(SYS_faccessat2, AT_FDCWD, trace_dir(), W_OK | X_OK,
		   AT_EACCESS, 0) == 0 ||
	    (errno == ENOSYS && PT_SC3(SYS_faccessat, AT_FDCWD, trace_dir(),
				       W_OK | X_OK) == 0))
		return;
	make_relay(envp);
}

/* Does a directory entry's name follow the naming rule for pid? */
static int ours(const char *name, const char *pid)
{
	size_t n = pt_strlen(pid), len = pt_strlen(name);

	return !pt_strncmp(name, pid, n) &&
	       (name[n] == '.' || name[n] == '-' || name[n] == '_') &&
	       len >= n + 5 && !pt_strncmp(name + len - 5, ".json", 5);
}

/*
 * Send the file dfd/name as a TRACE record found by `from`, shown as
 * path.  fresh: only a file written since this image began (a known
 * tool's output left from an earlier build is not this run's).
 */
static void send_file(struct pt_chan *ch, int dfd, const char *name,
		      const char *from, const char *path, int fresh)
{
	char size[24];
	const char *note = NULL;
	struct pt_item it[5];
	struct pt_body b;
	struct statx stx;
	size_t n = 0, len = 0;
	void *map = MAP_FAILED;
	int fd;

	it[n++] = (struct pt_item){ PT_TAG_TRACE_FROM, from, pt_strlen(from) };
	it[n++] = (struct pt_item){ PT_TAG_PATH, path, pt_strlen(path) };
	fd = (int)PT_SC5(SYS_openat, dfd, name, O_RDONLY | O_NOFOLLOW |
			 O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0, 0);
	if (fd < 0 && fresh && errno == ENOENT)
		return;         /* the tool wrote nothing: nothing to say */
	if (fd < 0) {
		note = errno == ELOOP ? "refused: a symbolic link (not followed)"
				      : "refused: cannot be opened";
	} else if (PT_SC5(SYS_statx, fd, "", AT_EMPTY_PATH,
			  STATX_TYPE | STATX_SIZE | STATX_MTIME, &stx) < 0 ||
		   !S_ISREG(stx.stx_mode)) {
		note = "refused: not a regular file";
	} else if (fresh && (uint64_t)stx.stx_mtime.tv_sec * 1000000000u +
			    stx.stx_mtime.tv_nsec + MTIME_SLACK_NS <
			    pt.start_realtime_ns) {
		pt_sys_close(fd);
		return;
	} else {
		const char *p = put_uint(size + sizeof size,
					 (unsigned long)stx.stx_size);

		it[n++] = (struct pt_item){ PT_TAG_TRACE_SIZE, p,
					    pt_strlen(p) };
		len = stx.stx_size < PT_TRACE_FILE_MAX ? stx.stx_size
						       : PT_TRACE_FILE_MAX;
		if (stx.stx_size > PT_TRACE_FILE_MAX)
			note = "cut at 16 MiB";
		if (len)
			map = (void *)PT_SC6(PT_SYS_MMAP, 0, len, PROT_READ,
					     MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			len = 0;
		else {
			/* A JSON text has no NUL: what comes before one. */
			const char *c = map;
			size_t i;

			for (i = 0; i < len && c[i]; i++)
				;
			if (i < len)
				note = "cut at a NUL byte";
			len = i;
		}
	}
	if (note)
		it[n++] = (struct pt_item){ PT_TAG_TRACE_NOTE, note,
					    pt_strlen(note) };
	if (map != MAP_FAILED || (fd >= 0 && !note))
		it[n++] = (struct pt_item){ PT_TAG_TRACE_JSON,
					    map != MAP_FAILED ? map : "", len };
	memset(&b, 0, sizeof b);
	b.type = PT_REC_TRACE;
	b.items = it;
	b.nitems = n;
	pt_send_record(ch, &b, pt_now_ns());
	if (map != MAP_FAILED)
		PT_SC2(SYS_munmap, map, len ? len : 1);
	if (fd >= 0)
		pt_sys_close(fd);
}

/* A relay's file: sent under its path in the relay, then removed. */
static void send_relayed(struct pt_chan *ch, int dfd, const char *name)
{
	char path[PATH_MAX];
	size_t dl = pt_strlen(trace_dir()), nl = pt_strlen(name);

	if (dl + 1 + nl >= sizeof path)
		return;
	pt_memcpy(path, trace_dir(), dl);
	path[dl] = '/';
	pt_memcpy(path + dl + 1, name, nl + 1);
	send_file(ch, dfd, name, "dir", path, 0);
	PT_SC3(SYS_unlinkat, dfd, name, 0);
}

/* The known tool's file ("TOOL=FILE" in the pool), left in place. */
static __attribute__((noinline)) void send_known(struct pt_chan *ch)
{
	char from[16];
	const char *entry = PT_STR(trace_known), *eq = pt_strchr(entry, '=');
	size_t n = (size_t)(eq - entry);

	if (!eq || n >= sizeof from)
		return;
	pt_memcpy(from, entry, n);
	from[n] = '\0';
	send_file(ch, AT_FDCWD, eq + 1, from, eq + 1, 1);
}

/* The relay directory's files of this pid, sent and removed. */
static __attribute__((noinline)) void send_relay(struct pt_chan *ch)
{
	char buf[2048], num[24], *pid;
	long n, off;
	int dfd, sent = 1, pass;

	dfd = (int)PT_SC5(SYS_openat, AT_FDCWD, trace_dir(),
			  O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0);
	if (dfd < 0)
		return;
	pid = put_uint(num + sizeof num, (unsigned long)pt.owner);
	/* Removing entries while listing may skip some: list again until a
	 * pass sends nothing (a few times at most: one that cannot be
	 * removed would come back for ever). */
	for (pass = 0; sent && pass < 4; pass++) {
		sent = 0;
		PT_SC3(SYS_lseek, dfd, 0, SEEK_SET);
		while ((n = PT_SC3(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
			for (off = 0; off < n;) {
				/* struct linux_dirent64: ino, off, reclen,
				 * type, name */
				unsigned short reclen;
				const char *name = buf + off + 19;

				pt_memcpy(&reclen, buf + off + 16, 2);
				if (ours(name, pid)) {
					send_relayed(ch, dfd, name);
					sent = 1;
				}
				off += reclen;
			}
	}
	pt_sys_close(dfd);
	if (pt.trace_relay == 2)
		PT_SC3(SYS_unlinkat, AT_FDCWD, trace_dir(), AT_REMOVEDIR);
}

/*
 * A small frame in front of the large ones: most images have nothing to
 * send, and a frame is touched on entry, so the stack page below the
 * EXIT's would be one more fault in each fork child that ends.
 */
void pt_trace_send(struct pt_chan *ch)
{
	if (pt.trace_known)
		send_known(ch);
	if (pt.trace_relay)
		send_relay(ch);
}

static __attribute__((noinline)) int files_send(const struct pt_item *it,
						size_t n, uint64_t dropped)
{
	struct pt_item all[1];
	struct pt_body b;
	struct pt_chan ch;
	char num[24], *d = NULL;
	int rc;

	memset(&b, 0, sizeof b);
	b.type = PT_REC_FILES;
	b.items = it;
	b.nitems = n;
	if (dropped) {
		/* The count goes last, as one item more: a record of its
		 * own when there is nothing else to say. */
		d = put_uint(num + sizeof num, (unsigned long)dropped);
		all[0] = (struct pt_item){ PT_TAG_FILES_DROPPED, d,
					   pt_strlen(d) };
	}
	if (pt_chan_get(&ch, PT_USE_EVENT, pt.owner) < 0)
		return -1;
	rc = n ? pt_send_record(&ch, &b, pt_now_ns()) : 0;
	if (rc == 0 && d) {
		b.items = all;
		b.nitems = 1;
		rc = pt_send_record(&ch, &b, pt_now_ns());
	}
	pt_chan_put(&ch);
	return rc;
}

/*
 * libptfiles.so's one way in (doc/design.md, "File accesses"): send its
 * table, n items (BASE, TIMES, FILE...) and the count of accesses it
 * dropped, as FILES records of this image.  Called by that library in
 * the owner before an exec or at the image's end.  0, or -1 when nothing
 * could be sent (a copy of the process, no room on this stack, no
 * channel).  errno preserved.
 */
int pt_files_entry(const struct pt_item *it, size_t n, uint64_t dropped)
{
	int saved = errno, rc = -1;

	if (pt.ready && !pt.off && pt_is_owner() &&
	    pt_stack_fits(PT_HOOK_STACK))
		rc = files_send(it, n, dropped);
	pt_errno_restore(saved);
	return rc;
}

/*
 * Not a dynamic symbol: that library finds the entry by this marker in
 * our read-only data, followed by the entry's offset from the marker's
 * end, 32 bits signed.  One more exported name moved ld.so's strings and cost every
 * traced process some 800 instructions of strcmp at load, with or
 * without --files (counted with callgrind).
 */
__asm__(".pushsection .rodata\n"
	".balign 16\n"
	".ascii \"" PT_FILES_MARKER "\"\n"
	".long pt_files_entry - .\n"   /* 32 bits: i386 has no 64-bit
					   PC-relative relocation */
	".popsection\n");
