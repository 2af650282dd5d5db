#!/usr/bin/env python3
"""A process under seccomp is never made to make a system call of ours.

A fork child confines itself (a BPF filter allowing read, write, exit and
exit_group, installed by prctl and by syscall(SYS_seccomp); strict mode by
both) and then writes a line and exits; any other system call kills it.
Run untraced and under `proftrace record`: the same output and the same
end of the child (its exit status, printed by the parent); and under
`strace -f`, the child's system calls from the one that installed the
filter to its end are the same traced as untraced.

Then a program run under an inherited filter: a fork child installs one
that allows everything but socket and connect (which kill the process)
and then execs, posix_spawns or system()s a shell that prints its
environment and exits 3.  Traced, its copy of the library would connect
at start and be killed; the library in the confined process must leave
itself out of the environment it passes on, so that the shell's output
(its environment), its exit status and the confined process's end are
the untraced run's, byte for byte; also with a library of the user's own
in LD_PRELOAD, which stays.
"""

import os
import re
import shutil

import ptrel

MODES = ["prctl", "syscall", "strict", "strict-syscall"]
INHERITED = ["exec", "exec-env", "spawn", "system"]
SCRIPT = "env; exit 3"
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


def env_diff(traced, plain):
    """The lines of the environment only one of the runs printed."""
    t, p = traced.decode().splitlines(), plain.decode().splitlines()
    return ("traced only: %s; untraced only: %s"
            % ([x for x in t if x not in p], [x for x in p if x not in t]))


def up_to_start(lists):
    """Each pid's calls up to the one that starts the next program."""
    starts = ("execve", "clone", "clone3", "vfork", "fork")
    cut = []
    for calls in lists:
        n = next((i for i, c in enumerate(calls) if c in starts), len(calls))
        cut.append(calls[:n + 1])
    return cut


def inherited(a, prog, d, strace):
    """Programs started under a filter the starting process installed."""
    libc = [w for w in ptrel.run(["ldd", "/bin/sh"]).stdout.decode().split()
            if "/libc.so" in w][0]
    libm = os.path.join(os.path.dirname(libc), "libm.so.6")
    cap = os.path.join(d, "c.ptcap")
    for mode, own in [(m, None) for m in INHERITED] + [("exec", libm),
                                                      ("spawn", libm)]:
        cmd = [prog, mode, "/bin/sh", "-c", SCRIPT]
        env = ptrel.untraced_env({"LD_PRELOAD": own} if own else None)
        what = mode + (" with LD_PRELOAD=" + own if own else "")
        plain = ptrel.run(cmd, env=env, cwd=d)
        traced = ptrel.run([a.proftrace, "record", "-q", "--force", "-o", cap,
                            "--"] + cmd, env=env, cwd=d)
        end = "%s: exit 3\n" % mode
        ptrel.check(plain.returncode == 0 and
                    plain.stdout.decode().endswith(end) and
                    (mode != "exec-env" or b"A=1\n" in plain.stdout),
                    "%s: untraced run: %r" % (what, plain.stdout))
        ptrel.check(traced.returncode == 0 and
                    traced.stdout.decode().endswith(end),
                    "%s: traced, the confined process ends %r (exit %d), "
                    "untraced %r" % (what, traced.stdout.decode()[-40:],
                                     traced.returncode, end))
        ptrel.check(traced.stdout == plain.stdout,
                    "%s: the shell's environment differs: %s"
                    % (what, env_diff(traced.stdout, plain.stdout)))
        ptrel.log("%s: exit 3, and the untraced environment (%d variables)"
                  % (what, plain.stdout.count(b"\n") - 1))
        if strace and own is None:
            calls = []
            for tr in (False, True):
                out = os.path.join(d, "strace-%d" % tr)
                scmd = [strace, "-f", "-qq", "-o", out] + cmd
                if tr:
                    scmd = [a.proftrace, "record", "-q", "--force", "-o",
                            cap, "--"] + scmd
                ptrel.run(scmd, env=env, cwd=d)
                calls.append(up_to_start(after_filter(out)))
            ptrel.check(calls[0] == calls[1],
                        "%s: system calls from the filter to the start of the "
                        "program: untraced %s, traced %s"
                        % (what, calls[0], calls[1]))


def main():
    a = ptrel.args(__doc__)
    prog = ptrel.helper(a, "seccomp-child")
    d = ptrel.tmpdir("seccomp")
    strace = shutil.which("strace")
    inherited(a, prog, d, strace)
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
