/*
 * Inside the model (model/): the state one capture is built in, shared by
 * the files that build it.  Nothing outside model/ includes this; the
 * model's interface is model/model.h.
 *
 * The stages, one file each: memory and interning (intern.c), records to
 * compact events in a reader thread (read.c), kept by pid (events.c),
 * per-pid state machines over the sorted events (pids.c), parents and
 * inheritance, then the
 * executions (tree.c); model.c is the API around them.
 */
#ifndef PT_MODEL_BUILD_H
#define PT_MODEL_BUILD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/pidns.h"
#include "capture/read.h"

#define NONE UINT32_MAX

/*
 * How long after a traced child's first HELLO its parent's SPAWN may still
 * be recorded: posix_spawn returns when the child execs, and the parent
 * sends SPAWN only then, so a fast child can be gone before.  A wider
 * window risks taking a reused pid's old process for the new child.
 */
#define SPAWN_WINDOW_NS 2000000000ull

/*
 * Arrays from this size on live in mappings of their own (pt_model_init
 * fixes malloc's threshold there), which realloc grows with mremap: a
 * heap block that cannot grow in place is copied, and for the 100 MB
 * array of events that meant 200 MB at once.
 */
#define BIG_ARRAY (1u << 20)

/* ---- arena: many small allocations, freed at once ---- */

#define ARENA_CHUNK ((4u << 20) - sizeof(struct chunk))

struct chunk {
	struct chunk *next;
	size_t size;                    /* keeps the data 16-byte aligned */
};

struct arena {
	struct chunk *head;
	char *cur;
	size_t left;
};

#define GROW(arr, n, cap) ((arr) = pt_grow((arr), &(cap), (n), sizeof *(arr)))

/*
 * Open addressing over indices: slot holds index + 1 (0 is empty), the
 * keys live in the caller's arrays.  Kept at most half full.
 */
struct itab {
	uint32_t *slot;
	uint32_t mask;
	uint32_t n;
};

/* ---- interned strings and string vectors ---- */

/*
 * A command line's long arguments repeat the short ones: `sh -c "gcc -c
 * x.c -o x.o ..."` is unique to its compile, and its words are gcc's,
 * cc1's and as's arguments.  Such a string (an argument of at least
 * SPLIT_MIN bytes with a space) is kept as the ids of its space-separated
 * words: a fifth of the bytes on a compiler-heavy build.  Its len[] has
 * STR_SPLIT set and its str[] points to a uint32_t count and the ids.
 * Only argument vectors hold split strings (exe, cwd, the environment and
 * metadata are read as C strings); pt_exec_arg() joins them.
 */
#define STR_SPLIT 0x80000000u

struct strtab {
	struct arena mem;
	const char **str;               /* id -> string, or its words */
	uint32_t *len, *hash;           /* len: with STR_SPLIT */
	size_t n, cap;
	struct itab t;
	uint32_t *words;                /* scratch for splitting */
	size_t cwords;
};

/*
 * A vector of string ids.  An environment is an array of uint32_t: few
 * distinct ones, read by index.  A command line is packed, each id in
 * 7-bit groups, low first, the high bit saying another follows: a
 * million command lines hold 26 million arguments, and the first ids
 * handed out, a build's common flags and words, take one or two bytes.
 * len[] counts the ids, with VEC_PACKED set for a packed vector.
 */
#define VEC_PACKED 0x80000000u

struct vectab {
	struct arena mem;
	const void **vec;               /* id -> vector */
	uint32_t *len, *hash;
	size_t n, cap;
	struct itab t;
	uint32_t *ids;                  /* scratch for packing */
	size_t cids;
};

/* A string of a record, measured and hashed by the reading thread. */
struct pstr {
	const char *s;                  /* NUL-terminated; NULL when absent */
	uint32_t len, hash;             /* pt_hash_bytes(s, len) */
};

/* ---- the model's private part ---- */

struct capmeta {
	const char **kv;                /* key, value, key, value... */
	size_t n, cap;                  /* strings */
};

/*
 * An execution of a lean model (pt_model_set_lean), which keeps these
 * instead of struct pt_exec: half the size, the command line left in the
 * capture (argv_ref) and the strings as ids.  pt_model_exec() makes a
 * struct pt_exec of one.
 */
struct lexec {
	int64_t start_ns, end_ns;
	int64_t utime_us, stime_us, maxrss_kb;
	int32_t pid, ppid;
	uint32_t parent;                /* its index, or NONE */
	uint32_t argv_ref, exe, cwd, env;
	uint32_t capture;
	uint8_t type, flags;
	int16_t exit_code, signal, spawn_errno;
};

struct pt_model_priv {
	struct strtab str;
	struct pt_subs *subs;           /* events programs wrote (sub.c) */
	struct pt_files *files;         /* files executions accessed (files.c) */
	struct vectab vec;
	struct arena execs;             /* the struct pt_exec themselves */
	struct pt_exec **list;
	size_t nlist, caplist;          /* nlist: of lx, in a lean model */
	struct lexec *lx;               /* a lean model's executions */
	size_t caplx;
	struct capmeta *meta;
	size_t cap_meta;
	/* pt_exec_arg()'s arguments of one vector, split ones joined. */
};

/* ---- one capture being built ---- */

enum ev_type {
	E_HELLO, E_EXEC, E_EXEC_FAILED, E_SPAWN, E_FORK, E_REAP, E_EXIT, E_EOF,
};

enum ev_flag {
	EVF_TRUNC = 1,                  /* argv was cut by the library */
	EVF_UNBOUND = 2,                /* EOF of a connection without HELLO */
	EVF_FAILED = 4,                 /* SPAWN of a posix_spawn that failed */
	EVF_SEEN = 8,                   /* EXEC the collector saw done (ptrace) */
};

/* Dense pid indices fit in the event's 24-bit field. */
#define PID_LIMIT (1u << 24)

struct ev {                             /* millions of these: keep it small */
	uint64_t time;                  /* sender's CLOCK_MONOTONIC */
	uint32_t pid : 24;              /* dense index of the pid it is about */
	uint32_t type : 4;              /* enum ev_type */
	uint32_t flags : 4;             /* enum ev_flag */
	uint32_t other;                 /* raw pid: ppid, or the parent that
					 * sent FORK/SPAWN/REAP */
	uint32_t a, b;                  /* HELLO: hello_x, -; EXEC: argv, exec_x;
					 * SPAWN: argv, path; REAP: status, cpu3;
					 * EXIT: status, cpu3; EOF: conn, - */
	/* (EXIT's `other`: the connection's owner when the sender is not.) */
};

/*
 * The events of dense pids [i << EV_BUCKET_SHIFT, (i + 1) <<
 * EV_BUCKET_SHIFT) in file order (events.c).
 */
#define EV_BUCKET_SHIFT 10

struct evbucket {
	struct ev *ev;
	size_t n, cap;
};

struct hello_x {                        /* what a HELLO carries beyond ev */
	uint64_t start;
	uint32_t exe, cwd, argv, env, conn;
	uint32_t before;                /* cpu3 of CPU_BEFORE, or NONE */
	uint16_t kind, trunc;
};

struct exec_x {                         /* what an EXEC carries beyond ev */
	uint32_t path, cwd;
	uint32_t cpu;                   /* cpu3 of the exec'ing image's own
					 * CPU (PT_TAG_CPU), or NONE */
};

/*
 * The rusage of an EXIT or REAP, two million of them for a million
 * executions: 32 bits each (71 minutes of CPU), and when one does not
 * fit, ut is CPU_BIG and st the index of the whole in build.big.
 */
struct cpu3 {
	uint32_t ut, st, rss;
};

struct cpu_big {
	uint64_t ut, st, rss;
};

#define CPU_BIG UINT32_MAX

enum conn_kind {
	CK_NEW,                         /* no frame yet */
	CK_IMAGE = PT_HELLO_IMAGE,
	CK_FORK = PT_HELLO_FORK,
	CK_FOREIGN = PT_HELLO_FOREIGN,
	CK_AUX = PT_HELLO_AUX,
	CK_NOHELLO = 16,                /* first frame was not a HELLO */
	CK_DROPPED,                     /* the collector dropped it */
};

struct conn {
	uint64_t id;
	uint64_t connect_ns;
	uint32_t owner;                 /* raw pid */
	uint32_t img;                   /* image it belongs to, once known;
					 * while reading, in a free slot: the
					 * next free one */
	uint32_t hx;                    /* the HELLO it opened with, or NONE */
	uint32_t peer;                  /* SO_PEERCRED pid, 0 if none */
	/* A sender in another pid namespace than the collector's: that
	 * namespace, and the sender's own pid there (pidns.h). */
	uint32_t ns, nspid;
	uint8_t kind;                   /* enum conn_kind */
	uint8_t owner_exited;           /* its EOF tells nothing more */
	uint8_t in_ns;
};

enum img_kind {
	IK_EXEC,                        /* a program image */
	IK_FORK,                        /* a fork child before (or without) exec */
	IK_SPAWN,                       /* placeholder between SPAWN and HELLO */
};

enum img_flag {
	IF_ENDED = 1 << 0,
	IF_EXITED = 1 << 1,             /* EXIT seen */
	IF_FOLDED = 1 << 2,             /* no execution of its own */
	IF_UNTRACED = 1 << 3,
	IF_KILLED = 1 << 4,
	IF_END_UNKNOWN = 1 << 5,
	IF_TRUNC = 1 << 6,
	IF_REAP_END = 1 << 7,           /* end time from REAP or EOF, refinable */
	IF_RESOLVED = 1 << 8,           /* inherited fields filled in */
	IF_RESOLVING = 1 << 9,
	IF_NOCONN = 1 << 10,            /* HELLO came on an AUX connection */
	IF_CONN = 1 << 11,              /* has a connection of its own */
	IF_HIDDEN = 1 << 12,            /* `proftrace stop`: not shown */
	IF_SPAWN_FAILED = 1 << 13,      /* posix_spawn's child that failed */
};

struct img {
	uint64_t start, end;
	uint32_t cpu;                   /* rusage: index in build.cpu, or NONE */
	uint32_t fork_cpu;              /* CPU of the fork phase folded into
					 * it, for its parent: cpu3, or NONE */
	/* Until the images are resolved; then what emit() needs of their
	 * process, which goes away first (see there). */
	union { uint32_t proc; uint32_t pid; };
	union {
		uint32_t prev;          /* previous image of the same process */
		uint32_t ppid;
	};
	union {
		uint32_t pending;       /* EXEC or SPAWN event not yet resolved */
		uint32_t parent;        /* parent image, or NONE */
	};
	uint32_t exe, cwd, argv, env;   /* NONE: inherited, see resolve() */
	int16_t exit_code, signal;
	uint16_t flags;
	uint8_t kind;
};

struct proc {
	uint64_t birth;                 /* for finding the parent */
	uint32_t pid, ppid;
	uint32_t cur;                   /* current image */
	uint32_t parent;                /* parent image, once resolved */
	uint8_t has_birth;              /* FORK or SPAWN record seen */
	uint8_t reaped;
	uint8_t parent_done;
};

struct build {
	struct pt_model *m;
	struct pt_model_priv *p;
	uint32_t capture;

	struct evbucket *evb;           /* events.c */
	size_t nevb, cevb;
	struct ev *ev;                  /* pt_pids_run: the bucket being run */
	struct hello_x *hx;
	size_t nhx, chx;
	struct exec_x *xx;
	size_t nxx, cxx;
	struct cpu3 *cpu;
	size_t ncpu, ccpu;
	struct cpu_big *big;
	size_t nbig, cbig;

	/* While reading, the open connections, a slot freed at EOF for the
	 * next; then those that ended with an E_EOF event, which the
	 * events' a numbers (read.c). */
	struct conn *conns;
	size_t nconn, cconn;
	uint32_t conn_free;             /* first free slot, or NONE */
	struct conn *eofc;              /* ended with an E_EOF event */
	size_t neofc, ceofc;
	struct itab conn_t;             /* ids from CONN_DIRECT up */
	uint32_t *conn_ix;              /* id -> index + 1, below CONN_DIRECT */
	size_t nconn_ix;

	uint32_t *pid_raw;              /* dense index -> pid */
	size_t npid, cpid;
	struct itab pid_t;
	uint32_t *pid_img;              /* dense index -> first image; [npid] */

	struct img *img;
	size_t nimg, cimg;
	struct proc *proc;
	size_t nproc, cproc;

	struct anon_reap {              /* REAPs of child 0 (system, pclose) */
		uint32_t parent;
		int32_t status;
		uint64_t time;
	} *anon;
	size_t nanon, canon;

	struct spawn_err {              /* images of failed spawns (rare) */
		uint32_t img;
		int err;
	} *serr;
	size_t nserr, cserr;

	struct pt_pidns ns;             /* pids of other namespaces */

	struct ev dummy;                /* where events beyond PID_LIMIT go */
	int64_t offset;                 /* Unix epoch ns - monotonic ns */
	int have_offset;
	uint64_t last_ns;               /* latest time seen in the capture */
	uint32_t seq;                   /* records read so far */
};

/* ---- events by pid (events.c) ---- */

/* A new event about dense pid d, uninitialised; it may move until the
 * next call.  Exits on failure, as pt_xmalloc(). */
struct ev *pt_events_add(struct build *b, uint32_t d);

/* Unmap bucket i: the per-pid pass is done with it. */
void pt_events_free_bucket(struct build *b, size_t i);

void pt_events_free(struct build *b);

/* ---- events that programs wrote about themselves (sub.c) ---- */

/*
 * A TRACE frame of pid (as xpid() gave it) at monotonic time t: its
 * payload's file is parsed at once; its times are settled by
 * pt_sub_end_capture() and it is given to an execution by
 * pt_sub_attach().
 */
void pt_sub_add_file(struct build *b, uint32_t pid, uint64_t t,
		     const unsigned char *payload, size_t len);

/* The capture b has been read: its files' pids and times are final. */
void pt_sub_end_capture(struct build *b);

/* Every capture has been read and the executions sorted: give each
 * file's events to their executions. */
void pt_sub_attach(struct pt_model *m);

void pt_sub_free(struct pt_model_priv *p);

/* ---- files that executions accessed (files.c) ---- */

/* A FILES frame of pid at monotonic time t: its accesses, kept. */
void pt_files_add(struct build *b, uint32_t pid, uint64_t t,
		  const unsigned char *payload, size_t len);
/* The capture b has been read: its accesses' pids and times are final. */
void pt_files_end_capture(struct build *b);
/* Every capture has been read: give each access to its execution. */
void pt_files_attach(struct pt_model *m);
void pt_files_free(struct pt_model_priv *p);

/* hello_x.conn of a connection without EOF, once reading is done. */
#define CONN_NO_EOF (NONE - 1)

/* ---- reading, in a thread of its own ---- */

/*
 * Inflating and parsing a capture costs about as much CPU as building the
 * model from it, and the two need not wait for each other: a thread reads
 * events into batches and measures and hashes their strings (the part of
 * interning that needs no table), while the caller's thread builds.  On
 * a single CPU, or if the thread cannot be made, the same batches are
 * filled in the caller's thread between builds.
 */

/* One event as the reading thread hands it over. */
struct pev {
	struct pt_cap_record hdr;
	const unsigned char *data;      /* META, LOSS, FRAME of a TRACE:
					 * hdr.length bytes */
	struct pt_record rec;           /* FRAME; its argv and env are unused */
	struct pstr exe, cwd, path;
	const struct pstr *argv, *env;  /* rec.argc, rec.envc entries */
	uint32_t argv_hash, env_hash;   /* vec_hash of argv, env */
	/* HELLO's CPU_BEFORE (no rss), or EXEC's CPU, if have_before */
	uint64_t before_ut, before_st, before_rss;
	int have_before;
	size_t size;                    /* bytes from this event to the next */
};

void *pt_arena_alloc(struct arena *a, size_t n, size_t align);

void pt_arena_free(struct arena *a);

void pt_tree_build_free(struct build *b);

void pt_tree_emit(struct build *b);

/* What only reading and the per-pid pass need: gone before the output
 * is allocated, so that the two never add up. */
void pt_tree_free_events(struct build *b);

/* Grow *p (n used of *cap elements of size sz) to hold one more. */
void *pt_grow(void *p, size_t *cap, size_t n, size_t sz);

uint32_t pt_hash_u64(uint64_t k);

void pt_itab_free(struct itab *t);

/* Make room for one more entry; hashes re-derived by the callback. */
void pt_itab_reserve(struct itab *t, uint32_t (*hash)(const void *, uint32_t),
			 const void *ctx);

/*
 * Once all is read, a connection matters only for its EOF, which ends the
 * image that said HELLO on it: those that had one (a process killed, or
 * the collector stopped before it) were kept as they ended (read.c);
 * free the others, still open when the capture ended, before the per-pid
 * pass adds the images, so the two do not add up.  Most connections end
 * after their EXIT and have none.
 */
void pt_tree_keep_eof_conns(struct build *b);

void pt_note_time(struct build *b, uint64_t t);

/*
 * A cpu3 of these figures: its index in b->cpu, or NONE for values no
 * process can have (damage).
 */
uint32_t pt_cpu3_new(struct build *b, uint64_t ut, uint64_t st, uint64_t rss);

uint32_t pt_read_pid_find(const struct build *b, uint32_t pid);

/*
 * Read all of r into the build.  Returns the reader's last result (0 or
 * -1).
 */
int pt_read_capture(struct build *b, struct pt_reader *r);

/*
 * Once everything is read, the references to pids of other namespaces
 * that a connection taught become the collector's pids: events about
 * such a pid go with the events of that pid.
 */
void pt_resolve_ns(struct build *b);

void pt_pids_run(struct build *b);

uint32_t pt_str_intern(struct strtab *st, const char *s);

uint32_t pt_str_intern_h(struct strtab *st, const char *s, size_t len,
			     uint32_t h);

/*
 * The interned copy of s.  (Not st->str[str_intern(st, s)]: C leaves open
 * whether st->str is read before the call that may move it.)
 */
const char *pt_str_intern_ptr(struct strtab *st, const char *s, size_t len);

/* Hash of a vector's contents, from the hashes of its strings. */
uint32_t pt_vec_hash(const struct pstr *a, size_t n);

/*
 * Intern the vector a[0..n) whose vec_hash is h; argv: it is a command
 * line, whose strings may be kept split (an environment never is, and the
 * two kinds never share a vector).  Most vectors are seen before (the
 * environment of every process, the argv that SPAWN and then HELLO
 * carry): those are found by comparing contents, without touching the
 * string table once per element.
 */
uint32_t pt_vec_intern(struct vectab *vt, struct strtab *st,
			   const struct pstr *a, size_t n, uint32_t h, int argv);

/* Decode the id at p into *id; returns where the next one starts. */
const unsigned char *pt_vec_unpack(const unsigned char *p, uint32_t *id);

/*
 * realloc for arrays that may grow large.  Unlike the arenas, no
 * huge-page hint: growing a mapping that has huge pages with mremap
 * doubled its RSS here (the event array's last doubling took 100 MB more
 * at once).
 */
void *pt_xrealloc_big(void *p, size_t n);

#endif
