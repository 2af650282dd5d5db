#!/usr/bin/env python3
"""The environment a traced program sees: the documented variables added,
nothing else.

Guarantee (doc/reliability.md, C5; the rules are proftrace-record(1)'s
"What a traced program sees"): a program started with an empty or
explicit environment (env -i, Python env={}, Perl %ENV=(), Node env:{})
sees, traced, exactly its untraced environment, in the same order, with
the library's entry appended to an LD_PRELOAD it was given, and then, at
the end and in this order, those of LD_PRELOAD=<the library's entry>,
PROFTRACE_SOCKET, PROFTRACE_DIR, PROFTRACE_ENV, PROFTRACE_TRACE_DIR and
PROFTRACE_LOG it lacks, with the values its parent had.  The command
record starts sees its untraced environment with LD_PRELOAD,
PROFTRACE_SOCKET, PROFTRACE_TRACE_DIR and (but with
PROFTRACE_TRANSPORT=socket) PROFTRACE_LOG appended.  Each child
prints its environment with `env -0`; each parent writes the values of
the variables it had into a file.
"""

import os
import shlex
import shutil

import ptrel
from ptrel import check, log

NAMES = ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_DIR", "PROFTRACE_ENV",
         "PROFTRACE_TRACE_DIR", "PROFTRACE_LOG")
# record hands its command the run log unless told to keep to the socket.
RUN_LOG = os.environ.get("PROFTRACE_TRANSPORT") != "socket"
ENV0 = "/usr/bin/env -0"


def children(libm):
    """(name, parent command); the parent runs `env -0` with a cleared or
    explicit environment.  $VALS names the file for the parent's own."""
    py = ("import subprocess; subprocess.run(['/usr/bin/env', '-0'], "
          "env=%s)")
    perl = "%%ENV=(%s); exec '/usr/bin/env', '-0'"
    node = ("require('child_process').spawnSync('/usr/bin/env', ['-0'], "
            "{env: %s, stdio: 'inherit'})")
    cases = [
        ("env -i", "env -i " + ENV0),
        ("env -i A=1", "env -i A=1 " + ENV0),
        ("python env={}", "python3 -c " + shlex.quote(py % "{}")),
        ('python env={"A": "1"}',
         "python3 -c " + shlex.quote(py % '{"A": "1"}')),
        ("python env with an LD_PRELOAD of its own",
         "python3 -c " + shlex.quote(py % ('{"LD_PRELOAD": "%s", "B": "2"}'
                                           % libm))),
        ("perl %ENV=()", "perl -e " + shlex.quote(perl % "")),
        ("perl %ENV=(A=>1)", "perl -e " + shlex.quote(perl % "A => '1'")),
    ]
    if shutil.which("node"):
        cases += [("node env:{}", "node -e " + shlex.quote(node % "{}")),
                  ("node env:{A:'1'}",
                   "node -e " + shlex.quote(node % "{A: '1'}"))]
    else:
        log("SKIP node: not installed")
    return cases


def parent_script(child):
    save = "; ".join('printf "%%s\\0" "${%s-}"' % n for n in NAMES)
    return '{ %s; } > "$VALS"; %s' % (save, child)


def entries(raw):
    return [e for e in raw.decode(errors="surrogateescape").split("\0") if e]


def ours(preload):
    items = [i for i in preload.replace(" ", ":").split(":")
             if os.path.basename(i).startswith("libproftrace")]
    check(len(items) == 1, "the parent's LD_PRELOAD %r" % preload)
    return items[0]


def expected(untraced, vals, appended):
    """untraced, with the library's entry appended to an LD_PRELOAD of its
    own, then each of `appended` (name, value) it lacks."""
    out, names = [], set()
    for e in untraced:
        name, _, value = e.partition("=")
        if name == "LD_PRELOAD":
            e += ":" + ours(vals["LD_PRELOAD"])
        out.append(e)
        names.add(name)
    return out + ["%s=%s" % (n, v) for n, v in appended
                  if n not in names and v is not None]


def record(a, d, cmd):
    return [a.proftrace, "record", "-q", "--force", "-o", d + "/env.ptcap",
            "--"] + cmd


def run_both(a, d, script, env):
    """The parent script untraced, then under record: for each, what the
    child printed and the parent's own values of NAMES."""
    res = []
    env = dict(env, VALS=d + "/vals")
    for traced in (False, True):
        cmd = ["sh", "-c", script]
        r = ptrel.run(record(a, d, cmd) if traced else cmd, env=env)
        check(r.returncode == 0, "%s: %s" % (script, r.stderr.decode()))
        with open(d + "/vals", "rb") as f:
            raw = f.read().split(b"\0")
        vals = {n: v.decode() if v else None for n, v in zip(NAMES, raw)}
        res.append((entries(r.stdout), vals))
    return res


def the_command(a, d, env, label):
    """What record's command itself sees: `env -0` run by record."""
    plain = entries(ptrel.run(["env", "-0"], env=env).stdout)
    traced = entries(ptrel.run(record(a, d, ["env", "-0"]), env=env).stdout)
    added = 4 if RUN_LOG else 3
    check(len(traced) == len(plain) + added and traced[:-added] == plain,
          "the command%s: traced %s, untraced %s" % (label, traced, plain))
    pre, sock, trace = traced[-added:][:3]
    lib = pre.partition("=")[2]
    check(pre.startswith("LD_PRELOAD=") and
          (lib.startswith("/usr/") or os.path.dirname(lib) ==
           "/tmp/proftrace-lib-%d" % os.geteuid()) and
          os.path.basename(lib).startswith("libproftrace"),
          "the command%s: %s" % (label, pre))
    check(sock.startswith("PROFTRACE_SOCKET=/tmp/proftrace-%d/record-"
                          % os.geteuid()) and sock.endswith("/socket"),
          "the command%s: %s" % (label, sock))
    check(trace == sock.replace("PROFTRACE_SOCKET=", "PROFTRACE_TRACE_DIR=")
          [:-len("socket")] + "trace", "the command%s: %s" % (label, trace))
    if RUN_LOG:
        # PIDNS:DEV:INO:/proc/PID/fd/N, and N is the run log: a memfd.
        runlog = traced[-1]
        f = runlog.partition("=")[2].split(":")
        check(runlog.startswith("PROFTRACE_LOG=") and len(f) == 4 and
              all(x.isdigit() for x in f[:3]) and
              int(f[0]) == os.stat("/proc/self/ns/pid").st_ino and
              f[3].startswith("/proc/") and "/fd/" in f[3],
              "the command%s: %s" % (label, runlog))
    log("%-44s traced = untraced + documented" % ("the command" + label))


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("env")
    os.mkdir(d + "/spool", 0o700)
    libc = [w for w in ptrel.run(["ldd", "/bin/sh"]).stdout.decode().split()
            if "/libc.so" in w][0]
    libm = os.path.join(os.path.dirname(libc), "libm.so.6")
    base = ptrel.untraced_env({"PROFTRACE_LIB": a.lib})
    base.pop("PROFTRACE_ENV", None)
    extra = dict(base, PROFTRACE_DIR=d + "/spool", PROFTRACE_ENV="FOO:BAR")
    for label, env in (("", base), (", PROFTRACE_DIR and _ENV set", extra)):
        the_command(a, d, env, label)
        for name, child in children(libm):
            (plain, _), (traced, vals) = run_both(a, d, parent_script(child),
                                                 env)
            appended = [("LD_PRELOAD", ours(vals["LD_PRELOAD"]))] + \
                [(n, vals[n]) for n in NAMES[1:]]
            want = expected(plain, vals, appended)
            check(traced == want, "%s%s:\nuntraced %s\ntraced   %s\n"
                  "expected %s" % (name, label, plain, traced, want))
            log("%-44s traced = untraced + documented" % (name + label))


if __name__ == "__main__":
    main()
