#!/usr/bin/env python3
"""The times a recorded capture holds (doc/format.md), read with the
tests' own decoder of the capture format, not the collector's:

 - the file is capture version 3;
 - every IMAGE HELLO is stamped with its image's start: the header's
   time_ns equals start_ns;
 - its realtime_ns was read next to that start: the offset between the
   two clocks agrees from one HELLO to the next to well under a
   microsecond (median deviation), and with the collector's own reading
   in META to a millisecond;
 - the collector's receive times (CONNECT, EOF) are whole microseconds,
   stored as such (the head's microsecond flag), and no EOF is before a
   frame its connection carried.
"""

import gzip
import os
import statistics
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
import ptrel  # noqa: E402
from ptrel import check, log  # noqa: E402

RECV_US = 0x40


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("clocks")
    cap = d + "/c.ptcap"
    r = ptrel.run([a.proftrace, "record", "-q", "-o", cap, "--", "sh", "-c",
                   "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do "
                   "/bin/true; done; (cd / && ls >/dev/null)"],
                  env=ptrel.untraced_env())
    check(r.returncode == 0, "record failed: " + r.stderr.decode())
    raw = gzip.decompress(open(cap, "rb").read())
    version = struct.unpack_from("<I", raw, 8)[0]
    check(version == 3, "capture version %d, not 3" % version)
    recs, end = ptrel.parse_records(raw)
    check(end == len(raw) and recs, "the capture does not decode")

    meta = next(x for x in recs if x["kind"] == ptrel.K_META)
    kv = meta["data"].split(b"\0")
    kv = dict(zip(kv[0::2], kv[1::2]))
    meta_off = (int(kv[b"start_realtime_ns"]) -
                int(kv[b"start_monotonic_ns"]))

    offsets = []
    last_frame = {}
    for x in recs:
        if x["kind"] != ptrel.K_FRAME:
            continue
        f = x["data"]
        t = struct.unpack_from("<Q", f, 24)[0]
        last_frame[x["conn"]] = max(t, last_frame.get(x["conn"], 0))
        if f[5] != ptrel.HELLO:
            continue
        kind, _r, real, start = struct.unpack_from("<IIQQ", f,
                                                   ptrel.FRAME_HDR + 8)
        if kind != ptrel.HELLO_IMAGE:
            continue
        check(t == start, "IMAGE HELLO of pid %d: time %d, start %d"
              % (struct.unpack_from("<I", f, 8)[0], t, start))
        offsets.append(real - t)
    check(len(offsets) >= 18, "only %d IMAGE HELLOs" % len(offsets))
    mid = statistics.median(offsets)
    dev = statistics.median(abs(o - mid) for o in offsets)
    log("%d IMAGE HELLOs: clock offset median deviation %d ns, %d ns from "
        "META's" % (len(offsets), dev, mid - meta_off))
    check(dev < 1000, "HELLO clock offsets deviate by %d ns (median): the "
          "two clocks are not read together" % dev)
    check(abs(mid - meta_off) < 1_000_000,
          "HELLO clock offset %d ns away from META's" % (mid - meta_off))

    n = 0
    for x in recs:
        if x["kind"] not in (ptrel.K_CONNECT, ptrel.K_EOF):
            continue
        n += 1
        check(x["recv"] % 1000 == 0, "receive time %d is not whole "
              "microseconds" % x["recv"])
        check(x["head"] & RECV_US, "record at byte %d: receive time not "
              "stored in microseconds" % x["off"])
        if x["kind"] == ptrel.K_EOF and x["conn"] in last_frame:
            check(x["recv"] >= last_frame[x["conn"]],
                  "EOF of connection %d at %d, before its frame at %d"
                  % (x["conn"], x["recv"], last_frame[x["conn"]]))
    log("%d CONNECT and EOF records, all in whole microseconds" % n)


if __name__ == "__main__":
    main()
