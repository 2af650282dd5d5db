#!/usr/bin/env python3
"""Page faults the preload library costs, per image kind, counted.

    bench/pagefaults.py [--build-dir build] [--against OTHER_BUILD] [-n 500]

On a VM a page fault costs 10 to 20 µs (against about 1 µs on bare
metal), so the pages the library touches in each process are what its
time per image is made of there.  Faults are a count, not a timing: a
busy machine does not move them.  Each loop runs under
`perf stat -e page-faults` (children included) with address-space
randomisation off (`setarch -R`: where a library lands decides how many
of its text pages one fault maps, so that counts repeat to the fault),
untraced, with the empty preload library (bench/empty.c, the floor) and
under `proftrace record`; the table gives faults per iteration beyond
the empty library, the difference of two loop lengths divided by their
difference, which cancels the shell's own start and end:

  dash $(:)       a subshell that forks and does not exec (configure's
                  command substitutions): the fork child and the parent
  dash vfork      /bin/true run by dash (vfork + exec)
  bash fork+exec  /bin/true run by bash (fork + exec)
  sed             a short sed run by dash
  cc1             a compiler that never forks: cc1 on an empty file
  spawn           bench/spawnloop spawn (posix_spawn of /bin/true)

With --against, the same for another build (the library and collector of
both measured in the same run).  Needs perf.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import SRC, clean_env, table  # noqa: E402


def loops(build, tmp):
    cc1 = None
    gcc = shutil.which("gcc")
    if gcc:
        p = subprocess.run([gcc, "-print-prog-name=cc1"], capture_output=True, text=True)
        if p.returncode == 0 and os.path.isabs(p.stdout.strip()):
            cc1 = p.stdout.strip()
    empty_c = os.path.join(tmp, "e.c")
    open(empty_c, "w").close()
    yield "dash $(:)", ["dash", "-c", 'i=0; while [ $i -lt $1 ]; do x=$(:); i=$((i+1)); done', "x"]
    yield "dash vfork", ["dash", "-c", 'i=0; while [ $i -lt $1 ]; do /bin/true; i=$((i+1)); done', "x"]
    if shutil.which("bash"):
        yield "bash fork+exec", ["bash", "-c", 'i=0; while [ $i -lt $1 ]; do /bin/true; i=$((i+1)); done', "x"]
    yield "sed", ["dash", "-c", 'i=0; while [ $i -lt $1 ]; do echo a | sed s/a/b/ >/dev/null; i=$((i+1)); done', "x"]
    if cc1:
        yield "cc1", ["dash", "-c", 'i=0; while [ $i -lt $3 ]; do "$1" -quiet "$2" -o /dev/null; i=$((i+1)); done',
                      "x", cc1, empty_c]
    yield "spawn", [os.path.join(build, "bench", "spawnloop"), "spawn"]


def faults(cmd, env, tmp):
    out = os.path.join(tmp, "perf.csv")
    p = subprocess.run(["perf", "stat", "-x,", "-o", out, "-e", "page-faults", "--",
                        "setarch", "-R"] + cmd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"pagefaults: {cmd}: {p.stderr[-300:]}")
    with open(out) as f:
        return int(next(line.split(",")[0] for line in f if "page-faults" in line))


def measure(build, n, tmp):
    """{kind: {config: faults per iteration}} for one build."""
    build = os.path.abspath(build)
    proftrace = os.path.join(build, "collector", "proftrace")
    empty = os.path.join(build, "bench", "libptempty.so")
    cap = os.path.join(tmp, "c.ptcap")
    res = {}
    for kind, base in loops(build, tmp):
        row = {}
        for config in ("untraced", "empty", "record"):
            x = []
            for k in (n // 5, n):
                cmd = base + [str(k)]
                env = clean_env()
                if config == "empty":
                    env["LD_PRELOAD"] = empty
                elif config == "record":
                    cmd = [proftrace, "record", "-q", "--force", "-o", cap, "--"] + cmd
                x.append(faults(cmd, env, tmp))
            row[config] = (x[1] - x[0]) / (n - n // 5)
        res[kind] = row
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--against", metavar="OTHER_BUILD")
    ap.add_argument("-n", type=int, default=500, help="iterations of the long loop (default 500)")
    a = ap.parse_args()
    if not shutil.which("perf") or not shutil.which("setarch"):
        print("pagefaults: needs perf and setarch; skipped", file=sys.stderr)
        return 0
    tmp = tempfile.mkdtemp(prefix="pt-pagefaults-")
    try:
        builds = [("this build", a.build_dir)]
        if a.against:
            builds.insert(0, (os.path.basename(os.path.abspath(a.against)) or a.against, a.against))
        got = [(name, measure(b, a.n, tmp)) for name, b in builds]
        kinds = list(got[0][1])
        head = ["per iteration", "untraced", "empty library"] + \
               [f"record, {name} (Δ empty)" for name, _ in got]
        rows = []
        for k in kinds:
            r0 = got[-1][1][k]
            rows.append([k, f"{r0['untraced']:.1f}", f"{r0['empty']:.1f}"] +
                        [f"{m[k]['record']:.1f} ({m[k]['record'] - m[k]['empty']:+.1f})"
                         for _, m in got])
        print(table(head, rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
