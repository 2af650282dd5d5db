#!/usr/bin/env python3
"""Security: who may write into a capture, what a capture holds.

Guarantees (doc/reliability.md, S1-S6, S8):
 S1 record's socket is 0600 in a directory only its owner can enter
    (0700, under /tmp/proftrace-UID, itself 0700); daemon --socket is 0600;
 S2 the per-user directory is refused when it is a symbolic link, belongs
    to another user or is open to others (run as `nobody`);
 S3 a peer running as another uid is refused (SO_PEERCRED), logged, and
    none of its frames reach the capture; through the 0700 directory it
    cannot even connect;
 S4 spool files are created O_EXCL|O_NOFOLLOW, mode 0600 (an image reopens its own
    O_NOFOLLOW, never O_CREAT): a symbolic link
    planted at the very name the library will use is not followed (the
    program runs on, untraced) and its target is untouched;
 S5 only allowlisted environment variables are recorded, and never one
    whose name holds TOKEN, SECRET, PASSWORD, PASSWD, KEY or CREDENTIAL,
    even when PROFTRACE_ENV lists it: their values appear nowhere in the
    capture;
 S6 --redact REGEX masks what it matches in command lines with *** in
    every output of convert (csv, json, folded, folded-cpu), report, diff,
    record (CSV, summary) and daemon (CSV); a bad pattern is a usage
    error.
 S8 a stale PROFTRACE_LOG (its collector gone, its /proc/PID/fd/N now
    some other process's FIFO or file) is neither opened nor written: the
    program runs as untraced, at once, and the file is unchanged;
The parts that need a second uid (S2, S3) are skipped when not root.
"""

import os
import pwd
import shutil
import stat
import time

import ptrel
from ptrel import check, log

NOBODY = 65534


def as_nobody(cmd, **kw):
    return ptrel.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                      "--clear-groups", "--"] + cmd, **kw)


def extra(p):
    p.add_argument("--fixclock", help="fixclock.so (for S4)")


def s1_permissions(a, d):
    r = ptrel.run([a.proftrace, "record", "-q", "-o", d + "/s1.ptcap", "--",
                   "sh", "-c", 'stat -c "%a %u %F" "$(dirname '
                   '"$PROFTRACE_SOCKET")" "$PROFTRACE_SOCKET" '
                   '"$(dirname "$(dirname "$PROFTRACE_SOCKET")")"'],
                  env=ptrel.untraced_env())
    check(r.returncode == 0, "record failed: " + r.stderr.decode())
    uid = os.geteuid()
    got = r.stdout.decode().splitlines()
    check(got == ["700 %d directory" % uid, "600 %d socket" % uid,
                  "700 %d directory" % uid],
          "record's run directory, socket, per-user directory: %s" % got)
    log("S1 record: run dir 0700, socket 0600, /tmp/proftrace-UID 0700")
    os.mkdir(d + "/s1run", 0o755)
    sock = d + "/s1run/sock"
    calls = d + "/s1d.strace"
    dm = ptrel.Daemon(a, d + "/s1d.ptcap", sock, prefix=[
        "strace", "-f", "-qq", "-o", calls,
        "-e", "trace=bind,listen,chmod,link,linkat,rename,renameat,renameat2"])
    mode = stat.S_IMODE(os.lstat(sock).st_mode)
    # Not SIGTERM, which would reach strace rather than the daemon.
    r = ptrel.run([a.proftrace, "stop", "--socket", sock],
                  env=ptrel.untraced_env())
    check(r.returncode == 0, "proftrace stop: " + r.stderr.decode())
    check(dm.stop() == 0, "the daemon failed:\n" + dm.log())
    check(mode == 0o600, "daemon --socket made a socket of mode %o" % mode)
    log("S1 daemon --socket: socket 0600")
    s1_published_listening(calls, sock)


def s1_published_listening(calls, sock):
    """The socket's name appears only once it is 0600 and listening: a
    process that finds the name is never refused (ECONNREFUSED), and a
    second collector never takes it for a dead one's."""
    with open(calls) as f:
        lines = [l.split(None, 1)[1] for l in f if " = 0" in l]
    quoted = '"%s"' % sock

    def first(pred, what):
        for i, l in enumerate(lines):
            if pred(l):
                return i
        ptrel.fail("no successful %s in the daemon's system calls:\n%s"
                   % (what, "".join(lines)))

    listening = first(lambda l: l.startswith("listen("), "listen")
    private = first(lambda l: l.startswith(("chmod(", "bind(")), "chmod")
    named = first(lambda l: (l.startswith("bind(") and
                             'sun_path=%s' % quoted in l) or
                  (l.startswith(("link", "rename")) and
                   l.rstrip().split(") = ")[0].endswith(quoted)),
                  "bind, link or rename to " + sock)
    check(named > listening and named > private,
          "the socket got its name %s before it listened:\n%s"
          % (sock, "".join(lines)))
    log("S1 daemon --socket: named only once listening (%s)"
        % lines[named].split("(")[0])


def s2_rundir(a, d):
    udir = "/tmp/proftrace-%d" % NOBODY
    if os.path.lexists(udir):
        log("S2 skipped: %s exists (someone's); not touching it" % udir)
        return
    out = d + "/nobody"
    os.mkdir(out, 0o777)
    os.chmod(out, 0o777)
    target = d + "/elsewhere"
    os.mkdir(target, 0o777)
    # Copies nobody can read: the build tree may be under /root (0700).
    pub = d + "/s2bin"
    os.mkdir(pub, 0o755)
    os.chmod(pub, 0o755)
    prog, lib = pub + "/proftrace", pub + "/libproftrace.so"
    shutil.copy(a.proftrace, prog)
    shutil.copy(a.lib, lib)
    os.chmod(d, 0o711)
    env = ptrel.untraced_env({"PROFTRACE_LIB": lib})
    plants = [
        ("a symbolic link", lambda: os.symlink(target, udir),
         "not a directory"),
        ("a directory of another user",
         lambda: os.mkdir(udir, 0o700), "belongs to uid 0"),
        ("a directory open to others",
         lambda: (os.mkdir(udir, 0o755), os.chown(udir, NOBODY, NOBODY),
                  os.chmod(udir, 0o755)), "accessible to other users"),
    ]
    try:
        for what, plant, why in plants:
            plant()
            for cmd in (["daemon", "-o", out + "/x.ptcap"],
                        ["record", "-q", "-o", out + "/y.ptcap", "--",
                         "touch", out + "/ran"]):
                r = as_nobody([prog] + cmd, env=env, timeout=60)
                err = r.stderr.decode()
                check(r.returncode == 1 and why in err and "refusing" in err,
                      "%s as %s: exit %d, %s" % (cmd[0], what, r.returncode,
                                                 err))
            check(not os.listdir(target), "something was made through the "
                  "planted link: %s" % os.listdir(target))
            check(not os.path.exists(out + "/ran"),
                  "record ran its command after refusing")
            log("S2 /tmp/proftrace-UID as %s: daemon and record refuse: %s"
                % (what, err.strip()))
            if os.path.islink(udir):
                os.unlink(udir)
            else:
                os.rmdir(udir)
    finally:
        os.chmod(d, 0o700)
        if os.path.islink(udir):
            os.unlink(udir)
        elif os.path.isdir(udir):
            shutil.rmtree(udir)


def s3_peer_uid(a, d):
    pub = d + "/pub"
    os.mkdir(pub, 0o755)
    os.chmod(pub, 0o755)
    lib = pub + "/libproftrace.so"
    shutil.copy(a.lib, lib)
    os.chmod(lib, 0o755)
    rundir = pub + "/run"
    os.mkdir(rundir, 0o700)
    sock, cap = rundir + "/sock", d + "/s3.ptcap"
    dm = ptrel.Daemon(a, cap, sock)
    os.chmod(d, 0o711)
    try:
        # Through the 0700 directory: no connection at all.
        r = as_nobody(["/usr/bin/python3", "-c",
                       "import socket,sys\n"
                       "s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
                       "try: s.connect(sys.argv[1])\n"
                       "except PermissionError: sys.exit(13)\n", sock])
        check(r.returncode == 13, "uid %d connected through the 0700 "
              "directory (%d)" % (NOBODY, r.returncode))
        log("S3 another uid cannot connect through the 0700 directory")
        # A socket someone opened up: connected, but refused.
        os.chmod(rundir, 0o755)
        os.chmod(sock, 0o666)
        env = ptrel.traced_env(lib, sock)
        # setpriv itself runs untraced (as root, it would be welcome).
        r = as_nobody(["env", "LD_PRELOAD=" + lib, "PROFTRACE_SOCKET=" + sock,
                       "/bin/echo", "from-nobody"], env=ptrel.untraced_env())
        check(r.returncode == 0 and r.stdout == b"from-nobody\n",
              "the refused program did not run normally")
        ptrel.wait_for(lambda: "peer runs as uid" in dm.log(), 60,
                       lambda: "the refusal in the log; log:\n%s\nstderr: "
                       "%s" % (dm.log(), r.stderr.decode()))
        r = ptrel.run(["/bin/echo", "from-owner"], env=env)
        check(r.returncode == 0, "the owner's program failed")
        time.sleep(0.3)
    finally:
        os.chmod(d, 0o700)
    st = dm.stop()
    check(st == 0, "daemon exited %d" % st)
    line = [l for l in dm.log().splitlines() if "peer runs as uid" in l]
    recs = ptrel.read_capture(cap)
    drops = [r for r in recs if r["kind"] == ptrel.K_DROP]
    check(drops and all(r["peer_uid"] == NOBODY for r in drops),
          "no DROP record for uid %d" % NOBODY)
    frames = [r for r in recs if r["kind"] == ptrel.K_FRAME and
              r["peer_uid"] == NOBODY]
    check(not frames, "%d frames of uid %d in the capture" % (len(frames),
                                                              NOBODY))
    rc, out, err = ptrel.convert(a, cap)
    cmds = [r["command"] for r in ptrel.csv_rows(out)]
    check("/bin/echo from-owner" in cmds and
          not any("from-nobody" in c for c in cmds),
          "executions: %s" % cmds)
    log("S3 uid %d refused: %s" % (NOBODY, line[0].strip()))


def s4_spool(a, d):
    spool = d + "/spool"
    os.mkdir(spool, 0o700)
    env = ptrel.traced_env(a.lib, d + "/no-socket", spool)
    r = ptrel.run(["/bin/true"], env=env)
    files = os.listdir(spool)
    check(r.returncode == 0 and len(files) == 1, "spool files: %s" % files)
    st = os.lstat(os.path.join(spool, files[0]))
    check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
          "spool file mode %o" % st.st_mode)
    log("S4 spool file is a regular file of mode 0600")
    if shutil.which("strace"):
        r = ptrel.run(["strace", "-f", "-e", "trace=openat", "-o",
                       d + "/strace.txt", "/bin/true"], env=env)
        calls = [l for l in open(d + "/strace.txt") if ".ptspool" in l]
        # Made once, O_EXCL; the image's later events reopen it by its
        # name, which never creates a file nor follows a link.
        check(calls and "O_EXCL" in calls[0] and "0600" in calls[0] and
              all("O_NOFOLLOW" in l and ("O_EXCL" in l or
                                         "O_CREAT" not in l)
                  for l in calls),
              "spool opened without O_EXCL|O_NOFOLLOW, 0600: %s" % calls)
        log("S4 strace: " + calls[0].strip())
    if not a.fixclock:
        log("S4 planted link: skipped (no --fixclock)")
        return
    # Plant a link at the exact name, then become the traced program
    # (same pid): the library must not follow it.
    victim = d + "/victim"
    with open(victim, "w") as f:
        f.write("precious\n")
    ns = 4242424242
    for kind in ("symlink", "file"):
        shutil.rmtree(spool)
        os.mkdir(spool, 0o700)
        penv = dict(env, LD_PRELOAD=a.fixclock + ":" + a.lib,
                    PT_FIXCLOCK_NS=str(ns))
        code = ("import os,sys\n"
                "p='%s/proftrace-%%d-%d.ptspool' %% os.getpid()\n"
                "if sys.argv[1] == 'symlink': os.symlink(sys.argv[2], p)\n"
                "else: open(p, 'w').write('planted\\n')\n"
                "os.execve('/bin/echo', ['/bin/echo', 'ran'], "
                "{k: os.environ['PT_' + k] for k in ('LD_PRELOAD', "
                "'PROFTRACE_DIR', 'PROFTRACE_SOCKET', 'PT_FIXCLOCK_NS')})\n"
                % (spool, ns))
        penv2 = ptrel.untraced_env({"PT_" + k: penv[k] for k in
                                    ("LD_PRELOAD", "PROFTRACE_DIR",
                                     "PROFTRACE_SOCKET", "PT_FIXCLOCK_NS")})
        r = ptrel.run(["/usr/bin/python3", "-c", code, kind, victim],
                      env=penv2)
        check(r.returncode == 0 and r.stdout == b"ran\n",
              "the program did not run normally past the planted %s: %s"
              % (kind, r.stderr.decode()))
        with open(victim) as f:
            check(f.read() == "precious\n", "the planted link was followed:"
                  " its target was written")
        names = os.listdir(spool)
        check(len(names) == 1, "spool: %s" % names)
        p = os.path.join(spool, names[0])
        if kind == "symlink":
            check(os.path.islink(p), "the planted link was replaced")
        else:
            with open(p) as f:
                check(f.read() == "planted\n", "the planted file was "
                      "written to")
        log("S4 %s planted at the spool name: not followed, not written; "
            "the program ran untraced" % kind)


SECRETS = {"MY_TOKEN": "tok-secret-1", "DB_PASSWORD": "pw-secret-2",
           "AWS_SECRET_ACCESS_KEY": "aws-secret-3", "api_key": "key-secret-4",
           "GIT_CREDENTIALS": "cred-secret-5", "PASSWD": "pwd-secret-6",
           "Github_Token_X": "tok-secret-7"}
RECORDED = {"CI_JOB_ID": "job-1", "GITHUB_JOB": "gh-1",
            "OPAM_PACKAGE_NAME": "pkg-1", "FOO_VISIBLE": "seen-foo"}


def s5_env(a, d):
    os.mkdir(d + "/s5run", 0o700)
    sock, cap = d + "/s5run/sock", d + "/s5.ptcap"
    dm = ptrel.Daemon(a, cap, sock)
    listed = list(SECRETS) + ["FOO_VISIBLE"]
    extra = dict(SECRETS, **RECORDED, NOT_LISTED="hidden-1",
                 PROFTRACE_ENV=":".join(listed[:3]) + "," +
                 " ".join(listed[3:]))
    r = ptrel.run(["sh", "-c", "/bin/true one; env -i /bin/true two"],
                  env=ptrel.traced_env(a.lib, sock, extra=extra))
    check(r.returncode == 0, "traced command failed")
    time.sleep(0.3)
    dm.stop()
    with open(cap, "rb") as f:
        raw, _ = ptrel.gunzip_prefix(f.read())
    for v in list(SECRETS.values()) + ["hidden-1"]:
        check(v.encode() not in raw, "%s is in the capture" % v)
    want = {"%s=%s" % kv for kv in RECORDED.items()}
    hellos = 0
    for rec in ptrel.parse_records(raw)[0]:
        if rec["kind"] != ptrel.K_FRAME:
            continue
        rtype, _pid, _p, items = ptrel.frame_items(rec["data"])
        if rtype != ptrel.HELLO:
            continue
        env = {v.decode() for t, v in items if t == ptrel.T_ENV}
        if env:
            hellos += 1
            check(env == want, "a HELLO records %s, want %s"
                  % (sorted(env), sorted(want)))
    check(hellos >= 3, "only %d HELLO frames carry the environment" % hellos)
    log("S5 %d HELLOs record exactly %s; no secret value anywhere in the "
        "capture (env -i'd child included)" % (hellos, sorted(want)))


def s6_redact(a, d):
    secret_cmd = ("/bin/echo --password=hunter2 ghp_abcDEF123 keep-me "
                  ">/dev/null")
    red = ["--redact", "hunter2", "--redact=ghp_[A-Za-z0-9]+"]
    cap = d + "/s6.ptcap"
    r = ptrel.run([a.proftrace, "record", "-o", cap, "--csv", d + "/s6.csv"]
                  + red + ["--", "sh", "-c", secret_cmd],
                  env=ptrel.untraced_env())
    check(r.returncode == 0, "record --redact failed: " + r.stderr.decode())
    csv_text = open(d + "/s6.csv").read()
    for name, text in (("record's CSV", csv_text),
                       ("record's summary", r.stderr.decode())):
        check("hunter2" not in text and "ghp_abc" not in text,
              "%s holds a secret:\n%s" % (name, text))
    check("/bin/echo '--password=***' '***' keep-me" in csv_text,
          "record's CSV does not mask as expected:\n" + csv_text)
    rc, plain, _e = ptrel.convert(a, cap)
    check("hunter2" in plain, "control: the capture itself lost the argv")
    for fmt in ("csv", "json", "folded", "folded-cpu"):
        rc, out, err = ptrel.convert(a, cap, fmt=fmt, extra=red)
        check(rc == 0, "convert -f %s --redact: %d %s" % (fmt, rc, err))
        check("hunter2" not in out and "ghp_abc" not in out,
              "convert -f %s --redact output holds a secret" % fmt)
    rc, out, err = ptrel.convert(a, cap, fmt="json", extra=red)
    check("***" in out, "convert -f json --redact masks nothing")
    for cmd in (["report", "--depth", "9"] + red + [cap],
                ["diff", "--group-by", "command"] + red + [cap, cap]):
        r = ptrel.run([a.proftrace] + cmd, env=ptrel.untraced_env())
        out = r.stdout.decode() + r.stderr.decode()
        check(r.returncode == 0, "%s --redact: exit %d\n%s"
              % (cmd[0], r.returncode, out))
        check("hunter2" not in out and "ghp_abc" not in out,
              "%s --redact output holds a secret:\n%s" % (cmd[0], out))
    rc, out, err = ptrel.convert(a, cap, extra=["--redact", "a("])
    check(rc == 2 and "--redact" in err, "a bad pattern: exit %d, %s"
          % (rc, err))
    log("S6 record (CSV, summary), convert (csv, json, folded, folded-cpu), "
        "report and diff mask; a bad pattern: "
        + err.strip().splitlines()[0])
    os.mkdir(d + "/s6run", 0o700)
    sock = d + "/s6run/sock"
    dm = ptrel.Daemon(a, d + "/s6d.ptcap", sock,
                      extra=["--csv", d + "/s6d.csv"] + red)
    ptrel.run(["sh", "-c", secret_cmd], env=ptrel.traced_env(a.lib, sock))
    time.sleep(0.3)
    check(dm.stop() == 0, "daemon --redact failed:\n" + dm.log())
    text = open(d + "/s6d.csv").read()
    check("hunter2" not in text and "--password=***" in text,
          "daemon's CSV:\n" + text)
    log("S6 daemon --csv masks")


def s8_stale_log(a, d):
    """/proc/PID/fd/N of this process, holding what a stale PROFTRACE_LOG
    may lead to once the collector is gone and PID is someone else's: a
    FIFO nobody reads (opening it for writing would block) and a file
    (appending would corrupt it), named with their own device and inode,
    the closest a stale name can come."""
    fifo, victim = d + "/stale-fifo", d + "/stale-file"
    os.mkfifo(fifo, 0o600)
    with open(victim, "w") as f:
        f.write("precious\n")
    ns = os.stat("/proc/self/ns/pid").st_ino
    for what, fd in (("a FIFO nobody reads", os.open(fifo, os.O_PATH)),
                     ("a file", os.open(victim, os.O_RDONLY))):
        st = os.fstat(fd)
        name = "%d:%d:%d:/proc/%d/fd/%d" % (
            ns, os.major(st.st_dev) << 32 | os.minor(st.st_dev), st.st_ino,
            os.getpid(), fd)
        env = ptrel.traced_env(a.lib, d + "/no-socket",
                               extra={"PROFTRACE_LOG": name})
        r = ptrel.run(["/bin/echo", "ran"], env=env, timeout=20)
        os.close(fd)
        check(r.returncode == 0 and r.stdout == b"ran\n" and not r.stderr,
              "S8 %s behind PROFTRACE_LOG: exit %d, %r %r"
              % (what, r.returncode, r.stdout, r.stderr))
        with open(victim) as f:
            check(f.read() == "precious\n", "S8 %s behind PROFTRACE_LOG "
                  "was written to" % what)
        log("S8 %s behind a stale PROFTRACE_LOG: not opened, not written"
            % what)


def main():
    a = ptrel.args(__doc__, extra)
    d = ptrel.tmpdir("sec")
    s1_permissions(a, d)
    root = ptrel.is_root() and shutil.which("setpriv")
    try:
        pwd.getpwuid(NOBODY)
    except KeyError:
        root = False
    if root:
        s2_rundir(a, d)
        s3_peer_uid(a, d)
    else:
        log("S2, S3 skipped: need root and setpriv to act as uid %d" % NOBODY)
    s4_spool(a, d)
    s5_env(a, d)
    s6_redact(a, d)
    s8_stale_log(a, d)
    log("PASS")


if __name__ == "__main__":
    main()
