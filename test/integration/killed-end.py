#!/usr/bin/env python3
"""A killed image that nobody traced waits for still has its end.

The command starts `sleep 30` in the background of a subshell that exits
at once, so that nobody traced is its parent, and kills it with SIGKILL
0.3 s later: no EXIT from the sleep, no REAP of it.  Its end must come from the collector's pidfd of
its process (doc/design.md, "Where an image's end comes from"): the row
ends about when it was killed, not where the capture ends, and is not
flagged unfinished.  Run with the run log and, as e2e-socket-killed-end,
with every image on the socket, whose connections, each for one call of
the library's, are streams of their image as the run log's records are.
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


def fail(msg):
    sys.exit("FAIL: " + msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    a = ap.parse_args()
    env = untraced_env()
    with tempfile.TemporaryDirectory(prefix="pt-killed-") as d:
        cap = os.path.join(d, "c.ptcap")
        # The shell sleeps on after the kill, so that the capture's end
        # is well after it.
        script = ('(sleep 30 >/dev/null 2>&1 & echo $! >"$0"); sleep 0.3; '
                  'kill -9 "$(cat "$0")"; sleep 1.5; exit 0')
        r = subprocess.run([a.proftrace, "record", "-q", "-o", cap, "--",
                            "sh", "-c", script, os.path.join(d, "pid")],
                           env=env,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail("record: exit %d, %r" % (r.returncode, r.stderr))
        out = subprocess.run([a.proftrace, "convert", "-f", "csv", cap],
                             capture_output=True, text=True, check=True)
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        sl = [x for x in rows if x["command"] == "sleep 30"]
        if len(sl) != 1:
            fail("rows: %r" % [x["command"] for x in rows])
        sl = sl[0]
        if sl["unfinished"] != "" or sl["exit_code"] != "":
            fail("sleep 30: unfinished %r, exit code %r; killed, it has "
                 "an end and no exit status" % (sl["unfinished"],
                                               sl["exit_code"]))
        dur = float(sl["duration"])
        if not 0.2 <= dur <= 1.2:
            fail("sleep 30 lasted %.3f s; it was killed after 0.3 s, "
                 "and the shell ran 1.5 s more" % dur)
    print("killed-end: the killed sleep ends at its death (%.3f s)" % dur)


if __name__ == "__main__":
    main()
