/*
 * Will the image a fork child is about to exec load the library?
 *
 * A fork child leaves its EXEC in the mailbox (mailbox.c), and the parent
 * sends it when it reaps the child.  A parent killed outright (SIGKILL)
 * sends nothing: for an image that loads the library that costs little,
 * as its HELLO carries the same command line; for one that does not (a
 * static or setuid program) the EXEC was the whole record.  So before
 * leaving its EXEC there, the child looks at the file it is about to
 * exec, as the kernel will: an ELF file with an interpreter (PT_INTERP)
 * and without a set-id bit loads the library; a `#!` script, if its
 * interpreter does.  Anything else, or anything it cannot tell, is sent
 * at once, as before the mailbox.  A wrong guess costs a message or,
 * only if the parent is then SIGKILLed, the record of an image that
 * would have reported itself anyway.
 *
 * Four system calls (open, statx, pread, close) on a file the exec reads
 * next; no allocation, bounded stack.
 *
 * The same look tells whether the collector should trace the image
 * (seize.c): one that will not load the library (no PT_INTERP) or is Go
 * (its build-id note, in the first page), set-id and file capabilities
 * excepted; and whether it is of the other ELF class (envexec.c's repair:
 * the head read once for both).  Exec hooks that have no mailbox to
 * fill, and posix_spawn, look too, once per absolute path that loads
 * the library.  Those may
 * run beside other threads of the program: there the file is opened on
 * a thread of ours with a descriptor table of its own (alone.c), so that
 * no other thread's closefrom and open can meet our descriptor.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "pt-preload.h"
#include "pt-str.h"
#include "pt-sys.h"

#if __SIZEOF_POINTER__ == 8
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Phdr phdr_t;
#else
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Phdr phdr_t;
#endif

/* The ELF header, usually every program header, and the first page's
 * notes: Go's linker puts its build-id note there. */
#define HEAD 4096

enum { LOADS, NOT, SCRIPT, MISSING, TRACE };

static ssize_t pread_at(int fd, void *buf, size_t n, off_t off)
{
	return (ssize_t)PT_SC6(SYS_pread64, fd, buf, n, off, 0, 0);
}

/*
 * Is a Go build-id note (owner "Go", type 4, as Go's linker writes it)
 * in note segment ph, if that lies within the got bytes at buf?
 */
static int go_note(const unsigned char *buf, size_t got, const phdr_t *ph)
{
	size_t at = ph->p_offset, end = ph->p_offset + ph->p_filesz;

	if (ph->p_offset >= got || ph->p_filesz > got - ph->p_offset)
		return 0;
	while (at + 12 <= end) {
		const uint32_t *nh = (const void *)(buf + at);
		size_t nsz = (nh[0] + 3u) & ~3u, dsz = (nh[1] + 3u) & ~3u;

		if (nsz > end - at - 12 || dsz > end - at - 12 - nsz)
			return 0;
		/* Go's linker pads the owner: "Go\0\0", size 4. */
		if ((nh[0] == 3 || nh[0] == 4) && nh[2] == 4 &&
		    !pt_strncmp((const char *)buf + at + 12, "Go", 3))
			return 1;
		at += 12 + nsz + dsz;
	}
	return 0;
}

/* Does fd's ELF image ask for an interpreter (*go set if it is Go, as
 * far as the first got bytes, in buf, tell)? */
static int has_interp(int fd, const unsigned char *buf, size_t got, int *go)
{
	const ehdr_t *eh = (const void *)buf;
	unsigned char more[8 * sizeof(phdr_t)];
	size_t i;
	int interp = 0;

	*go = 0;
	if (got < sizeof *eh || eh->e_ident[EI_CLASS] !=
	    (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh->e_phentsize != sizeof(phdr_t) || eh->e_phnum > 256)
		return 0;
	for (i = 0; i < eh->e_phnum; i++) {
		size_t at = eh->e_phoff + i * sizeof(phdr_t);
		const phdr_t *ph;

		if (at + sizeof *ph <= got) {
			ph = (const void *)(buf + at);
		} else {
			/* Past the first page: no Go note is looked for. */
			size_t k = i % 8;

			if (interp)
				return 1;
			if (k == 0 && pread_at(fd, more, sizeof more,
					       (off_t)at) < (ssize_t)sizeof *ph)
				return 0;
			ph = (const void *)(more + k * sizeof *ph);
		}
		if (ph->p_type == PT_INTERP)
			interp = 1;
		else if (ph->p_type == PT_NOTE && at + sizeof *ph <= got &&
			 go_note(buf, got, ph))
			*go = 1;
	}
	return interp;
}

/*
 * Will the kernel give the image at fd its file capabilities (an
 * unprivileged tracer would take them)?  Asked only of images to trace.
 */
static int has_caps(int fd)
{
	int saved = errno, v;
	long r = PT_SC5(SYS_fgetxattr, fd, "security.capability", NULL, 0, 0);

	v = r > 0 || (r < 0 && errno != ENODATA && errno != ENOTSUP);
	pt_errno_restore(saved);
	return v;
}

struct classify_args {
	const char *path;
	char *interp;
	size_t cap;
	int r;
	int foreign;    /* an ELF file of the other class than ours */
	int known;      /* foreign is known: the head was read */
};

/*
 * a->r: LOADS, NOT, SCRIPT with its interpreter's path in a->interp
 * (a->cap bytes), TRACE (an ELF image of our class that will not load
 * the library, or Go, and is neither set-id nor has file capabilities:
 * the collector may trace it), or MISSING (cannot be opened).
 */
static int classify_fn(void *arg)
{
	struct classify_args *a = arg;
	const char *path = a->path;
	char *interp = a->interp;
	size_t cap = a->cap;
	unsigned char buf[HEAD];
	struct statx stx;
	ssize_t got;
	int fd, r = NOT;

	fd = pt_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		a->r = MISSING;
		return 0;
	}
	if (PT_SC5(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_MODE, &stx) < 0 ||
	    (stx.stx_mode & (S_ISUID | S_ISGID)))
		goto out;
	got = pread_at(fd, buf, sizeof buf, 0);
	a->known = got >= 0;
	if (got >= 4 && buf[0] == ELFMAG0 && buf[1] == ELFMAG1 &&
	    buf[2] == ELFMAG2 && buf[3] == ELFMAG3) {
		int go;

		a->foreign = got > EI_CLASS && buf[EI_CLASS] !=
			     (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
		r = has_interp(fd, buf, (size_t)got, &go) && !go ? LOADS : NOT;
		if (r == NOT && got >= (ssize_t)sizeof(ehdr_t) &&
		    ((const ehdr_t *)(const void *)buf)->e_ident[EI_CLASS] ==
		    (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
		    !has_caps(fd))
			r = TRACE;
	} else if (got > 2 && buf[0] == '#' && buf[1] == '!') {
		ssize_t i = 2;
		size_t n = 0;

		while (i < got && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		while (i < got && buf[i] != ' ' && buf[i] != '\t' &&
		       buf[i] != '\n' && n + 1 < cap)
			interp[n++] = (char)buf[i++];
		interp[n] = '\0';
		if (n && i < got && n + 1 < cap)
			r = SCRIPT;
	}
out:
	pt_sys_close(fd);
	a->r = r;
	return 0;
}

/*
 * LOADS, NOT, TRACE, SCRIPT (interp filled) or MISSING for path.  A
 * spawning parent, or a thread that execs, may have other threads: the
 * file is then opened where no other thread's close or open reaches its
 * descriptor (alone.c).
 */
static int classify(const char *path, char *interp, size_t cap,
		    int *foreign)
{
	struct classify_args a = { path, interp, cap, MISSING, 0, 0 };

	pt_alone_call(-1, classify_fn, &a);
	*foreign = a.known ? a.foreign : -1;
	return a.r;
}

/* PT_TARGET_LOADS, PT_TARGET_TRACE or 0 for path's image, -1 if path
 * is missing; *foreign: 1 if it is an ELF image of the other class than
 * ours, or a script run by one (pt_target_foreign), -1 if not known (a
 * set-id file is not read). */
static int look(const char *path, int *foreign)
{
	char interp[256];
	int r = classify(path, interp, sizeof interp, foreign);

	/* the kernel goes one level deeper; so do we */
	if (r == SCRIPT)
		r = classify(interp, interp, sizeof interp, foreign);
	switch (r) {
	case LOADS:
		return PT_TARGET_LOADS;
	case TRACE:
		return PT_TARGET_TRACE;
	case MISSING:
		return -1;
	default:
		return 0;
	}
}

static int loads(const char *path)
{
	int foreign;

	return look(path, &foreign);
}

/*
 * Absolute paths whose image loaded the library when this process (or a
 * vfork child of it) looked: an exec or spawn of one asks no system call
 * again, neither whether it loads the library nor whether it is of the
 * other ELF class (an image that loads it is not).  A fork child's exec
 * hook looks once, for both questions: the environment's repair asks
 * first, the EXEC's mailbox then finds the answer here.  Only that
 * verdict is kept: a file rebuilt static or set-id since is then not
 * traced but watched, as before, never traced wrongly (and its EXEC,
 * left with the parent, is lost only if the parent is killed outright).  Slots are single words
 * stored and loaded atomically, a hash of the path (0: empty): threads
 * and vfork children may write them at once, and a collision costs a
 * static program its trace, nothing else.
 */
#define SEEN_SLOTS 16   /* in pt: words, as i386 has no libatomic */
#define seen pt.target_seen
#define seen_next pt.target_seen_next

static uintptr_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return (uintptr_t)(h ^ (h >> 32)) | 1;
}

/* Is path's image one that loaded the library when we looked? */
static int seen_has(const char *path)
{
	uintptr_t h;
	unsigned i;

	if (path[0] != '/')
		return 0;
	h = path_hash(path);
	for (i = 0; i < SEEN_SLOTS; i++)
		if (__atomic_load_n(&seen[i], __ATOMIC_RELAXED) == h)
			return 1;
	return 0;
}

static void seen_add(const char *path)
{
	unsigned i;

	if (path[0] != '/')
		return;
	i = __atomic_fetch_add(&seen_next, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&seen[i % SEEN_SLOTS], path_hash(path),
			 __ATOMIC_RELAXED);
}

/* loads(), without a system call for an absolute path seen to load the
 * library before, and noting one that does. */
static int loads_seen(const char *path)
{
	int r;

	if (seen_has(path))
		return PT_TARGET_LOADS;
	r = loads(path);
	if (r == PT_TARGET_LOADS)
		seen_add(path);
	return r;
}

/*
 * execvp's search: probe() of the first PATH entry where the file can be
 * opened (probe says -1 where it cannot), 0 if none.
 */
static int searched(const char *file, int (*probe)(const char *))
{
	const char *path = "/bin:/usr/bin", *p;
	char full[PATH_MAX];
	size_t flen = pt_strlen(file);
	char **e;

	for (e = environ; e && *e; e++)
		if (pt_strncmp(*e, "PATH=", 5) == 0) {
			path = *e + 5;
			break;
		}
	for (p = path;; p++) {
		size_t dlen = pt_strcspn(p, ":");

		if (dlen + flen + 2 <= sizeof full) {
			int r;

			pt_memcpy(full, p, dlen);
			full[dlen] = '/';
			pt_memcpy(full + dlen + 1, file, flen + 1);
			r = probe(dlen ? full : file);
			if (r >= 0)
				return r;
		}
		p += dlen;
		if (!*p)
			return 0;
	}
}

/*
 * 1 if path is an ELF file of the other class than ours, or a `#!` script
 * whose interpreter is; 0 if not; -1 if path cannot be opened.
 */
static int foreign(const char *path)
{
	unsigned char buf[128];
	char interp[128];
	int depth;

	for (depth = 0; depth < 2; depth++) {
		ssize_t got, i = 2;
		size_t n = 0;

		/* A spawning parent may have threads: the read is made
		 * where no other thread's close reaches its descriptor. */
		got = pt_alone_pread(path, buf, sizeof buf);
		if (got < 0)
			return depth ? 0 : -1;
		if (got > EI_CLASS && buf[0] == ELFMAG0 && buf[1] == ELFMAG1 &&
		    buf[2] == ELFMAG2 && buf[3] == ELFMAG3)
			return buf[EI_CLASS] != (sizeof(void *) == 8 ?
						 ELFCLASS64 : ELFCLASS32);
		if (got <= 2 || buf[0] != '#' || buf[1] != '!')
			return 0;
		/* The kernel goes one level deeper; so do we.  A shebang
		 * line longer than buf is not followed. */
		while (i < got && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		while (i < got && buf[i] != ' ' && buf[i] != '\t' &&
		       buf[i] != '\n' && n + 1 < sizeof interp)
			interp[n++] = (char)buf[i++];
		interp[n] = '\0';
		if (!n || i == got)
			return 0;
		path = interp;
	}
	return 0;
}

/*
 * foreign(), from the look the exec and spawn hooks take at the file
 * anyway (look(), the head read once for both questions): an image that
 * loads the library is of our class, and one seen to load it before is
 * not read again.  Only a file whose head look() did not read (set-id)
 * is read by foreign() itself.
 */
static int foreign_seen(const char *path)
{
	int r, f;

	if (seen_has(path))
		return 0;
	r = look(path, &f);
	if (r == PT_TARGET_LOADS) {
		seen_add(path);
		return 0;
	}
	if (r < 0)
		return -1;
	return f >= 0 ? f : foreign(path);
}

void pt_target_ask_loader(void)
{
#ifdef PT_FOREIGN_LOADER
	/* Our entry is a path (env.c): it matters if such programs can run
	 * here, which the loader's presence says.  Once per process; a
	 * vfork child's answer is its parent's too, and as true. */
	if (pt.foreign_missing == PT_FOREIGN_UNKNOWN) {
		int saved = errno;

		pt.foreign_missing = pt_sys_readable(PT_FOREIGN_LOADER) == 0;
		pt_errno_restore(saved);
	}
#endif
}

int pt_target_foreign(const char *file, int search)
{
	int saved = errno, r;

	pt_target_ask_loader();
	if (!pt.foreign_missing || !file || !*file) {
		pt_errno_restore(saved);
		return 0;
	}
	if (search && !pt_strchr(file, '/'))
		r = searched(file, foreign_seen);
	else
		r = foreign_seen(file) > 0;
	pt_errno_restore(saved);
	return r;
}

int pt_target_kind_seen(const char *file, int search)
{
	int saved = errno, r;

	if (!file || !*file)
		r = 0;
	else if (search && !pt_strchr(file, '/'))
		r = searched(file, loads_seen);
	else
		r = loads_seen(file);
	pt_errno_restore(saved);
	return r > 0 ? r : 0;
}

int pt_target_kind(const char *file, int search)
{
	int saved = errno, r;

	if (!file || !*file)
		r = 0;
	else if (search && !pt_strchr(file, '/'))
		r = searched(file, loads);
	else
		r = loads(file);
	pt_errno_restore(saved);
	return r > 0 ? r : 0;
}
