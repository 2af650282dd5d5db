/*
 * The run log: the library's appends (preload/log.c) against the
 * collector's reader (collector/collect/log.c), in one process and across
 * processes that append at once, are killed in the middle of a record, or
 * scribble over the log.
 *
 * A record's stream names its writer and its flags carry its sequence
 * number (the reader does not look inside flags); the frame's length and
 * bytes are a function of both, so the reader's side can tell a frame
 * delivered intact, out of order, twice, or not at all.  Every byte of
 * the file is either part of a record delivered (or refused) or counted
 * lost: the cases check that sum too.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/log.h"
#include "pt-log.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	printf("test-log.c:%d: FAIL: %s\n", __LINE__, #cond); } } while (0)

#define WRITERS 4
#define PER_WRITER 4000
#define VARIED_MAX (200u << 10)
#define SMALL_STREAM 100        /* streams from here: frames of 100..299 */
#define BIG_STREAM 1000         /* streams from here: frames of BIG_FRAME */
#define BIG_FRAME (8u << 20)
#define BAD_STREAM 0xbadbadull  /* only ever in damaged records */
#define REC(len) (PT_LOG_REC_HDR + (uint64_t)(len) + PT_LOG_TRAILER)

static const unsigned char log_magic_bytes[4] = { 'P', 'T', 'L', 'G' };

static struct pt_log_reader rd;
static int wfd = -1;            /* the test's own appending descriptor */

/* What the reader's side saw, per stream. */
static struct seen {
	uint64_t stream;
	int used;
	uint64_t next;          /* sequence number expected next */
	uint64_t frames;
	uint64_t back;          /* delivered twice or out of order */
	uint64_t gaps;          /* records skipped */
	uint64_t bad;           /* frames that are not what was written */
} seen[16];

static uint64_t delivered_bytes;        /* records handed over, whole */
static uint64_t bad_streams;            /* frames of no stream written */
static unsigned refuse_mod;             /* refuse every refuse_mod-th */
static size_t max_cap;

static unsigned char frame[VARIED_MAX + 1];
static unsigned char big[BIG_FRAME];

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x7f4a7c15ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ h >> 29;
}

static size_t frame_len(uint64_t stream, uint32_t seq)
{
	uint64_t h = mix(stream, seq);

	if (stream >= BIG_STREAM)
		return BIG_FRAME;
	if (stream >= SMALL_STREAM)
		return 100 + h % 200;
	/* Empty, small, and now and then up to 200 KiB. */
	if (seq % 40 == 3)
		return (size_t)(h % (VARIED_MAX + 1));
	return seq % 17 == 0 ? 0 : (size_t)(h % 3000);
}

static unsigned char frame_byte(uint64_t stream, uint32_t seq, size_t i)
{
	return (unsigned char)(stream * 31 + seq * 7 + i * 13 + (i >> 9));
}

/* The frame of (stream, seq); big frames are one buffer made once, so
 * that a big writer spends its time in the write, where it is killed. */
static const unsigned char *make_frame(uint64_t stream, uint32_t seq,
				       size_t *len)
{
	size_t i;

	*len = frame_len(stream, seq);
	if (stream >= BIG_STREAM)
		return big;
	for (i = 0; i < *len; i++)
		frame[i] = frame_byte(stream, seq, i);
	return frame;
}

static struct seen *seen_of(uint64_t stream)
{
	size_t i;

	for (i = 0; i < sizeof seen / sizeof *seen; i++) {
		if (seen[i].used && seen[i].stream == stream)
			return &seen[i];
		if (!seen[i].used) {
			seen[i].used = 1;
			seen[i].stream = stream;
			return &seen[i];
		}
	}
	return NULL;
}

static int deliver(void *ctx, uint64_t stream, uint32_t flags,
		   const unsigned char *f, size_t len)
{
	struct seen *s;
	size_t i;

	(void)ctx;
	delivered_bytes += REC(len);
	if (stream == BAD_STREAM || !(s = seen_of(stream))) {
		bad_streams++;
		return -1;
	}
	if (flags < s->next)
		s->back++;
	else if (flags > s->next)
		s->gaps++;
	s->next = (uint64_t)flags + 1;
	s->frames++;
	if (len != frame_len(stream, flags)) {
		s->bad++;
	} else if (stream >= BIG_STREAM) {
		if (memcmp(f, big, len))
			s->bad++;
	} else {
		for (i = 0; i < len; i++)
			if (f[i] != frame_byte(stream, flags, i)) {
				s->bad++;
				break;
			}
	}
	if (refuse_mod && flags % refuse_mod == refuse_mod - 1) {
		s->frames--;
		return -1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int drain(uint64_t now, int final)
{
	int n = pt_log_drain(&rd, now, final, deliver, NULL);

	CHECK(n >= 0);
	if (rd.cap > max_cap)
		max_cap = rd.cap;
	return n;
}

static uint64_t file_size(void)
{
	struct stat st;

	return fstat(rd.fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Every byte of the file went somewhere: delivered or refused, or lost. */
static void check_accounted(void)
{
	CHECK(rd.off == file_size());
	CHECK(delivered_bytes + rd.st.lost_bytes == file_size());
	CHECK(rd.st.bytes_read == file_size());
	CHECK(!bad_streams);
}

static int open_append(pid_t pid, int fd)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	return open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
}

/* A fresh log for each case, so that one's damage is not the next's. */
static void fresh_log(void)
{
	if (wfd >= 0) {
		close(wfd);
		pt_log_close(&rd);
	}
	memset(seen, 0, sizeof seen);
	delivered_bytes = bad_streams = 0;
	refuse_mod = 0;
	max_cap = 0;
	CHECK(pt_log_create(&rd) >= 0);
	wfd = open_append(getpid(), rd.fd);
	CHECK(wfd >= 0);
}

static int put(int fd, uint64_t stream, uint32_t seq)
{
	size_t len;
	const unsigned char *f = make_frame(stream, seq, &len);

	return pt_log_put(fd, stream, seq, f, len);
}

static void put_raw(const void *p, size_t n)
{
	CHECK(write(wfd, p, n) == (ssize_t)n);
}

/* A record laid out by hand, header check as given; returns its size. */
static size_t hand_record(unsigned char *buf, uint32_t length, uint64_t stream,
			  uint32_t flags, uint32_t check)
{
	uint32_t i;

	pt_wire_put32(buf + PT_OFF(pt_log_rec, magic), PT_LOG_MAGIC);
	pt_wire_put32(buf + PT_OFF(pt_log_rec, length), length);
	pt_wire_put64(buf + PT_OFF(pt_log_rec, stream), stream);
	pt_wire_put32(buf + PT_OFF(pt_log_rec, flags), flags);
	pt_wire_put32(buf + PT_OFF(pt_log_rec, check), check);
	for (i = 0; i < length; i++)
		buf[PT_LOG_REC_HDR + i] = (unsigned char)(i * 5 + 1);
	pt_wire_put32(buf + PT_LOG_REC_HDR + length, check);
	return (size_t)REC(length);
}

static void test_create(void)
{
	struct stat st;

	fresh_log();
	CHECK(fstat(rd.fd, &st) == 0 && (st.st_mode & 07777) == 0600);
	CHECK(fcntl(rd.fd, F_GETFD) & FD_CLOEXEC);
	CHECK(fcntl(rd.fd, F_GET_SEALS) & F_SEAL_SHRINK);
	CHECK(put(wfd, SMALL_STREAM, 0) == 0);
	/* Nobody can move the end below what the reader has read. */
	CHECK(ftruncate(wfd, 0) < 0);
	CHECK(pt_log_put(wfd, 1, 0, frame, PT_LOG_FRAME_MAX + 1ull) < 0);
	drain(1, 1);
	CHECK(seen_of(SMALL_STREAM)->frames == 1);
	check_accounted();
}

/* One writer, the reader between its appends: every frame, in order,
 * byte for byte, empty ones and 200 KiB ones, some refused. */
static void test_one_writer(void)
{
	struct seen *s;
	uint32_t seq;

	fresh_log();
	refuse_mod = 500;
	for (seq = 0; seq < 3000; seq++) {
		CHECK(put(wfd, 7, seq) == 0);
		if (seq % 37 == 0)
			drain(1000 + seq, 0);
	}
	drain(5000, 0);
	s = seen_of(7);
	CHECK(s->frames + rd.st.refused == 3000 && rd.st.refused == 6);
	CHECK(rd.st.frames == s->frames);
	CHECK(s->next == 3000 && !s->back && !s->gaps && !s->bad);
	CHECK(!rd.st.lost_bytes && !rd.st.resyncs && !rd.more);
	/* One record and a read chunk at most. */
	CHECK(max_cap <= PT_LOG_READ_CHUNK + REC(VARIED_MAX) + (64u << 10));
	check_accounted();
}

/* Writers in processes of their own, each opening the log through the
 * reader's /proc as programs do, all at once, the reader draining as it
 * would on its timer: every record once, in its writer's order, intact,
 * nothing lost. */
static void test_processes(void)
{
	pid_t pid[WRITERS], parent = getpid();
	int i, status, left = WRITERS, failed = 0;

	fresh_log();
	for (i = 0; i < WRITERS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			int fd = open_append(parent, rd.fd), bad = fd < 0;
			uint32_t seq;

			for (seq = 0; seq < PER_WRITER && !bad; seq++)
				bad = put(fd, 10 + (uint64_t)i, seq) < 0;
			_exit(bad);
		}
	}
	while (left) {
		struct timespec ts = { 0, 200000 };

		drain(now_ns(), 0);
		nanosleep(&ts, NULL);
		while (left && waitpid(-1, &status, WNOHANG) > 0) {
			left--;
			failed += !WIFEXITED(status) || WEXITSTATUS(status);
		}
	}
	do
		drain(now_ns(), 0);
	while (rd.more);
	drain(now_ns(), 1);
	CHECK(!failed);
	for (i = 0; i < WRITERS; i++) {
		struct seen *s = seen_of(10 + (uint64_t)i);

		CHECK(s->frames == PER_WRITER && s->next == PER_WRITER);
		CHECK(!s->back && !s->gaps && !s->bad);
	}
	CHECK(!rd.st.lost_bytes && !rd.st.resyncs && !rd.st.refused);
	check_accounted();
	printf("processes: %llu frames, %llu bytes\n",
	       (unsigned long long)rd.st.frames, (unsigned long long)rd.off);
}

/* A record cut short (its writer killed), then whole ones: the cut one
 * is stepped over at once, exactly its bytes, and the rest arrive.  Then
 * a header that vouches for a length no writer gives, and one whose
 * check is wrong: stepped over at once too. */
static void test_cut(void)
{
	static unsigned char buf[REC(1000)];
	uint64_t lost;
	uint32_t seq;
	size_t n;

	fresh_log();
	CHECK(put(wfd, SMALL_STREAM, 0) == 0);
	n = hand_record(buf, 1000, SMALL_STREAM + 1, 0,
			pt_log_check(1000, SMALL_STREAM + 1, 0));
	put_raw(buf, n / 2);
	for (seq = 1; seq <= 10; seq++)
		CHECK(put(wfd, SMALL_STREAM, seq) == 0);
	drain(1, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == 11);
	CHECK(seen_of(SMALL_STREAM)->next == 11 && !seen_of(SMALL_STREAM)->bad);
	CHECK(seen_of(SMALL_STREAM + 1)->frames == 0);
	CHECK(rd.st.lost_bytes == n / 2 && rd.st.resyncs == 1);
	check_accounted();

	lost = rd.st.lost_bytes;
	hand_record(buf, 100, SMALL_STREAM + 1, 0,
		    pt_log_check(PT_LOG_FRAME_MAX + 1, SMALL_STREAM + 1, 0));
	pt_wire_put32(buf + PT_OFF(pt_log_rec, length), PT_LOG_FRAME_MAX + 1);
	put_raw(buf, REC(100));
	CHECK(put(wfd, SMALL_STREAM, 11) == 0);
	drain(1, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == 12 && rd.st.resyncs == 2);
	CHECK(rd.st.lost_bytes == lost + REC(100));

	lost = rd.st.lost_bytes;
	n = hand_record(buf, 100, SMALL_STREAM + 1, 0,
			pt_log_check(100, SMALL_STREAM + 1, 0) ^ 1);
	put_raw(buf, n);
	CHECK(put(wfd, SMALL_STREAM, 12) == 0);
	drain(1, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == 13 && rd.st.resyncs == 3);
	CHECK(rd.st.lost_bytes == lost + n);
	CHECK(seen_of(SMALL_STREAM + 1)->frames == 0);
	check_accounted();
}

/* An incomplete record at the end may be an append in progress: waited
 * for, not delivered and not lost, through the grace; stepped over after
 * it only once a whole record follows; counted lost at once at the end
 * of the run.  A length it claims is waited for, not allocated. */
static void test_incomplete(void)
{
	static unsigned char buf[PT_LOG_REC_HDR + 64];
	uint64_t t = 1000000000ull, claim = 100000;

	fresh_log();
	CHECK(put(wfd, SMALL_STREAM, 0) == 0);
	hand_record(buf, 40, SMALL_STREAM + 1, 0,
		    pt_log_check((uint32_t)claim, SMALL_STREAM + 1, 0));
	pt_wire_put32(buf + PT_OFF(pt_log_rec, length), (uint32_t)claim);
	put_raw(buf, PT_LOG_REC_HDR + 50);
	drain(t, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == 1 && !rd.st.lost_bytes);
	drain(t + PT_LOG_GRACE_NS - 1, 0);
	CHECK(!rd.st.lost_bytes && !rd.st.resyncs);
	/* Past the grace, with nothing after it: still an append that
	 * may finish. */
	drain(t + PT_LOG_GRACE_NS, 0);
	CHECK(!rd.st.lost_bytes && rd.off < file_size());
	/* A whole record after it proves it cut short, but the wait starts
	 * again from the last look. */
	CHECK(put(wfd, SMALL_STREAM, 1) == 0);
	drain(t + 2 * PT_LOG_GRACE_NS - 1, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == 1 && !rd.st.lost_bytes);
	drain(t + 2 * PT_LOG_GRACE_NS, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == 2);
	CHECK(rd.st.lost_bytes == PT_LOG_REC_HDR + 50 && rd.st.resyncs == 1);
	check_accounted();

	/* The largest length there is, a few bytes of it present. */
	hand_record(buf, 40, SMALL_STREAM + 1, 0,
		    pt_log_check(PT_LOG_FRAME_MAX, SMALL_STREAM + 1, 0));
	pt_wire_put32(buf + PT_OFF(pt_log_rec, length), PT_LOG_FRAME_MAX);
	put_raw(buf, PT_LOG_REC_HDR + 10);
	t += 10 * PT_LOG_GRACE_NS;
	drain(t, 0);
	drain(t + 3 * PT_LOG_GRACE_NS, 0);
	CHECK(rd.st.lost_bytes == PT_LOG_REC_HDR + 50 && rd.st.resyncs == 1);
	CHECK(max_cap <= 2 * PT_LOG_READ_CHUNK);
	drain(t + 3 * PT_LOG_GRACE_NS, 1);
	CHECK(rd.st.lost_bytes == 2 * PT_LOG_REC_HDR + 60 && rd.st.resyncs == 2);
	CHECK(seen_of(SMALL_STREAM)->frames == 2);
	check_accounted();
}

/*
 * Appends damage of the given kind: random bytes (with magics: many of
 * them the magic), a header that vouches for a length whose frame is not
 * there, a record with one byte of its header or trailer changed, or a
 * record cut short.  Nothing of it is a whole record.
 */
static void put_garbage(unsigned *seed, int kind, int magics)
{
	static unsigned char buf[REC(4000)];
	uint32_t len;
	size_t n, j;

	switch (kind) {
	case 0:
		n = 1 + (size_t)rand_r(seed) % 3000;
		for (j = 0; j < n; j++)
			buf[j] = (unsigned char)rand_r(seed);
		for (j = 0; magics && j + 4 <= n; j += 1 + (size_t)rand_r(seed) % 64)
			memcpy(buf + j, log_magic_bytes, 4);
		break;
	case 1:
		len = rand_r(seed) % 3 ? (uint32_t)rand_r(seed) % 4000 :
		      (uint32_t)rand_r(seed) % (PT_LOG_FRAME_MAX + 1);
		hand_record(buf, 0, BAD_STREAM, 0, pt_log_check(len, BAD_STREAM, 0));
		pt_wire_put32(buf + PT_OFF(pt_log_rec, length), len);
		n = PT_LOG_REC_HDR + (size_t)rand_r(seed) % 100;
		for (j = PT_LOG_REC_HDR; j < n; j++)
			buf[j] = (unsigned char)rand_r(seed);
		break;
	case 2:
		len = (uint32_t)rand_r(seed) % 2000;
		n = hand_record(buf, len, BAD_STREAM, 0,
				pt_log_check(len, BAD_STREAM, 0));
		j = (size_t)rand_r(seed) % (PT_LOG_REC_HDR + PT_LOG_TRAILER);
		if (j >= PT_LOG_REC_HDR)
			j += len;
		buf[j] ^= (unsigned char)(1 + rand_r(seed) % 255);
		break;
	default:
		len = (uint32_t)rand_r(seed) % 2000;
		n = hand_record(buf, len, BAD_STREAM, 0,
				pt_log_check(len, BAD_STREAM, 0));
		n = (size_t)rand_r(seed) % n;
		break;
	}
	put_raw(buf, n);
}

/* Garbage appended between whole records, drains between at random
 * times: the reader neither crashes nor loops, delivers nothing damaged,
 * and every whole record arrives, in order. */
static void test_scribble(void)
{
	unsigned seed = 7;
	int round, i, op;

	for (round = 0; round < 200; round++) {
		uint64_t t = 1, valid = 0;
		uint32_t seq = 0;
		struct seen *s;

		fresh_log();
		for (i = 0; i < 60; i++) {
			op = rand_r(&seed) % 8;
			if (op < 3) {
				CHECK(put(wfd, SMALL_STREAM, seq++) == 0);
				valid++;
			} else if (op < 7) {
				put_garbage(&seed, op - 3, round % 2);
			} else {
				t += (uint64_t)rand_r(&seed) % (2 * PT_LOG_GRACE_NS);
				drain(t, 0);
			}
		}
		drain(t + PT_LOG_GRACE_NS, 0);
		drain(t + 3 * PT_LOG_GRACE_NS, 1);
		s = seen_of(SMALL_STREAM);
		CHECK(s->frames == valid && s->next == valid);
		CHECK(!s->bad && !s->back && !s->gaps);
		CHECK(max_cap <= 2 * PT_LOG_READ_CHUNK);
		check_accounted();
	}
}

/* A writer killed while it appends large records, another appending
 * small ones meanwhile: every small record arrives, the large ones that
 * were whole arrive intact, what the kill cut short is counted lost. */
static void test_killed(void)
{
	uint64_t lost = 0;
	int round;

	/* Three rounds, more if none of them cut a record (a writer killed
	 * while it waits for its turn to write leaves nothing). */
	for (round = 0; round < 10 && (round < 3 || !lost); round++) {
		struct timespec ts = { 0, 1000000 };
		pid_t bigw, smallw;
		uint64_t t0;
		int status, bad = 0;
		struct seen *s;

		fresh_log();
		bigw = fork();
		if (bigw == 0) {
			int fd = open_append(getpid(), rd.fd);
			uint32_t seq;

			for (seq = 0;; seq++)
				put(fd, BIG_STREAM, seq);
		}
		smallw = fork();
		if (smallw == 0) {
			int fd = open_append(getpid(), rd.fd), fail = fd < 0;
			struct timespec pause = { 0, 200000 };
			uint32_t seq;

			for (seq = 0; seq < 3000 && !fail; seq++) {
				fail = put(fd, SMALL_STREAM, seq) < 0;
				nanosleep(&pause, NULL);
			}
			_exit(fail);
		}
		/* Until the big writer has written, then a little longer,
		 * each round more: the kill lands inside one of its writes. */
		t0 = now_ns();
		while (!seen_of(BIG_STREAM)->frames && now_ns() - t0 < 10000000000ull)
			drain(now_ns(), 0);
		for (t0 = now_ns(); now_ns() - t0 < 20000000ull * (round % 3 + 1);)
			drain(now_ns(), 0);
		/* Not while the reader gives pages back: that holds the
		 * inode's lock, and a writer killed waiting for it has not
		 * begun its record. */
		nanosleep(&ts, NULL);
		kill(bigw, SIGKILL);
		waitpid(bigw, &status, 0);
		while (waitpid(smallw, &status, WNOHANG) == 0) {
			drain(now_ns(), 0);
			nanosleep(&ts, NULL);
		}
		bad = !WIFEXITED(status) || WEXITSTATUS(status);
		do
			drain(now_ns(), 0);
		while (rd.more);
		drain(now_ns(), 1);
		CHECK(!bad);
		s = seen_of(SMALL_STREAM);
		CHECK(s->frames == 3000 && s->next == 3000);
		CHECK(!s->back && !s->gaps && !s->bad);
		s = seen_of(BIG_STREAM);
		CHECK(s->frames > 0 && !s->back && !s->gaps && !s->bad);
		/* At most the record it was writing is lost. */
		CHECK(rd.st.lost_bytes < REC(BIG_FRAME) && rd.st.resyncs <= 1);
		CHECK(max_cap <= PT_LOG_READ_CHUNK + REC(BIG_FRAME) + (64u << 10));
		check_accounted();
		lost += rd.st.lost_bytes;
		printf("killed, round %d: %llu large records, %llu bytes lost\n",
		       round, (unsigned long long)s->frames,
		       (unsigned long long)rd.st.lost_bytes);
	}
	/* An 8 MiB write takes milliseconds, the rest of the loop nothing. */
	CHECK(lost > 0);
}

/* What was read is given back to tmpfs: after a few MiB the file holds
 * far fewer blocks than bytes, and reading goes on past the holes. */
static void test_punch(void)
{
	struct stat st;
	uint32_t seq = 0;

	fresh_log();
	while (file_size() < 3 * PT_LOG_PUNCH_BYTES)
		CHECK(put(wfd, SMALL_STREAM, seq++) == 0);
	CHECK(fstat(rd.fd, &st) == 0 && (uint64_t)st.st_blocks * 512 >= file_size());
	drain(1, 0);
	CHECK(seen_of(SMALL_STREAM)->frames == seq);
	CHECK(fstat(rd.fd, &st) == 0);
	CHECK((uint64_t)st.st_blocks * 512 < file_size() / 4);
	CHECK(rd.punched > file_size() - PT_LOG_PUNCH_BYTES);
	CHECK(rd.punched <= rd.off);
	CHECK(put(wfd, SMALL_STREAM, seq++) == 0);
	drain(2, 1);
	CHECK(seen_of(SMALL_STREAM)->frames == seq);
	CHECK(!seen_of(SMALL_STREAM)->bad && !rd.st.lost_bytes);
	check_accounted();
}

int main(void)
{
	size_t i;

	for (i = 0; i < BIG_FRAME; i++)
		big[i] = frame_byte(BIG_STREAM, 0, i);
	test_create();
	test_one_writer();
	test_processes();
	test_cut();
	test_incomplete();
	test_scribble();
	test_killed();
	test_punch();
	close(wfd);
	pt_log_close(&rd);
	if (failures)
		printf("%d failures\n", failures);
	return failures != 0;
}
