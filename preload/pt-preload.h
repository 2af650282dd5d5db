/*
 * Internals of libproftrace.so.
 *
 * Rules for everything in preload/ (design.md, pitfalls 2, 4, 9):
 *  - A hook may run in a vfork child or any other child that shares memory
 *    with its parent ("foreign" context: getpid() != pt.owner).  There it
 *    allocates nothing, takes no lock, uses no stdio and writes no global:
 *    it only reads pt and uses its own stack (one exception, PT_REAL_LAZY,
 *    says why it is safe).
 *  - Every hook returns exactly what the real call returned, with errno as
 *    the real call left it.
 *  - The library calls libc only through functions it does not hook, and
 *    the real versions of hooked ones only through pt_real.
 *  - Calls between files go one way: hooks -> init -> defer, mailbox ->
 *    conn -> encode -> envexec -> env -> state (doc/design.md, "Its
 *    files, and the direction of their calls").  The sections below
 *    follow that order from the bottom up.
 */
#ifndef PT_PRELOAD_H
#define PT_PRELOAD_H

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <wordexp.h>

#include "proftrace/wire.h"

#define PT_HIDDEN __attribute__((visibility("hidden")))
#define PT_EXPORT __attribute__((visibility("default")))

#define PT_DEFER_SLOTS 8        /* SPAWN and FORK frames held (defer.c) */
#define PT_DEFER_BYTES 1536     /* a larger frame goes at once */
#define PT_DEFER_SMALL 4        /* slots for small frames, in pt */
#define PT_DEFER_SMALL_BYTES 192        /* a FORK fits */
#define PT_MBOX_SLOTS 16        /* fork children's EXECs kept (mailbox.c) */
#define PT_MBOX_BYTES 4096      /* a slot with its state; a larger EXEC goes at once */

/*
 * The other ELF class's loader on this machine, if it has one: 32-bit
 * programs can run beside a 64-bit library (env.c, target.c).
 */
#if defined(__x86_64__)
#define PT_FOREIGN_LOADER "/lib/ld-linux.so.2"
#define PT_NATIVE_LOADER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__i386__)
#define PT_FOREIGN_LOADER "/lib64/ld-linux-x86-64.so.2"
#define PT_NATIVE_LOADER "/lib/ld-linux.so.2"
#endif
#define PT_FOREIGN_UNKNOWN (-1)  /* pt.foreign_missing not yet asked */

/* What an image sends its records to (pt.chan, pt_chan.kind). */
enum { PT_CHAN_NONE, PT_CHAN_LOG, PT_CHAN_SOCK };

/*
 * Where the frames of one call of ours go.  Its descriptor is opened at
 * the first write and closed by pt_chan_put, within the call.
 */
struct pt_chan {
	int kind;               /* PT_CHAN_*; NONE: nothing to send to */
	int fd;                 /* -1 until the first write */
	int spool;              /* fd is a spool file, not a socket */
	int direct;             /* open fd in this thread's table, even if
				   the process may have other threads */
	pid_t pid;              /* getpid() of the caller: taken once per */
	int owner;              /* hook, as it costs a system call; and */
				/* whether pid is pt.owner */
	int exec_left;          /* the EXEC went to the mailbox, not sent */
	int seized;             /* the collector traces the caller through
				   its exec (seize.c): let go if it fails */
	uint64_t stream;        /* the run log's stream these frames are on */
	uint32_t hello;         /* the HELLO a new connection starts with
				   (0: the caller's first frame is one) */
	uint64_t start_ns;      /* and the start it gives */
};

/* ---- the state, the real functions, the clocks (state.c) ---- */

struct pt_state {
	pid_t owner;            /* process this state belongs to */
	int ready;              /* constructor finished */
	int off;                /* no collector, no spool: record nothing */
	int quiet;              /* under seccomp: no system call of ours */
	uintptr_t clone_top;    /* stack handed to a clone(CLONE_VM) child */
	uint64_t quiet_stack_limit;     /* RLIMIT_STACK when it went quiet */
	uintptr_t stack_end;    /* top of the main thread's stack (stack.c) */
	uintptr_t stack_sure;   /* and how far down it is surely mapped */
	int chan;               /* PT_CHAN_*: the run log or the socket
				 * (doc/design.md, "The transport") */
	uint64_t log_stream;    /* the run log stream: the image's pid, or
				 * a fork child's own once it said HELLO */
	uint32_t log_pidns;     /* the collector's pid namespace */
	uint64_t log_dev, log_ino;      /* the run log's identity */
	int fork_pending;       /* fork child that has not said HELLO */
	pid_t lib_left_out;     /* the process whose last exec or spawn hook
				 * left the library out of LD_PRELOAD, as a
				 * sandbox hides it (envexec.c); its EXEC or
				 * SPAWN says so (PT_TAG_NOLIB) */
	uint32_t pidns;         /* pid namespace inode, for HELLO (conn.c) */
	int forked;             /* a fork child (until exec): no dlopen */
	uint64_t start_ns;      /* image start, or fork time */
	/* CLOCK_REALTIME read next to the image's start_ns: the HELLO's
	 * realtime_ns, so that the offset between the clocks it gives is
	 * not blurred by the connect in between. */
	uint64_t start_realtime_ns;
	uint64_t base_utime_us; /* RUSAGE_SELF at image start: it carries */
	uint64_t base_stime_us; /* across exec (pitfall 5) */
	int exit_status;
	int exit_how;           /* enum pt_exit_how, 0 = not known */
	int exit_sent;
	int at_exit;             /* pt_on_exit ends the image (init.c) */
	pid_t fork_parent;      /* a fork child: the owner that forked it */
	pid_t foreign_exit;     /* a copy of the process whose exit() hook
				 * sent its EXIT already */
	/*
	 * Strings pt_env_setup() sets once, as offsets into pool (0 is "",
	 * also before setup): kept together, they dirty one page of .bss in
	 * each process rather than one page each.  Read them with PT_STR().
	 */
	uint16_t socket_path;   /* sun_path, below 108 bytes */
	uint16_t spool_dir;     /* 0 if none */
	uint16_t spool_name;    /* the image's spool file, once it has one */
	uint16_t log_path;      /* the run log to open, 0 if none */
	/* What environment repair puts back ("NAME=value"), 0 if unset. */
	uint16_t env_preload;   /* LD_PRELOAD=<our entry> */
	uint16_t env_socket;
	uint16_t env_dir;
	uint16_t env_list;
	uint16_t env_trace;     /* PROFTRACE_TRACE_DIR=..., maybe a relay */
	uint16_t env_log;       /* PROFTRACE_LOG=PIDNS:DEV:INO:PATH */
	unsigned env_added;     /* PROFTRACE_ADDED's names, taken out of
				 * environ at load (env.c) */
	char **env_whole;       /* the initial array, what was taken out */
	char **env_view;        /* first, then environ as load left it */
	int env_own_preload;    /* the view's LD_PRELOAD is the user's part,
				 * in pool, not the initial entry */
	uint32_t env_at[8];     /* 1 + where pt_env_setup() found each
				 * variable in envp, 0: not there */
	size_t env_n;           /* the entries of envp */
	int trace_relay;        /* 1: the trace directory is a relay, sent
				 * at the end; 2: one this image made */
	uint16_t trace_known;   /* "TOOL=FILE" a known tool writes, or 0 */
	uint16_t preload_entry; /* our entry in LD_PRELOAD */
	uint16_t files_entry;   /* PROFTRACE_FILES=1: libptfiles.so's path,
				 * put before ours where repair adds ours */
	uint16_t lib_path;      /* the file it names here ($LIB expanded) */
	/* Programs of the other ELF class (32-bit ones under a 64-bit
	 * library) can run here, and our entry names no build of the
	 * library for them: ld.so would print "wrong ELF class" or "cannot
	 * be preloaded" into theirs (env.c, target.c).  PT_FOREIGN_UNKNOWN
	 * until an exec asks, when our entry is a path. */
	int foreign_missing;
	size_t pool_used;
	/* defer.c's slots, here because every process reads them (at exec,
	 * exit and fork) and this page is touched anyway; the frames they
	 * hold live apart, in pages touched only by a process that holds. */
	int defer_state[PT_DEFER_SMALL + PT_DEFER_SLOTS];
	pid_t defer_child[PT_DEFER_SMALL + PT_DEFER_SLOTS];
	uint32_t defer_len[PT_DEFER_SMALL + PT_DEFER_SLOTS];
	int mbox_slot;          /* fork child: 1 + the slot its EXEC goes to */
	/* The mailbox (mailbox.c), here rather than in statics of its own,
	 * which sat on a page of .bss that every image faulted in for them
	 * alone, and every parent again, copy-on-write, at each fork. */
	void *mbox;             /* the page shared with the fork children */
	int mbox_failed;        /* its mmap was refused: do without */
	pid_t mbox_user;        /* the process that reserved a slot last */
	int mbox_hi;            /* 1 + the highest slot it reserved */
	uint32_t env_initials[8];       /* first letters of recorded names */
	/* target.c's absolute paths seen to load the library (hashes, 0:
	 * empty), here rather than in statics of their own: a fork child
	 * that execs reads them, and a page of their own cost it a fault. */
	uintptr_t target_seen[16];
	unsigned target_seen_next;
	/* The small frames defer.c holds (a fork's FORK), on this page: a
	 * parent writes it after every fork anyway, and a page of their own
	 * was one more copy-on-write fault each time. */
	unsigned char defer_small[PT_DEFER_SMALL][PT_DEFER_SMALL_BYTES];
	char pool[5 * PATH_MAX];
};

#define PT_STR(field) (pt.pool + pt.field)
#define PT_SUN_PATH_MAX 108      /* sizeof sockaddr_un.sun_path */

extern struct pt_state pt PT_HIDDEN;

/*
 * The real functions behind the hooks (hooks.def): pt_real.NAME for each
 * hook whose real function is looked up, EAGER ones by the constructor,
 * LAZY ones on first use.
 */
#define PT_HOOK_FIELD_EAGER(field, ret, params, attrs) \
	ret (*field) params attrs;
#define PT_HOOK_FIELD_LAZY(field, ret, params, attrs) \
	ret (*field) params attrs;
#define PT_HOOK_FIELD_NONE(field, ret, params, attrs)
#define PT_HOOK_AS(sym, field, how, ret, params, attrs) \
	PT_HOOK_FIELD_##how(field, ret, params, attrs)
#define PT_HOOK(sym, how, ret, params, attrs) \
	PT_HOOK_AS(sym, sym, how, ret, params, attrs)

struct pt_real {
#include "hooks.def"
};
#undef PT_HOOK
#undef PT_HOOK_AS

extern struct pt_real pt_real PT_HIDDEN;

/*
 * Resolve the part of pt_real that a vfork child may need (idempotent; the
 * constructor calls it first).
 */
PT_HIDDEN void pt_resolve(void);

/*
 * The real function `name`, looked up on first use, for the hooks a vfork
 * child has no business calling (spawn, fork, wait...).  Should one do it
 * all the same, this is the one write a foreign context makes: it stores
 * the pointer the owner would; dlsym of a symbol that exists does not
 * allocate; and the loader's lock it takes is not held by the thread that
 * vforked, which is suspended outside every loader call.
 */
#define PT_REAL_LAZY(name)                                                   \
	(__atomic_load_n(&pt_real.name, __ATOMIC_RELAXED) ?                  \
	 __atomic_load_n(&pt_real.name, __ATOMIC_RELAXED) :                  \
	 pt_real_lookup(&pt_real.name, #name))

#define pt_real_lookup(slot, sym)                                            \
	__extension__({                                                      \
		__typeof__(*(slot)) f_ =                                     \
			(__typeof__(*(slot)))dlsym(RTLD_NEXT, sym);          \
		__atomic_store_n((slot), f_, __ATOMIC_RELAXED);              \
		f_;                                                          \
	})

/* Is this the process that owns pt (not a vfork/clone child)? */
PT_HIDDEN int pt_is_owner(void);

/* CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds. */
PT_HIDDEN uint64_t pt_now_ns(void);
PT_HIDDEN uint64_t pt_realtime_ns(void);

/* ---- the environment an exec hands on (envexec.c) ---- */

/*
 * What an exec passed through (no room on its stack for repair) hands
 * on: when envp is the program's view of the initial environment that
 * pt_env_hide() left (environ as it was after load), the whole array,
 * with the entries taken out before it, no copy.  Any other envp, once
 * something was taken out at load, lacks them: they are added, in buf
 * (buf_len bytes, pt_envexec_passed_need(envp), on the caller's stack)
 * when given, else, in the process that owns the library's state (not a
 * vfork or clone(CLONE_VM) child), in pages mapped for it, into m
 * (pt_envexec_unmap() after the call); elsewhere, or if the mapping
 * fails, envp goes as it is.  errno preserved.
 */
struct pt_envexec_map {
	void *base;
	size_t len;
};
PT_HIDDEN char *const *pt_envexec_passed(char *const *envp, char *buf,
					 size_t buf_len,
					 struct pt_envexec_map *m);
/* Bytes pt_envexec_passed() builds its copy of envp in; 0 if none. */
PT_HIDDEN size_t pt_envexec_passed_need(char *const *envp);
/* Stack pt_envexec_passed() takes beyond its buffer, and the call after */
#define PT_PASS_STACK 2048u
/* Unmap what pt_envexec_passed() mapped into m, if anything; errno kept. */
PT_HIDDEN void pt_envexec_unmap(struct pt_envexec_map *m);

/* Number of entries in envp (NULL counts as empty). */
PT_HIDDEN size_t pt_envexec_count(char *const *envp);

/*
 * Return envp itself when it already keeps children traced, else a
 * repaired copy built in out[] (room for n + PT_ENV_EXTRA pointers) and
 * scratch, ending with PROFTRACE_ADDED, which names what was added (an
 * older one in envp is left out).  When this process cannot read the library (after chroot, a
 * change of user, a sandbox's mounts), the copy instead leaves
 * libproftrace out of LD_PRELOAD, so that ld.so in the image to come
 * has nothing to complain about; so it does when the image is file (see
 * pt_target_foreign; NULL: not known) of the other ELF class and no
 * build of the library for it is installed.  Allocation-free, for vfork
 * children.
 */
/* Entries pt_env_hide() takes out at most: the marker and the six
 * variables it may name. */
#define PT_ENV_HIDDEN_MAX 7
/* What repair may add (LD_PRELOAD, the five PROFTRACE_*, the marker),
 * and what it may put back of the entries taken out at load. */
#define PT_ENV_EXTRA (7 + PT_ENV_HIDDEN_MAX)
#define PT_ENV_MAX   16384      /* larger environments are passed as they are */
PT_HIDDEN char *const *pt_envexec_repair(char *const *envp, size_t n,
					 char **out, char *scratch,
					 size_t scratch_len, const char *file,
					 int search);

/*
 * Under seccomp, where the library makes no system call and the image to
 * come must not load it: envp as it would be untraced, without the
 * library's entry in LD_PRELOAD (nor LD_PRELOAD, if nothing else is
 * left) and without PROFTRACE_SOCKET, PROFTRACE_DIR, PROFTRACE_ENV,
 * PROFTRACE_TRACE_DIR, PROFTRACE_LOG and PROFTRACE_ADDED.
 * Built in out[] (room for n + 1 pointers) and scratch (room for
 * pt_envexec_preload_size() bytes); envp itself if it has none of them.
 */
PT_HIDDEN char *const *pt_envexec_untraced(char *const *envp, size_t n,
					   char **out, char *scratch,
					   size_t scratch_len);
/* Bytes of envp's LD_PRELOAD entry with its NUL (1 if it has none). */
PT_HIDDEN size_t pt_envexec_preload_size(char *const *envp, size_t n);

/* ---- the environment as read at load (env.c) ---- */

/* Capture at load time what repair will need to put back. */
PT_HIDDEN void pt_env_setup(char *const *envp);

/*
 * Take out of `environ` what PROFTRACE_ADDED says proftrace added (and the
 * marker itself), kept by pt_env_setup() for the exec hooks to put back.
 * Constructor only: it rearranges the initial array in place.
 */
PT_HIDDEN void pt_env_hide(char **envp);

/* Does HELLO record this NAME=value entry? */
PT_HIDDEN int pt_env_recorded(const char *entry);

/* "NAME=value" added to the library's pool (offset for PT_STR), or 0. */
PT_HIDDEN uint16_t pt_env_pool_entry(const char *name, const char *val);
/* A copy of s (below PATH_MAX) in pt's pool: its offset, 0 if no room. */
PT_HIDDEN uint16_t pt_env_pool_string(const char *s);
/*
 * Take log, a value of PROFTRACE_LOG ("PIDNS:DEV:INO:PATH"), as the run
 * log the exec hooks give children.  0, or -1 if it does not parse.
 * Owner context.
 */
PT_HIDDEN int pt_env_take_log(const char *log);

/* ---- trace files written inside a sandbox (trace.c) ---- */

/*
 * Constructor, after the connection: can this image write into
 * $PROFTRACE_TRACE_DIR, where the collector reads?  If not (a sandbox's
 * read-only or private tree), give it a relay directory it can write,
 * whose files it sends at its end.  envp is the process's environment.
 */
PT_HIDDEN void pt_trace_setup(char **envp);

/*
 * Constructor: if argv is a known tool's (clang -ftime-trace, coqc
 * -profile, dune --trace-file), note the file it will write, so that
 * pt_trace_send() sends it (tracetools.c).
 */
PT_HIDDEN void pt_known_setup(char *const *argv);

/* Owner, at its end: send the known tool's file, and the relay
 * directory's files of this pid (removing these), as TRACE records
 * through ch. */
PT_HIDDEN void pt_trace_send(struct pt_chan *ch);

/* ---- records (encode.c) ---- */

/* What one record says; the encoder lays it out as wire.h describes. */
struct pt_body {
	uint8_t type;                   /* enum pt_rec_type */
	unsigned char fixed[40];        /* fixed part, already little-endian */
	size_t fixed_len;
	const char *exe, *path, *cwd;   /* optional tail items */
	const char *cpu_before;         /* HELLO: PT_TAG_CPU_BEFORE */
	const char *err;                /* SPAWN of child 0: PT_TAG_ERRNO */
	int want_cwd;                   /* no cwd: getcwd() into the frame */
	char *const *argv;              /* optional, NULL-terminated */
	char *const *envp;              /* HELLO: filtered through the allowlist */
	const struct pt_item *items;    /* more tail items, in order */
	size_t nitems;
};

/* A tail item of n bytes at s (a NUL is added on the wire). */
struct pt_item {
	unsigned tag;                   /* enum pt_tag */
	const char *s;
	size_t n;
};

/*
 * Lay out one record, header included (pid ch->pid, origin from ch->owner,
 * time t), at out (cap bytes).  Returns its length, or 0 if it does not
 * fit.  errno is preserved.
 */
PT_HIDDEN size_t pt_encode_record(const struct pt_chan *ch,
				  const struct pt_body *b, uint64_t t,
				  unsigned char *out, size_t cap);

/*
 * Bytes of b's frame after the header.  b->want_cwd is not honoured: a
 * frame too large for pt_encode_record's buffer puts its working directory
 * in b->cwd first, so that measuring and laying out see the same one.
 */
PT_HIDDEN size_t pt_encode_body_size(const struct pt_body *b);

/*
 * Owner context (it allocates, and may dlopen zlib): the whole frame of b,
 * raw bytes after the header as measured, in one malloc'd piece, deflated
 * if that makes it smaller.  Returns it, its length in *len; or NULL.
 */
PT_HIDDEN unsigned char *pt_encode_alloc(const struct pt_chan *ch,
					 const struct pt_body *b, size_t raw,
					 uint64_t t, size_t *len);

/*
 * Any context: lay out the frame of b (raw bytes after the header) through
 * buf (cap bytes), handing each full buffer, and the last part, to
 * sink(arg, ...), which returns 0 or -1.  Returns 0, or -1 if sink failed.
 */
typedef int pt_encode_sink(void *arg, const void *p, size_t n);
PT_HIDDEN int pt_encode_stream(const struct pt_chan *ch,
			       const struct pt_body *b, size_t raw,
			       uint64_t t, unsigned char *buf, size_t cap,
			       pt_encode_sink *sink, void *arg);

/* ---- connections, and records across them (conn.c) ---- */

enum pt_chan_use {
	PT_USE_EXEC,            /* about to exec: a fork child's EXEC goes on
				   its parent's stream */
	PT_USE_EVENT,           /* anything else: a fork child says HELLO */
	PT_USE_HOLD,            /* an event whose frame is likely held */
};

/*
 * Pick the channel for an event of process self (0: call getpid() here).
 * Opens nothing (pt_chan_write does).  Returns 0, or -1 if there is
 * nothing to send to.
 */
PT_HIDDEN int pt_chan_get(struct pt_chan *ch, enum pt_chan_use use,
			  pid_t self);
/* Close what pt_chan_write opened on ch. */
PT_HIDDEN void pt_chan_put(struct pt_chan *ch);

/* Constructor: say the image's HELLO, on the run log or the socket. */
PT_HIDDEN void pt_conn_start_image(char *const *argv, char *const *envp);

/* Fork child, pt.owner set: it says HELLO at its first event that is not
 * an exec (pt_chan_get). */
PT_HIDDEN void pt_conn_after_fork(void);

/*
 * Write one message (whole frames) to ch: its descriptor is opened at
 * the first write, in a descriptor table of its own where another
 * thread could take its number (pt_alone_run).  0, or -1.
 */
PT_HIDDEN int pt_chan_write(struct pt_chan *ch, const void *buf, size_t len);

/*
 * Send one record with header pid ch->pid and time t through ch.
 * Small frames go as one message; a frame too large for one message goes
 * over a connection of its own, deflated only in an owner that is not a
 * fork child (dlopen there could wait for ever on a loader lock inherited
 * from another thread).  Returns 0,
 * or -1 if it could not be delivered.  errno is preserved.
 */
PT_HIDDEN int pt_send_record(struct pt_chan *ch, const struct pt_body *b,
			     uint64_t t);

/*
 * libptfiles.so's entry point (trace.c): send n items (BASE, TIMES,
 * FILE...) and the count of accesses dropped as FILES records of this
 * image.  0, or -1 if nothing could be sent.  errno preserved.  Not
 * exported: that library finds it after PT_FILES_MARKER (16 bytes, in
 * .rodata, aligned to 16), an int64 offset from that word to it.
 */
#define PT_FILES_MARKER "PTFILES-ENTRY-1:"
typedef int pt_files_entry_fn(const struct pt_item *items, size_t n,
			      uint64_t dropped);
PT_HIDDEN pt_files_entry_fn pt_files_entry;

/* ---- SPAWN and FORK frames held until the child is reaped (defer.c) ---- */

/*
 * Hold the SPAWN or FORK record b of child, for channel ch, stamped t.
 * Returns 0 if it is held, -1 if the caller must send it now (not the
 * owner's own connection, no free slot, or too big).
 */
PT_HIDDEN int pt_defer_hold(const struct pt_chan *ch, const struct pt_body *b,
			     pid_t child, uint64_t t);
/* Move the frame held for child to out (PT_DEFER_BYTES); its length, or 0
 * if none is held. */
PT_HIDDEN size_t pt_defer_take(pid_t child, unsigned char *out);
/* Is a frame held for child (by the owner: only it holds)?  1 or 0. */
PT_HIDDEN int pt_defer_holds(pid_t child);
/* Send every held frame through ch now (owner only; others: nothing). */
PT_HIDDEN void pt_defer_flush(struct pt_chan *ch);
/* Fork child: drop the parent's held frames (the parent sends them). */
PT_HIDDEN void pt_defer_forget(void);

/* ---- fork children's EXEC frames, sent by the parent (mailbox.c) ---- */

/*
 * Owner, before a fork: reserve a slot for the child's EXEC.  Returns the
 * slot, or -1 (none: the child will send its EXEC itself).
 */
PT_HIDDEN int pt_mbox_reserve(void);
/* Owner, after the fork: the slot's child, or its release if none. */
PT_HIDDEN void pt_mbox_forked(int slot, pid_t child);
/*
 * Fork child, about to exec: leave the EXEC record b (stamped t) in its
 * slot.  Returns 0, or -1 if the caller must send it (no slot, closed,
 * too big).
 */
PT_HIDDEN int pt_mbox_put(int slot, const struct pt_chan *ch,
			  const struct pt_body *b, uint64_t t);
/* The exec failed: send the EXEC left in the slot now, before the
 * EXEC_FAILED.  Returns pt_chan_write()'s result, or -1 if none. */
PT_HIDDEN int pt_mbox_unput(int slot, struct pt_chan *ch);
/*
 * Owner: child was reaped.  Move the EXEC it left to out (PT_MBOX_BYTES)
 * and free its slot.  Returns the EXEC's length, or 0 if none.
 */
PT_HIDDEN size_t pt_mbox_take(const struct pt_chan *ch, pid_t child,
			      unsigned char *out);
/* Owner, before its exec or EXIT: send what is there, close the rest. */
PT_HIDDEN void pt_mbox_flush(struct pt_chan *ch);

/* ---- a descriptor table of its own (alone.c) ---- */

/*
 * May a call of ours open a descriptor in this thread's table, with no
 * other thread of the program there to close it and reuse its number?
 * Yes in a foreign context (a vfork or clone child has a table of its
 * own) and in a process without threads.
 */
PT_HIDDEN int pt_alone_safe(int owner);
/*
 * Run fn(arg) on a thread of its own that shares our memory but not the
 * descriptor table, and wait for it: what fn opens, writes and closes no
 * other thread can see or reach.  fn makes system calls only, on a stack
 * of PT_ALONE_STACK.  fn's result, or, where no such thread can be made,
 * fn(arg) run here.
 */
#define PT_ALONE_STACK 65536u
PT_HIDDEN int pt_alone_run(int (*fn)(void *), void *arg);
/*
 * fn(arg) here where pt_alone_safe(owner) says a descriptor of ours is
 * safe in this table, else through pt_alone_run.  owner -1: not known to
 * the caller; whether we are the owner (a system call) is asked only in
 * a process that may have threads.  fn's result.
 */
PT_HIDDEN int pt_alone_call(int owner, int (*fn)(void *), void *arg);
/*
 * The first cap bytes of the file path into buf, read where no other
 * thread's close can reach the descriptor (on a thread of its own, where
 * pt_alone_safe says so).  Bytes read, or -1 if the file cannot be
 * opened or read.
 */
PT_HIDDEN ssize_t pt_alone_pread(const char *path, void *buf, size_t cap);

/* ---- stack room (stack.c) ---- */

/*
 * The most stack an exec hook takes beyond its repaired environment's
 * pointers (doc/design.md, "The stack the hooks use"), and the exec hooks'
 * whole need for an environment of n entries.
 */
#define PT_EXEC_STACK 36864u
#define PT_EXEC_NEED(n) (PT_EXEC_STACK + ((n) + PT_ENV_EXTRA + 1) * sizeof(char *))

/*
 * The most stack any other hook's record takes (fork, clone, wait,
 * system, popen, pclose, the exit family, the destructor).
 */
#define PT_HOOK_STACK 28672u

/* Does this stack have need bytes left below the caller?  1 or 0; errno
 * preserved.  A clone() child's stack never does (its size is unknown).
 * No system call on the main thread's stack within the 128 KiB the kernel
 * mapped at exec; elsewhere one (up to 64 KiB).  Ask from a small frame,
 * then call the function with the large one: its frame is touched on
 * entry. */
PT_HIDDEN int pt_stack_fits(size_t need);
/* The main thread's stack begins at argv (the constructor). */
PT_HIDDEN void pt_stack_setup(char **argv);

/*
 * The same under seccomp, without a system call: on the main thread's
 * stack against the limit pt_stack_note_limit() read before the filter,
 * elsewhere (a thread's stack, unknown) only up to PT_QUIET_STACK.
 */
#define PT_QUIET_STACK 4096u
PT_HIDDEN int pt_stack_fits_quiet(size_t need);
/* Going quiet: remember RLIMIT_STACK for pt_stack_fits_quiet(). */
PT_HIDDEN void pt_stack_note_limit(void);

/* ---- the image about to be exec'd (target.c) ---- */

/*
 * What the image file (searched in PATH like execvp if search and it has
 * no slash) will be: PT_TARGET_LOADS, it loads the library and reports
 * itself; PT_TARGET_TRACE, it will not or is Go (it bypasses libc), and
 * the collector may trace it (neither set-id nor with file
 * capabilities); 0, neither, or unknown.  errno preserved.
 */
enum { PT_TARGET_LOADS = 1, PT_TARGET_TRACE = 2 };
PT_HIDDEN int pt_target_kind(const char *file, int search);
/* The same, but an absolute path found to load the library before is
 * taken as still loading it, without a system call. */
PT_HIDDEN int pt_target_kind_seen(const char *file, int search);

/* ---- asking to be traced (seize.c) ---- */

/*
 * Ask the collector to trace the calling thread (with ptrace event
 * stops) through the exec it is about to make (what: PT_SEIZE_EXEC) or
 * the posix_spawn it is about to call (PT_SEIZE_SPAWN), or to let it go
 * after that (PT_SEIZE_RELEASE), and wait a bounded while for the
 * answer; owner as the caller's pt_chan's.  1 if done, 0 if not (opted
 * out with PROFTRACE_PTRACE=0, no collector, refused, or no answer in
 * time).  errno preserved.
 */
PT_HIDDEN int pt_seize_ask(int owner, int what);

/*
 * Is file (searched in PATH if search and it has no '/') an ELF program
 * of the other class than this library's, or a `#!` script run by one,
 * when pt.foreign_missing says that matters?  0 when it cannot tell.
 * Fork and vfork children too: no allocation, bounded stack.
 */
PT_HIDDEN int pt_target_foreign(const char *file, int search);
/*
 * Find out now, once per process, what pt_target_foreign needs to know
 * of this system: a parent asks before fork, so that each of its fork
 * children does not ask again.  errno preserved.
 */
PT_HIDDEN void pt_target_ask_loader(void);

/* ---- the image's start and end (init.c) ---- */

/*
 * Send an EXIT record now (for _exit and friends, and the destructor) for
 * process self (0: find out); none without room on this stack.
 */
PT_HIDDEN void pt_send_exit(int status, int how, pid_t self);

/*
 * Fork child of the owner: take the state over as a new process, started
 * at fork_ns, and forget what the parent holds (the parent sends it).
 */
PT_HIDDEN void pt_init_after_fork(uint64_t fork_ns);

/*
 * The exec hooks, for syscall(SYS_execve, ...) and syscall(SYS_execveat,
 * ...), with syscall()'s arguments (exec.c): -1 with errno, on failure.
 */
PT_HIDDEN long pt_syscall_execve(long nr, const char *path,
				 char *const argv[], char *const envp[]);
PT_HIDDEN long pt_syscall_execveat(long nr, long dirfd, const char *pathname,
				   char *const argv[], char *const envp[],
				   long flags);

#endif
