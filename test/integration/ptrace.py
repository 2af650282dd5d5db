#!/usr/bin/env python3
"""What the library cannot enter, traced by the collector (collect/ptrace.c).

    ptrace.py --proftrace BIN --stopper STATIC_PROG CASE

Each case runs its command twice, under `strace -f` and under `proftrace
record`, separately: the two runs must give the same processes (each
exec'd argv, or a fork that never exec'd), each under the same parent,
each ending the same way (exit code or signal), and `record` must exit
with the command's status.  The cases:

  busybox       a static root, `busybox sh -c` with subshells, exit codes,
                a background job, a shell that kills itself, static and
                dynamic children
  killed-parent a static program whose parent shell is SIGKILLed while it
                runs: its end and status all the same
  stop          a static program that stops, continues and kills its fork
                child and reaps a child exiting 7: what its waitpid calls
                report is what they report untraced
  go            `go build -a` of a small cgo program (GOCACHE, GOPATH
                temporary; no network)
  go-exit       a Go program that runs children with os/exec and exits 7
  opt-out       --no-ptrace and PROFTRACE_PTRACE=0: the command is not
                traced (TracerPid 0 as it reads it), traced it is not 0;
                a dynamic command (sh) is not traced either
  strace-outside  record itself under strace -f: the kernel refuses the
                trace, and record falls back without a word and with the
                command's status
  setid         (root only) a setuid-root program run by uid 65534 as
                record's command keeps its privileges: it is not traced

Static and Go programs started by a dynamic process (one that loads the
library), which asks the collector to trace them:

  dyn-busybox   bash runs `busybox sh -c` with forks and exit statuses;
                what bash prints is what it prints untraced
  dyn-killed-parent  a bash that starts a static program and is then
                SIGKILLed: the program's end, status and parent all the
                same
  dyn-go-exit   bash runs a Go program that runs children with os/exec
                and exits 7
  dyn-spawn     python's subprocess starts static programs through
                vfork+exec and through posix_spawn, from a threaded
                parent, some while SIGALRM comes every 0.5 ms: what it
                prints (the statuses its waits return) is what it
                prints untraced
  dyn-spawn-threads  four Python threads at once posix_spawn and vfork
                static programs that fork: every process and status
  dyn-thread-exec  a thread of Python, not its first, execs a static
                program that forks: it takes the process's pid, and is
                recorded as strace sees it
  make-go       make (which starts its recipes with posix_spawn) runs
                `go build -a` of a small cgo program
  daemon        dyn-busybox's command under `proftrace daemon`, with
                LD_PRELOAD and PROFTRACE_SOCKET only
  dyn-setid     (root only) bash, run by uid 65534, runs a static
                setuid-root program: it keeps its privileges
  dyn-opt-out   PROFTRACE_PTRACE=0 and --no-ptrace: a static program
                bash runs is not traced; without them it is
  dyn-stop      bash runs `stop`'s static program: what its waitpid calls
                report, and every process, as untraced
  dyn-exec-fail a Python, threaded and not, whose exec of a static
                program fails (EACCES) goes on untraced: its TracerPid,
                and what it prints, as untraced

A dynamic program that chroots into a root where nothing can load the
library or reach the collector, which it asks to trace it first:

  chroot        (root only) `chroot DIR /bin/sh -c '...'`, DIR holding a
                shell and its libraries but neither the library nor
                /proc: as record's command, under sh, and under the
                daemon; what the shell prints is what it prints untraced
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import ptcheck  # noqa: E402

A = None
problems = []

# Names of temporary files that differ from run to run (go build's work
# directories, gcc's temporary files).
TEMP = [(re.compile(r"(go-build|go-link-|cgo-gcc-input-)[0-9]+"),
         r"\1N"),
        (re.compile(r"/tmp/cc[A-Za-z0-9]{6}\."), "/tmp/ccXXXXXX.")]


def norm(argv):
    out = []
    for a in argv:
        for rx, to in TEMP:
            a = rx.sub(to, a)
        out.append(a)
    return tuple(out)


def check(ok, msg):
    if not ok:
        problems.append(msg)
        print("ptrace: FAIL: " + msg, file=sys.stderr)


# strace pads the result of a short line to a column: ")   = 0".
EXEC_DONE = re.compile(r"^(\d+) +(?:execve\(|<\.\.\. execve resumed>).*"
                       r"\) += 0$")
MADE = re.compile(r"^(\d+) +(?:(?:clone3?|fork|vfork)\(|<\.\.\. "
                  r"(?:clone3?|fork|vfork) resumed>).*\) += (\d+)$")


def made_in(path):
    """For each child in strace's file: how many execs its parent had
    made when it made it (which of the parent's images is its maker)."""
    done, at = {}, {}
    with open(path, **ptcheck.ENC) as f:
        for line in f:
            m = EXEC_DONE.match(line)
            if m:
                done[int(m.group(1))] = done.get(int(m.group(1)), 0) + 1
                continue
            m = MADE.match(line)
            if m:
                at[int(m.group(2))] = done.get(int(m.group(1)), 0)
    return at


def strace_view(tmp, cmd, env):
    """The processes of cmd as strace -f saw them: a multiset of
    (type, argv, maker's argv, end), the maker being the image of the
    parent that made it."""
    st = os.path.join(tmp, "strace.txt")
    r = subprocess.run(["strace", "-f", "-q", "-v", "-xx", "-s", "65536",
                        "-e", "trace=process", "-o", st, "--"] + cmd,
                       env=env, stdout=subprocess.PIPE)
    procs, order = ptcheck.parse_strace(st)
    at = made_in(st)
    imgs_of = {}
    rows = []
    for pid in order:
        p = procs[pid]
        maker = ()
        if pid != order[0] and p.parent in imgs_of:
            pimgs = imgs_of[p.parent]
            k = at.get(pid, len(pimgs))
            maker = pimgs[max(0, min(k, len(pimgs)) - 1)][1]
        if p.execs:
            imgs = [("exec", norm(a)) for a in p.execs]
        else:
            imgs = [("fork", maker)]
        for i, (kind, argv) in enumerate(imgs):
            end = p.exit if i == len(imgs) - 1 else None
            rows.append((kind, argv, maker, end))
        imgs_of[pid] = imgs
    return r.returncode, r.stdout, collections.Counter(rows)


def record_view(tmp, cmd, env, extra=()):
    cap, out = (os.path.join(tmp, "rec" + x) for x in (".ptcap", ".csv"))
    r = subprocess.run([A.proftrace, "record", "-q", "-o", cap, "--csv", out]
                       + list(extra) + ["--"] + cmd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rows = ptcheck.read_csv(out)
    return r.returncode, r.stdout, r.stderr, rows_view(rows), rows


def rows_view(rows):
    """The capture's rows as strace_view's multiset."""
    by_pid = {}
    for row in rows:
        by_pid.setdefault(row["pid"], []).append(row)
    got = []
    for row in rows:
        # the parent's image that was running when this one started
        par = None
        for p in by_pid.get(row["ppid"], []):
            if float(p["start"]) <= float(row["start"]):
                par = p
        # A row replaced by an exec has no end; the last has one.
        if row["signal"]:
            end = ("signal", int(row["signal"]))
        elif row["exit_code"]:
            end = ("exit", int(row["exit_code"]))
        else:
            end = None
        got.append((row["type"], norm(row["argv"]),
                    norm(par["argv"]) if par else (), end))
    return collections.Counter(got)



def racy(k):
    """go runs `TOOL -V=full` to learn a tool's version, once or twice:
    two goroutines may both miss its cache (cmd/go, toolID)."""
    return k[0] == "exec" and k[1][-1:] == ("-V=full",)


def daemon_view(tmp, cmd, env, extra=()):
    """cmd run with the exports of a `proftrace daemon` (bare LD_PRELOAD
    and PROFTRACE_SOCKET), as record_view sees a record run."""
    cap, out = (os.path.join(tmp, "d" + x) for x in (".ptcap", ".csv"))
    sockdir = tempfile.mkdtemp(prefix="sock", dir=tmp)
    sock = os.path.join(sockdir, "s")
    d = subprocess.run([A.proftrace, "daemon", "-o", cap, "--csv", out,
                        "--socket", sock, "--detach"] + list(extra),
                       env=env, stdout=subprocess.PIPE, text=True,
                       check=True)
    denv = dict(env)
    for line in d.stdout.splitlines():
        k, _, v = line[len("export "):].partition("=")
        denv[k] = v.strip("'")
    denv.pop("PROFTRACE_LOG", None)
    r = subprocess.run(cmd, env=denv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    subprocess.run([A.proftrace, "stop", "--socket", sock], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    # stop returns once the daemon is done, its files beside the socket
    # (the run log's name, the status, the trace directory) gone too.
    left = os.listdir(sockdir)
    check(not left, f"daemon: stop returned before {left} were removed")
    rows = ptcheck.read_csv(out)
    return r.returncode, r.stdout, r.stderr, rows_view(rows), rows


def compare(name, cmd, env=None, rc=None, fresh=None, view=None):
    """fresh(): the environment for each run, made anew (an empty
    cache, so that both runs do the same work)."""
    env = env or dict(os.environ)
    tmp = tempfile.mkdtemp(prefix="ptrace-" + name + "-")
    s_rc, s_out, truth = strace_view(tmp, cmd, fresh() if fresh else env)
    r_rc, r_out, r_err, got, rows = (view or record_view)(
        tmp, cmd, fresh() if fresh else env)
    check(rc is None or s_rc == rc, f"{name}: strace run exited {s_rc}, "
          f"expected {rc}")
    check(r_rc == s_rc, f"{name}: record exited {r_rc}, strace's run {s_rc}")
    def short(k):
        return repr(k)[:300]
    for k in set(truth) | set(got):
        if racy(k) and truth[k] and got[k]:
            truth[k] = got[k] = 1
    for k in list(truth - got)[:20]:
        check(False, f"{name}: strace saw {short(k)}, the capture has not "
              f"({(truth - got)[k]} of them)")
    for k in list(got - truth)[:20]:
        check(False, f"{name}: the capture has {short(k)}, strace saw no "
              "such")
    print(f"ptrace: {name}: {sum(truth.values())} executions in strace's "
          f"run, {sum(got.values())} in the capture")
    if not problems:
        shutil.rmtree(tmp)
    return r_out, s_out, rows


def case_busybox():
    d = tempfile.mkdtemp(prefix="ptrace-script-")
    script = os.path.join(d, "script")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nexit 8\n")
    os.chmod(script, 0o755)
    compare("busybox", ["busybox", "sh", "-c",
                        '(exit 3); busybox true; /bin/true; '
                        'busybox sh -c "exit 5"; '
                        '(busybox sleep 0.1; exit 4) & wait; '
                        'busybox sh -c "kill -TERM \\$\\$"; '
                        'busybox env busybox sh -c "(exit 6)"; '
                        + script + ' a b; '
                        'exec busybox sh -c "exit 2"'],
            rc=2)
    shutil.rmtree(d)


def case_killed_parent():
    # The inner shell starts a static program and is killed at once; the
    # program goes on, reparented, and ends 9 while the root waits.
    compare("killed-parent",
            ["busybox", "sh", "-c",
             'busybox sh -c "busybox sh -c \'busybox sleep 0.3; exit 9\' & '
             'kill -KILL \\$\\$"; busybox sleep 1; exit 0'], rc=0)


def case_stop():
    env = dict(os.environ)
    plain = subprocess.run([A.stopper], stdout=subprocess.PIPE, env=env)
    out, s_out, rows = compare("stop", [A.stopper], env=env,
                               rc=plain.returncode)
    check(out == plain.stdout, f"stop: traced, the program saw "
          f"{out!r}; untraced {plain.stdout!r}")


def go_env(tmp):
    env = dict(os.environ)
    env.update(GOCACHE=tempfile.mkdtemp(dir=tmp, prefix="cache"),
               GOPATH=os.path.join(tmp, "path"), GOPROXY="off",
               GOFLAGS="-mod=mod", HOME=tmp, CGO_ENABLED="1")
    return env


def go_module(tmp, main):
    mod = os.path.join(tmp, "mod")
    os.makedirs(mod)
    with open(os.path.join(mod, "go.mod"), "w") as f:
        f.write("module example.com/tiny\n\ngo 1.19\n")
    with open(os.path.join(mod, "main.go"), "w") as f:
        f.write(main)
    return mod


def case_go():
    if not shutil.which("go"):
        print("ptrace: SKIP go: no go command")
        return
    tmp = tempfile.mkdtemp(prefix="ptrace-go-")
    mod = go_module(tmp, 'package main\n\n// int twice(int x) { return 2 * x; }\n'
                    'import "C"\nimport "fmt"\n\nfunc main() '
                    '{ fmt.Println(C.twice(21)) }\n')
    env = go_env(tmp)
    cwd = os.getcwd()
    os.chdir(mod)
    try:
        compare("go", ["go", "build", "-a", "-o", "tiny", "."], rc=0,
                fresh=lambda: go_env(tmp))
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)


GO_EXIT = ('package main\n\nimport (\n\t"os"\n\t"os/exec"\n)\n\n'
           'func main() {\n'
           '\texec.Command("/bin/true").Run()\n'
           '\texec.Command("busybox", "sh", "-c", "exit 4").Run()\n'
           '\texec.Command("busybox", "sh", "-c", "(exit 5)").Run()\n'
           '\tos.Exit(7)\n}\n')


def go_exit_prog(name):
    """GO_EXIT built static (CGO_ENABLED=0) in a temporary directory:
    (the directory, the program, its environment); None without go."""
    if not shutil.which("go"):
        print(f"ptrace: SKIP {name}: no go command")
        return None
    tmp = tempfile.mkdtemp(prefix="ptrace-" + name + "-")
    mod = go_module(tmp, GO_EXIT)
    env = go_env(tmp)
    env["CGO_ENABLED"] = "0"
    subprocess.run(["go", "build", "-o", "prog", "."], cwd=mod, env=env,
                   check=True)
    return tmp, os.path.join(mod, "prog"), env


def case_go_exit():
    got = go_exit_prog("go-exit")
    if not got:
        return
    tmp, prog, env = got
    compare("go-exit", [prog], env=env, rc=7)
    shutil.rmtree(tmp, ignore_errors=True)


TRACER = ["busybox", "sh", "-c",
          'while read k v; do [ "$k" = TracerPid: ] && echo "$v"; done '
          '< /proc/self/status; exit 0']


def tracer_pid(extra=(), env=None, cmd=None):
    tmp = tempfile.mkdtemp(prefix="ptrace-opt-")
    r = subprocess.run([A.proftrace, "record", "-q", "-o",
                        os.path.join(tmp, "c.ptcap")] + list(extra) +
                       ["--"] + (cmd or TRACER), stdout=subprocess.PIPE,
                       env=env, text=True)
    shutil.rmtree(tmp)
    return r.returncode, r.stdout.strip()


def case_opt_out():
    rc, tp = tracer_pid()
    check(rc == 0 and tp not in ("", "0"),
          f"opt-out: traced, TracerPid reads {tp!r} (rc {rc})")
    rc, tp = tracer_pid(["--no-ptrace"])
    check(rc == 0 and tp == "0",
          f"opt-out: --no-ptrace, TracerPid reads {tp!r} (rc {rc})")
    env = dict(os.environ, PROFTRACE_PTRACE="0")
    rc, tp = tracer_pid(env=env)
    check(rc == 0 and tp == "0",
          f"opt-out: PROFTRACE_PTRACE=0, TracerPid reads {tp!r} (rc {rc})")
    # A dynamic command loads the library: let go at its exec.
    rc, tp = tracer_pid(cmd=["sh", "-c", TRACER[3]])
    check(rc == 0 and tp == "0",
          f"opt-out: a dynamic sh, TracerPid reads {tp!r} (rc {rc})")


def case_strace_outside():
    tmp = tempfile.mkdtemp(prefix="ptrace-outside-")
    cap, out = (os.path.join(tmp, "o" + x) for x in (".ptcap", ".csv"))
    r = subprocess.run(["strace", "-f", "-o", "/dev/null", "--", A.proftrace,
                        "record", "-q", "-o", cap, "--csv", out, "--",
                        "busybox", "sh", "-c", "busybox true; exit 3"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(r.returncode == 3, f"strace-outside: exited {r.returncode}, not 3")
    check(not r.stderr, f"strace-outside: said {r.stderr!r}")
    rows = ptcheck.read_csv(out)
    root = [x for x in rows if x["argv"][:2] == ["busybox", "sh"]]
    check(len(root) == 1 and root[0]["exit_code"] == "3",
          f"strace-outside: root rows {[(x['argv'], x['exit_code']) for x in root]}")
    shutil.rmtree(tmp)


def setid_run(name, prog_src, cmd_of, want):
    """A setuid-root copy of prog_src run by uid 65534, untraced and as
    record's command (cmd_of(prog): the command line): record's output
    must be the untraced one, and that must be want (root's id)."""
    if os.geteuid() != 0:
        print(f"ptrace: SKIP {name}: needs root to install a setuid-root "
              "program and run it as another user")
        return
    user = 65534
    d = tempfile.mkdtemp(prefix="ptrace-" + name + "-")
    try:
        os.chmod(d, 0o755)
        prog = os.path.join(d, "suid-exec")
        shutil.copy(prog_src, prog)
        os.chmod(prog, 0o4755)
        pt = os.path.join(d, "proftrace")
        shutil.copy(A.proftrace, pt)
        env = dict(os.environ, HOME=d, TMPDIR=d)
        if env.get("PROFTRACE_LIB"):
            lib = os.path.join(d, "libproftrace.so")
            shutil.copy(env["PROFTRACE_LIB"], lib)
            os.chmod(lib, 0o755)
            env["PROFTRACE_LIB"] = lib
        work = os.path.join(d, "out")
        os.mkdir(work)
        os.chown(work, user, user)
        pre = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
               "--clear-groups", "--"]
        cmd = cmd_of(prog)
        plain = subprocess.run(pre + cmd, env=env, cwd=work,
                               stdout=subprocess.PIPE, text=True)
        rec = subprocess.run(pre + [pt, "record", "-q", "-o",
                                    os.path.join(work, "c.ptcap"), "--"]
                             + cmd, env=env, cwd=work,
                             stdout=subprocess.PIPE, text=True)
        check(plain.stdout == want, f"{name}: untraced, id -u says "
              f"{plain.stdout!r}")
        check(rec.stdout == plain.stdout and rec.returncode == 0,
              f"{name}: under record, id -u says {rec.stdout!r} (rc "
              f"{rec.returncode}), untraced {plain.stdout!r}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def case_setid():
    setid_run("setid", A.suid_exec, lambda prog: [prog, "id -u"], "0\n")


DYN_BUSYBOX = ["bash", "-c",
               'busybox sh -c "(exit 3); busybox true; /bin/true; '
               '(busybox sleep 0.1; exit 4) & wait; echo \\$?; exit 5"; '
               'echo $?; busybox sh -c "busybox sh -c \\"kill -TERM '
               '\\\\\\$\\\\\\$\\"; exit 6"; echo $?; '
               'busybox env busybox sh -c "(exit 6)"; exit 2']


def untraced_same(name, cmd, out, env=None, rc=None):
    """What the program printed traced is what it prints untraced."""
    plain = subprocess.run(cmd, stdout=subprocess.PIPE, env=env)
    check(out == plain.stdout, f"{name}: traced, the program printed "
          f"{out!r}; untraced {plain.stdout!r}")
    check(rc is None or plain.returncode == rc,
          f"{name}: untraced, exited {plain.returncode}, not {rc}")


def case_dyn_busybox():
    out, _, _ = compare("dyn-busybox", DYN_BUSYBOX, rc=2)
    untraced_same("dyn-busybox", DYN_BUSYBOX, out, rc=2)


def case_dyn_killed_parent():
    # The inner bash starts a static program and, once it runs, kills
    # itself; the program goes on, reparented, and ends 9 while the root
    # waits.  (A parent killed before its child's exec hook ran leaves
    # the child its adoptive parent's, from its own getppid().)
    compare("dyn-killed-parent",
            ["bash", "-c",
             'bash -c "busybox sh -c \'busybox sleep 0.5; exit 9\' & '
             'sleep 0.2; kill -KILL \\$\\$"; sleep 1; exit 0'], rc=0)


def case_dyn_go_exit():
    got = go_exit_prog("dyn-go-exit")
    if not got:
        return
    tmp, prog, env = got
    cmd = ["bash", "-c", prog + '; echo $?; exit 3']
    out, _, _ = compare("dyn-go-exit", cmd, env=env, rc=3)
    untraced_same("dyn-go-exit", cmd, out, env=env, rc=3)
    shutil.rmtree(tmp, ignore_errors=True)


SPAWNER = r"""
import signal, subprocess, sys, threading, time
# another thread runs all along: the parent is threaded
t = threading.Thread(target=time.sleep, args=(0.5,))
t.start()
# and a signal comes every half millisecond, while it asks to be traced,
# is traced and is let go
got = []
signal.signal(signal.SIGALRM, lambda s, f: got.append(s))
signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
rcs = [subprocess.run(["/usr/bin/busybox", "sh", "-c", "exit %d" % i],
                      close_fds=False).returncode for i in range(10)]
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print(rcs, bool(got))
# posix_spawn (close_fds=False and a path), then vfork+exec
a = subprocess.run(["/usr/bin/busybox", "sh", "-c",
                    "(exit 2); busybox true; exit 3"], close_fds=False)
b = subprocess.run(["busybox", "sh", "-c", "(busybox sleep 0.1; exit 5) & "
                    "wait $!; exit $?"])
p = subprocess.Popen(["/usr/bin/busybox", "sh", "-c", "exit 6"],
                     close_fds=False)
print(a.returncode, b.returncode, p.wait(), flush=True)
t.join()
sys.exit(4)
"""


def case_dyn_spawn():
    cmd = ["/usr/bin/python3", "-c", SPAWNER]
    out, _, _ = compare("dyn-spawn", cmd, rc=4)
    untraced_same("dyn-spawn", cmd, out, rc=4)


SPAWN_THREADS = r"""
import subprocess, threading
rcs = []
def work(k):
    for i in range(8):
        a = subprocess.run(["/usr/bin/busybox", "sh", "-c",
                            "(exit 1); exit %d" % k], close_fds=False)
        b = subprocess.run(["/usr/bin/busybox", "sh", "-c",
                            "exit %d" % (k + 10)])
        rcs.append((a.returncode, b.returncode))
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(set(rcs)), len(rcs))
"""


def case_dyn_spawn_threads():
    cmd = ["/usr/bin/python3", "-c", SPAWN_THREADS]
    out, _, _ = compare("dyn-spawn-threads", cmd, rc=0)
    untraced_same("dyn-spawn-threads", cmd, out, rc=0)


THREAD_EXEC = r"""
import os, threading, time
def go():
    os.execv("/usr/bin/busybox", ["busybox", "sh", "-c",
                                   "(exit 3); busybox true; exit 5"])
threading.Thread(target=go).start()
time.sleep(10)
"""


def case_dyn_thread_exec():
    compare("dyn-thread-exec", ["/usr/bin/python3", "-c", THREAD_EXEC],
            rc=5)


def case_make_go():
    if not shutil.which("go") or not shutil.which("make"):
        print("ptrace: SKIP make-go: no go or make command")
        return
    tmp = tempfile.mkdtemp(prefix="ptrace-makego-")
    mod = go_module(tmp, 'package main\n\n// int twice(int x) { return 2 * x; }\n'
                    'import "C"\nimport "fmt"\n\nfunc main() '
                    '{ fmt.Println(C.twice(21)) }\n')
    with open(os.path.join(mod, "Makefile"), "w") as f:
        f.write("all:\n\tgo build -a -o tiny .\n")
    cwd = os.getcwd()
    os.chdir(mod)
    try:
        compare("make-go", ["make", "-s"], rc=0, fresh=lambda: go_env(tmp))
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)


def case_daemon():
    out, _, _ = compare("daemon", DYN_BUSYBOX, rc=2, view=daemon_view)
    untraced_same("daemon", DYN_BUSYBOX, out, rc=2)


def case_dyn_setid():
    setid_run("dyn-setid", A.suid_exec_static,
              lambda prog: ["bash", "-c", prog + " 'id -u'; echo $?"],
              "0\n0\n")


def case_dyn_opt_out():
    cmd = ["bash", "-c", "busybox sh -c '%s'; exit 0" % TRACER[3]]
    rc, tp = tracer_pid(cmd=cmd)
    check(rc == 0 and tp not in ("", "0"),
          f"dyn-opt-out: traced, TracerPid reads {tp!r} (rc {rc})")
    rc, tp = tracer_pid(["--no-ptrace"], cmd=cmd)
    check(rc == 0 and tp == "0",
          f"dyn-opt-out: --no-ptrace, TracerPid reads {tp!r} (rc {rc})")
    env = dict(os.environ, PROFTRACE_PTRACE="0")
    rc, tp = tracer_pid(env=env, cmd=cmd)
    check(rc == 0 and tp == "0",
          f"dyn-opt-out: PROFTRACE_PTRACE=0, TracerPid reads {tp!r} "
          f"(rc {rc})")


def case_dyn_stop():
    cmd = ["bash", "-c", A.stopper + "; echo $?"]
    out, _, _ = compare("dyn-stop", cmd, rc=0)
    untraced_same("dyn-stop", cmd, out, rc=0)


EXEC_FAIL = r"""
import os, subprocess, sys, threading, time
def tracer():
    with open("/proc/self/status") as f:
        return [l.split()[1] for l in f if l.startswith("TracerPid:")][0]
bb = sys.argv[1]
for threaded in (False, True):
    if threaded:
        t = threading.Thread(target=time.sleep, args=(0.3,))
        t.start()
    try:
        os.execv(bb, ["busybox", "true"])
    except OSError as e:
        print("exec failed", e.errno, "TracerPid", tracer(), flush=True)
    r = subprocess.run(["busybox", "sh", "-c", "exit 3"])
    print("child", r.returncode, "TracerPid", tracer(), flush=True)
t.join()
sys.exit(5)
"""


def case_dyn_exec_fail():
    d = tempfile.mkdtemp(prefix="ptrace-execfail-")
    bb = os.path.join(d, "busybox")
    shutil.copy(shutil.which("busybox"), bb)
    os.chmod(bb, 0o644)         # readable, not executable: EACCES
    cmd = ["/usr/bin/python3", "-c", EXEC_FAIL, bb]
    out, _, _ = compare("dyn-exec-fail", cmd, rc=5)
    untraced_same("dyn-exec-fail", cmd, out, rc=5)
    shutil.rmtree(d)



def chroot_root():
    """A root with a dynamic shell, /bin/true and their libraries, and
    neither the library nor /proc."""
    root = tempfile.mkdtemp(prefix="ptrace-chroot-")
    os.chmod(root, 0o755)
    progs = ["/bin/sh", "/bin/true"]
    libs = set()
    for prog in progs:
        out = subprocess.run(["ldd", prog], stdout=subprocess.PIPE,
                             text=True, env={"PATH": "/usr/bin:/bin"}).stdout
        libs.update(w for w in out.split() if w.startswith("/"))
    for path in progs + sorted(libs):
        os.makedirs(root + os.path.dirname(path), exist_ok=True)
        shutil.copy(path, root + path)
    return root


def case_chroot():
    """(root only) chroot into a root that hides the library and /proc:
    the shell chroot execs, and what it runs, as strace sees them; the
    library asks the collector to trace chroot's process before the
    root changes."""
    if os.geteuid() != 0:
        print("ptrace: SKIP chroot: needs root")
        sys.exit(77)
    root = chroot_root()
    inner = ["/bin/sh", "-c", '/bin/true; /bin/sh -c "exit 2"; exit 3']
    out, _, _ = compare("chroot", ["chroot", root] + inner, rc=3)
    untraced_same("chroot", ["chroot", root] + inner, out, rc=3)
    cmd = ["sh", "-c", 'chroot "$0" /bin/sh -c \'/bin/true; (exit 4); '
           '/bin/sh -c "exit 2"; exit 3\'; echo $?; exit 5', root]
    out, _, _ = compare("chroot-under-sh", cmd, rc=5)
    untraced_same("chroot-under-sh", cmd, out, rc=5)
    compare("chroot-daemon", cmd, rc=5, view=daemon_view)
    shutil.rmtree(root)


CASES = {"busybox": case_busybox, "killed-parent": case_killed_parent,
         "stop": case_stop, "go": case_go, "go-exit": case_go_exit,
         "opt-out": case_opt_out, "strace-outside": case_strace_outside,
         "setid": case_setid, "dyn-busybox": case_dyn_busybox,
         "dyn-killed-parent": case_dyn_killed_parent,
         "dyn-go-exit": case_dyn_go_exit, "dyn-spawn": case_dyn_spawn,
         "make-go": case_make_go, "daemon": case_daemon,
         "dyn-setid": case_dyn_setid, "dyn-opt-out": case_dyn_opt_out,
         "dyn-exec-fail": case_dyn_exec_fail, "dyn-stop": case_dyn_stop,
         "dyn-spawn-threads": case_dyn_spawn_threads,
         "dyn-thread-exec": case_dyn_thread_exec, "chroot": case_chroot}


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--stopper", required=True)
    ap.add_argument("--suid-exec", required=True)
    ap.add_argument("--suid-exec-static", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    A = ap.parse_args()
    A.proftrace = os.path.abspath(A.proftrace)
    A.stopper = os.path.abspath(A.stopper)
    A.suid_exec = os.path.abspath(A.suid_exec)
    A.suid_exec_static = os.path.abspath(A.suid_exec_static)
    if not shutil.which("busybox") or not shutil.which("strace"):
        print("ptrace: SKIP: busybox or strace is missing")
        sys.exit(77)
    CASES[A.case]()
    if problems:
        sys.exit(1)
    print(f"ptrace: {A.case}: ok")


if __name__ == "__main__":
    main()
