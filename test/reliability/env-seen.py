#!/usr/bin/env python3
"""The environment a traced program sees: the one it was given, nothing of
proftrace's, and its children still recorded.

Guarantee (doc/reliability.md, C5; the rules are proftrace-record(1)'s
"What a traced program sees"): a program started with an empty or
explicit environment (env -i, env -S, Python env={}, Perl %ENV=(), a C
program's execve with {NULL}, Node env:{}) prints, under `proftrace
record`, exactly what it prints untraced: the library takes what
proftrace added to its environment (LD_PRELOAD, PROFTRACE_*) out of
`environ` at load.  Each traced run goes through test/tools/ptcheck.py,
which compares the capture's CSV with `strace -f` of the same run: every
program exec'd, the printing child included, is recorded.  The command
`record` starts prints what it prints untraced too, but for
PROFTRACE_TRACE_DIR, which is there for it to read, also when the user
gave it an LD_PRELOAD of their own; and variables the user set
(LD_PRELOAD=libproftrace.so and the daemon's exports) stay in sight.
"""

import os
import re
import shlex
import shutil
import sys

import ptrel
from ptrel import check, log

HERE = os.path.dirname(os.path.abspath(__file__))
PTCHECK = os.path.join(HERE, "..", "tools", "ptcheck.py")
ENV0 = "/usr/bin/env -0"


def cases(a, libm):
    """(name, parent command): the parent starts a child that prints its
    environment, NUL-separated, with a cleared or explicit one (but for
    `env -S`, which adds to the one it has, record's command's)."""
    py = ("import subprocess; subprocess.run(['/usr/bin/env', '-0'], "
          "env=%s)")
    perl = "%%ENV=(%s); %s '/usr/bin/env', '-0'"
    node = ("require('child_process').spawnSync('/usr/bin/env', ['-0'], "
            "{env: %s, stdio: 'inherit'})")
    envexec = os.path.join(a.helpers, "env-exec")
    sh = lambda s: ["sh", "-c", s]
    out = [
        ("env -i A=B env", sh("env -i A=B " + ENV0)),
        ("env -i env", sh("env -i " + ENV0)),
        ("env -S 'A=B env'", sh("env -S 'A=B %s'" % ENV0)),
        ("env -i, env -S", sh("env -i env -S 'A=B %s'" % ENV0)),
        ("python env={}", ["python3", "-c", py % "{}"]),
        ("python env={'A': 'B'}", ["python3", "-c", py % "{'A': 'B'}"]),
        ("python env with an LD_PRELOAD of its own",
         ["python3", "-c", py % ('{"LD_PRELOAD": "%s", "B": "2"}' % libm)]),
        ("perl %ENV=(); system", ["perl", "-e", perl % ("", "system")]),
        ("perl %ENV=(); exec", ["perl", "-e", perl % ("", "exec")]),
        ("perl %ENV=(A=>1); exec", ["perl", "-e", perl % ("A => '1'",
                                                          "exec")]),
        ("C execve(path, argv, {NULL})", [envexec, envexec]),
    ]
    if shutil.which("node"):
        out += [("node env:{}", ["node", "-e", node % "{}"]),
                ("node env:{A:'1'}", ["node", "-e", node % "{A: '1'}"])]
    else:
        log("SKIP node: not installed")
    return out


def differ(what, got, want):
    """None when got == want, else what differs, shortly."""
    if got == want:
        return None
    return ("%s: seen, not given: %s; given, not seen: %s; order differs: "
            "%s" % (what, [e for e in got if e not in want],
                    [e for e in want if e not in got],
                    sorted(got) == sorted(want)))


def entries(raw):
    return [e for e in raw.decode(errors="surrogateescape").split("\0") if e]


def traced(a, d, cmd, env):
    """cmd under record and strace -f, compared by ptcheck: its output,
    and what ptcheck found amiss (None if nothing)."""
    r = ptrel.run([sys.executable, PTCHECK, "--proftrace", a.proftrace,
                   "--keep", d + "/check", "--"] + cmd, env=env)
    # ptcheck's verdict comes last, after what the command printed
    k = r.stdout.rfind(b"ptcheck: ok")
    if r.returncode != 0 or k < 0:
        return entries(r.stdout), (
            "%s: children not all recorded, or failed (ptcheck against "
            "strace -f): %s" % (shlex.join(cmd), r.stderr.decode()))
    return entries(r.stdout[:k]), None


def trace_dir(got):
    """The PROFTRACE_TRACE_DIR entry of record's run in got: [] or one."""
    return [e for e in got if re.fullmatch(
        r"PROFTRACE_TRACE_DIR=/tmp/proftrace-%d/record-\w+/trace"
        % os.geteuid(), e)][:1]


def the_command(a, d, env, label):
    """What record's command itself sees: `env -0` run by record; that
    is, the untraced environment and PROFTRACE_TRACE_DIR, the directory
    it is to see (the manual's "For tool authors")."""
    plain = entries(ptrel.run(["env", "-0"], env=env).stdout)
    got = entries(ptrel.run([a.proftrace, "record", "-q", "--force", "-o",
                             d + "/env.ptcap", "--", "env", "-0"],
                            env=env).stdout)
    bad = differ("record -- env" + label, got, plain + trace_dir(got))
    log("%-44s %s" % ("record -- env" + label, bad and "DIFFERS" or
                      "traced = untraced"))
    return bad


def daemon_exports(a, d):
    """Start a daemon; its exports, as a shell would take them."""
    r = ptrel.run([a.proftrace, "daemon", "-o", d + "/daemon.ptcap",
                   "--socket", d + "/daemon.sock", "--detach"],
                  env=ptrel.untraced_env())
    check(r.returncode == 0, "daemon: %s" % r.stderr.decode())
    env = {}
    for line in r.stdout.decode().splitlines():
        if line.startswith("export "):
            k, _, v = line[len("export "):].partition("=")
            env[k] = shlex.split(v)[0] if v else ""
    check("PROFTRACE_SOCKET" in env, "daemon printed %r" % r.stdout)
    return env


def users_own(a, d):
    """Variables the user set are theirs: LD_PRELOAD by hand against a
    daemon, and the daemon's exports, stay where they were."""
    exports = daemon_exports(a, d)
    try:
        base = ptrel.untraced_env()
        for name, env in (
                ("LD_PRELOAD and the socket by hand",
                 dict(base, LD_PRELOAD=a.lib,
                      PROFTRACE_SOCKET=exports["PROFTRACE_SOCKET"])),
                ("the daemon's exports", dict(base, **exports))):
            given = ["%s=%s" % kv for kv in env.items()]
            got = entries(ptrel.run(["env", "-0"], env=env).stdout)
            check(got == given, differ(name + ", the image", got, given))
            # and its child, started with the environment as it is
            got = entries(ptrel.run(
                ["python3", "-c", "import subprocess; "
                 "subprocess.run(['/usr/bin/env', '-0'])"], env=env).stdout)
            check(got == given, differ(name + ", its child", got, given))
            log("%-44s seen as set" % name)
    finally:
        ptrel.run([a.proftrace, "stop", "--socket", d + "/daemon.sock"],
                  env=ptrel.untraced_env())


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("env")
    os.mkdir(d + "/spool", 0o700)
    if not shutil.which("strace"):
        ptrel.skip("strace is not installed")
    libc = [w for w in ptrel.run(["ldd", "/bin/sh"]).stdout.decode().split()
            if "/libc.so" in w][0]
    libm = os.path.join(os.path.dirname(libc), "libm.so.6")
    base = ptrel.untraced_env({"PROFTRACE_LIB": a.lib})
    base.pop("PROFTRACE_ENV", None)
    problems = []
    extra = dict(base, PROFTRACE_DIR=d + "/spool", PROFTRACE_ENV="FOO:BAR")
    for label, env in (("", base), (", PROFTRACE_DIR and _ENV set", extra),
                       (", an LD_PRELOAD of the user's",
                        dict(base, LD_PRELOAD=libm))):
        problems.append(the_command(a, d, env, label))
    for label, env in (("", base), (", PROFTRACE_DIR and _ENV set", extra)):
        for name, cmd in cases(a, libm):
            plain = entries(ptrel.run(cmd, env=env).stdout)
            got, amiss = traced(a, d, cmd, env)
            # what record's command has, env -S, which adds to it, has too
            if name.startswith("env -S"):
                got = [e for e in got if e not in trace_dir(got)]
            bad = differ(name + label, got, plain)
            problems += [bad, amiss]
            log("%-44s %s" % (name + label, "DIFFERS" if bad else
                              "NOT ALL RECORDED" if amiss else
                              "traced = untraced, all recorded"))
    # every case is run, so that a failure names all that differ
    problems = [p for p in problems if p]
    check(not problems, "\n".join(problems))
    users_own(a, d)


if __name__ == "__main__":
    main()
