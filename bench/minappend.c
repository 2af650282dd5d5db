/*
 * The floor of an append-only transport, for comparison with the ring's
 * (bench/minring.c): a preload library that writes a HELLO and an EXIT,
 * each one write(2) of a length-prefixed frame, to a descriptor it
 * inherits, opened O_APPEND on a memfd.  O_APPEND makes each write land
 * whole at the end of the file, so no reservation in shared memory is
 * needed, and the process maps nothing: where a page fault costs ten
 * system calls (bench/vmcost), this trades the ring's faults for one
 * system call a record.  No hooks, no socket, no collector.
 *
 * The descriptor is named by PTBENCH_APPEND=FD (bench/run.py's FloorFiles
 * creates it).  With PTBENCH_OPEN=PATH instead, each image opens the file
 * itself (PATH is /proc/PID/fd/FD of the process that holds the memfd)
 * and moves the descriptor to 56 with close-on-exec, as the library keeps
 * its connection today: nothing is inherited across exec, so a program
 * that does not load the library (static, set-id) holds nothing.  That
 * variant costs three system calls an image more (open, fcntl, close).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "minframe.h"

static int minappend_fd = -1;

static void minappend_write(unsigned type, const void *body, size_t len)
{
	unsigned char rec[8 + MINFRAME_MAX];
	uint32_t flen = (uint32_t)minframe_make(rec + 8, type, body, len);

	memcpy(rec, &flen, 4);
	memset(rec + 4, 0, 4);
	if (write(minappend_fd, rec, 8 + flen) < 0)
		minappend_fd = -1;
}

__attribute__((constructor)) static void minappend_init(void)
{
	const char *v = getenv("PTBENCH_APPEND");
	struct pt_rec_hello hello;

	if (v) {
		minappend_fd = atoi(v);
	} else if ((v = getenv("PTBENCH_OPEN"))) {
		int fd = open(v, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (fd < 0)
			return;
		minappend_fd = fcntl(fd, F_DUPFD_CLOEXEC, 56);
		close(fd);
		if (minappend_fd < 0)
			return;
	} else {
		return;
	}
	minframe_hello(&hello);
	minappend_write(PT_REC_HELLO, &hello, sizeof hello);
}

__attribute__((destructor)) static void minappend_fini(void)
{
	struct pt_rec_exit ex = { .how = PT_EXIT_EXIT };

	if (minappend_fd >= 0)
		minappend_write(PT_REC_EXIT, &ex, sizeof ex);
}
