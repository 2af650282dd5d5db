#!/usr/bin/env python3
"""GNU make's own test suite, run untraced and under `proftrace record`:
the same results, and a record that equals strace's.

    make-suite.py --proftrace BIN --cache DIR

The suite (tests/run_make_tests.pl of the source of the very make that
is installed, `apt-get source make-dfsg=VERSION`, fetched once into
DIR through a private apt state by test/tools/debsource.py, so that no
deb-src line is needed and nothing of the system's apt changes) runs
against /usr/bin/make:

  1. untraced: each category's result (`ok (N passed)`, `FAILED (a/b
     passed)`, `N/A`) and the exit status;
  2. under `record`: every category's result and the exit status as
     untraced.  The suite runs make about 1,300 times and make runs
     shells, jobs, `$(shell)`, pipes, signals and fopen until EMFILE
     (misc/fopen-fail): whatever the library did would show here;
  3. under test/tools/ptcheck.py (`record -- strace -f`): every process,
     its parent, argv and exit status in the record as strace saw it.

Needs perl and apt-get, and the network for the first download (skipped
without them).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PTCHECK = os.path.join(HERE, "..", "tools", "ptcheck.py")
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import debsource  # noqa: E402
RESULT = re.compile(r"^(\S+/\S+) \.+ (.*?)\s*$")


def log(msg):
    print("[make-suite] " + msg, flush=True)


def fetch_source(cache):
    """The tests directory of the installed make's source, in cache."""
    try:
        top = debsource.fetch("make", "make-dfsg", cache, log)
    except debsource.Unavailable as e:
        print(f"SKIP: the source of the installed make cannot be had: {e}")
        sys.exit(77)
    except debsource.Broken as e:
        sys.exit(f"make-suite: FAIL: {e}")
    return os.path.join(top, "tests")


def prepare(tests, into):
    """A fresh copy of the tests directory with its configure output."""
    shutil.copytree(tests, into)
    src = open(os.path.join(into, "config-flags.pm.in")).read()
    src = src.replace("'@CC@'", "'gcc'")
    src = re.sub(r"'@[A-Z_]+@'", "''", src)
    with open(os.path.join(into, "config-flags.pm"), "w") as f:
        f.write(src)
    return into


def results(out):
    got = {}
    for line in out.splitlines():
        m = RESULT.match(line)
        if m:
            got[m.group(1)] = m.group(2)
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--cache", required=True)
    a = ap.parse_args()
    for tool in ("perl", "apt-get", "dpkg-query"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed")
            sys.exit(77)
    proftrace = os.path.abspath(a.proftrace)
    tests = fetch_source(os.path.abspath(a.cache))
    tmp = tempfile.mkdtemp(prefix="make-suite-")
    suite = ["perl", "run_make_tests.pl", "-make", shutil.which("make")]
    problems = []

    def run(label, cmd):
        d = prepare(tests, os.path.join(tmp, label.replace(" ", "-")))
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True,
                           errors="replace")
        got = results(r.stdout)
        bad = sorted(k for k, v in got.items() if not v.startswith("ok")
                     and v != "N/A")
        log(f"{label}: exit {r.returncode}, {len(got)} categories, not ok: "
            f"{', '.join(bad) or 'none'}")
        if len(got) < 50:
            problems.append(f"{label}: only {len(got)} results:\n"
                            + r.stdout[-2000:] + r.stderr[-2000:])
        return r, got

    base, want = run("untraced", suite)
    cap = os.path.join(tmp, "run.ptcap")
    rec, got = run("record", [proftrace, "record", "-q", "-o", cap, "--"]
                   + suite)
    if rec.returncode != base.returncode:
        problems.append(f"record: exit {rec.returncode}, untraced "
                        f"{base.returncode}")
    for k in sorted(want.keys() | got.keys()):
        if want.get(k) != got.get(k):
            problems.append(f"record: {k}: untraced {want.get(k)!r}, "
                            f"traced {got.get(k)!r}")
    chk, _ = run("ptcheck", [sys.executable, PTCHECK, "--proftrace",
                             proftrace, "--expect-rc",
                             str(base.returncode), "--"] + suite)
    said = [ln for ln in (chk.stdout + chk.stderr).splitlines()
            if ln.startswith("ptcheck:")]
    log(said[-1] if said else "ptcheck: said nothing")
    if chk.returncode != 0:
        problems.append("record and strace -f differ:\n"
                        + chk.stderr[-3000:])
    shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        for m in problems[:40]:
            print("make-suite: FAIL: " + m)
        sys.exit(1)
    print("make-suite: ok: every category as untraced, the record as "
          "strace's")


if __name__ == "__main__":
    main()
