/*
 * Perfetto protobuf trace; see perfetto.h.
 *
 * Field numbers are those of Perfetto's published trace format
 * (protos/perfetto/trace/: trace_packet.proto, the track_event/ protos,
 * interned_data/interned_data.proto, clock_snapshot.proto).  What the
 * importers (trace_processor, hence the UI) rely on, and the choices
 * made for them:
 *
 *  - A TrackDescriptor comes before the first event on its track, and a
 *    parent's before its children's.
 *  - All packets are on one sequence.  Its first packet sets
 *    SEQ_INCREMENTAL_STATE_CLEARED and interns the fixed strings
 *    (annotation names, categories); a packet that uses an interned id
 *    sets SEQ_NEEDS_INCREMENTAL_STATE, and the id is defined in that
 *    packet or an earlier one.  Interned ids start at 1 (0 is invalid).
 *  - Timestamps are absolute (no incremental clock), so packets need not
 *    be in time order: the importer sorts them.  The slices of one track
 *    are written in order, begin before end.
 *  - Flows use flow_ids / terminating_flow_ids, which are fixed64: the
 *    parent's begin carries one id per child, the child's begin
 *    terminates it.
 *  - Exec tracks are named by the label, as their slice is: the UI shows
 *    the name of a collapsed track (an unnamed one may be named after its
 *    first slice, or not), and the copy costs 5 % of the compressed file.
 *
 * Size: interning makes repeated strings (program names, arguments such
 * as -I paths and -O2, working directories) cost an id of one to three
 * bytes, which brings the packets to 40 % of the trace JSON; what is left
 * is mostly strings that occur once, so the packets are then compressed
 * (flush()).  bench/NOTES.md has the figures.
 */
#include "views/perfetto.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/analysis.h"
#include "base/pbuf.h"
#include "base/strbuf.h"
#include "base/utf8.h"
#include "pt-config.h"

#define FLUSH_AT (1u << 20)
/* zlib's level 3: 10 % larger than its default, a third less CPU in
 * all (bench/NOTES.md). */
#define ZIP_LEVEL 3
/* Longest string value interned (see value_str). */
#define INTERN_MAX 200
/* One sequence for the whole trace; 1 is the tracing service's own. */
#define SEQ_ID 7

/* TracePacket */
enum {
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10,
	TP_TRACK_EVENT = 11, TP_INTERNED_DATA = 12, TP_SEQ_FLAGS = 13,
	TP_COMPRESSED_PACKETS = 50, TP_TRACK_DESCRIPTOR = 60,
	TP_FIRST_ON_SEQ = 87,
};
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
/* ClockSnapshot, Clock; builtin clock ids */
enum { CS_CLOCKS = 1, CS_PRIMARY = 2, CLK_ID = 1, CLK_TIMESTAMP = 2 };
enum { CLOCK_REALTIME = 1, CLOCK_BOOTTIME = 6 };
/* TrackDescriptor, ProcessDescriptor, CounterDescriptor */
enum {
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_PARENT_UUID = 5,
	TD_COUNTER = 8, TD_CHILD_ORDERING = 11,
};
enum { CHILD_ORDER_CHRONOLOGICAL = 2 };
enum { PD_PID = 1, PD_PROCESS_NAME = 6 };
enum { CD_UNIT = 3, UNIT_COUNT = 2 };
/* TrackEvent */
enum {
	TE_CATEGORY_IIDS = 3, TE_DEBUG_ANNOTATIONS = 4, TE_TYPE = 9,
	TE_NAME_IID = 10, TE_TRACK_UUID = 11, TE_COUNTER_VALUE = 30,
	TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_COUNTER = 4 };
/* DebugAnnotation */
enum {
	DA_NAME_IID = 1, DA_BOOL = 2, DA_INT = 4, DA_STRING = 6, DA_ARRAY = 12,
	DA_STRING_IID = 17,
};
/* InternedData and its entries (all {iid = 1, name or str = 2}) */
enum {
	ID_CATEGORIES = 1, ID_EVENT_NAMES = 2, ID_ANNOTATION_NAMES = 3,
	ID_STRING_VALUES = 29, IE_IID = 1, IE_NAME = 2,
};

/* Interned debug annotation names, in iid order from 1. */
enum ann {
	A_ARGV = 1, A_CWD, A_EXE, A_PID, A_PPID, A_EXIT_CODE, A_SIGNAL,
	A_USER_CPU, A_SYS_CPU, A_MAX_RSS, A_PACKAGE, A_UNTRACED,
	A_END_UNKNOWN, A_KILLED, A_ARGV_TRUNC,
};
static const char *const ann_names[] = {
	NULL, "argv", "cwd", "exe", "pid", "ppid", "exit_code", "signal",
	"user_cpu_us", "sys_cpu_us", "max_rss_kb", "package", "untraced",
	"end_unknown", "killed", "argv_truncated",
};
#define N_ANN (sizeof ann_names / sizeof ann_names[0])

/* Interned categories. */
enum { CAT_EXEC = 1, CAT_FORK = 2 };
static const char *const cat_names[] = { NULL, "exec", "fork" };

struct pf {
	const struct pt_model *m;
	struct pt_analysis a;
	FILE *f;
	int err;
	struct pt_sb out;               /* packets not yet written */
	struct pt_sb ev;                /* the event being built */
	struct pt_sb idata;             /* what it interns */
	struct pt_sb tmp, text;
	struct pt_sb zip;               /* the compressed packets */
	struct pt_strtab names;         /* event names: iid = id + 1 */
	struct pt_strtab values;        /* annotation strings: iid = id + 1 */
	uint8_t *declared;              /* per exec: track descriptor out */
	uint32_t *chain;                /* scratch for declare() */
	uint64_t proc_uuid0;            /* capture c: proc_uuid0 + 3c, then
					 * its two counters */
};

/*
 * Write the packets gathered in w->out as one packet of compressed
 * packets: a zlib stream of them as they would stand in the file (each
 * with its Trace.packet tag and length).  The importer inflates it and
 * reads what is inside as if it stood in the file, in order, sequence
 * state included.  The file ends up under a tenth of the trace JSON.
 */
static void flush(struct pf *w)
{
	uLongf n = compressBound(w->out.len);
	size_t mark;

	if (w->out.len && !w->err) {
		pt_sb_reset(&w->zip);
		pt_sb_grow(&w->zip, n);
		if (compress2((Bytef *)w->zip.buf, &n,
			      (const Bytef *)w->out.buf, w->out.len,
			      ZIP_LEVEL) != Z_OK)
			w->err = ENOMEM;        /* its only possible failure */
		pt_sb_reset(&w->out);
		mark = pt_pb_open(&w->out, 1);
		pt_pb_bytes(&w->out, TP_COMPRESSED_PACKETS, w->zip.buf, n);
		pt_pb_close(&w->out, mark);
		if (!w->err &&
		    fwrite(w->out.buf, 1, w->out.len, w->f) != w->out.len)
			w->err = errno ? errno : EIO;
	}
	pt_sb_reset(&w->out);
}

static uint64_t exec_uuid(const struct pt_exec *e)
{
	return (uint64_t)e->id + 1;
}

static uint64_t rel_ns(const struct pf *w, int64_t t)
{
	return t > w->a.t0 ? (uint64_t)(t - w->a.t0) : 0;
}

/*
 * A string field holding s (n bytes) as valid UTF-8: each byte that does
 * not start a valid sequence becomes U+FFFD, as in the other views.
 */
static void text_field(struct pf *w, struct pt_sb *sb, uint32_t field,
		       const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;

	while (i < n) {
		l = p[i] < 0x80 ? 1 : pt_utf8_len(p + i, n - i);
		if (!l)
			break;
		i += l;
	}
	if (i == n) {
		pt_pb_bytes(sb, field, s, n);
		return;
	}
	pt_sb_reset(&w->text);
	pt_sb_add(&w->text, s, i);
	while (i < n) {
		l = pt_utf8_len(p + i, n - i);
		if (l) {
			pt_sb_add(&w->text, p + i, l);
			i += l;
		} else {
			pt_sb_add(&w->text, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	pt_pb_bytes(sb, field, w->text.buf, w->text.len);
}

/* One interned entry {iid, name} of InternedData field `kind`. */
static void intern_entry(struct pf *w, uint32_t kind, uint64_t iid,
			 const char *s, size_t n)
{
	size_t mark = pt_pb_open(&w->idata, kind);

	pt_pb_uint(&w->idata, IE_IID, iid);
	text_field(w, &w->idata, IE_NAME, s, n);
	pt_pb_close(&w->idata, mark);
}

/* The iid of s in table t (InternedData field kind), defined if new. */
static uint64_t intern(struct pf *w, struct pt_strtab *t, uint32_t kind,
		       const char *s, size_t n)
{
	int added;
	uint64_t iid = (uint64_t)pt_strtab_intern(t, s, n, &added) + 1;

	if (added)
		intern_entry(w, kind, iid, s, n);
	return iid;
}

/*
 * Append one packet: the event built in w->ev (TracePacket field `what`),
 * at `ts` unless ts is UINT64_MAX, with the interned data gathered in
 * w->idata, on the sequence with `flags`.
 */
static void packet(struct pf *w, uint32_t what, uint64_t ts, int seq,
		   uint32_t flags)
{
	size_t mark = pt_pb_open(&w->out, 1);

	if (ts != UINT64_MAX)
		pt_pb_uint(&w->out, TP_TIMESTAMP, ts);
	pt_pb_bytes(&w->out, what, w->ev.buf, w->ev.len);
	if (w->idata.len)
		pt_pb_bytes(&w->out, TP_INTERNED_DATA, w->idata.buf,
			    w->idata.len);
	if (seq)
		pt_pb_uint(&w->out, TP_SEQ_ID, SEQ_ID);
	if (flags)
		pt_pb_uint(&w->out, TP_SEQ_FLAGS, flags);
	pt_pb_close(&w->out, mark);
	pt_sb_reset(&w->ev);
	pt_sb_reset(&w->idata);
	if (w->out.len >= FLUSH_AT)
		flush(w);
}

/* ---- the start of the trace ---- */

/*
 * Ties timestamp 0 (the trace's clock, BOOTTIME by default) to the
 * earliest start on the realtime clock, so that the UI can show the time
 * of day.
 */
static void clock_snapshot(struct pf *w)
{
	size_t c;

	c = pt_pb_open(&w->ev, CS_CLOCKS);
	pt_pb_uint(&w->ev, CLK_ID, CLOCK_BOOTTIME);
	pt_pb_uint(&w->ev, CLK_TIMESTAMP, 0);
	pt_pb_close(&w->ev, c);
	c = pt_pb_open(&w->ev, CS_CLOCKS);
	pt_pb_uint(&w->ev, CLK_ID, CLOCK_REALTIME);
	pt_pb_uint(&w->ev, CLK_TIMESTAMP, w->a.t0 > 0 ? (uint64_t)w->a.t0 : 0);
	pt_pb_close(&w->ev, c);
	pt_pb_uint(&w->ev, CS_PRIMARY, CLOCK_BOOTTIME);
	packet(w, TP_CLOCK_SNAPSHOT, 0, 1, 0);
}

/* The sequence's first packet: clears its state, interns fixed names. */
static void sequence_start(struct pf *w)
{
	size_t i, mark;

	for (i = 1; i < N_ANN; i++)
		intern_entry(w, ID_ANNOTATION_NAMES, i, ann_names[i],
			     strlen(ann_names[i]));
	for (i = 1; i < sizeof cat_names / sizeof cat_names[0]; i++)
		intern_entry(w, ID_CATEGORIES, i, cat_names[i],
			     strlen(cat_names[i]));
	mark = pt_pb_open(&w->out, 1);
	pt_pb_bytes(&w->out, TP_INTERNED_DATA, w->idata.buf, w->idata.len);
	pt_pb_uint(&w->out, TP_SEQ_ID, SEQ_ID);
	pt_pb_uint(&w->out, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	pt_pb_uint(&w->out, TP_FIRST_ON_SEQ, 1);
	pt_pb_close(&w->out, mark);
	pt_sb_reset(&w->idata);
}

static void counter_track(struct pf *w, uint64_t uuid, uint64_t parent,
			  const char *name)
{
	size_t mark;

	pt_pb_uint(&w->ev, TD_UUID, uuid);
	pt_pb_uint(&w->ev, TD_PARENT_UUID, parent);
	pt_pb_str(&w->ev, TD_NAME, name);
	mark = pt_pb_open(&w->ev, TD_COUNTER);
	pt_pb_uint(&w->ev, CD_UNIT, UNIT_COUNT);
	pt_pb_close(&w->ev, mark);
	packet(w, TP_TRACK_DESCRIPTOR, UINT64_MAX, 0, 0);
}

/* Per capture: its process track and its two counter tracks. */
static void capture_tracks(struct pf *w)
{
	size_t nc = w->m->ncaptures ? w->m->ncaptures : 1, c, mark;

	for (c = 0; c < nc; c++) {
		uint64_t uuid = w->proc_uuid0 + 3 * c;

		pt_sb_reset(&w->tmp);
		pt_capture_title(w->m, c, &w->tmp);
		pt_pb_uint(&w->ev, TD_UUID, uuid);
		mark = pt_pb_open(&w->ev, TD_PROCESS);
		pt_pb_uint(&w->ev, PD_PID, c + 1);
		text_field(w, &w->ev, PD_PROCESS_NAME, w->tmp.buf,
			   w->tmp.len);
		pt_pb_close(&w->ev, mark);
		pt_pb_uint(&w->ev, TD_CHILD_ORDERING,
			   CHILD_ORDER_CHRONOLOGICAL);
		packet(w, TP_TRACK_DESCRIPTOR, UINT64_MAX, 0, 0);
		counter_track(w, uuid + 1, uuid, "running");
		counter_track(w, uuid + 2, uuid, "busy");
	}
}

/* ---- executions ---- */

static void track_of(struct pf *w, const struct pt_exec *e)
{
	pt_pb_uint(&w->ev, TD_UUID, exec_uuid(e));
	pt_pb_uint(&w->ev, TD_PARENT_UUID,
		   e->parent ? exec_uuid(e->parent)
			     : w->proc_uuid0 + 3 * (uint64_t)e->capture);
	pt_sb_reset(&w->tmp);
	pt_exec_label(e, &w->tmp);
	text_field(w, &w->ev, TD_NAME, w->tmp.buf, w->tmp.len);
	if (e->first_child)
		pt_pb_uint(&w->ev, TD_CHILD_ORDERING,
			   CHILD_ORDER_CHRONOLOGICAL);
	packet(w, TP_TRACK_DESCRIPTOR, UINT64_MAX, 0, 0);
}

/* Declare e's track, after its ancestors' (a parent usually comes first,
 * but two starts in the same nanosecond may be in either order). */
static void declare(struct pf *w, const struct pt_exec *e)
{
	size_t n = 0;

	for (; e && !w->declared[e->id]; e = e->parent) {
		w->chain[n++] = e->id;
		w->declared[e->id] = 1;
	}
	while (n > 0)
		track_of(w, w->m->execs[w->chain[--n]]);
}

static void ann_int(struct pf *w, enum ann name, int64_t v)
{
	size_t mark = pt_pb_open(&w->ev, TE_DEBUG_ANNOTATIONS);

	pt_pb_uint(&w->ev, DA_NAME_IID, name);
	pt_pb_int(&w->ev, DA_INT, v);
	pt_pb_close(&w->ev, mark);
}

static void ann_true(struct pf *w, enum ann name)
{
	size_t mark = pt_pb_open(&w->ev, TE_DEBUG_ANNOTATIONS);

	pt_pb_uint(&w->ev, DA_NAME_IID, name);
	pt_pb_uint(&w->ev, DA_BOOL, 1);
	pt_pb_close(&w->ev, mark);
}

/*
 * A string value: interned when short, written out when longer than
 * INTERN_MAX.  Long strings (a shell's whole command line) are nearly
 * always unique: interning them would only add an id, and keep a copy of
 * each in memory until the end.
 */
static void value_str(struct pf *w, const char *s, size_t n)
{
	if (n > INTERN_MAX)
		text_field(w, &w->ev, DA_STRING, s, n);
	else
		pt_pb_uint(&w->ev, DA_STRING_IID,
			   intern(w, &w->values, ID_STRING_VALUES, s, n));
}

static void ann_str(struct pf *w, enum ann name, const char *s, size_t n)
{
	size_t mark = pt_pb_open(&w->ev, TE_DEBUG_ANNOTATIONS);

	pt_pb_uint(&w->ev, DA_NAME_IID, name);
	value_str(w, s, n);
	pt_pb_close(&w->ev, mark);
}

static void ann_argv(struct pf *w, const struct pt_exec *e)
{
	size_t mark = pt_pb_open(&w->ev, TE_DEBUG_ANNOTATIONS), i;

	pt_pb_uint(&w->ev, DA_NAME_IID, A_ARGV);
	for (i = 0; i < e->argc; i++) {
		const char *a = pt_exec_arg(e, i);
		size_t el = pt_pb_open(&w->ev, DA_ARRAY);

		value_str(w, a, strlen(a));
		pt_pb_close(&w->ev, el);
	}
	pt_pb_close(&w->ev, mark);
}

static void exec_begin(struct pf *w, const struct pt_exec *e)
{
	const struct pt_exec *c;

	pt_pb_uint(&w->ev, TE_CATEGORY_IIDS,
		   e->type == PT_EXEC_FORK ? CAT_FORK : CAT_EXEC);
	pt_pb_uint(&w->ev, TE_TYPE, TYPE_SLICE_BEGIN);
	pt_pb_uint(&w->ev, TE_TRACK_UUID, exec_uuid(e));
	pt_sb_reset(&w->tmp);
	pt_exec_label(e, &w->tmp);
	pt_pb_uint(&w->ev, TE_NAME_IID,
		   intern(w, &w->names, ID_EVENT_NAMES, w->tmp.buf,
			  w->tmp.len));
	ann_argv(w, e);
	ann_int(w, A_PID, e->pid);
	ann_int(w, A_PPID, e->ppid);
	ann_str(w, A_CWD, e->cwd, strlen(e->cwd));
	ann_str(w, A_EXE, e->exe, strlen(e->exe));
	if (e->exit_code >= 0)
		ann_int(w, A_EXIT_CODE, e->exit_code);
	if (e->signal >= 0)
		ann_int(w, A_SIGNAL, e->signal);
	if (e->utime_us >= 0)
		ann_int(w, A_USER_CPU, e->utime_us);
	if (e->stime_us >= 0)
		ann_int(w, A_SYS_CPU, e->stime_us);
	if (e->maxrss_kb >= 0)
		ann_int(w, A_MAX_RSS, e->maxrss_kb);
	pt_sb_reset(&w->tmp);
	pt_exec_package(e, &w->tmp);
	if (w->tmp.len)
		ann_str(w, A_PACKAGE, w->tmp.buf, w->tmp.len);
	if (e->flags & PT_EXF_UNTRACED)
		ann_true(w, A_UNTRACED);
	if (e->flags & PT_EXF_END_UNKNOWN)
		ann_true(w, A_END_UNKNOWN);
	if (e->flags & PT_EXF_KILLED)
		ann_true(w, A_KILLED);
	if (e->flags & PT_EXF_ARGV_TRUNC)
		ann_true(w, A_ARGV_TRUNC);
	/* Flow ids are the child's id + 1: unique, and one per arrow. */
	for (c = e->first_child; c; c = c->next_sibling)
		pt_pb_fixed64(&w->ev, TE_FLOW_IDS, exec_uuid(c));
	if (e->parent)
		pt_pb_fixed64(&w->ev, TE_TERMINATING_FLOW_IDS, exec_uuid(e));
	packet(w, TP_TRACK_EVENT, rel_ns(w, e->start_ns), 1,
	       SEQ_NEEDS_INCREMENTAL_STATE);
}

static void slice_end(struct pf *w, uint64_t track, uint64_t ts)
{
	pt_pb_uint(&w->ev, TE_TYPE, TYPE_SLICE_END);
	pt_pb_uint(&w->ev, TE_TRACK_UUID, track);
	packet(w, TP_TRACK_EVENT, ts, 1, 0);
}

static int sub_cmp(const void *pa, const void *pb)
{
	const struct pt_sub_event *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	/* The longer one first, so that it encloses the other. */
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	return 0;
}

/*
 * The hook for what programs record about themselves: ev[0..n) (sorted
 * here) as slices on e's track, inside its slice (see perfetto.h).
 */
static void exec_sub_events(struct pf *w, const struct pt_exec *e,
			    struct pt_sub_event *ev, size_t n)
{
	int64_t stack[64];
	size_t depth = 0, i;

	if (!n)
		return;
	qsort(ev, n, sizeof *ev, sub_cmp);
	for (i = 0; i < n; i++) {
		int64_t s = ev[i].start_ns, t = ev[i].end_ns;

		if (s < e->start_ns)
			s = e->start_ns;
		while (depth && stack[depth - 1] <= s)
			slice_end(w, exec_uuid(e), rel_ns(w, stack[--depth]));
		if (t > (depth ? stack[depth - 1] : e->end_ns))
			t = depth ? stack[depth - 1] : e->end_ns;
		if (t < s || depth == sizeof stack / sizeof stack[0])
			continue;
		pt_pb_uint(&w->ev, TE_TYPE, TYPE_SLICE_BEGIN);
		pt_pb_uint(&w->ev, TE_TRACK_UUID, exec_uuid(e));
		pt_pb_uint(&w->ev, TE_NAME_IID,
			   intern(w, &w->names, ID_EVENT_NAMES, ev[i].name,
				  strlen(ev[i].name)));
		packet(w, TP_TRACK_EVENT, rel_ns(w, s), 1,
		       SEQ_NEEDS_INCREMENTAL_STATE);
		stack[depth++] = t;
	}
	while (depth)
		slice_end(w, exec_uuid(e), rel_ns(w, stack[--depth]));
}

static void exec_slice(struct pf *w, const struct pt_exec *e,
		       pt_perfetto_subs_fn *subs, void *arg)
{
	struct pt_sub_event *ev = NULL;
	size_t n;

	declare(w, e);
	exec_begin(w, e);
	if (subs) {
		n = subs(arg, e, &ev);
		exec_sub_events(w, e, ev, n);
	}
	slice_end(w, exec_uuid(e),
		  rel_ns(w, e->end_ns > e->start_ns ? e->end_ns : e->start_ns));
}

/* ---- counters ---- */

static void counter_value(struct pf *w, uint64_t track, uint64_t ts,
			  int64_t v)
{
	pt_pb_uint(&w->ev, TE_TYPE, TYPE_COUNTER);
	pt_pb_uint(&w->ev, TE_TRACK_UUID, track);
	pt_pb_int(&w->ev, TE_COUNTER_VALUE, v);
	packet(w, TP_TRACK_EVENT, ts, 1, 0);
}

/*
 * Per capture, the number of running and of busy executions (pt_sweep),
 * a value each time it changes: the first at its first start (no 0
 * before it, which would share that timestamp and might sort after it).
 */
static void counters(struct pf *w)
{
	size_t nc = w->m->ncaptures ? w->m->ncaptures : 1, i;
	uint32_t *last = pt_xcalloc(2 * nc, sizeof *last);
	struct pt_sweep s;

	pt_sweep_init(&s, &w->a);
	while (pt_sweep_next(&s) && !w->err) {
		uint64_t ts = rel_ns(w, s.t);

		for (i = 0; i < s.ndirty; i++) {
			uint32_t c = s.dirty[i];
			uint64_t uuid = w->proc_uuid0 + 3 * (uint64_t)c;

			if (s.cap_running[c] != last[2 * c])
				counter_value(w, uuid + 1, ts,
					      last[2 * c] = s.cap_running[c]);
			if (s.cap_busy[c] != last[2 * c + 1])
				counter_value(w, uuid + 2, ts,
					      last[2 * c + 1] = s.cap_busy[c]);
		}
	}
	pt_sweep_free(&s);
	free(last);
}

/* The events programs wrote about themselves, as the model holds them. */
struct model_subs {
	const struct pt_model *m;
	struct pt_sub_event *ev;
	size_t cap;
};

static size_t model_subs(void *arg, const struct pt_exec *e,
			 struct pt_sub_event **ev)
{
	struct model_subs *ms = arg;
	const struct pt_sub *s;
	size_t n, i, k = 0;

	s = pt_model_subs(ms->m, e, &n);
	if (n > ms->cap) {
		ms->cap = n;
		ms->ev = pt_xrealloc(ms->ev, n * sizeof *ms->ev);
	}
	/* Slices only: instants and counters have no span to nest. */
	for (i = 0; i < n; i++)
		if (s[i].ph == 'X')
			ms->ev[k++] = (struct pt_sub_event){
				.start_ns = s[i].start_ns,
				.end_ns = s[i].start_ns + s[i].dur_ns,
				.name = s[i].name,
			};
	*ev = ms->ev;
	return k;
}

int pt_perfetto_write(const struct pt_model *m, FILE *f)
{
	struct model_subs ms = { .m = m };
	int rc = pt_perfetto_write_subs(m, f, model_subs, &ms);

	free(ms.ev);
	return rc;
}

int pt_perfetto_write_subs(const struct pt_model *m, FILE *f,
			   pt_perfetto_subs_fn *subs, void *arg)
{
	struct pf w;
	size_t i;

	memset(&w, 0, sizeof w);
	w.m = m;
	w.f = f;
	pt_sb_init(&w.out);
	pt_sb_init(&w.ev);
	pt_sb_init(&w.idata);
	pt_sb_init(&w.tmp);
	pt_sb_init(&w.text);
	pt_sb_init(&w.zip);
	pt_strtab_init(&w.names);
	pt_strtab_init(&w.values);
	pt_analyze_tree(&w.a, m);
	w.declared = pt_xcalloc(m->n ? m->n : 1, 1);
	w.chain = pt_xcalloc(m->n ? m->n : 1, sizeof *w.chain);
	w.proc_uuid0 = (uint64_t)m->n + 1;

	pt_sb_grow(&w.out, FLUSH_AT + 65536);
	sequence_start(&w);
	clock_snapshot(&w);
	capture_tracks(&w);
	for (i = 0; i < m->n && !w.err; i++)
		exec_slice(&w, m->execs[i], subs, arg);
	if (!w.err)
		counters(&w);
	flush(&w);
	if (!w.err && fflush(f) != 0)
		w.err = errno ? errno : EIO;

	pt_sb_release(&w.out);
	pt_sb_release(&w.ev);
	pt_sb_release(&w.idata);
	pt_sb_release(&w.tmp);
	pt_sb_release(&w.text);
	pt_sb_release(&w.zip);
	pt_strtab_free(&w.names);
	pt_strtab_free(&w.values);
	free(w.declared);
	free(w.chain);
	pt_analysis_free(&w.a);
	if (w.err) {
		errno = w.err;
		return -1;
	}
	return 0;
}
