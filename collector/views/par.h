/*
 * Formatting on two threads: the writers (csv, json) turn a million
 * executions into a gigabyte of text after the model is built, when the
 * reading thread's CPU is idle.
 */
#ifndef PT_PAR_H
#define PT_PAR_H

#include <stddef.h>

#include "base/strbuf.h"

/* Appends the text of items [lo, hi) to sb.  Runs in either thread. */
typedef void pt_par_format_fn(void *arg, size_t lo, size_t hi,
			      struct pt_sb *sb);
/* Takes the text of the next chunk, in order, on the calling thread;
 * returns 0, or -1 to stop. */
typedef int pt_par_emit_fn(void *arg, struct pt_sb *sb);

/*
 * Format items [0, n) in chunks of `chunk`, two chunks at a time on the
 * calling thread and one more, and hand each chunk's text to emit in
 * order.  The format function must only read what both threads share;
 * pt_exec_arg() and the other model readers qualify.  Without a second
 * thread (one chunk, or pthread_create failed) everything runs on the
 * calling thread.  Returns 0, or -1 as soon as emit returned -1.
 */
int pt_par_format(size_t n, size_t chunk, pt_par_format_fn *format,
		  pt_par_emit_fn *emit, void *arg);

#endif
