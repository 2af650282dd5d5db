#!/usr/bin/env python3
"""An execution still running when the capture ends (doc/format.md).

The command starts `sleep 30` in the background and, 0.3 s later, exits;
`record` then ends the capture with the sleep still running.  The sleep's
row must end where the capture ends (no earlier than the shell that
outlived its start), be flagged `unfinished` in the CSV, `end_unknown` in
the trace JSON and `[unfinished]` in the report's tree, and have no exit
status.  The row of the shell, which did end, must carry no flag.
"""

import argparse
import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile


def fail(msg):
    sys.exit("FAIL: " + msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_DIR")}
    with tempfile.TemporaryDirectory(prefix="pt-unfinished-") as d:
        cap = os.path.join(d, "c.ptcap")
        pidf = os.path.join(d, "pid")
        script = 'sleep 30 >/dev/null 2>&1 & echo $! > "$0"; sleep 0.3'
        r = subprocess.run([a.proftrace, "record", "-q", "-o", cap, "--",
                            "sh", "-c", script, pidf], env=env,
                           capture_output=True, text=True)
        try:
            os.kill(int(open(pidf).read()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
        if r.returncode != 0:
            fail("record: exit %d, %r" % (r.returncode, r.stderr))
        out = subprocess.run([a.proftrace, "convert", "-f", "csv", cap],
                             capture_output=True, text=True, check=True)
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        sl = [x for x in rows if x["command"] == "sleep 30"]
        sh = [x for x in rows if x["command"].startswith("sh -c")]
        if len(sl) != 1 or len(sh) != 1:
            fail("rows: %r" % [x["command"] for x in rows])
        sl, sh = sl[0], sh[0]
        end = lambda x: float(x["start"]) + float(x["duration"])
        if sl.get("unfinished") != "1" or sh.get("unfinished") != "":
            fail("unfinished flags: sleep %r, sh %r"
                 % (sl.get("unfinished"), sh.get("unfinished")))
        if sl["exit_code"] != "":
            fail("the running sleep has exit status %r" % sl["exit_code"])
        if end(sl) < end(sh):
            fail("the running sleep ends at %.6f, before the shell that "
                 "outlived it (%.6f)" % (end(sl), end(sh)))
        js = subprocess.run([a.proftrace, "convert", "-f", "json", cap],
                            capture_output=True, text=True, check=True)
        ev = [e for e in json.loads(js.stdout)["traceEvents"]
              if e.get("ph") == "X" and e.get("args", {}).get("pid") ==
              int(sl["pid"])]
        if not ev or not all(e["args"].get("end_unknown") for e in ev):
            fail("trace JSON: %r" % ev)
        rep = subprocess.run([a.proftrace, "report", cap],
                             capture_output=True, text=True, check=True)
        if not any("sleep 30" in ln and "[unfinished]" in ln
                   for ln in rep.stdout.splitlines()):
            fail("report does not mark the sleep unfinished:\n" + rep.stdout)
    print("unfinished: ok (sleep ran %.3f s in the capture)"
          % float(sl["duration"]))


if __name__ == "__main__":
    main()
