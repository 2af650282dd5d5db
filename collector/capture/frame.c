/* Decoding and validating wire frames; see frame.h. */
#include "capture/frame.h"
#include "proftrace/wire.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/strbuf.h"

int pt_frame_header_decode(const void *p, struct pt_frame_header *out,
			   const char **why)
{
	pt_wire_get_header(p, out);
	if (out->magic != PT_WIRE_MAGIC) {
		*why = "bad frame magic";
		return -1;
	}
	if (out->version != PT_WIRE_VERSION) {
		*why = "unsupported frame version";
		return -1;
	}
	if (out->length > PT_FRAME_MAX || out->raw_length > PT_FRAME_MAX) {
		*why = "frame length over limit";
		return -1;
	}
	if (out->flags & ~(uint16_t)PT_FRAME_DEFLATED) {
		*why = "unknown frame flags";
		return -1;
	}
	if (!(out->flags & PT_FRAME_DEFLATED) && out->raw_length != out->length) {
		*why = "raw length differs from length in a plain frame";
		return -1;
	}
	return 0;
}

unsigned char *pt_frame_inflate(const struct pt_frame_header *hdr,
				const unsigned char *payload, const char **why)
{
	/* +1 so that a stream longer than announced is detected, not cut. */
	unsigned char *out = malloc((size_t)hdr->raw_length + 1);
	z_stream zs;
	int rc;

	if (!out) {
		*why = "out of memory inflating frame";
		return NULL;
	}
	memset(&zs, 0, sizeof zs);
	if (inflateInit(&zs) != Z_OK) {
		free(out);
		*why = "inflateInit failed";
		return NULL;
	}
	zs.next_in = (unsigned char *)payload;
	zs.avail_in = hdr->length;
	zs.next_out = out;
	zs.avail_out = hdr->raw_length + 1;
	rc = inflate(&zs, Z_FINISH);
	if (rc != Z_STREAM_END || zs.total_out != hdr->raw_length ||
	    zs.avail_in != 0) {
		inflateEnd(&zs);
		free(out);
		*why = rc == Z_STREAM_END ? "deflated frame size mismatch"
					  : "corrupt deflate stream";
		return NULL;
	}
	inflateEnd(&zs);
	return out;
}

size_t pt_record_fixed_size(unsigned type)
{
	switch (type) {
	case PT_REC_HELLO:       return sizeof(struct pt_rec_hello);
	case PT_REC_EXEC:        return sizeof(struct pt_rec_exec);
	case PT_REC_EXEC_FAILED: return sizeof(struct pt_rec_exec_failed);
	case PT_REC_SPAWN:       return sizeof(struct pt_rec_spawn);
	case PT_REC_FORK:        return sizeof(struct pt_rec_fork);
	case PT_REC_REAP:        return sizeof(struct pt_rec_reap);
	case PT_REC_EXIT:        return sizeof(struct pt_rec_exit);
	default:                 return 0;
	}
}

#define GET32(rec, field) pt_wire_get32(p + PT_OFF(rec, field))
#define GET64(rec, field) pt_wire_get64(p + PT_OFF(rec, field))

static void parse_fixed(unsigned type, const unsigned char *p,
			struct pt_record *rec)
{
	switch (type) {
	case PT_REC_HELLO:
		rec->u.hello.ppid = GET32(pt_rec_hello, ppid);
		rec->u.hello.uid = GET32(pt_rec_hello, uid);
		rec->u.hello.kind = GET32(pt_rec_hello, kind);
		rec->u.hello.pidns = GET32(pt_rec_hello, pidns);
		rec->u.hello.realtime_ns = GET64(pt_rec_hello, realtime_ns);
		rec->u.hello.start_ns = GET64(pt_rec_hello, start_ns);
		break;
	case PT_REC_EXEC:               /* all four share the 8-byte shape */
	case PT_REC_EXEC_FAILED:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		rec->u.exec.ppid = GET32(pt_rec_exec, ppid);
		rec->u.exec.call = GET32(pt_rec_exec, call);
		break;
	case PT_REC_REAP:
		rec->u.reap.child_pid = GET32(pt_rec_reap, child_pid);
		rec->u.reap.wait_status = (int32_t)GET32(pt_rec_reap, wait_status);
		rec->u.reap.have_rusage = GET32(pt_rec_reap, have_rusage);
		rec->u.reap.utime_us = GET64(pt_rec_reap, utime_us);
		rec->u.reap.stime_us = GET64(pt_rec_reap, stime_us);
		rec->u.reap.maxrss_kb = GET64(pt_rec_reap, maxrss_kb);
		break;
	case PT_REC_EXIT:
		rec->u.exit.status = (int32_t)GET32(pt_rec_exit, status);
		rec->u.exit.how = GET32(pt_rec_exit, how);
		rec->u.exit.utime_us = GET64(pt_rec_exit, utime_us);
		rec->u.exit.stime_us = GET64(pt_rec_exit, stime_us);
		rec->u.exit.maxrss_kb = GET64(pt_rec_exit, maxrss_kb);
		break;
	}
}

#undef GET32
#undef GET64

/*
 * The checks and the fixed part that parsing and checking share: rec
 * holds the header and the fixed fields, the tail's items are all
 * terminated, and the number of ARG and ENV items is in *nargs, *nenv.
 * Returns 0, or -1 with *why set.
 */
static int begin_record(const struct pt_frame_header *hdr,
			const unsigned char *payload, struct pt_record *rec,
			size_t *nargs, size_t *nenv, const char **why)
{
	size_t n = hdr->raw_length, pos = pt_record_fixed_size(hdr->type), len;
	const char *s;
	unsigned tag;
	int r;

	memset(rec, 0, sizeof *rec);
	rec->hdr = *hdr;
	if (n < pos) {
		*why = "record shorter than its fixed part";
		return -1;
	}
	parse_fixed(hdr->type, payload, rec);
	*nargs = *nenv = 0;
	while ((r = pt_wire_next_item(payload, n, &pos, &tag, &s, &len)) > 0) {
		if (tag == PT_TAG_ARG)
			++*nargs;
		else if (tag == PT_TAG_ENV)
			++*nenv;
	}
	if (r < 0) {
		*why = "unterminated string in record tail";
		return -1;
	}
	return 0;
}

int pt_record_parse(const struct pt_frame_header *hdr,
		    const unsigned char *payload, struct pt_record *rec,
		    const char **why)
{
	size_t n = hdr->raw_length, pos, len, nargs, nenv, ai = 0, ei = 0;
	const char *s;
	unsigned tag;

	if (begin_record(hdr, payload, rec, &nargs, &nenv, why) < 0)
		return -1;
	rec->argv = calloc(nargs + 1, sizeof *rec->argv);
	rec->env = calloc(nenv + 1, sizeof *rec->env);
	if (!rec->argv || !rec->env) {
		pt_record_free(rec);
		*why = "out of memory parsing record";
		return -1;
	}
	pos = pt_record_fixed_size(hdr->type);
	while (pt_wire_next_item(payload, n, &pos, &tag, &s, &len) > 0) {
		switch (tag) {
		case PT_TAG_EXE:  rec->exe = s; break;
		case PT_TAG_CWD:  rec->cwd = s; break;
		case PT_TAG_PATH: rec->path = s; break;
		case PT_TAG_ARG:  rec->argv[ai++] = s; break;
		case PT_TAG_ENV:  rec->env[ei++] = s; break;
		case PT_TAG_ARGV_TRUNCATED:
			rec->argv_truncated = atoi(s);
			break;
		case PT_TAG_CPU_BEFORE: rec->cpu_before = s; break;
		case PT_TAG_CPU: rec->cpu = s; break;
		case PT_TAG_ERRNO: rec->spawn_errno = atoi(s); break;
		default: break;         /* unknown tags are skipped */
		}
	}
	rec->argc = nargs;
	rec->envc = nenv;
	return 0;
}

int pt_record_check(const struct pt_frame_header *hdr,
		    const unsigned char *payload, struct pt_record *rec,
		    const char **why)
{
	size_t nargs, nenv;

	return begin_record(hdr, payload, rec, &nargs, &nenv, why);
}

int pt_frame_check_whole(const unsigned char *p, size_t len,
			 struct pt_frame_header *h, struct pt_record *rec,
			 const char **why)
{
	if (len < PT_FRAME_HDR) {
		*why = "shorter than a header";
		return -1;
	}
	if (pt_frame_header_decode(p, h, why) < 0)
		return -1;
	if (len != PT_FRAME_HDR + (size_t)h->length) {
		*why = "length other than the record's";
		return -1;
	}
	if (h->flags & PT_FRAME_DEFLATED) {
		*why = "deflated";
		return -1;
	}
	return pt_record_check(h, p + PT_FRAME_HDR, rec, why);
}

void pt_record_free(struct pt_record *rec)
{
	free(rec->argv);
	free(rec->env);
	rec->argv = NULL;
	rec->env = NULL;
}

void pt_frame_build_begin(struct pt_sb *sb, uint8_t type, uint32_t pid,
			  uint64_t time_ns, const void *fixed, size_t n)
{
	struct pt_frame_header h = {
		.magic = htole32(PT_WIRE_MAGIC),
		.version = PT_WIRE_VERSION,
		.type = type,
		.pid = htole32(pid),
		.time_ns = htole64(time_ns),
	};

	pt_sb_reset(sb);
	pt_sb_add(sb, &h, sizeof h);
	pt_sb_add(sb, fixed, n);
}

void pt_frame_build_item(struct pt_sb *sb, unsigned tag, const char *s,
			 size_t n)
{
	pt_sb_addch(sb, (char)tag);
	pt_sb_add(sb, s, n);
	pt_sb_addch(sb, 0);
}

void pt_frame_build_end(struct pt_sb *sb)
{
	struct pt_frame_header *h = (struct pt_frame_header *)sb->buf;
	uint32_t len = htole32((uint32_t)(sb->len - sizeof *h));

	memcpy(&h->length, &len, sizeof len);
	memcpy(&h->raw_length, &len, sizeof len);
}
