/*
 * The hooks through which a program starts a new image: the exec family
 * and posix_spawn, which hand it an environment repaired to keep it
 * traced (envexec.c), and chroot, after which an image exec'd may not
 * find the library or the collector (design.md, pitfall 1: glibc calls
 * its own internal __execve, so each public name needs its own hook).
 * vfork is not wrapped: a C wrapper cannot return twice on one stack.  A
 * vfork child is seen through the hooks it calls next (an exec or _exit),
 * which run in foreign context; see pt-preload.h.  glibc's posix_spawn
 * children exec through internal calls: the parent side records SPAWN,
 * and the child's new image says HELLO itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

#include "pt-hooks.h"
#include "pt-str.h"
#include "pt-sys.h"

/* ---- the exec family ---- */

static void exec_ppid(struct pt_body *b, uint32_t ppid)
{
	pt_wire_put32(b->fixed + PT_OFF(pt_rec_exec, ppid), ppid);
}

/*
 * The CPU of the image that execs (wire.h, PT_TAG_CPU), as its EXIT would
 * say it: an image that execs never sends one, and what it ran stays in
 * the rusage of the images after it.  Only the owner of an image of its
 * own asks: a fork phase's CPU reaches the next image's HELLO
 * (CPU_BEFORE) without this system call, and a vfork or clone child's
 * rusage is not the image's whose baseline pt holds.  The string is laid
 * out backwards from end.
 */
static void exec_cpu(struct pt_body *b, struct pt_item *items, char *end)
{
	struct pt_item *it = &items[b->nitems];
	struct rusage ru;
	uint64_t ut, st;
	char *s = end;

	if (pt_sys_getrusage_self(&ru) < 0)
		return;
	ut = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
	     (uint64_t)ru.ru_utime.tv_usec;
	st = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
	     (uint64_t)ru.ru_stime.tv_usec;
	ut = ut > pt.base_utime_us ? ut - pt.base_utime_us : 0;
	st = st > pt.base_stime_us ? st - pt.base_stime_us : 0;
	s = pt_put_dec(s, (uint64_t)(ru.ru_maxrss > 0 ? ru.ru_maxrss : 0));
	*--s = ' ';
	s = pt_put_dec(s, st);
	*--s = ' ';
	s = pt_put_dec(s, ut);
	it->tag = PT_TAG_CPU;
	it->s = s;
	it->n = (size_t)(end - s);
	b->items = items;
	b->nitems++;
}

/*
 * Did this process's exec or spawn hook just leave the library out of
 * the new image's LD_PRELOAD (envexec.c)?  Then its EXEC or SPAWN says so
 * (item *it, on b), and goes out at once: the collector is to watch the
 * new image's children from outside, as no one inside will report them.
 */
static int lib_left_out(const struct pt_chan *ch, struct pt_body *b,
			struct pt_item *it)
{
	if (!pt.lib_left_out || pt.lib_left_out != ch->pid)
		return 0;
	pt.lib_left_out = 0;
	it->tag = PT_TAG_NOLIB;
	it->s = "1";
	it->n = 1;
	b->items = it;
	b->nitems = 1;
	return 1;
}

/*
 * Announce an exec; ch is for exec_failed, should the exec return.  An
 * exec of a program that will say nothing from inside (static, Go) asks
 * the collector to trace it, once its EXEC is out (seize.c).
 */
static void exec_announce(struct pt_chan *ch, enum pt_call call,
			  const char *path, char *const argv[])
{
	struct pt_body b;
	struct pt_item item[2];
	char cpu[64];
	uint64_t now;
	int nolib, kind = -1;
	int search = call == PT_CALL_EXECVP || call == PT_CALL_EXECVPE ||
		     call == PT_CALL_EXECLP;

	ch->exec_left = 0;
	ch->seized = 0;
	if (pt_chan_get(ch, PT_USE_EXEC, 0) < 0)
		return;
	exec_body(&b, PT_REC_EXEC, 0, call);      /* ppid below */
	b.path = path;
	b.argv = argv;
	b.want_cwd = 1;
	nolib = lib_left_out(ch, &b, item);
	now = pt_now_ns();
	/* A fork child that did nothing else leaves it to its parent, if
	 * the new image will report itself should the parent be killed.
	 * Such a child holds nothing else (any other event ended its
	 * fork_pending), and writes nothing. */
	if (!nolib && __atomic_load_n(&pt.fork_pending, __ATOMIC_ACQUIRE) &&
	    pt.mbox_slot && ch->owner &&
	    (kind = pt_target_kind_seen(path, search)) == PT_TARGET_LOADS) {
		/* Sent by the parent that forked us, so alive since: still
		 * our parent, without a getppid(). */
		exec_ppid(&b, (uint32_t)pt.fork_parent);
		if (pt_mbox_put(pt.mbox_slot - 1, ch, &b, now) == 0) {
			ch->exec_left = 1;
			return;
		}
	}
	exec_ppid(&b, (uint32_t)pt_sys_getppid());
	pt_defer_flush(ch);     /* the new image would lose them */
	pt_mbox_flush(ch);
	if (ch->owner && !pt.forked)
		exec_cpu(&b, item, cpu + sizeof cpu);
	pt_send_record(ch, &b, now);
	/* Closed before the exec runs: the program's exec must not find a
	 * number of ours taken (fexecve of a descriptor it closed). */
	pt_chan_put(ch);
	/* A library left out by a sandbox: the /proc watcher's, as before. */
	if (!nolib && !pt.off) {
		if (kind < 0)
			kind = pt_target_kind_seen(path, search);
		if (kind == PT_TARGET_TRACE)
			ch->seized = pt_seize_ask(ch->owner, PT_SEIZE_EXEC);
	}
}

/* The exec returned: say so, release ch, leave errno as it was. */
static void exec_failed(struct pt_chan *ch, enum pt_call call)
{
	struct pt_body b;
	int err = errno;

	/* Still the program that asked: no longer one to trace. */
	if (ch->seized)
		pt_seize_ask(ch->owner, PT_SEIZE_RELEASE);
	/* Not after the EXEC timed out (pt.off): one wait per process. */
	if (ch->kind && !pt.off) {
		if (ch->exec_left)      /* the EXEC first, as it happened */
			pt_mbox_unput(pt.mbox_slot - 1, ch);
		exec_body(&b, PT_REC_EXEC_FAILED, (uint32_t)err, call);
		pt_send_record(ch, &b, pt_now_ns());
	}
	pt_chan_put(ch);
	errno = err;
}

/* Room for an exec and its repaired environment (BIG, pt-hooks.h). */
#define EXEC_ROOM(envp) pt_stack_fits(PT_EXEC_NEED(pt_envexec_count(envp)))

/*
 * Passed through: return call, made with `passed` standing for envp, what
 * was taken out of the environment at load put back (pt_envexec_passed).
 */
#define RETURN_PASSED(envp, call)                                            \
	do {                                                                 \
		struct pt_envexec_map map_;                                  \
		size_t need_ = pt_envexec_passed_need(envp);                 \
		int fits_ = need_ && pt_stack_fits(need_ + PT_PASS_STACK);   \
		char *buf_[fits_ ? need_ / sizeof(char *) + 1 : 1];          \
		char *const *passed = pt_envexec_passed(envp,                \
			fits_ ? (char *)buf_ : NULL, fits_ ? need_ : 0, &map_); \
		int rc_ = call;                                              \
		pt_envexec_unmap(&map_);                                     \
		return rc_;                                                  \
	} while (0)

/*
 * Declare `use`: envp, or a repaired copy on this stack frame, for an
 * exec of file (searched in PATH if search).  A macro because the copy
 * must live in the caller's frame (no allocation).
 */
#define REPAIRED_ENV(use, envp, file, search)                                \
	size_t use##_n = pt_envexec_count(envp);                             \
	size_t use##_cap = use##_n <= PT_ENV_MAX ? use##_n + PT_ENV_EXTRA + 1 : 1; \
	char *use##_buf[use##_cap];                                          \
	char use##_scratch[PATH_MAX * 2];                                    \
	char *const *use = pt_envexec_repair(envp, use##_n, use##_buf,       \
					 use##_scratch, sizeof use##_scratch, \
					 file, search)

/*
 * execve and execv (search 0), execvpe and execvp (search 1: file is
 * looked for in PATH): one body, the real function chosen once the table
 * is resolved.
 */
typedef int exec_fn(const char *, char *const[], char *const[]);

static BIG int exec_quiet(exec_fn *real, const char *file,
			  char *const argv[], char *const envp[])
{
	QUIET_ENV(quiet_env, envp);
	return real(file, argv, quiet_env);
}

static BIG int exec_traced(exec_fn *real, int search, enum pt_call call,
			   const char *file, char *const argv[],
			   char *const envp[], int saved)
{
	struct pt_chan ch;

	REPAIRED_ENV(env, envp, file, search);
	exec_announce(&ch, call, file, argv);
	pt_errno_restore(saved);
	real(file, argv, env);
	exec_failed(&ch, call);
	return -1;
}

static int do_exec(int search, enum pt_call call, const char *file,
		   char *const argv[], char *const envp[])
{
	int saved = errno;
	exec_fn *real;

	pt_resolve();
	real = search ? pt_real.execvpe : pt_real.execve;
	if (pt.quiet)
		return exec_quiet(real, file, argv, envp);
	if (!EXEC_ROOM(envp))
		RETURN_PASSED(envp, real(file, argv, passed));
	return exec_traced(real, search, call, file, argv, envp, saved);
}
#define do_execve(call, path, argv, envp) do_exec(0, call, path, argv, envp)
#define do_execvpe(call, file, argv, envp) do_exec(1, call, file, argv, envp)

PT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(PT_CALL_EXECVE, path, argv, envp);
}

PT_EXPORT int execv(const char *path, char *const argv[])
{
	return do_execve(PT_CALL_EXECV, path, argv, environ);
}

PT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_execvpe(PT_CALL_EXECVPE, file, argv, envp);
}

PT_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_execvpe(PT_CALL_EXECVP, file, argv, environ);
}

/*
 * glibc declares these arguments nonnull, but programs pass NULL anyway
 * and the real calls cope: hide the value from the optimizer so that our
 * checks survive.
 */
static const char *opaque(const char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/*
 * execl, execlp and execle: gather the list into an argv on this stack.
 * Takes ap by value; returns only if the exec failed.
 */
static int exec_list(enum pt_call call, const char *file, const char *arg,
		     va_list ap)
{
	const char *arg0 = opaque(arg);
	size_t n;

	{       /* the arguments, up to the NULL */
		va_list c;

		va_copy(c, ap);
		for (n = 1; arg0 && va_arg(c, char *); n++)
			;
		va_end(c);
	}
	{
		char *argv[n + 1];
		char *const *envp = environ;

		{
			size_t i;

			argv[0] = (char *)arg0;
			for (i = 1; i < n; i++)
				argv[i] = va_arg(ap, char *);
			argv[n] = NULL;
		}
		if (!arg0)
			argv[0] = NULL;
		if (call == PT_CALL_EXECLE) {
			if (arg0)
				(void)va_arg(ap, char *);       /* the NULL */
			envp = va_arg(ap, char *const *);
		}
		if (call == PT_CALL_EXECLP)
			return do_execvpe(call, file, argv, envp);
		return do_execve(call, file, argv, envp);
	}
}

PT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(PT_CALL_EXECL, path, arg, ap);
	va_end(ap);
	return r;
}

PT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(PT_CALL_EXECLP, file, arg, ap);
	va_end(ap);
	return r;
}

PT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = exec_list(PT_CALL_EXECLE, path, arg, ap);
	va_end(ap);
	return r;
}

/* Resolve dirfd (and a relative name under it) for the record.  Apart
 * (noinline): inlined, its frame would add to the exec's deepest path. */
static __attribute__((noinline)) const char *fd_path(int dirfd,
						      const char *name,
						      char *buf, size_t cap)
{
	char link[32] = "/proc/self/fd/";
	char *p = link + 14, tmp[12];
	int i = 0;
	unsigned v = (unsigned)dirfd;
	ssize_t n;

	do
		tmp[i++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (i)
		*p++ = tmp[--i];
	*p = '\0';
	n = pt_sys_readlink(link, buf, cap - 1);
	if (n < 0) {
		if (name && *name)
			return name;
		pt_strcpy(buf, link);
		return buf;
	}
	buf[n] = '\0';
	if (name && *name && (size_t)n + 1 + pt_strlen(name) < cap) {
		buf[n] = '/';
		pt_strcpy(buf + n + 1, name);
	}
	return buf;
}

/*
 * fexecve is execveat of the file of dirfd ("", as AT_EMPTY_PATH has
 * it), made through its own real function and recorded as itself: its
 * name here is this "", told apart by its address, which no caller has.
 */
static const char fexecve_name[] = "";
#define CALL_AT(pathname) ((pathname) == fexecve_name ? PT_CALL_FEXECVE :  \
			   PT_CALL_EXECVEAT)
#define REAL_AT(dirfd, pathname, argv, envp, flags)                          \
	((pathname) == fexecve_name ? pt_real.fexecve(dirfd, argv, envp) :  \
	 pt_real.execveat(dirfd, pathname, argv, envp, flags))

static BIG int execveat_quiet(int dirfd, const char *pathname,
			      char *const argv[], char *const envp[], int flags)
{
	QUIET_ENV(quiet_env, envp);
	return REAL_AT(dirfd, pathname, argv, quiet_env, flags);
}

static BIG int execveat_traced(int dirfd, const char *pathname,
			       char *const argv[], char *const envp[], int flags,
			       int saved)
{
	char path[PATH_MAX];
	const char *name = opaque(pathname), *shown = name;
	struct pt_chan ch;

	/* a NULL name gets the kernel's EFAULT, as untraced */
	REPAIRED_ENV(env, envp, name && *name && (name[0] == '/' ||
					       dirfd == AT_FDCWD) ? name : NULL, 0);
	if (name && name[0] != '/' && (dirfd != AT_FDCWD || !*name))
		shown = fd_path(dirfd, name, path, sizeof path);
	exec_announce(&ch, CALL_AT(pathname), shown, argv);
	pt_errno_restore(saved);
	REAL_AT(dirfd, pathname, argv, env, flags);
	exec_failed(&ch, CALL_AT(pathname));
	return -1;
}

static int do_execveat(int dirfd, const char *pathname, char *const argv[],
		       char *const envp[], int flags)
{
	int saved = errno;

	pt_resolve();
	if (pathname != fexecve_name && !pt_real.execveat) {
		errno = ENOSYS;
		return -1;
	}
	if (pt.quiet)
		return execveat_quiet(dirfd, pathname, argv, envp, flags);
	if (!EXEC_ROOM(envp))
		RETURN_PASSED(envp, REAL_AT(dirfd, pathname, argv, passed,
					    flags));
	return execveat_traced(dirfd, pathname, argv, envp, flags, saved);
}

PT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return do_execveat(fd, fexecve_name, argv, envp, 0);
}

PT_EXPORT int execveat(int dirfd, const char *pathname, char *const argv[],
		       char *const envp[], int flags)
{
	return do_execveat(dirfd, pathname, argv, envp, flags);
}

/*
 * syscall(SYS_execve, ...) and syscall(SYS_execveat, ...): the syscall
 * hook (seccomp.c) runs these in place of the real syscall(), with its
 * arguments as they came, so that such an exec is recorded and its image
 * keeps the library as one through execve() does.  Both return only on
 * failure, -1 with errno, as syscall() would.
 */
long pt_syscall_execve(long nr, const char *path, char *const argv[],
		       char *const envp[])
{
	(void)nr;
	return do_execve(PT_CALL_EXECVE, path, argv, envp);
}

long pt_syscall_execveat(long nr, long dirfd, const char *pathname,
			 char *const argv[], char *const envp[], long flags)
{
	(void)nr;
	return do_execveat((int)dirfd, pathname, argv, envp, (int)flags);
}

/* ---- chroot ---- */

/* Can path (below root, root's length rl) be opened for reading? */
static int readable_below(char *full, size_t rl, const char *path)
{
	size_t pl = pt_strlen(path);

	if (!pl || rl + pl + 1 > PATH_MAX)
		return 0;
	pt_memcpy(full + rl, path, pl + 1);
	return pt_sys_readable(full) == 0;
}

/*
 * Before a chroot to root: would an image exec'd under it be lost,
 * unable to load the library (its file, or the collector's
 * /proc/PID/root, which the run log's /proc path stands for) or to reach
 * the collector (the run log, else the socket)?  Then ask the collector
 * to trace this process from now on.
 */
static BIG void chroot_traced(const char *root)
{
	char full[PATH_MAX];
	size_t rl = pt_strlen(root);
	int log, reach, load;

	if (!rl || rl + 1 > sizeof full)
		return;
	pt_memcpy(full, root, rl);
	log = pt.log_path && readable_below(full, rl, PT_STR(log_path));
	reach = log || (pt.socket_path &&
			readable_below(full, rl, PT_STR(socket_path)));
	load = log || (pt.lib_path && readable_below(full, rl, PT_STR(lib_path)));
	if (!(reach && load))
		pt_seize_ask(-1, PT_SEIZE_HIDDEN);
}

/*
 * chroot(): under a root that hides both the library and the collector
 * (no /proc, no socket, no copy of the library), what this process
 * execs next would start unrecorded, and all it runs with it, and
 * nothing the process sends after the chroot can arrive.  So the
 * collector is asked first to trace it, as it traces a static program
 * (seize.c, PT_SEIZE_HIDDEN).
 */
PT_EXPORT int chroot(const char *path)
{
	int saved = errno;

	pt_resolve();
	if (HOOK_ROOM() && opaque(path) && !pt.quiet)
		chroot_traced(path);
	pt_errno_restore(saved);
	return PT_REAL_LAZY(chroot)(path);
}

/* ---- posix_spawn, system, popen ---- */

/* at (0: now): sent at once, not held, stamped before the call: the
 * collector traces the child and writes what it does, which the SPAWN
 * must come before. */
static void send_spawn(enum pt_call call, pid_t child, const char *path,
		       char *const argv[], uint64_t at)
{
	struct pt_chan ch;
	struct pt_body b;
	struct pt_item item;
	uint64_t now;

	if (pt_chan_get(&ch, PT_USE_HOLD, 0) < 0)
		return;
	exec_body(&b, PT_REC_SPAWN, (uint32_t)child, call);
	b.path = path;
	b.argv = argv;
	now = at ? at : pt_now_ns();
	/* Usually held until the child is reaped (defer.c). */
	if (lib_left_out(&ch, &b, &item) || at ||
	    pt_defer_hold(&ch, &b, child, now) < 0)
		pt_send_record(&ch, &b, now);
	pt_chan_put(&ch);
}

/*
 * posix_spawn failed with rc.  Unless it failed before making a child
 * (no memory, no process), glibc made one that tried the file actions and
 * the exec, _exited 127 and was reaped inside posix_spawn: say so, with
 * child 0, as its pid is not returned (doc/format.md, SPAWN).
 */
static void send_spawn_failed(enum pt_call call, int rc, const char *path,
			      char *const argv[])
{
	struct pt_chan ch;
	struct pt_body b;
	char err[12] = "";

	if (rc == ENOMEM || rc == EAGAIN || pt_chan_get(&ch, PT_USE_EVENT, 0) < 0)
		return;
	exec_body(&b, PT_REC_SPAWN, 0, call);
	b.path = path;
	b.argv = argv;
	b.err = pt_put_dec(err + sizeof err - 1, (unsigned)rc);
	pt_send_record(&ch, &b, pt_now_ns());
	pt_chan_put(&ch);
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

static BIG int spawn_quiet(spawn_fn *real, pid_t *pid, const char *path,
			    const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[],
			    char *const envp[])
{
	QUIET_ENV(quiet_env, envp);
	return real(pid, path, fa, attr, argv, quiet_env);
}

static BIG int spawn_traced(spawn_fn *real, enum pt_call call, int search,
			    int saved, pid_t *pid, const char *path,
			    const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[],
			    char *const envp[])
{
	pid_t child = 0;
	int rc, traced = 0;
	uint64_t at = 0;

	REPAIRED_ENV(env, envp, path, search);
	/* The child runs none of our code before its exec: for a program
	 * that will say nothing from inside, the caller is traced for the
	 * length of the call, and the kernel traces the child from its
	 * clone (doc/design.md, "What the collector traces"). */
	if (!pt.off && pt.ready &&
	    pt_target_kind_seen(path, search) == PT_TARGET_TRACE)
		traced = pt_seize_ask(1, PT_SEIZE_SPAWN);
	if (traced)
		at = pt_now_ns();
	pt_errno_restore(saved);
	rc = real(&child, path, fa, attr, argv, env);
	saved = errno;
	if (traced)
		pt_seize_ask(1, PT_SEIZE_RELEASE);
	if (pid && rc == 0)
		*pid = child;
	if (rc == 0)
		send_spawn(call, child, path, argv, at);
	else
		send_spawn_failed(call, rc, path, argv);
	pt_errno_restore(saved);
	return rc;
}

/* posix_spawn and posix_spawnp (search: path is looked up in PATH), once
 * real is known; saved: the caller's errno, taken before anything of ours
 * ran. */
static int do_spawn(spawn_fn *real, enum pt_call call, int search, int saved,
		    pid_t *pid, const char *path,
		    const posix_spawn_file_actions_t *fa,
		    const posix_spawnattr_t *attr, char *const argv[],
		    char *const envp[])
{
	if (pt.quiet)
		return spawn_quiet(real, pid, path, fa, attr, argv, envp);
	if (!EXEC_ROOM(envp))
		RETURN_PASSED(envp, real(pid, path, fa, attr, argv, passed));
	return spawn_traced(real, call, search, saved, pid, path, fa, attr,
			    argv, envp);
}

PT_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	int saved = errno;

	pt_resolve();
	return do_spawn(PT_REAL_LAZY(posix_spawn), PT_CALL_POSIX_SPAWN, 0, saved,
			pid, path, fa, attr, argv, envp);
}

PT_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	int saved = errno;

	pt_resolve();
	return do_spawn(PT_REAL_LAZY(posix_spawnp), PT_CALL_POSIX_SPAWNP, 1, saved,
			pid, file, fa, attr, argv, envp);
}
