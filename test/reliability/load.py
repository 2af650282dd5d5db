#!/usr/bin/env python3
"""Load: many processes, many at once, under `proftrace record`.

Guarantee (doc/reliability.md, L1, L2): every execution is recorded, none
lost, and the collector's memory stays bounded:
 - fanout: `seq N | xargs -P 64 -n 1 /bin/true` (N = 20000; pid_max is
   32768 here, so pids are reused): the capture holds exactly the N
   `/bin/true K` executions, K = 1..N, each with exit status 0;
 - alive: N (1000) processes alive at the same time, each holding its
   connection open: N `cat FIFO` blocked opening a FIFO until the test sees
   all N running, then released together: exactly N recorded, exit 0.
Either way record must report no dropped connection and no lost frame,
and its peak RSS (VmHWM polled while it collects, and wait4's ru_maxrss,
which includes the conversion at the end) must stay under --max-rss-mb.
"""

import os
import re
import subprocess
import time

import ptrel
from ptrel import check, log


def extra(p):
    p.add_argument("--mode", choices=("fanout", "alive"), required=True)
    p.add_argument("--count", type=int)
    p.add_argument("--parallel", type=int, default=64)
    p.add_argument("--max-rss-mb", type=float, default=64.0)


def count_cats(fifo):
    n = 0
    want = ("cat\0%s\0" % fifo).encode()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    n += f.read() == want
            except OSError:
                pass
    return n


def main():
    a = ptrel.args(__doc__, extra)
    d = ptrel.tmpdir("load")
    cap = d + "/load.ptcap"
    n = a.count or (20000 if a.mode == "fanout" else 1000)
    if a.mode == "fanout":
        cmd = "seq %d | xargs -P %d -n 1 /bin/true" % (n, a.parallel)
    else:
        fifo = d + "/fifo"
        os.mkfifo(fifo)
        cmd = ('i=0; while [ $i -lt %d ]; do cat %s & i=$((i+1)); done; wait'
               % (n, fifo))
    t = time.monotonic()
    errf = open(d + "/record.err", "w+")
    rec = subprocess.Popen([a.proftrace, "record", "-o", cap, "--", "sh",
                            "-c", cmd], env=ptrel.untraced_env(),
                           stdout=subprocess.DEVNULL, stderr=errf)
    hwm, ru, status, polls = 0, None, None, 0
    released = a.mode == "fanout"
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        hwm = max(hwm, ptrel.peak_rss_kb(rec.pid))
        # Reaped here, not by Popen: wait4 gives record's rusage.
        pid, status, ru = os.wait4(rec.pid, os.WNOHANG)
        if pid:
            break
        polls += 1
        if not released and polls % 10 == 0 and count_cats(fifo) >= n:
            log("%d processes alive at once after %.1f s"
                % (n, time.monotonic() - t))
            with open(fifo, "w"):
                pass                    # every reader sees EOF
            released = True
        time.sleep(0.05)
    else:
        rec.kill()
        ptrel.fail("record did not finish in 30 minutes")
    rec.returncode = rc = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - t
    errf.seek(0)
    err = errf.read()
    check(rc == 0, "record exited %d:\n%s" % (rc, err))
    check("dropped" not in err and "lost" not in err,
          "record reports losses:\n" + err)
    # VmHWM, polled while collecting, misses the conversion at the end;
    # wait4's ru_maxrss covers it (and is the largest of record and what
    # it waited for, all of them small): the bound applies to both.
    rss_mb = max(hwm, ru.ru_maxrss) / 1024
    log("record: %d processes in %.1f s; peak RSS while collecting %.1f "
        "MiB (VmHWM polled), overall %.1f MiB (wait4 ru_maxrss)"
        % (n, took, hwm / 1024, ru.ru_maxrss / 1024))
    check(rss_mb < a.max_rss_mb, "record's peak RSS %.1f MiB is over %.0f"
          % (rss_mb, a.max_rss_mb))

    st, text, cerr = ptrel.convert(a, cap)
    check(st == 0, "convert exited %d: %s" % (st, cerr))
    rows = ptrel.csv_rows(text)
    if a.mode == "fanout":
        mine = [r for r in rows if re.fullmatch(r"/bin/true \d+",
                                                r["command"])]
        ks = sorted(int(r["command"].split()[1]) for r in mine)
        check(ks == list(range(1, n + 1)),
              "%d `/bin/true K` recorded, want exactly K = 1..%d (missing "
              "%s...)" % (len(ks), n,
                          sorted(set(range(1, n + 1)) - set(ks))[:10]))
        pids = {r["pid"] for r in mine}
        log("pids: %d distinct among %d executions (reused: %d)"
            % (len(pids), len(mine), len(mine) - len(pids)))
    else:
        mine = [r for r in rows if r["command"] == "cat " + fifo]
        check(len(mine) == n, "%d `cat FIFO` recorded, want %d"
              % (len(mine), n))
        starts = [float(r["start"]) for r in mine]
        ends = [float(r["start"]) + float(r["duration"]) for r in mine]
        check(max(starts) < min(ends), "the %d were not all alive at once"
              % n)
    bad = [r for r in mine if r["exit_code"] != "0"]
    check(not bad, "%d executions without exit status 0, e.g. %s"
          % (len(bad), bad[:1]))
    log("all %d executions recorded with exit status 0; %d rows in all"
        % (n, len(rows)))
    log("PASS")


if __name__ == "__main__":
    main()
