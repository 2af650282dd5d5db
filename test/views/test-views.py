#!/usr/bin/env python3
"""End-to-end tests of the views: report, diff, trace JSON, folded stacks.

    test-views.py --proftrace BIN [--speedscope DIR] [-k NAME]

(--speedscope defaults to $PT_SPEEDSCOPE_DIR.)

Every capture here is written by hand (mkcapture.py) so that each number
the views print is known by construction: the critical path, the
parallelism profile, self times, lanes.  The outputs are checked the way
their readers read them: trace JSON with Python's json module and
validate-trace.py (Perfetto's, chrome://tracing's and speedscope's rules),
folded stacks with the regular expression flame graph tools use, the
report by the numbers in its tables.  With --speedscope (the npm package's
directory) the JSON and folded files also go through speedscope's own
importer.

The last line counts the results: "N passed, N failed".
"""

import csv
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
sys.path.insert(0, TOOLS)
from mkcapture import Capture  # noqa: E402
import viewlib  # noqa: E402
from viewlib import (Failed, capture, check, eq, rows, run,  # noqa: E402
                     section)

spec = importlib.util.spec_from_file_location(
    "validate_trace", os.path.join(TOOLS, "validate-trace.py"))
validate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(validate)

ARGS = None
TMP = None
US = 1_000_000                  # microseconds in a second


def have_speedscope():
    """--speedscope (or $PT_SPEEDSCOPE_DIR) names the package's directory."""
    return ARGS.speedscope and os.path.isdir(ARGS.speedscope)


def trace(*caps):
    out = os.path.join(TMP, "t.json")
    run("convert", "-f", "json", "--force", "-o", out, *caps)
    doc = validate.load_trace(out)
    validate.check_trace(doc)
    if have_speedscope() and xevents(doc):
        speedscope(out)
    return doc


def folded(*caps, fmt="folded"):
    out = os.path.join(TMP, "t.folded")
    run("convert", "-f", fmt, "--force", "-o", out, *caps)
    with open(out, "rb") as f:
        text = f.read().decode("utf-8")
    validate.check_folded(text)
    if have_speedscope() and text:
        speedscope(out)
    lines = {}
    for line in text.splitlines():
        stack, w = validate.FOLDED_LINE.match(line).groups()
        lines[stack] = int(w)
    return lines


def speedscope(path):
    p = subprocess.run(["node", os.path.join(TOOLS, "speedscope-check.js"),
                        ARGS.speedscope, path], capture_output=True,
                       text=True)
    if p.returncode == 77:
        return
    check(p.returncode == 0, "speedscope: " + p.stdout + p.stderr)


def report(*args):
    text = run("report", "--width", "200", *args).decode("utf-8")
    check("\t" not in text and not re.search(r"[\x00-\x09\x0b-\x1f\x7f]",
                                             text),
          "control characters in the report")
    return text


def xevents(doc):
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


def by_name(doc):
    out = {}
    for e in xevents(doc):
        out.setdefault(e["name"], []).append(e)
    return out


# ---- the runs ----

CC1 = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"


def make_like():
    """make [0,10]: cc a.c [1,4] > cc1 [1.5,3.5]; cc b.c [1,6] > cc1
    [2,5.5]; ld [6.5,9], which fails."""
    c = Capture(host="alpha", command="make -j2",
                meta={"CI_JOB_ID": "42", "CI_PIPELINE_ID": "7"})
    liba = {"OPAM_PACKAGE_NAME": "liba", "OPAM_PACKAGE_VERSION": "1.0"}
    libb = {"OPAM_PACKAGE_NAME": "libb", "OPAM_PACKAGE_VERSION": "2.0"}
    c.process(100, 1, ["make", "-j2"], start=0, end=10)
    c.process(101, 100, ["cc", "-c", "a.c", "-o", "a.o"], start=1, end=4,
              cpu=(0.5, 0.1), env=liba)
    c.process(102, 101, [CC1, "-quiet", "a.c", "-o", "/tmp/ccX.s"],
              start=1.5, end=3.5, env=liba)
    c.process(103, 100, ["cc", "-c", "b.c", "-o", "b.o"], start=1, end=6,
              env=libb)
    c.process(104, 103, [CC1, "-quiet", "b.c", "-o", "/tmp/ccY.s"],
              start=2, end=5.5, env=libb)
    c.process(105, 100, ["ld", "-o", "prog", "a.o", "b.o"], start=6.5,
              end=9, exit=1)
    return c


def test_make_report():
    text = report(capture("make", make_like))
    summ = "\n".join(section(text, "Summary"))
    check(re.search(r"wall time\s+10\.000 s", summ), summ)
    check(re.search(r"executions\s+6\s+1 failed", summ), summ)
    check(re.search(r"CPU time\s+0\.600 s", summ), summ)
    check(re.search(r"parallelism\s+1\.30 .*peak 2", summ), summ)

    # self = wall less the union of the direct children's intervals
    eq(rows(section(text, "Programs by self time"), 6),
       [["5.500", "42.3", "5.500", "42.3", "0.000", "2", "cc1"],
        ["2.500", "19.2", "13.000", "100.0", "0.000", "1", "make"],
        ["2.500", "19.2", "8.000", "61.5", "0.600", "2", "cc"],
        ["2.500", "19.2", "2.500", "19.2", "0.000", "1", "ld"]],
       "programs by self time")
    eq([r[2] + " " + r[6] for r in
        rows(section(text, "Programs by total time"), 6)],
       ["13.000 make", "8.000 cc", "5.500 cc1", "2.500 ld"], "by total")

    eq(rows(section(text, "Process tree"), 2),
       [["10.000", "2.500", "make"],
        ["3.000", "1.000", "|- cc a.c"],
        ["2.000", "2.000", "|  `- cc1 a.c"],
        ["5.000", "1.500", "|- cc b.c"],
        ["3.500", "3.500", "|  `- cc1 b.c"],
        ["2.500", "2.500", "`- ld prog  [exit 1]"]], "tree")

    # make waits for ld, which started after cc b.c (the later of the two
    # compiles) ended, which waited for its cc1.
    eq(rows(section(text, "Critical path ("), 5),
       [["0.000", "10.000", "100.0", "2.500", "25.0", "make"],
        ["1.000", "5.000", "50.0", "1.500", "15.0", "cc b.c"],
        ["2.000", "3.500", "35.0", "3.500", "35.0", "cc1 b.c"],
        ["6.500", "2.500", "25.0", "2.500", "25.0", "ld prog"]],
       "critical path")
    check("off the path" not in text, "no time off the path")
    eq([r[0] + " " + r[3] for r in
        rows(section(text, "Critical path by"), 3)],
       ["3.500 cc1", "2.500 make", "2.500 ld", "1.500 cc"], "path by program")

    eq([r[:3] for r in rows(section(text, "Parallelism"), 3)],
       [["0", "0.000", "0.0"], ["1", "7.000", "70.0"],
        ["2", "3.000", "30.0"]], "parallelism")
    eq([r[:2] + r[3:] for r in rows(section(text, "Longest stretches"), 3)],
       [["2.500", "6.500", "ld prog"], ["1.500", "4.000", "cc1 b.c"],
        ["1.000", "0.000", "make"], ["1.000", "9.000", "make"],
        ["0.500", "5.500", "cc b.c"]], "stretches")


def test_make_group_by():
    cap = capture("make", make_like)
    text = report("--group-by", "package", cap)
    eq([(r[0], r[6]) for r in rows(section(text, "Programs by self"), 6)],
       [("5.000", "(none)"), ("5.000", "libb.2.0"), ("3.000", "liba.1.0")],
       "self time by package")
    text = report("--group-by", "env:OPAM_PACKAGE_NAME", cap)
    eq(sorted(r[6] for r in rows(section(text, "Programs by self"), 6)),
       ["(unset)", "liba", "libb"], "groups by env")
    p = subprocess.run([ARGS.proftrace, "report", "--group-by", "nope", cap],
                       capture_output=True)
    eq(p.returncode, 2, "bad --group-by")


def dirs_run():
    """make [0,10] in /src runs make -C lib [1,9] in /src/lib, which runs
    three compiles at once there: cc x.c [1,5], cc y.c [1,6], cc z.c
    [2,8]."""
    c = Capture(host="dirs", command="make")
    c.process(200, 1, ["make"], start=0, end=10, cwd="/src")
    c.process(201, 200, ["make", "-C", "lib"], start=1, end=9,
              cwd="/src/lib")
    for pid, f, s, e in ((202, "x.c", 1, 5), (203, "y.c", 1, 6),
                         (204, "z.c", 2, 8)):
        c.process(pid, 201, ["cc", "-c", f], start=s, end=e, cwd="/src/lib")
    return c


def group_rows(text, title):
    """{group: (self, total)} of a program table, in seconds."""
    return {r[6]: (float(r[0]), float(r[2]))
            for r in rows(section(text, title), 6)}


def test_group_columns():
    """A group's self time sums its executions' (parallel ones add up);
    its total adds everything they started, each execution once."""
    cap = capture("dirs", dirs_run)
    # Self times: make 2 (10 less lib's 8), make -C lib 1 (8 less the
    # compiles' union [1,8]), the compiles 4 + 5 + 6; 18 s in all, which
    # is the busy time: 1.8 busy on average over 10 s.
    text = report("--group-by", "cwd", cap)
    check(re.search(r"parallelism\s+1\.80 ", text), "average busy")
    for title in ("Programs by self time", "Programs by total time"):
        eq(group_rows(text, title), {"/src": (2.0, 18.0),
                                     "/src/lib": (16.0, 16.0)}, title)
    eq([r[6] for r in rows(section(text, "Programs by total time"), 6)],
       ["/src", "/src/lib"], "order by total")
    eq([(r[1], r[3]) for r in rows(section(text, "Programs by self"), 6)],
       [("88.9", "88.9"), ("11.1", "100.0")], "shares of all self time")
    # make inside make counts once; the parallel compiles add up
    text = report(cap)
    eq(group_rows(text, "Programs by self time"),
       {"make": (3.0, 18.0), "cc": (15.0, 15.0)}, "by program")


def reference_groups(procs):
    """{group: [self, total]} from the definitions, for a list of
    (pid, ppid, start, end, group) with integer times, parents first."""
    kids = {}
    for p in procs:
        kids.setdefault(p[1], []).append(p)
    byid = {p[0]: p for p in procs}
    out = {p[4]: [0, 0] for p in procs}
    for pid, _, s, e, g in procs:
        # self: its time less the union of its children's (clipped)
        cover, to = 0, None
        for c in sorted(kids.get(pid, []), key=lambda c: c[2]):
            cs, ce = max(c[2], s), min(c[3], e)
            if ce <= cs:
                continue
            if to is not None and cs <= to:
                cover += max(ce, to) - to
                to = max(ce, to)
            else:
                cover += ce - cs
                to = ce
        own = e - s - cover
        out[g][0] += own
        # total: to each group on the way to the root, once
        seen, q = set(), byid[pid]
        while q:
            if q[4] not in seen:
                seen.add(q[4])
                out[q[4]][1] += own
            q = byid.get(q[1])
    return out


def test_group_columns_random():
    """On random trees (orphans, ties, zero lengths), for every grouping:
    the numbers of the definitions, and self <= total <= all self time."""
    import random
    for seed in range(4):
        rnd = random.Random(seed)
        c = Capture(host=f"groups{seed}")
        procs = [(3000, 1, 0, 200, "/w0", "make")]
        c.process(3000, 1, ["make"], start=0, end=2, cwd="/w0")
        for i in range(1, 120):
            pid, _, ps, pe, _, _ = rnd.choice(procs)
            s = rnd.randint(ps, pe)
            e = s + rnd.choice([0, 1, 3, 10, 40])
            if rnd.random() < 0.8:
                e = min(e, pe)
            cwd = rnd.choice(["/w0", "/w1", "/w2"])
            exe = rnd.choice(["make", "sh", "cc"])
            c.process(3000 + i, pid, [exe, f"f{i}"], start=s * 0.01,
                      end=e * 0.01, cwd=cwd, reaped=False)
            procs.append((3000 + i, pid, s, e, cwd, exe))
        cap = capture(f"groups{seed}", lambda: c)
        for by, col in (("cwd", 4), ("exe", 5)):
            ref = reference_groups([p[:4] + (p[col],) for p in procs])
            allself = sum(v[0] for v in ref.values())
            text = report("--top", "10", "--group-by", by, cap)
            for title in ("Programs by self time", "Programs by total time"):
                got = group_rows(text, title)
                eq(got, {g: (v[0] / 100, v[1] / 100)
                         for g, v in ref.items()}, f"seed {seed} {by}")
                for g, (gs, gt) in got.items():
                    check(gs <= gt <= allself / 100,
                          f"seed {seed} {by} {g}: self {gs} total {gt}")


def test_make_width():
    cap = capture("make", make_like)
    for w in ("60", "80"):
        text = run("report", "--width", w, cap).decode()
        for line in text.splitlines():
            check(len(line) <= int(w), f"line longer than {w}: {line!r}")
            check(line == line.rstrip(), f"trailing space: {line!r}")
    env = dict(os.environ, COLUMNS="72")
    text = subprocess.run([ARGS.proftrace, "report", cap], env=env,
                          capture_output=True, check=True).stdout.decode()
    check(max(len(x) for x in text.splitlines()) <= 72, "$COLUMNS ignored")


def test_make_trace():
    doc = trace(capture("make", make_like))
    xs = by_name(doc)
    want = {"make": (0, 10), "cc a.c": (1, 3), "cc1 a.c": (1.5, 2),
            "cc b.c": (1, 5), "cc1 b.c": (2, 3.5), "ld prog": (6.5, 2.5)}
    eq(sorted(xs), sorted(want), "event names")
    for name, (ts, dur) in want.items():
        e = xs[name][0]
        eq((e["ts"], e["dur"]), (int(ts * US), int(dur * US)), name)
        eq(e["pid"], 1, name + " pid")
        eq(e["cat"], "exec", name + " cat")
    a = xs["cc a.c"][0]["args"]
    eq(a["argv"], ["cc", "-c", "a.c", "-o", "a.o"], "argv")
    eq((a["pid"], a["ppid"], a["cwd"], a["exit_code"], a["signal"]),
       (101, 100, "/src", 0, 0), "args")
    eq((a["user_cpu_s"], a["sys_cpu_s"], a["max_rss_kb"], a["package"]),
       (0.5, 0.1, 1000, "liba.1.0"), "cpu, rss, package")
    eq(xs["ld prog"][0]["args"]["exit_code"], 1, "ld's exit code")
    eq(xs["make"][0]["args"]["package"], None, "no package")

    # a flow from each parent to each child, parent's lane to child's
    evs = doc["traceEvents"]
    s = {e["id"]: e for e in evs if e["ph"] == "s"}
    f = {e["id"]: e for e in evs if e["ph"] == "f"}
    eq(len(s), 5, "flows")
    lane = {e["args"]["pid"]: e["tid"] for e in xevents(doc)}
    start = {e["args"]["pid"]: e["ts"] for e in xevents(doc)}
    pairs = set()
    for i in s:
        src = [p for p, t in lane.items() if t == s[i]["tid"] and
               start[p] <= s[i]["ts"]]
        dst = [p for p, t in lane.items() if t == f[i]["tid"] and
               start[p] == f[i]["ts"]]
        check(len(dst) == 1, f"flow {i} ends at no child start")
        pairs.add((max(src, key=lambda p: start[p]), dst[0]))
    eq(pairs, {(100, 101), (101, 102), (100, 103), (103, 104), (100, 105)},
       "parent -> child flows")

    # the counter: all running, and the busy ones (no running child)
    cs = [(e["ts"], e["args"]["running"], e["args"]["busy"]) for e in evs
          if e["ph"] == "C"]
    eq(cs, [(0, 1, 1), (1 * US, 3, 2), (int(1.5 * US), 4, 2), (2 * US, 5, 2),
            (int(3.5 * US), 4, 2), (4 * US, 3, 1), (int(5.5 * US), 2, 1),
            (6 * US, 1, 1), (int(6.5 * US), 2, 1), (9 * US, 1, 1),
            (10 * US, 0, 0)], "counter samples")

    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] in ("process_name",
                                                  "thread_name")}
    check(names[(1, 0)].startswith("alpha"), "process name: " +
          names[(1, 0)])
    md = doc["metadata"]
    eq((md["host"], md["CI_JOB_ID"], md["CI_PIPELINE_ID"], md["cpus"],
        md["command"]), ("alpha", "42", "7", "2", "make -j2"), "metadata")
    eq(md["start_time"], "2023-11-14T22:13:20.000Z", "start time")
    eq(len(md["captures"]), 1, "captures")


def test_make_folded():
    cap = capture("make", make_like)
    eq(folded(cap), {"make": 2_500_000, "make;cc a.c": 1_000_000,
                     "make;cc a.c;cc1 a.c": 2_000_000,
                     "make;cc b.c": 1_500_000,
                     "make;cc b.c;cc1 b.c": 3_500_000,
                     "make;ld prog": 2_500_000}, "wall self time")
    eq(folded(cap, fmt="folded-cpu"), {"make;cc a.c": 600_000}, "cpu")


def ties():
    """sh [0,4] runs two identical workers [0,2], a zero-length true at 3
    and post [2,4], which starts as the workers end."""
    c = Capture(host="ties")
    c.process(200, 1, ["sh", "-c", "build"], start=0, end=4)
    c.process(201, 200, ["worker", "x"], start=0, end=2)
    c.process(202, 200, ["worker", "x"], start=0, end=2)
    c.process(203, 200, ["true"], start=3, end=3)
    c.process(204, 200, ["post"], start=2, end=4)
    return c


def test_ties():
    cap = capture("ties", ties)
    text = report(cap)
    eq(rows(section(text, "Critical path ("), 5),
       [["0.000", "4.000", "100.0", "0.000", "0.0", "sh build"],
        ["0.000", "2.000", "50.0", "2.000", "50.0", "worker x"],
        ["2.000", "2.000", "50.0", "2.000", "50.0", "post"]], "path")
    eq([r[:3] for r in rows(section(text, "Parallelism"), 3)],
       [["0", "0.000", "0.0"], ["1", "2.000", "50.0"],
        ["2", "2.000", "50.0"]], "parallelism")
    check(re.search(r"average 1\.50 busy, peak 2", text), "average")
    eq([r[:2] + r[3:] for r in rows(section(text, "Longest stretches"), 3)],
       [["2.000", "2.000", "post"]], "stretches")
    # identical stacks merge; zero weights (sh, true) are left out
    eq(folded(cap), {"sh build;worker x": 4_000_000,
                     "sh build;post": 2_000_000}, "folded")
    doc = trace(cap)
    z = by_name(doc)["true"][0]
    eq((z["ts"], z["dur"]), (3 * US, 0), "zero-length event")
    # events on one lane never even touch
    for lane in {(e["pid"], e["tid"]) for e in xevents(doc)}:
        evs = sorted((e["ts"], e["ts"] + e["dur"]) for e in xevents(doc)
                     if (e["pid"], e["tid"]) == lane)
        for a, b in zip(evs, evs[1:]):
            check(a[1] < b[0], f"touching on lane {lane}: {a} {b}")


def orphan():
    """sh [0,10] runs launcher [1,2], whose child daemon [1.5,8] outlives
    it, then finish [8,9]."""
    c = Capture(host="orphan")
    c.process(300, 1, ["sh", "-c", "run"], start=0, end=10)
    c.process(301, 300, ["launcher", "bg"], start=1, end=2)
    c.process(302, 301, ["daemon", "q"], start=1.5, end=8)
    c.process(303, 300, ["finish"], start=8, end=9)
    return c


def test_orphan():
    cap = capture("orphan", orphan)
    text = report(cap)
    # the path follows the orphan: its subtree ends last before finish
    eq(rows(section(text, "Critical path ("), 5),
       [["0.000", "10.000", "100.0", "2.000", "20.0", "sh run"],
        ["1.000", "7.000", "70.0", "0.500", "5.0", "launcher bg"],
        ["1.500", "6.500", "65.0", "6.500", "65.0", "daemon q"],
        ["8.000", "1.000", "10.0", "1.000", "10.0", "finish"]], "path")
    # the orphan keeps sh from counting as busy: one busy at any time
    eq([r[:3] for r in rows(section(text, "Parallelism"), 3)],
       [["0", "0.000", "0.0"], ["1", "10.000", "100.0"]], "parallelism")
    eq([r[:2] + r[3:] for r in rows(section(text, "Longest stretches"), 3)],
       [["6.500", "1.500", "daemon q"], ["1.000", "0.000", "sh run"],
        ["1.000", "8.000", "finish"], ["1.000", "9.000", "sh run"],
        ["0.500", "1.000", "launcher bg"]], "stretches")
    eq(folded(cap), {"sh run": 8_000_000, "sh run;launcher bg": 500_000,
                     "sh run;launcher bg;daemon q": 6_500_000,
                     "sh run;finish": 1_000_000}, "folded")
    trace(cap)


R0 = 1_700_000_000_000_000_000


def host_a():
    c = Capture(host="alpha", mono_base_ns=1000 * 10**9, realtime_base_ns=R0,
                command="build-a")
    c.process(400, 1, ["build-a"], start=0, end=4)
    return c


def host_b():
    # Another machine: its monotonic clock is unrelated, its wall clock
    # says it started 2 s after alpha.
    c = Capture(host="beta", mono_base_ns=5 * 10**9,
                realtime_base_ns=R0 + 2 * 10**9, command="build-b")
    c.process(400, 1, ["build-b"], start=0, end=3)
    return c


def test_two_hosts():
    a, b = capture("alpha", host_a), capture("beta", host_b)
    text = report(a, b)
    caps = section(text, "Captures")
    check(re.search(r"#1\s+alpha\s+2023-11-14T22:13:20\.000Z\s+4\.000 s\s+"
                    r"1 execution ", caps[0]), caps[0])
    check(re.search(r"#2\s+beta\s+2023-11-14T22:13:22\.000Z\s+3\.000 s\s+"
                    r"1 execution ", caps[1]), caps[1])
    check(re.search(r"wall time\s+5\.000 s", text), "wall")
    eq([r[:3] for r in rows(section(text, "Parallelism"), 3)],
       [["0", "0.000", "0.0"], ["1", "3.000", "60.0"],
        ["2", "2.000", "40.0"]], "parallelism")
    eq(rows(section(text, "Critical path ("), 5),
       [["2.000", "3.000", "60.0", "3.000", "60.0", "build-b"]], "path")
    check(re.search(r"off the path: 2\.000 s \(40\.0%\)", text), "off path")

    doc = trace(a, b)
    xs = by_name(doc)
    eq((xs["build-a"][0]["pid"], xs["build-a"][0]["ts"],
        xs["build-a"][0]["dur"]), (1, 0, 4 * US), "build-a")
    eq((xs["build-b"][0]["pid"], xs["build-b"][0]["ts"],
        xs["build-b"][0]["dur"]), (2, 2 * US, 3 * US), "build-b")
    pnames = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
              if e["ph"] == "M" and e["name"] == "process_name"}
    check(pnames[1].startswith("alpha") and pnames[2].startswith("beta"),
          str(pnames))
    eq([c["host"] for c in doc["metadata"]["captures"]], ["alpha", "beta"],
       "captures")
    eq(folded(a, b), {"capture 1 alpha;build-a": 4 * US,
                      "capture 2 beta;build-b": 3 * US}, "folded")


def strings():
    c = Capture(host="h\u00f6st", command="sh -c 'a\nb\x1b[31m'")
    c.process(500, 1, ["sh", "-c", "a; b\nc"], start=0, end=3)
    c.process(501, 500, [b"caf\xe9", 'quote"back\\slash', "ctl\x01\x1f",
                         "tab\there", "nl\nx", "semi;colon",
                         "\u00e9\u20ac\U0001F600", b"\xff\xfe",
                         b"\xe2\x82"],
              start=1, end=2, cwd=b"/src/\xff", exe="/bin/caf")
    c.process(502, 500, ["sleep", "100"], start=2, end=2.5, signal=9)
    return c


def test_strings():
    cap = capture("strings", strings)
    doc = trace(cap)
    ev = [e for e in xevents(doc) if e["args"]["pid"] == 501][0]
    eq(ev["args"]["argv"],
       ["caf\ufffd", 'quote"back\\slash', "ctl\x01\x1f", "tab\there",
        "nl\nx", "semi;colon", "\u00e9\u20ac\U0001F600", "\ufffd\ufffd",
        "\ufffd\ufffd"], "argv through JSON")
    eq(ev["args"]["cwd"], "/src/\ufffd", "cwd")
    killed = [e for e in xevents(doc) if e["args"]["pid"] == 502][0]
    eq(killed["args"]["signal"], 9, "signal")
    fl = folded(cap)
    for stack in fl:
        check("\n" not in stack, "newline in a stack")
    check("sh a, b c" in fl, f"sh -c label cleaned: {list(fl)}")
    text = report(cap)
    check(re.search(r"1 killed by a signal", text), "killed count")
    check("[signal 9]" in text, "signal in the tree")


def diff_a():
    c = Capture(host="a")
    d = dict(cwd="/home/u/src1")        # the checkout, elsewhere in B
    c.process(600, 1, ["make"], start=0, end=10, **d)
    c.process(601, 600, ["cc", "-c", "/home/u/src1/a.c", "-o",
                         "/tmp/ccAbc12.o"], start=1, end=3, **d)
    c.process(602, 600, ["cc", "-c", "/home/u/src1/b.c", "-o", "b.o"],
              start=3, end=4, **d)
    return c


def diff_b():
    c = Capture(host="b")
    d = dict(cwd="/builds/x/src")
    c.process(700, 1, ["make"], start=0, end=8, **d)
    c.process(701, 700, ["cc", "-c", "/builds/x/src/a.c", "-o",
                         "/tmp/ccZZ99.o"], start=1, end=4, **d)
    c.process(702, 700, ["cc", "-c", "/builds/x/src/c.c", "-o", "c.o"],
              start=4, end=5, **d)
    return c


def test_diff():
    a, b = capture("diff-a", diff_a), capture("diff-b", diff_b)
    text = run("diff", "--width", "200", a, b).decode()
    check(re.search(r"wall s\s+10\.000\s+8\.000\s+-2\.000", text), text)
    check(re.search(r"executions\s+3\s+3\s+\+0", text), text)
    ch = rows(section(text, "Largest changes"), 6)
    eq([(r[0], r[1], r[2], r[6]) for r in ch],
       [("10.000", "8.000", "-2.000", "make"),
        ("2.000", "3.000", "+1.000", "cc -c $SRC/a.c -o $TMP/*.o")],
       "changes")
    only_a = section(text, "Only in A")
    only_b = section(text, "Only in B")
    check(re.search(r"1\.000\s+1\s+cc -c \$SRC/b\.c -o b\.o", only_a[0]),
          only_a)
    check(re.search(r"1\.000\s+1\s+cc -c \$SRC/c\.c -o c\.o", only_b[0]),
          only_b)
    text = run("diff", "--group-by", "exe", "--weight", "self", a, b).decode()
    ch = rows(section(text, "Largest changes"), 6)
    eq([(r[0], r[1], r[6]) for r in ch],
       [("7.000", "4.000", "make"), ("3.000", "4.000", "cc")], "by exe")
    eq(subprocess.run([ARGS.proftrace, "diff", a], capture_output=True)
       .returncode, 2, "diff with one capture")


LABELS = [
    (["make", "-j", "install"], "make install"),
    (["make", "-C", "src", "-j", "8", "all"], "make all"),
    (["x86_64-linux-gnu-gcc-12", "-c", "-o", "foo.o", "/home/u/foo.c"],
     "x86_64-linux-gnu-gcc-12 foo.c"),
    (["as", "--64", "-o", "foo.o", "/tmp/ccX.s"], "as foo.o"),
    # What gcc -MD passes cc1: the dependency file (.d, also D's source
    # extension) is not the source.
    (["/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", "-I", "lib", "-MD",
      "lib/quotearg.d", "-MF", "lib/.deps/quotearg.Tpo", "-MT", "lib/q.d",
      "lib/quotearg.c", "-o", "/tmp/cc1.s"], "cc1 lib/quotearg.c"),
    (["gcc", "-MD", "-c", "lib/quotearg.c"], "gcc lib/quotearg.c"),
    (["gdc", "-c", "app.d"], "gdc app.d"),
    (["ocamlfind", "ocamlopt", "-c", "src/a.ml"], "ocamlfind src/a.ml"),
    (["ocamlopt.opt", "-c", "-I", "lib", "lib/b.mli"], "ocamlopt.opt lib/b.mli"),
    (["ar", "rcs", "libx.a", "a.o"], "ar libx.a"),
    (["python3", "-u", "/usr/share/x/script.py", "arg"], "python3 script.py"),
    (["rustc", "--crate-name", "foo", "src/lib.rs"], "rustc src/lib.rs"),
    (["/usr/bin/env"], "env"),
    # A script too long for a label is left out, never cut.
    (["sh", "-c", "echo " + "x" * 100], "sh -c"),
    (["sh", "-c", "echo \u00e9" * 30], "sh -c"),
    (["sh", "-c", "echo " + "x" * 50], "sh echo " + "x" * 50),
]


def labels():
    c = Capture(host="labels")
    c.process(800, 1, ["sh"], start=0, end=20)
    for i, (argv, _) in enumerate(LABELS):
        c.process(801 + i, 800, argv, start=1 + i, end=1.5 + i)
    return c


def test_labels():
    doc = trace(capture("labels", labels))
    got = {e["args"]["pid"]: e["name"] for e in xevents(doc)}
    for i, (argv, want) in enumerate(LABELS):
        name = got[801 + i]
        check(len(name.encode()) <= 64, f"label too long: {name!r}")
        if want is not None:
            eq(name, want, f"label of {argv[:3]}")
        else:
            check(name.endswith("..."), name)   # cut, and valid UTF-8


def random_run(seed, n=300):
    """A random tree: times on a coarse grid so that ties, zero-length
    executions and children outliving parents all happen."""
    import random
    rnd = random.Random(seed)
    c = Capture(host=f"random{seed}")
    procs = [(1000, 0, 100)]
    c.process(1000, 1, ["root"], start=0, end=100 * 0.01)
    for i in range(1, n):
        pid, ps, pe = rnd.choice(procs)
        s = rnd.randint(ps, pe)
        e = s + rnd.choice([0, 0, 1, 2, 5, 10, 30])
        if rnd.random() < 0.8:
            e = min(e, pe)      # most children end before their parent
        me = 1000 + i
        c.process(me, pid, [rnd.choice(["cc", "sh", "ld", "make", "as"]),
                            f"f{rnd.randint(0, 20)}.c"],
                  start=s * 0.01, end=e * 0.01, reaped=False)
        procs.append((me, s, e))
    return c


def test_random_invariants():
    for seed in range(6):
        cap = capture(f"random{seed}", lambda: random_run(seed))
        text = report("--top", "5", cap)
        wall = float(re.search(r"wall time\s+([\d.]+) s", text).group(1))
        # parallelism levels cover the wall time
        lv = rows(section(text, "Parallelism"), 3)
        check(abs(sum(float(r[1]) for r in lv) - wall) < 0.001 * len(lv) +
              1e-9, f"seed {seed}: levels do not add up to the wall time")
        # own times on the critical path, plus what is off it, too
        cp = section(text, "Critical path (")
        own = sum(float(r[3]) for r in rows(cp, 5))
        for line in cp:
            m = re.search(r"shorter steps, own ([\d.]+) s", line) or \
                re.search(r"off the path: ([\d.]+) s", line)
            if m:
                own += float(m.group(1))
        check(abs(own - wall) < 0.001 * len(cp) + 1e-9,
              f"seed {seed}: path own times {own} != wall {wall}")
        doc = trace(cap)
        eq(len(xevents(doc)), 300, "events")
        fl = folded(cap)
        check(sum(fl.values()) > 0, "weights")


def test_deep():
    """A chain of 300 nested shells: folded stacks stop at 256 frames."""
    def chain():
        c = Capture(host="deep")
        for i in range(300):
            c.process(2000 + i, 1999 + i if i else 1, ["sh", f"l{i}"],
                      start=i * 0.01, end=10 - i * 0.01, reaped=False)
        return c
    cap = capture("deep", chain)
    fl = folded(cap)
    eq(len(fl), 257, "stacks")
    deepest = max(fl, key=lambda k: k.count(";"))
    eq(deepest.count(";"), 256, "frames in the deepest stack")
    check(deepest.endswith(";sh l255;..."), deepest[-40:])
    eq(fl[deepest], 43 * 20_000 + 4_020_000, "weight below the cap")
    text = report(cap)
    check(re.search(r"\[299\] sh l299", text) or "shorter steps" in text,
          "deep path")
    trace(cap)


def test_redact():
    def secret():
        c = Capture(host="s", command="deploy --token ghp_abc123")
        c.process(900, 1, ["deploy", "--token", "ghp_abc123"], start=0,
                  end=2)
        c.process(901, 900, ["curl", "-H", "auth: ghp_abc123"], start=1,
                  end=2)
        return c
    cap = capture("secret", secret)
    check("ghp_abc123" in report(cap), "the secret is there to mask")
    text = report("--redact", "ghp_[a-z0-9]+", cap)
    check("ghp_" not in text and "***" in text, text)
    text = run("diff", "--redact", "ghp_[a-z0-9]+", cap, cap).decode()
    check("ghp_" not in text and "***" in text, text)
    p = subprocess.run([ARGS.proftrace, "report", "--redact", "(", cap],
                       capture_output=True)
    eq(p.returncode, 2, "bad pattern")


def test_redact_long_arguments():
    """Long arguments with spaces are masked each for what it holds."""
    scripts = ["gcc -c -O2 -I/usr/include/libfoo src/file%d.c -o build/"
               "file%d.o %s" % (i, i, "--token ghp_s%d" % i if i % 2 else
                                "-DPLAIN=1") for i in range(6)]

    def build():
        c = Capture(host="r")
        c.process(900, 1, ["make", "-j2"], start=0, end=10)
        for i, sc in enumerate(scripts):
            c.process(910 + i, 900, ["sh", "-c", sc], start=1 + i, end=2 + i)
        return c
    cap = capture("redact-long", build)
    out = os.path.join(TMP, "redact-long.json")
    run("convert", "-f", "json", "--redact", "ghp_[a-z0-9]+", "-o", out, cap)
    doc = validate.load_trace(out)
    validate.check_trace(doc)
    got = {e["args"]["pid"]: e["args"]["argv"] for e in xevents(doc)}
    for i, sc in enumerate(scripts):
        eq(got[910 + i], ["sh", "-c", re.sub(r"ghp_[a-z0-9]+", "***", sc)],
           f"argv of script {i}")


def test_many_chunks():
    """Thousands of executions, which the writers format in chunks on two
    threads: each one once, in start order, with its own command line
    (long ones are kept as words and joined again per thread)."""
    n = 3500
    scripts = ["gcc -c -O2 -I/usr/include/lib%d -DN=%d src/f%d.c -o build/"
               "f%d.o" % (i % 7, i, i, i) for i in range(n)]

    def build():
        c = Capture(host="many")
        c.process(500, 1, ["make", "-j8"], start=0, end=n + 1)
        for i, sc in enumerate(scripts):
            c.process(10000 + i, 500, ["sh", "-c", sc], start=1 + i * 0.5,
                      end=2 + i * 0.5 + (i % 5) * 0.25)
        return c
    cap = capture("many-chunks", build)
    doc = trace(cap)
    got = {}
    for e in xevents(doc):
        check(e["args"]["pid"] not in got, f"pid {e['args']['pid']} twice")
        got[e["args"]["pid"]] = e["args"]["argv"]
    eq(len(got), n + 1, "X events")
    for i, sc in enumerate(scripts):
        eq(got[10000 + i], ["sh", "-c", sc], f"argv of script {i}")
    out = os.path.join(TMP, "many-chunks.csv")
    run("convert", "-f", "csv", "-o", out, cap)
    with open(out, newline="") as f:
        table = list(csv.DictReader(f))
    pids = [int(r["pid"]) for r in table]
    want = [500] + [10000 + i for i in range(n)]
    bad = next((i for i, (a, b) in enumerate(zip(pids, want)) if a != b), None)
    check(len(pids) == len(want) and bad is None,
          f"CSV rows in start order: {len(pids)} rows, first wrong at {bad}")
    for i, r in enumerate(table[1:]):
        eq(shlex.split(r["command"]), ["sh", "-c", scripts[i]],
           f"CSV command of script {i}")


def test_empty():
    cap = capture("empty", lambda: Capture(host="empty"))
    doc = trace(cap)
    eq(xevents(doc), [], "no events")
    eq(folded(cap), {}, "no stacks")
    text = report(cap)
    check(re.search(r"executions\s+0", text), text)


def test_bad_input():
    bad = os.path.join(TMP, "bad.ptcap")
    with open(bad, "wb") as f:
        f.write(b"not a capture")
    for cmd in (["report", bad], ["convert", "-f", "json", bad],
                ["diff", bad, bad]):
        p = subprocess.run([ARGS.proftrace] + cmd, capture_output=True)
        eq(p.returncode, 1, " ".join(cmd))


def test_validator():
    """The validator itself rejects what the consumers reject."""
    ok = {"traceEvents": [
        {"ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1, "name": "a"},
        {"ph": "X", "ts": 5, "dur": 5, "pid": 1, "tid": 1, "name": "b"},
        {"ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 2, "name": "c"},
        {"ph": "s", "ts": 1, "pid": 1, "tid": 1, "id": 1, "cat": "f",
         "name": "n"},
        {"ph": "f", "ts": 1, "pid": 1, "tid": 2, "id": 1, "cat": "f",
         "name": "n", "bp": "e"},
        {"ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "name": "in a"}],
        "metadata": {}}
    validate.check_trace(ok)
    bad = [
        ("overlap", 1, {"ts": 4}),
        ("nested slice past its parent's end", 5, {"dur": 5}),
        ("negative ts", 0, {"ts": -1}),
        ("negative dur", 0, {"dur": -1}),
        ("no dur", 0, {"dur": None}),
        ("flow id", 3, {"id": "1"}),
        ("flow outside slices", 4, {"ts": 3}),
        ("no ts", 2, {"ts": None}),
    ]
    for what, i, change in bad:
        doc = json.loads(json.dumps(ok))
        for k, v in change.items():
            if v is None:
                del doc["traceEvents"][i][k]
            else:
                doc["traceEvents"][i][k] = v
        try:
            validate.check_trace(doc)
        except ValueError:
            continue
        raise Failed(f"validator accepted: {what}")
    for text in ("a;b 1", "a;b x\n", "a;b 0\n", "a; b 1\n", "a;;b 1\n",
                 "a 1\na 2\n"):
        try:
            validate.check_folded(text)
        except ValueError:
            continue
        raise Failed(f"validator accepted folded {text!r}")
    eq(validate.check_folded("a;b 1\nc 22\n"), (2, 23), "good folded")


def options(ap):
    ap.add_argument("--speedscope", help="npm package speedscope's directory",
                    default=os.environ.get("PT_SPEEDSCOPE_DIR"))


if __name__ == "__main__":
    sys.exit(viewlib.main(globals(), options, expected=(ValueError,)))
