#!/usr/bin/env python3
"""How far `proftrace top`'s estimate of the time left is from the time
really left, on a real build: the sample build (sample/: ./configure &&
make -j2), kept twice with `record --keep`, then watched twice, once as
the kept runs went and once slowed by CPU hogs started beside it.

    bench/eta-pace.py --proftrace build/collector/proftrace [--hogs 2]

While a watched run goes, `top --once` is asked every half second; once
it has ended, the time really left at each look is the capture's last
end less the time of the look (taken as top returns: the estimate is as
of its drawing, the last thing it does).  Prints, for each watched run,
the error at the looks nearest to 25, 50 and 75 % of the run: timed
figures, which move with the machine's load.
"""

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "sample")
BUILD = "./configure >/dev/null && make -j2 >/dev/null"


def fresh(d):
    """The sample, copied anew at the same path each run: the runs are
    matched by command, and their commands name their files."""
    src = os.path.join(d, "sample")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(SAMPLE, src)
    return src


def rows(pt, cap):
    out = subprocess.run([pt, "convert", "-f", "csv", "-o", "-", cap],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def estimate(text):
    """Seconds left as top says it (negative: overdue), or None."""
    m = re.search(r"(about|overdue by) ([\d.]+) (ms|s|min)", text)
    if not m:
        return None
    m2 = re.search(r"(about|overdue by) (\d+) min (\d+) s", text)
    v = (int(m2.group(2)) * 60 + int(m2.group(3))) if m2 else \
        float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
    return v if m.group(1) == "about" else -v


def watched(pt, d, keep, cap, hogs):
    src = fresh(d)
    procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
             for _ in range(hogs)]
    try:
        p = subprocess.Popen([pt, "record", "-q", "--keep", keep, "-o", cap,
                              "--", "sh", "-c", BUILD], cwd=src,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        looks = []
        while p.poll() is None:
            r = subprocess.run([pt, "top", "--once", cap],
                               capture_output=True, text=True)
            at = time.time()
            e = estimate(r.stdout) if r.returncode == 0 else None
            if e is not None and "the run ended" not in r.stdout:
                looks.append((at, e))
            time.sleep(0.5)
        p.wait()
    finally:
        for h in procs:
            h.kill()
            h.wait()
    rs = rows(pt, cap)
    start = min(float(r["start"]) for r in rs)
    end = max(float(r["start"]) + float(r["duration"]) for r in rs)
    return start, end, looks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--hogs", type=int, default=2,
                    help="CPU hogs beside the slowed run (default 2)")
    a = ap.parse_args()
    pt = os.path.abspath(a.proftrace)
    d = tempfile.mkdtemp(prefix="pt-eta-")
    keep = os.path.join(d, "keep")
    try:
        for i in range(2):
            src = fresh(d)
            t = time.time()
            subprocess.run([pt, "record", "-q", "--keep", keep, "-o",
                            os.path.join(d, "kept%d.ptcap" % i), "--", "sh",
                            "-c", BUILD], cwd=src, check=True,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            print("kept run %d: %.1f s" % (i, time.time() - t))
        for name, hogs in (("as kept", 0), ("slowed", a.hogs)):
            cap = os.path.join(d, "%s.ptcap" % name.replace(" ", "-"))
            start, end, looks = watched(pt, d, keep, cap, hogs)
            print("watched, %s (%d CPU hogs beside it): %.1f s, %d looks"
                  % (name, hogs, end - start, len(looks)))
            for share in (0.25, 0.5, 0.75):
                at, est = min(looks, key=lambda x: abs(
                    (x[0] - start) / (end - start) - share))
                left = end - at
                print("  at %2.0f %% of the run: %6.2f s left estimated, "
                      "%6.2f s really, error %+4.0f %%" % (
                          100 * (at - start) / (end - start), est, left,
                          100 * (est - left) / left))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
