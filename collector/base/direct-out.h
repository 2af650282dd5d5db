/*
 * Output files written around the page cache (O_DIRECT), for conversions
 * whose output runs to gigabytes: the page cache would hold all of it as
 * dirty pages, each a fresh page the kernel must find and the process
 * copy into, and in a container those pages count against its memory
 * limit.  bench/NOTES.md has the measurements.
 */
#ifndef PT_DIRECT_OUT_H
#define PT_DIRECT_OUT_H

#include <stdio.h>

/*
 * Create or truncate path (mode 0666 before the umask) and return a stream
 * that writes it with O_DIRECT in large aligned blocks, the last partial
 * block through the page cache.  Where the file system refuses O_DIRECT,
 * at open or at the first write, the stream writes through the page cache
 * instead.  Close it with fclose(), which reports any write error as EOF
 * with errno set.  Returns NULL with errno set if path cannot be created.
 */
FILE *pt_direct_fopen(const char *path);

#endif
