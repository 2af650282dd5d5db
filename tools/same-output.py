#!/usr/bin/env python3
"""Check that two builds of proftrace convert captures to the same bytes.

A change that only moves code (a restructuring, a rename) must not change
any output.  This converts every capture the test suite ships, a synthetic
one and a freshly recorded one with both programs — CSV, trace JSON,
folded stacks, the report and a diff — and compares the bytes.

    tools/same-output.py --base REV            # build REV, compare with build/
    tools/same-output.py --old A --new B       # two proftrace programs

Exit status 0 when every output is identical, 1 when one differs, 2 on a
usage or build error.
"""

import argparse
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_rev(rev, tmp):
    """Build proftrace at rev in a worktree under tmp; return its program."""
    tree = os.path.join(tmp, "base")
    subprocess.run(["git", "-C", TOP, "worktree", "add", "--detach", "-q",
                    tree, rev], check=True)
    subprocess.run(["meson", "setup", "build"],
                   cwd=tree, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", "build", "collector/proftrace"], cwd=tree,
                   check=True, stdout=subprocess.DEVNULL)
    return tree, os.path.join(tree, "build", "collector", "proftrace")


def captures(tmp, new, lib):
    """The captures to convert: the shipped corpus, a synthetic build and
    one recorded now."""
    out = []
    corpus = os.path.join(TOP, "test", "fuzz", "corpus-capture")
    for name in sorted(os.listdir(corpus)):
        out.append(os.path.join(corpus, name))
    synth = os.path.join(tmp, "synthetic.ptcap")
    subprocess.run([sys.executable, os.path.join(TOP, "test", "tools", "mkcapture.py"),
                    "--synthetic", "3000", synth], check=True)
    out.append(synth)
    rec = os.path.join(tmp, "recorded.ptcap")
    env = dict(os.environ, PROFTRACE_LIB=lib)
    subprocess.run([new, "record", "-q", "-o", rec, "--", "sh", "-c",
                    "for i in 1 2 3; do (sleep 0.0$i; /bin/echo $i) & done;"
                    " wait; sh -c 'exit 3' || true"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    out.append(rec)
    return out


def outputs(prog, cap, other):
    """Every output of prog for cap: (name, returncode, stdout, stderr)."""
    runs = [("csv", ["convert", "-f", "csv", cap]),
            ("json", ["convert", "-f", "json", cap]),
            ("folded", ["convert", "-f", "folded", cap]),
            ("report", ["report", cap]),
            ("diff", ["diff", other, cap])]
    for name, args in runs:
        r = subprocess.run([prog] + args, capture_output=True, timeout=300)
        yield name, r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="git revision to build and compare with")
    ap.add_argument("--old", help="proftrace program before the change")
    ap.add_argument("--new", default=os.path.join(TOP, "build", "collector",
                                                  "proftrace"))
    ap.add_argument("--lib", default=os.path.join(TOP, "build", "preload",
                                                  "libproftrace.so"))
    a = ap.parse_args()
    if bool(a.base) == bool(a.old):
        ap.error("give --base REV or --old PROGRAM")
    with tempfile.TemporaryDirectory() as tmp:
        tree = None
        try:
            old = a.old
            if a.base:
                tree, old = build_rev(a.base, tmp)
            caps = captures(tmp, a.new, a.lib)
            differ = same = 0
            for cap in caps:
                other = caps[-2]     # the synthetic capture, for diff
                for (name, rc1, o1, e1), (_, rc2, o2, e2) in zip(
                        outputs(old, cap, other), outputs(a.new, cap, other)):
                    if (rc1, o1, e1) == (rc2, o2, e2):
                        same += 1
                        continue
                    differ += 1
                    print(f"differs: {name} of {os.path.basename(cap)}"
                          f" (exit {rc1} -> {rc2}, {len(o1)} -> {len(o2)}"
                          " bytes)")
            print(f"same-output: {same} identical, {differ} different,"
                  f" {len(caps)} captures")
            return 1 if differ else 0
        finally:
            if tree:
                subprocess.run(["git", "-C", TOP, "worktree", "remove",
                                "--force", tree])


if __name__ == "__main__":
    sys.exit(main())
