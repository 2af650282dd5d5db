/*
 * The codec of capture versions 2 and 3 (doc/format.md, "Version 2 and 3
 * records"), both ways: the state the writer and the reader keep record
 * by record, pt_v3_encode for the writer and pt_v3_decode for the reader.
 * See capture/v3.h.
 */
#include "capture/v3.h"

#include <stdlib.h>
#include <string.h>

#include "proftrace/wire.h"
#include "capture/frame.h"
#include "base/strbuf.h"

struct pt_v3_state *pt_v3_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_v3_state));
}

void pt_v3_free(struct pt_v3_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < PT_V3_REF_SLOTS; i++)
		free(st->refs[i].buf);
	free(st);
}

/* The peer a record of conn_id has without an explicit PEER. */
static void peer_of(const struct pt_v3_state *st, uint64_t conn_id,
		    uint32_t *pid, uint32_t *uid)
{
	unsigned i = (unsigned)(conn_id % PT_V3_CONN_SLOTS);

	if (st->conns[i].id == conn_id) {
		*pid = st->conns[i].pid;
		*uid = st->conns[i].uid;
	} else {
		*pid = 0;
		*uid = 0;
	}
}

static void peer_set(struct pt_v3_state *st, uint64_t conn_id,
		     uint32_t pid, uint32_t uid)
{
	unsigned i = (unsigned)(conn_id % PT_V3_CONN_SLOTS);

	st->conns[i].id = conn_id;
	st->conns[i].pid = pid;
	st->conns[i].uid = uid;
}

/* The reference of pid, or NULL. */
static const struct pt_v3_ref *ref_of(const struct pt_v3_state *st,
				      uint32_t pid)
{
	const struct pt_v3_ref *ref = &st->refs[pid % PT_V3_REF_SLOTS];

	return ref->valid && ref->pid == pid ? ref : NULL;
}

/*
 * Walk the tail items of a plain payload from `start`: 0 if every item is
 * terminated and no tag is 0x80 or above (so references may replace some),
 * -1 otherwise.
 */
static int tail_plain(const unsigned char *p, size_t start, size_t n)
{
	size_t pos = start, len;
	const char *s;
	unsigned tag;
	int r;

	while ((r = pt_wire_next_item(p, n, &pos, &tag, &s, &len)) > 0)
		if (tag >= 0x80)
			return -1;
	return r;
}

/* Room for n bytes in ref->buf. */
static void ref_reserve(struct pt_v3_ref *ref, size_t n)
{
	if (ref->alloc < n) {
		ref->alloc = n < 256 ? 256 : 2 * n;
		ref->buf = pt_xrealloc(ref->buf, ref->alloc);
	}
}

void pt_v3_note_frame(struct pt_v3_state *st, const unsigned char *frame,
			size_t len)
{
	const unsigned char *p = frame + PT_FRAME_HDR;
	const char *cwd = NULL, *path = NULL, *s;
	size_t n, pos, item, sl, args = 0, cwd_len = 0, path_len = 0;
	struct pt_v3_ref *ref;
	uint32_t pid;
	unsigned type, tag;
	int r;

	if (len < PT_FRAME_HDR + 8)
		return;
	type = frame[PT_OFF(pt_frame_header, type)];
	if (type == PT_REC_EXEC)
		pid = pt_wire_get32(frame + PT_OFF(pt_frame_header, pid));
	else if (type == PT_REC_SPAWN)
		pid = pt_wire_get32(p);              /* child_pid */
	else
		return;
	n = len - PT_FRAME_HDR;
	ref = &st->refs[pid % PT_V3_REF_SLOTS];
	ref->valid = 0;
	/* One pass: this runs for every EXEC and SPAWN the collector takes
	 * in.  Any item that tail_plain would refuse leaves the slot empty. */
	for (pos = 8; item = pos,
	     (r = pt_wire_next_item(p, n, &pos, &tag, &s, &sl)) > 0;) {
		if (tag >= 0x80)
			return;
		if (tag == PT_TAG_ARG) {
			if (args + (pos - item) > PT_V3_REF_MAX)
				return;
			ref_reserve(ref, args + (pos - item));
			memcpy(ref->buf + args, p + item, pos - item);
			args += pos - item;
		} else if (tag == PT_TAG_CWD && !cwd) {
			cwd = s;
			cwd_len = sl;
		} else if (tag == PT_TAG_PATH && !path) {
			path = s;
			path_len = sl;
		}
	}
	if (r < 0)
		return;
	if (args + cwd_len + path_len > PT_V3_REF_MAX)
		return;
	ref_reserve(ref, args + cwd_len + path_len + 1);
	ref->args_len = args;
	ref->has_cwd = cwd != NULL;
	ref->cwd_len = cwd_len;
	if (cwd)
		memcpy(ref->buf + args, cwd, cwd_len);
	ref->has_path = path != NULL;
	ref->path_len = path_len;
	if (path)
		memcpy(ref->buf + args + cwd_len, path, path_len);
	ref->pid = pid;
	ref->valid = 1;
}

/* ---- encoding ---- */

/* Can the frame be stored compact and read back byte for byte?  Its
 * header, decoded, goes to *h. */
static int compactable(const unsigned char *f, size_t len,
		       struct pt_frame_header *h)
{
	if (len < PT_FRAME_HDR)
		return 0;
	pt_wire_get_header(f, h);
	return h->magic == PT_WIRE_MAGIC && h->version == PT_V3_WIRE_VERSION &&
	       h->flags == 0 && h->length == len - PT_FRAME_HDR &&
	       h->raw_length == h->length && h->length <= PT_FRAME_MAX &&
	       h->length >= pt_record_fixed_size(h->type);
}

#define GET32(rec, field) pt_wire_get32(p + PT_OFF(rec, field))
#define GET64(rec, field) pt_wire_get64(p + PT_OFF(rec, field))

/* The fixed part p of a frame with header h as varints; returns the
 * bytes written. */
static size_t put_fixed(struct pt_v3_state *st, unsigned char *o,
			const struct pt_frame_header *h,
			const unsigned char *p, uint32_t peer_uid)
{
	uint32_t pid = h->pid;
	uint64_t time = h->time_ns, off;
	size_t n = 0;

	switch (h->type) {
	case PT_REC_HELLO:
		n += pt_uv_put(o + n, pt_zz32(GET32(pt_rec_hello, ppid) - pid));
		n += pt_uv_put(o + n, pt_zz32(GET32(pt_rec_hello, uid) - peer_uid));
		n += pt_uv_put(o + n, GET32(pt_rec_hello, kind));
		n += pt_uv_put(o + n, GET32(pt_rec_hello, pidns));
		/* The two clocks move together: their offset barely
		 * changes from one HELLO to the next. */
		off = GET64(pt_rec_hello, realtime_ns) - time;
		n += pt_uv_put(o + n, pt_zz64(off - st->clock_off));
		st->clock_off = off;
		n += pt_uv_put(o + n, pt_zz64(time - GET64(pt_rec_hello, start_ns)));
		break;
	case PT_REC_EXEC_FAILED:
		n += pt_uv_put(o + n, GET32(pt_rec_exec_failed, error));
		n += pt_uv_put(o + n, GET32(pt_rec_exec_failed, call));
		break;
	case PT_REC_EXEC:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		n += pt_uv_put(o + n, pt_zz32(GET32(pt_rec_exec, ppid) - pid));
		n += pt_uv_put(o + n, GET32(pt_rec_exec, call));
		break;
	case PT_REC_REAP:
		n += pt_uv_put(o + n, pt_zz32(GET32(pt_rec_reap, child_pid) - pid));
		n += pt_uv_put(o + n, pt_zz32(GET32(pt_rec_reap, wait_status)));
		n += pt_uv_put(o + n, GET32(pt_rec_reap, have_rusage));
		n += pt_uv_put(o + n, GET32(pt_rec_reap, flags));
		n += pt_uv_put(o + n, GET64(pt_rec_reap, utime_us));
		n += pt_uv_put(o + n, GET64(pt_rec_reap, stime_us));
		n += pt_uv_put(o + n, GET64(pt_rec_reap, maxrss_kb));
		break;
	case PT_REC_EXIT:
		n += pt_uv_put(o + n, pt_zz32(GET32(pt_rec_exit, status)));
		n += pt_uv_put(o + n, GET32(pt_rec_exit, how));
		n += pt_uv_put(o + n, GET64(pt_rec_exit, utime_us));
		n += pt_uv_put(o + n, GET64(pt_rec_exit, stime_us));
		n += pt_uv_put(o + n, GET64(pt_rec_exit, maxrss_kb));
		break;
	}
	return n;
}

#undef GET32
#undef GET64

static void add_seg(struct pt_v3_seg *sg, size_t *nsg, const void *p, size_t n)
{
	if (!n)
		return;
	if (*nsg && (const unsigned char *)sg[*nsg - 1].p + sg[*nsg - 1].n ==
		    (const unsigned char *)p) {
		sg[*nsg - 1].n += n;
		return;
	}
	sg[(*nsg)++] = (struct pt_v3_seg){ p, n };
}

/*
 * The tail of a HELLO (payload bytes [from, n)) as pieces, with what its
 * pid's EXEC or SPAWN already said replaced by references.  Returns 1 if
 * some reference was used.
 */
static int hello_tail(const struct pt_v3_ref *ref, const unsigned char *p,
		      size_t from, size_t n, struct pt_v3_seg *sg, size_t *nsg)
{
	static const unsigned char mark[3] = {
		PT_V3_REF_ARGS, PT_V3_REF_CWD, PT_V3_REF_EXE,
	};
	size_t pos, item, sl, run = from, a0 = 0, a1 = 0;
	int used = 0, nruns = 0, in_args = 0;
	const char *s;
	unsigned tag;

	/* The ARG items are replaced only as one run, as they were sent.  The
	 * tail was checked (tail_plain) before. */
	for (pos = from; item = pos,
	     pt_wire_next_item(p, n, &pos, &tag, &s, &sl) > 0;) {
		if (tag == PT_TAG_ARG) {
			if (!in_args) {
				nruns++;
				a0 = item;
			}
			in_args = 1;
			a1 = pos;
		} else {
			in_args = 0;
		}
	}
	if (nruns != 1 || a1 - a0 != ref->args_len ||
	    memcmp(p + a0, ref->buf, ref->args_len))
		a0 = a1 = 0;
	for (pos = from; item = pos,
	     pt_wire_next_item(p, n, &pos, &tag, &s, &sl) > 0;) {
		const unsigned char *m = NULL;

		if (item == a0 && a1) {
			add_seg(sg, nsg, p + run, item - run);
			add_seg(sg, nsg, mark, 1);
			run = pos = a1;
			used = 1;
			continue;
		}
		if (tag == PT_TAG_CWD && ref->has_cwd && sl == ref->cwd_len &&
		    !memcmp(s, ref->buf + ref->args_len, sl))
			m = mark + 1;
		else if (tag == PT_TAG_EXE && ref->has_path &&
			 sl == ref->path_len &&
			 !memcmp(s, ref->buf + ref->args_len + ref->cwd_len, sl))
			m = mark + 2;
		if (m && *nsg + 3 < PT_V3_MAX_SEGS) {
			add_seg(sg, nsg, p + run, item - run);
			add_seg(sg, nsg, m, 1);
			run = pos;
			used = 1;
		}
	}
	add_seg(sg, nsg, p + run, n - run);
	return used;
}

/*
 * Encode one capture record: the head byte and length into hd
 * (PT_V3_HEAD_MAX bytes), the fields into body (PT_V3_FIELDS_MAX bytes),
 * and the record as pieces sg[0..n) that point into hd, body and data.
 * The caller has checked len and kind.  Returns n.
 */
size_t pt_v3_encode(struct pt_v3_state *st, enum pt_cap_kind kind,
		    uint64_t conn_id, uint32_t peer_pid, uint32_t peer_uid,
		    uint64_t recv_ns, const void *data, size_t len,
		    struct pt_v3_seg *sg, unsigned char *hd,
		    unsigned char *body)
{
	const unsigned char *f = data;
	struct pt_frame_header fh;
	size_t nsg = 1, nb = 0, total, i;
	uint32_t cpid, cuid;
	unsigned head = (unsigned)kind & PT_V3_KIND;

	nb += pt_uv_put(body + nb, pt_zz64(conn_id - st->conn));
	st->conn = conn_id;
	peer_of(st, conn_id, &cpid, &cuid);
	if (cpid != peer_pid || cuid != peer_uid) {
		head |= PT_V3_PEER;
		nb += pt_uv_put(body + nb, pt_zz32(peer_pid - st->peer_pid));
		nb += pt_uv_put(body + nb, pt_zz32(peer_uid - st->peer_uid));
		st->peer_pid = peer_pid;
		st->peer_uid = peer_uid;
		peer_set(st, conn_id, peer_pid, peer_uid);
	}
	/* A frame carries its own time; when the collector received it
	 * adds nothing but bytes. */
	if (kind != PT_CAP_FRAME) {
		uint64_t d = recv_ns - st->recv_ns;
		int64_t sd = (int64_t)d;

		head |= PT_V3_RECV;
		if (sd % 1000 == 0) {
			head |= PT_V3_RECV_US;
			d = (uint64_t)(sd / 1000);
		}
		nb += pt_uv_put(body + nb, pt_zz64(d));
		st->recv_ns = recv_ns;
	}
	if (kind == PT_CAP_FRAME && compactable(f, len, &fh)) {
		uint32_t pid = fh.pid, origin = fh.origin;
		uint64_t time = fh.time_ns;
		size_t fixed = pt_record_fixed_size(fh.type);
		const struct pt_v3_ref *ref;

		body[nb++] = fh.type;
		nb += pt_uv_put(body + nb, pt_zz32(pid - peer_pid));
		nb += pt_uv_put(body + nb, origin ? pt_zz32(origin - pid) + 1
						  : 0);
		nb += pt_uv_put(body + nb, pt_zz64(time - st->time_ns));
		st->time_ns = time;
		nb += put_fixed(st, body + nb, &fh, f + PT_FRAME_HDR, peer_uid);
		sg[nsg++] = (struct pt_v3_seg){ body, nb };
		if (fh.type == PT_REC_HELLO && (ref = ref_of(st, pid)) &&
		    tail_plain(f + PT_FRAME_HDR, fixed,
				       len - PT_FRAME_HDR) == 0) {
			if (hello_tail(ref, f + PT_FRAME_HDR, fixed,
				       len - PT_FRAME_HDR, sg, &nsg))
				head |= PT_V3_REFS;
		} else {
			add_seg(sg, &nsg, f + PT_FRAME_HDR + fixed,
				len - PT_FRAME_HDR - fixed);
		}
		pt_v3_note_frame(st, f, len);
	} else {
		if (kind == PT_CAP_FRAME)
			head |= PT_V3_RAW;
		sg[nsg++] = (struct pt_v3_seg){ body, nb };
		add_seg(sg, &nsg, data, len);
	}
	for (total = 0, i = 1; i < nsg; i++)
		total += sg[i].n;
	hd[0] = (unsigned char)head;
	sg[0] = (struct pt_v3_seg){ hd, 1 + pt_uv_put(hd + 1, total) };
	return nsg;
}

/* ---- decoding ---- */

/* A cursor over one record's body; any overrun sets bad. */
struct cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v = 0;
	size_t n = c->bad ? 0 : pt_uv_get(c->p, c->end, &v);

	if (!n)
		c->bad = 1;
	c->p += n;
	return v;
}

static uint32_t cur_u32(struct cur *c)
{
	uint64_t v = cur_u64(c);

	if (v > UINT32_MAX)
		c->bad = 1;
	return (uint32_t)v;
}

static uint32_t cur_z32(struct cur *c)
{
	return pt_unzz32(cur_u32(c));
}

static uint64_t cur_z64(struct cur *c)
{
	return pt_unzz64(cur_u64(c));
}

#define PUT32(rec, field, v) pt_wire_put32(o + PT_OFF(rec, field), v)
#define PUT64(rec, field, v) pt_wire_put64(o + PT_OFF(rec, field), v)

/* The fixed part of a compact frame, back to its little-endian bytes. */
static void get_fixed(struct pt_v3_state *st, struct cur *c, unsigned type,
		      unsigned char *o, uint32_t pid, uint64_t time,
		      uint32_t peer_uid)
{
	uint64_t off;

	switch (type) {
	case PT_REC_HELLO:
		PUT32(pt_rec_hello, ppid, pid + cur_z32(c));
		PUT32(pt_rec_hello, uid, peer_uid + cur_z32(c));
		PUT32(pt_rec_hello, kind, cur_u32(c));
		PUT32(pt_rec_hello, pidns, cur_u32(c));
		off = st->clock_off + cur_z64(c);
		st->clock_off = off;
		PUT64(pt_rec_hello, realtime_ns, time + off);
		PUT64(pt_rec_hello, start_ns, time - cur_z64(c));
		break;
	case PT_REC_EXEC_FAILED:
		PUT32(pt_rec_exec_failed, error, cur_u32(c));
		PUT32(pt_rec_exec_failed, call, cur_u32(c));
		break;
	case PT_REC_EXEC:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		PUT32(pt_rec_exec, ppid, pid + cur_z32(c));
		PUT32(pt_rec_exec, call, cur_u32(c));
		break;
	case PT_REC_REAP:
		PUT32(pt_rec_reap, child_pid, pid + cur_z32(c));
		PUT32(pt_rec_reap, wait_status, cur_z32(c));
		PUT32(pt_rec_reap, have_rusage, cur_u32(c));
		PUT32(pt_rec_reap, flags, cur_u32(c));
		PUT64(pt_rec_reap, utime_us, cur_u64(c));
		PUT64(pt_rec_reap, stime_us, cur_u64(c));
		PUT64(pt_rec_reap, maxrss_kb, cur_u64(c));
		break;
	case PT_REC_EXIT:
		PUT32(pt_rec_exit, status, cur_z32(c));
		PUT32(pt_rec_exit, how, cur_u32(c));
		PUT64(pt_rec_exit, utime_us, cur_u64(c));
		PUT64(pt_rec_exit, stime_us, cur_u64(c));
		PUT64(pt_rec_exit, maxrss_kb, cur_u64(c));
		break;
	}
}

#undef PUT32
#undef PUT64

/*
 * Append a tail that holds references to f, expanded.  Returns 0,
 * or -1 with *why set.
 */
static int expand_tail(struct pt_v3_state *st, struct pt_sb *f, struct cur *c,
		       uint32_t pid, const char **why)
{
	const struct pt_v3_ref *ref = ref_of(st, pid);

	while (c->p < c->end) {
		unsigned t = *c->p;
		const unsigned char *nul;

		if (f->len > PT_FRAME_HDR + PT_FRAME_MAX) {
			*why = "frame length over limit";
			return -1;
		}
		if (t < 0x80) {
			nul = c->p + 1 < c->end ?
			      memchr(c->p + 1, 0, (size_t)(c->end - c->p - 1)) :
			      NULL;
			if (!nul) {
				*why = "unterminated string in record tail";
				return -1;
			}
			pt_sb_add(f, c->p, (size_t)(nul + 1 - c->p));
			c->p = nul + 1;
			continue;
		}
		c->p++;
		if (!ref || t > PT_V3_REF_EXE ||
		    (t == PT_V3_REF_CWD && !ref->has_cwd) ||
		    (t == PT_V3_REF_EXE && !ref->has_path)) {
			*why = "reference to nothing in a frame's tail";
			return -1;
		}
		if (t == PT_V3_REF_ARGS) {
			pt_sb_add(f, ref->buf, ref->args_len);
			continue;
		}
		pt_sb_addch(f, t == PT_V3_REF_CWD ? PT_TAG_CWD : PT_TAG_EXE);
		if (t == PT_V3_REF_CWD)
			pt_sb_add(f, ref->buf + ref->args_len, ref->cwd_len);
		else
			pt_sb_add(f, ref->buf + ref->args_len + ref->cwd_len,
				  ref->path_len);
		pt_sb_addch(f, '\0');
	}
	return 0;
}

/*
 * Rebuild the compact frame in the rest of the body into f.
 * Returns 0, or -1 with *why set.
 */
static int rebuild_frame(struct pt_v3_state *st, struct pt_sb *f, struct cur *c,
			 unsigned head, uint32_t peer_pid, uint32_t peer_uid,
			 const char **why)
{
	unsigned char h[PT_FRAME_HDR + 64];
	struct pt_frame_header fh;
	uint32_t pid, origin;
	uint64_t time, ov;
	size_t fixed;
	unsigned type;

	if (c->p >= c->end) {
		*why = "frame record without a frame";
		return -1;
	}
	type = *c->p++;
	pid = peer_pid + cur_z32(c);
	ov = cur_u64(c);                /* 0, or 1 + the difference */
	if (ov > 1ull << 32)
		c->bad = 1;
	origin = ov ? pid + pt_unzz32(ov - 1) : 0;
	time = st->time_ns + cur_z64(c);
	st->time_ns = time;
	fixed = pt_record_fixed_size(type);
	memset(h, 0, sizeof h);
	get_fixed(st, c, type, h + PT_FRAME_HDR, pid, time, peer_uid);
	if (c->bad) {
		*why = "malformed frame record";
		return -1;
	}
	fh = (struct pt_frame_header){
		.magic = PT_WIRE_MAGIC, .version = PT_V3_WIRE_VERSION,
		.type = (uint8_t)type, .pid = pid, .origin = origin,
		.time_ns = time,
	};
	pt_wire_put_header(h, &fh);     /* the lengths once the tail is in */
	pt_sb_reset(f);
	pt_sb_add(f, h, PT_FRAME_HDR + fixed);
	if (head & PT_V3_REFS) {
		if (expand_tail(st, f, c, pid, why) < 0)
			return -1;
	} else {
		pt_sb_add(f, c->p, (size_t)(c->end - c->p));
	}
	if (f->len > PT_FRAME_HDR + PT_FRAME_MAX) {
		*why = "frame length over limit";
		return -1;
	}
	fh.length = fh.raw_length = (uint32_t)(f->len - PT_FRAME_HDR);
	pt_wire_put_header((unsigned char *)f->buf, &fh);
	return 0;
}

/*
 * Decode one record of a version 2 or 3 capture: head byte head, body
 * [p, end).  Fills hdr as a version 1 record header would be, and *data
 * with its bytes: inside the body, or a frame rebuilt into frame.
 * Returns 0, or -1 with *why set.
 */
int pt_v3_decode(struct pt_v3_state *st, unsigned version, unsigned head,
		 const unsigned char *p, const unsigned char *end,
		 struct pt_cap_record *hdr, const unsigned char **data,
		 struct pt_sb *frame, const char **why)
{
	struct cur cur = { p, end, 0 }, *c = &cur;
	unsigned kind;

	kind = head & PT_V3_KIND;
	if ((kind != PT_CAP_FRAME && (head & PT_V3_REFS ||
				      (head & PT_V3_RECV_US &&
				       (version < 3 ||
					!(head & PT_V3_RECV))))) ||
	    (head & PT_V3_RAW && head & PT_V3_REFS))
		{
		*why = "bad record flags";
		return -1;
	}

	memset(hdr, 0, sizeof *hdr);
	hdr->magic = PT_CAP_RECORD_MAGIC;
	hdr->kind = (uint16_t)kind;
	hdr->conn_id = st->conn + cur_z64(c);
	st->conn = hdr->conn_id;
	if (head & PT_V3_PEER) {
		st->peer_pid += cur_z32(c);
		st->peer_uid += cur_z32(c);
		peer_set(st, hdr->conn_id, st->peer_pid,
				 st->peer_uid);
	}
	peer_of(st, hdr->conn_id, &hdr->peer_pid,
		     &hdr->peer_uid);
	if (head & PT_V3_RECV)
		st->recv_ns += kind != PT_CAP_FRAME && head & PT_V3_RECV_US ?
			       cur_z64(c) * 1000u : cur_z64(c);
	/* Frames have no receive time of their own: the latest known is
	 * the best there is, and keeps the times in order. */
	hdr->recv_ns = st->recv_ns;
	if (c->bad)
		{
		*why = "malformed record header";
		return -1;
	}

	if (kind == PT_CAP_FRAME && !(head & PT_V3_RAW)) {
		if (rebuild_frame(st, frame, c, head, hdr->peer_pid,
				  hdr->peer_uid, why) < 0)
			return -1;
		*data = (const unsigned char *)frame->buf;
		hdr->length = (uint32_t)frame->len;
	} else {
		*data = c->p;
		hdr->length = (uint32_t)(c->end - c->p);
	}
	return 0;
}
