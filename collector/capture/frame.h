/*
 * Decoding wire frames (include/proftrace/wire.h).
 *
 * Nothing here trusts its input: every length is checked against the bytes
 * actually present, and a malformed frame yields an error string that names
 * what is wrong.  Decoded records point into the payload they were parsed
 * from; they live as long as that buffer.
 */
#ifndef PT_FRAME_H
#define PT_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "proftrace/wire.h"

struct pt_sb;

/* One decoded record: the header, the fixed part and the tail strings. */
struct pt_record {
	struct pt_frame_header hdr;     /* host byte order */
	union {
		struct pt_rec_hello hello;
		struct pt_rec_exec exec;
		struct pt_rec_exec_failed exec_failed;
		struct pt_rec_spawn spawn;
		struct pt_rec_fork fork;
		struct pt_rec_reap reap;
		struct pt_rec_exit exit;
	} u;                            /* host byte order; zero if unknown type */
	const char *exe, *cwd, *path;   /* NULL when absent */
	const char **argv;              /* argc entries, NULL-terminated */
	size_t argc;
	const char **env;               /* "NAME=value", envc entries */
	size_t envc;
	int argv_truncated;             /* original argc, or 0 */
	const char *cpu_before;         /* PT_TAG_CPU_BEFORE, NULL if absent */
	const char *cpu;                /* PT_TAG_CPU (EXEC), NULL if absent */
	int spawn_errno;                /* PT_TAG_ERRNO, or 0 */
};

/*
 * Check the header at p (n bytes available, n >= sizeof header) and convert
 * it to host order in *out.  Returns 0, or -1 with *why set to a static
 * string (bad magic, unknown version, oversized length...).
 */
int pt_frame_header_decode(const void *p, struct pt_frame_header *out,
			   const char **why);

/*
 * Inflate a PT_FRAME_DEFLATED payload of hdr->length bytes into a new
 * malloc'd buffer of exactly hdr->raw_length bytes.  Returns the buffer, or
 * NULL with *why set (corrupt stream, size mismatch, out of memory).
 */
unsigned char *pt_frame_inflate(const struct pt_frame_header *hdr,
				const unsigned char *payload, const char **why);

/*
 * Parse the raw (inflated) payload of a frame whose header is hdr into *rec.
 * rec->argv and rec->env are malloc'd; release them with pt_record_free().
 * Unknown record types and unknown tail tags are accepted and skipped.
 * Returns 0, or -1 with *why set (short fixed part, unterminated string).
 */
int pt_record_parse(const struct pt_frame_header *hdr,
		    const unsigned char *payload, struct pt_record *rec,
		    const char **why);

/*
 * Check the payload as pt_record_parse() does and fill rec's header and
 * fixed part, but allocate nothing: its strings and vectors stay empty.
 * For the collector, which only needs to know that the frame is well
 * formed.  Returns 0, or -1 with *why set, exactly when pt_record_parse()
 * would fail (but for lack of memory).
 */
int pt_record_check(const struct pt_frame_header *hdr,
		    const unsigned char *payload, struct pt_record *rec,
		    const char **why);

/*
 * The whole plain frame of len bytes at p (a record of the run log):
 * its header decoded into *h and its record checked into *rec, as
 * pt_record_check() does.  Returns 0, or -1 with *why set: a bad header,
 * a length other than len, a deflated payload, or a bad record.
 */
int pt_frame_check_whole(const unsigned char *p, size_t len,
			 struct pt_frame_header *h, struct pt_record *rec,
			 const char **why);

/* Bytes of the fixed part of a record type; 0 for unknown types. */
size_t pt_record_fixed_size(unsigned type);

/* Free what pt_record_parse allocated (not the payload). */
void pt_record_free(struct pt_record *rec);

/*
 * Frames the collector writes itself (the watcher's, the tracer's):
 * start sb anew with the header of a frame of type for pid at time_ns,
 * and its fixed part (n bytes); add tagged items; then set its lengths.
 */
void pt_frame_build_begin(struct pt_sb *sb, uint8_t type, uint32_t pid,
			  uint64_t time_ns, const void *fixed, size_t n);
void pt_frame_build_item(struct pt_sb *sb, unsigned tag, const char *s,
			 size_t n);
void pt_frame_build_end(struct pt_sb *sb);

#endif
