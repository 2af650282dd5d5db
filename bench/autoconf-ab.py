#!/usr/bin/env python3
"""A real GNU autoconf package built untraced, with the empty preload
library, and under `proftrace record` of two builds of proftrace, or of
one build with and without --files, in interleaved rounds (the order
rotates each round).

    bench/autoconf-ab.py TARBALL --build-dir A [--against B] [--files]
                         [--rounds 4]

Prints, for each configuration, the median wall and CPU seconds, the
median of its round-by-round ratio to the untraced build of the same
round, and the median size of the capture: timed figures, so compare
ratios taken in one run.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import clean_env, kv  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tarball")
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--against", help="another build directory, timed too")
    ap.add_argument("--files", action="store_true",
                    help="also time `record --files` of --build-dir")
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    a_dir = os.path.abspath(a.build_dir)
    rusage = os.path.join(a_dir, "bench", "rusage")
    a_pt = os.path.join(a_dir, "collector", "proftrace")
    # name: (proftrace, empty library, record's options)
    configs = {
        "untraced": (None, None, []),
        "empty library": (None, os.path.join(a_dir, "bench", "libptempty.so"), []),
        "record (" + a.build_dir + ")": (a_pt, None, []),
    }
    if a.files:
        configs["record --files (" + a.build_dir + ")"] = (a_pt, None, ["--files"])
    if a.against:
        configs["record (" + a.against + ")"] = (
            os.path.join(os.path.abspath(a.against), "collector", "proftrace"), None, [])
    res = {k: [] for k in configs}
    size = {k: [] for k in configs}
    with tempfile.TemporaryDirectory(prefix="pt-ab-") as tmp:
        src = os.path.join(tmp, "src")
        with tarfile.open(a.tarball) as t:
            t.extractall(src)
        (top,) = os.listdir(src)
        names = list(configs)
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                pt, empty, opts = configs[name]
                d = os.path.join(tmp, "b")
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(os.path.join(src, top), d, symlinks=True)
                cmd = ["sh", "-c", "./configure >/dev/null && make -j2 >/dev/null"]
                env = clean_env()
                if pt:
                    cmd = [pt, "record", "-q", "--force", *opts, "-o",
                           os.path.join(tmp, "c.ptcap"), "--"] + cmd
                if empty:
                    env["LD_PRELOAD"] = empty
                p = subprocess.run([rusage] + cmd, cwd=d, env=env,
                                   stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                last = p.stderr.splitlines()[-1] if p.stderr else ""
                x = kv(last[len("rusage "):]) if last.startswith("rusage ") else {}
                if int(x.get("status", 1)) != 0:
                    sys.exit(f"{name}: build failed: {p.stderr[-400:]}")
                res[name].append((x["wall_s"], x["cpu_s"]))
                if pt:
                    size[name].append(os.path.getsize(os.path.join(tmp, "c.ptcap")))
            print(f"round {r + 1}/{a.rounds}", file=sys.stderr)
    med = statistics.median
    print(f"{top}: configure + make -j2, {a.rounds} interleaved rounds")
    print("| | wall s | CPU s | wall / untraced | CPU / untraced | capture |")
    print("|---|---|---|---|---|---|")
    for name, v in res.items():
        wr = [t[0] / u[0] for t, u in zip(v, res["untraced"])]
        cr = [t[1] / u[1] for t, u in zip(v, res["untraced"])]
        print(f"| {name} | {med(t[0] for t in v):.2f} | {med(t[1] for t in v):.2f} "
              f"| {med(wr):.3f} ({min(wr):.3f}–{max(wr):.3f}) "
              f"| {med(cr):.3f} ({min(cr):.3f}–{max(cr):.3f}) "
              f"| {f'{med(size[name]):,.0f} bytes' if size[name] else ''} |")


if __name__ == "__main__":
    main()
