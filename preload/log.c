/*
 * Frames into the run log (doc/design.md, "The transport").
 *
 * A record is one write on a descriptor opened O_APPEND: the kernel puts
 * it at the end of the file under the inode's lock, so records of
 * concurrent writers never interleave, and nothing is reserved or
 * published in shared memory.  A writer killed inside the write leaves a
 * record cut short; the check repeated after the frame lets the reader
 * see that and step over it.
 *
 * No lock, no allocation, one system call: as safe in a vfork or
 * posix_spawn child, or a signal handler, as a send on a socket.
 */
#include <sys/uio.h>

#include "pt-log.h"
#include "pt-sys.h"

int pt_log_put(int fd, uint64_t stream, uint32_t flags, const void *frame,
	       size_t len)
{
	unsigned char hdr[PT_LOG_REC_HDR], trailer[PT_LOG_TRAILER];
	struct iovec iov[3];
	uint32_t check;
	ssize_t w;
	int saved = errno;

	if (len > PT_LOG_FRAME_MAX)
		return -1;
	check = pt_log_check((uint32_t)len, stream, flags);
	pt_wire_put32(hdr + PT_OFF(pt_log_rec, magic), PT_LOG_MAGIC);
	pt_wire_put32(hdr + PT_OFF(pt_log_rec, length), (uint32_t)len);
	pt_wire_put64(hdr + PT_OFF(pt_log_rec, stream), stream);
	pt_wire_put32(hdr + PT_OFF(pt_log_rec, flags), flags);
	pt_wire_put32(hdr + PT_OFF(pt_log_rec, check), check);
	pt_wire_put32(trailer, check);
	iov[0] = (struct iovec){ hdr, sizeof hdr };
	iov[1] = (struct iovec){ (void *)frame, len };
	iov[2] = (struct iovec){ trailer, sizeof trailer };
	do
		w = pt_sys_writev(fd, iov, 3);
	while (w < 0 && errno == EINTR);
	pt_errno_restore(saved);
	return w == (ssize_t)(sizeof hdr + len + sizeof trailer) ? 0 : -1;
}
