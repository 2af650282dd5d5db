/*
 * What the collector's drain of the shared ring costs per program image
 * (doc/design.md, "The shared ring"), to set beside the collector's
 * instructions per image with a connection each (bench/counts.py).
 *
 *     ringdrain IMAGES [PER_DRAIN]
 *
 * A writer process puts IMAGES images' frames into a 16 MiB ring with the
 * library's writer (preload/ring.c): a HELLO with a command line, a
 * working directory and an environment variable, as a compiler's image
 * sends, and an EXIT.  Every PER_DRAIN images (default 20: a burst of
 * short processes between two ticks of the drain's timer) it waits until
 * the reader has drained them.  The reader drains with pt_ring_drain,
 * and takes each frame as the collector takes a socket's: header decoded,
 * record checked.  Run under callgrind with --toggle-collect=pt_ring_drain
 * for the instructions of the drain, per image = total / IMAGES; the
 * writing of the frames to the capture, which both transports do, is not
 * in it.  Prints the frames taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/frame.h"
#include "collect/ring.h"
#include "pt-ring.h"

static struct pt_ring_reader rd;
static unsigned long long taken_frames;
static unsigned long *batches;  /* shared: batches the writer has put in */

static int take(void *ctx, const unsigned char *frame, size_t len)
{
	struct pt_frame_header h;
	struct pt_record rec;
	const char *why = NULL;

	(void)ctx;
	if (pt_frame_header_decode(frame, &h, &why) < 0 ||
	    len != PT_FRAME_HDR + (size_t)h.length ||
	    pt_record_check(&h, frame + PT_FRAME_HDR, &rec, &why) < 0)
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

static void writer(unsigned long images, unsigned long per_drain)
{
	unsigned char buf[1024];
	struct pt_rec_hello hello = { .ppid = 1, .kind = PT_HELLO_IMAGE };
	struct pt_rec_exit ex = { .how = PT_EXIT_EXIT };
	struct pt_ring_header *h = (void *)rd.map;
	unsigned long i;

	for (i = 0; i < images; i++) {
		uint32_t pid = 1000 + (uint32_t)i;

		hello.start_ns = i;
		while (pt_ring_put(rd.map, rd.size, buf,
				   frame(buf, PT_REC_HELLO, pid, i, &hello, sizeof hello, 1)) < 0)
			;
		while (pt_ring_put(rd.map, rd.size, buf,
				   frame(buf, PT_REC_EXIT, pid, i, &ex, sizeof ex, 0)) < 0)
			;
		if ((i + 1) % per_drain == 0 || i + 1 == images) {
			__atomic_add_fetch(batches, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) !=
			       __atomic_load_n(&h->head, __ATOMIC_ACQUIRE))
				;
		}
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long images = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	unsigned long per_drain = argc > 2 ? strtoul(argv[2], NULL, 10) : 20;
	unsigned long drained = 0, last;
	int status;
	pid_t pid;

	if (!images || !per_drain || pt_ring_create(&rd, PT_RING_DATA_DEFAULT) < 0) {
		fprintf(stderr, "usage: ringdrain IMAGES [PER_DRAIN]\n");
		return 2;
	}
	batches = mmap(NULL, sizeof *batches, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (batches == MAP_FAILED)
		return 2;
	pid = fork();
	if (pid == 0)
		writer(images, per_drain);
	/* One drain per batch, as the timer would find it: the waiting is
	 * outside pt_ring_drain, so callgrind does not count it. */
	last = (images + per_drain - 1) / per_drain;
	while (drained < last) {
		while (__atomic_load_n(batches, __ATOMIC_ACQUIRE) == drained)
			;
		drained++;
		pt_ring_drain(&rd, 0, 0, take, NULL);
	}
	waitpid(pid, &status, 0);
	printf("images=%lu frames=%llu refused=%llu lost_bytes=%llu\n", images,
	       taken_frames, (unsigned long long)rd.st.refused,
	       (unsigned long long)rd.st.lost_bytes);
	return taken_frames == 2 * images ? 0 : 1;
}
