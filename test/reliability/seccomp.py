#!/usr/bin/env python3
"""A process under seccomp is never made to make a system call of ours.

A fork child confines itself (a BPF filter allowing read, write, exit and
exit_group, installed by prctl and by syscall(SYS_seccomp); strict mode by
both) and then writes a line and exits; any other system call kills it.
Run untraced and under `proftrace record`: the same output and the same
end of the child (its exit status, printed by the parent); and under
`strace -f`, the child's system calls from the one that installed the
filter to its end are the same traced as untraced.
"""

import os
import re
import shutil

import ptrel

MODES = ["prctl", "syscall", "strict", "strict-syscall"]
LINE = re.compile(r"^(\d+) +(\w+)\((.*)")


def after_filter(path):
    """The system calls each pid made from its seccomp call on."""
    seen = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            pid, name, rest = m.groups()
            if pid in seen:
                seen[pid].append(name)
            elif name == "seccomp" or (name == "prctl" and
                                       rest.startswith("PR_SET_SECCOMP")):
                seen[pid] = [name]
    return list(seen.values())


def main():
    a = ptrel.args(__doc__)
    prog = ptrel.helper(a, "seccomp-child")
    d = ptrel.tmpdir("seccomp")
    strace = shutil.which("strace")
    for mode in MODES:
        plain = ptrel.run([prog, mode], env=ptrel.untraced_env(), cwd=d)
        cap = os.path.join(d, "c.ptcap")
        traced = ptrel.run([a.proftrace, "record", "-q", "--force", "-o", cap,
                            "--", prog, mode], env=ptrel.untraced_env(), cwd=d)
        want = plain.stdout.decode()
        ptrel.check(plain.returncode == 0 and "confined" in want and
                    "exit" in want, "%s: untraced run: %r" % (mode, want))
        ptrel.check(traced.returncode == 0 and traced.stdout == plain.stdout,
                    "%s: traced output %r (exit %d), untraced %r"
                    % (mode, traced.stdout.decode(), traced.returncode, want))
        if strace:
            calls = []
            for tr in (False, True):
                out = os.path.join(d, "strace-%d" % tr)
                cmd = [strace, "-f", "-qq", "-o", out, prog, mode]
                if tr:
                    cmd = [a.proftrace, "record", "-q", "--force", "-o", cap,
                           "--"] + cmd
                r = ptrel.run(cmd, env=ptrel.untraced_env(), cwd=d)
                ptrel.check(r.returncode == 0, "%s: under strace: exit %d"
                            % (mode, r.returncode))
                calls.append(after_filter(out))
            ptrel.check(len(calls[0]) == 1 and calls[0] == calls[1],
                        "%s: system calls after the filter: untraced %s, "
                        "traced %s" % (mode, calls[0], calls[1]))
            ptrel.log("%s: %s; after the filter: %s" % (
                mode, want.strip().replace("\n", ", "), " ".join(calls[1][0])))
        else:
            ptrel.log("%s: %s (no strace here)" % (mode, want.strip()))


if __name__ == "__main__":
    main()
