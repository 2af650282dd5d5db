#!/usr/bin/env python3
"""Run-queue wait per execution under record --files (doc/format.md,
FILES_WAIT): a shell loop that counts, pinned with taskset to one CPU
together with three busy loops, must wait for that CPU.  At its end it
has cat print its own /proc/PID/schedstat (the kernel's run_delay, ns,
ground truth); the executions of that pid (taskset, then the sh it
became) must together have waited at least that long in convert -f
json's `wait_ns` (to the millisecond it is recorded in), which is
absent from a capture made without --files.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
args = ap.parse_args()
PT = os.path.abspath(args.proftrace)

if not shutil.which("taskset"):
    print("SKIP: no taskset")
    sys.exit(77)
if not os.path.exists("/proc/self/schedstat"):
    print("SKIP: the kernel keeps no /proc/PID/schedstat")
    sys.exit(77)
cpu = min(os.sched_getaffinity(0))

SCRIPT = f"""
for n in 1 2 3; do
  taskset -c {cpu} sh -c 'while :; do :; done' &
  echo $! >> hogs
done
taskset -c {cpu} sh -c '
  echo $$ > pid
  i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done
  cat /proc/$$/schedstat > truth'
kill $(cat hogs)
"""


def stop_hogs(top):
    """The busy loops, should the script not have ended them."""
    try:
        pids = [int(x) for x in open(os.path.join(top, "hogs")).read().split()]
    except OSError:
        return
    for p in pids:
        try:
            os.kill(p, 9)
        except OSError:
            pass


def waits(cap, pid):
    out = subprocess.run([PT, "convert", "-f", "json", cap], check=True,
                         stdout=subprocess.PIPE).stdout
    evs = [e for e in json.loads(out)["traceEvents"]
           if e.get("ph") == "X" and e.get("args", {}).get("pid") == pid]
    return [(e["args"]["exe"], e["args"].get("wait_ns")) for e in evs]


top = tempfile.mkdtemp(prefix="pt-files-wait-")
bad = False
try:
    for files in (True, False):
        cap = os.path.join(top, "c.ptcap")
        for f in ("hogs", "pid", "truth"):
            if os.path.exists(os.path.join(top, f)):
                os.unlink(os.path.join(top, f))
        subprocess.run([PT, "record", "-q", "--force", "-o", cap] +
                       (["--files"] if files else []) +
                       ["--", "sh", "-c", SCRIPT], cwd=top, check=True,
                       stdout=subprocess.DEVNULL, timeout=90)
        pid = int(open(os.path.join(top, "pid")).read())
        truth = int(open(os.path.join(top, "truth")).read().split()[1])
        got = waits(cap, pid)
        print(f"--files={files}: pid {pid} waited {truth} ns by its "
              f"schedstat; recorded: {got}")
        if not files:
            if any(w is not None for _, w in got):
                print("FAIL: a wait without --files")
                bad = True
            continue
        # taskset, if it accessed nothing before its exec, sends no
        # wait: sh's then counts from the fork
        total = sum(w for _, w in got if w is not None)
        if truth <= 0 or len(got) != 2 or got[-1][1] is None \
                or total + 1000000 < truth:   # sent in whole ms
            print(f"FAIL: recorded {total} ns, schedstat said {truth}")
            bad = True
finally:
    stop_hogs(top)
    shutil.rmtree(top, ignore_errors=True)
if bad:
    sys.exit(1)
print("the run-queue wait of a process that waited is recorded")
