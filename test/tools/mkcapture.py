#!/usr/bin/env python3
"""Write proftrace captures by hand, byte for byte as doc/format.md says.

Tests use it to make runs whose numbers are known by construction: which
process ran when, under which parent, with which status and CPU.

As a library:

    from mkcapture import Capture
    c = Capture(host="alpha")
    c.process(100, 1, ["make", "-j2"], start=0, end=10)
    c.process(101, 100, ["cc", "-c", "a.c"], start=1, end=4, cpu=(0.5, 0.1))
    c.write("run.ptcap")

As a program, from a JSON description:

    mkcapture.py DESC.json OUT.ptcap
    mkcapture.py --synthetic N OUT.ptcap    # a make -j8 of ~N executions

    {"host": "alpha", "realtime_base_ns": 1700000000000000000,
     "mono_base_ns": 1000000000000, "meta": {"CI_JOB_ID": "42"},
     "procs": [{"pid": 100, "ppid": 1, "argv": ["make"], "start": 0,
                "end": 10, "exit": 0}]}

Times are seconds from the capture's start (ints or floats; converted to
whole nanoseconds); "start_ns"/"end_ns" give nanoseconds exactly.  Each
process is one traced program image: a connection with CONNECT, a HELLO
(kind IMAGE, ppid, start), an EXIT at its end (none when it was killed by
a signal) and an EOF; its parent, when it is in the capture and still
running, sends a REAP at the child's end with the wait status.  A
process with "exec": [...] more images execs them in turn (EXEC frame
from the old image, HELLO from the new, same pid).  Bytes in arguments are
written as given: pass bytes objects (or str, encoded with surrogateescape)
to test what a converter does with invalid UTF-8.
"""

import gzip
import json
import struct
import sys

FRAME_MAGIC = 0x52544650
CAP_MAGIC = 0x50414350
HELLO, EXEC, EXEC_FAILED, SPAWN, FORK, REAP, EXIT, TRACE = 1, 2, 3, 4, 5, 6, \
    7, 9
K_META, K_CONNECT, K_FRAME, K_EOF, K_DROP, K_LOSS = 1, 2, 3, 4, 5, 6
T_EXE, T_ARG, T_CWD, T_ENV, T_PATH = 1, 2, 3, 4, 5
T_TRACE_FROM, T_TRACE_SIZE, T_TRACE_JSON = 9, 10, 12
HELLO_IMAGE, HELLO_FORK = 1, 2
EXIT_EXIT = 1
CALL_EXECVE = 1


def b(s):
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8", "surrogateescape")


def tail(items):
    out = bytearray()
    for tag, s in items:
        out.append(tag)
        out += b(s) + b"\0"
    return bytes(out)


def frame(rtype, pid, time_ns, payload):
    hdr = struct.pack("<IBBHIIIIQ", FRAME_MAGIC, 1, rtype, 0, pid,
                      len(payload), len(payload), 0, time_ns)
    return hdr + payload


def ns(seconds):
    return int(round(seconds * 1_000_000_000))


class Capture:
    def __init__(self, host="test", mono_base_ns=1_000_000_000_000,
                 realtime_base_ns=1_700_000_000_000_000_000, meta=None,
                 command="make", uid=1000):
        self.host = host
        self.mono = mono_base_ns
        self.real = realtime_base_ns
        self.meta = dict(meta or {})
        self.command = command
        self.uid = uid
        self.records = []           # (recv_ns, seq, kind, conn, pid, data)
        self.procs = {}
        self.next_conn = 1
        self.seq = 0

    def t(self, seconds=None, exact=None):
        return self.mono + (exact if exact is not None else ns(seconds))

    def _rec(self, recv_ns, kind, conn, pid, data=b""):
        self.seq += 1
        self.records.append((recv_ns, self.seq, kind, conn, pid, data))

    def _conn(self):
        c = self.next_conn
        self.next_conn += 1
        return c

    def _hello(self, conn, pid, ppid, start, argv, cwd, env, exe):
        items = [(T_EXE, exe if exe is not None else argv[0])]
        items += [(T_ARG, a) for a in argv]
        items.append((T_CWD, cwd))
        items += [(T_ENV, f"{k}={v}") for k, v in (env or {}).items()]
        fixed = struct.pack("<IIIIQQ", ppid, self.uid, HELLO_IMAGE, 0,
                            self.real + (start - self.mono), start)
        self._rec(start, K_CONNECT, conn, pid)
        self._rec(start, K_FRAME, conn, pid,
                  frame(HELLO, pid, start, fixed + tail(items)))

    def process(self, pid, ppid, argv, start=None, end=None, exit=0,
                signal=None, cpu=(0.0, 0.0), rss=1000, cwd="/src", env=None,
                exe=None, start_ns=None, end_ns=None, exec=(), reaped=True):
        """Add one process (see the module's doc).  Returns its record."""
        s = self.t(start, start_ns)
        e = self.t(end, end_ns)
        images = [(argv, exe)] + [(x.get("argv"), x.get("exe"))
                                  for x in exec]
        starts = [s] + [self.t(x.get("at"), x.get("at_ns")) for x in exec]
        for k, (img_argv, img_exe) in enumerate(images):
            conn = self._conn()
            t0 = starts[k]
            t1 = starts[k + 1] if k + 1 < len(images) else e
            self._hello(conn, pid, ppid, t0, img_argv, cwd, env, img_exe)
            if k + 1 < len(images):
                nxt = images[k + 1][0]
                items = [(T_PATH, nxt[0])] + [(T_ARG, a) for a in nxt]
                items.append((T_CWD, cwd))
                self._rec(t1, K_FRAME, conn, pid,
                          frame(EXEC, pid, t1, struct.pack("<II", ppid,
                                                           CALL_EXECVE)
                                + tail(items)))
            elif signal is None:
                ut, st = ns(cpu[0]) // 1000, ns(cpu[1]) // 1000
                self._rec(t1, K_FRAME, conn, pid,
                          frame(EXIT, pid, t1, struct.pack(
                              "<iIQQQ", exit, EXIT_EXIT, ut, st, rss)))
            self._rec(t1, K_EOF, conn, pid)
        p = dict(pid=pid, ppid=ppid, start=s, end=e, exit=exit,
                 signal=signal, cpu=cpu, rss=rss, reaped=reaped)
        self.procs[pid] = p
        return p

    def trace(self, pid, events, at=None, source="dir", path=None):
        """A Chrome trace file that process pid wrote about itself
        (events: a list, written in the object form; or bytes, as they
        are), taken at `at` seconds (by default when pid ended) on a
        connection of its own, as the collector takes a file of
        $PROFTRACE_TRACE_DIR.  See epoch_us() for the events' ts."""
        data = events if isinstance(events, bytes) else json.dumps(
            {"traceEvents": events}, ensure_ascii=False).encode("utf-8")
        t = self.procs[pid]["end"] if at is None else self.t(at)
        items = [(T_TRACE_FROM, source),
                 (T_PATH, path or f"/tmp/trace/{pid}.json"),
                 (T_TRACE_SIZE, str(len(data))), (T_TRACE_JSON, data)]
        conn = self._conn()
        self._rec(t, K_CONNECT, conn, pid)
        self._rec(t, K_FRAME, conn, pid, frame(TRACE, pid, t, tail(items)))

    def epoch_us(self, seconds):
        """A time of this capture (seconds from its start) as a trace
        file's epoch microseconds (exact: whole nanoseconds)."""
        return (self.real + ns(seconds)) / 1000

    def _reaps(self):
        for p in self.procs.values():
            parent = self.procs.get(p["ppid"])
            if not p["reaped"] or not parent or parent["end"] < p["end"]:
                continue
            status = (p["signal"] & 0x7f) if p["signal"] else \
                (p["exit"] & 0xff) << 8
            ut, st = ns(p["cpu"][0]) // 1000, ns(p["cpu"][1]) // 1000
            payload = struct.pack("<IiIIQQQ", p["pid"], status, 1, 0, ut, st,
                                  p["rss"])
            # On a connection of its own: the parent's may be closed in
            # this capture's record order, and a frame belongs to the pid
            # in its header anyway.
            conn = self._conn()
            self._rec(p["end"], K_FRAME, conn, parent["pid"],
                      frame(REAP, parent["pid"], p["end"], payload))

    def write(self, path):
        self._reaps()
        meta = {"host": self.host, "kernel": "6.1.0-test", "cpus": "2",
                "proftrace_version": "0.1.0",
                "start_realtime_ns": str(self.real),
                "start_monotonic_ns": str(self.mono),
                "command": self.command}
        meta.update(self.meta)
        out = bytearray(b"PFTRCAP\0" + struct.pack("<II", 1, 16))

        def rec(kind, conn, pid, recv, data):
            out.extend(struct.pack("<IHHIIIIQQ", CAP_MAGIC, kind, 0,
                                   len(data), pid, self.uid, 0, conn, recv))
            out.extend(data)

        kv = b"".join(b(k) + b"\0" + b(v) + b"\0" for k, v in meta.items())
        rec(K_META, 0, 0, self.mono, kv)
        for recv, _, kind, conn, pid, data in sorted(self.records):
            rec(kind, conn, pid, recv, data)
        with gzip.open(path, "wb") as f:
            f.write(bytes(out))


def from_description(desc):
    c = Capture(host=desc.get("host", "test"),
                mono_base_ns=desc.get("mono_base_ns", 1_000_000_000_000),
                realtime_base_ns=desc.get("realtime_base_ns",
                                          1_700_000_000_000_000_000),
                meta=desc.get("meta"), command=desc.get("command", "make"))
    for p in desc["procs"]:
        p = dict(p)
        c.process(p.pop("pid"), p.pop("ppid"), p.pop("argv"), **p)
    return c


def synthetic(n, jobs=8):
    """A make -jJOBS build of about n executions: make runs one cc per
    source, each cc runs cc1 and then as; J of them at a time."""
    c = Capture(host="synthetic", command=f"make -j{jobs}")
    groups = max(1, (n - 1) // 3)
    step = 1e-4                     # a new compile every 100 us ...
    dur = step * jobs               # ... each taking J times that
    end = groups * step + dur + 0.01
    c.process(10, 1, ["make", f"-j{jobs}"], start=0, end=end)
    pid = 11
    for i in range(groups):
        s = 0.005 + i * step
        src = f"src/dir{i % 97}/file{i}.c"
        c.process(pid, 10, ["cc", "-O2", "-Iinclude", "-c", src, "-o",
                            f"obj/file{i}.o"], start=s, end=s + dur,
                  cpu=(dur * 0.1, dur * 0.02))
        c.process(pid + 1, pid, ["/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
                                 "-quiet", src, "-o", f"/tmp/cc{i:06x}.s"],
                  start=s + dur * 0.1, end=s + dur * 0.7,
                  cpu=(dur * 0.5, dur * 0.05))
        c.process(pid + 2, pid, ["as", "--64", "-o", f"obj/file{i}.o",
                                 f"/tmp/cc{i:06x}.s"],
                  start=s + dur * 0.75, end=s + dur * 0.95,
                  cpu=(dur * 0.1, dur * 0.02))
        pid += 3
    return c


def main(argv):
    if len(argv) == 4 and argv[1] == "--synthetic":
        synthetic(int(argv[2])).write(argv[3])
        return 0
    if len(argv) != 3:
        print("usage: mkcapture.py DESC.json OUT.ptcap\n"
              "       mkcapture.py --synthetic N OUT.ptcap", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        from_description(json.load(f)).write(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
