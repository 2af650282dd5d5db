#!/usr/bin/env python3
"""Check proftrace's outputs against the rules of the programs that read them.

    validate-trace.py trace TRACE.json      Chrome Trace Event Format
    validate-trace.py folded STACKS.txt     folded stacks (flame graphs)

Exit 0 and print a one-line summary when the file is fine; exit 1 naming
the first rule broken.  The rules are those of the consumers, not of
proftrace's code:

trace (ui.perfetto.dev, chrome://tracing, speedscope)
  - the file is JSON (Python's json module, which rejects control characters
    in strings and invalid escapes) and decodes as UTF-8;
  - an object with a "traceEvents" list and a "metadata" object;
  - every event has "ph" and "ts" (speedscope rejects the file otherwise),
    "ts" is a number >= 0, "pid" and "tid" are integers where present;
  - every "X" event has a numeric "dur" >= 0;
  - "X" events on one (pid, tid) nest: two either do not overlap or one
    holds the other (Perfetto moves a partial overlap to an error track);
    touching exactly is allowed here;
  - flow events "s"/"f" have integer ids, each "s" has exactly one "f" with
    the same id, cat and name, and they bind to a slice ("bp":"e" on "f"
    means the slice enclosing its ts on its own (pid, tid));
  - "C" events carry numeric args;
  - "M" thread_name/process_name events carry args.name.

folded (flamegraph.pl, inferno, speedscope)
  - UTF-8 text; every line matches ^(.*) (\\d+)$ with an integer weight > 0;
    speedscope also wants every line, the last one included, to end with
    a newline;
  - no frame is empty or has spaces at either end; stacks are unique.

As a module: load_trace(path) and check_trace(doc) / check_folded(text)
raise ValueError with the reason.
"""

import bisect
import json
import math
import re
import sys


def fail(msg):
    raise ValueError(msg)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def load_trace(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"not UTF-8: {e}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"not JSON: {e}")


def check_trace(doc):
    if not isinstance(doc, dict):
        fail("top level is not an object")
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents list")
    if not isinstance(doc.get("metadata"), dict):
        fail("no metadata object")
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        fail("displayTimeUnit is neither ms nor ns")

    slices = {}            # (pid, tid) -> [(ts, end)]
    starts, finishes = {}, {}
    counts = {}
    for i, ev in enumerate(events):
        where = f"event {i} ({ev.get('ph')!r} {ev.get('name')!r})" \
            if isinstance(ev, dict) else f"event {i}"
        if not isinstance(ev, dict):
            fail(f"{where}: not an object")
        ph = ev.get("ph")
        if not isinstance(ph, str) or len(ph) != 1:
            fail(f"{where}: no ph")
        counts[ph] = counts.get(ph, 0) + 1
        if "ts" not in ev or not is_num(ev["ts"]):
            fail(f"{where}: no numeric ts")
        if ev["ts"] < 0:
            fail(f"{where}: negative ts {ev['ts']}")
        for k in ("pid", "tid"):
            if k in ev and not is_int(ev[k]):
                fail(f"{where}: {k} is not an integer")
        if "name" in ev and not isinstance(ev["name"], str):
            fail(f"{where}: name is not a string")
        if ph == "X":
            if "dur" not in ev or not is_num(ev["dur"]):
                fail(f"{where}: X without numeric dur")
            if ev["dur"] < 0:
                fail(f"{where}: negative dur")
            if "pid" not in ev or "tid" not in ev:
                fail(f"{where}: X without pid/tid")
            slices.setdefault((ev["pid"], ev["tid"]), []).append(
                (ev["ts"], ev["ts"] + ev["dur"], i))
        elif ph in ("s", "f"):
            if not is_int(ev.get("id")):
                fail(f"{where}: flow id is not an integer")
            key = ev["id"]
            table = starts if ph == "s" else finishes
            if key in table:
                fail(f"{where}: second '{ph}' with id {key}")
            table[key] = ev
        elif ph == "C":
            args = ev.get("args")
            if not isinstance(args, dict) or not args:
                fail(f"{where}: counter without args")
            for k, v in args.items():
                if not is_num(v):
                    fail(f"{where}: counter arg {k} is not a number")
        elif ph == "M":
            if ev.get("name") in ("thread_name", "process_name"):
                args = ev.get("args")
                if not isinstance(args, dict) or \
                        not isinstance(args.get("name"), str):
                    fail(f"{where}: {ev['name']} without args.name")

    # Slices on one thread nest: each either holds the next or ends by
    # its start.  The outermost ones, which never overlap, are what a
    # flow binds to at the latest.
    outer = {}
    for key, lst in slices.items():
        lst.sort(key=lambda x: (x[0], -x[1], x[2]))
        stack = []
        top = outer.setdefault(key, [])
        for s1, e1, i1 in lst:
            while stack and stack[-1][1] <= s1:
                stack.pop()
            if stack and e1 > stack[-1][1]:
                s0, e0, i0 = stack[-1]
                fail(f"events {i0} and {i1} overlap on pid/tid {key}: "
                     f"[{s0}, {e0}] and [{s1}, {e1}]")
            if not stack:
                top.append((s1, e1, i1))
            stack.append((s1, e1, i1))

    def enclosing(ev):
        lst = outer.get((ev.get("pid"), ev.get("tid")), [])
        j = bisect.bisect_right(lst, (ev["ts"], math.inf, math.inf)) - 1
        return j >= 0 and lst[j][0] <= ev["ts"] <= lst[j][1]

    for key, s in starts.items():
        f = finishes.get(key)
        if f is None:
            fail(f"flow start id {key} has no finish")
        if (s.get("cat"), s.get("name")) != (f.get("cat"), f.get("name")):
            fail(f"flow id {key}: s and f differ in cat or name")
        if not enclosing(s):
            fail(f"flow start id {key} is in no slice of its thread")
        if f.get("bp") == "e" and not enclosing(f):
            fail(f"flow finish id {key} is in no slice of its thread")
    for key in finishes:
        if key not in starts:
            fail(f"flow finish id {key} has no start")
    return counts


FOLDED_LINE = re.compile(r"^(.*) (\d+)$")


def check_folded(text):
    if text and not text.endswith("\n"):
        fail("last line does not end with a newline")
    seen = set()
    total = 0
    for n, line in enumerate(text.split("\n")[:-1], 1):
        m = FOLDED_LINE.match(line)
        if not m:
            fail(f"line {n}: not 'STACK WEIGHT': {line!r}")
        stack, weight = m.group(1), int(m.group(2))
        if weight <= 0:
            fail(f"line {n}: weight {weight}")
        frames = stack.split(";")
        for fr in frames:
            if not fr or fr != fr.strip():
                fail(f"line {n}: empty frame or spaces around one: {line!r}")
        if stack in seen:
            fail(f"line {n}: stack repeated: {stack!r}")
        seen.add(stack)
        total += weight
    return len(seen), total


def main(argv):
    if len(argv) != 3 or argv[1] not in ("trace", "folded"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        if argv[1] == "trace":
            counts = check_trace(load_trace(argv[2]))
            print("trace ok: " + ", ".join(f"{v} {k}" for k, v in
                                            sorted(counts.items())))
        else:
            with open(argv[2], "rb") as f:
                try:
                    text = f.read().decode("utf-8")
                except UnicodeDecodeError as e:
                    fail(f"not UTF-8: {e}")
            n, total = check_folded(text)
            print(f"folded ok: {n} stacks, total weight {total}")
    except ValueError as e:
        print(f"validate-trace: {argv[2]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
