#!/usr/bin/env python3
"""Size and time of `convert -f perfetto` against `convert -f json`.

    bench/perfetto-size.py [--build-dir build] [-n 100000 ...]

For each N, bench/gencapture writes a synthetic build of about N
executions; both conversions run once each (CPU time); the
table gives both sizes, their ratio, the Perfetto packets' size before
compression (inflated here, so that the share interning alone saves is
seen) and, for comparison, the JSON compressed by gzip -6.  Prints a
Markdown table (doc/performance.md).
"""

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
import zlib


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def inflated_size(path):
    """Bytes of the packets inside the packets of compressed packets."""
    with open(path, "rb") as f:
        b = f.read()
    i = total = 0
    while i < len(b):
        tag, i = varint(b, i)
        n, i = varint(b, i)
        pkt, i = b[i:i + n], i + n
        tag2, j = varint(pkt, 0)
        if tag != 0x0a or tag2 != (50 << 3 | 2):
            total += len(pkt)       # a packet stored as it is
            continue
        m, j = varint(pkt, j)
        total += len(zlib.decompress(pkt[j:j + m]))
    return total


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd):
    """CPU seconds (user + system) of cmd: the wall time of a shared
    machine says little."""
    before = cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return cpu() - before


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("-n", type=int, action="append")
    args = ap.parse_args()
    pt = os.path.join(args.build_dir, "collector", "proftrace")
    gen = os.path.join(args.build_dir, "bench", "gencapture")
    print("| executions | JSON bytes | JSON gzip -6 | Perfetto bytes | "
          "Perfetto / JSON | before compression | JSON CPU s | Perfetto CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="pt-pfsize-") as tmp:
        for n in args.n or [100000]:
            cap = os.path.join(tmp, "c.ptcap")
            r = subprocess.run([gen, "-n", str(n), cap], check=True,
                               capture_output=True, text=True)
            execs = int((r.stdout + r.stderr).split()[1])
            js, pf = cap + ".json", cap + ".pftrace"
            tj = timed([pt, "convert", "--force", "-f", "json", "-o", js,
                           cap])
            tp = timed([pt, "convert", "--force", "-f", "perfetto",
                           "-o", pf, cap])
            with open(js, "rb") as f:
                jz = len(gzip.compress(f.read(), 6))
            sj, sp = os.path.getsize(js), os.path.getsize(pf)
            print(f"| {execs:,} | {sj:,} | {jz:,} ({jz / sj:.1%}) | {sp:,} "
                  f"| {sp / sj:.1%} | {inflated_size(pf):,} "
                  f"({inflated_size(pf) / sj:.1%}) | {tj:.2f} | {tp:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
