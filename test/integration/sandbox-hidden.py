#!/usr/bin/env python3
"""A sandbox that hides the library's file: every process is recorded.

    sandbox-hidden.py --proftrace PROFTRACE --ptcheck PTCHECK --lib LIB

`bwrap --dev-bind / / --tmpfs DIR sh -c 'true; sh -c "true"; ls /'`, with
DIR the directory the library is preloaded from: /tmp (where `record`
copies a library that is not installed) and /usr/local (where `meson
install` puts it; the library is copied to a directory of its own there
for the run).  ptcheck runs it under `proftrace record` and `strace -f`
at once: every process strace sees must be in the capture with its
command line, its parent and its exit status.  The exec hook that finds
the library hidden preloads it through the collector's
/proc/PID/root instead (doc/reliability.md, W2); before, the two
processes the sandboxed shell starts were lost.

As an ordinary user (a uid made for the test), whose bubblewrap makes a
user namespace from which the kernel refuses that link, the library is
left out of the sandboxed shell, and its EXEC says so: the collector
watches it from outside (doc/reliability.md, W1, W2).  `bwrap --dev-bind
/ / --tmpfs /usr/local sh -c 'sleep 0.3; sh -c "sleep 0.3"'` under
`record` (1 ms ticks), the library installed under /usr/local: the
sandboxed shell, both sleeps and the inner shell must be in the
capture, each under its parent; before, none of the last three was.
Their exit status is not checked: the watcher knows it only when it
reads the zombie before the shell reaps it.  (With --tmpfs /tmp the
sandbox hides the collector's socket as well, and nothing inside can
reach the collector: W2.)

Needs root, bwrap and strace (skipped otherwise, exit 77).  The
ordinary user's part needs a user namespace of that user, which the
kernel refuses inside a chroot (root's included) and Ubuntu 24.04's
AppArmor refuses too: where the machine refuses one (test/tools/userns.py),
that part is skipped with the reason and the rest still runs.
"""

import argparse
import csv
import os
import pwd
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import userns  # noqa: E402

CMD = ["sh", "-c", 'true; sh -c "true"; ls /']


def check(a, hide, lib):
    env = dict(os.environ)
    env["PROFTRACE_LIB"] = lib
    r = subprocess.run([sys.executable, a.ptcheck, "--proftrace", a.proftrace,
                        "--", "bwrap", "--dev-bind", "/", "/", "--tmpfs",
                        hide] + CMD, env=env, stdout=subprocess.DEVNULL)
    print("sandbox-hidden: --tmpfs %s: %s" % (hide, "ok" if r.returncode == 0
                                             else "FAIL"))
    return r.returncode == 0


def as_user(a):
    """The ordinary user's run; returns a list of problems."""
    name = "ptsbx%06d" % random.randrange(10 ** 6)
    if subprocess.run(["useradd", "-M", "-N", "-d", "/", "-s", "/bin/sh",
                       name]).returncode != 0:
        return ["useradd failed"]
    pw = pwd.getpwnam(name)
    d = tempfile.mkdtemp(prefix="pt-sandbox-user-")
    libdir = None
    try:
        why = userns.refused(["setpriv", "--reuid=%d" % pw.pw_uid,
                              "--regid=%d" % pw.pw_gid, "--clear-groups",
                              "--"])
        if why:
            print("sandbox-hidden: SKIP as an ordinary user, --tmpfs "
                  "/usr/local: bwrap needs a user namespace: " + why)
            return []
        os.chmod(d, 0o777)
        # The build tree may be where the user cannot read (/root).
        pt = os.path.join(d, "proftrace")
        shutil.copy(a.proftrace, pt)
        os.chmod(pt, 0o755)
        libdir = tempfile.mkdtemp(prefix="proftrace-test-",
                                  dir="/usr/local/lib")
        os.chmod(libdir, 0o755)
        lib = os.path.join(libdir, "libproftrace.so")
        shutil.copyfile(a.lib, lib)
        os.chmod(lib, 0o644)
        out = os.path.join(d, "out.csv")
        env = dict(os.environ, PROFTRACE_LIB=lib, PROFTRACE_WATCH_MS="1",
                   HOME="/", TMPDIR="/tmp")
        for k in ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_LOG",
                  "PROFTRACE_DIR", "PROFTRACE_TRACE_DIR"):
            env.pop(k, None)
        r = subprocess.run(
            ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
             "--clear-groups", "--", pt, "record", "-q", "-o",
             os.path.join(d, "c.ptcap"), "--csv", out, "--", "bwrap",
             "--dev-bind", "/", "/", "--tmpfs", "/usr/local", "sh", "-c",
             'sleep 0.3; sh -c "sleep 0.3"'], env=env, cwd=d)
        if r.returncode != 0:
            return ["as %s: record exited %d" % (name, r.returncode)]
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        by = {}
        for row in rows:
            by.setdefault(row["command"], []).append(row)
        outer = by.get("sh -c 'sleep 0.3; sh -c \"sleep 0.3\"'", [])
        inner = by.get("sh -c 'sleep 0.3'", [])
        sleeps = by.get("sleep 0.3", [])
        problems = []
        if len(outer) != 1 or len(inner) != 1 or len(sleeps) != 2:
            problems.append("as an ordinary user: want the sandboxed shell, "
                            "the inner shell and two sleeps, got:\n" +
                            "\n".join("  %s pid %s ppid %s" %
                                       (x["command"], x["pid"], x["ppid"])
                                       for x in rows))
        else:
            o, i = outer[0]["pid"], inner[0]["pid"]
            if inner[0]["ppid"] != o or \
                    sorted(x["ppid"] for x in sleeps) != sorted([o, i]):
                problems.append("as an ordinary user: wrong parents: " +
                                repr([(x["command"], x["pid"], x["ppid"])
                                      for x in rows]))
        print("sandbox-hidden: as an ordinary user, --tmpfs /usr/local: %s"
              % ("ok" if not problems else "FAIL"))
        return problems
    finally:
        shutil.rmtree(d, ignore_errors=True)
        if libdir:
            shutil.rmtree(libdir, ignore_errors=True)
        for p in ("/tmp/proftrace-lib-%d" % pw.pw_uid,
                  "/tmp/proftrace-%d" % pw.pw_uid):
            shutil.rmtree(p, ignore_errors=True)
        subprocess.run(["userdel", name], stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--ptcheck", required=True)
    ap.add_argument("--lib", required=True)
    a = ap.parse_args()
    a.proftrace = os.path.abspath(a.proftrace)
    if os.geteuid() != 0 or not shutil.which("bwrap") or \
            not shutil.which("strace"):
        print("sandbox-hidden: needs root, bwrap and strace")
        sys.exit(77)
    ok = check(a, "/tmp", os.path.abspath(a.lib))
    os.makedirs("/usr/local/lib", exist_ok=True)
    d = tempfile.mkdtemp(prefix="proftrace-test-", dir="/usr/local/lib")
    try:
        os.chmod(d, 0o755)
        lib = os.path.join(d, "libproftrace.so")
        shutil.copyfile(a.lib, lib)
        os.chmod(lib, 0o644)
        ok = check(a, "/usr/local", lib) and ok
    finally:
        shutil.rmtree(d)
    problems = as_user(a)
    if not ok:
        problems.append("a process inside the sandbox was not recorded as "
                        "strace saw it")
    if problems:
        sys.exit("FAIL: " + "\nFAIL: ".join(problems))


if __name__ == "__main__":
    main()
