#!/usr/bin/env python3
"""A closed output: record's status stays the command's.

Guarantee (doc/reliability.md, I2): when record's standard error (or
standard output, for `--csv -`) is a pipe nobody reads any more, as in
`proftrace record -- CMD 2>&1 | true`, record exits with the command's
status, leaves no run directory behind, and the command itself sees the
SIGPIPE disposition it would see untraced (record ignores SIGPIPE only
for itself).
"""

import os

import ptrel
from ptrel import check, log

# Tells where record's run directory is, waits for the reader of the
# pipe to be gone, says which signals it ignores, exits 3.
SCRIPT = ('echo "%s" > "$1/sock"; ' % ptrel.kernel_env_sh("PROFTRACE_SOCKET") +
          'grep SigIgn /proc/self/status > "$1/sigign"; sleep .2; exit 3')


def closed_pipe():
    r, w = os.pipe()
    os.close(r)
    return w


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("broken")
    cmd = ["sh", "-c", SCRIPT, "sh", d]
    r = ptrel.run(cmd, env=ptrel.untraced_env())
    check(r.returncode == 3, "untraced: status %d" % r.returncode)
    with open(d + "/sigign") as f:
        plain_ign = f.read()
    cases = [("stderr closed", [], ("stderr",)),
             ("stdout and stderr closed, --csv -", ["--csv", "-"],
              ("stdout", "stderr")),
             ("stderr closed, --quiet", ["-q"], ("stderr",))]
    for name, opts, closed in cases:
        w = closed_pipe()
        kw = {k: w for k in closed}
        r = ptrel.run([a.proftrace, "record", "--force", "-o",
                       d + "/b.ptcap"] + opts + ["--"] + cmd,
                      env=ptrel.untraced_env(), **kw)
        os.close(w)
        check(r.returncode == 3, "%s: record exited with %d, not the "
              "command's 3" % (name, r.returncode))
        with open(d + "/sock") as f:
            rundir = os.path.dirname(f.read().strip())
        check(rundir and not os.path.exists(rundir),
              "%s: record left %s behind" % (name, rundir))
        with open(d + "/sigign") as f:
            ign = f.read()
        check(ign == plain_ign, "%s: the command ignores other signals "
              "traced: %s, untraced %s" % (name, ign, plain_ign))
        log("%s: status 3, nothing left, same SIGPIPE" % name)


if __name__ == "__main__":
    main()
