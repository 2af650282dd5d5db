#!/usr/bin/env python3
"""The collector under valgrind (doc/reliability.md, M2): no invalid
access, no use of uninitialised memory, no leak (definite or indirect)
in `proftrace record` (collecting, then the summary and CSV), `proftrace
convert` to every format (and to csv and json of enough executions to
take two threads), `proftrace report` and `proftrace diff`, and
`proftrace daemon` fed every kind of malformed frame (bad-frames.py with
--wrapper).

    valgrind.py VALGRIND   (PROFTRACE, PROFTRACE_LIB in the environment)
"""

import os
import subprocess
import sys

import ptrel
from ptrel import check, log


def without_pidfd_open_warning(text):
    """text without valgrind's warning that it does not know pidfd_open
    (434; Debian 12's valgrind 3.19 fails it with ENOSYS).  `record`
    watches its root command until the root says HELLO, through a pidfd
    where it can have one and /proc where not (collect/watch.h): on a
    loaded machine the root's children come first and get one.  Every
    other line stays."""
    lines, out, skip = text.split("\n"), [], 0
    for line in lines:
        if "WARNING: unhandled amd64-linux syscall: 434" in line:
            skip = 4                # the four lines of advice after it
        elif skip:
            skip -= 1
        else:
            out.append(line)
    return "\n".join(out)


def main():
    vg = sys.argv.pop(1)
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("vg")
    wrap = [vg, "--quiet", "--error-exitcode=99", "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect",
            "--log-file=%s/valgrind.%%p.log" % d]
    cap = d + "/vg.ptcap"
    r = ptrel.run(wrap + [a.proftrace, "record", "-o", cap, "--csv",
                          d + "/out.csv", "--redact", "x[0-9]", "--", "sh",
                          "-c", "for i in 1 2 3; do /bin/echo x$i; done | "
                          "cat >/dev/null; (ls / >/dev/null)"],
                  env=ptrel.untraced_env(), timeout=600)
    check(r.returncode == 0, "record under valgrind exited %d:\n%s"
          % (r.returncode, r.stderr.decode()))
    log("record: clean")
    for fmt in ("csv", "json", "folded", "folded-cpu"):
        r = ptrel.run(wrap + [a.proftrace, "convert", "-f", fmt, "--redact",
                              "x", "--force", "-o", d + "/out", cap],
                      env=ptrel.untraced_env(), timeout=600)
        check(r.returncode == 0, "convert -f %s under valgrind exited %d:\n%s"
              % (fmt, r.returncode, r.stderr.decode()))
    log("convert (csv, json, folded, folded-cpu): clean")
    # Over 1024 executions, so that csv and json are formatted on two
    # threads (collector/views/par.c); the capture is recorded without valgrind.
    big = d + "/big.ptcap"
    r = ptrel.run([a.proftrace, "record", "-q", "-o", big, "--", "sh", "-c",
                   "i=0; while [ $i -lt 2100 ]; do /bin/true x$i; "
                   "i=$((i+1)); done"], env=ptrel.untraced_env(), timeout=600)
    check(r.returncode == 0, "record of 2100 processes exited %d:\n%s"
          % (r.returncode, r.stderr.decode()))
    for fmt in ("csv", "json"):
        r = ptrel.run(wrap + [a.proftrace, "convert", "-f", fmt, "-o",
                              d + "/big." + fmt, big],
                      env=ptrel.untraced_env(), timeout=600)
        check(r.returncode == 0, "convert -f %s of 2101 executions under "
              "valgrind exited %d:\n%s" % (fmt, r.returncode,
                                            r.stderr.decode()))
    log("convert (csv, json) of 2101 executions, two threads: clean")
    for cmd in (["report", "--redact", "x", cap],
                ["diff", "--redact", "x", cap, cap]):
        r = ptrel.run(wrap + [a.proftrace] + cmd, env=ptrel.untraced_env(),
                      timeout=600)
        check(r.returncode == 0, "%s under valgrind exited %d:\n%s"
              % (cmd[0], r.returncode, r.stderr.decode()))
    log("report, diff: clean")
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "bad-frames.py"), "--wrapper",
        " ".join(wrap)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        timeout=900)
    check(r.returncode == 0, "bad-frames with the daemon under valgrind:\n"
          + r.stdout.decode())
    log("daemon fed malformed frames: clean")
    logs = [f for f in os.listdir(d) if f.startswith("valgrind.")]
    for f in logs:
        text = without_pidfd_open_warning(open(os.path.join(d, f)).read())
        check(not text.strip(), "valgrind reported:\n" + text)
    log("PASS (%d valgrind logs, all empty)" % len(logs))


if __name__ == "__main__":
    main()
