#!/usr/bin/env python3
"""Bad input: a traced process that writes into the run log.

Guarantee (doc/reliability.md, B5): a process of the run can write
anything into the run log it has open; it loses records of the run, but
cannot make the collector fail, hang or keep `record` waiting.  Under
`record`, a program opens $PROFTRACE_LOG itself and appends, among
whole records of a made-up image (HELLO and EXIT, exit status 7):
garbage; a record cut short (its header promises more than follows,
then the next record starts); a record whose frame overruns it; and
frames of a stream that never said HELLO.  `record` must end with the
program's status, within the test's timeout, say how many damaged bytes
it stepped over, and its capture must convert, holding the made-up
image (exit 7), the frames after the damage (a second made-up image)
and the program itself.

    bad-runlog.py --proftrace BIN --lib LIB [--wrapper 'valgrind ...']
"""

import os
import shlex
import sys

import ptrel
from ptrel import check, log, hello, exit_frame, log_record, HELLO_IMAGE

# Run by `record`, in the traced program: append to the run log.
WRITER = r'''
import os, sys
name = %s
path = name.split(":", 3)[3]
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
for part in sys.stdin.buffer.read().split(b"\0SPLIT\0"):
    os.write(fd, part)
os.close(fd)
''' % ptrel.kernel_env_py("PROFTRACE_LOG")


def extra(p):
    p.add_argument("--wrapper", default="")


def main():
    a = ptrel.args(__doc__, extra)
    d = ptrel.tmpdir("runlog")
    good, late, orphan = 3999990, 3999991, 3999992
    parts = [
        log_record(good, 0, hello(good, argv=("made-up-good",),
                                  kind=HELLO_IMAGE)),
        bytes(range(256)) * 3,                                  # garbage
        log_record(good, 0, exit_frame(good, status=7))[:30],   # cut short
        log_record(orphan, 0, exit_frame(orphan)),              # no HELLO
        log_record(good, 0, hello(good)[:40], length=400)[:64],  # overruns
        log_record(late, 0, hello(late, argv=("made-up-late",))),
        log_record(late, 0, exit_frame(late, status=0)),
        log_record(good, 0, exit_frame(good, status=7)),
    ]
    cap = os.path.join(d, "r.ptcap")
    wrapper = shlex.split(a.wrapper)
    r = ptrel.run(wrapper + [a.proftrace, "record", "--force", "-o", cap, "--",
                             sys.executable, "-c", WRITER],
                  input=b"\0SPLIT\0".join(parts), timeout=120,
                  env=ptrel.untraced_env({"PROFTRACE_LIB": a.lib}))
    err = r.stderr.decode(errors="replace")
    check(r.returncode == 0, "record exited %d: %s" % (r.returncode, err))
    check("run log:" in err and "stepped over" in err,
          "record did not say what it stepped over: %s" % err)
    log("record ended, exit 0; it said: %s" % next(
        line for line in err.splitlines() if "stepped over" in line))
    rc, out, cerr = ptrel.convert(a, [cap])
    check(rc == 0, "convert: exit %d: %s" % (rc, cerr))
    rows = {x["command"]: x for x in ptrel.csv_rows(out)}
    check(rows.get("made-up-good", {}).get("exit_code") == "7",
          "the made-up image: %s" % rows.get("made-up-good"))
    check("made-up-late" in rows, "the image after the damage: %s"
          % sorted(rows))
    check(any(c.startswith(os.path.basename(sys.executable)) or
              "python" in c for c in rows),
          "the writing program itself: %s" % sorted(rows))
    log("the capture converts: %d rows, the made-up images among them"
        % len(rows))
    log("PASS")


if __name__ == "__main__":
    main()
