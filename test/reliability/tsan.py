#!/usr/bin/env python3
"""The collector's threads under ThreadSanitizer (doc/reliability.md, M3):
a proftrace built with -fsanitize=thread records 2,100 processes, then
converts the capture to csv and json (formatted on two threads, written
by a third), reports on it and diffs it with itself (each capture
inflated by a thread of its own), and converts a copy cut short (the
reader stopped while its thread still inflates).  Any report of a data
race fails the test (TSAN_OPTIONS exitcode=66).

    tsan.py   (PROFTRACE = the ThreadSanitizer build, PROFTRACE_LIB)
"""

import sys

import ptrel
from ptrel import check, log


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("tsan")
    cap = d + "/many.ptcap"

    def run(cmd, want=0):
        r = ptrel.run([a.proftrace] + cmd, env=ptrel.untraced_env(),
                      timeout=600)
        err = r.stderr.decode(errors="replace")
        if "ThreadSanitizer: unexpected memory mapping" in err:
            # The runtime cannot run at all under this kernel's address
            # randomisation (vm.mmap_rnd_bits): not a finding.
            log("skipped: " + err.strip().splitlines()[0])
            sys.exit(ptrel.SKIP)
        check("ThreadSanitizer" not in err and r.returncode == want,
              "%s exited %d (expected %d):\n%s"
              % (" ".join(cmd[:3]), r.returncode, want, err[-4000:]))
        return r

    run(["record", "-q", "-o", cap, "--", "sh", "-c",
         "i=0; while [ $i -lt 2100 ]; do /bin/true x$i; i=$((i+1)); done"])
    log("record of 2101 executions: clean")
    for fmt in ("csv", "json"):
        run(["convert", "-f", fmt, "-o", d + "/out." + fmt, cap])
    rows = ptrel.csv_rows(open(d + "/out.csv").read())
    check(len(rows) == 2101, "%d CSV rows, expected 2101" % len(rows))
    log("convert (csv, json): clean")
    run(["report", cap])
    run(["diff", cap, cap])
    log("report, diff: clean")
    with open(cap, "rb") as f:
        data = f.read()
    with open(d + "/cut.ptcap", "wb") as f:
        f.write(data[:len(data) // 2])
    run(["convert", "-f", "csv", "-o", d + "/cut.csv", d + "/cut.ptcap"],
        want=1)
    log("PASS")


if __name__ == "__main__":
    main()
