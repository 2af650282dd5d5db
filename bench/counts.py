#!/usr/bin/env python3
"""What one traced program image costs, counted rather than timed.

    bench/counts.py [--build-dir build] [--spawns 20,40] [--images 50,150]
                    [--autoconf TARBALL [--rounds 3]] [--quick]

A busy machine moves wall-clock figures by more than the effect being
measured; it does not move these.  For a spawn loop of /bin/true
(bench/spawnloop) under `proftrace record` (with the run log, the
default, and with every image on the socket: PROFTRACE_TRANSPORT=socket), with the floor of a shared
ring (bench/minring.c: a mapped ring, a HELLO and an EXIT), and with the
floor of an append-only transport, the run log (bench/minappend.c: a write(2) of each record
to an inherited O_APPEND memfd, or to that memfd opened through /proc by
each image and kept at 56 with close-on-exec), against the same loop with the empty
preload library (bench/empty.c); and under `record --files` (both
libraries, doc/design.md, "File accesses"); Δ in brackets:

  syscalls   system calls per spawn, spawner and child together
             (strace -f -c), posix_spawn and fork+execve
  faults     minor and major page faults per spawn, spawner and child
             together (wait4's rusage, bench/rusage)
  instr.     user-space instructions of one /bin/true, and of the spawner
             per spawn (valgrind --tool=callgrind)
  collector  user-space instructions of the collector (the `proftrace
             record` process, under callgrind, not following the command
             it starts) per program image, and its system calls per image
             (strace -c, not following the command); and, timed, its
             CPU per image (perf stat --no-inherit, without --quick)

Per-spawn and per-image figures are the difference between two loop lengths
divided by the difference in spawns, which cancels every process's start and
end.  With --autoconf, a real GNU package (its release tarball: configure
and `make -j2`) is built untraced, with the empty library preloaded (the
floor of any preload library) and under `proftrace record`, interleaved;
wall and CPU ratios, medians (these are timed, so noisy on a shared machine).
doc/performance.md quotes this script's output.
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
from run import SRC, FloorFiles, callgrind_total, clean_env, kv, strace_total, table  # noqa: E402

PASS_FDS = ()          # the floors' memfds, inherited by every command run


def callgrind(cmd, env, tmp, extra=()):
    out = os.path.join(tmp, "cg.out")
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, *extra] + cmd
    return callgrind_total(subprocess.run(vg, env=env, capture_output=True, text=True,
                                          pass_fds=PASS_FDS), vg)


def strace_calls(cmd, env, out):
    """Total system calls in strace's -c summary file out, after cmd (which
    runs `strace -f -c -o out ...` somewhere inside) has run."""
    return strace_total(subprocess.run(cmd, env=env, capture_output=True, text=True,
                                       pass_fds=PASS_FDS), cmd, out)


class Counts:
    def __init__(self, a):
        self.a = a
        b = os.path.abspath(a.build_dir)
        self.proftrace = os.path.join(b, "collector", "proftrace")
        self.libpt = os.path.join(b, "preload", "libproftrace.so")
        self.libempty = os.path.join(b, "bench", "libptempty.so")
        self.spawnloop = os.path.join(b, "bench", "spawnloop")
        self.rusage = os.path.join(b, "bench", "rusage")
        self.libminring = os.path.join(b, "bench", "libptminring.so")
        self.libminappend = os.path.join(b, "bench", "libptminappend.so")
        self.tmp = tempfile.mkdtemp(prefix="pt-counts-")
        # the ring floor's ring: a memfd every command inherits
        global PASS_FDS
        self.floors = FloorFiles()
        PASS_FDS = self.floors.fds
        self.cap = os.path.join(self.tmp, "c.ptcap")

    def wrap(self, config, cmd):
        """cmd with the empty library ("empty"), under `proftrace record`
        ("record", the run log; "record-socket"), or with a floor library: the ring's ("ring"), the
        append floor's on an inherited descriptor ("append") or opened by
        each image ("open")."""
        if config in ("record", "record-socket", "record-files"):
            files = ["--files"] if config == "record-files" else []
            return ([self.proftrace, "record", "-q", "--force", "-o", self.cap] + files
                    + ["--"] + cmd, clean_env(**self.transport(config)))
        floor = {"ring": self.libminring, "append": self.libminappend,
                 "open": self.libminappend}.get(config)
        if floor:
            return cmd, clean_env(LD_PRELOAD=floor, **self.floors.env(config))
        return cmd, clean_env(LD_PRELOAD=self.libempty)

    def faults(self, cmd, env):
        """Page faults of the command bench/rusage runs somewhere in cmd."""
        r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           pass_fds=PASS_FDS)
        line = [x for x in r.stderr.splitlines() if x.startswith("rusage ")]
        if r.returncode != 0 or not line:
            raise RuntimeError(f"counts: {cmd}: {r.stderr.strip()[-300:]}")
        return int(kv(line[-1][len("rusage "):])["faults"])

    def per_spawn(self, fn, mode, config):
        a, b = self.a.spawns
        x = []
        for n in (a, b):
            cmd, env = self.wrap(config, fn([self.spawnloop, mode, str(n)]))
            x.append(self.measure(cmd, env))
        return (x[1] - x[0]) / (b - a)

    def row(self, config):
        # strace is inside `proftrace record`: the collector's own calls
        # are not counted, the spawner's and the children's are
        out = os.path.join(self.tmp, "strace.out")
        st = ["strace", "-f", "-c", "-o", out]
        self.measure = lambda cmd, env: strace_calls(cmd, env, out)
        sp = self.per_spawn(lambda c: st + c, "spawn", config)
        fk = self.per_spawn(lambda c: st + c, "fork", config)
        self.measure = self.faults
        fsp = statistics.median(self.per_spawn(lambda c: [self.rusage] + c, "spawn", config)
                                for _ in range(3))
        ffk = statistics.median(self.per_spawn(lambda c: [self.rusage] + c, "fork", config)
                                for _ in range(3))
        # instructions: callgrind is the innermost command, so only the
        # process it starts is counted, not `proftrace record`
        vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file="
              + os.path.join(self.tmp, "cg.out")]
        def ir(cmd, env):
            return callgrind_total(subprocess.run(cmd, env=env, capture_output=True,
                                                  text=True, pass_fds=PASS_FDS), cmd)
        cmd, env = self.wrap(config, vg + ["/bin/true"])
        child = ir(cmd, env)
        self.measure = ir
        spawner = self.per_spawn(lambda c: vg + c, "spawn", config)
        return sp, fk, child, spawner, fsp, ffk

    @staticmethod
    def transport(config):
        """What keeps `record` to the socket ("record-socket")."""
        return {"PROFTRACE_TRANSPORT": "socket"} if config == "record-socket" else {}

    def collector(self, config="record"):
        """Collector instructions per program image: `proftrace record` under
        callgrind (not following the command), two loop lengths."""
        a, b = self.a.images
        x = []
        for n in (a, b):
            x.append(callgrind([self.proftrace, "record", "-q", "--force", "-o", self.cap,
                                "--", self.spawnloop, "spawn", str(n)],
                               clean_env(**self.transport(config)),
                               self.tmp, ["--trace-children=no"]))
        return (x[1] - x[0]) / (b - a)

    def collector_calls(self, config="record"):
        """Collector system calls per program image: `proftrace record` under
        strace -c (not following the command), two loop lengths.  What is
        done per tick (the run log's drain, the watch) counts here by the
        images a tick takes, so the figure moves with the loop's speed."""
        a, b = self.a.images
        out = os.path.join(self.tmp, "strace-collector.out")
        x = []
        for n in (a, b):
            x.append(strace_calls(["strace", "-c", "-o", out, self.proftrace, "record", "-q",
                                   "--force", "-o", self.cap, "--", self.spawnloop, "spawn",
                                   str(n)], clean_env(**self.transport(config)), out))
        return (x[1] - x[0]) / (b - a)

    def collector_cpu(self, configs, rounds=5, loops=(1000, 4000)):
        """Collector CPU (user and system) per program image, in µs: the
        task-clock of the `proftrace record` process alone (perf stat
        --no-inherit), two loop lengths, the configurations interleaved
        round by round; the median of the rounds for each.  Timed, so it
        moves with the machine's load, unlike the counts above."""
        a, b = loops
        per = {c: [] for c in configs}
        out = os.path.join(self.tmp, "perf.csv")
        for _ in range(rounds):
            for config in configs:
                ms = []
                for n in (a, b):
                    subprocess.run(["perf", "stat", "--no-inherit", "-x,", "-o", out, "-e",
                                    "task-clock", self.proftrace, "record", "-q", "--force",
                                    "-o", self.cap, "--", self.spawnloop, "spawn", str(n)],
                                   env=clean_env(**self.transport(config)),
                                   capture_output=True, check=True)
                    with open(out) as f:
                        ms.append(next(float(line.split(",")[0]) for line in f
                                       if "task-clock" in line))
                per[config].append((ms[1] - ms[0]) * 1000 / (b - a))
        return {c: statistics.median(v) for c, v in per.items()}

    def autoconf(self, tarball, rounds):
        src = os.path.join(self.tmp, "pkg-src")
        os.makedirs(src)
        with tarfile.open(tarball) as t:
            t.extractall(src)
        (top,) = os.listdir(src)
        build = "./configure >/dev/null && make -j2 >/dev/null"
        res = {"untraced": [], "empty": [], "traced": []}
        execs = None
        for r in range(rounds):
            order = list(res)
            order = order[r % 3:] + order[:r % 3]
            for c in order:
                d = os.path.join(self.tmp, f"pkg-{r}-{c}")
                shutil.copytree(os.path.join(src, top), d, symlinks=True)
                cmd = ["sh", "-c", build]
                env = clean_env()
                if c == "traced":
                    cmd = [self.proftrace, "record", "-q", "--force", "-o", self.cap,
                           "--"] + cmd
                elif c == "empty":
                    env["LD_PRELOAD"] = self.libempty
                p = subprocess.run([self.rusage] + cmd, cwd=d, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
                last = p.stderr.splitlines()[-1] if p.stderr else ""
                x = kv(last[len("rusage "):]) if last.startswith("rusage ") else {}
                if int(x.get("status", 1)) != 0:
                    raise RuntimeError(f"{top} build failed: {p.stderr[-400:]}")
                res[c].append((x["wall_s"], x["cpu_s"]))
                shutil.rmtree(d, ignore_errors=True)
                if c == "traced" and execs is None:
                    csvp = self.cap + ".csv"
                    subprocess.run([self.proftrace, "convert", "-f", "csv", "-o", csvp,
                                    self.cap], check=True, env=clean_env())
                    with open(csvp) as f:
                        execs = sum(1 for _ in f) - 1
            print(f"[autoconf] round {r + 1}/{rounds}", file=sys.stderr)
        return top, execs, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--spawns", default="20,40", help="two loop lengths (default 20,40)")
    ap.add_argument("--images", default="50,150",
                    help="two loop lengths for the collector (default 50,150)")
    ap.add_argument("--autoconf", metavar="TARBALL",
                    help="a GNU package's release tarball: configure + make -j2 rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny loops (smoke test)")
    a = ap.parse_args()
    if a.quick:
        a.spawns, a.images = "2,4", "4,8"
    a.spawns = [int(x) for x in a.spawns.split(",")]
    a.images = [int(x) for x in a.images.split(",")]
    for tool in ("valgrind", "strace"):
        if not shutil.which(tool):
            print(f"counts: needs {tool}; skipped", file=sys.stderr)
            return 0
    c = Counts(a)
    try:
        e = c.row("empty")
        rows = []
        for name, config in (("empty library", "empty"),
                             ("proftrace record (run log)", "record"),
                             ("proftrace record, socket", "record-socket"),
                             ("proftrace record --files", "record-files"),
                             ("ring floor (bench/minring.c)", "ring"),
                             ("append floor (bench/minappend.c)", "append"),
                             ("append floor, opened per image", "open")):
            t = e if config == "empty" else c.row(config)
            if config in ("ring", "append", "open") and not c.floors.written(config):
                raise RuntimeError(f"the {config} floor's library wrote nothing")
            rows.append([name] + [f"{t[i]:,.0f} ({t[i] - e[i]:+,.0f})" if i in (2, 3)
                                  else f"{t[i]:.1f} ({t[i] - e[i]:+.1f})" for i in range(6)])
        print(table(["", "syscalls/spawn (posix_spawn)", "syscalls/spawn (fork+execve)",
                     "/bin/true instr.", "spawner instr./spawn",
                     "faults/spawn (posix_spawn)", "faults/spawn (fork+execve)"], rows))
        col = c.collector()
        print(f"\ncollector instructions per program image (record, run log, callgrind): "
              f"{col:,.0f}")
        col = c.collector("record-socket")
        print(f"collector instructions per program image (record, socket): {col:,.0f}")
        for name, config in (("run log", "record"), ("socket", "record-socket")):
            print(f"collector system calls per program image (record, {name}, strace -c): "
                  f"{c.collector_calls(config):.1f}")
        if shutil.which("perf") and not a.quick:
            cpu = c.collector_cpu(("record", "record-socket"))
            print(f"collector CPU per program image (perf stat --no-inherit task-clock, "
                  f"median of 5 interleaved rounds): {cpu['record']:.1f} µs with the run "
                  f"log, {cpu['record-socket']:.1f} µs with the socket")
        if a.autoconf:
            top, execs, res = c.autoconf(a.autoconf, a.rounds)
            med = statistics.median
            rows = []
            for i, what in ((0, "wall s"), (1, "CPU s")):
                row = [what] + [f"{med(x[i] for x in res[k]):.2f}" for k in res]
                for k in ("empty", "traced"):
                    q = [t[i] / u[i] for t, u in zip(res[k], res["untraced"])]
                    row.append(f"{med(q):.3f} ({min(q):.3f}–{max(q):.3f})")
                rows.append(row)
            print(f"\n{top}: configure + make -j2, {execs} executions, {a.rounds} rounds "
                  "(the empty library: every process preloads bench/empty.c)\n")
            print(table(["", "untraced", "empty library", "proftrace record",
                         "empty / untraced (min–max)", "record / untraced (min–max)"],
                        rows))
    finally:
        shutil.rmtree(c.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
