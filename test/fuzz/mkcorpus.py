#!/usr/bin/env python3
"""Make the seed corpora of the fuzz targets from real runs.

    mkcorpus.py PROFTRACE LIBPROFTRACE   (from test/fuzz/)
    mkcorpus.py --ring                   corpus-ring/ alone

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


def ring_seeds():
    """Seeds of fuzz-ring.c from corpus-frame/: byte 0 (size, mode), tail,
    then the head's distance (raw) or a hole's size (written by the
    writer), then the data area (raw) or the frames (written)."""
    for name in sorted(os.listdir("corpus-frame")):
        with open(os.path.join("corpus-frame", name), "rb") as fh:
            conn = fh.read()
        fs = [f for f in frames(conn) if len(f) <= 2048][:12]
        if not fs:
            continue
        size_code, size = 6, 64 << 6            # a 4 KiB data area
        for tail, hole in ((0, 0), ((1 << 64) - 3 * 8, 48), (size - 40, 0)):
            area, pos = bytearray(size), tail
            for i, f in enumerate(fs):
                need = (16 + len(f) + 7) & ~7
                if pos - tail + need > size:
                    break
                rec = struct.pack("<IIQ", len(f), 0, ~pos & (1 << 64) - 1) + f
                rec += bytes(need - len(rec))
                for j, b in enumerate(rec):
                    area[(pos + j) % size] = b
                pos = (pos + need) & (1 << 64) - 1
                if i == 0 and hole:
                    pos += hole
            put("corpus-ring", bytes([size_code]) + struct.pack(
                "<QQ", tail, (pos - tail) & (1 << 64) - 1) + bytes(area))
            put("corpus-ring", bytes([16 | size_code]) + struct.pack(
                "<QQ", tail, hole) + b"".join(fs))


if __name__ == "__main__":
    if sys.argv[1:] == ["--ring"]:
        ring_seeds()
    else:
        main(*sys.argv[1:])
        ring_seeds()
