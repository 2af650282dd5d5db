#!/usr/bin/env python3
"""What $PROFTRACE_TRACE_DIR costs each traced process (doc/performance.md,
"Trace files of programs"): user-space instructions (valgrind
--tool=callgrind) and system calls (strace -c) of one traced /bin/true,
recorded by a daemon, with the library given and with another build of
it (--base, e.g. one from before the trace directory), without the
variable, with a writable directory (the common case), and with one the
process cannot write (the sandbox case: a relay is made, in $TMPDIR).

    bench/tracedir-cost.py --proftrace build/collector/proftrace \\
        --lib build/preload/libproftrace.so [--base OTHER/libproftrace.so]
"""

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time


def env_of(**kv):
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith("PROFTRACE_") and k != "LD_PRELOAD"}
    keep.update(kv)
    return keep


def instructions(env):
    with tempfile.NamedTemporaryFile() as out:
        r = subprocess.run(["valgrind", "--tool=callgrind",
                            "--callgrind-out-file=" + out.name, "/bin/true"],
                           env=env, capture_output=True, text=True)
    m = re.search(r"Collected\s*:\s*(\d+)", r.stderr)
    return int(m.group(1))


def syscalls(env):
    # The variables through -E, so that strace itself is not traced.
    ours = [f"{k}={v}" for k, v in env.items()
            if k.startswith("PROFTRACE_") or k in ("LD_PRELOAD", "TMPDIR")]
    with tempfile.NamedTemporaryFile(mode="r") as out:
        subprocess.run(["strace", "-c", "-o", out.name] +
                       [x for e in ours for x in ("-E", e)] + ["/bin/true"],
                       env=env_of(), check=True)
        text = out.read()
    total = [ln for ln in text.splitlines() if ln.split()[-1:] == ["total"]]
    calls = {ln.split()[-1]: int(ln.split()[3]) for ln in text.splitlines()
             if len(ln.split()) >= 5 and ln.split()[3].isdigit()}
    return int(total[0].split()[3]), calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--base")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pt-tdcost-")
    sock, cap = os.path.join(tmp, "sock"), os.path.join(tmp, "cap")
    d = subprocess.Popen([a.proftrace, "daemon", "--socket", sock, "-o", cap],
                         stderr=subprocess.DEVNULL)
    while not os.path.exists(sock):
        time.sleep(0.05)
    writable = os.path.join(tmp, "trace")
    os.mkdir(writable, 0o700)
    # Not there at all, as in a sandbox that hides it (a mode would not
    # stop root).
    ro = os.path.join(tmp, "hidden")
    rows = []
    libs = ([("before", a.base)] if a.base else []) + [("this", a.lib)]
    for name, lib in libs:
        for label, extra in (("no PROFTRACE_TRACE_DIR", {}),
                             ("writable PROFTRACE_TRACE_DIR", {
                                 "PROFTRACE_TRACE_DIR": writable}),
                             ("unwritable (relay made)", {
                                 "PROFTRACE_TRACE_DIR": ro})):
            env = env_of(LD_PRELOAD=os.path.abspath(lib),
                         PROFTRACE_SOCKET=sock, TMPDIR=tmp, **extra)
            n, calls = syscalls(env)
            rows.append((f"{name}, {label}", instructions(env), n,
                         calls.get("faccessat2", 0)))
    d.terminate()
    d.wait()
    shutil.rmtree(tmp, ignore_errors=True)
    print("| library, environment | /bin/true instr. | system calls | "
          "faccessat2 |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:,} | {r[2]} | {r[3]} |")


if __name__ == "__main__":
    main()
