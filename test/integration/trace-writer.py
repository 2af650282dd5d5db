#!/usr/bin/env python3
"""A traced program that writes a Chrome trace of itself, as any tool may
(doc/manual.md, "Traces that programs write").

    trace-writer.py MODE TRUTH

MODE abs: an object-form file with epoch timestamps; rel: an array-form
file with timestamps from the program's start (no closing bracket).
Events (names fixed, times measured as they happen): "outer" (X) holds
"inner" (B/E pair), "mark" (i) and "queue" (C).  TRUTH gets what was
written, as JSON: the pid, the file, and each event's ts/dur in the
file's own units, so that a test compares the trace with it.
"""

import json
import os
import sys
import time

mode, truth = sys.argv[1], sys.argv[2]
pid = os.getpid()
start = time.monotonic_ns()


def stamp():
    """Now, in the file's microseconds: epoch, or from our start."""
    if mode == "abs":
        return time.time_ns() // 1000
    return (time.monotonic_ns() - start) // 1000


def pause(ms):
    time.sleep(ms / 1000)


pause(20)
outer0 = stamp()
pause(20)
inner0 = stamp()
pause(30)
inner1 = stamp()
mark = stamp()
pause(10)
outer1 = stamp()
events = [
    {"name": "outer", "cat": "test", "ph": "X", "ts": outer0,
     "dur": outer1 - outer0, "pid": pid, "tid": pid,
     "args": {"detail": "the whole"}},
    {"name": "inner", "cat": "test", "ph": "B", "ts": inner0, "pid": pid,
     "tid": pid, "args": {"detail": "a part", "n": 3}},
    {"name": "inner", "ph": "E", "ts": inner1, "pid": pid, "tid": pid},
    {"name": "mark", "cat": "test", "ph": "i", "ts": mark, "pid": pid,
     "tid": pid, "s": "t"},
    {"name": "queue", "cat": "test", "ph": "C", "ts": mark, "pid": pid,
     "args": {"depth": 7}},
    {"name": "thread_name", "ph": "M", "pid": pid, "tid": pid,
     "args": {"name": "main"}},
]
d = os.environ["PROFTRACE_TRACE_DIR"]
path = os.path.join(d, f"{pid}.json")
with open(path, "w") as f:
    if mode == "abs":
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    else:
        # The array form may lack its closing bracket.
        f.write("[" + ",\n".join(json.dumps(e) for e in events) + ",\n")
pause(10)
with open(truth, "w") as f:
    json.dump({"pid": pid, "file": path, "outer": [outer0, outer1],
               "inner": [inner0, inner1], "mark": mark}, f)
