#!/usr/bin/env python3
"""Traces that programs write themselves, merged into proftrace's
(doc/manual.md, "Traces that programs write").

Each test records real programs under `proftrace record` and reads the
trace JSON back through validate-trace.py's rules (those of Perfetto,
chrome://tracing and speedscope), comparing with what the programs
wrote: trace-writer.py's own record of its events, clang's -ftime-trace
files (also in the HTML report, zoomed into one compile in Chromium),
dune's --trace-file, and stand-ins for the known tools newer than
Debian 12 ships (Rocq's coqc -profile, dune 3).  -k NAME picks tests:
dir, sandbox, clang, ftime_trace_path, private, dune, build_tool_pids,
rocq, budget, bad.
"""

import gzip
import json
import os
import re
import shutil
import subprocess
import time
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import browser_pipe  # noqa: E402
import userns  # noqa: E402
import viewlib  # noqa: E402
from viewlib import Failed, Skipped, check  # noqa: E402
from importlib import import_module  # noqa: E402

validate = import_module("validate-trace")
perfetto_check = import_module("perfetto-check")
WRITER = os.path.join(HERE, "trace-writer.py")
TOL_US = 1000           # the contract: aligned within 1 ms


def record(name, cmd, cwd=None, timeout=300):
    """Record cmd (which must succeed); returns the capture's path."""
    cap = os.path.join(viewlib.TMP, name + ".ptcap")
    env = dict(os.environ, PROFTRACE_LIB=viewlib.ARGS.lib)
    p = subprocess.run([viewlib.ARGS.proftrace, "record", "-q", "--force",
                        "-o", cap, "--"] + cmd, cwd=cwd, env=env,
                       capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise Failed(f"record {cmd}: exit {p.returncode}: "
                     f"{p.stderr.decode(errors='replace')}")
    return cap


def convert(cap):
    """The capture's trace JSON, checked by its consumers' rules, and
    what convert said on stderr."""
    out = cap + ".json"
    p = subprocess.run([viewlib.ARGS.proftrace, "convert", "-f", "json",
                        "-o", out, cap], capture_output=True, timeout=300)
    if p.returncode != 0:
        raise Failed(f"convert: exit {p.returncode}: {p.stderr!r}")
    doc = validate.load_trace(out)
    validate.check_trace(doc)
    return doc, p.stderr.decode(errors="replace")


def execs(doc):
    return [e for e in doc["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in ("exec", "fork")]


def exec_of(doc, pred, what):
    found = [e for e in execs(doc) if pred(e["args"])]
    check(len(found) == 1, f"{what}: {len(found)} executions match")
    return found[0]


def inside(doc, ex):
    """Events on ex's lane within its slice, other than executions."""
    lo, hi = ex["ts"], ex["ts"] + ex["dur"]
    return [e for e in doc["traceEvents"]
            if e.get("pid") == ex["pid"] and e.get("tid") == ex["tid"]
            and e.get("cat") not in ("exec", "fork", "flow")
            and e.get("ph") in ("X", "i") and lo <= e["ts"] <= hi
            and e["ts"] + e.get("dur", 0) <= hi]


def near(got, want, what):
    check(abs(got - want) <= TOL_US,
          f"{what}: at {got} µs, written at {want} µs (more than "
          f"{TOL_US} µs apart)")


def only(evs, name, ph):
    found = [e for e in evs if e["name"] == name and e["ph"] == ph]
    check(len(found) == 1, f"{len(found)} {ph} events {name!r} inside "
          f"the writer's slice: {evs!r}")
    return found[0]


def writer_run(name, mode):
    truth = os.path.join(viewlib.TMP, name + ".truth")
    cap = record(name, [sys.executable, WRITER, mode, truth])
    with open(truth) as f:
        t = json.load(f)
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    ex = exec_of(doc, lambda a: a["pid"] == t["pid"], "the writer")
    return doc, ex, t


def check_nesting(doc, ex, t, origin_us):
    """The writer's events, inside its slice, where origin_us says the
    file's 0 is on the trace's clock."""
    evs = inside(doc, ex)
    outer, inner = only(evs, "outer", "X"), only(evs, "inner", "X")
    mark = only(evs, "mark", "i")
    near(outer["ts"], origin_us + t["outer"][0], "outer's start")
    near(outer["ts"] + outer["dur"], origin_us + t["outer"][1], "outer's end")
    near(inner["ts"], origin_us + t["inner"][0], "inner's start (B)")
    near(inner["ts"] + inner["dur"], origin_us + t["inner"][1],
         "inner's end (E)")
    near(mark["ts"], origin_us + t["mark"], "mark")
    check(outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <=
          outer["ts"] + outer["dur"], "inner is not nested in outer")
    check(inner["args"] == {"detail": "a part", "n": 3},
          f"inner's args: {inner['args']!r}")
    check(outer["cat"] == "test", f"outer's category: {outer['cat']!r}")
    counters = [e for e in doc["traceEvents"] if e.get("ph") == "C"
                and e["name"].startswith("queue")]
    check(len(counters) == 1 and counters[0]["args"] == {"depth": 7},
          f"the counter: {counters!r}")
    near(counters[0]["ts"], origin_us + t["mark"], "the counter")


def test_dir_absolute():
    doc, ex, t = writer_run("abs", "abs")
    origin = doc["metadata"]["time_origin_unix_ns"] // 1000
    check_nesting(doc, ex, t, -origin)


def test_dir_relative():
    doc, ex, t = writer_run("rel", "rel")
    # The file's 0 is the writer's start, which is its slice's start.
    check_nesting(doc, ex, t, ex["ts"])


def test_dir_taken_and_removed():
    """The file is in the capture, the directory gone after the run."""
    truth = os.path.join(viewlib.TMP, "gone.truth")
    cap = record("gone", [sys.executable, WRITER, "rel", truth])
    with open(truth) as f:
        t = json.load(f)
    check(not os.path.exists(os.path.dirname(t["file"])),
          "the trace directory outlived the run")
    with gzip.open(cap) as f:
        check(b'"outer"' in f.read(), "the file's events are not in the "
              "capture")


# ---- known tools ----

HEAVY_H = """#ifndef HEAVY_H
#define HEAVY_H
%s
#endif
"""
LIGHT_H = "#define LIGHT 1\n"


def c_project():
    """Two sources that both include a header that is slow to parse and
    one that is not."""
    d = os.path.join(viewlib.TMP, "cproj")
    os.makedirs(d, exist_ok=True)
    body = "\n".join(f"static inline int f{i}(int x) {{ int a[{i % 7 + 1}]"
                     f" = {{0}}; for (int k = 0; k < x; k++) a[k % "
                     f"{i % 7 + 1}] += k * {i}; return a[0] + x; }}"
                     for i in range(4000))
    with open(os.path.join(d, "heavy.h"), "w") as f:
        f.write(HEAVY_H % body)
    with open(os.path.join(d, "light.h"), "w") as f:
        f.write(LIGHT_H)
    for name in ("one", "two"):
        with open(os.path.join(d, name + ".c"), "w") as f:
            f.write('#include "light.h"\n#include "heavy.h"\n'
                    f"int {name}(int x) {{ return f1(x) + LIGHT; }}\n")
    return d


def test_clang():
    if not shutil.which("clang"):
        raise Failed("clang is not installed (tools/install-deps.sh)")
    d = c_project()
    # The build removes clang's files the moment clang ends: the capture
    # has them all the same (each clang sends its own file at its end).
    script = ("clang -ftime-trace -ftime-trace-granularity=0 -c one.c "
              "-o one.o && clang -ftime-trace -ftime-trace-granularity=0 "
              "-c two.c && rm one.json two.json")
    cap = record("clang", ["sh", "-c", script], cwd=d)
    check(not os.path.exists(os.path.join(d, "one.json")),
          "the build did not remove one.json")
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    for src in ("one.c", "two.c"):
        ex = exec_of(doc, lambda a: a["argv"][0] == "clang" and
                     src in a["argv"], f"clang {src}")
        evs = inside(doc, ex)
        names = {e["name"] for e in evs}
        for want in ("Frontend", "Backend", "Source"):
            check(want in names, f"clang {src}: no {want} event inside "
                  f"its slice (have {sorted(names)})")
        heads = {os.path.basename(e["args"]["detail"]) for e in evs
                 if e["name"] == "Source"}
        check({"heavy.h", "light.h"} <= heads,
              f"clang {src}: Source events name {sorted(heads)}")
    check_html_zoom(cap)
    # Perfetto's protobuf trace, decoded by protoc and checked by
    # TrackEvent's rules: clang's phases nest in its execution's slice,
    # on its track.
    pf = cap + ".pftrace"
    subprocess.run([viewlib.ARGS.proftrace, "convert", "-f", "perfetto",
                    "-o", pf, "--force", cap], check=True,
                   capture_output=True)
    try:
        tr = perfetto_check.load(pf, "protoc")
    except ValueError as e:
        raise Failed(f"perfetto: {e}")
    for src in ("one.c", "two.c"):
        name = lambda x: x.decode() if isinstance(x, bytes) else str(x)
        execs = [sl for sl in tr.slices if sl.depth == 0 and
                 name(sl.name).startswith("clang") and src in name(sl.name)]
        check(len(execs) == 1, f"perfetto: clang {src}: {len(execs)} "
              "execution slices")
        ex = execs[0]
        inner = {name(sl.name) for sl in tr.slices
                 if sl.track == ex.track and sl.depth > 0 and
                 ex.ts <= sl.ts and sl.end <= ex.end}
        check({"Frontend", "Backend", "Source"} <= inner,
              f"perfetto: clang {src}: inside its slice {sorted(inner)}")
    out = subprocess.run([viewlib.ARGS.proftrace, "report", cap],
                         capture_output=True, text=True, check=True).stdout
    part = out[out.index("Inside the programs: what"):]
    sources = [ln.split() for ln in part.splitlines()
               if len(ln.split()) == 4 and ln.split()[2] == "Source"]
    check(sources and sources[0][3].endswith("/heavy.h") and
          sources[0][1] == "2",
          f"report: the costliest header is not heavy.h parsed twice: "
          f"{sources[:3]}")
    # The Markdown report, read by a CommonMark parser with GitHub's
    # tables: the same header first.
    if not shutil.which("cmark-gfm"):
        raise Failed("cmark-gfm is not installed (tools/install-deps.sh)")
    md = subprocess.run([viewlib.ARGS.proftrace, "report", "--format",
                         "markdown", cap], capture_output=True, check=True)
    html = subprocess.run(["cmark-gfm", "-e", "table"], input=md.stdout,
                          capture_output=True, check=True).stdout.decode()
    rows = [[c.strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr,
                                             re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", html, re.S)]
    srows = [r for r in rows if len(r) == 4 and "Source" in r[2]]
    check(srows and srows[0][3].endswith("/heavy.h</code>") and
          srows[0][1] == "2", f"Markdown report's headers: {srows[:2]}")


def check_html_zoom(cap):
    """The HTML report, in headless Chromium, as a user reads it: zoomed
    from the whole build into the compile of one.c, clang's events are
    drawn inside its bar, and the Source event of heavy.h is among them
    with the header's name."""
    page_path = cap + ".html"
    subprocess.run([viewlib.ARGS.proftrace, "convert", "-f", "html", "-o",
                    page_path, "--force", cap], check=True,
                   capture_output=True)
    ready = ("new Promise(function (ok) { (function w() {"
             " if (window.proftrace && window.proftrace.ready) ok(true);"
             " else setTimeout(w, 20); })(); })")
    with browser_pipe.Browser() as b:
        page = b.open("file://" + page_path, network=True)
        page.call("Runtime.evaluate", {"expression": ready,
                                       "awaitPromise": True}, timeout=120)
        check(page.errors == [], f"html: console errors {page.errors}")
        n = page.eval("proftrace.count")
        one = [i for i in range(n) if page.eval(f"proftrace.argvOf({i})")
               [:1] == ["clang"] and "one.c" in
               page.eval(f"proftrace.argvOf({i})")]
        check(len(one) == 1, f"html: {len(one)} executions of clang one.c")
        bar = page.eval(f"proftrace.bars()[{one[0]}]")
        page.eval("proftrace.zoom(%r, %r)" % (bar[1], bar[2]))
        check(page.eval("proftrace.subsDrawn()") > 0,
              "html: zoomed into clang one.c, none of its events drawn")
        heads = page.eval(
            "proftrace.subs().filter(function (s) { return s.exec === %d &&"
            " s.name === 'Source' && s.args && s.args.indexOf('heavy.h')"
            " >= 0; }).length" % one[0])
        check(heads >= 1, "html: no Source event of heavy.h in clang one.c")


def need_userns():
    """bwrap run by an ordinary user makes a user namespace: skip where
    the machine refuses one (a chroot, Ubuntu's AppArmor)."""
    why = os.geteuid() != 0 and userns.refused()
    if why:
        raise Skipped("bwrap as uid %d: %s" % (os.geteuid(), why))


def test_private_build():
    """clang in a sandbox with a private tmpfs for its build directory,
    which no other process can see: its file arrives all the same.  And a
    stale file of an earlier build, left where a failing compile would
    have written its own, is not taken for this run's."""
    if not shutil.which("clang") or not shutil.which("bwrap"):
        raise Failed("clang or bwrap is not installed (tools/install-deps.sh)")
    need_userns()
    d = c_project()
    stale = os.path.join(d, "bad.json")
    with open(stale, "w") as f:
        json.dump({"traceEvents": [{"name": "stale", "ph": "X", "ts": 0,
                                    "dur": 1}]}, f)
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    with open(os.path.join(d, "bad.c"), "w") as f:
        f.write("int bad(void) { return undeclared; }\n")
    # The sandbox mounts a tmpfs of its own over an empty directory.
    priv = os.path.join(d, "private")
    os.makedirs(priv, exist_ok=True)
    script = ("cp " + d + "/*.c " + d + "/*.h . && clang -ftime-trace "
              "-ftime-trace-granularity=0 -c one.c -o one.o && ls one.json")
    cap = record("clang-private",
                 ["sh", "-c", "bwrap --ro-bind / / --tmpfs " + priv +
                  " --proc /proc --dev /dev --chdir " + priv + " sh -c '" +
                  script + "' && clang -ftime-trace -c bad.c; exit 0"],
                 cwd=d)
    check(os.listdir(priv) == [], f"{priv} is not empty outside the "
          "sandbox")
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    ex = exec_of(doc, lambda a: a["argv"][0] == "clang" and "one.c" in
                 a["argv"] and a.get("cwd") == priv, "clang one.c in the sandbox")
    names = {e["name"] for e in inside(doc, ex)}
    check({"Frontend", "Source"} <= names, "clang in a private directory: "
          f"inside its slice {sorted(names)}")
    bad = exec_of(doc, lambda a: a["argv"][0] == "clang" and "bad.c" in
                  a["argv"], "clang bad.c")
    check(bad["args"]["exit_code"] == 1, "clang bad.c: exit "
          f"{bad['args']['exit_code']}, not 1")
    names = {e["name"] for e in inside(doc, bad)}
    check("stale" not in names, "an earlier build's bad.json was taken "
          "for this run's")


def test_dune():
    if not shutil.which("dune"):
        raise Failed("dune is not installed (tools/install-deps.sh)")
    d = os.path.join(viewlib.TMP, "dproj")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "dune-project"), "w") as f:
        f.write("(lang dune 2.0)\n")
    with open(os.path.join(d, "dune"), "w") as f:
        f.write('(rule (targets x.txt) (action (run sh -c '
                '"sleep 0.1; echo x > x.txt")))\n'
                '(rule (targets y.txt) (action (run sh -c '
                '"sleep 0.2; echo y > y.txt")))\n')
    cap = record("dune", ["sh", "-c", "dune build --trace-file tr.json "
                          "./x.txt ./y.txt && rm tr.json"], cwd=d)
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    with open(os.path.join(d, "_build", "log")) as f:
        check("sleep 0.1" in f.read(), "dune did not run the rules")
    for t in ("x", "y"):
        script = f"sleep 0.{1 if t == 'x' else 2}; echo {t} > {t}.txt"
        ex = exec_of(doc, lambda a: a["argv"][1:] == ["-c", script],
                     f"the rule of {t}.txt")
        evs = [e for e in inside(doc, ex) if e.get("cat") == "process"]
        check(len(evs) == 1 and evs[0]["args"].get("list") ==
              ["-c", script], f"dune's event for the rule of {t}.txt: "
              f"{evs!r}")



def newer_clang():
    """A clang of version 16 or later (-ftime-trace=PATH), or None."""
    for name in ["clang"] + [f"clang-{v}" for v in range(30, 15, -1)]:
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "--version"], capture_output=True,
                             text=True).stdout
        m = re.search(r"clang version (\d+)", out)
        if m and int(m.group(1)) >= 16:
            return path
    return None


def test_ftime_trace_path():
    """clang 16's -ftime-trace=PATH, as a file and as a directory, and
    with cc1 in a process of its own: each compile's events once, in its
    own slice, though the build removes every file at once."""
    cc = newer_clang()
    if not cc:
        raise Failed("no clang 16 or later is installed "
                     "(tools/install-deps.sh installs clang-16)")
    d = c_project()
    with open(os.path.join(d, "three.c"), "w") as f:
        f.write('#include "heavy.h"\nint three(int x) { return f2(x); }\n')
    os.makedirs(os.path.join(d, "tr"), exist_ok=True)
    g = "-ftime-trace-granularity=0"
    files = {"one.c": "tr/one.json", "two.c": "two-trace.json",
             "three.c": "tr/three.json"}
    script = (f"{cc} -ftime-trace=tr {g} -c one.c && "
              f"{cc} -ftime-trace=two-trace.json {g} -c two.c -o two.o && "
              f"{cc} -fno-integrated-cc1 -ftime-trace=tr {g} -c three.c && "
              "mkdir -p kept && cp tr/*.json two-trace.json kept/ && "
              "rm tr/one.json two-trace.json tr/three.json")
    cap = record("clang16", ["sh", "-c", script], cwd=d)
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    base = os.path.basename(cc)
    for src, out in files.items():
        with open(os.path.join(d, "kept", os.path.basename(out))) as f:
            wrote = [e["name"] for e in json.load(f)["traceEvents"]
                     if e.get("ph") == "X" and
                     not e["name"].startswith("Total ")]
        # the driver's execution (cc1, where it has one, is its child)
        ex = exec_of(doc, lambda a: os.path.basename(a["argv"][0]) == base
                     and src in a["argv"] and "-cc1" not in a["argv"],
                     f"{base} {src}")
        evs = inside(doc, ex) + [e for c in execs(doc)
                                 if c["args"].get("ppid") == ex["args"]["pid"]
                                 for e in inside(doc, c)]
        names = [e["name"] for e in evs if e["ph"] == "X"]
        for want in ("Frontend", "Backend", "Source"):
            check(names.count(want) == wrote.count(want) > 0,
                  f"{base} {src}: {want} {names.count(want)} times in the "
                  f"trace, {wrote.count(want)} in its file")
        check(len(names) == len(wrote), f"{base} {src}: {len(names)} "
              f"events in the trace, {len(wrote)} in its file")
        heads = {os.path.basename(e["args"]["detail"]) for e in evs
                 if e["name"] == "Source"}
        check("heavy.h" in heads, f"{base} {src}: Source events name "
              f"{sorted(heads)}")


def rocq_run(name, runs, env=None):
    """coqc (the stand-in) -profile, run `runs` times one after the
    other by a build that keeps a copy of each file and removes it."""
    d = os.path.join(viewlib.TMP, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "x.v"), "w") as f:
        f.write("Lemma one : True. Proof. exact I. Qed.\n")
    script = "; ".join(f"{viewlib.ARGS.coqc} -R . T -profile p{i}.json x.v "
                       f"&& cp p{i}.json kept{i}.json && rm p{i}.json"
                       for i in range(runs))
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        cap = record(name, ["sh", "-c", script], cwd=d, timeout=600)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return d, cap


def test_rocq():
    """coqc -profile FILE (a stand-in: Debian 12's Coq is older than
    -profile): its events, in epoch microseconds, inside its slice at the
    times it wrote, though the build removes the file at once.  200 of
    them each end where the next starts: epoch nanoseconds exceed a
    double's 53 bits, and an end rounded apart from the next start once
    made the next event nest in it, cut to a microsecond."""
    if not viewlib.ARGS.coqc:
        raise Failed("--coqc is needed")
    d, cap = rocq_run("rocq", 1, {"PROFILE_STEPS": "200"})
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    with open(os.path.join(d, "kept0.json")) as f:
        truth = json.load(f)["traceEvents"]
    check(sum(t["name"].startswith("step ") for t in truth) == 200,
          "the stand-in did not write 200 steps")
    ex = exec_of(doc, lambda a: os.path.basename(a["argv"][0]) == "coqc",
                 "coqc")
    origin = doc["metadata"]["time_origin_unix_ns"] // 1000
    evs = inside(doc, ex)
    got = {}
    for t in truth:
        got[t["name"]] = g = only(evs, t["name"], "X")
        near(g["ts"], t["ts"] - origin, f"{t['name']}'s start")
        near(g["ts"] + g["dur"], t["ts"] + t["dur"] - origin,
             f"{t['name']}'s end")
        check(g["args"] == t["args"], f"{t['name']}'s args: "
              f"{g['args']!r}")
        if t["name"].startswith("step "):
            # whole microseconds, start and end each rounded down
            check(abs(g["dur"] - t["dur"]) <= 1, f"{t['name']} lasts "
                  f"{g['dur']} µs, written as {t['dur']} µs")
    for a in truth:
        for b in truth:
            if a["ts"] + a["dur"] == b["ts"]:
                ga, gb = got[a["name"]], got[b["name"]]
                check(ga["ts"] + ga["dur"] <= gb["ts"],
                      f"{a['name']} ends at {ga['ts'] + ga['dur']} µs, "
                      f"after {b['name']} starts at {gb['ts']} µs")


def test_budget():
    """Files that known tools send themselves count against the run's
    256 MiB like those the collector reads: 18 files of 15 MiB, the
    last refused and said, the others whole, the build unharmed."""
    if not viewlib.ARGS.coqc:
        raise Failed("--coqc is needed")
    runs = 18
    d, cap = rocq_run("budget", runs, {"PROFILE_PAD_MB": "15"})
    size = os.path.getsize(os.path.join(d, "kept0.json"))
    check(17 * size <= 256 << 20 < 18 * size, f"a file of {size} bytes "
          "does not put the 18th beyond the budget")
    doc, err = convert(cap)
    check("1 trace file refused" in err and "256 MiB" in err,
          f"convert does not say the budget refused one file: {err!r}")
    execs_ = sorted((e for e in execs(doc)
                     if os.path.basename(e["args"]["argv"][0]) == "coqc"),
                    key=lambda e: e["ts"])
    check(len(execs_) == runs, f"{len(execs_)} coqc executions")
    for i, ex in enumerate(execs_):
        has = any(e["name"] == "Qed" for e in inside(doc, ex))
        check(has == (i < runs - 1), f"coqc run {i + 1}: its events are "
              f"{'in' if has else 'not in'} the trace")
        check(ex["args"]["exit_code"] == 0, f"coqc run {i + 1}: exit "
              f"{ex['args']['exit_code']}")


def test_build_tool_pids():
    """dune 3's --trace-file names the pid of each process it ran (a
    stand-in writes dune 3's form: Debian 12 ships dune 2): two runs of
    the same command at once, each event on the process of its pid."""
    if not viewlib.ARGS.dune3:
        raise Failed("--dune3 is needed")
    d = os.path.join(viewlib.TMP, "dune3")
    os.makedirs(d, exist_ok=True)
    cap = record("dune3", ["sh", "-c", f"{viewlib.ARGS.dune3} build "
                           "--trace-file tr.json && cp tr.json kept.json "
                           "&& rm tr.json"], cwd=d)
    doc, err = convert(cap)
    check(not err, f"convert said: {err}")
    with open(os.path.join(d, "kept.json")) as f:
        truth = json.load(f)
    check(len(truth) == 2 and truth[0]["args"]["pid"] !=
          truth[1]["args"]["pid"], f"the stand-in wrote {truth!r}")
    for t in truth:
        pid = t["args"]["pid"]
        ex = exec_of(doc, lambda a: a["pid"] == pid and
                     a["argv"] == ["sh", "-c", "sleep 0.1"], f"sh {pid}")
        evs = [e for e in inside(doc, ex) if e.get("cat") == "process"]
        check(len(evs) == 1 and evs[0]["args"]["pid"] == pid,
              f"sh {pid}: dune's events inside its slice: {evs!r}")

# ---- a sandbox ----

def test_sandbox():
    """Inside bubblewrap, / read-only and only the work directory
    writable (the trace directory is seen read-only): the events arrive
    all the same, and nothing is left behind in the work directory."""
    if not shutil.which("bwrap"):
        raise Failed("bwrap is not installed (tools/install-deps.sh)")
    need_userns()
    # The second makes the relay in a shell that then execs the writer:
    # the same process's last image removes it.
    # The third keeps the writer off the run log (a name that is not
    # the collector's), so that it sends its relay's files over a socket
    # and exits at once, the run log's name the collector offered it
    # unread: what it sent must be taken all the same.
    for name, opt, via in (("bwrap", [], []),
                           ("bwrap-pidns", ["--unshare-pid"],
                            ["sh", "-c", 'exec "$0" "$@"']),
                           ("bwrap-socket",
                            ["--setenv", "PROFTRACE_LOG", "1:1:1:/nonexistent"],
                            [])):
        work = os.path.join(viewlib.TMP, name)
        os.makedirs(work)
        truth = os.path.join(work, "truth")
        cap = record(name, ["bwrap", "--ro-bind", "/", "/", "--bind", work,
                            work, "--proc", "/proc", "--chdir", work] +
                     opt + ["--"] + via +
                     [sys.executable, WRITER, "abs", truth])
        with open(truth) as f:
            t = json.load(f)
        check(os.path.dirname(t["file"]).startswith(work + "/.proftrace-"),
              f"{name}: the writer wrote to {t['file']}, not to a relay "
              f"in the only writable directory")
        eq_files = sorted(os.listdir(work))
        check(eq_files == ["truth"], f"{name}: the work directory holds "
              f"{eq_files}")
        doc, err = convert(cap)
        check(not err, f"{name}: convert said: {err}")
        ex = exec_of(doc, lambda a: a["argv"][1:] == [WRITER, "abs", truth]
                     and "python" in a["exe"], f"{name}: the writer")
        origin = doc["metadata"]["time_origin_unix_ns"] // 1000
        check_nesting(doc, ex, t, -origin)


# ---- what is refused ----

BAD = r"""
import json, os, sys, time
d, pid = os.environ["PROFTRACE_TRACE_DIR"], os.getpid()
def p(name): return os.path.join(d, f"{pid}-{name}.json")
ev = lambda n, ts: json.dumps({"name": n, "ph": "X", "ts": ts, "dur": 10})
time.sleep(0.05)
# Cut inside an event, in the object form.
with open(p("cut"), "w") as f:
    f.write('{"traceEvents": [' + ev("before-cut", 1000) + ', {"name": "x')
# Far past the writer's end, and before its start.
with open(p("outside"), "w") as f:
    f.write("[" + ev("in-time", 2000) + "," + ev("too-late", 600e6) + ","
            + ev("too-early", -600e6) + "]")
os.symlink("/etc/shadow", p("link"))
os.mkfifo(p("fifo"))
# 100 MB of events.
with open(p("big"), "w") as f:
    f.write("[")
    one = ev("bulk", 3000) + ",\n"
    block = one * (1 << 14)
    for _ in range(100 * (1 << 20) // len(block) + 1):
        f.write(block)
    f.write(ev("bulk-last", 3000) + "]")
"""


def test_bad_files():
    script = os.path.join(viewlib.TMP, "bad.py")
    with open(script, "w") as f:
        f.write(BAD)
    cap = record("bad", [sys.executable, script], timeout=300)
    doc, err = convert(cap)
    for what in ("2 trace files refused", "1 trace file cut",
                 "1 malformed trace file",
                 "2 events outside their writer's lifetime left out"):
        check(what in err, f"convert does not say {what!r}: {err!r}")
    ex = exec_of(doc, lambda a: a["argv"][1:] == [script], "the writer")
    names = [e["name"] for e in inside(doc, ex)]
    for want in ("before-cut", "in-time"):
        check(want in names, f"{want} is not in the writer's slice")
    for no in ("too-late", "too-early", "bulk-last"):
        check(no not in names, f"{no} is in the trace")
    check("bulk" in names, "nothing of the 100 MB file was kept")
    with gzip.open(cap) as f:
        data = f.read()
    check(b"root:" not in data, "the capture holds /etc/shadow's text")
    check(len(data) < 40 << 20, f"the capture holds {len(data)} bytes")


def options(ap):
    ap.add_argument("--coqc", help="the stand-in for Rocq's coqc")
    ap.add_argument("--dune3", help="the stand-in for dune 3")


if __name__ == "__main__":
    sys.exit(viewlib.main(globals(), options))
