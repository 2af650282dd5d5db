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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402


def fail(msg):
    sys.exit("stop-hidden: FAIL: " + msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    a = ap.parse_args()
    env = untraced_env()
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
        if os.environ.get("PROFTRACE_TRANSPORT") != "socket":
            run_log(p, d, env)
            offered_log(p, d, env)


def run_log(p, d, env):
    """The exports name the daemon's run log, and what they trace writes
    there: not one connect(2) (doc/design.md, "The transport")."""
    cap, out, st = (os.path.join(d, n) for n in ("l.ptcap", "l.csv", "lst"))
    script = ('eval "$("$0" daemon -o "$1" --csv "$2" --socket "$1.sock" '
              '--detach)" || exit 97; echo "$PROFTRACE_LOG"; '
              'strace -f -e trace=connect -o "$3" sh -c "sh -c true; true"; '
              '"$0" stop >/dev/null')
    r = subprocess.run(["sh", "-c", script, p, cap, out, st], env=env,
                       capture_output=True, text=True)
    name = r.stdout.strip()
    if r.returncode != 0 or not name.count(":") == 3 or "/fd/" not in name:
        fail(f"run log: exit {r.returncode}, PROFTRACE_LOG {name!r}, "
             f"{r.stderr!r}")
    with open(st) as f:
        calls = [line for line in f if "connect(" in line]
    if calls:
        fail(f"run log: the traced commands connected: {calls}")
    argvs = [row["argv"] for row in read_csv(out)]
    if argvs.count(["sh", "-c", "true"]) != 1 or \
            argvs.count(["sh", "-c", "sh -c true; true"]) != 1:
        fail(f"run log: the CSV has {argvs}")
    print("stop-hidden: ok: the exports' run log, no connection")


def offered_log(p, d, env):
    """The exports without PROFTRACE_LOG, as `LD_PRELOAD=... cmd` started
    by hand against the daemon: the first images connect, the daemon
    answers their HELLO with the run log's name, and their later children
    append to the run log instead (doc/design.md, "Processes started
    against `proftrace daemon`")."""
    cap, out, st = (os.path.join(d, n) for n in ("o.ptcap", "o.csv", "ost"))
    script = ('eval "$("$0" daemon -o "$1" --csv "$2" --socket "$1.sock" '
              '--detach)" || exit 97; unset PROFTRACE_LOG; '
              'strace -f -e trace=connect,openat,execve -o "$3" '
              'sh -c "/bin/true; sleep 0.3; /bin/true; /bin/true"; '
              '"$0" stop >/dev/null')
    r = subprocess.run(["sh", "-c", script, p, cap, out, st], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"offered log: exit {r.returncode}, {r.stderr!r}")
    execs, connects, opens = {}, set(), set()
    with open(st) as f:
        for line in f:
            pid, _, call = line.partition(" ")
            call = call.lstrip()
            if call.startswith("execve(") and " = 0" in line:
                execs.setdefault(pid, []).append(call.split('"')[1])
            elif call.startswith("connect("):
                connects.add(pid)
            elif call.startswith("openat(") and "/fd/" in call and \
                    "/proc/" in call and "O_APPEND" in call:
                opens.add(pid)
    trues = [pid for pid, e in execs.items() if os.path.basename(e[-1]) == "true"]
    if len(trues) != 3:
        fail(f"offered log: strace saw {execs}")
    last = max(trues, key=int)
    if last in connects or last not in opens:
        fail(f"offered log: the last child connected ({sorted(connects)}) "
             f"rather than open the run log ({sorted(opens)})")
    if len(connects) >= len(execs):
        fail(f"offered log: every image connected: {sorted(connects)}")
    argvs = [row["argv"] for row in read_csv(out)]
    if argvs.count(["/bin/true"]) != 3 or argvs.count(["sleep", "0.3"]) != 1 or \
            argvs.count(["sh", "-c", "/bin/true; sleep 0.3; /bin/true; /bin/true"]) != 1:
        fail(f"offered log: the CSV has {argvs}")
    print(f"stop-hidden: ok: without PROFTRACE_LOG, {len(connects)} of "
          f"{len(execs)} images connected, the rest took the run log")


if __name__ == "__main__":
    main()
