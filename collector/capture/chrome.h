/*
 * Chrome Trace Event Format files, as programs write them (clang
 * -ftime-trace, Rocq -profile, dune --trace-file, or anyone through
 * $PROFTRACE_TRACE_DIR): the array form `[ev, ...]` (whose closing bracket
 * may be missing) or the object form `{"traceEvents": [...], ...}`.
 *
 * The events kept are complete ones (X, and B/E pairs by thread or b/e
 * pairs by id made complete), instants (i, I) and counters (C);
 * metadata (M) is left out, anything else counted as skipped.  Malformed input is never more than an error
 * message: the events before it are kept.
 */
#ifndef PT_CHROME_H
#define PT_CHROME_H

#include <stddef.h>
#include <stdint.h>

struct pt_chrome_event {
	char ph;                        /* 'X', 'i' or 'C' */
	double ts_us, dur_us;           /* as the file gives them; dur 0
					 * unless X */
	int64_t pid, tid;               /* the file's, 0 when absent */
	const char *name, *cat;         /* interned; "" when absent */
	const char *args;               /* compact JSON object, or NULL (an
					 * array of args is kept as
					 * {"list": [...]}) */
	const char *list;               /* that array's JSON, or NULL */
	const char *detail;             /* args.detail when a string */
	int64_t arg_pid;                /* args.pid when a number, else -1 */
};

struct pt_chrome_info {
	int has_epoch;                  /* the file gave beginningOfTime: */
	double epoch_us;                /* ts are relative to it (epoch µs) */
	uint64_t kept, skipped;         /* events given to emit; not kept */
	const char *err;                /* NULL, or what stopped the parse */
	size_t err_at;                  /* its byte offset */
	int cut;                        /* err is that the file ends early */
};

/* Stable copies of strings: the caller's (the model's string table). */
typedef const char *pt_chrome_intern(void *arg, const char *s, size_t n);
typedef void pt_chrome_emit(void *arg, const struct pt_chrome_event *ev);

/*
 * Parse buf[0..len), calling emit for each event kept, up to max_events
 * (the rest are counted as skipped).  Fills *info; returns 0 when the
 * whole file was read, -1 when info->err says where it stopped.
 */
int pt_chrome_parse(const char *buf, size_t len, size_t max_events,
		    pt_chrome_intern *intern, pt_chrome_emit *emit, void *arg,
		    struct pt_chrome_info *info);

#endif
