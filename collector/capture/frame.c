/* Decoding and validating wire frames; see frame.h. */
#include "capture/frame.h"
#include "capture/le.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int pt_frame_header_decode(const void *p, struct pt_frame_header *out,
			   const char **why)
{
	const unsigned char *b = p;

	out->magic = pt_get32(b + 0);
	out->version = b[4];
	out->type = b[5];
	out->flags = pt_get16(b + 6);
	out->pid = pt_get32(b + 8);
	out->length = pt_get32(b + 12);
	out->raw_length = pt_get32(b + 16);
	out->origin = pt_get32(b + 20);
	out->time_ns = pt_get64(b + 24);

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

static void parse_fixed(unsigned type, const unsigned char *p,
			struct pt_record *rec)
{
	switch (type) {
	case PT_REC_HELLO:
		rec->u.hello.ppid = pt_get32(p);
		rec->u.hello.uid = pt_get32(p + 4);
		rec->u.hello.kind = pt_get32(p + 8);
		rec->u.hello.pidns = pt_get32(p + 12);
		rec->u.hello.realtime_ns = pt_get64(p + 16);
		rec->u.hello.start_ns = pt_get64(p + 24);
		break;
	case PT_REC_EXEC:               /* all four share the 8-byte shape */
	case PT_REC_EXEC_FAILED:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		rec->u.exec.ppid = pt_get32(p);
		rec->u.exec.call = pt_get32(p + 4);
		break;
	case PT_REC_REAP:
		rec->u.reap.child_pid = pt_get32(p);
		rec->u.reap.wait_status = (int32_t)pt_get32(p + 4);
		rec->u.reap.have_rusage = pt_get32(p + 8);
		rec->u.reap.utime_us = pt_get64(p + 16);
		rec->u.reap.stime_us = pt_get64(p + 24);
		rec->u.reap.maxrss_kb = pt_get64(p + 32);
		break;
	case PT_REC_EXIT:
		rec->u.exit.status = (int32_t)pt_get32(p);
		rec->u.exit.how = pt_get32(p + 4);
		rec->u.exit.utime_us = pt_get64(p + 8);
		rec->u.exit.stime_us = pt_get64(p + 16);
		rec->u.exit.maxrss_kb = pt_get64(p + 24);
		break;
	}
}

int pt_record_parse(const struct pt_frame_header *hdr,
		    const unsigned char *payload, struct pt_record *rec,
		    const char **why)
{
	size_t n = hdr->raw_length, fixed = pt_record_fixed_size(hdr->type);
	size_t pos, nargs = 0, nenv = 0, ai = 0, ei = 0;

	memset(rec, 0, sizeof *rec);
	rec->hdr = *hdr;
	if (n < fixed) {
		*why = "record shorter than its fixed part";
		return -1;
	}
	parse_fixed(hdr->type, payload, rec);

	/* First pass: validate items and count the repeated ones. */
	for (pos = fixed; pos < n;) {
		const unsigned char *s = payload + pos + 1;
		const unsigned char *nul = memchr(s, 0, n - pos - 1);

		if (pos + 1 >= n || !nul) {
			*why = "unterminated string in record tail";
			return -1;
		}
		if (payload[pos] == PT_TAG_ARG)
			nargs++;
		else if (payload[pos] == PT_TAG_ENV)
			nenv++;
		pos = (size_t)(nul - payload) + 1;
	}
	rec->argv = calloc(nargs + 1, sizeof *rec->argv);
	rec->env = calloc(nenv + 1, sizeof *rec->env);
	if (!rec->argv || !rec->env) {
		pt_record_free(rec);
		*why = "out of memory parsing record";
		return -1;
	}
	for (pos = fixed; pos < n;) {
		const char *s = (const char *)payload + pos + 1;

		switch (payload[pos]) {
		case PT_TAG_EXE:  rec->exe = s; break;
		case PT_TAG_CWD:  rec->cwd = s; break;
		case PT_TAG_PATH: rec->path = s; break;
		case PT_TAG_ARG:  rec->argv[ai++] = s; break;
		case PT_TAG_ENV:  rec->env[ei++] = s; break;
		case PT_TAG_ARGV_TRUNCATED:
			rec->argv_truncated = atoi(s);
			break;
		case PT_TAG_CPU_BEFORE: rec->cpu_before = s; break;
		default: break;         /* unknown tags are skipped */
		}
		pos += strlen(s) + 2;
	}
	rec->argc = nargs;
	rec->envc = nenv;
	return 0;
}

int pt_record_check(const struct pt_frame_header *hdr,
		    const unsigned char *payload, struct pt_record *rec,
		    const char **why)
{
	size_t n = hdr->raw_length, fixed = pt_record_fixed_size(hdr->type);
	const unsigned char *p = payload + fixed, *end = payload + n, *nul;

	memset(rec, 0, sizeof *rec);
	rec->hdr = *hdr;
	if (n < fixed) {
		*why = "record shorter than its fixed part";
		return -1;
	}
	parse_fixed(hdr->type, payload, rec);
	/* Each item is a tag byte and a string: the next NUL after the tag
	 * ends it. */
	for (; p < end; p = nul + 1) {
		nul = p + 1 < end ? memchr(p + 1, 0, (size_t)(end - p - 1))
				  : NULL;
		if (!nul) {
			*why = "unterminated string in record tail";
			return -1;
		}
	}
	return 0;
}

void pt_record_free(struct pt_record *rec)
{
	free(rec->argv);
	free(rec->env);
	rec->argv = NULL;
	rec->env = NULL;
}

const char *pt_rec_type_name(unsigned type)
{
	static const char *const names[PT_REC_TYPE_MAX] = {
		[PT_REC_HELLO] = "HELLO", [PT_REC_EXEC] = "EXEC",
		[PT_REC_EXEC_FAILED] = "EXEC_FAILED", [PT_REC_SPAWN] = "SPAWN",
		[PT_REC_FORK] = "FORK", [PT_REC_REAP] = "REAP",
		[PT_REC_EXIT] = "EXIT", [PT_REC_STOP] = "STOP",
	};
	return type < PT_REC_TYPE_MAX && names[type] ? names[type] : "?";
}
