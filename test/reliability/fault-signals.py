#!/usr/bin/env python3
"""Fault: `proftrace record` is sent SIGINT, SIGTERM or SIGHUP.

Guarantee (doc/reliability.md, F4): record passes the signal on to the
command, still finishes the capture (it converts with status 0, and holds
the command, ended without an exit status, and what it ran before), and
exits 128+N like a shell.
"""

import os
import signal
import subprocess
import time

import ptrel
from ptrel import check, log


def child_named(ppid, name):
    """Pid of a process whose parent is ppid and whose comm is name."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        if comm == name and int(fields[1]) == ppid:
            return int(p)
    return None


def default_signals():
    """Undo an ignored SIGHUP or SIGINT inherited from the test's caller
    (nohup, a background job of a script), which record keeps ignoring,
    as a shell would."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("sig")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        cap = "%s/%s.ptcap" % (d, sig.name)
        rec = subprocess.Popen(
            [a.proftrace, "record", "-q", "-o", cap, "--", "sh", "-c",
             "/bin/true before; exec sleep 60"],
            env=ptrel.untraced_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, preexec_fn=default_signals)
        ptrel.wait_for(lambda: child_named(rec.pid, "sleep"), 60,
                       "the recorded command to start")
        time.sleep(0.2)
        t = time.monotonic()
        rec.send_signal(sig)
        try:
            _out, err = rec.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            rec.kill()
            ptrel.fail("record did not end after %s" % sig.name)
        took = time.monotonic() - t
        check(rec.returncode == 128 + sig,
              "after %s record exited %d, not %d: %s"
              % (sig.name, rec.returncode, 128 + sig, err.decode()))
        rc, text, err = ptrel.convert(a, cap)
        check(rc == 0, "the capture after %s does not convert cleanly (%d): "
              "%s" % (sig.name, rc, err))
        rows = ptrel.csv_rows(text)
        # The command ended without EXIT.  Its signal is not in the
        # capture: its parent, record itself, is not traced (and does not
        # write the status it reaps), so the CSV leaves the signal empty.
        sleep = [r for r in rows if r["command"] == "sleep 60"]
        check(len(sleep) == 1 and sleep[0]["exit_code"] == "",
              "the capture does not show `sleep 60` cut short by %s: %s"
              % (sig.name, sleep))
        check(any(r["command"] == "/bin/true before" and r["exit_code"] == "0"
                  for r in rows), "the capture lost `/bin/true before`")
        log("%s: record exited %d after %.2f s; capture complete (%d "
            "executions)" % (sig.name, rec.returncode, took, len(rows)))
    log("PASS")


if __name__ == "__main__":
    main()
