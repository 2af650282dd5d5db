/*
 * Reading capture versions 2 and 3: each compact record back into the
 * record a version 1 capture holds (doc/format.md, "Version 2 and 3
 * records"), with the state capture/v3.c shares with the writer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/reader.h"
#include "capture/le.h"
#include "base/strbuf.h"
#include "base/util.h"

/* ---- version 2 and 3 records ---- */

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

/* The fixed part of a compact frame, back to its little-endian bytes. */
static void get_fixed(struct pt_cap2_state *st, struct cur *c, unsigned type,
		      unsigned char *o, uint32_t pid, uint64_t time,
		      uint32_t peer_uid)
{
	uint64_t off;

	switch (type) {
	case PT_REC_HELLO:
		pt_set32(o, pid + cur_z32(c));
		pt_set32(o + 4, peer_uid + cur_z32(c));
		pt_set32(o + 8, cur_u32(c));
		pt_set32(o + 12, cur_u32(c));
		off = st->clock_off + cur_z64(c);
		st->clock_off = off;
		pt_set64(o + 16, time + off);
		pt_set64(o + 24, time - cur_z64(c));
		break;
	case PT_REC_EXEC_FAILED:
		pt_set32(o, cur_u32(c));
		pt_set32(o + 4, cur_u32(c));
		break;
	case PT_REC_EXEC:
	case PT_REC_SPAWN:
	case PT_REC_FORK:
		pt_set32(o, pid + cur_z32(c));
		pt_set32(o + 4, cur_u32(c));
		break;
	case PT_REC_REAP:
		pt_set32(o, pid + cur_z32(c));
		pt_set32(o + 4, cur_z32(c));
		pt_set32(o + 8, cur_u32(c));
		pt_set32(o + 12, cur_u32(c));
		pt_set64(o + 16, cur_u64(c));
		pt_set64(o + 24, cur_u64(c));
		pt_set64(o + 32, cur_u64(c));
		break;
	case PT_REC_EXIT:
		pt_set32(o, cur_z32(c));
		pt_set32(o + 4, cur_u32(c));
		pt_set64(o + 8, cur_u64(c));
		pt_set64(o + 16, cur_u64(c));
		pt_set64(o + 24, cur_u64(c));
		break;
	}
}

/*
 * Append a tail that holds references to r->frame, expanded.  Returns 0,
 * or -1 with *why set.
 */
static int expand_tail(struct pt_reader *r, struct cur *c, uint32_t pid,
		       const char **why)
{
	const struct pt_cap2_ref *ref = pt_cap2_ref(r->st, pid);
	struct pt_sb *f = &r->frame;

	while (c->p < c->end) {
		unsigned t = *c->p;
		const unsigned char *nul;

		if (f->len > FRAME_HDR + PT_FRAME_MAX) {
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
		if (!ref || t > PT_CAP2_REF_EXE ||
		    (t == PT_CAP2_REF_CWD && !ref->has_cwd) ||
		    (t == PT_CAP2_REF_EXE && !ref->has_path)) {
			*why = "reference to nothing in a frame's tail";
			return -1;
		}
		if (t == PT_CAP2_REF_ARGS) {
			pt_sb_add(f, ref->buf, ref->args_len);
			continue;
		}
		pt_sb_addch(f, t == PT_CAP2_REF_CWD ? PT_TAG_CWD : PT_TAG_EXE);
		if (t == PT_CAP2_REF_CWD)
			pt_sb_add(f, ref->buf + ref->args_len, ref->cwd_len);
		else
			pt_sb_add(f, ref->buf + ref->args_len + ref->cwd_len,
				  ref->path_len);
		pt_sb_addch(f, '\0');
	}
	return 0;
}

/*
 * Rebuild the compact frame in the rest of the body into r->frame.
 * Returns 0, or -1 with *why set.
 */
static int rebuild_frame(struct pt_reader *r, struct cur *c, unsigned head,
			 uint32_t peer_pid, uint32_t peer_uid, const char **why)
{
	struct pt_cap2_state *st = r->st;
	struct pt_sb *f = &r->frame;
	unsigned char h[FRAME_HDR + 64];
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
	get_fixed(st, c, type, h + FRAME_HDR, pid, time, peer_uid);
	if (c->bad) {
		*why = "malformed frame record";
		return -1;
	}
	pt_set32(h, PT_WIRE_MAGIC);
	h[4] = PT_CAP2_WIRE_VERSION;
	h[5] = (unsigned char)type;
	pt_set32(h + 8, pid);
	pt_set32(h + 20, origin);
	pt_set64(h + 24, time);
	pt_sb_reset(f);
	pt_sb_add(f, h, FRAME_HDR + fixed);
	if (head & PT_CAP2_REFS) {
		if (expand_tail(r, c, pid, why) < 0)
			return -1;
	} else {
		pt_sb_add(f, c->p, (size_t)(c->end - c->p));
	}
	if (f->len > FRAME_HDR + PT_FRAME_MAX) {
		*why = "frame length over limit";
		return -1;
	}
	pt_set32((unsigned char *)f->buf + 12, (uint32_t)(f->len - FRAME_HDR));
	pt_set32((unsigned char *)f->buf + 16, (uint32_t)(f->len - FRAME_HDR));
	return 0;
}

int pt_reader_next_record_v2(struct pt_reader *r, struct pt_cap_event *ev)
{
	struct pt_cap2_state *st = r->st;
	const unsigned char *p;
	const char *why = NULL;
	struct cur c = { 0 };
	uint64_t len;
	size_t hn;
	unsigned head, kind;

	if (!pt_reader_fill(r, 1)) {
		if (r->end == r->pos && pt_reader_stream_ended_cleanly(r))
			return 0;
		return pt_reader_damaged(r, r->path, "records", NULL);
	}
	pt_reader_fill(r, 11);                    /* head and length, unless at the end */
	p = r->buf + r->pos;
	head = p[0];
	hn = pt_uv_get(p + 1, r->buf + r->end, &len);
	if (!hn)
		return pt_reader_damaged(r, r->path, "records", r->end - r->pos >= 11 ?
			       "bad record length" : NULL);
	if (len > PT_CAP2_BODY_MAX)
		return pt_reader_damaged(r, r->path, "records", "record length over limit");
	if (!pt_reader_fill(r, 1 + hn + (size_t)len))
		return pt_reader_damaged(r, r->path, "records", NULL);
	p = r->buf + r->pos;
	c.p = p + 1 + hn;
	c.end = c.p + len;
	kind = head & PT_CAP2_KIND;
	if ((kind != PT_CAP_FRAME && (head & PT_CAP2_REFS ||
				      (head & PT_CAP2_RECV_US &&
				       (r->version < 3 ||
					!(head & PT_CAP2_RECV))))) ||
	    (head & PT_CAP2_RAW && head & PT_CAP2_REFS))
		return pt_reader_damaged(r, r->path, "records", "bad record flags");

	memset(ev, 0, sizeof *ev);
	ev->hdr.magic = PT_CAP_RECORD_MAGIC;
	ev->hdr.kind = (uint16_t)kind;
	ev->hdr.conn_id = st->conn + cur_z64(&c);
	st->conn = ev->hdr.conn_id;
	if (head & PT_CAP2_PEER) {
		st->peer_pid += cur_z32(&c);
		st->peer_uid += cur_z32(&c);
		pt_cap2_set_peer(st, ev->hdr.conn_id, st->peer_pid,
				 st->peer_uid);
	}
	pt_cap2_peer(st, ev->hdr.conn_id, &ev->hdr.peer_pid,
		     &ev->hdr.peer_uid);
	if (head & PT_CAP2_RECV)
		st->recv_ns += kind != PT_CAP_FRAME && head & PT_CAP2_RECV_US ?
			       cur_z64(&c) * 1000u : cur_z64(&c);
	/* Frames have no receive time of their own: the latest known is
	 * the best there is, and keeps the times in order. */
	ev->hdr.recv_ns = st->recv_ns;
	if (c.bad)
		return pt_reader_damaged(r, r->path, "records", "malformed record header");

	if (kind == PT_CAP_FRAME && !(head & PT_CAP2_RAW)) {
		if (rebuild_frame(r, &c, head, ev->hdr.peer_pid,
				  ev->hdr.peer_uid, &why) < 0)
			return pt_reader_damaged(r, r->path, "records", why);
		ev->data = (const unsigned char *)r->frame.buf;
		ev->hdr.length = (uint32_t)r->frame.len;
	} else {
		ev->data = c.p;
		ev->hdr.length = (uint32_t)(c.end - c.p);
	}
	if (kind == PT_CAP_FRAME) {
		if (pt_reader_decode_frame(r, ev->data, ev->hdr.length, &why) < 0)
			return pt_reader_damaged(r, r->path, "records", why);
		ev->rec = r->rec;
		if (!(head & PT_CAP2_RAW))
			pt_cap2_note_frame(st, ev->data, ev->hdr.length);
	} else if (kind == PT_CAP_META) {
		pt_reader_add_meta(r, ev->data, ev->hdr.length);
	}
	pt_reader_consume(r, 1 + hn + (size_t)len);
	r->nrec++;
	return 1;
}
