#!/usr/bin/env python3
"""proftrace top and record --progress against real runs
(doc/man/proftrace-top.1.scd).

The builds are make -j2 over steps known by construction: `cat gate-X`
blocks until the test opens the FIFO gate-X for writing, so which steps
run at each moment is decided by the test, not by timing; the estimate
uses named sleeps, whose lengths are known.  The screen is read as a
terminal shows it, with tmux capture-pane; the runs themselves are read
back with convert -f csv.

  -k screen    top under tmux: the running steps and counts, elapsed
               times within what the test's own clock allows, `q` quits
               and the run goes on and completes as an unwatched one does
  -k ended     a run that ends while watched: top says so, prints the
               summary
  -k estimate  two kept runs; a third, half-way, shows an estimate within
               30 % of the time it really had left; none without history
  -k pace      the estimate follows this run's pace: two kept runs at
               speeds 1 and 1.25, a third slowed by 1.6 (sleeps of lengths
               known by construction): within 15 % of the time really
               left at half of the run, within 10 % at three quarters
  -k progress  record --progress=1 in a pipe: lines on stderr, within 100
               characters, stdout byte-identical to the untraced
               command's
  -k opam      packages (opam's OPAM_PACKAGE_NAME and _VERSION) done and
               running, in top --once and in --progress's lines
  -k static    static programs, which record traces from outside
               (ptrace): listed and counted as those that load the library
  -k static-dyn  the same, started by a dynamic shell (/bin/sh)
  -k daemon    a daemon, named by its socket: what runs against it
  -k refuse    no run: one line, exit 1; another user's run: refused
               (as root only)
  -k cpu       make -j2 of two jobs that run short CPU-bound programs one
               after another: the CPU in use on the screen and in --once
               against what the capture says they used
  -k exit      the end line carries the command's exit status (3) in each
               of 10 watched runs, and the signal that killed one
  -k first     the first screen: the command listed at once, not after the
               snapshot's first second
  -k runs      two runs at once, top without RUN: both listed, a key
               watches either
  -k labels    compilers of long command lines on an 80-column screen:
               each row names its program and source file (as its
               /proc/PID/cmdline has them); collapsed, the tree keeps
               the compilers in sight and hides the drivers between
"""

import argparse
import csv
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402

PT = None
# The runs a failing test must not leave behind: (directory, record).
RUNS = []


def fail(msg):
    sys.exit("FAIL: " + msg)


def release_all():
    """Let every gated step end, so that no make waits forever on a FIFO
    after a failure, and each record finishes (and removes its run
    directory) rather than being killed."""
    for d, p in RUNS:
        end = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < end:
            for g in os.listdir(d):
                if g.startswith("gate-"):
                    open_gate(d, g[5:], 0)
            time.sleep(0.05)
        if p.poll() is None:
            p.kill()
            p.wait()


def wait_until(pred, what, timeout=60, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    fail("timed out waiting for " + (what() if callable(what) else what))


class Tmux:
    def __init__(self, d):
        self.name = "pt-top-%d" % os.getpid()
        self.d = d

    def start(self, cmd, env=None):
        e = dict(env or os.environ)
        e.pop("TMUX", None)
        subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null",
                        "new-session", "-d", "-x", "80", "-y", "24",
                        "sh -c '%s; echo TOP-EXITED $?; sleep 600'" % cmd],
                       env=e, check=True)

    def screen(self):
        # -J: a line the terminal wrapped comes back whole.
        return subprocess.run(["tmux", "-L", self.name, "capture-pane",
                               "-p", "-J"], capture_output=True, text=True,
                              check=True).stdout

    def keys(self, *k):
        subprocess.run(["tmux", "-L", self.name, "send-keys"] + list(k),
                       check=True)

    def kill(self):
        subprocess.run(["tmux", "-L", self.name, "kill-server"],
                       capture_output=True)


LONG = "an-empty-file-whose-name-is-long-enough-to-pass-the-edge-of-an-" \
       "eighty-column-terminal"


def gated_build(d, steps, long_step=None):
    """A Makefile whose step X is `cat gate-X`, with gate-X a FIFO; the
    long step also reads an empty file of a long name."""
    open(os.path.join(d, LONG), "w").close()
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: %s\n" % " ".join(steps))
        for s in steps:
            os.mkfifo(os.path.join(d, "gate-" + s))
            f.write("%s:\n\tcat gate-%s%s\n"
                    % (s, s, " " + LONG if s == long_step else ""))


def open_gate(d, s, timeout=60):
    """Let step s end: opening its FIFO for writing lets its cat open it,
    closing gives it EOF.  Waits for the step to have started (a reader),
    up to timeout; returns whether it was let go."""
    end = time.monotonic() + timeout
    while True:
        try:
            os.close(os.open(os.path.join(d, "gate-" + s),
                             os.O_WRONLY | os.O_NONBLOCK))
            return True
        except OSError:
            if time.monotonic() > end:
                return False
            time.sleep(0.05)


def quick_env():
    """The environment for a top whose look is timed: without meson's
    MALLOC_PERTURB_, which makes reading the kept runs' captures cost ten
    times the CPU, seconds on a loaded machine, by which time the run
    looked at may have ended."""
    e = dict(os.environ)
    e.pop("MALLOC_PERTURB_", None)
    return e


def csv_rows(cap):
    out = subprocess.run([PT, "convert", "-f", "csv", "-o", "-", cap],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def shape(rows):
    """What a run did, without what differs from run to run: commands,
    their parents' commands, exit codes."""
    by_pid = {r["pid"]: r for r in rows}
    return sorted((r["command"],
                   by_pid[r["ppid"]]["command"] if r["ppid"] in by_pid
                   else "", r["exit_code"]) for r in rows)


def running_rows(screen):
    """The rows under ELAPSED PID COMMAND: (seconds, pid, command)."""
    rows, on = [], False
    for line in screen.splitlines():
        if "ELAPSED" in line and "COMMAND" in line:
            on = True
            continue
        if on:
            m = re.match(r"^\s*([\d.]+) (ms|s)\s+(\d+)\s+(.*)$", line)
            if not m:
                break
            v = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
            rows.append((v, int(m.group(3)), m.group(4).strip()))
    return rows


def check_pids(rows):
    """A listed pid is the process that runs the command shown (cut at
    the screen's edge)."""
    for v, pid, c in rows:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")[:-1]
        line = " ".join(a.decode() for a in argv)
        if " | " in c:
            # A line too long for the screen: its label first, the
            # program and what it works on, then the line, cut.
            label, c = c.split(" | ", 1)
            words = label.split(" ")
            if words[0] != os.path.basename(argv[0].decode()) or \
                    not all(w.encode() in argv for w in words[1:]):
                fail("pid %d runs %r, labelled %r" % (pid, line, label))
        if not line.startswith(c) or (len(c) < 40 and line != c):
            fail("pid %d runs %r, listed as %r" % (pid, line, c))


def counts(screen):
    m = re.search(r"(\d+) started\s+(\d+) running\s+(\d+) finished\s+"
                  r"(\d+) failed", screen)
    if not m:
        fail("no counts on the screen:\n" + screen)
    return tuple(int(x) for x in m.groups())


def wait_for_run(cap):
    """Until the run writing cap can be watched."""
    wait_until(lambda: subprocess.run([PT, "top", "--once", cap],
                                      capture_output=True).returncode == 0,
               "the run of " + cap)


def record(d, cap, extra=(), env=None):
    p = subprocess.Popen([PT, "record", "-q", "-o", cap] + list(extra) +
                         ["--", "make", "-s", "-j2"], cwd=d,
                         env=env or untraced_env(),
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    RUNS.append((d, p))
    return p


def test_screen(d):
    steps = ["alpha", "bravo", "charlie", "delta"]
    # The same build unwatched first: what the watched run must equal.
    plain = os.path.join(d, "plain")
    os.mkdir(plain)
    gated_build(plain, steps, "charlie")
    p = record(plain, os.path.join(plain, "c.ptcap"))
    for s in steps:
        open_gate(plain, s)
    if p.wait() != 0:
        fail("unwatched record: %s" % p.stderr.read())
    want = shape(csv_rows(os.path.join(plain, "c.ptcap")))

    w = os.path.join(d, "watched")
    os.mkdir(w)
    gated_build(w, steps, "charlie")
    cap = os.path.join(w, "c.ptcap")
    t_launch = time.monotonic()
    p = record(w, cap)
    tm = Tmux(d)
    try:
        wait_for_run(cap)
        tm.start("%s top %s" % (PT, cap))

        def shows(names):
            def f():
                s = tm.screen()
                got = sorted(c.split()[1][5:] for _, _, c in
                             running_rows(s) if c.startswith("cat "))
                return s if got == names else None
            return f

        s1 = wait_until(shows(["alpha", "bravo"]),
                        lambda: "alpha and bravo on:\n" + tm.screen())
        t_seen = time.monotonic()
        rows = running_rows(s1)
        if not any(c == "make -s -j2" for _, _, c in rows):
            fail("make is not listed as running:\n" + s1)
        if counts(s1)[1:3] != (3, 0):
            fail("counts %r, want 3 running, 0 finished:\n%s"
                 % (counts(s1), s1))
        for v, pid, c in rows:
            # Started after record was launched and running when seen,
            # the snapshot at most a second or two old.
            if not (0 <= v <= t_seen - t_launch + 0.5):
                fail("%s: elapsed %.1f s, but record started %.1f s ago"
                     % (c, v, t_seen - t_launch))
        check_pids(rows)
        # --once sees the same.
        once = subprocess.run([PT, "top", "--once", cap],
                              capture_output=True, text=True)
        if once.returncode != 0 or sorted(
                c for _, _, c in running_rows(once.stdout)
                if c.startswith("cat ")) != ["cat gate-alpha",
                                             "cat gate-bravo"]:
            fail("top --once: rc %d\n%s%s" % (once.returncode, once.stdout,
                                              once.stderr))
        for line in once.stdout.splitlines():
            if len(line) > 100 or "\033" in line:
                fail("--once line not plain text: %r" % line)

        open_gate(w, "alpha")
        s2 = wait_until(shows(["bravo", "charlie"]),
                        lambda: "bravo and charlie on:\n" + tm.screen())
        if counts(s2)[1:3] != (3, 1):
            fail("after alpha: counts %r, want 3 running, 1 finished:\n%s"
                 % (counts(s2), s2))
        if "cat gate-alpha" not in s2.split("slowest finished")[-1]:
            fail("alpha is not among the slowest finished:\n" + s2)
        check_pids(running_rows(s2))
        # The long command line is cut at the edge, not wrapped: its
        # row is a row of the table still.
        long_rows = [r for r in running_rows(s2) if "gate-charlie" in r[2]]
        if not long_rows or LONG in long_rows[0][2]:
            fail("the long command line is not cut at 80 columns:\n" + s2)
        for line in s2.splitlines():
            if len(line.rstrip()) > 80:
                fail("a line the 80-column terminal wrapped: %r" % line)
        # Pause: the screen stays; then sort by pid; then q.
        tm.keys("t")
        s3 = wait_until(lambda: (lambda s: s if "as a tree" not in s
                                 else None)(tm.screen()), "flat view")
        if any(c.startswith("  ") for _, _, c in running_rows(s3)):
            fail("flat view still indents:\n" + s3)
        # s: sorted by pid, in that order; space: paused, and says so.
        tm.keys("s")
        s4 = wait_until(lambda: (lambda s: s if "sorted by pid" in s
                                 else None)(tm.screen()), "sort by pid")
        pids = [pid for _, pid, _ in running_rows(s4)]
        if pids != sorted(pids):
            fail("sorted by pid, but %r:\n%s" % (pids, s4))
        tm.keys("Space")
        wait_until(lambda: "PAUSED" in tm.screen(), "the pause")
        tm.keys("Space")
        wait_until(lambda: "PAUSED" not in tm.screen(), "the pause's end")
        dumb_terminal(cap)
        # A watcher killed outright leaves the run as it was.
        k = subprocess.Popen([PT, "top", cap], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE)
        k.stdout.read(100)
        k.kill()
        k.wait()
        tm.keys("q")
        wait_until(lambda: "TOP-EXITED 0" in tm.screen(),
                   lambda: "top to quit on q:\n" + tm.screen())
        if p.poll() is not None:
            fail("the run ended when top quit")
        for s in ["bravo", "charlie", "delta"]:
            open_gate(w, s)
        if p.wait() != 0:
            fail("watched record: %s" % p.stderr.read())
    finally:
        tm.kill()
        release_all()
    got = shape(csv_rows(cap))
    if got != want:
        fail("the watched run differs from the unwatched one:\n%r\n%r"
             % (got, want))
    print("screen: steps, counts and elapsed times right; q quits; the "
          "watched run equals the unwatched one (%d rows)" % len(got))


def dumb_terminal(cap):
    """TERM=dumb on a terminal: frames one after another, plain text,
    no control sequence."""
    import pty
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execv(PT, [PT, "top", cap])
    out, end = b"", time.monotonic() + 30
    while out.count(b"ELAPSED") < 2 and time.monotonic() < end:
        try:
            out += os.read(fd, 65536)
        except OSError:
            break
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    os.close(fd)
    if out.count(b"ELAPSED") < 2:
        fail("TERM=dumb: not two frames: %r" % out)
    if b"\033" in out:
        fail("TERM=dumb: control sequences: %r" % out)
    if b"cat gate-bravo" not in out:
        fail("TERM=dumb: the steps are not shown: %r" % out)


def test_ended(d):
    gated_build(d, ["one", "two"])
    # Two steps that fail first, their errors ignored by make: one
    # exits 3, the other is killed by SIGKILL.
    with open(os.path.join(d, "Makefile")) as f:
        mk = f.read()
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(mk.replace("all: ", "all: bad1 bad2 ") +
                "bad1:\n\t-sh -c 'exit 3'\n"
                "bad2:\n\t-sh -c 'kill -9 $$$$'\n")
    cap = os.path.join(d, "c.ptcap")
    p = record(d, cap)
    tm = Tmux(d)
    try:
        wait_for_run(cap)
        tm.start("%s top %s" % (PT, cap))
        s = wait_until(lambda: (lambda s: s if "cat gate-two" in s and
                                "cat gate-one" in s else None)(tm.screen()),
                       lambda: "the steps:\n" + tm.screen())
        started, running, finished, failed = counts(s)
        if failed != 2 or finished != 2 or running != 3:
            fail("counts %r, want 3 running, 2 finished, 2 failed:\n%s"
                 % (counts(s), s))
        open_gate(d, "one")
        open_gate(d, "two")
        if p.wait() != 0:
            fail("record: %s" % p.stderr.read())
        s = wait_until(lambda: (lambda s: s if "TOP-EXITED" in s else None)(
            tm.screen()), lambda: "top to end:\n" + tm.screen())
    finally:
        tm.kill()
        release_all()
    n = len(csv_rows(cap))
    if "the run ended" not in s or "TOP-EXITED 0" not in s:
        fail("top did not say the run ended:\n" + s)
    if not re.search(r"\b%d executions" % n, s):
        fail("no summary of the %d executions:\n%s" % (n, s))
    print("ended: top says so and prints the summary (%d executions)" % n)


def test_estimate(d):
    with open(os.path.join(d, "Makefile"), "w") as f:
        # Two chains side by side: 1.5+2+2.5+1 = 7 s, 2+2.5+1.5 = 6 s.
        f.write("all: a4 b3\n"
                "a1:\n\tsleep 1.5\na2: a1\n\tsleep 2\n"
                "a3: a2\n\tsleep 2.5\na4: a3\n\tsleep 1\n"
                "b1:\n\tsleep 2\nb2: b1\n\tsleep 2.5\n"
                "b3: b2\n\tsleep 1.5\n")
    keep = os.path.join(d, "keep")
    for i in range(3):
        cap = os.path.join(d, "run%d.ptcap" % i)
        p = record(d, cap, ["--keep", keep, "--progress=1"])
        t0 = time.monotonic()
        time.sleep(3.5)
        once = subprocess.run([PT, "top", "--once", cap],
                              capture_output=True, text=True,
                              env=quick_env())
        # The estimate is as of its drawing, the last thing top does.
        real_now = time.time()
        if p.wait() != 0:
            fail("record: %s" % p.stderr.read())
        lines = [x for x in p.stderr.read().splitlines()
                 if x.startswith("proftrace: ") and "running" in x]
        # --progress's lines carry the same estimate once there is
        # history, and none before.
        if not lines or any(("left" in x or "overdue" in x) != (i > 0)
                            for x in lines):
            fail("run %d: progress lines %r" % (i, lines))
        out = once.stdout
        m = re.search(r"(about|overdue by) ([\d.]+) (ms|s)(?: left)? \("
                      r"(?:(?:\+/- [\d.]+ (?:ms|s), )?from (\d+) earlier "
                      r"runs|(one) earlier run(?:: no spread)?)\)", out)
        if i == 0:
            if m or "no estimate" not in out:
                fail("an estimate without history:\n" + out)
            continue
        if not m:
            fail("run %d: no estimate:\n%s%s" % (i, out, once.stderr))
        # Overdue (top may look late on a loaded machine): by so much.
        est = float(m.group(2)) / (1000 if m.group(3) == "ms" else 1) * \
            (1 if m.group(1) == "about" else -1)
        # The real end: the last execution's end in the capture.
        rows = csv_rows(cap)
        end = max(float(r["start"]) + float(r["duration"]) for r in rows)
        left = end - real_now
        if (1 if m.group(5) else int(m.group(4))) != i:
            fail("run %d: estimate from %s runs" % (i, m.group(4)))
        if abs(est - left) > max(0.3 * left, 0.3):
            fail("run %d: estimate %.2f s, really %.2f s left" % (i, est,
                                                                 left))
        print("estimate: run %d at %.1f s: %.2f s left estimated, %.2f s "
              "really" % (i, time.monotonic() - t0 - 0, est, left))


def duration_of(m):
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


def test_pace(d):
    # Two chains of steps side by side; a step sleeps its length in ms
    # times SLOW_PCT / 100, so that its command line, which the runs are
    # matched by, is the same at any speed.
    with open(os.path.join(d, "step"), "w") as f:
        f.write('ms=$(($1 * ${SLOW_PCT:-100} / 100))\n'
                'f=$((ms % 1000 + 1000))\n'
                'sleep $((ms / 1000)).${f#1}\n')
    a = [1500, 2000, 2500, 1500]
    b = [2000, 3000, 2500]
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: a%d b%d\n" % (len(a), len(b)))
        for name, chain in (("a", a), ("b", b)):
            for i, ms in enumerate(chain, 1):
                f.write("%s%d:%s\n\tsh ./step %d\n" % (
                    name, i, " %s%d" % (name, i - 1) if i > 1 else "",
                    ms))
    base = max(sum(a), sum(b)) / 1000.0
    keep = os.path.join(d, "keep")
    for i, pct in enumerate((100, 125)):
        env = untraced_env()
        env["SLOW_PCT"] = str(pct)
        p = record(d, os.path.join(d, "run%d.ptcap" % i), ["--keep", keep],
                   env=env)
        if p.wait() != 0:
            fail("record: %s" % p.stderr.read())
    # The run watched, slower than both by construction.
    env = untraced_env()
    env["SLOW_PCT"] = "160"
    cap = os.path.join(d, "live.ptcap")
    t0 = time.time()
    p = record(d, cap, ["--keep", keep], env=env)
    looks = []
    # Half and three quarters of the way: the steps' time, and a little
    # for record's own start.
    for share in (0.5, 0.75):
        time.sleep(max(0, t0 + 0.4 + share * 1.6 * base - time.time()))
        r = subprocess.run([PT, "top", "--once", cap], capture_output=True,
                           text=True, env=quick_env())
        # The estimate is as of its drawing, the last thing top does.
        at = time.time()
        m = re.search(r"about ([\d.]+) (ms|s) left \(\+/- ([\d.]+) (ms|s), "
                      r"from 2 earlier runs\)", r.stdout)
        if not m:
            fail("no estimate from 2 earlier runs at %d %%:\n%s%s" % (
                share * 100, r.stdout, r.stderr))
        looks.append((share, at, duration_of(m), r.stdout))
    if p.wait() != 0:
        fail("record: %s" % p.stderr.read())
    rows = csv_rows(cap)
    end = max(float(r["start"]) + float(r["duration"]) for r in rows)
    start = min(float(r["start"]) for r in rows)
    for share, at, est, out in looks:
        left = end - at
        err = (est - left) / left
        print("pace: at %.0f %% of the run (%.1f s of %.1f s): %.2f s left "
              "estimated, %.2f s really (%+.0f %%)" % (
                  100 * (at - start) / (end - start), at - start,
                  end - start, est, left, 100 * err))
        if abs(err) > (0.15 if share == 0.5 else 0.10):
            fail("the estimate is off by %+.0f %% at %d %% of the run:\n%s"
                 % (100 * err, 100 * share, out))


def test_overdue(d):
    # The last step waits for its gate: let go at once in the earlier
    # run, held in the watched one, which goes past the earlier run's end.
    gated_build(d, ["z"])
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: z\na:\n\tsleep 1\nz: a\n\tcat gate-z\n")
    keep = os.path.join(d, "keep")
    p = record(d, os.path.join(d, "run0.ptcap"), ["--keep", keep])
    open_gate(d, "z")
    if p.wait() != 0:
        fail("record: %s" % p.stderr.read())
    cap = os.path.join(d, "live.ptcap")
    p = record(d, cap, ["--keep", keep])
    try:
        wait_for_run(cap)
        seen, late = [], []
        end = time.monotonic() + 60
        while len(late) < 3 and time.monotonic() < end:
            out = subprocess.run([PT, "top", "--once", cap],
                                 capture_output=True, text=True).stdout
            m = re.search(r"(about|overdue by) ([\d.]+) (ms|s)(?: left)? "
                          r"\(one earlier run(?:: no spread)?\)", out)
            if "cat gate-z" in out:
                if not m:
                    fail("no estimate from one earlier run:\n" + out)
                seen.append(m.group(0))
                if m.group(1) == "about" and float(m.group(2)) == 0:
                    fail("0 left while the step still runs:\n" + out)
                if m.group(1) == "overdue by":
                    late.append(float(m.group(2)) /
                                (1000 if m.group(3) == "ms" else 1))
            time.sleep(0.5)
        if len(late) < 3 or late != sorted(late):
            fail("not overdue, or not more and more so: %r" % seen)
    finally:
        open_gate(d, "z", 10)
        release_all()
    print("overdue: %s" % "; ".join(seen))


def test_progress(d):
    # A step of a long command line (GNU sleep sums its arguments).
    script = "sleep 2.5" + " 0" * 80 + "; seq 1 20000"
    plain = subprocess.run(["sh", "-c", script], capture_output=True,
                           check=True).stdout
    r = subprocess.run([PT, "record", "--progress=1", "-o",
                        os.path.join(d, "c.ptcap"), "--", "sh", "-c",
                        script], capture_output=True, env=untraced_env())
    if r.returncode != 0:
        fail("record --progress: %r" % r.stderr)
    if r.stdout != plain:
        fail("the command's output changed under --progress")
    lines = [x for x in r.stderr.decode().splitlines()
             if re.match(r"proftrace: [\d.]+ (ms|s), \d+ running, "
                         r"\d+ finished", x)]
    if len(lines) < 2:
        fail("progress lines: %r" % r.stderr.decode())
    # Named as the report names it: the program and its first operand.
    if not any("longest: sleep 2.5 (" in x for x in lines):
        fail("the longest-running step is not named: %r" % lines)
    # A log's line is read whole: none wraps a 100-column view.
    if any(len(x) > 100 for x in lines):
        fail("a progress line longer than 100 characters: %r" % lines)
    if "\r" in r.stderr.decode() or "\033" in r.stderr.decode():
        fail("terminal sequences in a pipe: %r" % r.stderr.decode())
    print("progress: %d lines on stderr, stdout byte-identical (%d bytes)"
          % (len(lines), len(plain)))


def test_opam(d):
    # Three packages as opam names them to their commands: the first two
    # build at once, the third after the first.
    gated_build(d, ["a", "b", "c"])
    with open(os.path.join(d, "Makefile")) as f:
        mk = f.read()
    for s, pkg in (("a", "alpha.1.0"), ("b", "bravo.2.1"),
                   ("c", "charlie.0.3")):
        name, version = pkg.split(".", 1)
        mk = mk.replace("\tcat gate-%s" % s,
                        "\tOPAM_PACKAGE_NAME=%s OPAM_PACKAGE_VERSION=%s "
                        "cat gate-%s" % (name, version, s))
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(mk.replace("all: a b c", "all: a b c\nc: a"))
    cap = os.path.join(d, "c.ptcap")
    p = record(d, cap, ["--progress=1"])

    def once():
        r = subprocess.run([PT, "top", "--once", cap], capture_output=True,
                           text=True)
        return r.stdout if r.returncode == 0 else ""

    try:
        s = wait_until(lambda: (lambda o: o if "2 running: " in o else None)(
            once()), lambda: "two packages running:\n" + once())
        m = re.search(r"opam packages: (\d+) done, (\d+) running: (.*)", s)
        if not m or m.group(1) != "0" or sorted(
                m.group(3).split(", ")) != ["alpha.1.0", "bravo.2.1"]:
            fail("packages at first:\n" + s)
        open_gate(d, "a")
        s = wait_until(lambda: (lambda o: o if "1 done" in o else None)(
            once()), lambda: "alpha done:\n" + once())
        m = re.search(r"opam packages: (\d+) done, (\d+) running: (.*)", s)
        if not m or sorted(m.group(3).split(", ")) != ["bravo.2.1",
                                                      "charlie.0.3"]:
            fail("packages after alpha:\n" + s)
    finally:
        for g in ("a", "b", "c"):
            open_gate(d, g, 10)
        p.wait()
    if not re.search(r"opam packages \d+ done, \d+ running",
                     p.stderr.read()):
        fail("no packages in --progress's lines")
    print("opam: packages done and running as the steps went")


def test_static(d, shell=None):
    bb = shutil.which("busybox")
    if not bb or b"statically linked" not in subprocess.run(
            ["file", "-L", bb], capture_output=True).stdout:
        print("SKIP: no static busybox")
        sys.exit(77)
    for g in ("a", "b"):
        os.mkfifo(os.path.join(d, "gate-" + g))
    cap = os.path.join(d, "c.ptcap")
    # `true` last: the shell stays, rather than exec its last command.
    script = "busybox cat gate-a; busybox cat gate-b; true"
    p = subprocess.Popen([PT, "record", "-q", "-o", cap, "--"] +
                         (shell or [bb, "sh"]) + ["-c", script],
                         cwd=d, env=untraced_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    RUNS.append((d, p))

    def once():
        r = subprocess.run([PT, "top", "--once", cap], capture_output=True,
                           text=True)
        return r.stdout if r.returncode == 0 else ""

    def listed(o, what):
        return o if any(c.strip() == what for _, _, c in running_rows(o)) \
            else None

    s = wait_until(lambda: listed(once(), "busybox cat gate-a"),
                   lambda: "busybox cat gate-a listed:\n" + once())
    rows = running_rows(s)
    if counts(s)[1:3] != (2, 0) or len(rows) != 2 or \
            rows[1][2] != "busybox cat gate-a" or rows[1][1] == rows[0][1]:
        fail("the static steps at first:\n" + s)
    open_gate(d, "a")
    s = wait_until(lambda: listed(once(), "busybox cat gate-b"),
                   lambda: "busybox cat gate-b listed:\n" + once())
    if counts(s)[1:3] != (2, 1) or listed(s, "busybox cat gate-a"):
        fail("the static steps after the first:\n" + s)
    open_gate(d, "b")
    if p.wait() != 0:
        fail("record: %s" % p.stderr.read())
    print("static: busybox's steps listed and counted while they ran")


def test_static_dyn(d):
    # The same steps started by a shell that loads the library: each is
    # traced from its exec on, and the library's EXEC says it first.
    test_static(d, ["/bin/sh"])


def test_daemon(d):
    sock = os.path.join(d, "sock")
    cap = os.path.join(d, "d.ptcap")
    os.mkfifo(os.path.join(d, "gate-x"))
    r = subprocess.run([PT, "daemon", "-o", cap, "--socket", sock,
                        "--detach"], capture_output=True, text=True,
                       env=untraced_env(), check=True)
    env = untraced_env()
    for m in re.finditer(r"export (\w+)=(\S+)", r.stdout):
        env[m.group(1)] = subprocess.run(["sh", "-c", "printf %s " +
                                          m.group(2)], capture_output=True,
                                         text=True).stdout
    p = subprocess.Popen(["cat", "gate-x"], cwd=d, env=env)
    RUNS.append((d, p))
    try:
        s = wait_until(lambda: (lambda r: r.stdout if "cat gate-x" in r.stdout
                                else None)(subprocess.run(
                                    [PT, "top", "--once", sock],
                                    capture_output=True, text=True)),
                       "cat under the daemon")
        if "proftrace top: daemon" not in s or counts(s)[1] != 1:
            fail("the daemon's run:\n" + s)
    finally:
        open_gate(d, "x", 10)
        p.wait()
        subprocess.run([PT, "stop", "--socket", sock], env=untraced_env())
    r = subprocess.run([PT, "top", "--once", sock], capture_output=True,
                       text=True)
    if r.returncode != 1:
        fail("top on a stopped daemon: rc %d %r" % (r.returncode, r.stdout))
    print("daemon: its running command shown; stopped, no run")


def test_refuse(d):
    r = subprocess.run([PT, "top", os.path.join(d, "nothing.ptcap")],
                       capture_output=True, text=True)
    if r.returncode != 1 or len(r.stderr.splitlines()) != 1 or r.stdout:
        fail("top with no run: rc %d, %r" % (r.returncode, r.stderr))
    print("no run: %s" % r.stderr.strip())
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: another user's run needs root")
        return
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534",
              "--clear-groups", PT, "top"]
    r = subprocess.run(nobody, capture_output=True, text=True, cwd="/")
    if r.returncode != 1 or "none under /tmp/proftrace-65534" not in r.stderr:
        fail("top of a user with no run: rc %d, %r" % (r.returncode,
                                                       r.stderr))
    gated_build(d, ["x"])
    cap = os.path.join(d, "c.ptcap")
    p = record(d, cap)
    try:
        rundir = wait_until(lambda: [
            os.path.join("/tmp/proftrace-0", e)
            for e in os.listdir("/tmp/proftrace-0")
            if e.startswith("record-") and (lambda s: s and cap in s)(
                open(os.path.join("/tmp/proftrace-0", e, "status")).read()
                if os.path.exists(os.path.join("/tmp/proftrace-0", e,
                                               "status")) else "")],
            "the run's directory")[0]
        r = subprocess.run(nobody + [rundir], capture_output=True,
                           text=True, cwd="/")
        if r.returncode != 1 or "refused" not in r.stderr or r.stdout:
            fail("another user's run: rc %d, %r %r" % (
                r.returncode, r.stdout, r.stderr))
        print("another user's run: %s" % r.stderr.strip())
    finally:
        open_gate(d, "x")
        p.wait()
    # Root can read any directory: a run that is not its own is refused
    # all the same.
    nd = os.path.join(d, "nobody")
    os.mkdir(nd)
    gated_build(nd, ["y"])
    for n in [nd] + [os.path.join(nd, x) for x in os.listdir(nd)]:
        os.chown(n, 65534, 65534)
    ncap = os.path.join(nd, "c.ptcap")
    # uid 65534 must be able to run this tree's proftrace and read its
    # library: not where the checkout is under a private home (CI's 0700
    # /root).
    probe = subprocess.run(["setpriv", "--reuid", "65534", "--regid",
                            "65534", "--clear-groups", "sh", "-c",
                            'test -r "$0" && test -x "$1"',
                            os.environ.get("PROFTRACE_LIB", PT), PT],
                           capture_output=True)
    if probe.returncode != 0:
        print("SKIP root watching nobody's run: uid 65534 cannot run this "
              "tree's proftrace (a private home above it)")
        return
    p = subprocess.Popen(["setpriv", "--reuid", "65534", "--regid", "65534",
                          "--clear-groups", PT, "record", "-q", "-o", ncap,
                          "--", "make", "-s"], cwd=nd, env=untraced_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    RUNS.append((nd, p))
    try:
        base = "/tmp/proftrace-65534"
        rundir = wait_until(lambda: p.poll() is not None and fail(
            "nobody's record ended early: %s" % p.stderr.read()) or [
            os.path.join(base, e) for e in (os.listdir(base)
                                            if os.path.isdir(base) else [])
            if e.startswith("record-") and os.path.exists(
                os.path.join(base, e, "status")) and ncap in open(
                    os.path.join(base, e, "status")).read()],
            "nobody's run directory")[0]
        r = subprocess.run([PT, "top", "--once", rundir],
                           capture_output=True, text=True)
        if r.returncode != 1 or "refused" not in r.stderr or r.stdout:
            fail("root watching nobody's run: rc %d, %r %r" % (
                r.returncode, r.stdout, r.stderr))
        print("root, another user's run: %s" % r.stderr.strip())
        # Its owner, without naming it, watches it: their only run.
        wait_until(lambda: "cat gate-y" in subprocess.run(
            nobody + ["--once"], capture_output=True, text=True,
            cwd="/").stdout, lambda: "nobody's top without RUN: %r" % (
                subprocess.run(nobody + ["--once"], capture_output=True,
                               text=True, cwd="/"),))
    finally:
        open_gate(nd, "y")
        if p.wait() != 0:
            fail("nobody's record: %s" % p.stderr.read())


def busy_build(d, seconds):
    """make -j2 of two jobs, each running short CPU-bound programs (a
    shell's counting loop) one after another for `seconds`: what a
    build's compilers do, none of them alive for a whole second."""
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: a b\n"
                "a b:\n"
                "\tend=$$(($$(date +%%s) + %d)); "
                "while [ $$(date +%%s) -lt $$end ]; do "
                "sh -c 'i=0; while [ $$i -lt 20000 ]; do i=$$((i+1)); "
                "done'; done\n" % seconds)


def cpu_of(screen):
    """(CPU in use, CPU so far in s) as the screen says them, or None."""
    m = re.search(r"CPU ([\d.]+) of (\d+)", screen)
    if not m:
        return None
    f = re.search(r"([\d.]+) (ms|s) used so far", screen)
    return (float(m.group(1)), f and float(f.group(1)) /
            (1000 if f.group(2) == "ms" else 1))


def test_cpu(d):
    busy_build(d, 6)
    cap = os.path.join(d, "c.ptcap")
    p = record(d, cap)
    tm = Tmux(d)
    on_screen, once, far = [], [], []
    try:
        wait_for_run(cap)
        tm.start("%s top %s" % (PT, cap))
        while p.poll() is None:
            c = cpu_of(tm.screen())
            if c:
                on_screen.append(c[0])
            r = subprocess.run([PT, "top", "--once", cap],
                               capture_output=True, text=True)
            c = cpu_of(r.stdout) if r.returncode == 0 else None
            if c:
                once.append(c[0])
            if c and c[1] is not None:
                far.append(c[1])
            time.sleep(0.3)
        if p.wait() != 0:
            fail("record: %s" % p.stderr.read())
    finally:
        tm.kill()
        release_all()
    # The truth: what the capture says the build's programs used, over
    # the build's time.
    rows = csv_rows(cap)
    total = sum(float(r["user_cpu"] or 0) + float(r["sys_cpu"] or 0)
                for r in rows)
    t0 = min(float(r["start"]) for r in rows)
    t1 = max(float(r["start"]) + float(r["duration"]) for r in rows)
    mean = total / (t1 - t0)
    # Two CPU-bound jobs keep two CPUs busy on a machine of their own; a
    # machine shared with other work gives them less, which the capture
    # shows: the busiest second is at least most of the mean.
    want = min(1.5, 0.7 * mean)
    print("cpu: capture %.2f s of CPU in %.2f s (mean %.2f); screen max "
          "%s, --once max %s, so far at most %s" % (
              total, t1 - t0, mean, max(on_screen, default=None),
              max(once, default=None), max(far, default=None)))
    if mean < 0.1:
        print("SKIP: the build itself used %.2f CPUs: the machine is too "
              "busy to tell" % mean)
        sys.exit(77)
    if not on_screen or max(on_screen) < want:
        fail("CPU on the screen %r, want a sample >= %.2f" % (on_screen,
                                                             want))
    if not once or max(once) < want:
        fail("CPU in --once %r, want a sample >= %.2f" % (once, want))
    # The run's CPU so far grows, and never passes what the run used.
    if far != sorted(far) or max(far) > total * 1.05 + 0.05 or \
            max(far) < 0.3 * total:
        fail("CPU so far %r, the run used %.2f s" % (far, total))


def test_exit(d):
    # The last snapshot, the one that says ended, lives only while the
    # collector finishes: a watcher must not depend on catching it.
    os.mkfifo(os.path.join(d, "gate-x"))
    for i in range(11):
        cap = os.path.join(d, "c%d.ptcap" % i)
        cmd = "cat gate-x; exit 3" if i < 10 else "cat gate-x; kill -TERM $$"
        p = subprocess.Popen([PT, "record", "-q", "-o", cap, "--", "sh",
                              "-c", cmd], cwd=d, env=untraced_env(),
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        RUNS.append((d, p))
        tm = Tmux(d)
        try:
            wait_for_run(cap)
            tm.start("%s top %s" % (PT, cap))
            wait_until(lambda: "cat gate-x" in tm.screen(),
                       lambda: "the run on the screen:\n" + tm.screen())
            open_gate(d, "x")
            rc = p.wait()
            s = wait_until(lambda: (lambda s: s if "TOP-EXITED" in s
                                    else None)(tm.screen()),
                           lambda: "top to end:\n" + tm.screen())
        finally:
            tm.kill()
        want = "exit status 3" if i < 10 else \
            "killed by signal 15 (SIGTERM)"
        if rc != (3 if i < 10 else 128 + 15):
            fail("record exited %d" % rc)
        if not re.search(r"the run ended: %s(?!\d)" % re.escape(want), s):
            fail("run %d: the end line without '%s':\n%s" % (i, want, s))
    print("exit: 'exit status 3' in each of 10 runs, the signal in one")


def test_first(d):
    cap = os.path.join(d, "c.ptcap")
    p = subprocess.Popen([PT, "record", "-q", "-o", cap, "--", "sleep",
                          "3"], cwd=d, env=untraced_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    RUNS.append((d, p))

    def listed():
        r = subprocess.run([PT, "top", "--once", cap], capture_output=True,
                           text=True)
        return r.stdout if r.returncode == 0 and any(
            c == "sleep 3" for _, _, c in running_rows(r.stdout)) else None
    s = wait_until(listed, "sleep 3 listed", step=0.02)
    p.wait()
    m = re.search(r"^([\d.]+) (ms|s) elapsed", s, re.M)
    el = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    # The snapshot written at the start has nothing yet; the next one is
    # written as soon as the command is heard of, not a second later.
    if el >= 1.0 or counts(s)[:2] != (1, 1):
        fail("the first screen that lists the command, %.2f s into the "
             "run:\n%s" % (el, s))
    print("first: the command listed %.2f s into the run" % el)


def test_runs(d):
    caps = []
    for name in ("one", "two"):
        sub = os.path.join(d, name)
        os.mkdir(sub)
        gated_build(sub, [name])
        caps.append(os.path.join(sub, "c.ptcap"))
        record(sub, caps[-1])
        wait_for_run(caps[-1])
    tms = []
    try:
        once = subprocess.run([PT, "top", "--once"], capture_output=True,
                              text=True).stdout
        for c in caps:
            if c not in once:
                fail("top --once without RUN does not list %s:\n%s"
                     % (c, once))
        # Either can be watched: its number, then its step.
        for c, name in zip(caps, ("one", "two")):
            tm = Tmux(d)
            tm.name += "-" + name
            tms.append(tm)
            tm.start("%s top" % PT)
            s = wait_until(lambda: (lambda s: s if all(
                c in s for c in caps) else None)(tm.screen()),
                lambda: "both runs listed:\n" + tm.screen())
            k = [m.group(1) for m in re.finditer(r"^\s*(\d)\s.*", s, re.M)
                 if c in m.group(0)]
            if len(k) != 1:
                fail("no key for %s:\n%s" % (c, s))
            tm.keys(k[0])
            wait_until(lambda: "cat gate-%s" % name in tm.screen(),
                       lambda: "run %s after key %s:\n%s" % (
                           name, k[0], tm.screen()))
            tm.keys("q")
            wait_until(lambda: "TOP-EXITED 0" in tm.screen(), "top to quit")
    finally:
        for tm in tms:
            tm.kill()
        for name in ("one", "two"):
            open_gate(os.path.join(d, name), name, 10)
        release_all()
    print("runs: both listed, each watched by its key")


def test_labels(d):
    if not shutil.which("gcc"):
        print("SKIP: no gcc")
        sys.exit(77)
    # Two compiles whose sources are FIFOs: gcc's cc1 waits on each until
    # the test writes it.  Their command lines pass 80 columns before
    # the source file's name.
    src = os.path.join(d, "src")
    os.mkdir(src)
    flags = " ".join("-I%s/include/a-directory-of-headers-%d" % (d, i)
                     for i in range(4))
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("all: alpha.o bravo.o\n")
        for n in ("alpha", "bravo"):
            os.mkfifo(os.path.join(src, n + ".c"))
            f.write("%s.o:\n\tgcc -c %s -o %s.o src/%s.c\n"
                    % (n, flags, n, n))
    cap = os.path.join(d, "c.ptcap")
    p = subprocess.Popen([PT, "record", "-q", "-o", cap, "--", "sh", "-c",
                          "make -s -j2; true"], cwd=d, env=untraced_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    tm = Tmux(d)

    def feed():
        for n in ("alpha", "bravo"):
            try:
                fd = os.open(os.path.join(src, n + ".c"),
                             os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            os.write(fd, b"int x;\n")
            os.close(fd)

    try:
        wait_for_run(cap)
        tm.start("%s top %s" % (PT, cap))

        def compilers(s):
            out = []
            for _, pid, c in running_rows(s):
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        argv = f.read().split(b"\0")
                except OSError:
                    continue
                if any(a.startswith(b"src/") for a in argv):
                    out.append((pid, c))
            return out
        s = wait_until(lambda: (lambda s: s if len(compilers(s)) >= 4
                                else None)(tm.screen()),
                       lambda: "gcc and cc1 for both:\n" + tm.screen())
        for pid, c in compilers(s):
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
            prog = os.path.basename(argv[0])
            source = [a for a in argv if a.startswith("src/")][0]
            if not c.startswith("%s %s" % (prog, source)):
                fail("pid %d (%s ... %s) shown as %r:\n%s"
                     % (pid, prog, source, c, s))
        # Collapsed: the shell and make, then the compilers themselves
        # (cc1, which does the work), the gcc drivers between hidden.
        tm.keys("c")
        s = wait_until(lambda: (lambda s: s if "collapsed" in s
                                else None)(tm.screen()),
                       lambda: "the collapsed tree:\n" + tm.screen())
        shown = [c.strip() for _, _, c in running_rows(s)]
        if sum(c.startswith("cc1 src/") for c in shown) != 2 or \
                not any(c.startswith("make") for c in shown) or \
                any(c.startswith("gcc ") for c in shown):
            fail("collapsed, the compilers are not in sight:\n" + s)
        tm.keys("q")
    finally:
        tm.kill()
        feed()
        p.wait()
    print("labels: each compiler named with its source file; collapsed, "
          "the compilers in sight")


def main():
    global PT
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("-k", required=True,
                    choices=["screen", "ended", "estimate", "progress",
                             "opam", "static", "static-dyn", "daemon",
                             "refuse", "cpu", "exit", "first", "runs",
                             "pace", "overdue", "labels"])
    a = ap.parse_args()
    PT = os.path.abspath(a.proftrace)
    if a.k in ("screen", "ended", "cpu", "exit", "runs", "labels") and \
            not shutil.which("tmux"):
        print("SKIP: tmux is not installed")
        sys.exit(77)
    # meson's timeout: the cleanup below still runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("FAIL: killed"))
    with tempfile.TemporaryDirectory(prefix="pt-top-") as d:
        os.chmod(d, 0o755)
        try:
            globals()["test_" + a.k.replace("-", "_")](d)
        finally:
            release_all()


if __name__ == "__main__":
    main()
