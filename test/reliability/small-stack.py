#!/usr/bin/env python3
"""Programs started from small stacks work traced as they do untraced.

small-stack.c runs each case but the last on a stack with a PROT_NONE
guard page below it, so that a hook using more stack than is there faults,
as it would in a real program, instead of writing into whatever lies
below: clone(CLONE_VM|CLONE_VFORK) on 8 KiB of its own mapping whose child
execs sh; vfork + exec, fork + exec and system() from a thread with a 16
KiB stack; posix_spawn, and vfork + execve, from a 24 KiB thread with
1,500 more environment variables; fork + exec from a signal handler on an
8 KiB alternate stack at the top of a malloc'd block, whose rest must come
out unchanged (a probe of the pages below reads on into the heap, and an
overflow there does not fault).  Each thread case runs twice: on its
whole stack, and after taking all of it but 6 KiB (a deeper program),
where untraced the call still works and every hook used to fault before
it asked whether there was room.  Checked against the untraced run of the
same program: the same output (the parent prints how the child ended)
and the same exit status; and the exec'd shell in the capture with its
command line and exit status, said by the new image itself.
"""

import os

import ptrel

CASES = [("clone-vfork", 3), ("vfork-thread", 4), ("fork-thread", 5),
         ("system-thread", 6), ("env-spawn", 7), ("env-vfork", 8),
         ("altstack", 9)]
WHOLE = ("clone-vfork", "altstack")     # not threads: no second run
LEAVE = 6144


def main():
    a = ptrel.args(__doc__)
    prog = ptrel.helper(a, "small-stack")
    d = ptrel.tmpdir("stack")
    for mode, code in CASES:
        for leave in [[]] + ([] if mode in WHOLE else [[str(LEAVE)]]):
            what = " ".join([mode] + leave)
            plain = ptrel.run([prog, mode] + leave, env=ptrel.untraced_env(),
                              cwd=d)
            cap = os.path.join(d, "c.ptcap")
            traced = ptrel.run([a.proftrace, "record", "-q", "--force", "-o",
                                cap, "--", prog, mode] + leave,
                               env=ptrel.untraced_env(), cwd=d)
            want = "%s\n%s: exit %d\n" % (mode, mode, code)
            ptrel.check(plain.returncode == 0 and
                        plain.stdout.decode() == want,
                        "%s: untraced run: %r (exit %d)" % (
                            what, plain.stdout.decode(), plain.returncode))
            ptrel.check(traced.returncode == plain.returncode and
                        traced.stdout == plain.stdout,
                        "%s: traced output %r (exit %d), untraced %r" % (
                            what, traced.stdout.decode(), traced.returncode,
                            want))
            st, out, err = ptrel.convert(a, cap)
            cmd = "sh -c 'echo %s; exit %d'" % (mode, code)
            rows = [r for r in ptrel.csv_rows(out) if r["command"] == cmd]
            ptrel.check(st == 0 and len(rows) == 1 and
                        rows[0]["exit_code"] == str(code),
                        "%s: capture rows for %s: %s (%s)" % (
                            what, cmd, rows, err))
            ptrel.log("%s: %s, recorded" % (
                what, want.strip().replace("\n", ", ")))


if __name__ == "__main__":
    main()
