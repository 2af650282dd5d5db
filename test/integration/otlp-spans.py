#!/usr/bin/env python3
"""The spans of proftrace export --otlp, against a run known by construction.

    otlp-spans.py --proftrace BIN --receiver DIR [-k NAME]

One capture written by hand (mkcapture.py) holds what the exporter must get
right however it reads a capture: nesting three deep, a failed and a killed
execution, one that ended without exiting or being waited for, a pid used
twice by two processes, a program that execs another (two executions of
one pid), and a child that outlives a short parent.  The spans each option
must give (which executions get one, their parents, statuses, and what is
folded into each) are worked out here from that description and the rules
of doc/man/proftrace-export.1.scd, and compared with what OpenTelemetry's own
decoder (receiver.js, as otlp.py uses it) took from the export.  Several
captures in one command must give one trace each.

The last line counts the results: "N passed, N failed".
"""

import signal as sig
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, HERE)
import otlp  # noqa: E402
from mkcapture import Capture  # noqa: E402
from viewlib import check, eq  # noqa: E402

MS = 1_000_000

# (key, pid, parent key, argv, start ms, end ms, how it ended, cpu µs)
# How it ended: ("exit", code), ("signal", n) waited for by its parent,
# ("eof",) killed and never waited for, ("exec",) replaced by the next
# image of its pid.  The parent is the process's parent by construction.
RUN = [
    ("make", 100, None, ["make", "-j2"], 0, 20000, ("exit", 0), 400000),
    ("sh", 101, "make", ["sh", "-c", "gcc -c a.c"], 1000, 10000,
     ("exit", 0), 20000),
    ("gcc", 102, "sh", ["gcc", "-c", "a.c"], 1500, 9000, ("exit", 0), 30000),
    ("cc1", 103, "gcc", ["cc1", "a.c"], 2000, 3000, ("exit", 1), 950000),
    ("as", 104, "gcc", ["as", "a.s"], 3500, 3501, ("exit", 0), 700),
    ("true", 105, "sh", ["true"], 9500, 9500.5, ("exit", 0), 100),
    ("ld", 106, "make", ["ld", "-o", "prog"], 11000, 12000,
     ("signal", 9), None),
    ("first", 107, "make", ["first"], 12500, 13000, ("exit", 0), 10000),
    ("hung", 108, "make", ["hung"], 13200, 13700, ("eof",), None),
    ("second", 107, "make", ["second"], 14000, 15500, ("exit", 3), 20000),
    ("brief", 109, "make", ["brief"], 16000, 16002, ("exit", 0), 1000),
    ("daemon", 110, "brief", ["daemon"], 16001, 19000, ("exit", 0), 5000),
    ("tiny", 112, "brief", ["tiny"], 16000.5, 16001, ("exit", 0), 200),
    ("shell", 111, "make", ["sh", "-c", "make -C sub"], 17000, 17250,
     ("exec",), None),
    ("submake", 111, "make", ["make", "-C", "sub"], 17250, 18000,
     ("exit", 0), 120000),
    ("cc", 113, "submake", ["cc", "-c", "s.c"], 17300, 17310, ("exit", 0),
     9000),
]


def ns(ms):
    return int(round(ms * MS))


def capture(host):
    """RUN as a capture; returns its path."""
    c = Capture(host=host, command="make -j2")
    by_key = {r[0]: r for r in RUN}
    for key, pid, parent, argv, start, end, how, cpu in RUN:
        if how[0] == "exec":
            continue                    # written with its successor
        ppid = by_key[parent][1] if parent else 1
        kw = dict(start_ns=ns(start), end_ns=ns(end),
                  cpu=((cpu or 0) / 1e6, 0.0))
        if how[0] == "exit":
            kw["exit"] = how[1]
        elif how[0] == "signal":
            kw["signal"] = how[1]
        else:
            kw["signal"] = 9
            kw["reaped"] = False
        prev = [r for r in RUN if r[1] == pid and r[6] == ("exec",) and
                r[5] == start]
        if prev:
            p = prev[0]
            c.process(pid, ppid, p[3], start_ns=ns(p[4]), end_ns=ns(end),
                      exec=[{"argv": argv, "at_ns": ns(start)}],
                      **{k: v for k, v in kw.items()
                         if k not in ("start_ns", "end_ns")})
        else:
            c.process(pid, ppid, argv, **kw)
    path = os.path.join(otlp.TMP, f"{host}.ptcap")
    c.write(path)
    return path


def status(how):
    if how[0] == "exit" and how[1]:
        return f"exit status {how[1]}"
    if how[0] == "signal":
        return f"killed by signal {how[1]} ({sig.strsignal(how[1])})"
    if how[0] == "eof":
        return "ended without exiting (killed)"
    return None


def dur_ns(r):
    return ns(r[5]) - ns(r[4])


def expected(min_ms=0, max_spans=10000):
    """key -> (parent key or None for the run's span, folded (n, wall µs,
    cpu µs)); and the run's own folded counts: the manual's rules."""
    kept = {r[0] for r in RUN if dur_ns(r) >= ns(min_ms)}
    budget = max_spans - 1 if max_spans else len(RUN)
    if len(kept) > budget:
        durs = sorted((dur_ns(r) for r in RUN if r[0] in kept),
                      reverse=True)
        thr = durs[budget - 1]
        longer = {k for k in kept if dur_ns(RUN_BY[k]) > thr}
        ties = [r[0] for r in sorted(RUN, key=lambda r: r[4])
                if r[0] in kept and dur_ns(r) == thr]
        kept = longer | set(ties[:budget - len(longer)])

    def spanned(key):
        p = RUN_BY[key][2]
        while p is not None and p not in kept:
            p = RUN_BY[p][2]
        return p

    folded = {k: [0, 0, 0] for k in kept}
    folded[None] = [0, 0, 0]
    for r in RUN:
        if r[0] in kept:
            continue
        f = folded[spanned(r[0])]
        f[0] += 1
        f[1] += dur_ns(r) // 1000
        f[2] += r[7] or 0
    return {k: (spanned(k), tuple(folded[k])) for k in kept}, \
        tuple(folded[None])


RUN_BY = {r[0]: r for r in RUN}


def key_of(a):
    """The RUN key of a span's attributes: pid and first argument."""
    for r in RUN:
        if r[1] == a.get("process.pid") and \
                r[3] == a.get("process.command_args"):
            return r[0]
    raise otlp.Failed(f"a span of no execution of the run: {a!r}")


def check_capture(spans, want, root_fold, what):
    """The spans of one capture against expected()."""
    roots = [s for _, s in spans if "parentSpanId" not in s]
    eq(len(roots), 1, f"{what}: spans without a parent")
    root = roots[0]
    got = {}
    for _, s in spans:
        if s is root:
            continue
        a = otlp.attrs(s.get("attributes", []))
        k = key_of(a)
        check(k not in got, f"{what}: two spans for {k}")
        got[k] = (s, a)
    eq(sorted(got), sorted(want), f"{what}: executions with a span")
    ids = {k: s["spanId"] for k, (s, _) in got.items()}
    eq(len(set(ids.values()) | {root["spanId"]}), len(got) + 1,
       f"{what}: distinct span ids")
    base = int(root["startTimeUnixNano"])
    for k, (s, a) in got.items():
        r = RUN_BY[k]
        parent, fold = want[k]
        eq(s.get("parentSpanId"),
           ids[parent] if parent else root["spanId"], f"{what}: parent of {k}")
        eq(s["traceId"], root["traceId"], f"{what}: trace of {k}")
        eq(int(s["startTimeUnixNano"]) - base, ns(r[4]), f"{what}: start of {k}")
        eq(int(s["endTimeUnixNano"]) - base, ns(r[5]), f"{what}: end of {k}")
        st = status(r[6])
        eq(s.get("status", {}).get("code", 0), 2 if st else 0,
           f"{what}: status of {k}")
        eq(s.get("status", {}).get("message") or None, st,
           f"{what}: status message of {k}")
        eq(a.get("process.exit.code"),
           r[6][1] if r[6][0] == "exit" else None, f"{what}: exit of {k}")
        eq(a.get("proftrace.exit.signal"),
           r[6][1] if r[6][0] == "signal" else None,
           f"{what}: signal of {k}")
        eq((a.get("proftrace.folded.count", 0),
            a.get("proftrace.folded.wall_us", 0),
            a.get("proftrace.folded.cpu_us", 0)), fold,
           f"{what}: folded into {k}")
    ra = otlp.attrs(root.get("attributes", []))
    eq(ra.get("proftrace.executions"), len(RUN), f"{what}: executions")
    eq((ra.get("proftrace.folded.count", 0),
        ra.get("proftrace.folded.wall_us", 0),
        ra.get("proftrace.folded.cpu_us", 0)), root_fold,
       f"{what}: folded into the run")
    eq(root.get("status", {}).get("code", 0), 0, f"{what}: the run's status")
    return root["traceId"]


# ---- tests ----

def t_every():
    """Every execution a span, nested as the processes were."""
    cap = capture("alpha")
    with otlp.Receiver() as rx:
        p = otlp.export(rx.url, cap, extra=["--otlp-max-spans", "0"])
        spans = otlp.spans_of(rx.decoded())
    want, root_fold = expected(max_spans=0)
    eq(len(want), len(RUN), "no execution folded")
    check_capture(spans, want, root_fold, "--otlp-max-spans 0")
    check(f"{len(RUN)} executions sent as {len(RUN) + 1} spans" in p.stderr,
          f"summary: {p.stderr!r}")


def t_min_duration():
    """--otlp-min-duration: short ones counted in their nearest ancestor."""
    cap = capture("alpha")
    with otlp.Receiver() as rx:
        p = otlp.export(rx.url, cap, extra=["--otlp-min-duration", "5"])
        spans = otlp.spans_of(rx.decoded())
    want, root_fold = expected(min_ms=5)
    # By construction: as, true, brief and its child tiny folded (tiny
    # into make, past its folded parent); the daemon that outlived brief
    # hangs under make.
    eq(len(RUN) - len(want), 4, "executions under 5 ms")
    eq(want["make"][1][0], 2, "folded into make")
    eq(want["daemon"][0], "make", "the daemon's spanned ancestor")
    check_capture(spans, want, root_fold, "--otlp-min-duration 5")
    check("4 shorter than 5 ms" in p.stderr, f"summary: {p.stderr!r}")


def t_max_spans():
    """--otlp-max-spans: the longest kept, ties in start order, in both
    encodings."""
    cap = capture("alpha")
    got = []
    with otlp.Receiver() as rx:
        for proto in ("http/protobuf", "http/json"):
            before = len(rx.decoded())
            p = otlp.export(rx.url, cap, extra=["--otlp-max-spans", "7",
                                                "--otlp-protocol", proto])
            got.append(otlp.spans_of(rx.decoded()[before:]))
            check(f"{len(RUN) - 6} beyond --otlp-max-spans 7" in p.stderr,
                  f"summary: {p.stderr!r}")
    want, root_fold = expected(max_spans=7)
    # cc1 and ld last a second each, the sixth longest: cc1 started first.
    check("cc1" in want and "ld" not in want, f"kept: {sorted(want)}")
    # cc is folded with its parent submake: into make.
    check("cc" not in want and "submake" not in want, "cc folded")
    for spans, proto in zip(got, ("protobuf", "JSON")):
        check_capture(spans, want, root_fold, f"--otlp-max-spans 7 {proto}")


def t_several():
    """Several captures in one command: a trace each, each complete."""
    a, b = capture("alpha"), capture("beta")
    with otlp.Receiver() as rx:
        p = otlp.export(rx.url, a, b, extra=["--otlp-min-duration", "5"])
        spans = otlp.spans_of(rx.decoded())
    want, root_fold = expected(min_ms=5)
    hosts = {}
    for res, s in spans:
        hosts.setdefault(res["host.name"], []).append((res, s))
    eq(sorted(hosts), ["alpha", "beta"], "hosts")
    traces = [check_capture(hosts[h], want, root_fold, h)
              for h in ("alpha", "beta")]
    check(traces[0] != traces[1], "two runs share a trace")
    eq(p.stderr.count("executions sent as"), 2, "a summary per capture")


TESTS = [t_every, t_min_duration, t_max_spans, t_several]


if __name__ == "__main__":
    sys.exit(otlp.main(TESTS, "pt-otlp-spans-"))
