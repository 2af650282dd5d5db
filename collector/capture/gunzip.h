/*
 * Reading a gzip file (or a plain one, passed through) without losing what
 * precedes damage.
 *
 * gzread() inflates into the caller's buffer and, when inflate() reports
 * a data error, returns -1 for the whole call: everything that call had
 * already produced is gone.  A capture of a few dozen executions inflates
 * in one call, so a single flipped bit, or a wrong CRC-32 in the trailer
 * after every record was intact, lost all of it.  This reader returns
 * every byte inflate() produced before the damage, and the error after.
 */
#ifndef PT_CAPTURE_GUNZIP_H
#define PT_CAPTURE_GUNZIP_H

#include <stddef.h>

struct pt_gunzip;

/*
 * Read the file open at fd (which is taken over and closed by
 * pt_gunzip_close).  Returns NULL only when out of memory.
 */
struct pt_gunzip *pt_gunzip_open(int fd);

/*
 * Up to len bytes of the uncompressed stream into buf.  Returns how many
 * (at least 1), or 0 once there are no more: then pt_gunzip_error() says
 * whether the stream ended cleanly.  Bytes produced before damage are
 * returned by one call and the damage reported by the next.
 */
size_t pt_gunzip_read(struct pt_gunzip *g, void *buf, size_t len);

/*
 * How the stream ended, as zlib's codes: Z_OK (cleanly, or not yet),
 * Z_BUF_ERROR (cut short), Z_DATA_ERROR (damaged), Z_MEM_ERROR or
 * Z_ERRNO (read failed); *msg says it in words (NULL for Z_OK).
 */
int pt_gunzip_error(const struct pt_gunzip *g, const char **msg);

/* Whether the file is not gzip and is read as it is (1), or gzip (0). */
int pt_gunzip_direct(const struct pt_gunzip *g);

void pt_gunzip_close(struct pt_gunzip *g);

/* How many bytes of the file are read at once (weak: see gunzip.c). */
size_t pt_gunzip_in_size(void);

#endif
