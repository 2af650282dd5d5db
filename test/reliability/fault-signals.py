#!/usr/bin/env python3
"""Fault: `proftrace record` is sent SIGINT, SIGTERM or SIGHUP, or a
signal the command handles itself (SIGUSR1, SIGUSR2, SIGALRM).

Guarantee (doc/reliability.md, F4): record passes the signal on to the
command, still finishes the capture (it converts with status 0, and holds
the command, ended without an exit status, and what it ran before), and
exits 128+N like a shell; a command that traps the signal and exits
gives record the same status and output as the untraced command sent the
same signal.
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
    handled(a, d)
    log("PASS")


HANDLER = ("trap 'echo caught; kill $!; exit 3' %s; /bin/true before; "
           "sleep 60 & wait")


def handled(a, d):
    """A signal the command traps: the same status and output traced."""
    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):
        script = HANDLER % sig.name[3:]
        seen = {}
        for how in ("untraced", "traced"):
            cap = "%s/%s.ptcap" % (d, sig.name)
            cmd = ["sh", "-c", script]
            if how == "traced":
                cmd = [a.proftrace, "record", "-q", "-o", cap, "--"] + cmd
            p = subprocess.Popen(cmd, env=ptrel.untraced_env(),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE,
                                 preexec_fn=default_signals)
            sh = p.pid
            if how == "traced":
                ptrel.wait_for(lambda: child_named(p.pid, "sh"), 60,
                               "the recorded command to start")
                sh = child_named(p.pid, "sh")
            ptrel.wait_for(lambda: child_named(sh, "sleep"), 60,
                           "the command's sleep to start")
            p.send_signal(sig)
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                ptrel.fail("%s %s did not end" % (how, sig.name))
            seen[how] = (p.returncode, out, err)
            if how == "traced":
                rc, text, cerr = ptrel.convert(a, cap)
                check(rc == 0, "the capture after %s does not convert "
                      "(%d): %s" % (sig.name, rc, cerr))
                rows = ptrel.csv_rows(text)
                check(any(r["pid"] == str(sh) and r["exit_code"] == "3"
                          for r in rows),
                      "the capture does not show the command exiting 3 "
                      "after %s: %s" % (sig.name, rows))
        check(seen["untraced"] == (3, b"caught\n", b"") and
              seen["traced"] == seen["untraced"],
              "a command that traps %s: untraced %r, traced %r"
              % (sig.name, seen["untraced"], seen["traced"]))
        log("%s: the command's trap ran, status 3, traced as untraced"
            % sig.name)


if __name__ == "__main__":
    main()
