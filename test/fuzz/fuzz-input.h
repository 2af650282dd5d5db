/*
 * What both capture fuzz targets do with an input: write it where the
 * reader will open it, gzip-wrapped (to reach the record parser) or as is
 * (to reach the gzip and spool paths), as a capture file or as the one
 * file of a spool directory.
 */
#ifndef PT_FUZZ_INPUT_H
#define PT_FUZZ_INPUT_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char fuzz_dir[64], fuzz_file[96], fuzz_spooldir[96],
	    fuzz_spoolfile[128];

static void fuzz_cleanup(void)
{
	unlink(fuzz_file);
	unlink(fuzz_spoolfile);
	rmdir(fuzz_spooldir);
	rmdir(fuzz_dir);
}

/* A private directory for the inputs, removed at exit; aborts on error. */
static inline void fuzz_setup(void)
{
	if (fuzz_dir[0])
		return;
	strcpy(fuzz_dir, "/tmp/pt-fuzz-XXXXXX");
	if (!mkdtemp(fuzz_dir))
		abort();
	snprintf(fuzz_file, sizeof fuzz_file, "%s/capture", fuzz_dir);
	snprintf(fuzz_spooldir, sizeof fuzz_spooldir, "%s/spool", fuzz_dir);
	snprintf(fuzz_spoolfile, sizeof fuzz_spoolfile,
		 "%s/proftrace-1-1.ptspool", fuzz_spooldir);
	if (mkdir(fuzz_spooldir, 0700) < 0)
		abort();
	atexit(fuzz_cleanup);
}

/* The file an input of this mode is written to (bit 1: the spool file),
 * and the path a reader opens (the capture or the spool directory). */
static inline const char *fuzz_written(unsigned mode)
{
	return mode & 2 ? fuzz_spoolfile : fuzz_file;
}

static inline const char *fuzz_opened(unsigned mode)
{
	return mode & 2 ? fuzz_spooldir : fuzz_file;
}

/* Write p..p+n to path, gzip-wrapped if gz: 0, or -1. */
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
