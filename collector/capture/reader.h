/*
 * Inside the capture reader (capture/): the reader's state, shared by the
 * files that fill it.  Only capture/ includes this; the interface is
 * capture/read.h.
 *
 * read.c opens a capture and reads its records (the compact ones of
 * versions 2 and 3 through capture/v3.c); inflate.c inflates the gzip
 * stream ahead in a thread of its own; spool.c reads spool directories.
 */
#ifndef PT_CAPTURE_READER_H
#define PT_CAPTURE_READER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "capture/gunzip.h"
#include "capture/read.h"
#include "capture/v3.h"
#include "base/strbuf.h"
#include "base/worker.h"

#define READ_CHUNK (64u << 10)  /* bytes inflated ahead at once */
#define RING       32           /* chunks inflated ahead of the parsing */

enum rstate {
	RS_RUN,                 /* reading */
	RS_END,                 /* clean end reached */
	RS_DAMAGED,             /* a warning was printed; nothing more */
};

enum spool_state {
	SP_NEXT_FILE,           /* open the next file */
	SP_CONNECT,             /* first frame read, CONNECT to deliver */
	SP_FIRST,               /* deliver the frame read for CONNECT */
	SP_FRAMES,              /* read and deliver frames */
};

/*
 * The thread that inflates: each chunk is what one pt_gunzip_read()
 * returned.  After the last one it sets done, with how the stream ended;
 * the reader touches the stream again only after it saw done (or stopped
 * the thread).
 */
struct inflater {
	struct pt_worker w;
	unsigned char *chunk[RING];
	size_t len[RING];
	size_t head, count;     /* the reader takes chunk[head]; count full */
	int done;
	int gz_err;
	const char *gz_msg;
};

struct pt_reader {
	char *path;
	struct pt_gunzip *gz;
	struct inflater *inf;   /* NULL: fill() inflates */
	unsigned char *buf;
	size_t cap, pos, end;
	uint64_t off;           /* stream offset of buf[pos] */
	int at_eof;             /* the stream has nothing more */
	int gz_err;             /* zlib error seen at the end, or Z_OK */
	const char *gz_msg;
	uint64_t nrec;          /* records (frames, in a spool) delivered */
	enum rstate state;
	unsigned char *inflated;
	struct pt_record rec;   /* the last parsed frame, to free */
	struct pt_sb meta;      /* "key\0value\0" of every META record */
	uint32_t version;       /* of the capture file */
	struct pt_v3_state *st;       /* version 2, 3: what the writer knew */
	struct pt_sb frame;     /* version 2, 3: the frame rebuilt */

	/* Spool directory mode. */
	int is_dir;
	char **files;
	size_t nfiles, fi;
	enum spool_state sp;
	int sp_damaged;         /* some file was damaged: end with -1 */
	uint32_t sp_pid, sp_uid;
	uint64_t sp_last_ns;
	struct pt_sb file_path;
	struct pt_frame_header sp_hdr;
	size_t sp_len;          /* bytes of the current frame at buf[pos] */
};

void pt_reader_consume(struct pt_reader *r, size_t n);

/* Warn once about damage at the current offset and stop. */
int pt_reader_damaged(struct pt_reader *r, const char *file, const char *unit,
		   const char *why);

/*
 * Decode the frame of `len` bytes at p into r->rec (inflating it
 * when needed).  Returns 0, or -1 with *why set.
 */
int pt_reader_decode_frame(struct pt_reader *r, const unsigned char *p,
			size_t len, const char **why);

/*
 * Make `need` bytes available at buf[pos].  Returns 1, or 0 if the stream
 * ends first (r->gz_err says whether it ended cleanly).
 */
int pt_reader_fill(struct pt_reader *r, size_t need);

/* Start inflating r->gz ahead in a thread.  Without one, fill() reads. */
void pt_reader_inflater_start(struct pt_reader *r);

void pt_reader_inflater_stop(struct pt_reader *r);

int pt_reader_next_spool(struct pt_reader *r, struct pt_cap_event *ev);

int pt_reader_open_spool(struct pt_reader *r);

/* Drop what the previous event pointed into. */
void pt_reader_release_event(struct pt_reader *r);

/* A stream that ended where it was read up to: clean, or cut short. */
int pt_reader_stream_ended_cleanly(struct pt_reader *r);

#endif
