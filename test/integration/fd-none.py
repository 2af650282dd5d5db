#!/usr/bin/env python3
"""A traced program holds no descriptor of proftrace's while its own code
runs (doc/reliability.md, "Descriptors").

    fd-none.py --proftrace BIN --fdsee BIN --fdrace BIN
               [--only observe,python,race,bwrap] [--race-runs N]

Each case runs the same command untraced and under `proftrace record`
(with the run log, or with PROFTRACE_TRANSPORT=socket in the
environment, the socket) and asks for the same output, byte for byte,
and the same exit status; nothing here knows how the library talks to
the collector, only what a program can see.

  observe  fdsee all: /proc/self/fd, fstat and fcntl(F_GETFD) of 0-1023,
           how many descriptors open() gets before EMFILE and the numbers
           of 5 open()s, in the program and in children it starts by
           fork + execve and by posix_spawn; as started, under
           `ulimit -n 40` (soft and hard), `ulimit -Sn 40`, and with
           stdin and stderr closed
  python   Python's subprocess with close_fds=True, with pass_fds (and
           stdin and stdout redirected, as CPython's own
           test_pass_fds_redirected does), and close_fds=False: what the
           child finds in /proc/self/fd
  race     fdrace: one thread loops closefrom(3) + open + write + close
           of its own file while another starts 300 children; every write
           whole, the file holding exactly its lines, every child in the
           capture (`proftrace convert -f csv`); --race-runs times
  bwrap    as an ordinary user (root only: runuser, and a user `ptuser`
           made if missing), `bwrap --dev-bind / / --unshare-user fdsee
           all`, where the images cannot open the run log and use the
           socket; skipped where the machine refuses that user a user
           namespace (a chroot, Ubuntu's AppArmor: test/tools/userns.py)
"""

import argparse
import csv
import difflib
import io
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import userns  # noqa: E402

FAILS = []
USER = "ptuser"


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return ok


def skip(what):
    print("SKIP " + what, file=sys.stderr)


def diff(u, t):
    """The first lines where traced output t differs from untraced u."""
    d = list(difflib.unified_diff(u.splitlines(), t.splitlines(), "untraced",
                                  "traced", lineterm="", n=1))
    return "\n".join(d[:40])


class Runner:
    def __init__(self, proftrace, tmp):
        self.proftrace = proftrace
        self.tmp = tmp
        self.n = 0

    def untraced(self, cmd, prefix=(), env=None):
        r = subprocess.run(list(prefix) + cmd, env=env or untraced_env(),
                           capture_output=True, text=True, cwd=self.tmp)
        return r.returncode, r.stdout, r.stderr

    def traced(self, cmd, prefix=(), env=None):
        """(returncode, stdout, stderr), the capture's CSV rows."""
        self.n += 1
        cap = os.path.join(self.tmp, "c%d.ptcap" % self.n)
        r = subprocess.run(list(prefix) + [self.proftrace, "record", "-q", "-o",
                                           cap, "--"] + cmd,
                           env=env or untraced_env(), capture_output=True,
                           text=True, cwd=self.tmp)
        c = subprocess.run([self.proftrace, "convert", "-f", "csv", "-o", "-",
                            cap], env=untraced_env(), capture_output=True,
                           text=True)
        rows = list(csv.DictReader(io.StringIO(c.stdout))) \
            if c.returncode == 0 else []
        check(c.returncode == 0, "convert %s: %s" % (cap, c.stderr.strip()))
        return (r.returncode, r.stdout, r.stderr), rows

    def same(self, cmd, what, prefix=(), env=None):
        """Runs cmd untraced and traced; the two must print the same and
        exit alike.  Returns the untraced result and the traced rows."""
        u = self.untraced(cmd, prefix, env)
        t, rows = self.traced(cmd, prefix, env)
        if check(t == u, "%s: traced run differs from untraced "
                 "(exit %d and %d)\n%s%s" % (what, u[0], t[0], diff(u[1], t[1]),
                                             diff(u[2], t[2]))):
            print("ok   %s" % what, file=sys.stderr)
        return u, rows


def count_rows(rows, exe_base):
    return sum(1 for x in rows
               if os.path.basename(x["command"].split(" ")[0]) == exe_base)


def observe(run, fdsee):
    for prefix, what in (("", "as started"),
                         ("ulimit -n 40; ", "ulimit -n 40"),
                         ("ulimit -Sn 40; ", "ulimit -Sn 40"),
                         ("exec 0<&- 2>&-; ", "stdin and stderr closed")):
        u, rows = run.same(["/bin/sh", "-c", prefix + "exec " + fdsee + " all"],
                           "fdsee all, " + what)
        check(u[0] == 0 and "posix_spawn: open gave" in u[1],
              "fdsee all, %s, untraced: %r" % (what, u))
        # the program and both children were traced, or the equality
        # above proves nothing
        n = count_rows(rows, "fdsee")
        check(n == 3, "fdsee all, %s: %d executions of fdsee in the capture, "
              "expected 3 (the program, its fork+execve and posix_spawn "
              "children)" % (what, n))


PY_SUBPROCESS = r"""
import os, subprocess, sys
fdsee = sys.argv[1]
lister = [sys.executable, "-S", "-c",
          "import os; print(sorted(int(x) for x in os.listdir('/proc/self/fd')))"]
a = os.open("/dev/null", os.O_RDONLY)
b = os.open("/dev/null", os.O_RDONLY)
os.dup2(b, 30)
os.set_inheritable(a, True)
print("parent", sorted(int(x) for x in os.listdir("/proc/self/fd")))
cases = [("close_fds", dict(close_fds=True)),
         ("pass_fds", dict(close_fds=True, pass_fds=(a, 30))),
         ("pass_fds redirected", dict(close_fds=True, pass_fds=(a, 30),
                                      stdin=subprocess.PIPE)),
         ("inherit", dict(close_fds=False))]
for name, kw in cases:
    r = subprocess.run(lister, stdout=subprocess.PIPE, text=True, **kw)
    print(name, "python child", r.returncode, r.stdout.strip(), flush=True)
    r = subprocess.run([fdsee, "report", name], stdout=subprocess.PIPE,
                       text=True, **kw)
    print(r.stdout, end="", flush=True)
    print(name, "fdsee child", r.returncode, flush=True)
"""


def python_cases(run, fdsee, python):
    for prefix, what in (("", "as started"), ("ulimit -n 40; ", "ulimit -n 40")):
        u, rows = run.same(["/bin/sh", "-c", prefix + 'exec "$0" -c "$1" "$2"',
                            python, PY_SUBPROCESS, fdsee],
                           "python subprocess close_fds/pass_fds, " + what)
        check(u[0] == 0 and "inherit fdsee child 0" in u[1],
              "python subprocess, %s, untraced: %r" % (what, u))
        n = count_rows(rows, "fdsee")
        check(n == 4, "python subprocess, %s: %d executions of fdsee in the "
              "capture, expected 4" % (what, n))


def race(run, fdrace, runs):
    f = os.path.join(run.tmp, "race.txt")
    u = run.untraced([fdrace, f, "300"])
    check(u == (0, "lines 2000+ children 300\n", ""),
          "fdrace untraced: %r" % (u,))
    bad = 0
    for i in range(runs):
        t, rows = run.traced([fdrace, f, "300"])
        n = count_rows(rows, "true")
        ok = check(t == u, "fdrace traced, run %d of %d: %r, untraced %r"
                   % (i + 1, runs, t, u))
        ok &= check(n == 300, "fdrace traced, run %d of %d: %d executions "
                    "of /bin/true in the capture, expected 300"
                    % (i + 1, runs, n))
        bad += not ok
    print("%s  fdrace: %d of %d traced runs as untraced"
          % ("ok  " if not bad else "FAIL", runs - bad, runs), file=sys.stderr)


def bwrap(run, fdsee):
    if os.environ.get("PROFTRACE_TRANSPORT") == "socket":
        # inside, the images take the socket under either transport: the
        # run log's twin of this test runs the case (and only one makes
        # and removes the user)
        return skip("bwrap as an ordinary user: run by the run log's twin")
    if os.geteuid() != 0:
        return skip("bwrap as an ordinary user: needs root (runuser, useradd)")
    if not shutil.which("bwrap") or not shutil.which("runuser"):
        return skip("bwrap as an ordinary user: bwrap or runuser missing "
                    "(tools/install-deps.sh)")
    made = False
    try:
        pwd.getpwnam(USER)
    except KeyError:
        r = subprocess.run(["useradd", "-M", "-N", "-d", "/", "-s", "/bin/sh",
                            USER], capture_output=True, text=True)
        if not check(r.returncode == 0, "useradd %s: %s" % (USER, r.stderr)):
            return
        made = True
    try:
        pw = pwd.getpwnam(USER)
        os.chown(run.tmp, pw.pw_uid, pw.pw_gid)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL": "C",
               "HOME": "/"}
        for k in ("PROFTRACE_LIB", "PROFTRACE_TRANSPORT"):
            if k in os.environ:
                env[k] = os.environ[k]
        prefix = [shutil.which("runuser"), "-u", USER, "--"]
        why = userns.refused(prefix)
        if why:
            return skip("bwrap as an ordinary user: " + why)
        # The build may sit in a 0700 home (root's): the user runs copies
        # of the program, proftrace and its library.
        mine = os.path.join(run.tmp, "fdsee")
        shutil.copy(fdsee, mine)
        pt = os.path.join(run.tmp, "proftrace")
        shutil.copy(run.proftrace, pt)
        for p in (mine, pt):
            os.chmod(p, 0o755)
        if "PROFTRACE_LIB" in env:
            lib = os.path.join(run.tmp, os.path.basename(env["PROFTRACE_LIB"]))
            shutil.copy(env["PROFTRACE_LIB"], lib)
            os.chmod(lib, 0o644)
            env["PROFTRACE_LIB"] = lib
        cmd = ["bwrap", "--dev-bind", "/", "/", "--unshare-user", mine, "all"]
        as_user = Runner(pt, run.tmp)
        as_user.n = run.n               # captures c<N> go on from run's
        u, rows = as_user.same(
            cmd, "bwrap --unshare-user as %s, fdsee all" % USER, prefix, env)
        n = count_rows(rows, "fdsee")
        check(n == 3, "bwrap as %s: %d executions of fdsee in the capture, "
              "expected 3" % (USER, n))
    finally:
        os.chown(run.tmp, 0, 0)
        if made:
            subprocess.run(["userdel", USER], stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--fdsee", required=True)
    ap.add_argument("--fdrace", required=True)
    ap.add_argument("--python", help="the Python to run the subprocess case "
                    "with (default: this one's real executable)")
    ap.add_argument("--only", default="observe,python,race,bwrap")
    ap.add_argument("--race-runs", type=int, default=3)
    a = ap.parse_args()
    only = a.only.split(",")
    fdsee, fdrace = os.path.abspath(a.fdsee), os.path.abspath(a.fdrace)
    python = a.python or os.path.realpath(sys.executable)
    print("transport: %s" % (os.environ.get("PROFTRACE_TRANSPORT") or "run log"),
          file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="pt-fdnone-") as tmp:
        os.chmod(tmp, 0o755)
        run = Runner(os.path.abspath(a.proftrace), tmp)
        if "observe" in only:
            observe(run, fdsee)
        if "python" in only:
            python_cases(run, fdsee, python)
        if "race" in only:
            race(run, fdrace, a.race_runs)
        if "bwrap" in only:
            bwrap(run, fdsee)
    if FAILS:
        sys.exit("fd-none: %d failure(s)" % len(FAILS))
    print("fd-none: ok")


if __name__ == "__main__":
    main()
