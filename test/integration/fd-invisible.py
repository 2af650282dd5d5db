#!/usr/bin/env python3
"""The library's descriptor is none of the program's business
(doc/reliability.md, "Descriptors").

    fd-invisible.py --proftrace BIN --fdview BIN

Each case runs the same command untraced and under `proftrace record`
and compares what the program saw and did: its output, its exit status,
the files it wrote.  The library holds no descriptor while the program's
code runs (doc/reliability.md, D1): /proc/self/fd, fstat and fcntl over
every number, the count of descriptors a program can open and the
numbers it gets are as untraced, in the run log's transport and the
socket's (PROFTRACE_TRANSPORT=socket), under any limit, in a fork child,
and in a program that loads no library (a static one).  After the
program closes every descriptor, its execution keeps its end, exit
status and CPU.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402

FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL: " + what, file=sys.stderr)


class Runner:
    def __init__(self, proftrace, tmp):
        self.proftrace = proftrace
        self.tmp = tmp
        self.n = 0

    def run(self, cmd, traced, **kw):
        """(returncode, stdout, stderr, csv rows or None)."""
        self.n += 1
        if not traced:
            r = subprocess.run(cmd, env=untraced_env(), capture_output=True,
                               text=True, cwd=self.tmp, **kw)
            return r.returncode, r.stdout, r.stderr, None
        cap = os.path.join(self.tmp, "c%d.ptcap" % self.n)
        out = os.path.join(self.tmp, "c%d.csv" % self.n)
        r = subprocess.run([self.proftrace, "record", "-q", "-o", cap,
                            "--csv", out, "--"] + cmd, env=untraced_env(),
                           capture_output=True, text=True, cwd=self.tmp, **kw)
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        return r.returncode, r.stdout, r.stderr, rows


def sh(script):
    return ["/bin/sh", "-c", script]


def fd_list(run, script, traced):
    """The set of lines `fdview list` wrote."""
    out = os.path.join(run.tmp, "list")
    rc, _, err, _ = run.run(sh(script + " " + out), traced)
    check(rc == 0 and not err, "%s (traced %s): exit %d, %r"
          % (script, traced, rc, err))
    with open(out) as f:
        return set(f.read().splitlines())


def check_list(run, fdview, limit_cmd):
    """Traced sees exactly what untraced sees, through /proc/self/fd,
    fstat and fcntl."""
    script = "%s exec %s list" % (limit_cmd, fdview)
    u = fd_list(run, script, False)
    t = fd_list(run, script, True)
    extra, missing = t - u, u - t
    check(not missing, "%s: traced run lacks %s" % (script, sorted(missing)))
    check(not extra, "%s: traced run sees %s besides what untraced sees"
          % (script, sorted(extra)))


def row_of(rows, argv0):
    got = [x for x in rows if x["command"].split(" ")[0] == argv0]
    return got[-1] if got else None


def check_end(run, cmd, argv0, what, want_out=None):
    """cmd exits 7 after sleeping 0.3 s and burning CPU: traced as
    untraced, and its row says so."""
    ru, ou, eu, _ = run.run(cmd, False)
    rt, ot, et, rows = run.run(cmd, True)
    check((rt, ot, et) == (ru, ou, eu),
          "%s: traced %r, untraced %r" % (what, (rt, ot, et), (ru, ou, eu)))
    check(ru == 7, "%s: untraced exit %d, expected 7" % (what, ru))
    if want_out is not None:
        check(ou == want_out, "%s: output %r, expected %r" % (what, ou, want_out))
    row = row_of(rows, argv0)
    if row is None:
        check(False, "%s: no row for %s" % (what, argv0))
        return
    check(row["exit_code"] == "7" and row["signal"] == "",
          "%s: row has exit code %r signal %r, expected 7"
          % (what, row["exit_code"], row["signal"]))
    check(row["duration"] and float(row["duration"]) >= 0.3,
          "%s: row lasts %r s, the program slept 0.3 s" % (what, row["duration"]))
    # user and system together: the kernel splits a short run between
    # them by sampling
    check(row["user_cpu"] and row["sys_cpu"] and
          float(row["user_cpu"]) + float(row["sys_cpu"]) > 0 and
          row["max_rss_kb"] and int(row["max_rss_kb"]) > 0,
          "%s: row has CPU %r + %r, RSS %r" % (what, row["user_cpu"],
                                              row["sys_cpu"], row["max_rss_kb"]))


def same(run, cmd, what):
    u = run.run(cmd, False)[:3]
    t = run.run(cmd, True)[:3]
    check(t == u, "%s: traced %r, untraced %r" % (what, t, u))
    return u


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--fdview", required=True)
    ap.add_argument("--fdview-static",
                    help="fdview linked statically: loads no library")
    a = ap.parse_args()
    fdview = os.path.abspath(a.fdview)
    with tempfile.TemporaryDirectory(prefix="pt-fd-") as tmp:
        run = Runner(os.path.abspath(a.proftrace), tmp)

        # /proc/self/fd and fcntl over 0-1023, with std descriptors open
        # or closed, under the default and under low soft limits.
        for limit in ("", "exec 1>&- 2>&-;", "ulimit -Sn 20;",
                      "ulimit -Sn 56;", "ulimit -Sn 60;",
                      "exec 0<&- 1>&- 2>&-; ulimit -Sn 5;", "ulimit -n 20;",
                      "ulimit -n 40;", "ulimit -n 56; exec 1>&-;"):
            check_list(run, fdview, limit)
        # A program that loads no library (static; set-id ones are the
        # same) sees nothing of proftrace's: no descriptor crosses exec.
        if a.fdview_static:
            static = os.path.abspath(a.fdview_static)
            check_list(run, static, "")
            check_list(run, static, "exec 1>&- 2>&-;")
            check_list(run, static, "ulimit -Sn 20;")
        else:
            print("SKIP static fdview: no static libc to link it with",
                  file=sys.stderr)

        # A fork child that starts a program holds nothing either.
        py = os.path.realpath(sys.executable)
        child = ("import os, subprocess\n"
                 "if os.fork() == 0:\n"
                 "    subprocess.run(['/bin/true'])\n"
                 "    print(' '.join(sorted(os.listdir('/proc/self/fd'))),\n"
                 "          flush=True)\n"
                 "    os._exit(0)\n"
                 "os.wait()\n")
        u = run.run([py, "-c", child], False)
        t = run.run([py, "-c", child], True)
        extra = set(t[1].split()) - set(u[1].split())
        check(t[0] == u[0] == 0 and t[1] == u[1],
              "fork child's descriptors: traced %r, untraced %r"
              % (t[:3], u[:3]))

        # As many descriptors as untraced, under any limit.
        for opt, lim in (("-Sn", 4), ("-Sn", 20), ("-Sn", 56), ("-Sn", 57),
                         ("-Sn", 1024), ("-n", 4), ("-n", 20), ("-n", 40),
                         ("-n", 56)):
            script = "ulimit %s %d; exec %s count" % (opt, lim, fdview)
            u = run.run(sh(script), False)
            t = run.run(sh(script), True)
            check(t[0] == 0 and t[1] == u[1],
                  "count under ulimit %s %d: traced %r, untraced %r"
                  % (opt, lim, t[:3], u[:3]))

        # Every descriptor taken: the shell system() starts cannot load
        # libc, and ld.so says only that, as untraced.
        for limit in ("-Sn 20", "-Sn 56", "-n 20"):
            u = same(run, sh("ulimit %s; exec %s full-system"
                             % (limit, fdview)),
                     "system() with no descriptor left, ulimit %s" % limit)
            check(u[1] == "system 32512\n" and "libc.so.6" in u[2],
                  "system() with no descriptor left, untraced: %r" % (u,))

        # A closed standard descriptor stays closed.
        u = same(run, sh("/bin/echo hello >&-"), "/bin/echo hello >&-")
        check(u[0] != 0 and "Bad file descriptor" in u[2],
              "/bin/echo hello >&- untraced: %r" % (u,))
        u = same(run, sh("ulimit -Sn 20; /bin/echo hello >&-"),
                 "/bin/echo hello >&- under ulimit -Sn 20")

        # A shell's own use of fd 56.
        for traced in (False, True):
            f = os.path.join(tmp, "f")
            if os.path.exists(f):
                os.unlink(f)
            rc, out, err, _ = run.run(
                ["bash", "-c", "exec 56>f; echo hi >&56; echo ok"], traced)
            with open(f) as fh:
                got = fh.read()
            check((rc, out, err, got) == (0, "ok\n", "", "hi\n"),
                  "bash exec 56>f (traced %s): exit %d, %r %r, f holds %r"
                  % (traced, rc, out, err, got))

        # dup2 and F_DUPFD onto the library's number; closing every
        # descriptor.
        check_end(run, [fdview, "dup2", "56"], fdview, "dup2 onto 56",
                  "file holds 'x'\n")
        check_end(run, [fdview, "dupfd", "56"], fdview,
                  "fcntl(F_DUPFD) onto 56", "F_DUPFD gave 56, file holds 'y'\n")
        check_end(run, [fdview, "close-range"], fdview, "close_range(3, ~0U)",
                  "close_range 0\n")
        check_end(run, [fdview, "closefrom"], fdview, "closefrom(3)", "")
        check_end(run, sh("ulimit -n 20; exec %s close-range" % fdview),
                  fdview, "close_range under ulimit -n 20", "close_range 0\n")
        check_end(run, [fdview, "close-all"], fdview, "close() of 3-1023")
        check_end(run, [py, "-c",
                        "import os, sys, time\n"
                        "os.closerange(3, 65536)\n"
                        "n = 0\n"
                        "for i in range(3000000): n += i\n"
                        "time.sleep(0.3)\n"
                        "sys.exit(7)\n"], py, "python os.closerange")
    if FAILS:
        sys.exit("fd-invisible: %d failure(s)" % len(FAILS))
    print("fd-invisible: ok")


if __name__ == "__main__":
    main()
