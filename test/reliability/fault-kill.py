#!/usr/bin/env python3
"""Fault: the collector is killed (SIGKILL) in the middle of a build.

Guarantees (doc/reliability.md, F1):
 - the build finishes with the exit status and the outputs (every file,
   byte for byte) of the same build run untraced, without hanging;
 - processes that start after the kill write their frames to spool files
   in $PROFTRACE_DIR (0600), which `proftrace convert DIR` reads;
 - the capture written up to the kill converts: convert keeps every
   intact record, names the byte where the capture is cut, says how many
   executions it holds without an end, and exits 1; and it reaches to
   within about 2 s of the kill (the collector flushes every second).

The build is the sample project's `./configure && make -j2 && make check`
in a copy made at the same path both times (so that debug information is
the same); only make and what it runs are traced.
"""

import hashlib
import os
import shutil
import signal
import stat
import struct
import subprocess
import time

import ptrel
from ptrel import check, log

BUILD = "make -j2 && make check"


def extra(p):
    p.add_argument("--sample", required=True, help="the sample/ directory")
    p.add_argument("--kill-after", type=float,
                   help="seconds into the build (default: half the untraced "
                   "build's time, at least 1.5)")


def fresh_copy(a, where):
    if os.path.exists(where):
        shutil.rmtree(where)
    shutil.copytree(a.sample, where, symlinks=True)
    r = ptrel.run(["./configure"], cwd=where, env=ptrel.untraced_env())
    check(r.returncode == 0, "configure failed: %s" % r.stderr.decode())


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
    ref = ptrel.run(["sh", "-c", BUILD], cwd=src, env=ptrel.untraced_env(),
                    timeout=1800)
    t_ref = time.monotonic() - t
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
    build = subprocess.Popen(["sh", "-c", BUILD], cwd=src, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(a.kill_after or max(1.5, t_ref / 2))
    check(build.poll() is None, "the build ended before the kill")
    dm.kill(signal.SIGKILL)
    kill_ns = time.monotonic_ns()
    dm.p.wait()
    t_kill = time.monotonic() - t
    log("collector killed %.1f s into the build" % t_kill)
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
    check(any(r["command"] == "make -j2" for r in rows),
          "the capture lost `make -j2`, which started before the kill")
    # At least once a second, the collector flushes what it received:
    # the capture ends at most ~2 s (1 s, plus one idle epoll wait) before
    # the kill.  recv_ns is the collector's CLOCK_MONOTONIC, as ours; frames
    # keep no receive time in a capture, but their own time (the same
    # clock, a little earlier) says as much.
    recs = ptrel.read_capture(cap)
    gap = (kill_ns - max(max(r["recv"], struct.unpack_from("<Q", r["data"], 24)[0]
                             if r["kind"] == ptrel.K_FRAME else 0)
                         for r in recs)) / 1e9
    check(gap <= 2.2, "the capture's last record is %.2f s older than the "
          "kill: the collector did not flush every second" % gap)
    log("capture: %d executions up to the kill; its last record was "
        "received %.2f s before the kill" % (len(rows), gap))
    log("PASS")


if __name__ == "__main__":
    main()
