#!/usr/bin/env python3
"""GNU make's own test suite, run untraced and under `proftrace record`:
the same results, and a record that equals strace's.

    make-suite.py --proftrace BIN --cache DIR

The suite (tests/run_make_tests.pl of the source of the very make that
is installed, `apt-get source make-dfsg=VERSION`, fetched once into
DIR through a private apt state, so that no deb-src line is needed and
nothing of the system's apt changes) runs against /usr/bin/make:

  1. untraced: each category's result (`ok (N passed)`, `FAILED (a/b
     passed)`, `N/A`) and the exit status;
  2. under `record`: every category's result and the exit status as
     untraced.  The suite runs make about 1,300 times and make runs
     shells, jobs, `$(shell)`, pipes, signals and fopen until EMFILE
     (misc/fopen-fail): whatever the library did would show here;
  3. under test/tools/ptcheck.py (`record -- strace -f`): every process,
     its parent, argv and exit status in the record as strace saw it.

Needs perl and apt-get (skipped without them), and the network for the
first download.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PTCHECK = os.path.join(HERE, "..", "tools", "ptcheck.py")
RESULT = re.compile(r"^(\S+/\S+) \.+ (.*?)\s*$")


def log(msg):
    print("[make-suite] " + msg, flush=True)


def mirror():
    """The first Debian or Ubuntu archive the system's apt names."""
    files = (glob.glob("/etc/apt/sources.list") +
             glob.glob("/etc/apt/sources.list.d/*.list") +
             glob.glob("/etc/apt/sources.list.d/*.sources"))
    for f in files:
        try:
            text = open(f).read()
        except OSError:
            continue
        for m in re.finditer(r"(https?://\S+)", text):
            uri = m.group(1)
            if "security" not in uri and "snapshot" not in uri:
                return uri
    return "http://deb.debian.org/debian"


def fetch_source(cache):
    """The unpacked source of the installed make, in cache; its path."""
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "make"],
                             capture_output=True, text=True).stdout.strip()
    if not version:
        sys.exit("make-suite: FAIL: dpkg-query knows no installed make")
    upstream = version.split(":")[-1].rsplit("-", 1)[0]
    top = os.path.join(cache, f"make-{version}")
    tests = os.path.join(top, f"make-dfsg-{upstream}", "tests")
    if os.path.isdir(tests):
        return tests
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix="apt-", dir=cache)
    codename = ""
    for line in open("/etc/os-release"):
        if line.startswith("VERSION_CODENAME="):
            codename = line.split("=", 1)[1].strip().strip('"')
    for d in ("lists/partial", "cache/archives/partial", "etc"):
        os.makedirs(os.path.join(work, d))
    with open(os.path.join(work, "etc", "sources.list"), "w") as f:
        f.write(f"deb-src {mirror()} {codename} main\n")
    user = subprocess.run(["id", "-un"], capture_output=True,
                          text=True).stdout.strip()
    opts = []
    for k, v in (("Dir::Etc::SourceList", work + "/etc/sources.list"),
                 ("Dir::Etc::SourceParts", work + "/etc/none"),
                 ("Dir::State::Lists", work + "/lists"),
                 ("Dir::Cache", work + "/cache"),
                 ("Debug::NoLocking", "1"),
                 ("APT::Sandbox::User", user)):
        opts += ["-o", f"{k}={v}"]
    log(f"fetching the source of make {version} (once)")
    for args in (["update"], ["source", "--download-only",
                              f"make-dfsg={version}"]):
        r = subprocess.run(["apt-get", "-q"] + opts + args, cwd=work,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"make-suite: FAIL: apt-get {args[0]} failed:\n"
                     + r.stdout[-2000:] + r.stderr[-2000:])
    orig = glob.glob(os.path.join(work, "make-dfsg_*.orig.tar.*"))
    if not orig:
        sys.exit("make-suite: FAIL: no orig tarball was fetched")
    part = top + ".part"
    shutil.rmtree(part, ignore_errors=True)
    with tarfile.open(orig[0]) as t:
        try:
            t.extractall(part, filter="data")
        except TypeError:       # Python before 3.11.4: no filters
            t.extractall(part)
    os.rename(part, top)
    shutil.rmtree(work, ignore_errors=True)
    return tests


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
