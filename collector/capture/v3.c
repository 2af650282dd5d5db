/* The memory shared by the writer and the reader of versions 2 and 3; see
 * capture-v2.h. */
#include "capture/v3.h"

#include <stdlib.h>
#include <string.h>

#include "capture/le.h"
#include "base/strbuf.h"

#define FRAME_HDR 32

struct pt_cap2_state *pt_cap2_new(void)
{
	return pt_xcalloc(1, sizeof(struct pt_cap2_state));
}

void pt_cap2_free(struct pt_cap2_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < PT_CAP2_REF_SLOTS; i++)
		free(st->refs[i].buf);
	free(st);
}

void pt_cap2_peer(const struct pt_cap2_state *st, uint64_t conn_id,
		  uint32_t *pid, uint32_t *uid)
{
	unsigned i = (unsigned)(conn_id % PT_CAP2_CONN_SLOTS);

	if (st->conns[i].id == conn_id) {
		*pid = st->conns[i].pid;
		*uid = st->conns[i].uid;
	} else {
		*pid = 0;
		*uid = 0;
	}
}

void pt_cap2_set_peer(struct pt_cap2_state *st, uint64_t conn_id,
		      uint32_t pid, uint32_t uid)
{
	unsigned i = (unsigned)(conn_id % PT_CAP2_CONN_SLOTS);

	st->conns[i].id = conn_id;
	st->conns[i].pid = pid;
	st->conns[i].uid = uid;
}

const struct pt_cap2_ref *pt_cap2_ref(const struct pt_cap2_state *st,
				      uint32_t pid)
{
	const struct pt_cap2_ref *ref = &st->refs[pid % PT_CAP2_REF_SLOTS];

	return ref->valid && ref->pid == pid ? ref : NULL;
}

int pt_cap2_tail_plain(const unsigned char *p, size_t start, size_t n)
{
	size_t pos = start;

	while (pos < n) {
		const unsigned char *nul;

		if (p[pos] >= 0x80 || pos + 1 >= n)
			return -1;
		nul = memchr(p + pos + 1, 0, n - pos - 1);
		if (!nul)
			return -1;
		pos = (size_t)(nul - p) + 1;
	}
	return 0;
}

/* Room for n bytes in ref->buf. */
static void ref_reserve(struct pt_cap2_ref *ref, size_t n)
{
	if (ref->alloc < n) {
		ref->alloc = n < 256 ? 256 : 2 * n;
		ref->buf = pt_xrealloc(ref->buf, ref->alloc);
	}
}

void pt_cap2_note_frame(struct pt_cap2_state *st, const unsigned char *frame,
			size_t len)
{
	const unsigned char *p = frame + FRAME_HDR;
	const unsigned char *cwd = NULL, *path = NULL, *nul;
	size_t n, pos, next, args = 0, cwd_len = 0, path_len = 0;
	struct pt_cap2_ref *ref;
	uint32_t pid;
	unsigned type;

	if (len < FRAME_HDR + 8)
		return;
	type = frame[5];
	if (type == PT_REC_EXEC)
		pid = pt_get32(frame + 8);
	else if (type == PT_REC_SPAWN)
		pid = pt_get32(p);              /* child_pid */
	else
		return;
	n = len - FRAME_HDR;
	ref = &st->refs[pid % PT_CAP2_REF_SLOTS];
	ref->valid = 0;
	/* One pass: this runs for every EXEC and SPAWN the collector takes
	 * in.  Any item that tail_plain would refuse leaves the slot empty. */
	for (pos = 8; pos < n; pos = next) {
		if (p[pos] >= 0x80 || pos + 1 >= n ||
		    !(nul = memchr(p + pos + 1, 0, n - pos - 1)))
			return;
		next = (size_t)(nul - p) + 1;
		if (p[pos] == PT_TAG_ARG) {
			if (args + (next - pos) > PT_CAP2_REF_MAX)
				return;
			ref_reserve(ref, args + (next - pos));
			memcpy(ref->buf + args, p + pos, next - pos);
			args += next - pos;
		} else if (p[pos] == PT_TAG_CWD && !cwd) {
			cwd = p + pos + 1;
			cwd_len = next - pos - 2;
		} else if (p[pos] == PT_TAG_PATH && !path) {
			path = p + pos + 1;
			path_len = next - pos - 2;
		}
	}
	if (args + cwd_len + path_len > PT_CAP2_REF_MAX)
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
