#!/usr/bin/env python3
"""A package's own test suite, untraced, with the empty library and under
`proftrace record`: the second real workload (doc/performance.md).

    bench/testsuite.py --tarball findutils_4.9.0.orig.tar.xz [--rounds 3]
                       [--build-dir build] [--target check] [--syscalls]

Unlike a configure script, GNU findutils' `make check` creates and reads
many files and runs thousands of short programs with long argument
lists (find, xargs, its DejaGnu suites).  The release tarball is
unpacked and built once (./configure && make, untraced), and the target
run once there too, which builds the test programs; every run then
gets a fresh copy of that built tree, put where the tree was built (its
Makefiles hold absolute paths), so that no run starts from what an
earlier one left behind (run after run in one tree, the times drift
upward).  Each round runs `make TARGET` once untraced, once with the
empty preload library (bench/empty.c, the floor of any preload library)
and once under `proftrace record`, the order rotating from round to
round; wall and CPU (every process waited for; traced: with the
collector) under bench/rusage, and the ratios to the untraced run of the
same round, median (min–max).  These are timed, so noisy on a shared
machine.

With --syscalls, one more run untraced and one under `record`, each
under `strace -f -c` (inside `record`: the collector's own calls are not
counted), give the system calls of the whole suite and per process
(processes = 1 + the fork, vfork, clone and clone3 calls that strace
counted, threads included); per process without sched_yield and futex,
which gnulib's thread tests spin on by millions, a count that moves
with the scheduling.

The tarball: `apt-get source --download-only findutils` with a deb-src
line for bookworm; the DejaGnu suites need `runtest` (dejagnu).
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import SRC, clean_env, kv, table  # noqa: E402

CONFIGS = ("untraced", "empty", "traced")


def log(msg):
    print("[testsuite] " + msg, file=sys.stderr, flush=True)


# What gnulib's thread tests spin on: their count moves from run to run
# with the scheduling, by millions, whatever the library does.
SPIN = ("sched_yield", "futex")


def strace_summary(path):
    """(system calls, the same without SPIN's, processes and threads)
    from the `strace -c` summary file path."""
    total, spin, procs = None, 0, 1
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or not w[0][0].isdigit():
                continue
            calls = int(w[3])
            if w[-1] == "total":
                total = calls
            elif w[-1] in SPIN:
                spin += calls
            elif w[-1] in ("fork", "vfork", "clone", "clone3"):
                procs += calls
    return total, total - spin, procs


class Bench:
    def __init__(self, a):
        self.a = a
        b = os.path.abspath(a.build_dir)
        self.proftrace = os.path.join(b, "collector", "proftrace")
        self.libempty = os.path.join(b, "bench", "libptempty.so")
        self.rusage = os.path.join(b, "bench", "rusage")
        for p in (self.proftrace, self.libempty, self.rusage):
            if not os.path.exists(p):
                sys.exit(f"testsuite: {p} is missing; build first (ninja -C {b})")
        self.tmp = tempfile.mkdtemp(prefix="pt-testsuite-")
        self.cap = os.path.join(self.tmp, "run.ptcap")

    def build(self):
        """Unpack and build the package once; the built tree's path."""
        src = os.path.join(self.tmp, "src")
        os.makedirs(src)
        with tarfile.open(self.a.tarball) as t:
            t.extractall(src)
        (top,) = os.listdir(src)
        self.top = top
        tree = os.path.join(src, top)
        self.work = tree
        log(f"building {top} once (./configure && make && make {self.a.target})")
        # the warm-up run of the target builds the test programs, so that
        # the rounds run the tests and compile nothing
        r = subprocess.run(["sh", "-c", "./configure >/dev/null && make -j2 >/dev/null && "
                            f"make -j2 {self.a.target} >/dev/null"],
                           cwd=tree, env=clean_env(), stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"testsuite: building {top} failed: {r.stderr[-800:]}")
        pristine = os.path.join(self.tmp, "pristine")
        shutil.copytree(tree, pristine, symlinks=True)
        return pristine

    def command(self, config, cmd):
        env = clean_env()
        if config == "traced":
            cmd = [self.proftrace, "record", "-q", "--force", "-o", self.cap, "--"] + cmd
        elif config == "empty":
            env["LD_PRELOAD"] = self.libempty
        return cmd, env

    def fresh(self, tree):
        """A fresh copy of the built tree, where it was built: its
        Makefiles and tests hold absolute paths into it."""
        shutil.rmtree(self.work, ignore_errors=True)
        # copy2 keeps the modification times, so make rebuilds nothing
        shutil.copytree(tree, self.work, symlinks=True)
        return self.work

    def once(self, tree, config):
        """(wall s, CPU s) of `make TARGET` in a fresh copy of tree."""
        d = self.fresh(tree)
        cmd, env = self.command(config, ["make", self.a.target])
        p = subprocess.run([self.rusage] + cmd, cwd=d, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        last = p.stderr.splitlines()[-1] if p.stderr else ""
        x = kv(last[len("rusage "):]) if last.startswith("rusage ") else {}
        if int(x.get("status", 1)) != 0:
            raise RuntimeError(f"make {self.a.target} ({config}) failed: {p.stderr[-800:]}")
        return x["wall_s"], x["cpu_s"]

    def executions(self):
        csvp = self.cap + ".csv"
        subprocess.run([self.proftrace, "convert", "-f", "csv", "-o", csvp, self.cap],
                       check=True, env=clean_env())
        with open(csvp, newline="") as f:
            return sum(1 for _ in csv.reader(f)) - 1

    def syscalls(self, tree, config):
        """(system calls, processes) of one run under strace -f -c."""
        d = self.fresh(tree)
        out = os.path.join(self.tmp, "strace-" + config + ".out")
        cmd, env = self.command(config, ["strace", "-f", "-c", "-o", out,
                                         "make", self.a.target])
        r = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"strace make {self.a.target} ({config}): {r.stderr[-800:]}")
        return strace_summary(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--tarball", required=True, help="the package's release tarball")
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--rounds", type=int, default=3,
                    help="timed rounds (0: none, only --syscalls)")
    ap.add_argument("--target", default="check", help="the make target (default check)")
    ap.add_argument("--syscalls", action="store_true",
                    help="count system calls per process (strace -f -c), one run each")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    a.tarball = os.path.abspath(a.tarball)
    b = Bench(a)
    try:
        tree = b.build()
        res = {c: [] for c in CONFIGS}
        execs = None
        for r in range(a.rounds):
            order = list(CONFIGS[r % 3:] + CONFIGS[:r % 3])
            for c in order:
                res[c].append(b.once(tree, c))
                if c == "traced" and execs is None:
                    execs = b.executions()
            log(f"round {r + 1}/{a.rounds}: " + ", ".join(
                f"{c} {res[c][-1][0]:.1f} s" for c in CONFIGS))
        med = statistics.median
        rows = []
        for i, what in (((0, "wall s"), (1, "CPU s")) if a.rounds else ()):
            row = [what] + [f"{med(x[i] for x in res[k]):.2f}" for k in CONFIGS]
            for k in ("empty", "traced"):
                q = [t[i] / u[i] for t, u in zip(res[k], res["untraced"])]
                row.append(f"{med(q):.3f} ({min(q):.3f}–{max(q):.3f})")
            rows.append(row)
        if a.rounds:
            print(f"\n{b.top}: make {a.target} in a fresh copy of the built tree, "
                  f"{execs} executions, {a.rounds} rounds\n")
            print(table(["", "untraced", "empty library", "proftrace record",
                         "empty / untraced (min–max)", "record / untraced (min–max)"],
                        rows))
        if a.syscalls:
            if not shutil.which("strace"):
                log("no strace: system calls not counted")
            else:
                rows = []
                for c in ("untraced", "traced"):
                    total, steady, procs = b.syscalls(tree, c)
                    rows.append([c, f"{total:,}", f"{steady:,}", f"{procs:,}",
                                 f"{steady / procs:.1f}"])
                print("\nsystem calls (strace -f -c, one run each; traced: without the "
                      f"collector's; {' and '.join(SPIN)} left out of the steady count)\n")
                print(table(["", "system calls", f"without {', '.join(SPIN)}",
                             "processes and threads", "steady calls per process"], rows))
    finally:
        if a.keep:
            log(f"kept {b.tmp}")
        else:
            shutil.rmtree(b.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
