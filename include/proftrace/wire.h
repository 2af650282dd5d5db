/*
 * proftrace record format: the frames that libproftrace.so sends to the
 * collector, and that the collector stores unchanged (inflated) in a capture.
 *
 * Shared by the preload library (which only encodes) and the collector and
 * converters (which only decode).  doc/format.md is the specification; keep
 * the two in step.  Bump PT_WIRE_VERSION whenever the meaning or layout of an
 * existing field changes; new record types and new tail tags do not need a
 * bump, because decoders skip what they do not know.
 *
 * Every multi-byte field is little-endian and every structure below has
 * fixed width and no implicit padding, so a capture written on one machine
 * reads on another.  Decoders must copy fields out with memcpy: nothing in a
 * frame is aligned.
 *
 * A frame is a header followed by `length` payload bytes.  A connection is a
 * byte stream of frames (SOCK_SEQPACKET messages are concatenated): a message
 * may hold several whole frames, and a frame larger than one message is sent
 * in consecutive messages on a connection of its own (a HELLO of kind AUX),
 * so fragments of two frames never interleave.
 *
 * The payload of each record is a fixed part (the struct named below)
 * followed by a tail of items: one tag byte (enum pt_tag) and a
 * NUL-terminated string.  Strings are bytes, not necessarily UTF-8.
 */
#ifndef PROFTRACE_WIRE_H
#define PROFTRACE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PT_WIRE_MAGIC   0x52544650u     /* "PFTR" as bytes on the wire */
#define PT_WIRE_VERSION 1

/* Upper bounds a decoder enforces; a frame beyond them is malformed. */
#define PT_FRAME_MAX    (64u << 20)     /* payload bytes, raw or deflated */

/* Largest single SOCK_SEQPACKET message the library sends. */
#define PT_MSG_MAX      (32u << 10)

/* Bytes of struct pt_frame_header, on the wire and in memory. */
#define PT_FRAME_HDR 32u

enum pt_frame_flag {
	PT_FRAME_DEFLATED = 1u << 0,    /* payload is a zlib stream */
};

struct pt_frame_header {                /* 32 bytes */
	uint32_t magic;                 /* PT_WIRE_MAGIC */
	uint8_t  version;               /* PT_WIRE_VERSION */
	uint8_t  type;                  /* enum pt_rec_type */
	uint16_t flags;                 /* enum pt_frame_flag */
	uint32_t pid;                   /* getpid() of the sender */
	uint32_t length;                /* payload bytes that follow */
	uint32_t raw_length;            /* payload bytes once inflated */
	uint32_t origin;                /* 0, or for a sender that runs in a copy
					 * of another process's library state (a
					 * vfork, clone or glibc-internal fork
					 * child): that process's pid */
	uint64_t time_ns;               /* CLOCK_MONOTONIC when the event happened */
};

enum pt_rec_type {
	PT_REC_HELLO       = 1,
	PT_REC_EXEC        = 2,
	PT_REC_EXEC_FAILED = 3,
	PT_REC_SPAWN       = 4,
	PT_REC_FORK        = 5,
	PT_REC_REAP        = 6,
	PT_REC_EXIT        = 7,
	PT_REC_STOP        = 8,         /* control: `proftrace stop` */
	PT_REC_TRACE       = 9,         /* a trace file a program wrote */
	PT_REC_FILES       = 10,        /* files an image read and wrote */
	PT_REC_SEIZE       = 11,        /* control: trace me (see below) */
	PT_REC_TYPE_MAX
};

/*
 * SEIZE: a header alone, on a connection of its own, whose pid is a
 * thread of the peer (SO_PEERCRED) and whose origin says what it asks
 * (enum pt_seize_what): to be traced through the exec it is about to
 * make of a program the library cannot enter, or through the
 * posix_spawn it is about to call of one (the kernel then traces the
 * child from its clone), or, that call returned or that exec failed, to
 * be let go
 * (doc/design.md, "What the collector traces").  The collector answers
 * one message: PT_SEIZE_YES once it traces that thread (or will let it
 * go), PT_SEIZE_NO if it will not, or PT_SEIZE_PTRACER and its pid (4
 * bytes, little-endian) when the kernel refused it as no ancestor: the
 * sender names it with prctl(PR_SET_PTRACER) and sends SEIZE again.
 * PT_SEIZE_HIDDEN: the thread is about to chroot into a root where no
 * image can load the library or reach the collector: trace its process
 * from now on, what it execs and all it starts, as a static program's.
 */
enum pt_seize_what {
	PT_SEIZE_EXEC = 0,
	PT_SEIZE_SPAWN = 1,
	PT_SEIZE_RELEASE = 2,
	PT_SEIZE_HIDDEN = 3,
};

enum {
	PT_SEIZE_YES = 'S',
	PT_SEIZE_NO = 'N',
	PT_SEIZE_PTRACER = 'Y',
};

/* Tail item tags. */
enum pt_tag {
	PT_TAG_EXE  = 1,                /* executable path (AT_EXECFN for HELLO,
					 * /proc/self/exe if that is /dev/fd/) */
	PT_TAG_ARG  = 2,                /* one argv element, in order */
	PT_TAG_CWD  = 3,                /* working directory */
	PT_TAG_ENV  = 4,                /* NAME=value of an allowlisted variable */
	PT_TAG_PATH = 5,                /* path or file name given to exec/spawn */
	PT_TAG_ARGV_TRUNCATED = 6,      /* argv was cut; value: original argc */
	PT_TAG_CPU_BEFORE = 7,          /* HELLO IMAGE: "UTIME_US STIME_US", the
					 * process's CPU before this image (its
					 * fork phase, earlier images) */
	PT_TAG_ERRNO = 8,               /* SPAWN of child 0: the error, decimal,
					 * that the failed posix_spawn returned */
	PT_TAG_TRACE_FROM = 9,          /* TRACE: how the file was found: "dir"
					 * ($PROFTRACE_TRACE_DIR), "clang",
					 * "rocq", "dune" */
	PT_TAG_TRACE_SIZE = 10,         /* TRACE: the file's size, decimal */
	PT_TAG_TRACE_NOTE = 11,         /* TRACE: why it was refused or cut */
	PT_TAG_TRACE_JSON = 12,         /* TRACE: the file's bytes (up to the
					 * cap, or its first NUL) */
	PT_TAG_CPU = 13,                /* EXEC of an image (not of a fork
					 * phase): "UTIME_US STIME_US MAXRSS_KB",
					 * the image's own CPU up to its exec
					 * and the process's peak RSS so far,
					 * as EXIT would have said them */
	PT_TAG_NOLIB = 14,              /* EXEC, SPAWN: "1": the hook left the
					 * library out of the new image's
					 * LD_PRELOAD (a sandbox hides it), so
					 * the collector watches it */
	PT_TAG_FILE = 15,               /* FILES: "K PATH", one access */
	PT_TAG_FILES_DROPPED = 16,      /* FILES: accesses not kept, decimal */
	PT_TAG_FILES_BASE = 17,         /* FILES: the FILE items' time 0 */
	PT_TAG_FILES_TIMES = 18,        /* FILES: the FILE items' times */
	PT_TAG_FILES_WAIT = 19,         /* FILES: the process's run-queue wait
					 * so far, ms, decimal (below) */
};

/*
 * HELLO: first frame of every connection.  Followed by EXE, ARG..., CWD,
 * ENV... (IMAGE); CWD (FORK, FOREIGN); nothing (AUX).
 */
enum pt_hello_kind {
	PT_HELLO_IMAGE   = 1,  /* a program image started (library constructor) */
	PT_HELLO_FORK    = 2,  /* a fork()ed child that does more than exec */
	PT_HELLO_FOREIGN = 3,  /* child not made by our fork hook (vfork, clone) */
	PT_HELLO_AUX     = 4,  /* extra connection of a known process for one
				* large frame; its EOF means nothing */
};

struct pt_rec_hello {                   /* 32 bytes */
	uint32_t ppid;
	uint32_t uid;                   /* 0: the collector takes SO_PEERCRED */
	uint32_t kind;                  /* enum pt_hello_kind */
	uint32_t pidns;                 /* inode of the sender's pid namespace
					 * (/proc/self/ns/pid), 0 if unknown:
					 * pids in records are in that one */
	uint64_t realtime_ns;           /* CLOCK_REALTIME at time_ns */
	uint64_t start_ns;              /* CLOCK_MONOTONIC when the image or the
					 * forked child began (<= header time) */
};

/* Which entry point an EXEC, EXEC_FAILED, SPAWN or FORK came through. */
enum pt_call {
	PT_CALL_EXECVE = 1, PT_CALL_EXECV, PT_CALL_EXECVP, PT_CALL_EXECVPE,
	PT_CALL_EXECL, PT_CALL_EXECLP, PT_CALL_EXECLE, PT_CALL_FEXECVE,
	PT_CALL_EXECVEAT, PT_CALL_POSIX_SPAWN, PT_CALL_POSIX_SPAWNP,
	PT_CALL_SYSTEM, PT_CALL_POPEN, PT_CALL_FORK, PT_CALL_VFORK,
	PT_CALL__FORK, PT_CALL_CLONE,
	PT_CALL_SEEN,                   /* no call seen: the collector found the
					 * child in /proc (collector/collect/watch.h)
					 * or traced it (collect/ptrace.h) */
	PT_CALL_MAX
};

/*
 * EXEC: the sender is about to replace its image.  Followed by PATH, ARG...,
 * CWD, and CPU when the sender is an image of its own (the EXIT it will
 * never send).  If the exec succeeds, the sender's connection reaches EOF with no
 * EXIT and, when the new program loads the library, the same pid says HELLO.
 */
struct pt_rec_exec {                    /* 8 bytes */
	uint32_t ppid;
	uint32_t call;                  /* enum pt_call */
};

/* EXEC_FAILED: the exec announced by the previous EXEC returned. */
struct pt_rec_exec_failed {             /* 8 bytes */
	uint32_t error;                 /* errno */
	uint32_t call;
};

/* SPAWN: posix_spawn{,p} created child_pid.  Followed by PATH, ARG... */
struct pt_rec_spawn {                   /* 8 bytes */
	uint32_t child_pid;
	uint32_t call;
};

/* FORK: the parent side of fork()/_Fork() that returned child_pid. */
struct pt_rec_fork {                    /* 8 bytes */
	uint32_t child_pid;
	uint32_t call;
};

/* REAP: a wait-family call collected child_pid. */
struct pt_rec_reap {                    /* 40 bytes */
	uint32_t child_pid;
	int32_t  wait_status;           /* as wait(2) encodes it; -1: unknown */
	uint32_t have_rusage;           /* 1: the three fields below are valid */
	uint32_t flags;                 /* enum pt_reap_flag; 0 from the library */
	uint64_t utime_us;              /* child's user CPU */
	uint64_t stime_us;              /* child's system CPU */
	uint64_t maxrss_kb;
};

enum pt_reap_flag {
	PT_REAP_SEEN = 1u << 0,         /* not a wait: the collector saw the end
					 * (a pidfd, /proc), not the parent */
	PT_REAP_NO_RSS = 1u << 1,       /* maxrss_kb is not known (0) */
};

enum pt_exit_how {
	PT_EXIT_EXIT = 1,               /* exit() */
	PT_EXIT_RETURN,                 /* return from main */
	PT_EXIT__EXIT,                  /* _exit() / _Exit() */
	PT_EXIT_QUICK,                  /* quick_exit() */
	PT_EXIT_UNKNOWN,                /* destructor ran, status not seen */
};

/* EXIT: the image ends.  CPU is this image's own, not the process's. */
struct pt_rec_exit {                    /* 32 bytes */
	int32_t  status;                /* exit status (low 8 bits matter) */
	uint32_t how;                   /* enum pt_exit_how */
	uint64_t utime_us;
	uint64_t stime_us;
	uint64_t maxrss_kb;             /* peak RSS of the process so far */
};

/*
 * TRACE: a file of Chrome Trace Event Format JSON that the program with
 * the header's pid wrote (into $PROFTRACE_TRACE_DIR, or where a known tool
 * writes its own), taken into the capture when that program ended.  No
 * fixed part, so that decoders that do not know the type skip it whole:
 * FROM, PATH (the file as found), SIZE, then NOTE when the file was
 * refused or cut, and JSON unless it was refused.  Sent by the collector,
 * on its own connection (the header's pid is then the collector's pid of
 * the writer), or by the library at its end when the process wrote where
 * the collector cannot read (a sandbox).
 */
#define PT_TRACE_FILE_MAX  (16u << 20)  /* bytes of one file kept; beyond,
					 * the file is cut there */
#define PT_TRACE_RUN_MAX   (256u << 20) /* bytes of trace files one run
					 * keeps; later files are refused */

/*
 * FILES: the files a program image accessed (`record --files`), sent by
 * libptfiles.so through the image's own channel before its EXIT or EXEC,
 * in one or more records.  No fixed part.  BASE: the CLOCK_MONOTONIC
 * nanoseconds, decimal, that times count from.  TIMES: one decimal
 * number of microseconds per FILE item of the record, in their order,
 * separated by spaces, each the difference from the previous item's
 * time (the first's from BASE).  Each FILE item is one (kind, path) the
 * image accessed, at that time first: K, one byte of enum pt_file_kind;
 * a space; PATH, absolute and lexically normal (no ".", "..", "//"),
 * bytes.  FILES_DROPPED, in the last record of a batch, counts accesses
 * the table could not keep.  FILES_WAIT, once in each batch: the time
 * the process's main thread spent runnable but waiting for a CPU since
 * its fork, in ms, rounded (/proc/self/schedstat's second field, which
 * an exec does not reset), read as the batch went out: at the image's
 * end or before its exec.  A batch with no access is sent for it alone
 * (WAIT, no BASE or TIMES), at the image's end only.  Absent: not read (below 1 ms since the last
 * reading sent) or not readable.
 */
enum pt_file_kind {
	PT_FILE_READ   = 'r',           /* opened for reading */
	PT_FILE_WRITE  = 'w',           /* opened for writing, created, truncated */
	PT_FILE_DELETE = 'd',           /* unlinked, or renamed away */
	PT_FILE_NEW    = 'n',           /* a name made: rename, link, symlink */
	PT_FILE_MKDIR  = 'k',           /* a directory made */
	PT_FILE_PROBE  = 'p',           /* stat (not of a directory), access */
	PT_FILE_DIRSTAT = 's',          /* stat of a directory */
	PT_FILE_MISSING = 'm',          /* open, stat, access or exec of a path
					 * that is not there (ENOENT, ENOTDIR),
					 * or a PATH search's miss; or its first
					 * directory not there either */
	/* (no 's' or 'm' in /usr, /lib*, /bin, /sbin, /etc, /proc, /sys,
	 * /dev: doc/format.md) */
};

/* Variables whose values HELLO always carries when they are set. */
#define PT_ENV_ALLOWLIST \
	"CI_PIPELINE_ID", "CI_JOB_ID", "CI_JOB_NAME", "GITHUB_RUN_ID", \
	"GITHUB_JOB", "OPAM_PACKAGE_NAME", "OPAM_PACKAGE_VERSION"

/* Environment the library reads. */
#define PT_ENV_SOCKET "PROFTRACE_SOCKET"  /* collector socket path */
#define PT_ENV_DIR    "PROFTRACE_DIR"     /* spool directory fallback */
#define PT_ENV_LIST   "PROFTRACE_ENV"     /* extra names to record, ':' or ',' separated */
/* Where traced programs may write trace files (record/daemon set it; the
 * library only passes it on, and relays it inside a sandbox). */
#define PT_ENV_TRACE_DIR "PROFTRACE_TRACE_DIR"
/* Which of these variables (and LD_PRELOAD) proftrace added to an
 * image's environment, ':'-separated names: `record` for its command,
 * the library's repair for a cleared or explicit environment.  The
 * library takes them and this marker out of `environ` at load and puts
 * them back into what the image passes on (doc/design.md, "Environment
 * repair"); for LD_PRELOAD, only its own last item. */
#define PT_ENV_ADDED "PROFTRACE_ADDED"
/* "1": a bare LD_PRELOAD of the library also records file accesses: it
 * puts libptfiles.so, found beside itself, into the LD_PRELOAD its
 * children get (doc/design.md, "File accesses"). */
#define PT_ENV_FILES "PROFTRACE_FILES"

/* The libraries' file names.  Each side knows the library's items of
 * LD_PRELOAD by the stem alone (a copy in the run directory is
 * STEM-HASH.so); the file-access library's stem does not begin with the
 * library's, so the one test never takes one for the other. */
#define PT_LIB_STEM   "libproftrace"
#define PT_FILES_STEM "libptfiles"
#define PT_LIB_NAME   PT_LIB_STEM ".so"
#define PT_FILES_NAME PT_FILES_STEM ".so"
#define PT_LEN(lit)   (sizeof(lit) - 1)   /* of a string literal, no NUL */

/* Default per-user directory: /tmp/proftrace-<uid>/, socket "socket". */
#define PT_RUNDIR_PREFIX "/tmp/proftrace-"
#define PT_SOCKET_NAME   "socket"

/*
 * The run log (doc/design.md, "The transport"): a memfd the collector
 * creates and each program image opens for appending, through
 * /proc/PID/fd/N of the collector, and keeps at fd 56 with close-on-exec,
 * as it would keep a connection.  Each record is one write(2) on the
 * O_APPEND descriptor: a struct pt_log_rec, `length` bytes of whole
 * frames of one stream, one or more (headers and payloads, as on a
 * connection), and PT_LOG_TRAILER bytes repeating the header's check.  Records follow each other without
 * padding.  Little-endian, like the frames, read with pt_wire_get*.
 *
 * A writer killed inside its write leaves a record cut short, directly
 * followed by the next writer's (bench/appendcheck): the reader knows a
 * record is whole only when the trailer at its claimed end repeats its
 * check, and finds the next one by the magic (collector/collect/log.c).
 *
 * `stream` stands for a connection (the pid of the image that writes
 * it): the frames of one stream are read as one connection's, in order;
 * a HELLO starts a stream anew.  A record flagged PT_LOG_LAST would end
 * it: defined for streams of one event, which no writer makes yet.
 */
#define PT_LOG_MAGIC    0x474c5450u     /* "PTLG" as bytes in the file */
#define PT_LOG_REC_HDR  24u             /* bytes of struct pt_log_rec */
#define PT_LOG_TRAILER  4u              /* the check again, after the frame */
#define PT_LOG_FRAME_MAX (PT_FRAME_HDR + PT_FRAME_MAX)
/* "PIDNS:DEV:INO:/proc/PID/fd/N": which run log, and where to open it */
#define PT_ENV_LOG "PROFTRACE_LOG"

enum pt_log_flag {
	PT_LOG_LAST = 1u << 0,          /* the stream ends with this record */
};

struct pt_log_rec {                     /* 24 bytes, unaligned in the file */
	uint32_t magic;                 /* PT_LOG_MAGIC */
	uint32_t length;                /* bytes of frames that follow */
	uint64_t stream;                /* which connection this stands for */
	uint32_t flags;                 /* enum pt_log_flag */
	uint32_t check;                 /* pt_log_check() of the above */
};

/* The check of a record's header, repeated after its frame. */
static inline uint32_t pt_log_check(uint32_t length, uint64_t stream,
				    uint32_t flags)
{
	uint64_t h = (uint64_t)length * 0x9e3779b97f4a7c15ull;

	h ^= stream + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= (uint64_t)flags * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (uint32_t)(h ^ (h >> 32)) ^ PT_LOG_MAGIC;
}

/*
 * The layout above is the format: every size and offset is asserted, so a
 * change to a struct that would move a field on the wire does not compile.
 * Encoders and decoders address fields with PT_OFF(), never with numbers.
 */
#define PT_OFF(type, field) offsetof(struct type, field)

#define PT_ASSERT_SIZE(type, n) \
	_Static_assert(sizeof(struct type) == (n), #type " is " #n " bytes")
#define PT_ASSERT_OFF(type, field, n) \
	_Static_assert(PT_OFF(type, field) == (n), #type "." #field " at " #n)

PT_ASSERT_SIZE(pt_frame_header, PT_FRAME_HDR);
PT_ASSERT_OFF(pt_frame_header, magic, 0);
PT_ASSERT_OFF(pt_frame_header, version, 4);
PT_ASSERT_OFF(pt_frame_header, type, 5);
PT_ASSERT_OFF(pt_frame_header, flags, 6);
PT_ASSERT_OFF(pt_frame_header, pid, 8);
PT_ASSERT_OFF(pt_frame_header, length, 12);
PT_ASSERT_OFF(pt_frame_header, raw_length, 16);
PT_ASSERT_OFF(pt_frame_header, origin, 20);
PT_ASSERT_OFF(pt_frame_header, time_ns, 24);

PT_ASSERT_SIZE(pt_rec_hello, 32);
PT_ASSERT_OFF(pt_rec_hello, ppid, 0);
PT_ASSERT_OFF(pt_rec_hello, uid, 4);
PT_ASSERT_OFF(pt_rec_hello, kind, 8);
PT_ASSERT_OFF(pt_rec_hello, pidns, 12);
PT_ASSERT_OFF(pt_rec_hello, realtime_ns, 16);
PT_ASSERT_OFF(pt_rec_hello, start_ns, 24);

PT_ASSERT_SIZE(pt_rec_exec, 8);
PT_ASSERT_OFF(pt_rec_exec, ppid, 0);
PT_ASSERT_OFF(pt_rec_exec, call, 4);

PT_ASSERT_SIZE(pt_rec_exec_failed, 8);
PT_ASSERT_OFF(pt_rec_exec_failed, error, 0);
PT_ASSERT_OFF(pt_rec_exec_failed, call, 4);

PT_ASSERT_SIZE(pt_rec_spawn, 8);
PT_ASSERT_OFF(pt_rec_spawn, child_pid, 0);
PT_ASSERT_OFF(pt_rec_spawn, call, 4);

PT_ASSERT_SIZE(pt_rec_fork, 8);
PT_ASSERT_OFF(pt_rec_fork, child_pid, 0);
PT_ASSERT_OFF(pt_rec_fork, call, 4);

/* EXEC, EXEC_FAILED, SPAWN and FORK have one shape: a u32, then call. */
_Static_assert(PT_OFF(pt_rec_exec, call) == PT_OFF(pt_rec_spawn, call) &&
	       PT_OFF(pt_rec_exec, call) == PT_OFF(pt_rec_fork, call) &&
	       PT_OFF(pt_rec_exec, call) == PT_OFF(pt_rec_exec_failed, call),
	       "the four exec-shaped records differ");

PT_ASSERT_SIZE(pt_rec_reap, 40);
PT_ASSERT_OFF(pt_rec_reap, child_pid, 0);
PT_ASSERT_OFF(pt_rec_reap, wait_status, 4);
PT_ASSERT_OFF(pt_rec_reap, have_rusage, 8);
PT_ASSERT_OFF(pt_rec_reap, flags, 12);
PT_ASSERT_OFF(pt_rec_reap, utime_us, 16);
PT_ASSERT_OFF(pt_rec_reap, stime_us, 24);
PT_ASSERT_OFF(pt_rec_reap, maxrss_kb, 32);

PT_ASSERT_SIZE(pt_rec_exit, 32);
PT_ASSERT_OFF(pt_rec_exit, status, 0);
PT_ASSERT_OFF(pt_rec_exit, how, 4);
PT_ASSERT_OFF(pt_rec_exit, utime_us, 8);
PT_ASSERT_OFF(pt_rec_exit, stime_us, 16);
PT_ASSERT_OFF(pt_rec_exit, maxrss_kb, 24);

/* Tags are numbers on the wire too. */
_Static_assert(PT_TAG_CPU_BEFORE == 7 && PT_TAG_CPU == 13 &&
	       PT_TAG_NOLIB == 14, "a tag moved");

PT_ASSERT_SIZE(pt_log_rec, PT_LOG_REC_HDR);
PT_ASSERT_OFF(pt_log_rec, magic, 0);
PT_ASSERT_OFF(pt_log_rec, length, 4);
PT_ASSERT_OFF(pt_log_rec, stream, 8);
PT_ASSERT_OFF(pt_log_rec, flags, 16);
PT_ASSERT_OFF(pt_log_rec, check, 20);

/*
 * Little-endian fields in unaligned bytes, by shifts: the same code on
 * both sides, needing no libc (the library calls none it could hook) and
 * correct on any host byte order.
 */
static inline uint16_t pt_wire_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t pt_wire_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t pt_wire_get64(const unsigned char *p)
{
	return (uint64_t)pt_wire_get32(p) | (uint64_t)pt_wire_get32(p + 4) << 32;
}

static inline void pt_wire_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void pt_wire_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void pt_wire_put64(unsigned char *p, uint64_t v)
{
	pt_wire_put32(p, (uint32_t)v);
	pt_wire_put32(p + 4, (uint32_t)(v >> 32));
}

/* The header's fields from p (PT_FRAME_HDR bytes); nothing is checked. */
static inline void pt_wire_get_header(const unsigned char *p,
				      struct pt_frame_header *h)
{
	h->magic = pt_wire_get32(p + PT_OFF(pt_frame_header, magic));
	h->version = p[PT_OFF(pt_frame_header, version)];
	h->type = p[PT_OFF(pt_frame_header, type)];
	h->flags = pt_wire_get16(p + PT_OFF(pt_frame_header, flags));
	h->pid = pt_wire_get32(p + PT_OFF(pt_frame_header, pid));
	h->length = pt_wire_get32(p + PT_OFF(pt_frame_header, length));
	h->raw_length = pt_wire_get32(p + PT_OFF(pt_frame_header, raw_length));
	h->origin = pt_wire_get32(p + PT_OFF(pt_frame_header, origin));
	h->time_ns = pt_wire_get64(p + PT_OFF(pt_frame_header, time_ns));
}

/* h laid out at p, PT_FRAME_HDR bytes. */
static inline void pt_wire_put_header(unsigned char *p,
				      const struct pt_frame_header *h)
{
	pt_wire_put32(p + PT_OFF(pt_frame_header, magic), h->magic);
	p[PT_OFF(pt_frame_header, version)] = h->version;
	p[PT_OFF(pt_frame_header, type)] = h->type;
	pt_wire_put16(p + PT_OFF(pt_frame_header, flags), h->flags);
	pt_wire_put32(p + PT_OFF(pt_frame_header, pid), h->pid);
	pt_wire_put32(p + PT_OFF(pt_frame_header, length), h->length);
	pt_wire_put32(p + PT_OFF(pt_frame_header, raw_length), h->raw_length);
	pt_wire_put32(p + PT_OFF(pt_frame_header, origin), h->origin);
	pt_wire_put64(p + PT_OFF(pt_frame_header, time_ns), h->time_ns);
}

/*
 * Walk a record's tail (decoders only: the library never reads one):
 * each call takes the item at *pos of tail[0..len)
 * and advances *pos past it.  Returns 1 with *tag and the string *s (its
 * length in *n, the NUL not counted), 0 at the end of the tail, -1 if the
 * item's string is not NUL-terminated inside the tail (a malformed frame).
 */
static inline int pt_wire_next_item(const unsigned char *tail, size_t len,
				    size_t *pos, unsigned *tag,
				    const char **s, size_t *n)
{
	size_t i = *pos;
	const unsigned char *nul;

	if (i >= len)
		return 0;
	nul = i + 1 < len ? memchr(tail + i + 1, 0, len - i - 1) : NULL;
	if (!nul)
		return -1;
	*tag = tail[i];
	*s = (const char *)tail + i + 1;
	*n = (size_t)(nul - tail) - i - 1;
	*pos = (size_t)(nul - tail) + 1;
	return 1;
}

#endif
