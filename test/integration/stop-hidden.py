#!/usr/bin/env python3
"""The `proftrace stop` that ends a daemon's capture is not in it.

Runs, under `strace -f`, the documented daemon session

    eval "$(proftrace daemon -o X --csv X.csv --detach)"; sh -c true; proftrace stop

and compares the daemon's CSV with strace: every process exec'd after the
eval (the shell's children, which the exported LD_PRELOAD traces) must be
there with strace's pid, parent and argv, exactly once, but for the
`proftrace stop` itself, which must not be (doc/manual.md, `proftrace
stop`).  The daemon, started before the eval, is not traced.
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
from ptcheck import parse_strace, read_csv  # noqa: E402


def fail(msg):
    sys.exit("stop-hidden: FAIL: " + msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_DIR")}
    p = os.path.abspath(a.proftrace)
    with tempfile.TemporaryDirectory(prefix="pt-stop-hidden-") as d:
        cap, out, st = (os.path.join(d, n) for n in ("x.ptcap", "x.csv", "st"))
        script = ('eval "$("$0" daemon -o "$1" --csv "$2" --socket "$1.sock" '
                  '--detach)" || exit 97; sh -c true; "$0" stop >/dev/null')
        r = subprocess.run(["strace", "-f", "-q", "-v", "-xx", "-s", "65536",
                            "-e", "trace=process", "-o", st, "--",
                            "sh", "-c", script, p, cap, out], env=env)
        if r.returncode != 0:
            fail(f"the session exited {r.returncode}")
        procs, order = parse_strace(st)
        root = order[0]
        # What the traced shell ran after the eval: its children that exec'd
        # something other than the daemon (the command substitution's).
        want = {}
        for pid in order:
            pr = procs[pid]
            if pr.parent == root and pr.execs and pr.execs[0][1:2] != ["daemon"]:
                want[pid] = pr
        stops = [pid for pid, pr in want.items() if pr.execs[-1][1:2] == ["stop"]]
        if len(stops) != 1 or len(want) != 2:
            fail(f"strace saw {[(pid, pr.execs) for pid, pr in want.items()]}")
        rows = read_csv(out)
        got = {}
        for row in rows:
            got.setdefault(row["pid"], []).append(row)
        for row in rows:
            if row["argv"][1:2] == ["stop"] or row["pid"] == stops[0]:
                fail(f"the CSV has the stop command: {row['argv']}")
        for pid, pr in want.items():
            if pid == stops[0]:
                continue
            recs = got.get(pid, [])
            if [r["argv"] for r in recs] != pr.execs:
                fail(f"pid {pid}: strace {pr.execs}, CSV "
                     f"{[r['argv'] for r in recs]}")
            if recs[0]["ppid"] != root:
                fail(f"pid {pid}: parent {root}, CSV {recs[0]['ppid']}")
        extra = [(r["pid"], r["argv"]) for r in rows if r["pid"] not in want]
        if extra:
            fail(f"the CSV has what strace did not show after the eval: {extra}")
        print(f"stop-hidden: ok: {len(rows)} executions, the stop left out")


if __name__ == "__main__":
    main()
