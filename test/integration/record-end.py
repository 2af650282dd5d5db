#!/usr/bin/env python3
"""When `record` ends the capture (doc/man/proftrace-record.1.scd): not while a
process it has been told about is still to be heard from.

The command, a shell, starts /bin/true in the background and exits at
once.  /bin/true also preloads a library whose constructor takes 30 ms
and runs before libproftrace.so's, so its HELLO arrives 30 ms after the
EXEC that announced it, when no traced process is connected any more.
Its execution must be in the capture whole: the command line, the shell
as its parent, exit status 0.  Repeated, since a too early end would
lose it only when the timing falls its way.
"""

import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--slowinit", required=True)
    a = ap.parse_args()
    env = untraced_env()
    with tempfile.TemporaryDirectory(prefix="pt-record-end-") as d:
        cap = os.path.join(d, "c.ptcap")
        for i in range(5):
            cmd = ("LD_PRELOAD=$LD_PRELOAD:%s /bin/true & exit 0"
                   % os.path.abspath(a.slowinit))
            r = subprocess.run([a.proftrace, "record", "-q", "--force", "-o",
                                cap, "--", "sh", "-c", cmd], env=env,
                               capture_output=True, text=True)
            if r.returncode != 0 or r.stderr:
                sys.exit("FAIL: record: exit %d, %r" % (r.returncode, r.stderr))
            out = subprocess.run([a.proftrace, "convert", "-f", "csv", "-o", "-",
                                  cap], capture_output=True, text=True,
                                 check=True).stdout
            rows = list(csv.DictReader(io.StringIO(out)))
            sh = [x for x in rows if x["command"].startswith("sh -c ")]
            late = [x for x in rows if x["command"] == "/bin/true"]
            if len(sh) != 1 or len(late) != 1:
                sys.exit("FAIL: round %d: executions %r"
                         % (i, [x["command"] for x in rows]))
            t = late[0]
            if t["ppid"] != sh[0]["pid"] or t["exit_code"] != "0":
                sys.exit("FAIL: round %d: the late /bin/true was cut short: "
                         "ppid %s (shell %s), exit code %r"
                         % (i, t["ppid"], sh[0]["pid"], t["exit_code"]))
        print("5 rounds: the late image is in every capture, exit status 0")


if __name__ == "__main__":
    main()
