#!/usr/bin/env python3
"""A sandbox that hides the library's file: every process is recorded.

    sandbox-hidden.py --proftrace PROFTRACE --ptcheck PTCHECK --lib LIB

`bwrap --dev-bind / / --tmpfs DIR sh -c 'true; sh -c "true"; ls /'`, with
DIR the directory the library is preloaded from: /tmp (where `record`
copies a library that is not installed) and /usr/local (where `meson
install` puts it; the library is copied to a directory of its own there
for the run).  ptcheck runs it under `proftrace record` and `strace -f`
at once: every process strace sees must be in the capture with its
command line, its parent and its exit status.  The exec hook that finds
the library hidden preloads it through the collector's
/proc/PID/root instead (doc/reliability.md, W2); before, the two
processes the sandboxed shell starts were lost.

As root only (skipped otherwise, exit 77): an ordinary user's bubblewrap
makes a user namespace, from which the kernel refuses that link.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

CMD = ["sh", "-c", 'true; sh -c "true"; ls /']


def check(a, hide, lib):
    env = dict(os.environ)
    env["PROFTRACE_LIB"] = lib
    r = subprocess.run([sys.executable, a.ptcheck, "--proftrace", a.proftrace,
                        "--", "bwrap", "--dev-bind", "/", "/", "--tmpfs",
                        hide] + CMD, env=env, stdout=subprocess.DEVNULL)
    print("sandbox-hidden: --tmpfs %s: %s" % (hide, "ok" if r.returncode == 0
                                             else "FAIL"))
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--ptcheck", required=True)
    ap.add_argument("--lib", required=True)
    a = ap.parse_args()
    a.proftrace = os.path.abspath(a.proftrace)
    if os.geteuid() != 0 or not shutil.which("bwrap") or \
            not shutil.which("strace"):
        print("sandbox-hidden: needs root, bwrap and strace")
        sys.exit(77)
    ok = check(a, "/tmp", os.path.abspath(a.lib))
    os.makedirs("/usr/local/lib", exist_ok=True)
    d = tempfile.mkdtemp(prefix="proftrace-test-", dir="/usr/local/lib")
    try:
        os.chmod(d, 0o755)
        lib = os.path.join(d, "libproftrace.so")
        shutil.copyfile(a.lib, lib)
        os.chmod(lib, 0o644)
        ok = check(a, "/usr/local", lib) and ok
    finally:
        shutil.rmtree(d)
    if not ok:
        sys.exit("FAIL: a process inside the sandbox was not recorded as "
                 "strace saw it")


if __name__ == "__main__":
    main()
