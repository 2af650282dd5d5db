/* Small helpers shared by the proftrace program's modules. */
#ifndef PT_UTIL_H
#define PT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Print "proftrace: MESSAGE\n" to stderr. */
void pt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on pt_warn prints nothing (record -q once COMMAND runs);
 * pt_die still prints. */
void pt_warn_mute(void);
/* A failure that means the user's data did not arrive where they asked
 * (an export, an output file, the capture): pt_warn, and also after
 * pt_warn_mute(), when it is kept for pt_warn_failures_flush(). */
void pt_warn_failure(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* Print the failures kept while muted, one line each, in their order. */
void pt_warn_failures_flush(void);
/* Mute pt_warn (on) or not for a while; returns the state before. */
int pt_warn_set_muted(int on);
/* pt_warn, then exit(status). */
void pt_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* CLOCK_MONOTONIC / CLOCK_REALTIME in nanoseconds. */
uint64_t pt_mono_ns(void);
uint64_t pt_real_ns(void);
/* The collector's receive time of a record: CLOCK_MONOTONIC rounded up to
 * whole microseconds (an epoll wake-up is no more precise, and the capture
 * stores whole microseconds in fewer bits). */
uint64_t pt_recv_time(uint64_t mono_ns);

/* Write all n bytes, retrying on EINTR and short writes. Returns 0 or -1. */
int pt_write_all(int fd, const void *buf, size_t n);

/* A 32-bit hash of n bytes, for the in-memory tables (never stored). */
uint32_t pt_hash_bytes(const void *data, size_t n);

/*
 * Columns for text output: the terminal's (TIOCGWINSZ on standard
 * output), else $COLUMNS, else 100.
 */
int pt_term_width(void);

/* readlink of /proc/PID/NAME into out (n bytes, NUL-terminated); 0, or
 * -1 with errno set. */
int pt_proc_link(pid_t pid, const char *name, char *out, size_t n);

#endif
