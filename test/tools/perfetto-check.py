#!/usr/bin/env python3
"""Check a Perfetto protobuf trace against the format's rules.

    perfetto-check.py --protoc PROTOC TRACE.pftrace

The trace is decoded by protoc (`protoc --decode=perfetto.protos.Trace`)
against perfetto-trace.proto, a schema written from Perfetto's published
format documentation; packets of compressed packets are inflated (zlib)
and what they hold is decoded by protoc again.  Then the rules the
importer (trace_processor, behind ui.perfetto.dev) relies on:

  - nothing is left undecoded: a field the schema does not know, or one
    written with the wrong wire type, shows up as a numbered field;
  - a packet that holds compressed packets holds nothing else;
  - incremental state: the first packet of each sequence clears it
    (SEQ_INCREMENTAL_STATE_CLEARED); a packet that uses an interned id
    says it needs the state (SEQ_NEEDS_INCREMENTAL_STATE); every interned
    id is >= 1, defined in that packet or an earlier one of its sequence,
    and never defined twice with different contents;
  - tracks: every uuid declared once, non-zero, its parent declared
    before it; every event's track declared before the event; counter
    values only on counter tracks, slices never on them;
  - slices balanced per track: each end closes an open begin, nothing is
    left open, and on each track time never goes back;
  - a counter's values at increasing times (two at one time leave its
    value there to the importer's sort);
  - timestamps on the default clock (absolute, so the importer sorts
    them; no incremental clock is used) and never negative;
  - flows paired: each flow id starts on exactly one slice and is
    terminated on exactly one later-or-equal slice.

As a module: load(path, protoc) returns a Trace (the slices with their
resolved names, categories and annotations, the tracks, the flows, the
counter values) or raises ValueError naming the first rule broken.
"""

import argparse
import os
import re
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = "perfetto-trace.proto"

SEQ_CLEARED = 1
SEQ_NEEDS = 2


def fail(msg):
    raise ValueError(msg)


# ---- protoc's text format ----

ESCAPES = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7,
           "b": 8, "f": 12, "v": 11, "?": 63}


def unescape(s):
    """The bytes of a text-format string literal's body."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.extend(c.encode("utf-8"))
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8) & 0xff)
            i = j
        elif n == "x":
            j = i + 2
            while j < len(s) and j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 2:j], 16))
            i = j
        else:
            out.append(ESCAPES[n])
            i += 2
    return bytes(out)


LINE = re.compile(r'^\s*(?:(\}))?(?:([A-Za-z_0-9]+)(?:: (.*)| \{))?\s*$')


def parse_text(text):
    """protoc's text output as nested dicts: field -> list of values
    (dicts for messages; int, str for enums and bools, or bytes)."""
    root = {}
    stack = [root]
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        m = LINE.match(line)
        if not m:
            fail(f"protoc output line {lineno}: cannot read {line[:80]!r}")
        close, key, value = m.groups()
        if close:
            stack.pop()
            continue
        if key[0].isdigit():
            fail(f"field {key} unknown to the schema, or of the wrong "
                 f"wire type (line {lineno}: {line.strip()[:80]})")
        if value is None:
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
            continue
        if value.startswith('"'):
            v = unescape(value[1:-1])
        elif re.fullmatch(r"-?\d+", value):
            v = int(value)
        else:
            v = value               # enum name, true/false, a double
        stack[-1].setdefault(key, []).append(v)
    if len(stack) != 1:
        fail("protoc output: unbalanced braces")
    return root


def decode(data, protoc):
    r = subprocess.run([protoc, "-I", HERE, "--decode=perfetto.protos.Trace",
                        PROTO], input=data, capture_output=True)
    if r.returncode != 0:
        fail("protoc --decode failed: "
             + r.stderr.decode("utf-8", "replace").strip()[:300])
    return parse_text(r.stdout.decode("utf-8"))


def one(msg, key, default=None):
    v = msg.get(key)
    if not v:
        return default
    if len(v) != 1:
        fail(f"{key} repeated")
    return v[0]


def packets(path, protoc):
    """Every packet, compressed ones inflated in place, in file order."""
    with open(path, "rb") as f:
        outer = decode(f.read(), protoc).get("packet", [])
    inner = bytearray()
    plain = []
    for p in outer:
        z = p.get("compressed_packets")
        if z is None:
            plain.append(p)
            continue
        if len(p) != 1 or len(z) != 1:
            fail("a packet of compressed packets holds more")
        if plain:
            fail("plain packets between compressed ones are not checked "
                 "in order here")
        try:
            inner.extend(zlib.decompress(z[0]))
        except zlib.error as e:
            fail(f"compressed packets do not inflate: {e}")
    if inner:
        return decode(bytes(inner), protoc).get("packet", [])
    return plain


# ---- the rules ----

class Slice:
    def __init__(self, track, ts, name, cats, ann, flows, term):
        self.track, self.ts, self.name = track, ts, name
        self.cats, self.ann = cats, ann
        self.flows, self.term = flows, term
        self.end = None
        self.depth = 0


class Trace:
    def __init__(self):
        self.tracks = {}            # uuid -> descriptor dict
        self.order = []             # uuids in declaration order
        self.slices = []            # Slice, in file order
        self.counters = {}          # uuid -> [(ts, value)]
        self.flows = {}             # id -> (from Slice, to Slice)
        self.clock = None           # realtime ns of timestamp 0

    def track_name(self, uuid):
        d = self.tracks[uuid]
        if "name" in d:
            return one(d, "name").decode()
        if "process" in d:
            return one(one(d, "process"), "process_name").decode()
        return None


INTERN_KINDS = {"event_names": "name", "event_categories": "name",
                "debug_annotation_names": "name",
                "debug_annotation_string_values": "str"}


def check(pkts):
    t = Trace()
    seq_state = {}                  # seq id -> {kind: {iid: value}}
    open_slices = {}                # track -> [Slice]
    last_ts = {}                    # track -> ts
    flow_start, flow_end = {}, {}
    for n, p in enumerate(pkts):
        where = f"packet {n}"
        seq = one(p, "trusted_packet_sequence_id")
        flags = one(p, "sequence_flags", 0)
        if seq is not None and seq not in seq_state:
            if not flags & SEQ_CLEARED:
                fail(f"{where}: first packet of sequence {seq} does not "
                     "clear the incremental state")
        if seq is not None and flags & SEQ_CLEARED:
            seq_state[seq] = {k: {} for k in INTERN_KINDS}
        if "timestamp_clock_id" in p:
            fail(f"{where}: a clock other than the default")
        idata = one(p, "interned_data")
        if idata:
            if seq is None or seq not in seq_state:
                fail(f"{where}: interned data outside a cleared sequence")
            for kind, field in INTERN_KINDS.items():
                for e in idata.get(kind, []):
                    iid = one(e, "iid", 0)
                    val = one(e, field, b"")
                    if iid < 1:
                        fail(f"{where}: {kind} iid {iid} (must be >= 1)")
                    old = seq_state[seq][kind].get(iid)
                    if old is not None and old != val:
                        fail(f"{where}: {kind} iid {iid} redefined")
                    seq_state[seq][kind][iid] = val
        used = []

        def lookup(kind, iid):
            used.append(kind)
            st = seq_state.get(seq)
            if st is None or iid not in st[kind]:
                fail(f"{where}: {kind} iid {iid} used before it is defined")
            return st[kind][iid]

        if "clock_snapshot" in p:
            for c in one(p, "clock_snapshot").get("clocks", []):
                if one(c, "clock_id") == 1:
                    t.clock = one(c, "timestamp")
        td = one(p, "track_descriptor")
        if td:
            uuid = one(td, "uuid", 0)
            if uuid == 0 or uuid in t.tracks:
                fail(f"{where}: track uuid {uuid} zero or declared twice")
            parent = one(td, "parent_uuid")
            if parent is not None and parent not in t.tracks:
                fail(f"{where}: track {uuid}'s parent {parent} not declared "
                     "before it")
            t.tracks[uuid] = td
            t.order.append(uuid)
        te = one(p, "track_event")
        if te:
            ts = one(p, "timestamp")
            if ts is None or ts < 0:
                fail(f"{where}: track event without a timestamp")
            track = one(te, "track_uuid", 0)
            if track not in t.tracks:
                fail(f"{where}: track {track} used before it is declared")
            is_counter = "counter" in t.tracks[track]
            typ = one(te, "type")
            if typ == "TYPE_COUNTER":
                if not is_counter:
                    fail(f"{where}: counter value on a slice track")
                vals = t.counters.setdefault(track, [])
                if vals and ts <= vals[-1][0]:
                    fail(f"{where}: counter {track}: two values at one "
                         "time, or time goes back")
                vals.append((ts, one(te, "counter_value")))
            elif typ in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
                if is_counter:
                    fail(f"{where}: slice on counter track {track}")
                if ts < last_ts.get(track, 0):
                    fail(f"{where}: time goes back on track {track}")
                last_ts[track] = ts
                stack = open_slices.setdefault(track, [])
                if typ == "TYPE_SLICE_END":
                    if not stack:
                        fail(f"{where}: end without a begin on track {track}")
                    stack.pop().end = ts
                else:
                    name = None
                    if "name_iid" in te:
                        name = lookup("event_names", one(te, "name_iid"))
                    elif "name" in te:
                        name = one(te, "name")
                    cats = [lookup("event_categories", c).decode()
                            for c in te.get("category_iids", [])]
                    ann = {}
                    for a in te.get("debug_annotations", []):
                        key = lookup("debug_annotation_names",
                                     one(a, "name_iid")).decode()
                        ann[key] = annotation_value(a, lookup)
                    s = Slice(track, ts, name.decode("utf-8")
                              if name is not None else None, cats, ann,
                              te.get("flow_ids", []),
                              te.get("terminating_flow_ids", []))
                    s.depth = len(stack)
                    stack.append(s)
                    t.slices.append(s)
                    for f in s.flows:
                        if f in flow_start:
                            fail(f"{where}: flow {f} starts twice")
                        flow_start[f] = s
                    for f in s.term:
                        if f in flow_end:
                            fail(f"{where}: flow {f} terminated twice")
                        flow_end[f] = s
            else:
                fail(f"{where}: event type {typ}")
        if used and not flags & SEQ_NEEDS:
            fail(f"{where}: uses interned ids without "
                 "SEQ_NEEDS_INCREMENTAL_STATE")
    for track, stack in open_slices.items():
        if stack:
            fail(f"track {track}: {len(stack)} slice(s) never ended")
    if set(flow_start) != set(flow_end):
        fail(f"unpaired flows: {sorted(set(flow_start) ^ set(flow_end))[:5]}")
    for f, a in flow_start.items():
        b = flow_end[f]
        if b.ts < a.ts:
            fail(f"flow {f} ends before it starts")
        t.flows[f] = (a, b)
    return t


def annotation_value(a, lookup):
    if "array_values" in a:
        return [annotation_value(x, lookup) for x in a["array_values"]]
    if "string_value_iid" in a:
        return lookup("debug_annotation_string_values",
                      one(a, "string_value_iid")).decode("utf-8")
    if "string_value" in a:
        return one(a, "string_value").decode("utf-8")
    for k in ("int_value", "uint_value"):
        if k in a:
            return one(a, k)
    if "bool_value" in a:
        return one(a, "bool_value") == "true"
    if "double_value" in a:
        return float(one(a, "double_value"))
    fail("annotation without a value")


def load(path, protoc):
    return check(packets(path, protoc))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("trace")
    args = ap.parse_args()
    try:
        t = load(args.trace, args.protoc)
    except ValueError as e:
        print(f"{args.trace}: {e}")
        return 1
    print(f"{args.trace}: ok, {len(t.tracks)} tracks, {len(t.slices)} "
          f"slices, {len(t.flows)} flows, "
          f"{sum(map(len, t.counters.values()))} counter values")
    return 0


if __name__ == "__main__":
    sys.exit(main())
