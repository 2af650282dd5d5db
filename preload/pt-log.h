/*
 * The library's side of the run log (log.c; the layout is in
 * proftrace/wire.h, the design in doc/design.md, "The transport").
 *
 * Self-contained, so that the collector's tests can drive real writers:
 * it takes the descriptor and uses nothing of the library's state.
 */
#ifndef PT_LOG_H
#define PT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "proftrace/wire.h"

/*
 * Appends the frame of len bytes (its header and payload) to the run log
 * open O_APPEND on fd, as one record of stream with flags (enum
 * pt_log_flag): one writev(2), so the record lands whole after every
 * other writer's.  Returns 0 once the whole record is written; -1 if the
 * frame is larger than PT_LOG_FRAME_MAX or the write failed or came up
 * short (a short record is the reader's to step over).  Leaves errno as
 * it was.
 */
int pt_log_put(int fd, uint64_t stream, uint32_t flags, const void *frame,
	       size_t len);

#endif
