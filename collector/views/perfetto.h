/*
 * The Perfetto exporter: Perfetto's native protobuf trace (a Trace of
 * TracePackets carrying TrackDescriptors and TrackEvents), for
 * ui.perfetto.dev and trace_processor.  doc/views.md and
 * doc/man/proftrace-convert.1.scd describe the output; what a reader may rely
 * on:
 *
 *  - one process track per capture (ProcessDescriptor, pid = capture
 *    index + 1), named after its host and command;
 *  - one track per execution, its parent the track of its parent
 *    execution (a root's: its capture's), so that the UI shows the
 *    process tree as nested, collapsible tracks; children in start order;
 *  - on it one slice (SLICE_BEGIN, SLICE_END) named by the execution's
 *    label, category "exec" or "fork", its details as debug annotations;
 *  - a flow from each parent's slice to each child's;
 *  - counter tracks "running" and "busy" per capture;
 *  - timestamps in nanoseconds from the earliest start; a clock snapshot
 *    ties them to the realtime clock (Unix epoch);
 *  - every packet on one sequence, whose first packet clears the
 *    incremental state; names and string values are interned;
 *  - the packets stored in packets of compressed packets (zlib).
 */
#ifndef PT_PERFETTO_H
#define PT_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/*
 * Write m to f as a Perfetto protobuf trace.  Returns 0, or -1 if a write
 * failed (errno tells why).  Strings are valid UTF-8: each byte that is
 * not part of valid UTF-8 becomes U+FFFD.
 */
int pt_perfetto_write(const struct pt_model *m, FILE *f);

/*
 * An event a program recorded about itself (a compiler's phases, a build
 * tool's rules), to be shown inside its execution's slice.
 * pt_perfetto_write() takes them from the model (pt_model_subs(): the
 * slices, not the instants or counters); pt_perfetto_write_subs() from
 * the caller.
 */
struct pt_sub_event {
	int64_t start_ns, end_ns;       /* Unix epoch ns, as the model's */
	const char *name;
};

/*
 * The sub-events of e: sets *ev to an array the callee owns (which the
 * writer may reorder, and which need stay valid only until the next
 * call) and returns how many it holds.
 */
typedef size_t pt_perfetto_subs_fn(void *arg, const struct pt_exec *e,
				   struct pt_sub_event **ev);

/*
 * As pt_perfetto_write(), with each execution's sub-events from subs
 * (NULL: none) as slices nested in its slice, on its track.  Events that
 * overlap without nesting, or reach outside the execution, are clipped to
 * what encloses them: slices on one track must nest.
 */
int pt_perfetto_write_subs(const struct pt_model *m, FILE *f,
			   pt_perfetto_subs_fn *subs, void *arg);

#endif
