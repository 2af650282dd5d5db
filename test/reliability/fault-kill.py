#!/usr/bin/env python3
"""Fault: the collector is killed (SIGKILL) in the middle of a build.

Guarantees (doc/reliability.md, F1):
 - the build finishes with the exit status and the outputs (every file,
   byte for byte) of the same build run untraced, without hanging;
 - processes that start after the kill write their frames to spool files
   in $PROFTRACE_DIR (0600), which `proftrace convert DIR` reads;
 - the capture written up to the kill converts: convert keeps every
   intact record, names the byte where the capture is cut, says how many
   executions it holds without an end, and exits 1; and everything that
   ended 2.2 s before the kill is in it, with its end (the collector
   flushes every second).

The build is the sample project's `./configure && make -j2 && make check`
in a copy made at the same path both times (so that debug information is
the same); only make and what it runs are traced.  The build waits at a
gate (a FIFO its shell reads from) after its first make has generated
two headers and compiled one file: the collector is killed there, with
the build's shell connected and alive, 2.2 s after the gate was reached,
and the gate is opened after the kill.  A gate rather than a time: the
whole build takes 0.7 s on a quiet machine and many times that on a busy
one.
"""

import errno
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import time

import ptrel
from ptrel import check, log

PRE = "make -j2 src/crc_table.h src/version.h src/checksum.o"
BUILD = PRE + ' && read go < "$GATE" && make -j2 && make check'
SETTLE = 2.2    # s: one flush period, one idle epoll wait, slack


def extra(p):
    p.add_argument("--sample", required=True, help="the sample/ directory")


def fresh_copy(a, where):
    if os.path.exists(where):
        shutil.rmtree(where)
    shutil.copytree(a.sample, where, symlinks=True)
    r = ptrel.run(["./configure"], cwd=where, env=ptrel.untraced_env())
    check(r.returncode == 0, "configure failed: %s" % r.stderr.decode())


def reach_gate(gate, build):
    """Wait until the build's shell reads from the gate; return the gate's
    write end, or None if the build ended first."""
    while True:
        try:
            return os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        if build.poll() is not None:
            return None
        time.sleep(0.01)


def open_gate(fd):
    os.write(fd, b"go\n")
    os.close(fd)


def start_build(src, env, gate):
    env = dict(env, GATE=gate)
    os.mkfifo(gate, 0o600)
    return subprocess.Popen(["sh", "-c", BUILD], cwd=src, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def snapshot(top):
    """Every file under top: relative path -> sha256; but config.log,
    where the (untraced) configure names its random temporary files."""
    out = {}
    for root, _dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(root, f)
            if os.path.relpath(p, top) == "config.log":
                continue
            if os.path.islink(p):
                out[os.path.relpath(p, top)] = "-> " + os.readlink(p)
                continue
            with open(p, "rb") as fh:
                out[os.path.relpath(p, top)] = hashlib.sha256(
                    fh.read()).hexdigest()
    return out


def main():
    a = ptrel.args(__doc__, extra)
    d = ptrel.tmpdir("kill")
    src = d + "/b/sample"
    os.makedirs(d + "/b")

    fresh_copy(a, src)
    t = time.monotonic()
    build = start_build(src, ptrel.untraced_env(), d + "/gate-ref")
    fd = reach_gate(d + "/gate-ref", build)
    if fd is not None:
        open_gate(fd)
    out, err = build.communicate(timeout=1800)
    t_ref = time.monotonic() - t
    ref = subprocess.CompletedProcess(BUILD, build.returncode, out, err)
    check(ref.returncode == 0, "the untraced build failed:\n" +
          ref.stderr.decode())
    want = snapshot(src)
    log("untraced build: exit %d in %.1f s, %d files"
        % (ref.returncode, t_ref, len(want)))

    fresh_copy(a, src)
    os.mkdir(d + "/run", 0o700)
    os.mkdir(d + "/spool", 0o700)
    sock, cap, spool = d + "/run/sock", d + "/kill.ptcap", d + "/spool"
    dm = ptrel.Daemon(a, cap, sock)
    env = ptrel.traced_env(a.lib, sock, spool)
    t = time.monotonic()
    build = start_build(src, env, d + "/gate")
    fd = reach_gate(d + "/gate", build)
    if fd is None:
        ptrel.fail("the traced build ended before its gate:\n" +
                   build.communicate()[1].decode())
    time.sleep(SETTLE)
    dm.kill(signal.SIGKILL)
    dm.p.wait()
    t_kill = time.monotonic() - t
    log("collector killed %.1f s into the build, %.1f s after the gate "
        "was reached" % (t_kill, SETTLE))
    open_gate(fd)
    try:
        out, err = build.communicate(timeout=max(600, 10 * t_ref))
    except subprocess.TimeoutExpired:
        build.kill()
        ptrel.fail("the traced build hung after the collector was killed")
    t_traced = time.monotonic() - t
    log("traced build: exit %d in %.1f s" % (build.returncode, t_traced))
    check(build.returncode == ref.returncode,
          "exit status %d, untraced %d" % (build.returncode, ref.returncode))
    # (make -j2 may print its lines in another order)
    check(sorted(out.splitlines()) == sorted(ref.stdout.splitlines()),
          "the build printed something else than untraced:\n%s\n---\n%s"
          % (out.decode(), ref.stdout.decode()))
    got = snapshot(src)
    diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    check(not diff, "outputs differ from the untraced build's: %s" % diff)
    log("outputs identical to the untraced build's (%d files)" % len(got))

    # What the build did after the kill went to the spool directory.
    files = os.listdir(spool)
    check(files, "no spool file in $PROFTRACE_DIR after the kill")
    for f in files:
        st = os.lstat(os.path.join(spool, f))
        check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
              "spool file %s has mode %o" % (f, st.st_mode))
    rc, text, err = ptrel.convert(a, spool)
    check(rc == 0, "convert of the spool directory exited %d: %s" % (rc, err))
    spooled = ptrel.csv_rows(text)
    checks = [r for r in spooled if r["command"].startswith("./crunch")
              or r["command"].startswith("./wordfreq")]
    check(checks, "the spool lacks the `make check` runs")
    log("spool: %d files, %d executions (make check's runs among them)"
        % (len(files), len(spooled)))

    # The capture up to the kill converts, and says what it lost.
    rc, text, err = ptrel.convert(a, cap)
    log("convert of the cut capture said: " + err.strip().replace("\n",
                                                                   " / "))
    check(rc == 1, "convert of the cut capture exited %d, not 1" % rc)
    check("truncated at byte" in err or "corrupt at byte" in err,
          "convert did not say where the capture is cut: " + err)
    check("have no recorded end" in err,
          "convert did not count the executions left without an end")
    rows = ptrel.csv_rows(text)
    # Everything before the gate ended more than SETTLE s before the kill:
    # the first make and all it ran, each with its end.
    pre = [r for r in rows if r["command"] == PRE]
    check(len(pre) == 1 and pre[0]["exit_code"] == "0",
          "the capture lacks `%s` or its end: %s" % (PRE, pre))
    below, todo = [], [pre[0]["pid"]]
    while todo:
        parent = todo.pop()
        kids = [r for r in rows if r["ppid"] == parent]
        below += kids
        todo += [r["pid"] for r in kids]
    cc = [r for r in below if "checksum.c" in r["command"]]
    check(cc, "the capture lacks the compilation of checksum.c: %s"
          % [r["command"] for r in below])
    open_end = [r["command"] for r in below if r["exit_code"] == "" and
                r["signal"] == ""]
    check(not open_end, "these ended %.1f s before the kill and have no end "
          "in the capture: %s" % (SETTLE, open_end))
    shell = [r for r in rows if r["pid"] == pre[0]["ppid"]]
    check(shell and shell[0]["exit_code"] == "",
          "the build's shell, alive at the kill, has an end in the capture: "
          "%s" % shell)
    log("capture: %d executions up to the kill, among them `%s` and the %d "
        "it ran, each with its end; the shell has none"
        % (len(rows), PRE, len(below)))
    log("PASS")


if __name__ == "__main__":
    main()
