#!/usr/bin/env python3
"""The HTML report with events that programs wrote about themselves.

    bench/html-subs.py [--build DIR] [-c COMPILES] [-k EVENTS] [--rounds R]

A capture made by test/tools/mkcapture.py: `make -j8` running COMPILES
(default 1000) cc1 of 0.5 s each, every one with a clang-like trace of
EVENTS (default 100) nested events (Frontend holding Source events of
headers from a pool of 500, each holding a ParseClass, then Backend
holding OptFunction events), args {"detail": ...} as clang writes them.
It converts the capture to HTML with and without the trace files (the
page's growth per event), R times (median wall and CPU), then opens the
page with traces in headless Chromium and times 40 redraws of the
timeline zooming into one compile and panning (median and worst), and
counts the events the last frame drew.  Prints a Markdown table with the
load average, for doc/performance.md.
"""

import argparse
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "test", "tools"))
import browser_pipe  # noqa: E402
# bench/html.py's timing of `convert -f html` (a file name the standard
# library's html package would shadow as a module name)
_spec = importlib.util.spec_from_file_location(
    "html_bench", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "html.py"))
html_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(html_bench)
convert = html_bench.convert
from mkcapture import Capture  # noqa: E402

READY = ("new Promise(function (ok) { (function w() {"
         " if (window.proftrace && window.proftrace.ready) ok(true);"
         " else setTimeout(w, 20); })(); })")

# 40 steps: zoom by halves into the middle of compile C (down to a
# quarter of it), pan across it and on, zoom back out.
FRAMES = """(function (c) {
  var p = window.proftrace, f = p.fullRange(), t = [], a = f[0], b = f[1];
  var s = p.subs().filter(function (u) { return u.exec === c; });
  var m = (s[0].start + s[s.length - 1].start) / 2, drawn = 0;
  function step(x, y) {
    var q = performance.now(); p.zoom(x, y); t.push(performance.now() - q);
    drawn = Math.max(drawn, p.subsDrawn());
  }
  p.barRect(c);
  for (var i = 0; i < 10; i++) { var h = (b - a) / 4; a = m - h; b = m + h;
    step(a, b); }
  for (var i = 0; i < 20; i++) { var d = (b - a) / 4; a += d; b += d;
    step(a, b); }
  for (var i = 0; i < 10; i++) { var w = (b - a); a -= w / 2; b += w / 2;
    step(a, b); }
  return [t, drawn];
})"""


def build(compiles, events, traces):
    c = Capture(command="make -j8")
    rnd = random.Random(1)
    dur, step = 0.5, 0.5 / 8
    c.process(10, 1, ["make", "-j8"], start=0,
              end=compiles * step + dur + 1)
    for i in range(compiles):
        s, pid = 0.5 + i * step, 11 + i
        c.process(pid, 10, ["cc1", "-quiet", f"src/file{i}.c"], start=s,
                  end=s + dur)
        if not traces:
            continue
        evs, t = [], s + 0.01
        nsrc = max(1, (events - 2) // 3)
        front = 0.3

        def x(name, at, d, detail=None):
            # times as a clock gives them: not round numbers
            e = {"name": name, "cat": "", "ph": "X",
                 "ts": c.epoch_us(at) + rnd.randrange(1000),
                 "dur": int(d * 1e6 * rnd.uniform(0.5, 0.9)), "pid": pid,
                 "tid": pid}
            if detail:
                e["args"] = {"detail": detail}
            return e
        evs.append(x("Frontend", t, front, f"src/file{i}.c"))
        each = front / nsrc
        for k in range(nsrc):
            h = f"/usr/include/c++/12/bits/header{(i * 7 + k) % 500}.h"
            evs.append(x("Source", t + k * each, each, h))
            evs.append(x("ParseClass", t + k * each + 0.001, each * 0.5,
                         f"ns::Class{(i + k) % 300}<int>"))
        back = t + front + 0.01
        evs.append(x("Backend", back, 0.15))
        nopt = events - len(evs)
        for k in range(nopt):
            evs.append(x("OptFunction", back + k * 0.15 / nopt,
                         0.15 / nopt, f"_ZN2ns4funcEi{k}"))
        c.trace(pid, evs)
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("-c", type=int, default=1000, help="compiles")
    ap.add_argument("-k", type=int, default=100, help="events a compile")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    pt = os.path.join(a.build, "collector", "proftrace")
    with tempfile.TemporaryDirectory(prefix="pt-bench-subs-") as d:
        sizes = {}
        for traces in (False, True):
            cap = os.path.join(d, f"t{int(traces)}.ptcap")
            build(a.c, a.k, traces).write(cap)
            out = os.path.join(d, f"t{int(traces)}.html")
            wall, cpu = convert(pt, cap, out, a.rounds)
            sizes[traces] = (os.path.getsize(out), wall, cpu)
        with browser_pipe.Browser() as b:
            page = b.open("file://" + out, timeout=900)
            page.call("Runtime.evaluate", {"expression": READY,
                                           "awaitPromise": True}, timeout=900)
            info = page.eval("proftrace.subsInfo()")
            frames, drawn = [], 0
            for _ in range(a.rounds):
                t, drawn = page.eval(FRAMES + f"({a.c // 2 + 1})")
                frames += t
    (s0, w0, c0), (s1, w1, c1) = sizes[False], sizes[True]
    n = info["kept"]
    print(f"Load average (1 min) at the end: {os.getloadavg()[0]:.2f}, "
          f"{os.cpu_count()} CPUs.\n")
    print("| executions | events (in the page) | page MB without, with | "
          "bytes an event | written s (CPU s) without, with | frame ms, "
          "median (worst) | most events drawn in a frame |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {a.c + 1:,} | {info['total']:,} ({n:,}) | {s0 / 1e6:.2f}, "
          f"{s1 / 1e6:.2f} | {(s1 - s0) / max(n, 1):.1f} | {w0:.2f} "
          f"({c0:.2f}), {w1:.2f} ({c1:.2f}) | "
          f"{statistics.median(frames):.1f} ({max(frames):.1f}) | {drawn} |")


if __name__ == "__main__":
    main()
