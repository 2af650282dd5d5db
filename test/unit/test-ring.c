/*
 * The shared ring: the library's writer (preload/ring.c) against the
 * collector's reader (collector/collect/ring.c), in one process and
 * across processes that write at once, are killed in the middle of a
 * record, or scribble over the ring.
 *
 * Each frame written carries its writer's pid in the header and its
 * sequence number in time_ns, and a payload that is a function of both,
 * so the reader's side can tell a frame delivered intact, out of order,
 * twice, or not at all.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/frame.h"
#include "collect/ring.h"
#include "pt-ring.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	printf("test-ring.c:%d: FAIL: %s\n", __LINE__, #cond); } } while (0)

#define RING (1u << 20)
#define WRITERS 4
#define PER_WRITER 30000
#define MAXPID 4194304

static struct pt_ring_reader rd;

/* What the reader's side saw: the next sequence number per pid. */
static struct seen {
	uint32_t pid;
	uint64_t next;          /* sequence number expected next */
	uint64_t frames;
	uint64_t out_of_order;  /* gaps are allowed (spills); going back is not */
	uint64_t bad;           /* payloads that are not what was written */
} seen[WRITERS + 2];

static size_t payload_len(uint32_t pid, uint64_t seq)
{
	return (size_t)((pid * 7u + seq * 13u) % 300u);
}

static unsigned char payload_byte(uint32_t pid, uint64_t seq, size_t i)
{
	return (unsigned char)(pid + seq * 3 + i);
}

static size_t make_frame(unsigned char *buf, uint32_t pid, uint64_t seq)
{
	struct pt_frame_header h = {
		.magic = PT_WIRE_MAGIC, .version = PT_WIRE_VERSION,
		.type = PT_REC_TRACE, .pid = pid, .time_ns = seq,
	};
	size_t n = payload_len(pid, seq), i;

	h.length = h.raw_length = (uint32_t)n;
	pt_wire_put_header(buf, &h);
	for (i = 0; i < n; i++)
		buf[PT_FRAME_HDR + i] = payload_byte(pid, seq, i);
	return PT_FRAME_HDR + n;
}

static struct seen *seen_of(uint32_t pid)
{
	size_t i;

	for (i = 0; i < sizeof seen / sizeof *seen; i++) {
		if (seen[i].pid == pid)
			return &seen[i];
		if (!seen[i].pid) {
			seen[i].pid = pid;
			return &seen[i];
		}
	}
	return NULL;
}

static int deliver(void *ctx, const unsigned char *frame, size_t len)
{
	struct pt_frame_header h;
	const char *why = NULL;
	struct seen *s;
	size_t i;

	(void)ctx;
	if (pt_frame_header_decode(frame, &h, &why) < 0 ||
	    len != PT_FRAME_HDR + h.length || !(s = seen_of(h.pid)))
		return -1;
	if (h.time_ns < s->next)
		s->out_of_order++;
	s->next = h.time_ns + 1;
	s->frames++;
	if (h.length != payload_len(h.pid, h.time_ns))
		s->bad++;
	else
		for (i = 0; i < h.length; i++)
			if (frame[PT_FRAME_HDR + i] != payload_byte(h.pid, h.time_ns, i)) {
				s->bad++;
				break;
			}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct pt_ring_header *header(void)
{
	return (struct pt_ring_header *)(void *)rd.map;
}

static void reset_seen(void)
{
	memset(seen, 0, sizeof seen);
}

/* A fresh ring for each case, so that one's damage is not the next's. */
static int fresh_ring(void)
{
	if (rd.map)
		pt_ring_close(&rd);
	reset_seen();
	return pt_ring_create(&rd, RING);
}

static void test_header(int fd)
{
	struct pt_ring_header *h = header();
	uint8_t other[PT_RING_RUN_ID];

	CHECK(fd >= 0);
	CHECK(h->magic == PT_RING_MAGIC && h->version == PT_RING_VERSION);
	CHECK(h->size == RING && h->uid == geteuid() && h->pidns != 0);
	CHECK(pt_ring_usable(rd.map, RING, h->run_id, geteuid(), h->pidns) == 0);
	CHECK(pt_ring_usable(rd.map, RING, h->run_id, geteuid(), 0) == 0);
	memcpy(other, h->run_id, sizeof other);
	other[5] ^= 1;
	CHECK(pt_ring_usable(rd.map, RING, other, geteuid(), h->pidns) < 0);
	CHECK(pt_ring_usable(rd.map, RING, h->run_id, geteuid() + 1, h->pidns) < 0);
	CHECK(pt_ring_usable(rd.map, RING, h->run_id, geteuid(), h->pidns + 1) < 0);
	CHECK(pt_ring_usable(rd.map, RING / 2, h->run_id, geteuid(), h->pidns) < 0);
	/* Sealed: nobody can change its size under the mappings. */
	CHECK(ftruncate(fd, 4096) < 0);
	CHECK(ftruncate(fd, (off_t)(PT_RING_HDR + 2 * RING)) < 0);
	CHECK(pt_ring_create(&(struct pt_ring_reader){0}, 3u << 20) < 0);
}

/* One writer, the reader between its writes: every frame, in order,
 * through many laps of the ring and records split at its end. */
static void test_one_writer(void)
{
	unsigned char buf[PT_FRAME_HDR + 400];
	uint64_t seq, written = 0;
	struct seen *s;

	for (seq = 0; seq < 100000; seq++) {
		size_t n = make_frame(buf, 1000, seq);

		if (pt_ring_put(rd.map, RING, buf, n) == 0)
			written++;
		if (seq % 97 == 0)
			pt_ring_drain(&rd, now_ns(), 0, deliver, NULL);
	}
	pt_ring_drain(&rd, now_ns(), 1, deliver, NULL);
	s = seen_of(1000);
	CHECK(written == 100000);
	CHECK(s->frames == written && !s->out_of_order && !s->bad);
	CHECK(header()->head > 3 * RING);       /* it did wrap */
	CHECK(rd.tail == header()->head && header()->tail == rd.tail);
	CHECK(!rd.st.refused && !rd.st.lost_bytes && !rd.dead);
}

/* Nobody reading: the writer is refused once the ring is full, never
 * waits, and what it was refused is counted; what it wrote is all there. */
static void test_full(void)
{
	unsigned char buf[PT_FRAME_HDR + 400];
	uint64_t seq, written = 0, refused = 0;

	for (seq = 0; seq < 20000; seq++) {
		size_t n = make_frame(buf, 2000, seq);

		if (pt_ring_put(rd.map, RING, buf, n) == 0)
			written++;
		else
			refused++;
	}
	CHECK(refused > 0 && written > 0);
	CHECK(header()->spilled == refused);
	CHECK(header()->head - header()->tail <= RING);
	pt_ring_drain(&rd, now_ns(), 1, deliver, NULL);
	CHECK(seen_of(2000)->frames == written && !seen_of(2000)->bad);
	/* Room again: the next frame goes in. */
	CHECK(pt_ring_put(rd.map, RING, buf, make_frame(buf, 2000, seq)) == 0);
	/* Larger than a record may be: refused, counted, nothing reserved. */
	{
		static unsigned char big[PT_RING_FRAME_MAX + 8];
		uint64_t head = header()->head;

		memcpy(big, buf, PT_FRAME_HDR);
		CHECK(pt_ring_put(rd.map, RING, big, sizeof big) < 0);
		CHECK(header()->head == head && header()->spilled == refused + 1);
	}
}

/* Writers in processes of their own, all at once, the reader draining
 * as it would on its timer: each writer's frames arrive in order and
 * intact, and every frame is either delivered or counted as spilled. */
static void test_processes(void)
{
	pid_t pid[WRITERS];
	uint64_t delivered = 0;
	int i, status, left = WRITERS;

	for (i = 0; i < WRITERS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			unsigned char buf[PT_FRAME_HDR + 400];
			uint64_t seq;

			for (seq = 0; seq < PER_WRITER; seq++)
				pt_ring_put(rd.map, RING, buf,
					    make_frame(buf, (uint32_t)getpid(), seq));
			_exit(0);
		}
	}
	while (left) {
		struct timespec ts = { 0, 200000 };

		pt_ring_drain(&rd, now_ns(), 0, deliver, NULL);
		nanosleep(&ts, NULL);
		while (left && waitpid(-1, &status, WNOHANG) > 0)
			left--;
	}
	pt_ring_drain(&rd, now_ns(), 1, deliver, NULL);
	for (i = 0; i < WRITERS; i++) {
		struct seen *s = seen_of((uint32_t)pid[i]);

		CHECK(s->frames > 0 && !s->out_of_order && !s->bad);
		delivered += s->frames;
	}
	CHECK(delivered + header()->spilled == (uint64_t)WRITERS * PER_WRITER);
	CHECK(!rd.st.refused && !rd.dead && rd.tail == header()->head);
	/* No writer was killed: nothing reserved was left unpublished. */
	CHECK(rd.st.lost_bytes == 0 && rd.st.resyncs == 0);
	printf("processes: %llu frames delivered, %llu spilled\n",
	       (unsigned long long)delivered,
	       (unsigned long long)header()->spilled);
}

/* A writer that reserved and never published (killed between the add
 * and the stamp): the reader waits the grace, then steps over exactly
 * that record, and the frames after it arrive. */
static void test_hole(void)
{
	unsigned char buf[PT_FRAME_HDR + 400];
	uint64_t hole = PT_RING_RECORD_BYTES(100), t, seq;

	CHECK(pt_ring_put(rd.map, RING, buf, make_frame(buf, 3000, 0)) == 0);
	__atomic_fetch_add(&header()->head, hole, __ATOMIC_RELAXED);
	for (seq = 1; seq <= 10; seq++)
		CHECK(pt_ring_put(rd.map, RING, buf, make_frame(buf, 3000, seq)) == 0);
	t = now_ns();
	pt_ring_drain(&rd, t, 0, deliver, NULL);
	CHECK(seen_of(3000)->frames == 1);
	pt_ring_drain(&rd, t + PT_RING_GRACE_NS / 2, 0, deliver, NULL);
	CHECK(seen_of(3000)->frames == 1);
	pt_ring_drain(&rd, t + PT_RING_GRACE_NS, 0, deliver, NULL);
	CHECK(seen_of(3000)->frames == 11 && !seen_of(3000)->bad);
	CHECK(rd.st.lost_bytes == hole && rd.st.resyncs == 1);
	CHECK(rd.tail == header()->head);

	/* Published, but with a length no writer gives: counted, and the
	 * records after it arrive once they have had the grace. */
	{
		uint64_t pos = __atomic_fetch_add(&header()->head, hole, __ATOMIC_RELAXED);
		unsigned char *rec = rd.map + PT_RING_HDR + (pos & (RING - 1));

		*(uint32_t *)(void *)rec = 5 * RING;
		*(uint64_t *)(void *)(rec + 8) = ~pos;
		CHECK(pt_ring_put(rd.map, RING, buf, make_frame(buf, 3000, 11)) == 0);
		t += PT_RING_GRACE_NS;
		pt_ring_drain(&rd, t, 0, deliver, NULL);
		CHECK(seen_of(3000)->frames == 11);
		pt_ring_drain(&rd, t + PT_RING_GRACE_NS, 0, deliver, NULL);
		CHECK(seen_of(3000)->frames == 12 && rd.st.refused == 1);
		CHECK(rd.st.lost_bytes == 2 * hole && rd.tail == header()->head);
	}

	/* At the run's end nothing is waited for: an unpublished tail is
	 * counted lost at once. */
	__atomic_fetch_add(&header()->head, hole, __ATOMIC_RELAXED);
	pt_ring_drain(&rd, t + 2 * PT_RING_GRACE_NS, 1, deliver, NULL);
	CHECK(rd.st.lost_bytes == 3 * hole && rd.tail == header()->head);
	CHECK(seen_of(3000)->frames == 12);
}

/* A writer killed at a random point while it writes: every frame it
 * published is delivered, in order, and at most the one it was writing
 * is lost. */
static void test_killed(void)
{
	int round;

	for (round = 0; round < 20; round++) {
		struct timespec ts = { 0, 100000 + 50000 * round };
		struct seen *s;
		int status;
		pid_t pid;

		close(fresh_ring());
		pid = fork();
		if (pid == 0) {
			unsigned char buf[PT_FRAME_HDR + 400];
			uint64_t seq;

			for (seq = 0;; seq++)
				while (pt_ring_put(rd.map, RING, buf,
						   make_frame(buf, (uint32_t)getpid(), seq)) < 0)
					;
		}
		/* Until it has written, then a while longer, each round a
		 * little more: the kill lands anywhere in its loop. */
		for (uint64_t t0 = now_ns(); !seen_of((uint32_t)pid)->frames &&
		     now_ns() - t0 < 10 * 1000000000ull;)
			pt_ring_drain(&rd, now_ns(), 0, deliver, NULL);
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		pt_ring_drain(&rd, now_ns(), 1, deliver, NULL);
		s = seen_of((uint32_t)pid);
		if (!s->frames || s->out_of_order || s->bad)
			printf("killed, round %d: %llu frames, %llu out of order, "
			       "%llu bad\n", round, (unsigned long long)s->frames,
			       (unsigned long long)s->out_of_order,
			       (unsigned long long)s->bad);
		CHECK(s->frames > 0 && !s->out_of_order && !s->bad);
		/* Frames are numbered from 0 and none was refused: every one
		 * before the last delivered is there. */
		CHECK(s->next == s->frames);
		CHECK(rd.st.lost_bytes <= PT_RING_RECORD_BYTES(PT_FRAME_HDR + 300));
		CHECK(!rd.dead && rd.tail == header()->head);
	}
}

/* Garbage over the data area and the header's counters: the reader
 * neither crashes nor loops, and ends with the ring read or given up. */
static void test_scribble(void)
{
	unsigned seed = 1;
	int round;

	for (round = 0; round < 200; round++) {
		unsigned char buf[PT_FRAME_HDR + 400];
		uint64_t seq, i;

		close(fresh_ring());
		for (seq = 0; seq < 3000; seq++)
			pt_ring_put(rd.map, RING, buf, make_frame(buf, 4000, seq));
		pt_ring_drain(&rd, 1, 0, deliver, NULL);
		for (seq = 0; seq < 2000; seq++)
			pt_ring_put(rd.map, RING, buf, make_frame(buf, 4000, seq));
		/* Words of garbage, some of them stamps of their own place. */
		for (i = 0; i < (uint64_t)(round % 7) * 300; i++) {
			uint64_t off = (uint64_t)rand_r(&seed) % (RING / 8) * 8;
			uint64_t *w = (uint64_t *)(void *)(rd.map + PT_RING_HDR + off);

			*w = rand_r(&seed) % 3 == 0 ? ~(header()->tail + off) :
			     (uint64_t)rand_r(&seed) << 32 | (uint64_t)rand_r(&seed);
		}
		switch (round % 5) {
		case 1: header()->head = rd.tail - 8; break;
		case 2: header()->head = (uint64_t)rand_r(&seed) << 40; break;
		case 3: header()->head += (uint64_t)rand_r(&seed) % (3 * RING); break;
		case 4: header()->tail = (uint64_t)rand_r(&seed) << 20; break;
		}
		for (i = 0; i < 4 && !rd.dead; i++)
			pt_ring_drain(&rd, 1 + i * PT_RING_GRACE_NS, i == 3, deliver, NULL);
		CHECK(rd.dead || rd.tail == header()->head);
		if (round % 5 == 1 || round % 5 == 2)
			CHECK(rd.dead);
		if (rd.dead) {
			CHECK(header()->dead);
			/* Writers see it and go to the socket. */
			CHECK(pt_ring_put(rd.map, RING, buf, make_frame(buf, 4000, 0)) < 0);
			CHECK(pt_ring_usable(rd.map, RING, header()->run_id,
					     geteuid(), 0) < 0);
		}
	}
}

int main(void)
{
	int fd = fresh_ring();

	test_header(fd);
	close(fd);
	test_one_writer();
	close(fresh_ring());
	test_full();
	close(fresh_ring());
	test_processes();
	close(fresh_ring());
	test_hole();
	test_killed();
	test_scribble();
	pt_ring_close(&rd);
	if (failures)
		printf("%d failures\n", failures);
	return failures != 0;
}
