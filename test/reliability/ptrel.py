"""Shared pieces of the reliability tests (test/reliability/*.py).

Every test is a program: exit 0 passed, 1 failed (the reason on stderr),
77 skipped (meson's code: something the test needs is missing here, e.g.
root).  Tests find proftrace and the library from --proftrace/--lib or the
environment (PROFTRACE, PROFTRACE_LIB), and keep their files in a private
directory under /tmp that is removed at the end, unless PT_KEEP is set.

The capture and frame layouts below are doc/format.md's, byte for byte.
"""

import argparse
import atexit
import csv
import io
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77

FRAME_MAGIC = 0x52544650
CAP_MAGIC = 0x50414350
HELLO, EXEC, EXEC_FAILED, SPAWN, FORK, REAP, EXIT, STOP = 1, 2, 3, 4, 5, 6, 7, 8
K_META, K_CONNECT, K_FRAME, K_EOF, K_DROP, K_LOSS = 1, 2, 3, 4, 5, 6
T_EXE, T_ARG, T_CWD, T_ENV, T_PATH = 1, 2, 3, 4, 5
HELLO_IMAGE, HELLO_FORK, HELLO_FOREIGN, HELLO_AUX = 1, 2, 3, 4
FRAME_HDR = 32
CAP_HDR = 40


def log(msg):
    print(msg, flush=True)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def skip(msg):
    print("SKIP: " + msg, flush=True)
    sys.exit(SKIP)


def check(cond, msg):
    if not cond:
        fail(msg)


def args(description, extra=None):
    """Parse the common options; `extra(parser)` adds a test's own."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--proftrace", default=os.environ.get("PROFTRACE"))
    p.add_argument("--lib", default=os.environ.get("PROFTRACE_LIB"))
    p.add_argument("--helpers", default=os.environ.get("PT_HELPERS"),
                   help="directory of the compiled helpers (spawnlat...)")
    if extra:
        extra(p)
    a = p.parse_args()
    if not a.proftrace or not a.lib:
        p.error("--proftrace and --lib (or PROFTRACE, PROFTRACE_LIB) needed")
    a.proftrace = os.path.abspath(a.proftrace)
    a.lib = os.path.abspath(a.lib)
    return a


def is_root():
    return os.geteuid() == 0


_dirs = []


def _cleanup():
    if os.environ.get("PT_KEEP"):
        for d in _dirs:
            log("kept " + d)
        return
    for d in _dirs:
        # A test that failed may leave its tmpfs mounted.
        for m in ("/mnt", "/ro"):
            if os.path.ismount(d + m):
                subprocess.run(["umount", "-l", d + m],
                               stderr=subprocess.DEVNULL)
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def tmpdir(tag="rel"):
    d = tempfile.mkdtemp(prefix="pt-" + tag + "-", dir="/tmp")
    os.chmod(d, 0o700)
    _dirs.append(d)
    return d


def traced_env(lib, sock=None, spool=None, extra=None, base=None):
    env = dict(os.environ if base is None else base)
    for k in ("PROFTRACE_SOCKET", "PROFTRACE_DIR", "PROFTRACE_ENV",
              "PROFTRACE_TRACE_DIR", "PROFTRACE_LOG"):
        env.pop(k, None)
    env["LD_PRELOAD"] = lib
    if sock:
        env["PROFTRACE_SOCKET"] = sock
    if spool:
        env["PROFTRACE_DIR"] = spool
    env.update(extra or {})
    return env


def untraced_env(extra=None):
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_DIR",
              "PROFTRACE_TRACE_DIR", "PROFTRACE_LOG"):
        env.pop(k, None)
    env.update(extra or {})
    return env


def kernel_env_sh(name):
    """Shell code for the value of name in the running shell's initial
    environment, the kernel's copy (/proc/$$/environ): the variables
    proftrace added stay there, out of the program's own sight."""
    return "$(tr '\\0' '\\n' < /proc/$$/environ | sed -n 's/^%s=//p')" % name


def kernel_env_py(name):
    """Python code for the same, in the running process."""
    return ("dict(e.split(b'=', 1) for e in open('/proc/self/environ', "
            "'rb').read().split(b'\\0') if b'=' in e).get(b'%s', b'')"
            ".decode()" % name)


def wait_for(pred, timeout, what, step=0.02):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(step)
    fail("timed out waiting for " + (what() if callable(what) else what))


class Daemon:
    """A `proftrace daemon` on a socket of its own, logging to a file."""

    def __init__(self, a, capture, sock, extra=(), wrapper=(), prefix=(),
                 env=None, log_path=None):
        self.capture, self.sock = capture, sock
        self.log_path = log_path or capture + ".log"
        self.logf = open(self.log_path, "w")
        cmd = list(prefix) + list(wrapper) + [
            a.proftrace, "daemon", "-o", capture, "--force", "--socket",
            sock] + list(extra)
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self.logf,
                                  env=env or untraced_env())
        wait_for(lambda: os.path.exists(sock) or self.p.poll() is not None,
                 120, "the daemon's socket")
        check(self.p.poll() is None, "the daemon exited at once:\n" +
              self.log())

    def log(self):
        if not self.logf.closed:
            self.logf.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, timeout=120):
        """SIGTERM, then wait; returns the exit status."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGCONT)
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("the daemon did not finish within %d s of SIGTERM" % timeout)
        finally:
            self.logf.close()

    def kill(self, sig=signal.SIGKILL):
        self.p.send_signal(sig)


def run(cmd, timeout=600, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    try:
        return subprocess.run(cmd, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        fail("%s hung (more than %d s)" % (cmd[:3], timeout))


def convert(a, inputs, fmt="csv", extra=(), timeout=600):
    """proftrace convert; returns (status, stdout text, stderr text)."""
    if isinstance(inputs, str):
        inputs = [inputs]
    r = run([a.proftrace, "convert", "-f", fmt] + list(extra) + ["--"] +
            list(inputs), timeout=timeout, env=untraced_env())
    return (r.returncode, r.stdout.decode(errors="surrogateescape"),
            r.stderr.decode(errors="replace"))


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


# ---- frames (doc/format.md, "Frames") ----

def tail(items):
    out = bytearray()
    for tag, s in items:
        out.append(tag)
        out += (s.encode("utf-8", "surrogateescape") if isinstance(s, str)
                else s) + b"\0"
    return bytes(out)


def frame(rtype, pid, payload, t=1_000_000_000, flags=0, version=1,
          magic=FRAME_MAGIC, length=None, raw_length=None, reserved=0):
    n = len(payload)
    hdr = struct.pack("<IBBHIIIIQ", magic, version, rtype, flags, pid,
                      n if length is None else length,
                      n if raw_length is None else raw_length, reserved, t)
    return hdr + payload


def hello(pid, ppid=1, argv=("prog",), cwd="/", env=(), kind=HELLO_IMAGE,
          uid=None, t=1_000_000_000):
    fixed = struct.pack("<IIIIQQ", ppid, os.getuid() if uid is None else uid,
                        kind, 0, 1_700_000_000_000_000_000 + t, t)
    items = [(T_EXE, argv[0])] + [(T_ARG, x) for x in argv] + [(T_CWD, cwd)]
    items += [(T_ENV, e) for e in env]
    return frame(HELLO, pid, fixed + tail(items), t=t)


def exit_frame(pid, status=0, t=2_000_000_000):
    return frame(EXIT, pid, struct.pack("<iIQQQ", status, 1, 10, 20, 1000),
                 t=t)


def exec_failed(pid, err=2, t=1_500_000_000):
    return frame(EXEC_FAILED, pid, struct.pack("<II", err, 1), t=t)


def deflated(f):
    """The same frame, deflated as the library sends large ones."""
    h = struct.unpack("<IBBHIIIIQ", f[:FRAME_HDR])
    z = zlib.compress(f[FRAME_HDR:], 6)
    return struct.pack("<IBBHIIIIQ", h[0], h[1], h[2], 1, h[4], len(z),
                       len(f) - FRAME_HDR, 0, h[8]) + z


def seqpacket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    return s


# ---- captures (doc/format.md, "Capture") ----

def gunzip_prefix(data):
    """Everything a gzip stream decodes to, up to its end or damage:
    (bytes, error text or None)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data)
    except zlib.error as e:
        # Decode again a byte at a time to keep what preceded the damage,
        # as proftrace's reader does: zlib drops a whole call's output on
        # an error, and 64 bytes of input (as this once fed it) can
        # inflate to hundreds, records that the reader delivers.
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = bytearray()
        for i in range(len(data)):
            try:
                out += d.decompress(data[i:i + 1])
            except zlib.error:
                return bytes(out), str(e)
        return bytes(out), str(e)
    if not d.eof:
        return out, "truncated"
    return out, None


def parse_records(raw):
    """Capture records of a decompressed capture, version 1 to 3: (records,
    offset where the whole records end).  Each record is a dict: kind,
    conn, peer_pid, peer_uid, recv, off and end (in raw), data (a frame's
    whole bytes, as version 1 stores them), head (version 2 and 3: the
    record's head byte)."""
    if len(raw) < 16 or raw[:8] != b"PFTRCAP\0":
        return [], 0
    version, off = struct.unpack_from("<II", raw, 8)
    if version >= 2:
        return _parse_v2(raw, off)
    recs = []
    while off + CAP_HDR <= len(raw):
        (magic, kind, _r, length, ppid, puid, _r2, conn,
         recv) = struct.unpack_from("<IHHIIIIQQ", raw, off)
        if magic != CAP_MAGIC or off + CAP_HDR + length > len(raw):
            break
        recs.append(dict(kind=kind, conn=conn, peer_pid=ppid, peer_uid=puid,
                         recv=recv, off=off, end=off + CAP_HDR + length,
                         data=raw[off + CAP_HDR:off + CAP_HDR + length]))
        off += CAP_HDR + length
    return recs, off


# ---- capture versions 2 and 3 (doc/format.md), decoded independently of the C
# reader so that the tests check the specification, not the code ----

M32, M64 = (1 << 32) - 1, (1 << 64) - 1
FIXED = {HELLO: 32, EXEC: 8, EXEC_FAILED: 8, SPAWN: 8, FORK: 8, REAP: 40,
         EXIT: 32}


class _Body:
    def __init__(self, b, i, end):
        self.b, self.i, self.end = b, i, end

    def uv(self):
        x = shift = 0
        while True:
            if self.i >= self.end or shift > 63:
                raise ValueError("varint")
            c = self.b[self.i]
            self.i += 1
            x |= (c & 0x7f) << shift
            shift += 7
            if not c & 0x80:
                if x > M64:
                    raise ValueError("varint")
                return x

    def u32(self):
        v = self.uv()
        if v > M32:
            raise ValueError("u32")
        return v

    def z32(self):
        v = self.u32()
        return ((v >> 1) ^ -(v & 1)) & M32

    def z64(self):
        v = self.uv()
        return ((v >> 1) ^ -(v & 1)) & M64


def _items(p, start):
    pos, out = start, []
    while pos < len(p):
        if p[pos] >= 0x80:
            return None
        end = p.find(b"\0", pos + 1)
        if end < 0:
            return None
        out.append((p[pos], p[pos:end + 1]))
        pos = end + 1
    return out


def _note(st, f):
    if len(f) < FRAME_HDR + 8 or f[5] not in (EXEC, SPAWN):
        return
    pid = struct.unpack_from("<I", f, 8 if f[5] == EXEC else FRAME_HDR)[0]
    slot = pid % 1024
    st["refs"].pop(slot, None)
    items = _items(f[FRAME_HDR:], 8)
    if items is None:
        return
    args = b"".join(i for t, i in items if t == 2)
    cwd = next((i[1:-1] for t, i in items if t == 3), None)
    path = next((i[1:-1] for t, i in items if t == 5), None)
    if len(args) + len(cwd or b"") + len(path or b"") > 32768:
        return
    st["refs"][slot] = (pid, args, cwd, path)


def _frame_v2(st, c, head, peer_pid, peer_uid):
    if c.i >= c.end:
        raise ValueError("no frame")
    rtype = c.b[c.i]
    c.i += 1
    pid = (peer_pid + c.z32()) & M32
    ov = c.uv()
    if ov > 1 << 32:
        raise ValueError("origin")
    origin = 0
    if ov:
        v = ov - 1
        origin = (pid + ((v >> 1) ^ -(v & 1))) & M32
    t = (st["time"] + c.z64()) & M64
    st["time"] = t
    P = lambda x: (pid + x) & M32
    if rtype == HELLO:
        ppid, uid, kind, res = P(c.z32()), (peer_uid + c.z32()) & M32, c.u32(), c.u32()
        st["clock"] = (st["clock"] + c.z64()) & M64
        start = (t - c.z64()) & M64
        fixed = struct.pack("<IIIIQQ", ppid, uid, kind, res,
                            (t + st["clock"]) & M64, start)
    elif rtype == EXEC_FAILED:
        fixed = struct.pack("<II", c.u32(), c.u32())
    elif rtype in (EXEC, SPAWN, FORK):
        a = P(c.z32())
        fixed = struct.pack("<II", a, c.u32())
    elif rtype == REAP:
        a = P(c.z32())
        fixed = struct.pack("<IIIIQQQ", a, c.z32(), c.u32(), c.u32(),
                            c.uv(), c.uv(), c.uv())
    elif rtype == EXIT:
        fixed = struct.pack("<IIQQQ", c.z32(), c.u32(), c.uv(), c.uv(), c.uv())
    else:
        fixed = b""
    tail = bytearray()
    if head & 0x80:
        ref = st["refs"].get(pid % 1024)
        if ref and ref[0] != pid:
            ref = None
        while c.i < c.end:
            x = c.b[c.i]
            if x < 0x80:
                e = c.b.find(b"\0", c.i + 1, c.end)
                if e < 0:
                    raise ValueError("unterminated")
                tail += c.b[c.i:e + 1]
                c.i = e + 1
                continue
            c.i += 1
            if ref is None or x > 0x82:
                raise ValueError("reference")
            if x == 0x80:
                tail += ref[1]
            elif x == 0x81 and ref[2] is not None:
                tail += b"\x03" + ref[2] + b"\0"
            elif x == 0x82 and ref[3] is not None:
                tail += b"\x01" + ref[3] + b"\0"
            else:
                raise ValueError("reference")
    else:
        tail = c.b[c.i:c.end]
    payload = fixed + bytes(tail)
    f = struct.pack("<IBBHIIIIQ", FRAME_MAGIC, 1, rtype, 0, pid, len(payload),
                    len(payload), origin, t) + payload
    return f


def _parse_v2(raw, off):
    st = dict(conn=0, recv=0, pid=0, uid=0, time=0, clock=0, conns={},
              refs={})
    recs = []
    while off < len(raw):
        try:
            head = raw[off]
            c = _Body(raw, off + 1, min(len(raw), off + 11))
            length = c.uv()
            body = c.i
            if body + length > len(raw):
                break
            c = _Body(raw, body, body + length)
            kind = head & 0x0f
            conn = (st["conn"] + c.z64()) & M64
            st["conn"] = conn
            slot = conn % 4096
            if head & 0x10:
                st["pid"] = (st["pid"] + c.z32()) & M32
                st["uid"] = (st["uid"] + c.z32()) & M32
                st["conns"][slot] = (conn, st["pid"], st["uid"])
            cs = st["conns"].get(slot)
            pp, pu = (cs[1], cs[2]) if cs and cs[0] == conn else (0, 0)
            if head & 0x20:
                d = c.z64()
                if kind != K_FRAME and head & 0x40:
                    d *= 1000   # version 3: microseconds
                st["recv"] = (st["recv"] + d) & M64
            if kind == K_FRAME and not head & 0x40:
                data = _frame_v2(st, c, head, pp, pu)
                _note(st, data)
            else:
                data = raw[c.i:c.end]
        except (ValueError, IndexError, struct.error):
            break
        recs.append(dict(kind=kind, conn=conn, peer_pid=pp, peer_uid=pu,
                         recv=st["recv"], off=off, end=c.end, data=data,
                         head=head))
        off = c.end
    return recs, off


# ---- the run log (proftrace/wire.h, struct pt_log_rec) ----

LOG_MAGIC = 0x474c5450


def log_check(length, stream, flags):
    """pt_log_check() of proftrace/wire.h, written again from the
    formula."""
    h = (length * 0x9e3779b97f4a7c15) & M64
    h ^= (stream + 0x632be59bd9b4e019 + ((h << 6) & M64) + (h >> 2)) & M64
    h ^= (flags * 0xc2b2ae3d27d4eb4f) & M64
    h ^= h >> 29
    return ((h ^ (h >> 32)) & 0xffffffff) ^ LOG_MAGIC


def log_record(stream, flags, frames, length=None):
    """A run log record as the library appends it; length, if given, is
    what the header claims (and its check vouches for)."""
    n = len(frames) if length is None else length
    check = log_check(n, stream, flags)
    return (struct.pack("<IIQII", LOG_MAGIC, n, stream, flags, check) +
            frames + struct.pack("<I", check))


def read_capture(path):
    with open(path, "rb") as f:
        raw, _ = gunzip_prefix(f.read())
    return parse_records(raw)[0]


def frame_items(f):
    """(type, pid, fixed+tail payload, [(tag, bytes)...]) of a plain frame."""
    (_m, _v, rtype, _fl, pid, length, _raw, _res,
     _t) = struct.unpack_from("<IBBHIIIIQ", f, 0)
    payload = f[FRAME_HDR:FRAME_HDR + length]
    fixed = {HELLO: 32, EXEC: 8, EXEC_FAILED: 8, SPAWN: 8, FORK: 8,
             REAP: 40, EXIT: 32}.get(rtype, 0)
    items, pos = [], fixed
    while pos < len(payload):
        end = payload.index(b"\0", pos + 1)
        items.append((payload[pos], payload[pos + 1:end]))
        pos = end + 1
    return rtype, pid, payload, items


def helper(a, name):
    d = a.helpers or os.path.dirname(os.path.abspath(__file__))
    p = os.path.join(d, name)
    check(os.access(p, os.X_OK), "helper %s not built (--helpers)" % p)
    return p


def peak_rss_kb(pid):
    """VmHWM of a live process, or 0."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
