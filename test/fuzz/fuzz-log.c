/*
 * Fuzz target: the collector's reader of the run log
 * (collector/collect/log.c), fed a file of any content, appended in
 * pieces between drains as programs of the run would append it, whole
 * records by the library's writer (preload/log.c), records cut short as
 * a killed writer leaves them, and raw bytes as a scribbler writes them.
 * Each frame delivered is read to its last byte (ASan sees a read outside
 * the reader's buffer) and its record checked as the reader promised to;
 * at the end every byte of the file must be delivered or counted lost,
 * and the reader must have read each byte once.
 *
 * Input: a sequence of operations, each a byte b and its arguments:
 *   b % 4 == 0: raw: a 16-bit length n, then n bytes appended as they are;
 *   b % 4 == 1: record: a 16-bit length n, a flags byte, then the n bytes
 *               of a frame, appended by pt_log_put as stream b >> 2;
 *   b % 4 == 2: cut: a 16-bit frame length and a 16-bit count: that many
 *               bytes (fewer than the record's) of a record of stream
 *               b >> 2 are appended;
 *   b % 4 == 3: drain, the clock first advanced by (b >> 2) sixteenths of
 *               the grace.
 * A final drain ends every input.  Lengths are little-endian and cut
 * short by the input's end.
 *
 * Built for libFuzzer (meson -Dfuzz=true, clang) or with replay.c.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/log.h"
#include "pt-log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t delivered;      /* bytes of the records handed over */
static volatile unsigned char sink;

static int deliver(void *ctx, uint64_t stream, uint32_t flags,
		   const unsigned char *frame, size_t len)
{
	/* The reader delivers frames in its own buffer, the record's header
	 * just before and its trailer just after: looking there checks it
	 * delivered only what it had checked. */
	const unsigned char *rec = frame - PT_LOG_REC_HDR;
	uint32_t check = pt_log_check((uint32_t)len, stream, flags);
	unsigned char sum = 0;
	size_t i;

	(void)ctx;
	if (len > PT_LOG_FRAME_MAX ||
	    pt_wire_get32(rec + PT_OFF(pt_log_rec, magic)) != PT_LOG_MAGIC ||
	    pt_wire_get32(rec + PT_OFF(pt_log_rec, length)) != len ||
	    pt_wire_get64(rec + PT_OFF(pt_log_rec, stream)) != stream ||
	    pt_wire_get32(rec + PT_OFF(pt_log_rec, flags)) != flags ||
	    pt_wire_get32(rec + PT_OFF(pt_log_rec, check)) != check ||
	    pt_wire_get32(frame + len) != check)
		abort();
	for (i = 0; i < len; i++)
		sum ^= frame[i];
	sink = sum;
	delivered += PT_LOG_REC_HDR + (uint64_t)len + PT_LOG_TRAILER;
	/* Refusing some exercises the reader's other path. */
	return flags & 0x80 ? -1 : 0;
}

static size_t take16(const uint8_t *data, size_t size, size_t *pos)
{
	size_t v = 0;

	if (*pos < size)
		v = data[(*pos)++];
	if (*pos < size)
		v |= (size_t)data[(*pos)++] << 8;
	return v;
}

static void append(int fd, const void *p, size_t n)
{
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
}

static void append_cut(int fd, uint64_t stream, size_t len, size_t cut)
{
	static unsigned char rec[PT_LOG_REC_HDR + 65536 + PT_LOG_TRAILER];
	uint32_t check = pt_log_check((uint32_t)len, stream, 0);
	size_t i, n = PT_LOG_REC_HDR + len + PT_LOG_TRAILER;

	pt_wire_put32(rec + PT_OFF(pt_log_rec, magic), PT_LOG_MAGIC);
	pt_wire_put32(rec + PT_OFF(pt_log_rec, length), (uint32_t)len);
	pt_wire_put64(rec + PT_OFF(pt_log_rec, stream), stream);
	pt_wire_put32(rec + PT_OFF(pt_log_rec, flags), 0);
	pt_wire_put32(rec + PT_OFF(pt_log_rec, check), check);
	for (i = 0; i < len; i++)
		rec[PT_LOG_REC_HDR + i] = (unsigned char)(i * 7);
	pt_wire_put32(rec + PT_LOG_REC_HDR + len, check);
	append(fd, rec, cut % n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_log_reader rd;
	uint64_t now = 1, before;
	size_t pos = 0, n, len;
	struct stat st;
	char path[64];
	int fd;
	uint8_t b;

	if (pt_log_create(&rd) < 0)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", rd.fd);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		abort();
	delivered = 0;
	while (pos < size) {
		b = data[pos++];
		switch (b % 4) {
		case 0:
			n = take16(data, size, &pos);
			n = n < size - pos ? n : size - pos;
			append(fd, data + pos, n);
			pos += n;
			break;
		case 1:
			n = take16(data, size, &pos);
			len = pos < size ? data[pos++] : 0;
			n = n < size - pos ? n : size - pos;
			if (pt_log_put(fd, b >> 2, (uint32_t)len, data + pos, n) < 0)
				abort();
			pos += n;
			break;
		case 2:
			len = take16(data, size, &pos);
			n = take16(data, size, &pos);
			append_cut(fd, b >> 2, len, n);
			break;
		default:
			now += (uint64_t)(b >> 2) * (PT_LOG_GRACE_NS / 16);
			before = rd.st.bytes_read;
			if (pt_log_drain(&rd, now, 0, deliver, NULL) < 0)
				abort();
			if (rd.st.bytes_read - before > PT_LOG_DRAIN_MAX)
				abort();
			break;
		}
	}
	if (pt_log_drain(&rd, now, 1, deliver, NULL) < 0 || fstat(rd.fd, &st) < 0)
		abort();
	/* Everything was read once, and went somewhere. */
	if (rd.off != (uint64_t)st.st_size || rd.len != rd.start ||
	    rd.st.bytes_read != (uint64_t)st.st_size ||
	    delivered + rd.st.lost_bytes != (uint64_t)st.st_size)
		abort();
	close(fd);
	pt_log_close(&rd);
	return 0;
}
