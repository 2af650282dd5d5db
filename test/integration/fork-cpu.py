#!/usr/bin/env python3
"""The CPU a fork child burns before its exec is counted (doc/format.md,
CPU_BEFORE).

`bash -c '(200,000-iteration loop; /bin/true)'`: the subshell, a fork
child of bash, spends most of the run's CPU and then execs /bin/true.  The
report's CPU total must be within a factor of two of the CPU the same
command takes untraced (getrusage(RUSAGE_CHILDREN) around it), where it
used to count only the two images' own CPU, a few milliseconds.
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile

CMD = ["bash", "-c",
       "(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; /bin/true)"]


def child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_DIR")}
    before = child_cpu()
    subprocess.run(CMD, env=env, check=True)
    untraced = child_cpu() - before
    with tempfile.TemporaryDirectory(prefix="pt-fork-cpu-") as d:
        cap = os.path.join(d, "c.ptcap")
        subprocess.run([a.proftrace, "record", "-q", "-o", cap, "--"] + CMD,
                       env=env, check=True)
        rep = subprocess.run([a.proftrace, "report", cap], env=env,
                             capture_output=True, text=True, check=True)
    m = re.search(r"CPU time\s+([0-9.]+) s", rep.stdout)
    if not m:
        sys.exit("FAIL: no CPU time in the report:\n" + rep.stdout)
    traced = float(m.group(1))
    print("fork-cpu: untraced %.3f s of CPU, report says %.3f s"
          % (untraced, traced))
    if not untraced / 2 <= traced <= untraced * 2 + 0.05:
        sys.exit("FAIL: the report's CPU time %.3f s is not within a factor "
                 "of two of the untraced run's %.3f s" % (traced, untraced))


if __name__ == "__main__":
    main()
