#!/usr/bin/env python3
"""Fault: the capture cannot be written (disk full, read-only).

Guarantees (doc/reliability.md, F3):
 - disk full during the run (ENOSPC on a 128 KiB tmpfs): the collector
   says so once, clearly, and keeps serving; the traced command runs to
   its end with its own exit status and output; record exits with the
   command's status; the capture converts up to the damage (status 1);
 - the capture cannot be created at all (read-only file system): daemon
   and record fail at once with a clear message, before anything runs,
   and a build pointed at the absent daemon runs untraced, unaffected.

The disk-full half needs a tmpfs, so root; it is skipped otherwise.
"""

import os
import subprocess

import ptrel
from ptrel import check, log

N = 150
# One process per line of pads.txt, each with an argument of its own.
SCRIPT = ('i=0; while read pad; do /bin/echo line-$i "$pad"; i=$((i+1)); '
          'done < pads.txt > out.txt; exit 3')
PADS = []


def want_out():
    return "".join("line-%d %s\n" % (i, p) for i, p in enumerate(PADS))


def mount_tmpfs(where, opts):
    os.makedirs(where, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", where],
                       stderr=subprocess.PIPE)
    return r.returncode == 0


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("disk")
    # Random: every process costs the capture a few KiB, even deflated.
    PADS.extend(os.urandom(1500).hex() for _ in range(N))
    with open(d + "/pads.txt", "w") as f:
        f.write("".join(p + "\n" for p in PADS))
    mnt = d + "/mnt"
    root = ptrel.is_root() and mount_tmpfs(mnt, "size=128k,mode=0700")

    if root:
        # ---- disk full, under record ----
        cap = mnt + "/full.ptcap"
        r = ptrel.run([a.proftrace, "record", "-o", cap, "--", "sh", "-c",
                       SCRIPT], cwd=d, env=ptrel.untraced_env(), timeout=900)
        err = r.stderr.decode()
        check(r.returncode == 3, "record exited %d, the command 3:\n%s"
              % (r.returncode, err))
        with open(d + "/out.txt") as f:
            check(f.read() == want_out(), "the command's output is damaged")
        nospc = [l for l in err.splitlines() if "No space left" in l]
        check(len(nospc) == 1, "want one clear ENOSPC message, got:\n" + err)
        check("frames lost" in err, "record did not count the lost frames:\n"
              + err)
        log("record: exit 3 as the command; said: " + nospc[0])
        rc, text, cerr = ptrel.convert(a, cap)
        check(rc == 1, "convert of the cut capture exited %d, not 1" % rc)
        check("at byte" in cerr, "convert did not say where: " + cerr)
        log("convert: %d executions before the damage; %s" % (
            len(ptrel.csv_rows(text)), cerr.strip().replace("\n", " / ")))
        os.unlink(cap)
        os.unlink(d + "/out.txt")

        # ---- disk full, under the daemon ----
        os.mkdir(d + "/run", 0o700)
        sock, cap = d + "/run/sock", mnt + "/daemon.ptcap"
        dm = ptrel.Daemon(a, cap, sock, log_path=d + "/daemon.log")
        r = ptrel.run(["sh", "-c", SCRIPT], cwd=d, timeout=900,
                      env=ptrel.traced_env(a.lib, sock))
        check(r.returncode == 3, "the traced command exited %d, not 3"
              % r.returncode)
        with open(d + "/out.txt") as f:
            check(f.read() == want_out(), "the command's output is damaged")
        # Still serving after the error: one more process is accepted.
        r = ptrel.run(["/bin/true", "after"], env=ptrel.traced_env(a.lib,
                                                                     sock))
        check(r.returncode == 0, "a traced process failed after ENOSPC")
        check(dm.p.poll() is None, "the daemon died of the full disk")
        st = dm.stop()
        log_text = dm.log()
        nospc = [l for l in log_text.splitlines() if "No space left" in l]
        check(len(nospc) == 1, "want one ENOSPC message:\n" + log_text)
        check(st == 1, "the daemon exited %d after a write error, not 1" % st)
        log("daemon: kept serving, said: %s; exit %d" % (nospc[0], st))
        subprocess.run(["umount", mnt], check=True)
    else:
        log("not root (or no tmpfs): disk-full half skipped")

    # ---- the capture cannot be created ----
    ro = d + "/ro"
    if root and mount_tmpfs(ro, "size=64k,ro"):
        how = "read-only file system"
    else:
        os.makedirs(ro)
        os.chmod(ro, 0o500)
        how = "directory without write permission"
        if ptrel.is_root():
            log("cannot mount a read-only tmpfs: root writes anyway; skipped")
            ro = None
    if ro:
        os.makedirs(d + "/run2", 0o700)
        sock = d + "/run2/sock"
        r = ptrel.run([a.proftrace, "daemon", "-o", ro + "/cap.ptcap",
                       "--socket", sock], timeout=60, env=ptrel.untraced_env())
        err = r.stderr.decode()
        check(r.returncode == 1 and "cannot create" in err,
              "daemon on a %s: exit %d, %s" % (how, r.returncode, err))
        check(not os.path.exists(sock), "the failed daemon left its socket")
        log("daemon: " + err.strip())
        marker = d + "/ran"
        r = ptrel.run([a.proftrace, "record", "-o", ro + "/cap.ptcap", "--",
                       "touch", marker], timeout=60, env=ptrel.untraced_env())
        err = r.stderr.decode()
        check(r.returncode == 1 and "cannot create" in err,
              "record on a %s: exit %d, %s" % (how, r.returncode, err))
        check(not os.path.exists(marker),
              "record ran the command untraced after failing")
        log("record: " + err.strip() + " (the command was not run)")
        # A build pointed at the daemon that did not start is unaffected.
        r = ptrel.run(["sh", "-c", SCRIPT], cwd=d, timeout=900,
                      env=ptrel.traced_env(a.lib, sock))
        check(r.returncode == 3, "the build exited %d without its collector"
              % r.returncode)
        with open(d + "/out.txt") as f:
            check(f.read() == want_out(), "the build's output is damaged")
        if os.path.ismount(ro):
            subprocess.run(["umount", ro], check=True)
    log("PASS")


if __name__ == "__main__":
    main()
