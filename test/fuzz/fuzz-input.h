/*
 * What both capture fuzz targets do with an input: write it where the
 * reader will open it, gzip-wrapped (to reach the record parser) or as is
 * (to reach the gzip and spool paths).  Returns 0 or -1.
 */
#ifndef PT_FUZZ_INPUT_H
#define PT_FUZZ_INPUT_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <zlib.h>

static inline int write_input(const char *path, const uint8_t *p,
			      size_t n, int gz)
{
	if (gz) {
		gzFile g = gzopen(path, "wb1");

		if (!g)
			return -1;
		if (n && gzwrite(g, p, (unsigned)n) != (int)n) {
			gzclose(g);
			return -1;
		}
		return gzclose(g) == Z_OK ? 0 : -1;
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ssize_t w;

		if (fd < 0)
			return -1;
		w = n ? write(fd, p, n) : 0;
		close(fd);
		return w == (ssize_t)n ? 0 : -1;
	}
}

#endif
