/*
 * What the two observers of processes from outside share: the /proc
 * watcher (watch.c) and the tracer (ptrace.c).  Both write into the
 * capture the frames the library would have sent, read /proc into one
 * buffer and ask an executable whether it is Go.
 */
#ifndef PT_OUTSIDE_H
#define PT_OUTSIDE_H

#include <elf.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/strbuf.h"
#include "proftrace/wire.h"

struct pt_outside {
	/* Where frames go (the collector's own connection); NULL: nowhere. */
	void (*put)(void *arg, const void *frame, size_t len);
	void *arg;
	struct pt_sb frame;             /* the frame being built */
	struct pt_sb buf;               /* what was last read of /proc */
};

void pt_outside_init(struct pt_outside *o,
		     void (*put)(void *arg, const void *frame, size_t len),
		     void *arg);
void pt_outside_free(struct pt_outside *o);

/* Build one frame of pid as the library lays it out (capture/frame.h):
 * begin with the fixed part, add tail items, and end, which puts it. */
void pt_outside_begin(struct pt_outside *o, uint8_t type, pid_t pid,
		      uint64_t time_ns, const void *fixed, size_t n);
void pt_outside_item(struct pt_outside *o, enum pt_tag tag, const char *s,
		     size_t n);
void pt_outside_end(struct pt_outside *o);

/* Put parent's REAP of child: its wait status, and its rusage when
 * have_rusage (CPU in µs, peak RSS in KiB). */
void pt_outside_reap(struct pt_outside *o, pid_t parent, pid_t child,
		     int status, int have_rusage, uint64_t ut_us,
		     uint64_t st_us, uint64_t rss_kb, uint32_t flags,
		     uint64_t time_ns);

/* Has the 64-bit ELF file at fd (header eh) Go's build-id or build-info
 * section: does it fork, exec and exit past libc? */
int pt_outside_elf_go(int fd, const Elf64_Ehdr *eh);

#endif
