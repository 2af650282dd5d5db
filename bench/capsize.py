#!/usr/bin/env python3
"""Where the bytes of a capture go: capsize.py CAPTURE [EXECUTIONS]

Recompresses the capture's records (gzip, as the collector writes it, but as
one stream: no sync flushes) with one kind of content removed or zeroed at a
time, and prints the size per execution and the difference each makes.  An
answer to "what would make captures smaller", measured on a real capture.
EXECUTIONS defaults to the number of HELLO frames of kind IMAGE.  Reads the
whole capture into memory: meant for captures of up to some 100 MB.

The analysis is of the version 1 layout (40-byte record headers, frames
as sent): a version 2 capture is decoded to it first (with the decoder of
test/reliability/ptrel.py), and its own size is printed alongside.
"""

import gzip
import os
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "reliability"))
import ptrel  # noqa: E402  (the capture decoder the tests use)

REC = 40            # struct pt_cap_record
FRAME, CONNECT, EOF = 3, 2, 4
HELLO, EXEC, SPAWN, REAP, EXIT = 1, 2, 4, 6, 7


def load(path):
    """(version, version 1 file header, [(kind, 40-byte header, data)])"""
    data = gzip.open(path).read()
    version = struct.unpack_from("<I", data, 8)[0]
    head = data[:8] + struct.pack("<II", 1, 16)
    recs = []
    for r in ptrel.parse_records(data)[0]:
        h = struct.pack("<IHHIIIIQQ", ptrel.CAP_MAGIC, r["kind"], 0, len(r["data"]),
                        r["peer_pid"], r["peer_uid"], 0, r["conn"], r["recv"])
        recs.append((r["kind"], h, r["data"]))
    return version, head, recs


def zsize(buf, level=1):
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return len(c.compress(buf) + c.flush())


def zero(b, at, n):
    b[at:at + n] = bytes(n)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    version, head, recs = load(sys.argv[1])
    images = sum(1 for k, _, p in recs if k == FRAME and len(p) > 48 and p[5] == HELLO
                 and struct.unpack_from("<I", p, 40)[0] == 1)
    n = int(sys.argv[2]) if len(sys.argv) == 3 else images

    def build(f):
        out = bytearray(head)
        for k, h, p in recs:
            r = f(k, bytearray(h), bytearray(p))
            if r is not None:
                out += r[0] + r[1]
        return bytes(out)

    base = build(lambda k, h, p: (h, p))
    b1 = zsize(base)
    print(f"{sys.argv[1]}: {len(recs):,} records, {n:,} executions")
    print(f"  the file (version {version})             "
          f"{os.path.getsize(sys.argv[1]) / n:8.1f} B/exec")
    if version >= 2:
        print("  (frames' receive times are not in version 2: the analysis "
              "below has the time of the record before)")
    print("as version 1 would store it:")
    print(f"  uncompressed                      {len(base) / n:8.1f} B/exec")
    for lvl in (1, 3, 6, 9):
        t = time.process_time()
        s = zsize(base, lvl)
        dt = time.process_time() - t
        print(f"  gzip level {lvl}                      {s / n:8.1f} B/exec"
              f"   ({dt * 1e9 / len(base):.1f} ns per input byte)")

    def show(name, f):
        s = zsize(build(f))
        print(f"  {name:34s}{s / n:8.1f} B/exec  {(s - b1) / n:+7.1f}  ({100 * (s - b1) / b1:+.0f} %)")

    print("level 1 with one thing removed:")

    def recv_ns(k, h, p):
        zero(h, 32, 8)
        return h, p
    show("recv_ns of every record", recv_ns)

    def recv_ms(k, h, p):
        if k == FRAME:
            v = struct.unpack_from("<Q", h, 32)[0]
            struct.pack_into("<Q", h, 32, v // 1000000 * 1000000)
        return h, p
    show("recv_ns of frames, rounded to ms", recv_ms)

    def conn_id(k, h, p):
        zero(h, 24, 8)
        return h, p
    show("conn_id", conn_id)
    show("CONNECT and EOF records", lambda k, h, p: None if k in (CONNECT, EOF) else (h, p))

    def time_ns(k, h, p):
        if k == FRAME:
            zero(p, 24, 8)
        return h, p
    show("frame time_ns", time_ns)

    def hello_clocks(k, h, p):
        if k == FRAME and p[5] == HELLO:
            zero(p, 48, 16)
        return h, p
    show("HELLO realtime_ns and start_ns", hello_clocks)

    def rusage(k, h, p):
        if k == FRAME and p[5] == EXIT:
            zero(p, 40, 24)
        if k == FRAME and p[5] == REAP:
            zero(p, 48, 24)
        return h, p
    show("EXIT and REAP rusage", rusage)

    def all_numbers(k, h, p):
        recv_ns(k, h, p)
        time_ns(k, h, p)
        hello_clocks(k, h, p)
        rusage(k, h, p)
        return h, p
    show("all of the times and rusage", all_numbers)

    def parent_tails(k, h, p):
        if k == FRAME and p[5] in (EXEC, SPAWN):
            p = p[:40]
            struct.pack_into("<II", p, 12, 8, 8)
        return h, p
    show("EXEC/SPAWN path, argv and cwd", parent_tails)


if __name__ == "__main__":
    main()
