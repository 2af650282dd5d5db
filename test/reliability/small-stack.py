#!/usr/bin/env python3
"""Execs from small stacks work traced as they do untraced.

small-stack.c runs the three cases: vfork + exec from a thread with a
16 KiB stack, clone(CLONE_VM|CLONE_VFORK) on an 8 KiB stack, and fork +
exec from a 24 KiB thread with 1,500 more environment variables.  The
hooks used to need more stack than these have and the child died of
SIGSEGV; now they pass the call through untouched when it would not fit.
Checked: output and exit status as untraced (the parent prints how the
child ended), and the exec'd shell recorded with its command line and
exit status.
"""

import os

import ptrel

CASES = [("vfork-thread", 3), ("clone-vfork", 4), ("env-thread", 5)]


def main():
    a = ptrel.args(__doc__)
    prog = ptrel.helper(a, "small-stack")
    d = ptrel.tmpdir("stack")
    for mode, code in CASES:
        plain = ptrel.run([prog, mode], env=ptrel.untraced_env(), cwd=d)
        cap = os.path.join(d, "c.ptcap")
        traced = ptrel.run([a.proftrace, "record", "-q", "--force", "-o", cap,
                            "--", prog, mode], env=ptrel.untraced_env(), cwd=d)
        want = "%s\n%s: exit %d\n" % (mode, mode, code)
        ptrel.check(plain.returncode == 0 and plain.stdout.decode() == want,
                    "%s: untraced run: %r" % (mode, plain.stdout.decode()))
        ptrel.check(traced.returncode == 0 and traced.stdout == plain.stdout,
                    "%s: traced output %r (exit %d), untraced %r" % (
                        mode, traced.stdout.decode(), traced.returncode, want))
        st, out, err = ptrel.convert(a, cap)
        cmd = "sh -c 'echo %s; exit %d'" % (mode, code)
        rows = [r for r in ptrel.csv_rows(out) if r["command"] == cmd]
        ptrel.check(st == 0 and len(rows) == 1 and
                    rows[0]["exit_code"] == str(code),
                    "%s: capture rows for %s: %s (%s)" % (mode, cmd, rows, err))
        ptrel.log("%s: %s, recorded" % (mode, want.strip().replace("\n", ", ")))


if __name__ == "__main__":
    main()
