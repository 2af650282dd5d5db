#!/usr/bin/env python3
"""The library never makes ld.so write into a program's stderr.

Guarantee (doc/reliability.md, C4): ld.so prints "ERROR: ld.so: object
... cannot be preloaded" into the stderr of any process whose LD_PRELOAD
names a file it cannot open.  Under `record`, for each way a command can
lose sight of the library, its stdout, stderr and status are those of
the untraced run, byte for byte:
 - a background process that execs after record has ended (record once
   deleted its copy of the library with its run directory);
 - a command run as another user from root: su USER -c, su - USER,
   runuser, setpriv --reuid (the copy was in a 0700 directory) (root);
 - a sandbox that hides the copy: bwrap --tmpfs /tmp, and chroot into a
   directory that holds a shell and its libraries but not /tmp (root):
   where the collector's /proc/PID/root cannot be followed either (a pid
   namespace of the sandbox's own, another user's), no place can be seen
   there, so the exec hooks leave the library out of LD_PRELOAD when the
   image to come could not open it;
and the copy is checked before it is used (S7; root, with a uid made for
the test): a symbolic link, a directory of another user or one open to
others at its place is refused, a file of the wrong contents or owner at
its name is replaced.
"""

import argparse
import os
import pwd
import random
import shutil
import stat
import subprocess
import time

import ptrel
from ptrel import check, log

PROBE = 'echo out; echo err >&2; ls /nonexistent-pt-probe'
PREFIX = "/tmp/proftrace-"


def record_cmd(a, cap, cmd):
    return [a.proftrace, "record", "-q", "--force", "-o", cap, "--"] + cmd


def same_run(a, d, name, cmd, **kw):
    """cmd untraced and under record -q: same status, stdout, stderr."""
    kw.setdefault("env", ptrel.untraced_env({"PROFTRACE_LIB": a.lib}))
    plain = ptrel.run(cmd, **kw)
    traced = ptrel.run(record_cmd(a, d + "/same.ptcap", cmd), **kw)
    check(b"out" in plain.stdout and plain.stderr,
          "%s: the probe printed nothing untraced: %r" % (name, plain))
    for what in ("stderr", "stdout", "returncode"):
        check(getattr(traced, what) == getattr(plain, what),
              "%s: %s differs traced:\nuntraced: %r\ntraced:   %r"
              % (name, what, getattr(plain, what), getattr(traced, what)))
    log("%-40s traced = untraced" % name)


def background(a, d):
    """A process the command leaves behind execs a program once record
    has ended; what that program writes to stderr goes to a file."""
    results = {}
    for traced in (False, True):
        fifo, out = d + "/go", d + "/late.%d" % traced
        os.mkfifo(fifo)
        cmd = ["sh", "-c", '(read x < "$1"; sh -c "$2"; : > "$3.done") '
               '> "$3" 2>&1 &', "sh", fifo, PROBE, out]
        if traced:
            cmd = record_cmd(a, d + "/bg.ptcap", cmd)
        r = ptrel.run(cmd, env=ptrel.untraced_env())
        check(r.returncode == 0 and not r.stderr, "background: %r" % r)
        with open(fifo, "w") as f:      # record has ended: go on
            f.write("go\n")
        ptrel.wait_for(lambda: os.path.exists(out + ".done"), 60,
                       "the background process")
        os.unlink(fifo)
        with open(out, "rb") as f:
            results[traced] = f.read()
    check(results[True] == results[False], "background process after "
          "record ended: output differs traced:\nuntraced: %r\ntraced:   %r"
          % (results[False], results[True]))
    log("%-40s traced = untraced" % "background exec after record ended")


def sandboxes(a, d):
    bwrap = ["bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--proc",
             "/proc", "--dev", "/dev", "sh", "-c", PROBE]
    r = shutil.which("bwrap") and ptrel.run(bwrap, env=ptrel.untraced_env())
    if r and r.returncode == 2 and b"out" in r.stdout:
        same_run(a, d, "bwrap --tmpfs /tmp", bwrap)
        # A library of the user's own stays in LD_PRELOAD, alone (libm:
        # it interposes nothing, unlike libc ahead of the hooks), where
        # ours cannot be reached at all: in a pid namespace of its own,
        # the collector's /proc/PID/root is out of sight too.
        libc = [l for l in libraries("/bin/sh") if "/libc.so" in l][0]
        own = os.path.join(os.path.dirname(libc), "libm.so.6")
        same_run(a, d, "bwrap, LD_PRELOAD=" + own, bwrap[:1] +
                 ["--unshare-pid"] + bwrap[1:-1] + [
            PROBE + '; echo "LD_PRELOAD=$LD_PRELOAD"'],
            env=ptrel.untraced_env({"PROFTRACE_LIB": a.lib,
                                    "LD_PRELOAD": own}))
    else:
        log("SKIP bwrap: not installed or not working here: %r"
            % (r and r.stderr))
    if not ptrel.is_root():
        log("SKIP chroot: needs root")
        return
    root = d + "/chroot"
    for path in ["/bin/sh", "/bin/ls"] + libraries("/bin/sh", "/bin/ls"):
        os.makedirs(root + os.path.dirname(path), exist_ok=True)
        shutil.copy(path, root + path)
    same_run(a, d, "chroot DIR /bin/sh", ["chroot", root, "/bin/sh", "-c",
                                          PROBE])


def libraries(*programs):
    """What ldd says the programs load, ld.so included."""
    libs = set()
    for prog in programs:
        out = ptrel.run(["ldd", prog], env=ptrel.untraced_env()).stdout
        for word in out.decode().split():
            if word.startswith("/"):
                libs.add(word)
    return sorted(libs)


class User:
    """A user made for the test (useradd), removed at the end."""

    def __init__(self):
        self.name = "ptvis%06d" % random.randrange(10 ** 6)
        r = ptrel.run(["useradd", "-M", "-N", "-d", "/", "-s", "/bin/sh",
                       self.name])
        check(r.returncode == 0, "useradd: " + r.stderr.decode())
        pw = pwd.getpwnam(self.name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.libdir = "%slib-%d" % (PREFIX, self.uid)

    def remove(self):
        for p in (self.libdir, PREFIX + str(self.uid)):
            if os.path.islink(p) or os.path.isfile(p):
                os.unlink(p)
            else:
                shutil.rmtree(p, ignore_errors=True)
        subprocess.run(["userdel", self.name], stderr=subprocess.DEVNULL)

    def cmd(self, cmd):
        return ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid,
                "--clear-groups", "--"] + cmd


def other_users(a, d, u):
    n = u.name
    for name, cmd in (
            ("su USER -c", ["su", n, "-c", "sh -c '%s'" % PROBE]),
            ("su - USER -c", ["su", "-", n, "-c", PROBE]),
            ("runuser -u USER", ["runuser", "-u", n, "--", "sh", "-c",
                                 PROBE]),
            ("setpriv --reuid", u.cmd(["sh", "-c", PROBE]))):
        same_run(a, d, name, cmd, cwd="/")


def planted(a, d, u):
    """S7: what may stand at the place of the shared copy."""
    work = d + "/victim"
    os.mkdir(work)
    os.chown(work, u.uid, u.gid)
    # Copies the victim can read: the build tree may be under /root (0700).
    mine = argparse.Namespace(proftrace=d + "/proftrace",
                              lib=d + "/libproftrace.so")
    shutil.copy(a.proftrace, mine.proftrace)
    shutil.copy(a.lib, mine.lib)
    os.chmod(mine.lib, 0o644)
    env = ptrel.untraced_env({"PROFTRACE_LIB": mine.lib})

    def record_as_victim():
        return ptrel.run(u.cmd(record_cmd(
            mine, work + "/v.ptcap",
            ["sh", "-c", 'echo "%s"' % ptrel.kernel_env_sh("LD_PRELOAD")])),
            env=env, cwd=work)

    r = record_as_victim()
    check(r.returncode == 0, "record as the victim: %r" % r)
    copy = r.stdout.decode().strip()
    check(os.path.dirname(copy) == u.libdir, "the copy is at %s" % copy)
    st, dst = os.lstat(copy), os.lstat(u.libdir)
    check(stat.S_IMODE(st.st_mode) == 0o644 and st.st_uid == u.uid and
          stat.S_IMODE(dst.st_mode) == 0o755 and dst.st_uid == u.uid,
          "copy %o uid %d, directory %o uid %d" % (
              st.st_mode, st.st_uid, dst.st_mode, dst.st_uid))
    log("S7 the copy: 0644 in a 0755 directory, both the user's")

    def refused(what, expect):
        r = record_as_victim()
        err = r.stderr.decode()
        check(r.returncode == 1 and expect in err and not r.stdout,
              "%s: record did not refuse it: %r" % (what, r))
        log("S7 refused: %s" % what)

    shutil.rmtree(u.libdir)
    os.mkdir(d + "/elsewhere", 0o755)
    os.symlink(d + "/elsewhere", u.libdir)
    refused("a symbolic link", "refusing")
    check(os.listdir(d + "/elsewhere") == [], "a copy went through the link")
    os.unlink(u.libdir)
    os.mkdir(u.libdir, 0o755)           # root's
    refused("a directory of another user", "refusing")
    os.chown(u.libdir, u.uid, u.gid)
    os.chmod(u.libdir, 0o777)
    refused("a directory writable by others", "refusing")
    os.chmod(u.libdir, 0o755)

    with open(a.lib, "rb") as f:
        lib = f.read()
    for what, owner, data in (("a file of another user", 0, lib),
                              ("a damaged copy", u.uid, lib[:-1] + b"x")):
        with open(copy, "wb") as f:
            f.write(data)
        os.chown(copy, owner, owner and u.gid)
        os.chmod(copy, 0o644)
        r = record_as_victim()
        check(r.returncode == 0 and r.stdout.decode().strip() == copy,
              "%s: %r" % (what, r))
        with open(copy, "rb") as f:
            check(f.read() == lib, "%s: still there" % what)
        check(os.lstat(copy).st_uid == u.uid, "%s: not replaced" % what)
        log("S7 replaced: %s" % what)


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("visible")
    os.chmod(d, 0o755)                  # the test user reads the probe
    background(a, d)
    sandboxes(a, d)
    if not ptrel.is_root():
        ptrel.skip("the other users' cases need root (useradd)")
    u = User()
    try:
        other_users(a, d, u)
        planted(a, d, u)
    finally:
        u.remove()


if __name__ == "__main__":
    main()
