#!/usr/bin/env python3
"""Who can open the run log, and where (doc/design.md, "The transport").

    runlog-open.py --logprobe BIN

The transport's choice rests on what the kernel and bubblewrap (opam's
sandbox) allow an image: to open the collector's memfd through
/proc/PID/fd/N, or to use one it inherits.  Checked with the
collector's reader and the library's writer (test/integration/logprobe.c):

- a process of the same uid opens it, and its record is read whole;
- inside bwrap, as root (no user namespace), it opens too, also with a
  pid namespace of its own if the host's /proc is kept; there the pid it
  writes is its namespace's, so the library must compare pid namespaces
  before it writes;
- inside bwrap as an ordinary user, which puts the sandbox in a user
  namespace, it cannot (permission denied, though the uid is the same:
  /proc/PID/fd of a process outside the namespace is closed to it), nor
  with `--unshare-pid --proc /proc` (the collector's pid is not there);
- an inherited descriptor reaches every one of those sandboxes, with or
  without a pid namespace, and writes there;
- as root, a process that became another uid cannot open it.

Run as an ordinary user where the machine refuses a user namespace (a
chroot, Ubuntu's AppArmor: test/tools/userns.py), the bwrap cases are
skipped with the reason.
"""

import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import userns  # noqa: E402

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL: " + what, file=sys.stderr)


def serve(probe, wrap, inherit=False):
    """(status, records' pids, lost bytes, put's pid or error) of one
    `logprobe put` run under wrap, the log opened by path or inherited."""
    r = subprocess.run([probe, "inherit" if inherit else "serve"] + wrap +
                       [probe, "put"],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout.split("\n")
    recs = [int(x.split()[1]) for x in out if x.startswith("record ")]
    lost = [int(x.split()[1]) for x in out if x.startswith("lost ")]
    said = [x for x in out if x.startswith(("put ", "open: ", "write: "))]
    return r.returncode, recs, lost[0] if lost else None, \
        said[0] if said else r.stderr.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logprobe", required=True)
    ap.add_argument("--proftrace")     # the e2e tests' common argument
    a = ap.parse_args()
    probe = os.path.abspath(a.logprobe)

    def opened(r, what, small_pid=False):
        rc, recs, lost, said = r
        check(rc == 0 and said.startswith("put ") and
              recs == [int(said.split()[1])] and lost == 0 and
              (not small_pid or recs[0] < 10),
              "%s: opens and writes: %r" % (what, r))

    def refused(r, what, why=None):
        rc, recs, lost, said = r
        check(rc == 3 and said.startswith("open: ") and not recs and
              lost == 0 and (why is None or said == "open: " + why),
              "%s: cannot open: %r" % (what, r))

    opened(serve(probe, []), "same uid")
    in_userns = os.geteuid() != 0       # bwrap makes one for a user
    why = userns.refused() if in_userns else None
    if not shutil.which("bwrap"):
        check(False, "bwrap is not installed (tools/install-deps.sh)")
    elif why:
        print("SKIP bwrap as uid %d: %s" % (os.geteuid(), why),
              file=sys.stderr)
    else:
        bw = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev"]
        for name, opt, pidns in (
                ("bwrap --proc /proc", ["--proc", "/proc"], False),
                ("bwrap --unshare-pid (host /proc)", ["--unshare-pid"], True)):
            r = serve(probe, bw + opt)
            if in_userns:
                refused(r, name + " (user namespace)", "Permission denied")
            else:
                opened(r, name, small_pid=pidns)
        refused(serve(probe, bw + ["--proc", "/proc", "--unshare-pid"]),
                "bwrap --unshare-pid --proc /proc")
        for name, opt, pidns in (
                ("bwrap --proc /proc", ["--proc", "/proc"], False),
                ("bwrap --unshare-pid --proc /proc",
                 ["--proc", "/proc", "--unshare-pid"], True)):
            r = serve(probe, bw + opt, inherit=True)
            opened(r, name + ", inherited", small_pid=pidns)

    if os.geteuid() == 0 and shutil.which("setpriv"):
        refused(serve(probe, ["setpriv", "--reuid=65534", "--regid=65534",
                              "--clear-groups"]), "another uid",
                "Permission denied")
    else:
        print("SKIP another uid: needs root and setpriv", file=sys.stderr)

    if FAILS:
        print("%d failed" % len(FAILS), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
