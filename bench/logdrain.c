/*
 * What the collector's drain of the run log costs per program image
 * (doc/design.md, "The transport"), to set beside the collector's
 * instructions per image with a connection each (bench/counts.py).
 *
 *     logdrain IMAGES [PER_DRAIN]
 *
 * IMAGES images' frames are appended to a run log with the library's
 * writer (preload/log.c): a HELLO with a command line, a working
 * directory and an environment variable, as a compiler's image sends,
 * and an EXIT.  Every PER_DRAIN images (default 20: a burst of short
 * processes between two ticks of the drain's timer) the reader drains
 * them with pt_log_drain, and takes each frame as the collector takes a
 * socket's: header decoded, record checked.  Run under callgrind with
 * --toggle-collect=pt_log_drain for the instructions of the drain, per
 * image = total / IMAGES; the writing of the frames to the capture, which
 * every transport does, is not in it.  Prints the frames taken.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/frame.h"
#include "collect/log.h"
#include "pt-log.h"

static struct pt_log_reader rd;
static unsigned long long taken_frames;

static int take(void *ctx, uint64_t stream, uint32_t flags,
		const unsigned char *frame, size_t len)
{
	struct pt_frame_header h;
	struct pt_record rec;
	const char *why = NULL;

	(void)ctx;
	(void)stream;
	(void)flags;
	if (pt_frame_check_whole(frame, len, &h, &rec, &why) < 0)
		return -1;
	taken_frames++;
	return 0;
}

static size_t item(unsigned char *p, unsigned tag, const char *s)
{
	size_t n = strlen(s) + 1;

	p[0] = (unsigned char)tag;
	memcpy(p + 1, s, n);
	return 1 + n;
}

static size_t frame(unsigned char *buf, unsigned type, uint32_t pid,
		    uint64_t t, const void *fixed, size_t nfixed, int image)
{
	static const char *argv[] = { "gcc", "-O2", "-g", "-Wall", "-c",
		"-o", "src/module-with-a-long-name.o", "src/module-with-a-long-name.c" };
	struct pt_frame_header h = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = (uint8_t)type, .pid = pid, .time_ns = t,
	};
	size_t n = nfixed, i;
	unsigned char *p = buf + PT_FRAME_HDR;

	memcpy(p, fixed, nfixed);
	if (image) {
		n += item(p + n, PT_TAG_EXE, "/usr/bin/gcc");
		for (i = 0; i < sizeof argv / sizeof *argv; i++)
			n += item(p + n, PT_TAG_ARG, argv[i]);
		n += item(p + n, PT_TAG_CWD, "/home/builder/project/build");
		n += item(p + n, PT_TAG_ENV, "CI_JOB_ID=12345");
	}
	h.length = h.raw_length = (uint32_t)n;
	pt_wire_put_header(buf, &h);
	return PT_FRAME_HDR + n;
}

int main(int argc, char **argv)
{
	unsigned long images = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	unsigned long per_drain = argc > 2 ? strtoul(argv[2], NULL, 10) : 20;
	struct pt_rec_hello hello = { .ppid = 1, .kind = PT_HELLO_IMAGE };
	struct pt_rec_exit ex = { .how = PT_EXIT_EXIT };
	unsigned char buf[1024];
	unsigned long i;
	int fd, wfd;

	fd = images && per_drain ? pt_log_create(&rd) : -1;
	if (fd < 0) {
		fprintf(stderr, "usage: logdrain IMAGES [PER_DRAIN]\n");
		return 2;
	}
	/* The writers' side, opened as an image opens it. */
	snprintf((char *)buf, sizeof buf, "/proc/self/fd/%d", fd);
	wfd = open((char *)buf, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (wfd < 0) {
		perror("logdrain: open");
		return 2;
	}
	for (i = 0; i < images; i++) {
		uint32_t pid = 1000 + (uint32_t)i;

		hello.start_ns = i;
		if (pt_log_put(wfd, (uint64_t)pid << 32, 0, buf,
			       frame(buf, PT_REC_HELLO, pid, i, &hello,
				     sizeof hello, 1)) < 0 ||
		    pt_log_put(wfd, (uint64_t)pid << 32, 0, buf,
			       frame(buf, PT_REC_EXIT, pid, i, &ex,
				     sizeof ex, 0)) < 0) {
			perror("logdrain: write");
			return 2;
		}
		/* One drain per batch, as the timer would find it. */
		if ((i + 1) % per_drain == 0 || i + 1 == images)
			pt_log_drain(&rd, 0, i + 1 == images, take, NULL);
	}
	close(wfd);
	printf("images=%lu frames=%llu refused=%llu lost_bytes=%llu\n", images,
	       taken_frames, (unsigned long long)rd.st.refused,
	       (unsigned long long)rd.st.lost_bytes);
	pt_log_close(&rd);
	return taken_frames == 2 * images ? 0 : 1;
}
