#!/usr/bin/env python3
"""The HTML report's targets: size, time to write, first render, frames.

    bench/html.py [--build DIR] [-n N]... [--rounds R] [--keep DIR]

For each N (default 100,000 and 1,000,000): a synthetic capture of N
executions (bench/gencapture), `proftrace convert -f html` on it R times
(default 3; the median of wall and CPU seconds, and the file's size),
then headless Chromium (test/tools/browser_pipe.py) opens the page R times
and reports the median time from navigation to the end of the first
drawing of the timeline (the page's own performance.now(), which counts
from the navigation), the CPU time all of Chromium's processes spent
until the whole page was drawn (what a loaded machine does not inflate),
and the median and worst time the page takes to draw one
frame of the timeline and parallelism chart over 40 zooms and pans.
Prints a Markdown table, with the machine's load average, for
doc/performance.md.  Timings on a shared machine vary: rerun it on a
quiet one before comparing with the targets.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "test", "tools"))
import browser_pipe  # noqa: E402

READY = ("new Promise(function (ok) { (function w() {"
         " if (window.proftrace && window.proftrace.ready) ok(true);"
         " else setTimeout(w, 20); })(); })")

# 40 steps: zoom in about the middle by halves, pan, zoom back out.
FRAMES = """(function () {
  var p = window.proftrace, f = p.fullRange(), t = [], a = f[0], b = f[1];
  function step(x, y) {
    var s = performance.now(); p.zoom(x, y); t.push(performance.now() - s);
  }
  for (var i = 0; i < 14; i++) { var m = (a + b) / 2, h = (b - a) / 4;
    a = m - h; b = m + h; step(a, b); }
  for (var i = 0; i < 12; i++) { var d = (b - a) / 3; a += d; b += d;
    step(a, b); }
  for (var i = 0; i < 14; i++) { var m = (a + b) / 2, h = (b - a);
    a = m - h; b = m + h; step(a, b); }
  return t;
})()"""


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def convert(pt, cap, out, rounds):
    walls, cpus = [], []
    for _ in range(rounds):
        c0, t0 = cpu_children(), time.monotonic()
        subprocess.run([pt, "convert", "-f", "html", "--force", "-o", out,
                        cap], check=True)
        walls.append(time.monotonic() - t0)
        cpus.append(cpu_children() - c0)
    return statistics.median(walls), statistics.median(cpus)


def tree_cpu(root):
    """CPU seconds used so far by process root and its descendants."""
    parent, cpu = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d)] = int(st[1])
        # utime, stime, and cutime and cstime: what the children it has
        # reaped spent (Chromium's renderers come and go between rounds)
        cpu[int(d)] = sum(int(x) for x in st[11:15]) / \
            os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in cpu:
        q = p
        while q and q != root:
            q = parent.get(q, 0)
        if q == root:
            total += cpu[p]
    return total


def browse(path, rounds):
    renders, frames, cpus = [], [], []
    with browser_pipe.Browser() as b:
        for _ in range(rounds):
            c0 = tree_cpu(b.proc.pid)
            page = b.open("file://" + path, timeout=900)
            page.call("Runtime.evaluate", {"expression": READY,
                                           "awaitPromise": True},
                      timeout=900)
            if page.eval("proftrace.error"):
                raise SystemExit("page: " + page.eval("proftrace.error"))
            renders.append(page.eval("proftrace.timings.drawn") / 1000)
            cpus.append(tree_cpu(b.proc.pid) - c0)
            frames += page.eval(FRAMES)
            page.call("Page.close")
    return statistics.median(renders), statistics.median(cpus), \
        statistics.median(frames), max(frames)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("-n", type=int, action="append")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", help="keep captures and pages here")
    a = ap.parse_args()
    pt = os.path.join(a.build, "collector", "proftrace")
    gen = os.path.join(a.build, "bench", "gencapture")
    rows = []
    with tempfile.TemporaryDirectory(prefix="pt-bench-html-") as tmp:
        d = a.keep or tmp
        os.makedirs(d, exist_ok=True)
        for n in a.n or [100_000, 1_000_000]:
            cap = os.path.join(d, f"synthetic{n}.ptcap")
            if not os.path.exists(cap):
                subprocess.run([gen, "-n", str(n), cap], check=True,
                               stdout=subprocess.DEVNULL)
            out = os.path.join(d, f"synthetic{n}.html")
            wall, cpu = convert(pt, cap, out, a.rounds)
            size = os.path.getsize(out)
            render, bcpu, frame, worst = browse(out, a.rounds)
            rows.append((n, size, wall, cpu, render, bcpu, frame, worst))
            print(f"{n}: {size / 1e6:.1f} MB, written in {wall:.2f} s "
                  f"({cpu:.2f} s CPU), first render {render:.2f} s "
                  f"({bcpu:.2f} s CPU, whole page), frame {frame:.1f} ms "
                  f"(worst {worst:.1f})", file=sys.stderr)
    load = os.getloadavg()[0]
    print(f"Load average (1 min) at the end: {load:.2f}, "
          f"{os.cpu_count()} CPUs.\n")
    print("| executions | page MB | written s (CPU s) | first render s "
          "| browser CPU s to the whole page | frame ms, median (worst) |")
    print("|---|---|---|---|---|---|")
    for n, size, wall, cpu, render, bcpu, frame, worst in rows:
        print(f"| {n:,} | {size / 1e6:.1f} | {wall:.2f} ({cpu:.2f}) | "
              f"{render:.2f} | {bcpu:.2f} | {frame:.1f} ({worst:.1f}) |")


if __name__ == "__main__":
    main()
