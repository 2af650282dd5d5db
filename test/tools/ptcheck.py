#!/usr/bin/env python3
"""Run a command under proftrace and strace at once; compare what each saw.

    ptcheck.py --proftrace BIN [--expect-rc N] [--keep DIR] [--rounds N]
               [--userns-unless-root] -- COMMAND...

The command runs as `proftrace record -- strace -f ... -- COMMAND`, so both
observers see the very same processes, with the same pids.  strace's view is
the ground truth: every successful execve (pid, argv, parent), every process
that was forked and never exec'd, and how each process ended.  The check
fails, naming the difference, when proftrace's CSV misses any of them, has
one strace did not see, or disagrees on a parent, an argv or an exit status.

With --outer record or --outer daemon, the whole runs under a second
collector (`proftrace record -- ...`, or after `eval "$(proftrace daemon
--detach)"`): the inner capture must still match strace exactly once each,
and the outer one must hold the inner `proftrace record` with the
command's exit status, and nothing of what ran below it but the program
it started (doc/manual.md, "Two collectors").

With --userns-unless-root, the command makes a user namespace when not
run as root (bwrap, unshare -r): where the machine refuses one (a chroot,
Ubuntu's AppArmor: userns.py), the check is skipped (exit 77).

Processes that run inside a program proftrace cannot enter (a static
executable) are excused exactly as the README says: their fork-only
children are invisible, and their own end is known from the parent's wait.
"""

import argparse
import csv
import os
import re
import shlex
import subprocess
import sys
import tempfile

ENC = dict(encoding="utf-8", errors="surrogateescape")


def fail(msg):
    print("ptcheck: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def unhex(s):
    """strace -xx prints every byte of a string as \\xNN."""
    return bytes.fromhex(s.replace("\\x", "")).decode(**ENC)


class Proc:
    def __init__(self, pid):
        self.pid = pid
        self.parent = None
        self.execs = []        # argv lists of successful execs, in order
        self.paths = []        # the path each exec was given
        self.exit = None       # ("exit", code) or ("signal", signo)
        self.spawn_child = False
        self.failed_argv = None  # argv of its last failed exec


SIGNALS = {"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5,
           "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10,
           "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13, "SIGALRM": 14,
           "SIGTERM": 15}

STR = r'"((?:\\x[0-9a-f]{2})*)"'
EXEC_RE = re.compile(r'^(\d+) +execve(?:at)?\((?:[^,"]+, )?' + STR + r', \[(.*?)\]')
# --decode-pids=pidns: a pid of another pid namespace (what fork returns
# inside bwrap --unshare-pid) comes with strace's own pid for it.
RET_RE = re.compile(r"= (-?\d+)(?: (\w+))?(?: /\* (\d+) in strace's PID NS \*/)?")
CLONE_RE = re.compile(r'^(\d+) +(clone3?|vfork|fork)\(')
RESUMED_RE = re.compile(r'^(\d+) +<\.\.\. (\w+) resumed>')
EXITED_RE = re.compile(r'^(\d+) +\+\+\+ exited with (\d+) \+\+\+')
SUPERSEDED_RE = re.compile(r'^(\d+) +\+\+\+ superseded by execve in pid (\d+)')
KILLED_RE = re.compile(r'^(\d+) +\+\+\+ killed by (SIG\w+)')


def parse_strace(path):
    procs = {}
    threads = {}               # tid of a thread -> pid of its process
    pending = {}               # pid -> (syscall, text so far)
    superseded = {}            # leader pid -> tid whose exec replaced it
    order = []
    known = set()              # pids a fork-type call returned

    def new_pid(pid):
        # A pid strace shows before the call that made it returned: the
        # thread of a CLONE_THREAD call still unfinished in its process
        # (its exit_group can end the process before the call returns
        # the thread's id, which then comes back as "?").
        if pid in procs or pid in threads or pid in known:
            return
        makers = [(p, "CLONE_THREAD" in text)
                  for p, (call, text) in pending.items()
                  if call in ("clone", "clone3", "fork", "vfork")]
        # Only where nothing else could have made it.
        if len(makers) == 1 and makers[0][1]:
            threads[pid] = threads.get(makers[0][0], makers[0][0])

    def proc(pid):
        if pid not in procs:
            procs[pid] = Proc(pid)
            order.append(pid)
        return procs[pid]

    def finish(pid, call, text):
        # After the call's closing parenthesis (not a failure's
        # "(No such file or directory)").
        k = text.rfind(") = ")
        m = RET_RE.search(text[k + 1:] if k >= 0 else
                          text[text.rfind(")"):] if ")" in text else text)
        if not m:
            return
        ret = int(m.group(3) or m.group(1))
        if call in ("clone", "clone3", "fork", "vfork"):
            if ret > 0:
                known.add(ret)
            if ret > 0 and "CLONE_THREAD" in text:
                threads[ret] = threads.get(pid, pid)
            elif ret > 0:
                proc(ret).parent = threads.get(pid, pid)
                # posix_spawn's own child: CLONE_VM|CLONE_VFORK via clone3
                proc(ret).spawn_child = (call == "clone3" and
                                         "CLONE_VFORK" in text)
        elif call in ("execve", "execveat"):
            em = EXEC_RE.match(text)
            if em:
                argv = [unhex(a) for a in re.findall(STR, em.group(3))]
                # An exec in a thread makes the thread the process.
                p = proc(threads.get(pid, pid))
                if ret != 0:
                    p.failed_argv = argv
                    return
                p.execs.append(argv)
                p.paths.append(unhex(em.group(2)))

    with open(path, **ENC) as f:
        for line in f:
            line = line.rstrip("\n")
            m = EXITED_RE.match(line)
            if m:
                new_pid(int(m.group(1)))
                proc(int(m.group(1))).exit = ("exit", int(m.group(2)))
                continue
            m = KILLED_RE.match(line)
            if m:
                new_pid(int(m.group(1)))
                proc(int(m.group(1))).exit = ("signal", SIGNALS.get(m.group(2), -1))
                continue
            m = SUPERSEDED_RE.match(line)
            if m:
                # A thread's exec: the leader takes its place and its call
                superseded[int(m.group(1))] = int(m.group(2))
                continue
            m = RESUMED_RE.match(line)
            if m:
                pid = int(m.group(1))
                if pid not in pending and pid in superseded:
                    tid = superseded.pop(pid)
                    threads[tid] = pid
                    pending[pid] = pending.pop(tid, (m.group(2), ""))
                call, text = pending.pop(pid, (m.group(2), ""))
                finish(pid, call, text + line[m.end():])
                continue
            m = re.match(r'^(\d+) +(\w+)\(', line)
            if not m:
                continue
            pid, call = int(m.group(1)), m.group(2)
            new_pid(pid)
            proc(pid)
            m = re.search(r' <pid changed to (\d+) \.\.\.>$', line)
            if m:               # a thread's exec, resumed by the leader
                pending[int(m.group(1))] = (call, line[:m.start()])
                threads[pid] = int(m.group(1))
                continue
            if line.endswith("<unfinished ...>"):
                pending[pid] = (call, line[:-len("<unfinished ...>")])
            else:
                finish(pid, call, line)
    order = [p for p in order if p not in threads]
    return procs, order


def static_exec(path):
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return False
    except OSError:
        return False
    out = subprocess.run(["readelf", "-lW", path], capture_output=True,
                         text=True).stdout
    return "Program Headers" in out and "INTERP" not in out


def read_csv(path):
    csv.field_size_limit(1 << 30)   # a 1 MiB argument list is one field
    with open(path, newline="", **ENC) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["argv"] = shlex.split(r["command"])
        r["pid"] = int(r["pid"])
        r["ppid"] = int(r["ppid"]) if r["ppid"] else None
    return rows


def check_outer(a, outer, procs):
    """The outer capture: the inner record, and nothing below its child."""
    got = subprocess.run([a.proftrace, "convert", outer, "-f", "csv"],
                         capture_output=True, **ENC)
    if got.returncode != 0:
        return ["outer capture: convert failed: " + got.stderr]
    path = os.path.join(os.path.dirname(outer), "outer.csv")
    with open(path, "w", **ENC) as f:
        f.write(got.stdout)
    rows = read_csv(path)
    problems = []
    rec = [r for r in rows if r["argv"][1:2] == ["record"]]
    if len(rec) != 1 or rec[0]["exit_code"] != str(a.expect_rc):
        problems.append("outer capture: expected the inner record once, "
                        f"ending {a.expect_rc}, got "
                        f"{[(r['argv'][:2], r['exit_code']) for r in rec]}")
    for r in rows:
        if r["pid"] in procs:
            problems.append(f"outer capture has pid {r['pid']} "
                            f"{r['argv'][:3]}, below the inner collector")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--expect-rc", type=int, default=0)
    ap.add_argument("--keep")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--outer", choices=("record", "daemon"))
    ap.add_argument("--rounds", type=int, default=1,
                    help="run and check the command this many times")
    ap.add_argument("--userns-unless-root", action="store_true")
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    if a.userns_unless_root and os.geteuid() != 0:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import userns
        why = userns.refused()
        if why:
            print("SKIP: %s needs a user namespace as uid %d: %s"
                  % (" ".join(a.command), os.geteuid(), why))
            sys.exit(77)
    for _ in range(a.rounds):
        check_once(a)


def check_once(a):
    tmp = a.keep or tempfile.mkdtemp(prefix="ptcheck-")
    os.makedirs(tmp, exist_ok=True)
    cap, out, st = (os.path.join(tmp, n) for n in ("cap.ptcap", "out.csv", "strace.txt"))
    for p in (cap, out, st):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    cmd = [a.proftrace, "record", "--quiet", "-o", cap, "--csv", out, "--",
           "strace", "-f", "-q", "-v", "-xx", "-s", "16777216", "--decode-pids=pidns",
           "-e", "trace=process", "-o", st, "--"] + a.command
    outer = os.path.join(tmp, "outer.ptcap")
    if os.path.exists(outer):
        os.unlink(outer)
    if a.outer == "record":
        cmd = [a.proftrace, "record", "--quiet", "-o", outer, "--"] + cmd
    elif a.outer == "daemon":
        cmd = ["sh", "-c", 'p=$0 o=$1; shift; '
               'eval "$("$p" daemon -o "$o" --socket "$o.sock" --detach)" || exit 97; '
               '"$@"; rc=$?; "$p" stop >/dev/null || exit 98; exit $rc',
               a.proftrace, outer] + cmd
    r = subprocess.run(cmd, env=env)
    if r.returncode != a.expect_rc:
        fail(f"exit status {r.returncode}, expected {a.expect_rc}: {shlex.join(cmd)}")

    # The capture converts to the same CSV again, post hoc.
    again = subprocess.run([a.proftrace, "convert", cap, "-f", "csv"],
                           capture_output=True)
    if again.returncode != 0:
        fail("convert failed: " + again.stderr.decode(**ENC))
    with open(out, "rb") as f:
        if f.read() != again.stdout:
            fail("convert's CSV differs from record's --csv")

    rows = read_csv(out)
    procs, order = parse_strace(st)
    tracer = [r for r in rows if r["type"] == "exec" and r["argv"][:1] == ["strace"]]
    if len(tracer) != 1:
        fail(f"expected one strace execution, found {len(tracer)}")
    strace_pid = tracer[0]["pid"]
    # strace itself, and the children it forks to probe ptrace, which it
    # does not trace, are not part of the command.
    rows = [r for r in rows if r["pid"] != strace_pid and
            not (r["ppid"] == strace_pid and r["pid"] not in procs)]

    by_pid = {}
    failed_spawns = {}         # ppid -> rows of failed posix_spawn children
    for r in rows:
        by_pid.setdefault(r["pid"], []).append(r)
        if r["pid"] == 0:
            failed_spawns.setdefault(r["ppid"], []).append(r)

    problems = []
    seen = set()
    root = order[0] if order else None
    for pid in order:
        p = procs[pid]
        parent = p.parent if pid != root else strace_pid
        pp = procs.get(p.parent)
        # A child forked inside a static program is invisible: excused.
        in_static = pp is not None and pp.paths and static_exec(pp.paths[-1])
        recs = by_pid.get(pid, [])
        execs = [r for r in recs if r["type"] == "exec"]
        forks = [r for r in recs if r["type"] == "fork"]
        if not p.execs:
            if in_static:
                seen.update(id(r) for r in recs)
                continue
            # The child of a posix_spawn whose exec (or file action)
            # failed ends inside glibc, which reaps it and does not
            # return its pid: a fork row of pid 0 with the argv tried.
            if p.spawn_child:
                cand = failed_spawns.get(parent, [])
                if not cand:
                    problems.append(f"pid {pid}: failed posix_spawn child "
                                    f"(tried {p.failed_argv}) not recorded")
                    continue
                r = cand.pop(0)
                seen.add(id(r))
                if r["type"] != "fork" or (p.failed_argv is not None and
                                           r["argv"] != p.failed_argv):
                    problems.append(f"pid {pid}: failed posix_spawn child "
                                    f"tried {p.failed_argv}, recorded "
                                    f"{r['type']} {r['argv']}")
                if p.exit and (not r["exit_code"] or
                               ("exit", int(r["exit_code"])) != p.exit):
                    problems.append(f"pid {pid}: failed posix_spawn child "
                                    f"ended {p.exit}, recorded "
                                    f"{r['exit_code']!r}")
                continue
            if len(forks) != 1 or execs:
                problems.append(f"pid {pid}: forked, never exec'd: expected one "
                                f"fork execution, got {[(r['type'], r['argv']) for r in recs]}")
                continue
            want = [forks[0]]
        else:
            got = [r["argv"] for r in execs]
            if got != p.execs:
                problems.append(f"pid {pid}: execs {p.execs!r}, recorded {got!r}")
                continue
            if forks:
                problems.append(f"pid {pid}: exec'd, but also a fork execution")
            want = execs
        for r in want:
            seen.add(id(r))
            # fexecve and execveat(dirfd) name a descriptor, not a file.
            if r["exe"].startswith("/dev/fd/"):
                problems.append(f"pid {pid} ({r['argv'][:1]}): exe is "
                                f"{r['exe']!r}, not the program's path")
            if r["ppid"] != parent:
                problems.append(f"pid {pid} ({r['argv'][:1]}): parent {parent}, "
                                f"recorded ppid {r['ppid']}")
        last = want[-1]
        for r in want[:-1]:
            if r["exit_code"] or r["signal"]:
                problems.append(f"pid {pid}: image replaced by exec has "
                                f"exit {r['exit_code']!r} signal {r['signal']!r}")
        if p.exit:
            kind, val = p.exit
            got = (("signal", int(last["signal"])) if last["signal"] else
                   ("exit", int(last["exit_code"])) if last["exit_code"] else None)
            if got != p.exit:
                problems.append(f"pid {pid} ({last['argv'][:1]}): ended {p.exit}, "
                                f"recorded {got}")
    for r in rows:
        if id(r) not in seen:
            problems.append(f"recorded, not in strace: pid {r['pid']} {r['type']} "
                            f"{r['argv'][:4]}")
    if a.outer:
        problems += check_outer(a, outer, procs)
    if problems:
        for m in problems[:40]:
            print("ptcheck: " + m, file=sys.stderr)
        fail(f"{len(problems)} differences (files kept in {tmp})")
    n_exec = sum(len(p.execs) for p in procs.values())
    print(f"ptcheck: ok: {len(procs)} processes, {n_exec} execs match strace")
    if not a.keep:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
