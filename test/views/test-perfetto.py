#!/usr/bin/env python3
"""`proftrace convert -f perfetto`, read back through protoc.

    test-perfetto.py --proftrace BIN --gencapture BIN [--protoc PROTOC] [-k NAME]

Captures written by hand (mkcapture.py) whose process trees, times,
statuses and CPU are known by construction, and synthetic builds from
bench/gencapture; each trace is decoded by protoc against a schema written
from Perfetto's format documentation and checked by perfetto-check.py
(TrackEvent's rules), then compared with what the capture holds.  The
checker itself is shown broken traces (encoded by protoc from text) and
must refuse each.  The last line counts the results.
"""

import importlib.util
import os
import pty
import re
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
sys.path.insert(0, TOOLS)
from mkcapture import Capture  # noqa: E402
from viewlib import CC1, Failed, capture, check, eq, run  # noqa: E402
import viewlib  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "perfetto_check", os.path.join(TOOLS, "perfetto-check.py"))
pcheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pcheck)

ARGS = None                     # set by viewlib.main
TMP = None
NS = 10**9
R0 = 1_700_000_000_000_000_000          # mkcapture's realtime base


def protoc():
    return ARGS.protoc or "protoc"


def convert(caps, fmt="perfetto", name=None):
    out = os.path.join(TMP, (name or os.path.basename(caps[0])) + "." + fmt)
    run("convert", "--force", "-f", fmt, "-o", out, *caps)
    return out


def load(caps, name=None):
    try:
        return pcheck.load(convert(caps, name=name), protoc())
    except ValueError as e:
        raise Failed(str(e))


def parent_of(t, s):
    return pcheck.one(t.tracks[s.track], "parent_uuid")


def by_pid(t):
    return {s.ann["pid"]: s for s in t.slices if s.depth == 0}


def check_tree(t, nexec, what):
    """One slice per execution, each on its own track nested under its
    parent execution's track (found by ppid and time), roots under a
    process track; one flow per child, from its parent's slice."""
    eq(len(t.slices), nexec, f"{what}: execution slices")
    eq(len({s.track for s in t.slices}), nexec, f"{what}: one track each")
    slice_of_track = {s.track: s for s in t.slices}
    flows_to = {b.track: a for a, b in t.flows.values()}
    children = 0
    for s in t.slices:
        eq(t.track_name(s.track), s.name, f"{what}: track named as slice")
        p = parent_of(t, s)
        if p in slice_of_track:
            ps = slice_of_track[p]
            eq(ps.ann["pid"], s.ann["ppid"], f"{what}: parent's pid")
            check(ps.ts <= s.ts and s.end <= ps.end or
                  "end_unknown" in s.ann or "end_unknown" in ps.ann,
                  f"{what}: pid {s.ann['pid']} outside its parent")
            eq(flows_to.get(s.track), ps, f"{what}: flow into pid "
               f"{s.ann['pid']}")
            children += 1
        else:
            check("process" in t.tracks[p],
                  f"{what}: root pid {s.ann['pid']} not under a process")
            check(s.track not in flows_to, f"{what}: flow into a root")
    eq(len(t.flows), children, f"{what}: flows")


# ---- captures ----

def make_like():
    """make [0,10]: cc a.c [1,4] > cc1 [1.5,3.5]; cc b.c [1,6] > cc1
    [2,5.5]; ld [6.5,9], which fails; sleep [7,8], killed."""
    c = Capture(host="alpha", command="make -j2")
    liba = {"OPAM_PACKAGE_NAME": "liba", "OPAM_PACKAGE_VERSION": "1.0"}
    c.process(100, 1, ["make", "-j2"], start=0, end=10, cpu=(0.25, 0.125),
              rss=4242, cwd="/build")
    c.process(101, 100, ["cc", "-c", "a.c", "-o", "a.o"], start=1, end=4,
              cpu=(0.5, 0.1), env=liba)
    c.process(102, 101, [CC1, "-quiet", "a.c", "-o", "/tmp/ccX.s"],
              start=1.5, end=3.5, env=liba)
    c.process(103, 100, ["cc", "-c", "b.c", "-o", "b.o"], start=1, end=6)
    c.process(104, 103, [CC1, "-quiet", "b.c", "-o", "/tmp/ccY.s"],
              start=2, end=5.5)
    c.process(105, 100, ["ld", "-o", "prog", "a.o", "b.o"], start=6.5,
              end=9, exit=1)
    c.process(106, 100, ["sleep", "100"], start=7, end=8, signal=9)
    return c


def test_tree():
    t = load([capture("make", make_like)])
    check_tree(t, 7, "make")
    s = by_pid(t)
    # Times: nanoseconds from the earliest start, which the clock
    # snapshot ties to the realtime clock.
    eq(t.clock, R0, "realtime of timestamp 0")
    eq([(s[p].ts, s[p].end) for p in (100, 101, 102, 105)],
       [(0, 10 * NS), (1 * NS, 4 * NS), (1.5 * NS, 3.5 * NS),
        (6.5 * NS, 9 * NS)], "slice times")
    m = s[100].ann
    eq(m["argv"], ["make", "-j2"], "argv")
    eq(m["cwd"], "/build", "cwd")
    eq((m["exit_code"], m["user_cpu_us"], m["sys_cpu_us"], m["max_rss_kb"]),
       (0, 250000, 125000, 4242), "make's numbers")
    eq(s[101].ann["package"], "liba.1.0", "package")
    check("package" not in s[103].ann, "no package")
    eq(s[102].ann["argv"], [CC1, "-quiet", "a.c", "-o", "/tmp/ccX.s"],
       "cc1's argv")
    eq(s[105].ann["exit_code"], 1, "ld's exit code")
    eq(s[106].ann["signal"], 9, "sleep's signal")
    eq(s[101].cats, ["exec"], "category")
    check(re.search(r"\bcc1\b.*a\.c", s[102].name), s[102].name)
    check(s[100].name.startswith("make"), s[100].name)
    # The process track: the capture's host and command.
    proc = t.tracks[parent_of(t, s[100])]
    eq(t.track_name(parent_of(t, s[100])), "alpha: make -j2", "process")
    eq(pcheck.one(pcheck.one(proc, "process"), "pid"), 1, "process pid")
    # Children in start order.
    eq(pcheck.one(t.tracks[s[100].track], "child_ordering"),
       "CHRONOLOGICAL", "child ordering")
    # Counters: running and busy over time, known by construction.
    names = {t.track_name(u): u for u in t.tracks if "counter" in t.tracks[u]}
    eq(sorted(names), ["busy", "running"], "counter tracks")

    def at(track, ts):
        v = None
        for when, val in t.counters[names[track]]:
            if when <= ts:
                v = val
        return v

    eq([at("running", x * NS // 2) for x in (1, 3, 4, 5, 7, 13, 15, 20)],
       [1, 4, 5, 5, 4, 2, 3, 0], "running")
    eq([at("busy", x * NS // 2) for x in (1, 2, 3, 4, 7, 9, 13, 15, 17, 20)],
       [1, 2, 2, 2, 2, 1, 1, 2, 1, 0], "busy")


# Longer than what is interned, with an invalid byte in it.
LONG = b"gcc " + b"-I/usr/include/x " * 20 + b"caf\xe9.c"
LONG_OUT = LONG.decode("utf-8", "replace")


def test_strings():
    c = Capture(host="h\u00f6st", command="sh -c 'a\nb'")
    c.process(500, 1, ["sh", "-c", "a; b\nc"], start=0, end=3)
    c.process(501, 500, [b"caf\xe9", 'quote"back\\slash', "ctl\x01\x1f",
                         "nl\nx", "\u00e9\u20ac\U0001F600", b"\xff\xfe",
                         b"\xe2\x82", "", LONG],
              start=1, end=2, cwd=b"/src/\xff", exe="/bin/caf")
    c.process(502, 500, ["sh", "-c", LONG], start=2, end=2.5)
    t = load([capture("strings", lambda: c)])
    check_tree(t, 3, "strings")
    s = by_pid(t)
    eq(s[501].ann["argv"],
       ["caf\ufffd", 'quote"back\\slash', "ctl\x01\x1f", "nl\nx",
        "\u00e9\u20ac\U0001F600", "\ufffd\ufffd", "\ufffd\ufffd", "",
        LONG_OUT], "argv")
    eq(s[502].ann["argv"], ["sh", "-c", LONG_OUT], "a long argument again")
    eq(s[501].ann["cwd"], "/src/\ufffd", "cwd")
    eq(s[500].ann["argv"], ["sh", "-c", "a; b\nc"], "sh's argv")
    check(t.track_name(parent_of(t, s[500])).startswith("h\u00f6st: "),
          "host name")


def test_two_captures():
    a = Capture(host="alpha")
    a.process(10, 1, ["build-a"], start=0, end=4)
    a.process(11, 10, ["cc", "x.c"], start=1, end=2)
    b = Capture(host="beta", mono_base_ns=5 * NS, realtime_base_ns=R0 + NS)
    b.process(20, 1, ["build-b"], start=0, end=3)
    t = load([capture("a", lambda: a), capture("b", lambda: b)],
             name="ab")
    check_tree(t, 3, "two captures")
    s = by_pid(t)
    pa, pb = parent_of(t, s[10]), parent_of(t, s[20])
    check(pa != pb, "one process track per capture")
    eq((t.track_name(pa), t.track_name(pb)), ("alpha #1: make",
                                              "beta #2: make"), "names")
    eq(s[20].ts, NS, "second capture's time")
    eq(len([u for u in t.tracks if "counter" in t.tracks[u]]), 4,
       "two counters per capture")


def test_empty():
    t = load([capture("empty", lambda: Capture(host="empty"))])
    eq(len(t.slices), 0, "slices")


def test_synthetic():
    """A synthetic build: as many slices as the generator made
    executions, the tree nested by ppid, every rule kept."""
    cap = os.path.join(TMP, "synth.ptcap")
    r = subprocess.run([ARGS.gencapture, "-n", "3000", cap],
                       capture_output=True, text=True, check=True)
    n = int(re.search(r"executions (\d+)", r.stdout + r.stderr).group(1))
    t = load([cap])
    check_tree(t, n, "synthetic")


def test_size():
    """A 100,000-execution build: the Perfetto trace is at most a fifth
    of the trace JSON (a ratio of sizes, which the same input fixes)."""
    cap = viewlib.synthetic_capture(100000)
    pf = convert([cap], "perfetto")
    js = convert([cap], "json")
    ratio = os.path.getsize(pf) / os.path.getsize(js)
    print(f"     100k executions: perfetto {os.path.getsize(pf)} B, json "
          f"{os.path.getsize(js)} B, ratio {ratio:.3f}")
    check(ratio <= 0.20, f"perfetto/json size ratio {ratio:.3f} > 0.20")


def test_sub_events():
    """The hook for what programs record about themselves: each
    execution's events nested in its slice, on its track, clipped where
    they cross what encloses them (perfetto-subs.c makes them)."""
    check(ARGS.subs, "needs --subs")
    cap = capture("subs", make_like)
    out = os.path.join(TMP, "subs.pftrace")
    subprocess.run([ARGS.subs, out, cap], check=True)
    try:
        t = pcheck.load(out, protoc())
    except ValueError as e:
        raise Failed(str(e))
    execs = [s for s in t.slices if s.depth == 0]
    eq(len(execs), 7, "execution slices")
    for x in execs:
        s, d = x.ts, x.end - x.ts
        want = sorted([("A", s, s + d // 2, 1),
                       ("A.1", s + d // 8, s + d // 4, 2),
                       ("X", s + 3 * d // 8, s + d // 2, 2),
                       ("B", s + d // 2, s + d, 1),
                       ("late", s + 7 * d // 8, s + d, 2)])
        got = sorted((y.name, y.ts, y.end, y.depth) for y in t.slices
                     if y.track == x.track and y.depth > 0)
        eq(got, want, f"events of pid {x.ann['pid']}")


def test_standard_output():
    """To a pipe, the trace as to a file; to a terminal, nothing (it is
    binary) and a one-line error."""
    cap = capture("stdout", make_like)
    piped = os.path.join(TMP, "piped.pftrace")
    with open(piped, "wb") as f:
        f.write(run("convert", "-f", "perfetto", cap))
    try:
        t = pcheck.load(piped, protoc())
    except ValueError as e:
        raise Failed(f"piped trace: {e}")
    eq(len(t.slices), 7, "slices through a pipe")
    master, slave = pty.openpty()
    try:
        r = subprocess.run([ARGS.proftrace, "convert", "-f", "perfetto",
                            cap], stdout=slave, stderr=subprocess.PIPE,
                           timeout=60)
        os.set_blocking(master, False)
        try:
            written = os.read(master, 4096)
        except BlockingIOError:
            written = b""
    finally:
        os.close(master)
        os.close(slave)
    eq(r.returncode, 2, "exit status on a terminal")
    eq(written, b"", "bytes written to the terminal")
    err = r.stderr.decode()
    check(err.count("\n") == 1 and "-o FILE" in err, f"message: {err!r}")


# ---- the checker refuses what Perfetto's rules refuse ----

GOOD_HEAD = """
packet { trusted_packet_sequence_id: 9 sequence_flags: 1
  interned_data { event_names { iid: 1 name: "x" }
                  debug_annotation_names { iid: 1 name: "pid" } } }
packet { track_descriptor { uuid: 5 } }
"""

BROKEN = {
    "used before it is declared": """
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 6 } }""",
    "end without a begin": """
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_END track_uuid: 5 } }""",
    "never ended": """
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 } }""",
    "used before it is defined": """
packet { timestamp: 1 trusted_packet_sequence_id: 9 sequence_flags: 2
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 name_iid: 2 } }
packet { timestamp: 2 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_END track_uuid: 5 } }""",
    "without SEQ_NEEDS_INCREMENTAL_STATE": """
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 name_iid: 1 } }
packet { timestamp: 2 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_END track_uuid: 5 } }""",
    "unpaired flows": """
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 flow_ids: 3 } }
packet { timestamp: 2 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_END track_uuid: 5 } }""",
    "time goes back": """
packet { timestamp: 5 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 } }
packet { timestamp: 2 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_END track_uuid: 5 } }""",
    "does not clear": """
packet { trusted_packet_sequence_id: 10
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 } }""",
    "two values at one time": """
packet { track_descriptor { uuid: 6 counter { } } }
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_COUNTER track_uuid: 6 counter_value: 0 } }
packet { timestamp: 1 trusted_packet_sequence_id: 9
  track_event { type: TYPE_COUNTER track_uuid: 6 counter_value: 1 } }""",
    "parent": """
packet { track_descriptor { uuid: 8 parent_uuid: 77 } }""",
}


def test_checker_refuses():
    def encode(text, name):
        path = os.path.join(TMP, name + ".pftrace")
        with open(path, "wb") as f:
            subprocess.run([protoc(), "-I", TOOLS,
                            "--encode=perfetto.protos.Trace",
                            "perfetto-trace.proto"], input=text.encode(),
                           stdout=f, check=True)
        return path

    good = GOOD_HEAD + """
packet { timestamp: 1 trusted_packet_sequence_id: 9 sequence_flags: 2
  track_event { type: TYPE_SLICE_BEGIN track_uuid: 5 name_iid: 1 } }
packet { timestamp: 2 trusted_packet_sequence_id: 9
  track_event { type: TYPE_SLICE_END track_uuid: 5 } }"""
    pcheck.load(encode(good, "good"), protoc())
    for i, (why, text) in enumerate(BROKEN.items()):
        try:
            pcheck.load(encode(GOOD_HEAD + text, f"broken{i}"),
                        protoc())
        except ValueError as e:
            check(why in str(e), f"{why!r}: refused for another reason: {e}")
            continue
        raise Failed(f"checker accepted a trace with: {why}")
    # A field written with the wrong wire type (flow ids as a varint)
    # is no field protoc knows: tag 47 << 3 | 0, value 3.
    path = os.path.join(TMP, "wire.pftrace")
    head = encode(GOOD_HEAD, "head")
    with open(head, "rb") as f:
        data = f.read()
    te = bytes([0xf8, 0x02, 0x03])                  # field 47, varint 3
    pkt = bytes([0x5a, len(te)]) + te               # track_event
    with open(path, "wb") as f:
        f.write(data + bytes([0x0a, len(pkt)]) + pkt)
    try:
        pcheck.load(path, protoc())
    except ValueError as e:
        check("unknown to the schema" in str(e), str(e))
    else:
        raise Failed("checker accepted flow ids of the wrong wire type")


if __name__ == "__main__":
    def add_args(ap):
        ap.add_argument("--protoc", help="protoc (default: from PATH)")
        ap.add_argument("--subs", help="perfetto-subs (the hook's test)")
    sys.exit(viewlib.main(globals(), add_args))
