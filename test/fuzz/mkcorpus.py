#!/usr/bin/env python3
"""Make the seed corpora of the fuzz targets from real runs.

    mkcorpus.py PROFTRACE LIBPROFTRACE   (from test/fuzz/)
    mkcorpus.py --log                    corpus-log/ alone

corpus-frame/: spool files, i.e. each one connection's frames exactly as
the library sends them (HELLO with argv, cwd and allowlisted environment,
EXEC, FORK, REAP, EXIT, a deflated frame of a long command line).
corpus-capture/: a capture of a small pipeline, uncompressed, behind the
mode byte fuzz-capture.c reads (0 plain, 1 gzip, 4 redact), and spool
files behind mode 2.  Files are named by the SHA-1 of their contents, as
libFuzzer names what it adds.  Run again only to refresh the seeds; keep
the seeds of older capture versions (the reader still reads version 1),
which an older proftrace recorded.
"""

import gzip
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import log_record  # noqa: E402


def put(d, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def main(proftrace, lib):
    tmp = tempfile.mkdtemp()
    try:
        spool = tmp + "/spool"
        os.mkdir(spool)
        env = dict(os.environ, LD_PRELOAD=lib, PROFTRACE_DIR=spool,
                   PROFTRACE_SOCKET=tmp + "/none", CI_JOB_ID="7",
                   OPAM_PACKAGE_NAME="dune")
        long_args = " ".join("argument-%d" % i for i in range(800))
        subprocess.run(["sh", "-c", "/bin/echo hi | cat >/dev/null; "
                        "(cd / && ls >/dev/null); /bin/echo " + long_args +
                        " >/dev/null; /nonexistent 2>/dev/null; exit 0"],
                       env=env, check=True)
        files = sorted(os.listdir(spool))
        for f in files:
            with open(os.path.join(spool, f), "rb") as fh:
                data = fh.read()
            put("corpus-frame", data)
        for f in files[:3]:
            with open(os.path.join(spool, f), "rb") as fh:
                put("corpus-capture", b"\x02" + fh.read())
        cap = tmp + "/c.ptcap"
        subprocess.run([proftrace, "record", "-q", "-o", cap, "--", "sh",
                        "-c", "/bin/echo a1b2 | cat >/dev/null; kill -9 $$"],
                       env={k: v for k, v in os.environ.items()
                            if k != "LD_PRELOAD"})
        with open(cap, "rb") as fh:
            raw = gzip.decompress(fh.read())
        for mode in (0, 1, 4):
            put("corpus-capture", bytes([mode]) + raw)
    finally:
        shutil.rmtree(tmp)


def frames(data):
    """The frames of one connection's bytes (32-byte header, length at 12)."""
    out, off = [], 0
    while len(data) - off >= 32:
        n = 32 + struct.unpack_from("<I", data, off + 12)[0]
        out.append(data[off:off + n])
        off += n
    return out


def log_seeds():
    """Seeds of fuzz-log.c from corpus-frame/: operations on the file, each
    a byte (b % 4: 0 raw bytes, 1 a record by the library's writer, 2 a
    record cut short, 3 a drain) and its arguments."""
    def raw(data):
        return b"\x00" + struct.pack("<H", len(data)) + data

    def rec(stream, flags, frame):
        return (bytes([1 | stream << 2]) + struct.pack("<H", len(frame)) +
                bytes([flags]) + frame)

    def cut(stream, length, count):
        return bytes([2 | stream << 2]) + struct.pack("<HH", length, count)

    def drain(sixteenths):
        return bytes([3 | sixteenths << 2])

    conns = []
    for name in sorted(os.listdir("corpus-frame")):
        with open(os.path.join("corpus-frame", name), "rb") as fh:
            fs = [f for f in frames(fh.read()) if len(f) <= 4096][:10]
        if fs:
            conns.append(fs)
    # Deterministic garbage, so that a rerun makes the same seeds.
    noise = bytes((i * 131 + (i >> 3) * 17) & 0xff for i in range(700))
    magics = b"".join(b"PTLG" + noise[i:i + 9] for i in range(0, 200, 9))
    for k, fs in enumerate(conns[:4]):
        a, b = 1 + k, 2 + k
        whole = b"".join(rec(a, 0, f) for f in fs[:-1]) + rec(a, 1, fs[-1])
        # whole records, one drain at the end (the final one)
        put("corpus-log", whole)
        # two writers taking turns, drains between, one frame refused
        mixed = b""
        for i, f in enumerate(fs):
            mixed += rec(a if i % 2 else b, 0x80 if i == 3 else 0, f)
            mixed += drain(i % 3)
        put("corpus-log", mixed)
        # a writer killed inside its record, the next one's after it
        put("corpus-log", rec(a, 0, fs[0]) + cut(b, 3000, 1500) +
            b"".join(rec(a, 0, f) for f in fs[1:]) + drain(1))
        # cut short at the end: waited for, then past the grace
        put("corpus-log", rec(a, 0, fs[0]) + cut(b, 60000, 200) + drain(0) +
            drain(9) + rec(a, 0, fs[-1]) + drain(9) + drain(0))
        # scribbles between records: noise, noise full of the magic, a
        # header vouching for a length that is not there, a damaged
        # trailer, and whole records written as raw bytes
        bad = bytearray(log_record(9, 0, fs[0]))
        bad[-1] ^= 0x55
        put("corpus-log", raw(noise[:300]) + rec(a, 0, fs[0]) + drain(2) +
            raw(magics) + rec(a, 0, fs[1 % len(fs)]) +
            raw(log_record(7, 0, b"", length=1 << 20)[:24]) +
            rec(a, 0, fs[-1]) + raw(bytes(bad)) + drain(4) +
            raw(b"".join(log_record(5, 0, f) for f in fs[:3])) + drain(16))
    # no frame inside at all: empty records, and the largest length
    put("corpus-log", raw(log_record(3, 1, b"") * 3) + drain(0) +
        raw(log_record(3, 0, b"", length=32 + (64 << 20))[:24] + noise[:40]) +
        drain(20) + raw(log_record(3, 0, b"x" * 40)) + drain(20))


if __name__ == "__main__":
    if sys.argv[1:] == ["--log"]:
        log_seeds()
    else:
        main(*sys.argv[1:])
        log_seeds()
