"""What the tests of the SVG and Markdown views share: checks, running
proftrace, captures built by construction (mkcapture.py), recording the
sample build, and the runner that calls each test_* function.

A test script calls viewlib.main(globals(), add_args): it parses
--proftrace and the script's own options into ARGS, makes TMP, sets both
in the script's globals and here, runs the tests (-k NAME to pick) and
prints "N passed, N failed" last.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mkcapture import Capture  # noqa: E402

ARGS = None
TMP = None
CC1 = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"


class Failed(Exception):
    pass


class Skipped(Exception):
    """What the machine does not allow (a user namespace): the test is
    listed as skipped, with the reason, and does not fail."""


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def eq(got, want, what):
    if got != want:
        raise Failed(f"{what}: got {got!r}, want {want!r}")


def run(*args, rc=0):
    """proftrace ARGS, which must exit rc (None: any status); returns its
    output (bytes)."""
    p = subprocess.run([ARGS.proftrace] + list(args), capture_output=True)
    if rc is not None and p.returncode != rc:
        raise Failed(f"proftrace {' '.join(args)}: exit {p.returncode}, "
                     f"stderr: {p.stderr.decode(errors='replace')}")
    return p.stdout


def capture(name, build):
    """Write build() (a Capture) to TMP/name.ptcap; returns the path."""
    path = os.path.join(TMP, name + ".ptcap")
    build().write(path)
    return path


def section(text, title, need=True):
    """The lines of the text report's section whose heading starts with
    title, up to the next blank line.  Absent: Failed, or None if not
    need."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(title):
            out = []
            for l2 in lines[i + 1:]:
                if not l2.strip():
                    break
                out.append(l2)
            return out
    if need:
        raise Failed(f"no section {title!r} in:\n{text}")
    return None


def rows(lines, ncols):
    """Table rows: ncols numeric-ish columns, then the rest as one."""
    out = []
    for line in lines[1:]:
        parts = line.split(None, ncols)
        if len(parts) < ncols or not re.match(r"^[+-]?\d", parts[0]):
            continue
        out.append([p.rstrip("%") for p in parts[:ncols]] +
                   ([parts[ncols].strip()] if len(parts) > ncols else []))
    return out


_SAMPLES = {}


def sample_capture(command="./configure && make -j2"):
    """Record the sample build (--sample, with --lib) once per command."""
    if not (ARGS.lib and ARGS.sample):
        raise Failed("needs --lib and --sample")
    if command in _SAMPLES:
        return _SAMPLES[command]
    work = os.path.join(TMP, f"sample{len(_SAMPLES)}")
    subprocess.run(["cp", "-r", ARGS.sample, work], check=True)
    cap = work + ".ptcap"
    subprocess.run([ARGS.proftrace, "record", "--force", "-o", cap, "--",
                    "sh", "-c", command], cwd=work,
                   env=dict(os.environ, PROFTRACE_LIB=ARGS.lib), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _SAMPLES[command] = cap
    return cap


def synthetic_capture(n=100000):
    """bench/gencapture's build of n executions (--gencapture)."""
    if not ARGS.gencapture:
        raise Failed("needs --gencapture")
    cap = os.path.join(TMP, f"synthetic{n}.ptcap")
    if not os.path.exists(cap):
        subprocess.run([ARGS.gencapture, "-n", str(n), cap], check=True,
                       stdout=subprocess.DEVNULL)
    return cap


# ---- runs built by construction ----

def make_like():
    """make [0,10]: cc a.c [1,4] > cc1 [1.5,3.5]; cc b.c [1,6] > cc1
    [2,5.5]; ld [6.5,9], which fails."""
    c = Capture(host="alpha", command="make -j2")
    c.process(100, 1, ["make", "-j2"], start=0, end=10)
    c.process(101, 100, ["cc", "-c", "a.c", "-o", "a.o"], start=1, end=4,
              cpu=(0.5, 0.1))
    c.process(102, 101, [CC1, "-quiet", "a.c", "-o", "/tmp/ccX.s"],
              start=1.5, end=3.5, cpu=(1.5, 0.25))
    c.process(103, 100, ["cc", "-c", "b.c", "-o", "b.o"], start=1, end=6)
    c.process(104, 103, [CC1, "-quiet", "b.c", "-o", "/tmp/ccY.s"],
              start=2, end=5.5, cpu=(3.0, 0.125))
    c.process(105, 100, ["ld", "-o", "prog", "a.o", "b.o"], start=6.5,
              end=9, exit=1, cpu=(0.75, 0.5))
    return c


def random_run(seed, n=300):
    """A random tree on a coarse time grid: ties, zero-length executions,
    children outliving their parents, a few failures."""
    rnd = random.Random(seed)
    c = Capture(host=f"random{seed}")
    procs = [(1000, 0, 100)]
    c.process(1000, 1, ["root"], start=0, end=1)
    for i in range(1, n):
        pid, ps, pe = rnd.choice(procs)
        s = rnd.randint(ps, pe)
        e = s + rnd.choice([0, 0, 1, 2, 5, 10, 30])
        if rnd.random() < 0.8:
            e = min(e, pe)
        c.process(1000 + i, pid, [rnd.choice(["cc", "sh", "ld", "make"]),
                                  f"f{rnd.randint(0, 20)}.c"],
                  start=s * 0.01, end=e * 0.01, reaped=False,
                  exit=1 if rnd.random() < 0.05 else 0,
                  cpu=(rnd.randint(0, 9) * 0.001, 0.0))
        procs.append((1000 + i, s, e))
    return c


def host_a():
    c = Capture(host="alpha", command="build-a")
    c.process(400, 1, ["build-a"], start=0, end=4)
    return c


def host_b():
    """Another machine, its wall clock 2 s after alpha's."""
    c = Capture(host="beta", mono_base_ns=5 * 10**9,
                realtime_base_ns=1_700_000_002_000_000_000,
                command="build-b")
    c.process(400, 1, ["build-b"], start=0, end=3)
    return c


def main(g, add_args=None, expected=()):
    """Run g's test_* functions; a failure raised as Failed or as one of
    expected prints its message, any other exception its traceback too."""
    global ARGS, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--lib", help="libproftrace.so, to record the sample")
    ap.add_argument("--sample", help="the sample project's directory")
    ap.add_argument("--gencapture", help="bench/gencapture")
    ap.add_argument("-k", help="run only tests whose name contains this")
    if add_args:
        add_args(ap)
    ARGS = ap.parse_args()
    for k, v in vars(ARGS).items():
        if k != "k" and isinstance(v, str):
            setattr(ARGS, k, os.path.abspath(v))
    tests = [(n, f) for n, f in sorted(g.items())
             if n.startswith("test_") and (not ARGS.k or ARGS.k in n)]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="pt-views-") as TMP:
        g["ARGS"], g["TMP"] = ARGS, TMP
        for name, fn in tests:
            try:
                fn()
                passed += 1
                print(f"ok   {name}")
            except Skipped as e:
                print(f"SKIP {name}: {e}")
            except Exception as e:
                failed += 1
                print(f"FAIL {name}: {e}")
                if not isinstance(e, (Failed,) + tuple(expected)):
                    traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
