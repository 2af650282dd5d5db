#!/usr/bin/env python3
"""proftrace benchmark suite: what tracing costs, measured as ratios.

    bench/run.py             the full suite (about 15-30 minutes); prints the
                             tables and writes doc/performance.md
    bench/run.py --quick     tiny sizes, under a minute on a quiet machine; the
                             CI smoke test (meson test -C build --suite bench)
                             writes BUILD/bench/performance-quick.md

It builds first (ninja -C BUILD) unless --no-build.  Every timing that a
target applies to is a ratio of two things measured in the same run, as the
median over interleaved rounds (A B A B ...; the order alternates from one
round to the next), so that a machine shared with other work moves both
sides alike.  Stages:

  1 spawn   N spawns of /bin/true (posix_spawn, fork+execve) untraced, with
            an empty preload library (the floor) and with libproftrace.so
            sending to a running `proftrace daemon`
  2 sample  sample/: ./configure && make -j2 on a fresh copy, untraced and
            under `proftrace record`
  3 ingest  K synthetic clients flooding a collector (bench/ingest.c), and
            the same clients against a trivial receiver (the ceiling)
  4 convert a synthetic capture of N executions (bench/gencapture.c) through
            `proftrace convert -f csv`, `-f json`, `-f svg`, `proftrace report`
            and `report --format markdown`
  5 size    capture bytes per execution, and against the CSV

The hand-written part of doc/performance.md (everything after the line
MARKER below) is kept when the file is rewritten, and so are the rows of
its Targets table that other bench scripts measure.  bench/floor.py runs the
spawn loop alone with many more rounds, for ratios that eleven rounds
leave within their noise.
"""

import argparse
import csv
import datetime
import fcntl
import io
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

MARKER = "<!-- Everything below this line is hand-written and kept by bench/run.py. -->"

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TARGETS = {
    "spawn": 1.25,        # (proftrace - untraced) / (empty - untraced), at most
    "sample_wall": 1.05,  # traced / untraced wall, at most
    "ingest": 300000,     # frames/s, at least
    "convert_s": 10.0,    # seconds, at most (full size)
    "convert_mb": 400.0,  # peak RSS MB, at most
    "size": 0.25,         # capture bytes / CSV bytes, at most
}

FULL = dict(spawn_n=1000, spawn_rounds=11, sample_rounds=9, ingest_clients=8,
            ingest_frames=50000, ingest_churn_frames=30000, ingest_rounds=3,
            convert_n=1000000, convert_rounds=3)
QUICK = dict(spawn_n=200, spawn_rounds=2, sample_rounds=1, ingest_clients=4,
             ingest_frames=2000, ingest_churn_frames=1200, ingest_rounds=1,
             convert_n=2000, convert_rounds=1)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def kv(text):
    """Parse 'key value key value ...' lines into a dict of numbers."""
    out = {}
    for line in text.splitlines():
        toks = line.split()
        for k, v in zip(toks[0::2], toks[1::2]):
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x, nd=1):
    if x is None or (isinstance(x, float) and x != x):
        return "n/a"
    return f"{x:,.{nd}f}"


def verdict(ok):
    if ok is None:
        return "n/a"
    return "met" if ok else "**MISSED**"


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.startswith("PROFTRACE_")}
    env["LC_ALL"] = "C"
    env.update(extra)
    return env


class FloorFiles:
    """What the transport floors without a socket write to, inherited by
    every command run with them: a 16 MiB ring for bench/minring.c (which
    nobody drains: its writers wrap around it, and each new process still
    takes a fault for each page it first writes, the cost measured) and
    an O_APPEND memfd for bench/minappend.c, inherited ("append") or
    opened by each image through /proc ("open").  fds is what to pass on;
    env(kind) is what tells the floor of kind "ring", "append" or "open"
    where."""

    RING_BYTES = 16 << 20  # the ring's data area; 4 KiB of header before it

    def __init__(self):
        self.ringfd = os.memfd_create("ptbench-ring", 0)
        os.ftruncate(self.ringfd, 4096 + self.RING_BYTES)
        self.appendfd = os.memfd_create("ptbench-append", 0)
        fcntl.fcntl(self.appendfd, fcntl.F_SETFL, os.O_APPEND)
        self.fds = (self.ringfd, self.appendfd)

    def env(self, kind):
        if kind == "ring":
            return {"PTBENCH_RING": f"{self.ringfd}:{self.RING_BYTES}"}
        if kind == "append":
            return {"PTBENCH_APPEND": str(self.appendfd)}
        if kind == "open":
            return {"PTBENCH_OPEN": f"/proc/{os.getpid()}/fd/{self.appendfd}"}
        return {}

    def written(self, kind):
        """Whether the floor of kind wrote anything."""
        if kind == "ring":
            return int.from_bytes(os.pread(self.ringfd, 8, 0), "little") != 0
        return os.fstat(self.appendfd).st_size != 0


RUSAGE = None  # path of bench/rusage, set by Suite

SOCKET_FLOOR = "socket floor"  # bench/minrec.c: a connection per image, nothing else
CONNECTION_ONLY = "connection only"  # the same, without its two messages
CHILDREN_ONLY = "children only"  # libproftrace.so in the spawned children, not the spawner


def run_measured(cmd, env=None, cwd=None, stdout=subprocess.DEVNULL, check=True):
    """Run cmd under bench/rusage; return (wall seconds, user+sys CPU seconds
    of it and its waited-for descendants, max RSS KB, exit status)."""
    p = subprocess.run([RUSAGE] + list(cmd), env=env, cwd=cwd, stdout=stdout,
                       stderr=subprocess.PIPE, text=True)
    lines = p.stderr.splitlines()
    x = kv(lines[-1][len("rusage "):]) if lines and lines[-1].startswith("rusage ") else {}
    if p.returncode != 0 or "status" not in x:
        raise RuntimeError(f"bench/rusage {' '.join(map(str, cmd))}: {p.stderr.strip()[-500:]}")
    status = int(x["status"])
    if check and status != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited with {status}: "
                           f"{chr(10).join(lines[:-1])[-500:]}")
    return x["wall_s"], x["cpu_s"], int(x["maxrss_kb"]), status


def page_faults(cmd, env, runs=5):
    """Median page faults (minor + major) of cmd run under bench/rusage."""
    out = []
    for _ in range(runs):
        p = subprocess.run([RUSAGE] + list(cmd), env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        line = p.stderr.splitlines()[-1] if p.stderr else ""
        x = kv(line[len("rusage "):]) if line.startswith("rusage ") else {}
        if "faults" not in x:
            raise RuntimeError(f"bench/rusage {' '.join(cmd)}: {p.stderr.strip()[-300:]}")
        out.append(x["faults"])
    return med(out)


def proc_cpu(pid):
    """user+sys CPU seconds of a running process (/proc, clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def callgrind_total(r, cmd):
    """Instructions valgrind's callgrind counted, from the stderr of the
    finished run r of cmd (the first process's total when several print)."""
    m = re.search(r"Collected\s*:\s*(\d+)", r.stderr)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-400:]}")
    return int(m.group(1))


def strace_total(r, cmd, out):
    """System calls in the `strace -c` summary file out, written by the
    finished run r of cmd."""
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-400:]}")
    with open(out) as f:
        for line in f:
            w = line.split()
            if w and w[-1] == "total":
                return int(w[3])
    raise RuntimeError("strace -c printed no total")


class Daemon:
    """A `proftrace daemon` of our own, stopped by its pid."""

    def __init__(self, proftrace, capture, sock, logpath):
        self.capture, self.sock = capture, sock
        self.logf = open(logpath, "w")
        self.p = subprocess.Popen(
            [proftrace, "daemon", "-o", capture, "--socket", sock, "--force"],
            env=clean_env(), stdout=self.logf, stderr=self.logf)
        deadline = time.monotonic() + 20
        while True:
            if self.p.poll() is not None:
                raise RuntimeError(f"proftrace daemon failed; see {logpath}")
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(sock)
                s.close()
                return
            except OSError:
                s.close()
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("proftrace daemon never listened")
            time.sleep(0.01)

    def cpu(self):
        return proc_cpu(self.p.pid)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.logf.close()
        return self.p.returncode


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = " ".join(platform.libc_ver())
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        mem = 0
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "kernel": platform.release(),
        "glibc": glibc,
        "mem_mb": mem,
        "python": platform.python_version(),
    }


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", SRC, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        # the report itself, left changed by an earlier run, is not a change
        # to what is measured
        dirty = subprocess.run(["git", "-C", SRC, "status", "--porcelain",
                                "--untracked-files=no", "--", ".",
                                ":!doc/performance.md"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + uncommitted changes" if dirty else "") if rev else "?"
    except OSError:
        return "?"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def other_targets(old, mine):
    """Rows of the old file's Targets table that this script did not
    measure: the other bench scripts' figures (HTML, Perfetto, OTLP),
    quoted by hand and explained below MARKER, are kept as they were."""
    if "## Targets" not in old:
        return []
    ours = {r[0] for r in mine}
    rows = []
    for line in old.split("## Targets", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 4 or \
                cells[0] in ("what", "") or set(cells[0]) <= set("-"):
            continue
        if cells[0] not in ours:
            rows.append(cells)
    return rows


class Suite:
    def __init__(self, args):
        self.a = args
        self.sz = dict(QUICK if args.quick else FULL)
        for k in self.sz:
            v = getattr(args, k, None)
            if v is not None:
                self.sz[k] = v
        b = os.path.abspath(args.build_dir)
        self.build = b
        self.proftrace = os.path.join(b, "collector", "proftrace")
        self.libpt = os.path.join(b, "preload", "libproftrace.so")
        self.libempty = os.path.join(b, "bench", "libptempty.so")
        self.libminrec = os.path.join(b, "bench", "libptminrec.so")
        self.libminconn = os.path.join(b, "bench", "libptminconn.so")
        self.spawnloop = os.path.join(b, "bench", "spawnloop")
        self.ingest = os.path.join(b, "bench", "ingest")
        self.gencapture = os.path.join(b, "bench", "gencapture")
        self.capcount = os.path.join(b, "bench", "capcount")
        self.rusage = os.path.join(b, "bench", "rusage")
        self.vmcost = os.path.join(b, "bench", "vmcost")
        global RUSAGE
        RUSAGE = self.rusage
        self.tmp = tempfile.mkdtemp(prefix="ptbench-", dir="/tmp")
        self.sections = []      # (title, markdown)
        self.targets = []       # (what, target, measured, verdict)
        self.notes = []
        self.sizes = []         # rows for stage 5
        self.log_files = []

    # ---- helpers ----

    def count_capture(self, path):
        r = subprocess.run([self.capcount, path], capture_output=True,
                           text=True)
        d = kv(r.stdout)
        d["rc"] = r.returncode
        return d

    def section(self, title, md):
        self.sections.append((title, md))
        print(f"\n## {title}\n\n{md}\n", flush=True)

    def target(self, what, target, measured, ok):
        self.targets.append((what, target, measured, verdict(ok)))

    # ---- 1. spawn loop ----

    def stage_spawn(self):
        n, rounds = self.sz["spawn_n"], self.sz["spawn_rounds"]
        sock = os.path.join(self.tmp, "spawn.sock")
        cap = os.path.join(self.tmp, "spawn.ptcap")
        configs = {
            "untraced": clean_env(),
            "empty": clean_env(LD_PRELOAD=self.libempty),
            "proftrace": clean_env(LD_PRELOAD=self.libpt, PROFTRACE_SOCKET=sock),
            SOCKET_FLOOR: clean_env(LD_PRELOAD=self.libminrec, PROFTRACE_SOCKET=sock),
            CONNECTION_ONLY: clean_env(LD_PRELOAD=self.libminconn, PROFTRACE_SOCKET=sock),
            CHILDREN_ONLY: clean_env(SPAWNLOOP_CHILD_PRELOAD=self.libpt,
                                     PROFTRACE_SOCKET=sock),
        }
        # --candidate: other builds of the library, measured side by side
        for i, lib in enumerate(self.a.candidate or []):
            configs[f"candidate {i + 1}"] = clean_env(LD_PRELOAD=os.path.abspath(lib),
                                                      PROFTRACE_SOCKET=sock)
        names = list(configs)
        traced = names[2:]
        log(f"[spawn] {n} spawns x {len(names)} configurations x 2 modes x {rounds} rounds")
        d = Daemon(self.proftrace, cap, sock, os.path.join(self.tmp, "spawn-daemon.log"))
        res = {m: {c: [] for c in names} for m in ("spawn", "fork")}
        try:
            for r in range(rounds):
                for mode in ("spawn", "fork"):
                    k = r % len(names)
                    order = names[k:] + names[:k]
                    if r % 2:
                        order.reverse()
                    for c in order:
                        c0 = d.cpu() if c in traced else 0.0
                        out = subprocess.run([self.spawnloop, mode, str(n)],
                                             env=configs[c], capture_output=True,
                                             text=True)
                        if out.returncode != 0:
                            raise RuntimeError(f"spawnloop {mode} {c}: {out.stderr.strip()}")
                        x = kv(out.stdout)
                        coll = (d.cpu() - c0) * 1e6 / n if c in traced else 0.0
                        x["collector_us"] = coll
                        x["total_cpu_us"] = x["cpu_us"] + coll
                        res[mode][c].append(x)
                log(f"[spawn] round {r + 1}/{rounds} done (load {loadavg()})")
        finally:
            d.stop()
        count = self.count_capture(cap)
        # spawns + warm-up + spawnloop itself, for each traced run (not
        # spawnloop itself when only its children are traced)
        # (the connection-only library says nothing: no image, one
        # connection without a frame per process)
        expected = (len(traced) - 1) * rounds * 2 * (n + 5 + 1) - rounds * 2
        silent = rounds * 2 * (n + 5 + 1)
        rows, cpu_rows = [], []
        floor = {}
        for mode in ("spawn", "fork"):
            R = res[mode]
            wall = {c: [x["median_us"] for x in R[c]] for c in names}
            p10 = {c: [x["p10_us"] for x in R[c]] for c in names}
            cpu = {c: [x["total_cpu_us"] for x in R[c]] for c in names}
            label = "posix_spawn" if mode == "spawn" else "fork+execve"

            def overhead(v, t):
                """Per-round (t - untraced) / (empty - untraced): median and
                range; rounds whose floor came out <= 0 (noise) are left out."""
                rs = [(v[t][i] - v["untraced"][i]) / (v["empty"][i] - v["untraced"][i])
                      for i in range(rounds) if v["empty"][i] > v["untraced"][i]]
                txt = fmt(med(rs), 2) if rs else "n/a"
                if len(rs) > 1:
                    txt += f" ({min(rs):.2f}–{max(rs):.2f})"
                if len(rs) < rounds:
                    txt += f" [{len(rs)}/{rounds} rounds]"
                return (med(rs) if rs else None), txt

            floor[mode] = overhead(wall, SOCKET_FLOOR)[0]
            for t in traced:
                ratio, rtxt = overhead(wall, t)
                _, ptxt = overhead(p10, t)
                _, ctxt = overhead(cpu, t)
                name = label if t == "proftrace" else f"{label}, {t}"
                rows.append([name, fmt(med(wall["untraced"])), fmt(med(wall["empty"])),
                             fmt(med(wall[t])), rtxt, ptxt,
                             verdict(ratio <= TARGETS["spawn"] if ratio is not None else None)])
                cpu_rows.append([name, fmt(med(cpu["untraced"])), fmt(med(cpu["empty"])),
                                 fmt(med(cpu[t])),
                                 fmt(med([x["collector_us"] for x in R[t]])), ctxt])
                if t == "proftrace":
                    self.target(f"spawn loop, {label}: overhead vs empty library (wall)",
                                f"≤ {TARGETS['spawn']}",
                                f"{fmt(ratio, 2)} (socket floor "
                                f"{fmt(floor[mode], 2)})",
                                ratio <= TARGETS["spawn"] if ratio is not None else None)
        cands = "".join(f"; *candidate {i + 1}* is `{lib}`"
                        for i, lib in enumerate(self.a.candidate or []))
        md = (f"{n} sequential spawns of `/bin/true` per run (the spawner preloads the "
              f"library too), {rounds} interleaved rounds; µs per spawn (the median spawn "
              "of each run, then the median over rounds).  overhead = (traced − untraced) "
              "/ (empty − untraced), computed per round; median (min–max over rounds), "
              "from each run's median spawn and, less disturbed by other work on the "
              "machine, from its 10th-percentile spawn.  The *socket floor* is "
              "bench/minrec.c, preloaded instead: a constructor that connects to the "
              "collector and sends a HELLO without command line or directory, a "
              "destructor that sends an EXIT, nothing else; what it costs above the "
              "empty library is what one collector connection per program image "
              "costs here, whatever the library around it does.  *Connection only* "
              "is the same library built to connect and send nothing "
              "(`libptminconn.so`): the part of that floor that no message format, "
              "batching or deferral can remove while every image has a connection "
              "of its own.  *Children only* "
              "runs the spawner without the library and gives it to the children "
              "alone (`SPAWNLOOP_CHILD_PRELOAD`): what is left of the traced row "
              f"is the spawning side's part{cands}.\n\n"
              + table(["mode", "untraced µs", "empty lib µs", "traced µs",
                       "overhead ratio", "overhead ratio, p10 spawns",
                       f"target ≤ {TARGETS['spawn']}"], rows)
              + "\n\nCPU per spawn (user+sys of the spawner and its children; traced: plus "
              "the collector's CPU over the run, from /proc, 10 ms ticks):\n\n"
              + table(["mode", "untraced µs", "empty lib µs", "traced µs",
                       "of which collector µs", "CPU overhead ratio"], cpu_rows)
              + f"\n\nRecorded: {int(count.get('images', 0))} program images in the "
                f"collector's capture for {expected} expected; "
                f"{int(count.get('drops', 0))} connections dropped, "
                f"{int(count.get('lost', 0))} frames lost, "
                f"{max(0, int(count.get('empty_conns', 0)) - 1 - silent)} connections "
                f"that ended without sending a frame, besides the {silent} of the "
                "connection-only library.")
        if int(count.get("images", 0)) != expected:
            self.notes.append(f"spawn loop: the capture holds {int(count.get('images', 0))} "
                              f"program images, {expected} were expected.")
        self.section("1. Spawn loop", md)

    # ---- 1b. what one spawn costs, counted (no timing: immune to load) ----

    def callgrind_ir(self, cmd, env):
        out = os.path.join(self.tmp, "callgrind.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
                           + cmd, env=env, capture_output=True, text=True)
        return callgrind_total(r, cmd)

    def strace_calls(self, cmd, env):
        out = os.path.join(self.tmp, "strace.out")
        r = subprocess.run(["strace", "-f", "-c", "-o", out] + cmd, env=env,
                           capture_output=True, text=True)
        return strace_total(r, cmd, out)

    def stage_anatomy(self):
        if not shutil.which("valgrind") or not shutil.which("strace"):
            self.section("1b. Spawn cost, counted", "n/a: needs valgrind and strace.")
            return
        log("[anatomy] instructions (callgrind) and system calls (strace) per spawn")
        sock = os.path.join(self.tmp, "anatomy.sock")
        cap = os.path.join(self.tmp, "anatomy.ptcap")
        configs = {
            "untraced": clean_env(),
            "empty library": clean_env(LD_PRELOAD=self.libempty),
            "libproftrace, no collector listening": clean_env(
                LD_PRELOAD=self.libpt, PROFTRACE_SOCKET=os.path.join(self.tmp, "nobody")),
            "libproftrace, recording": clean_env(LD_PRELOAD=self.libpt, PROFTRACE_SOCKET=sock),
            SOCKET_FLOOR + ", recording": clean_env(LD_PRELOAD=self.libminrec,
                                                    PROFTRACE_SOCKET=sock),
        }
        if self.a.quick:
            del configs["libproftrace, no collector listening"]
        for i, lib in enumerate(self.a.candidate or []):
            configs[f"candidate {i + 1}, recording"] = clean_env(
                LD_PRELOAD=os.path.abspath(lib), PROFTRACE_SOCKET=sock)
        d = Daemon(self.proftrace, cap, sock, os.path.join(self.tmp, "anatomy-daemon.log"))
        rows = []
        base = None
        try:
            for name, env in configs.items():
                child = self.callgrind_ir(["/bin/true"], env)
                # per spawn in the spawner: the difference between two loop
                # lengths cancels its own start and end
                a, b = (3, 6) if self.a.quick else (20, 40)
                p1 = self.callgrind_ir([self.spawnloop, "spawn", str(a)], env)
                p2 = self.callgrind_ir([self.spawnloop, "spawn", str(b)], env)
                s1 = self.strace_calls([self.spawnloop, "spawn", str(a)], env)
                s2 = self.strace_calls([self.spawnloop, "spawn", str(b)], env)
                f1 = self.strace_calls([self.spawnloop, "fork", str(a)], env)
                f2 = self.strace_calls([self.spawnloop, "fork", str(b)], env)
                pf = page_faults(["/bin/true"], env)
                x = (child, (p2 - p1) / (b - a), (s2 - s1) / (b - a), (f2 - f1) / (b - a),
                     pf)
                if base is None:
                    base = x
                rows.append([name, f"{x[0]:,}", f"{x[0] - base[0]:+,}", f"{x[1]:,.0f}",
                             f"{x[1] - base[1]:+,.0f}", f"{x[2]:.1f}", f"{x[2] - base[2]:+.1f}",
                             f"{x[3]:.1f}", f"{x[3] - base[3]:+.1f}",
                             f"{x[4]:.0f}", f"{x[4] - base[4]:+.0f}"])
        finally:
            d.stop()
        vm = kv(subprocess.run([self.vmcost], capture_output=True, text=True,
                               check=True).stdout)
        md = ("Counted rather than timed, so a busy machine does not move them: user-space "
              "instructions (valgrind --tool=callgrind) of one `/bin/true` and of the "
              "spawning process per posix_spawn (the difference between two loop lengths, "
              "which cancels its start and end), and system calls per spawn, both sides (strace -f -c, same "
              f"difference).  The environment has {len(clean_env())} variables.  "
              "Page faults: minor and major faults of one `/bin/true` (getrusage, median "
              "of 5).  What these cost here (`bench/vmcost`): a first write to an "
              f"anonymous page {vm['anon_fault_us']:.1f} µs, to a private file page "
              f"{vm['cow_fault_us']:.1f} µs, a trivial system call "
              f"{vm['syscall_us']:.2f} µs, a Unix connection (socket, connect, accept, "
              f"both closes) {vm['connect_us']:.1f} µs.\n\n"
              + table(["configuration", "/bin/true instr.", "Δ", "spawner instr./spawn", "Δ",
                       "syscalls/spawn (posix_spawn)", "Δ", "syscalls/spawn (fork+exec)", "Δ",
                       "/bin/true page faults", "Δ"],
                      rows))
        self.section("1b. Spawn cost, counted", md)

    # ---- 2. the sample build ----

    def fresh_sample(self, i):
        src = os.path.join(SRC, "sample")
        pats = []
        try:
            with open(os.path.join(src, ".gitignore")) as f:
                for line in f:
                    line = line.strip()
                    if line and not line.startswith("#"):
                        pats.append(os.path.basename(line.lstrip("/")))
        except OSError:
            pass
        dst = os.path.join(self.tmp, f"sample-{i}")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*pats))
        return dst

    def stage_sample(self):
        rounds = self.sz["sample_rounds"]
        log(f"[sample] ./configure && make -j2, untraced and recorded, {rounds} rounds")
        build = "./configure >/dev/null && make -j2 >/dev/null"
        res = {"untraced": [], "proftrace": []}
        caps = []
        k = 0
        for r in range(rounds):
            order = ["untraced", "proftrace"] if r % 2 == 0 else ["proftrace", "untraced"]
            for c in order:
                d = self.fresh_sample(k)
                k += 1
                if c == "untraced":
                    cmd = ["sh", "-c", build]
                else:
                    cap = os.path.join(self.tmp, f"sample-{r}.ptcap")
                    caps.append(cap)
                    cmd = [self.proftrace, "record", "-q", "-o", cap, "--force",
                           "--", "sh", "-c", build]
                wall, cpu, _, _ = run_measured(cmd, env=clean_env(), cwd=d)
                res[c].append((wall, cpu))
                shutil.rmtree(d, ignore_errors=True)
            log(f"[sample] round {r + 1}/{rounds} done (load {loadavg()})")
        wr = [res["proftrace"][i][0] / res["untraced"][i][0] for i in range(rounds)]
        cr = [res["proftrace"][i][1] / res["untraced"][i][1] for i in range(rounds)]
        w = med(wr)
        rows = [
            ["wall s", fmt(med([x[0] for x in res["untraced"]]), 2),
             fmt(med([x[0] for x in res["proftrace"]]), 2),
             f"{fmt(w, 3)} ({min(wr):.3f}–{max(wr):.3f})",
             f"≤ {TARGETS['sample_wall']}: {verdict(w <= TARGETS['sample_wall'])}"],
            ["CPU s (user+sys, all processes; traced: with the collector)",
             fmt(med([x[1] for x in res["untraced"]]), 2),
             fmt(med([x[1] for x in res["proftrace"]]), 2),
             f"{fmt(med(cr), 3)} ({min(cr):.3f}–{max(cr):.3f})", "—"],
        ]
        self.target("sample build: wall time traced / untraced",
                    f"≤ {TARGETS['sample_wall']}", fmt(w, 3), w <= TARGETS["sample_wall"])
        # executions and sizes from the last capture
        cap = caps[-1]
        csvp = cap + ".csv"
        subprocess.run([self.proftrace, "convert", "-f", "csv", "-o", csvp, cap],
                       check=True, env=clean_env())
        with open(csvp, newline="") as f:
            execs = sum(1 for _ in csv.reader(f)) - 1
        count = self.count_capture(cap)
        self.sizes.append(("sample build (recorded)", execs, os.path.getsize(cap),
                           os.path.getsize(csvp), count))
        md = (f"`sh -c '{build}'` on a fresh copy of sample/ each time, {rounds} interleaved "
              "rounds; untraced versus `proftrace record -q`.  Ratios per round, median "
              "(min–max).  CPU comes from wait4() on the top process: every process the "
              f"build waited for, and for the traced run the collector too.  The build "
              f"runs {execs} executions.\n\n"
              + table(["", "untraced", "proftrace record", "ratio", "target"], rows))
        self.section("2. Exec-heavy real work: the sample build", md)

    # ---- 3. collector ingest ----

    def stage_ingest(self):
        k, rounds = self.sz["ingest_clients"], self.sz["ingest_rounds"]
        n, nc = self.sz["ingest_frames"], self.sz["ingest_churn_frames"]
        workloads = [
            ("1 frame per message, 1 connection per client", ["-b", "1", "-c", "0"], n),
            ("16 frames per message (batched)", ["-b", "16", "-c", "0"], n),
            ("1 connection per process (6 frames), 1 frame per message, as the library",
             ["-b", "1", "-c", "6"], nc),
        ]
        log(f"[ingest] {k} clients, {len(workloads)} workloads x {rounds} rounds")
        rows = []
        best_rate = None
        total_lost = 0          # the collector's: what the target is about
        sink_lost = 0           # the reference receivers', reported apart
        servers = ["sink", "sink-mmsg", "collector"]
        for wname, wargs, frames in workloads:
            got_all = {c: [] for c in servers}
            ratios = []
            for r in range(rounds):
                sock = os.path.join(self.tmp, "ingest.sock")
                cap = os.path.join(self.tmp, "ingest.ptcap")
                k0 = r % len(servers)
                order = servers[k0:] + servers[:k0]
                got = {}
                for c in order:
                    base = [self.ingest, "-k", str(k), "-n", str(frames)] + wargs + [sock]
                    if c != "collector":
                        cmd = base + ["--" + c]
                    else:
                        cmd = base + ["--", self.proftrace, "daemon", "-o", cap,
                                      "--socket", sock, "--force"]
                    out = subprocess.run(cmd, env=clean_env(), capture_output=True,
                                         text=True, timeout=3600)
                    if out.returncode != 0:
                        raise RuntimeError(f"ingest ({c}): {out.stderr.strip()[-500:]}")
                    x = kv(out.stdout)
                    if c == "collector":
                        cc = self.count_capture(cap)
                        sent = k * frames
                        x["lost"] = sent - int(cc.get("frames", 0)) + int(cc.get("lost", 0))
                        x["drops"] = int(cc.get("drops", 0))
                        x["damaged"] = int(cc.get("damaged", 0)) or cc["rc"] != 0
                        os.unlink(cap)
                    else:
                        x["lost"] = k * frames - int(x.get("sink_frames", 0))
                    got[c] = x
                    got_all[c].append(x)
                ratios.append(got["collector"]["frames_per_s"] / got["sink"]["frames_per_s"])
            col, sink, mm = got_all["collector"], got_all["sink"], got_all["sink-mmsg"]
            rate = med([x["frames_per_s"] for x in col])
            mbs = med([x["bytes_per_s"] for x in col]) / 1e6
            cpu_frame = med([x["server_cpu_s"] * 1e6 / x["frames"] for x in col])
            cpu_pct = med([100 * x["server_cpu_s"] / x["total_s"] for x in col])
            lost = sum(x["lost"] for x in col)
            client_lost = sum(x["client_lost"] for x in col)
            total_lost += lost
            sink_lost += sum(x["lost"] for x in sink + mm)
            drops = sum(x["drops"] for x in col)
            damaged = any(x["damaged"] for x in col)
            best_rate = rate if best_rate is None else max(best_rate, rate)
            rows.append([wname, f"{k} × {frames:,}", fmt(rate, 0),
                         fmt(med([x["frames_per_s"] for x in sink]), 0),
                         fmt(med([x["frames_per_s"] for x in mm]), 0),
                         fmt(med(ratios), 2), fmt(mbs, 1), fmt(cpu_frame, 2),
                         fmt(med([x["server_cpu_s"] * 1e6 / x["frames"] for x in sink]), 2),
                         fmt(med([x["server_cpu_s"] * 1e6 / x["frames"] for x in mm]), 2),
                         fmt(cpu_pct, 0),
                         f"{int(lost)}" + (f" (clients gave up on {int(client_lost)})"
                                           if client_lost else "")
                         + (f", {drops} drops" if drops else "")
                         + (", capture damaged" if damaged else "")])
            log(f"[ingest] {wname}: {rate:,.0f} frames/s (load {loadavg()})")
        md = ("`bench/ingest` forks the clients, which send synthetic gcc-driver processes "
              "(HELLO with a 200–3000-byte compiler command line, cwd and environment; "
              "SPAWN cc1, REAP, SPAWN as, REAP, EXIT; about 450 bytes a frame) as fast as "
              "they can, with the library's 250 ms send timeout; the collector is "
              "`proftrace daemon`, stopped (SIGTERM) when the clients are done, so the "
              "time runs until every frame is in the capture.  The *sink* is the same "
              "clients against a receiver that only counts, one recv(2) per message as the "
              "collector does (the socket path's ceiling on this machine); *mmsg sink* "
              "receives with recvmmsg(2), 16 messages per call; *vs sink* is the ratio of "
              "the collector's rate to the sink's within a round.  "
              "Lost = frames sent − frames in the capture (counted with bench/capcount), "
              f"summed over {rounds} round(s).\n\n"
              + table(["workload", "clients × frames", "collector frames/s",
                       "sink frames/s", "mmsg sink frames/s", "vs sink", "collector MB/s",
                       "collector CPU µs/frame", "sink CPU µs/frame",
                       "mmsg sink CPU µs/frame", "collector CPU %", "lost"], rows))
        if sink_lost:
            md += (f"\n\nThe reference receivers (sinks) counted {int(sink_lost):,} "
                   "frames fewer than were sent, in all (a client gives up on a socket "
                   "that stays full for 250 ms, and a sink stops counting when the "
                   "clients are done); they measure the socket path, not the "
                   "collector, whose losses are the *lost* column.")
        self.target("collector ingest: frames/s (best workload)",
                    f"≥ {TARGETS['ingest']:,}", fmt(best_rate, 0),
                    best_rate >= TARGETS["ingest"])
        self.target("collector ingest: frames lost", "0", str(int(total_lost)),
                    total_lost == 0)
        self.section("3. Collector ingest", md)

    # ---- 4. conversion at scale ----

    def available(self):
        """Which conversions this proftrace has: csv, json, report."""
        have = {}
        h = subprocess.run([self.proftrace, "convert", "--help"], capture_output=True,
                           text=True)
        m = re.search(r"known:([^)]*)\)", h.stdout + h.stderr)
        formats = m.group(1).split() if m else ["csv"]
        have["csv"] = "csv" in formats
        have["json"] = "json" in formats
        have["svg"] = "svg" in formats
        h = subprocess.run([self.proftrace, "--help"], capture_output=True, text=True)
        have["report"] = bool(re.search(r"^\s+report\s", h.stdout, re.M))
        return have

    def stage_convert(self):
        n, rounds = self.sz["convert_n"], self.sz["convert_rounds"]
        cap = os.path.join(self.tmp, "synthetic.ptcap")
        log(f"[convert] generating {n:,} executions")
        t0 = time.monotonic()
        out = subprocess.run([self.gencapture, "-n", str(n), cap], capture_output=True,
                             text=True, check=True)
        gen_s = time.monotonic() - t0
        g = kv(out.stdout)
        have = self.available()
        outs = {"csv": cap + ".csv", "json": cap + ".json", "svg": cap + ".svg",
                "report": cap + ".report.txt",
                "report --format markdown": cap + ".report.md"}
        cmds = {
            "read only (bench/capcount)": ([self.capcount, cap], None),
            "convert -f csv": ([self.proftrace, "convert", "-f", "csv", "--force", "-o", outs["csv"], cap], "csv"),
            "convert -f json": ([self.proftrace, "convert", "-f", "json", "--force", "-o", outs["json"], cap], "json"),
            "convert -f svg": ([self.proftrace, "convert", "-f", "svg", "--force", "-o", outs["svg"], cap], "svg"),
            "report": ([self.proftrace, "report", cap], "report"),
            "report --format markdown": ([self.proftrace, "report", "--format", "markdown", cap],
                                         "report"),
        }
        res = {c: [] for c in cmds}
        log(f"[convert] {rounds} round(s) of {', '.join(cmds)}")
        for r in range(rounds):
            names = list(cmds)
            if r % 2:
                names.reverse()
            for c in names:
                cmd, feat = cmds[c]
                if feat and not have.get(feat):
                    continue
                stdout = subprocess.DEVNULL
                if c.startswith("report"):
                    stdout = open(outs[c], "w")
                try:
                    wall, cpu, rss, rc = run_measured(cmd, env=clean_env(), stdout=stdout,
                                                      check=False)
                finally:
                    if stdout is not subprocess.DEVNULL:
                        stdout.close()
                res[c].append((wall, cpu, rss, rc))
            log(f"[convert] round {r + 1}/{rounds} done (load {loadavg()})")
        floor = med([x[0] for x in res["read only (bench/capcount)"]])
        rows = []
        full = n >= 1000000
        for c in cmds:
            feat = cmds[c][1]
            if feat and not have.get(feat):
                rows.append([f"`proftrace {c}`", "n/a (not in this proftrace)", "", "", "", ""])
                self.target(f"{c}: seconds / peak RSS at {n:,} executions",
                            f"≤ {TARGETS['convert_s']:g} s, ≤ {TARGETS['convert_mb']:g} MB",
                            "n/a", None)
                continue
            xs = res[c]
            wall = med([x[0] for x in xs])
            cpu = med([x[1] for x in xs])
            rss = max(x[2] for x in xs) / 1024
            rcs = sorted({x[3] for x in xs})
            ok = wall <= TARGETS["convert_s"] and rss <= TARGETS["convert_mb"]
            label = c if feat is None else f"proftrace {c}"
            rows.append([f"`{label}`" if feat else label, fmt(wall, 2), fmt(cpu, 2),
                         fmt(wall / floor, 1),
                         fmt(rss, 0), ("exit " + ",".join(map(str, rcs))) if rcs != [0] else "ok"])
            if feat:
                self.target(f"{c}: seconds / peak RSS at {n:,} executions",
                            f"≤ {TARGETS['convert_s']:g} s, ≤ {TARGETS['convert_mb']:g} MB",
                            f"{wall:.2f} s, {rss:.0f} MB",
                            (ok and rcs == [0]) if full else None)
        csv_bytes = os.path.getsize(outs["csv"]) if have.get("csv") and os.path.exists(outs["csv"]) else None
        if csv_bytes is not None:
            with open(outs["csv"], newline="") as f:
                rows_csv = sum(1 for _ in csv.reader(f)) - 1
        else:
            rows_csv = int(g.get("executions", 0))
        self.sizes.append(("synthetic build (bench/gencapture)", rows_csv,
                           os.path.getsize(cap), csv_bytes, self.count_capture(cap)))
        md = (f"`bench/gencapture -n {n}` wrote a capture of {int(g.get('executions', 0)):,} "
              f"executions ({int(g.get('frames', 0)):,} frames, "
              f"{g.get('raw_bytes', 0) / 1e6:,.0f} MB of frames uncompressed, "
              f"{os.path.getsize(cap) / 1e6:,.1f} MB on disk, pids wrapped "
              f"{int(g.get('pid_wraps', 0))} times; {gen_s:.1f} s to generate): "
              "a top make running sub-makes, each running 8 recipes at a time, "
              "make → sh → gcc → cc1/as or collect2 → ld, command lines of 200–3000 "
              f"bytes.  {rounds} interleaved round(s); seconds are medians, peak RSS the "
              "maximum (wait4 ru_maxrss); *× floor* compares with reading the capture and "
              "nothing else (inflate and parse every record with the collector's reader: "
              "`bench/capcount`).\n\n"
              + table(["command", "wall s", "CPU s", "× floor", "peak RSS MB", "status"], rows))
        if not full:
            md += (f"\n\n(At {n:,} executions this only shows that the commands run; the "
                   "targets apply to 1,000,000.)")
        self.section("4. Conversion at scale", md)

    # ---- 5. size ----

    def stage_size(self):
        rows = []
        for name, execs, capb, csvb, count in self.sizes:
            ratio = capb / csvb if csvb else None
            frames = int(count.get("frames", 0))
            rows.append([name, f"{execs:,}", f"{capb:,}", fmt(capb / execs if execs else None, 0),
                         fmt(count.get("frame_bytes", 0) / execs if execs else None, 0),
                         f"{csvb:,}" if csvb else "n/a",
                         fmt(csvb / execs if csvb and execs else None, 0),
                         fmt(100 * ratio, 1) + " %" if ratio else "n/a",
                         verdict(ratio <= TARGETS["size"] if ratio else None)])
            self.target(f"size, {name}: capture / CSV", f"≤ {TARGETS['size'] * 100:.0f} %",
                        fmt(100 * ratio, 1) + " %" if ratio else "n/a",
                        ratio <= TARGETS["size"] if ratio else None)
            _ = frames
        md = ("Capture bytes (gzip, as written) per execution, the frames' uncompressed "
              "bytes per execution, and the CSV of the same executions "
              "(`proftrace convert -f csv`).\n\n"
              + table(["capture", "executions", "capture bytes", "bytes/exec",
                       "raw frame bytes/exec", "CSV bytes", "CSV bytes/exec",
                       "capture / CSV", f"target ≤ {TARGETS['size'] * 100:.0f} %"], rows))
        self.section("5. Size", md)

    # ---- the report ----

    def write(self, path, info, started, load0, load1, elapsed, argv):
        cmd = "bench/run.py" + ("".join(" " + a for a in argv) if argv else "")
        head = [
            "# proftrace performance",
            "",
            "Generated by `bench/run.py`"
            + (" in quick mode (tiny sizes: a smoke test, not a measurement)" if self.a.quick else "")
            + "; rerun with:",
            "",
            "```sh",
            f"{cmd}",
            "```",
            "",
            "(or `meson compile -C build bench`; `bench/run.py --quick` is the smoke test that "
            "`meson test -C build --suite bench` runs).  Every timing a target applies to is a "
            "ratio of two things measured in the same run, the median over interleaved rounds; "
            "see bench/run.py for what each stage does.",
            "",
            "## Machine and run",
            "",
            table(["", ""], [
                ["date", started.strftime("%Y-%m-%d %H:%M %Z").strip()],
                ["CPUs (nproc)", info["nproc"]],
                ["CPU model", info["cpu"]],
                ["memory", f"{info['mem_mb']:,} MB"],
                ["kernel", info["kernel"]],
                ["glibc", info["glibc"]],
                ["proftrace", git_rev()],
                ["load average (1 min) at start / end", f"{load0} / {load1}"],
                ["duration of the run", f"{elapsed / 60:.1f} min"],
            ]),
            "",
        ]
        if float(load0 if load0 != "?" else 0) > 0.5 * (info["nproc"] or 1) or \
                float(load1 if load1 != "?" else 0) > 0.5 * (info["nproc"] or 1):
            head += ["**The machine was shared with other work during this run** (see the "
                     "load average): absolute times are inflated and noisy; the ratios, "
                     "measured side by side, are what to read, and even they carry the noise "
                     "shown by their min–max ranges.", ""]
        old = ""
        if os.path.exists(path):
            with open(path) as f:
                old = f.read()
        head += ["## Targets", "",
                 table(["what", "target", "measured", "verdict"],
                       self.targets + other_targets(old, self.targets)), ""]
        body = []
        for title, md in self.sections:
            body += [f"## {title}", "", md, ""]
        if self.notes:
            body += ["## Notes from this run", ""] + [f"- {x}" for x in self.notes] + [""]
        keep = old.split(MARKER, 1)[1] if MARKER in old else ""
        text = "\n".join(head + body) + "\n" + MARKER + (keep if keep else "\n")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--no-build", action="store_true", help="do not run ninja first")
    ap.add_argument("-o", "--output", help="the report to write (default: "
                    "doc/performance.md, or BUILD/bench/performance-quick.md with --quick)")
    ap.add_argument("--only", help="comma-separated stages: spawn,anatomy,sample,ingest,convert,size")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--candidate", action="append", metavar="LIB",
                    help="also measure this build of libproftrace.so in the spawn "
                    "loop, side by side (repeatable)")
    for k in FULL:
        ap.add_argument("--" + k.replace("_", "-"), type=int, dest=k,
                        help=f"(full {FULL[k]}, quick {QUICK[k]})")
    args = ap.parse_args()
    argv = sys.argv[1:]

    if not args.no_build:
        if subprocess.run(["ninja", "-C", args.build_dir]).returncode != 0:
            sys.exit("bench: the build failed")
    out = args.output or (os.path.join(os.path.abspath(args.build_dir), "bench",
                                       "performance-quick.md")
                          if args.quick else os.path.join(SRC, "doc", "performance.md"))
    s = Suite(args)
    for exe in (s.proftrace, s.libpt, s.libempty, s.libminrec, s.spawnloop, s.ingest, s.gencapture,
                s.capcount, s.rusage, s.vmcost):
        if not os.path.exists(exe):
            sys.exit(f"bench: {exe} is missing; build first (ninja -C {args.build_dir})")
    stages = ["spawn", "anatomy", "sample", "ingest", "convert", "size"]
    only = args.only.split(",") if args.only else stages
    for x in only:
        if x not in stages:
            sys.exit(f"bench: unknown stage {x!r} (known: {', '.join(stages)})")
    info = machine_info()
    started = datetime.datetime.now().astimezone()
    load0 = loadavg()
    t0 = time.monotonic()
    failed = []
    try:
        for st in stages:
            if st not in only:
                continue
            try:
                ts = time.monotonic()
                getattr(s, "stage_" + st)()
                log(f"[{st}] {time.monotonic() - ts:.1f} s")
            except Exception as e:  # report the others all the same
                failed.append(st)
                log(f"[{st}] FAILED: {e}")
                traceback.print_exc()
                s.section(f"{st}: failed", f"The stage failed: `{e}`")
    finally:
        if not args.keep:
            shutil.rmtree(s.tmp, ignore_errors=True)
        else:
            log(f"kept {s.tmp}")
    text = s.write(out, info, started, load0, loadavg(), time.monotonic() - t0, argv)
    print("\n## Targets\n\n" + table(["what", "target", "measured", "verdict"], s.targets))
    log(f"wrote {out}")
    # The smoke test: every stage ran and produced its table.
    rows = [l for l in text.splitlines() if l.startswith("| ")]
    if failed or len(rows) < 2 * len(only):
        sys.exit(f"bench: stages failed: {', '.join(failed) or 'no tables'}")


if __name__ == "__main__":
    main()
