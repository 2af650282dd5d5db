#!/usr/bin/env python3
"""What a collector connection per program image costs in the spawn loop,
with enough rounds to bound it.

    bench/floor.py [--rounds 31] [--spawns 1000] [--against OTHER_BUILD_DIR]

The spawn-loop stage of bench/run.py measures 11 rounds, and the ratios it
reports divide by (empty - untraced), 20-40 us here, so a single run can
put any row on either side of 1.25.  This script runs only the spawn loop,
many rounds, each configuration once per round in a shuffled order:
untraced, the empty library, the connection-only and socket-floor
libraries (bench/minrec.c), the ring floor (bench/minring.c: a mapped
ring, a HELLO and an EXIT, on a 16 MiB memfd every spawn loop inherits),
the append floor (bench/minappend.c: a write(2) of each to an inherited
O_APPEND memfd; the open floor: the same library opening that memfd
through /proc in each image, nothing inherited) and libproftrace.so, against one `proftrace daemon`
(the socket), and under `proftrace record` (the run log; and with
PROFTRACE_TRANSPORT=socket); with --against, under another build's
`proftrace record` too (an earlier commit's, built apart), and the
difference of the two per round, which a change to the library is
judged by.
For each it prints the ratio of the medians over all
rounds, (config - untraced) / (empty - untraced), with a 95 % bootstrap
interval (the rounds resampled), for the median spawn and for the
10th-percentile spawn of each run, and how many single rounds came out at
1.25 or below.  doc/performance.md quotes it.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import SRC, Daemon, FloorFiles, clean_env, kv, table  # noqa: E402

TARGET = 1.25


def ratio(rows, config, idx):
    """(median of config - median untraced) / (median empty - median
    untraced) over the rounds in rows; None when the divisor is 0."""
    m = {c: statistics.median(r[idx] for r in rows[c]) for c in rows}
    d = m["empty library"] - m["untraced"]
    return (m[config] - m["untraced"]) / d if d else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--spawns", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", metavar="BUILD_DIR",
                    help="another build's `proftrace record` as one more "
                         "configuration, compared round by round")
    a = ap.parse_args()
    b = os.path.abspath(a.build_dir)
    libs = {
        "untraced": None,
        "empty library": os.path.join(b, "bench", "libptempty.so"),
        "connection only": os.path.join(b, "bench", "libptminconn.so"),
        "socket floor": os.path.join(b, "bench", "libptminrec.so"),
        "ring floor": os.path.join(b, "bench", "libptminring.so"),
        "append floor": os.path.join(b, "bench", "libptminappend.so"),
        "open floor": os.path.join(b, "bench", "libptminappend.so"),
        "libproftrace": os.path.join(b, "preload", "libproftrace.so"),
        # The loop under `proftrace record`: the run log, and the socket.
        "record": None,
        "record, socket": None,
    }
    proftrace = os.path.join(b, "collector", "proftrace")
    against = None
    if a.against:
        against = os.path.join(os.path.abspath(a.against), "collector", "proftrace")
        if not os.path.exists(against):
            sys.exit(f"floor: {against} is missing; build that tree first")
        libs["record, against"] = None
    spawnloop = os.path.join(b, "bench", "spawnloop")
    for path in [spawnloop] + [p for p in libs.values() if p]:
        if not os.path.exists(path):
            sys.exit(f"floor: {path} is missing; build first (ninja -C {b})")
    rng = random.Random(a.seed)
    modes = ("spawn", "fork")
    res = {m: {c: [] for c in libs} for m in modes}
    floors = FloorFiles()
    with tempfile.TemporaryDirectory(prefix="pt-floor-") as tmp:
        sock = os.path.join(tmp, "sock")
        d = Daemon(os.path.join(b, "collector", "proftrace"),
                   os.path.join(tmp, "floor.ptcap"), sock,
                   os.path.join(tmp, "daemon.log"))
        try:
            for r in range(a.rounds):
                for m in modes:
                    order = list(libs.items())
                    rng.shuffle(order)
                    for c, lib in order:
                        env = clean_env(PROFTRACE_SOCKET=sock)
                        cmd = [spawnloop, m, str(a.spawns)]
                        if lib:
                            env["LD_PRELOAD"] = lib
                        if c.startswith("record"):
                            env = clean_env(PROFTRACE_TRANSPORT="socket"
                                            if c.endswith("socket") else "log")
                            exe = against if c == "record, against" else proftrace
                            cmd = [exe, "record", "-q", "--force", "-o",
                                   os.path.join(tmp, "record.ptcap"), "--"] + cmd
                        env.update(floors.env({"ring floor": "ring",
                                               "append floor": "append",
                                               "open floor": "open"}.get(c, "")))
                        p = subprocess.run(cmd, env=env,
                                           capture_output=True, text=True,
                                           pass_fds=floors.fds)
                        x = kv(p.stdout)
                        if p.returncode != 0 or "median_us" not in x:
                            sys.exit(f"floor: spawnloop {m} ({c}): {p.stderr.strip()}")
                        res[m][c].append((x["median_us"], x["p10_us"]))
                print(f"[floor] round {r + 1} of {a.rounds}", file=sys.stderr,
                      flush=True)
        finally:
            d.stop()

    rows = []
    for m, name in zip(modes, ("posix_spawn", "fork+execve")):
        for idx, which in ((0, "median"), (1, "p10")):
            med = {c: statistics.median(r[idx] for r in res[m][c]) for c in libs}
            for c in [k for k in libs if k not in ("untraced", "empty library")]:
                boot = []
                for _ in range(a.resamples):
                    pick = [rng.randrange(a.rounds) for _ in range(a.rounds)]
                    v = ratio({k: [res[m][k][i] for i in pick] for k in libs}, c, idx)
                    boot.append(float("inf") if v is None else v)
                boot.sort()
                lo = boot[len(boot) * 25 // 1000]
                hi = boot[min(len(boot) - 1, len(boot) * 975 // 1000)]
                single = [(res[m][c][i][idx] - res[m]["untraced"][i][idx]) /
                          (res[m]["empty library"][i][idx] - res[m]["untraced"][i][idx])
                          for i in range(a.rounds)
                          if res[m]["empty library"][i][idx] != res[m]["untraced"][i][idx]]
                r0 = ratio(res[m], c, idx)
                rows.append([name, which, c, f"{med['untraced']:.1f}",
                             f"{med['empty library']:.1f}", f"{med[c]:.1f}",
                             "n/a" if r0 is None else f"{r0:.2f}",
                             f"{lo:.2f}–{hi:.2f}",
                             f"{sum(s <= TARGET for s in single)}/{len(single)}"])
    print(f"{a.rounds} interleaved rounds of {a.spawns} spawns of /bin/true; "
          f"µs per spawn are medians over the rounds.\n")
    print(table(["mode", "spawn", "library", "untraced µs", "empty µs", "library µs",
                 "ratio of medians", "95 % interval", f"rounds ≤ {TARGET}"], rows))
    if against:
        rows = []
        for m, name in zip(modes, ("posix_spawn", "fork+execve")):
            for idx, which in ((0, "median"), (1, "p10")):
                d = [res[m]["record"][i][idx] - res[m]["record, against"][i][idx]
                     for i in range(a.rounds)]
                boot = sorted(statistics.median(d[rng.randrange(a.rounds)]
                                                for _ in range(a.rounds))
                              for _ in range(a.resamples))
                lo = boot[len(boot) * 25 // 1000]
                hi = boot[min(len(boot) - 1, len(boot) * 975 // 1000)]
                rows.append([name, which, f"{statistics.median(d):+.1f}",
                             f"{lo:+.1f} to {hi:+.1f}",
                             f"{sum(x < 0 for x in d)}/{a.rounds}"])
        print(f"\n`record` of this build less `record` of {a.against}, "
              "µs a spawn, per round:\n")
        print(table(["mode", "spawn", "median difference", "95 % interval",
                     "rounds faster"], rows))


if __name__ == "__main__":
    main()
