#!/usr/bin/env python3
"""Real repeated runs: the sample project built under `proftrace record`
three times as it is, three times with one source made slower on purpose,
and three more times as it is, the three kinds interleaved; what
`diff A... -- B...` makes of them.

    runs-sample.py --proftrace BIN --sample DIR

Each build is a fresh copy of sample/ in a directory of its own under a
temporary directory (so the checkout's path and gcc's temporary names
differ every time), `./configure && make -jJ` with J alternating between
2 and 3.  The slowed source is src/stats.c with a generated table of
200,000 constants appended: its compile costs about half a second more
CPU.  The first three builds are recorded with --keep DIR --keep-last 3,
which must leave the last three and compare each with those before.

Checked, as a user reads the diff: every execution of one run matches one
of the others (nothing "only in A/B" despite other checkouts, temporary
names and -j); the slowed compile is named slower beyond noise with an
interval above zero, and nothing else but the steps of that same file;
identical builds give "No change beyond noise."; one run a side says it
cannot tell noise from change; --fail-if-slower exits 1 for the slowed
compile and 0 for identical builds.  No timing is asserted beyond that.

The last line counts the results: "N passed, N failed".
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ARGS = None
TMP = None
TABLE = ("python3", "-c", """
print('static const unsigned long pt_big_table[] = {')
for i in range(200000):
    print('%d,' % (i * 2654435761 % 4294967291))
print('};')
print('unsigned long pt_big(int i) { return pt_big_table[i % 200000]; }')
""")


def build(name, jobs, slow=False, keep=None):
    work = tempfile.mkdtemp(prefix=f"{name}-", dir=TMP)
    shutil.copytree(ARGS.sample, work, dirs_exist_ok=True)
    if slow:
        with open(os.path.join(work, "src", "stats.c"), "a") as f:
            subprocess.run(TABLE, stdout=f, check=True)
    cap = os.path.join(TMP, name + ".ptcap")
    cmd = [ARGS.proftrace, "record", "-o", cap]
    if keep:
        cmd += ["--keep", keep, "--keep-last", "3"]
    cmd += ["--", "sh", "-c",
            f"./configure >/dev/null && make -j{jobs} >/dev/null"]
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if p.returncode != 0:
        raise Failed(f"{name}: exit {p.returncode}: {p.stderr}")
    shutil.rmtree(work)
    return cap, p.stderr


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def diff(a, b, *opts, rc=0):
    p = subprocess.run([ARGS.proftrace, "diff", "--width", "300", *opts,
                        *a, "--", *b], capture_output=True, text=True)
    check(p.returncode == rc, f"diff {' '.join(opts)}: exit {p.returncode}, "
          f"want {rc}; {p.stderr}\n{p.stdout}")
    return p.stdout


ROW = re.compile(r"^\s+[\d.]+\s+[\d.]+\s+[+-][\d.]+\s+[+-]\d+%\s+"
                 r"(\[([+-][\d.]+), ([+-][\d.]+)\]|-)\s+\S+\s+\d+/\d+\s+"
                 r"(slower|faster|within noise|\?)\s+(.*)$")


def rows(text):
    return [(m.group(4), m.group(5), m.group(2))
            for m in map(ROW.match, text.split("\n")) if m]


def main():
    global ARGS, TMP
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--sample", required=True)
    ARGS = ap.parse_args()
    ARGS.proftrace = os.path.abspath(ARGS.proftrace)
    ARGS.sample = os.path.abspath(ARGS.sample)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="pt-runs-") as TMP:
        keep = os.path.join(TMP, "kept", "build")
        slow, plain2, logs = [], [], []
        # Interleaved, so that the load of a shared machine, which moves
        # over a minute, falls on every group alike and is not read as a
        # change between them.
        for i in range(3):
            logs.append(build(f"plain{i}", 2 + i % 2, keep=keep)[1])
            slow.append(build(f"slow{i}", 3 - i % 2, slow=True)[0])
            plain2.append(build(f"again{i}", 3 - i % 2)[0])
        kept = sorted(os.path.join(keep, f) for f in os.listdir(keep))

        def t_keep():
            check(len(kept) == 3 and all(k.endswith(".ptcap")
                                         for k in kept), kept)
            check("against the" not in logs[0], logs[0])
            check("this run (B) against the 1 kept" in logs[1], logs[1])
            check("this run (B) against the 2 kept" in logs[2], logs[2])

        def t_all_match():
            out = diff(kept, plain2, "--all", "-n", "1000")
            check("Only in A: 0 commands" in out and
                  "Only in B: 0 commands" in out, out)

        def t_slowed_compile_named():
            out = diff(kept, slow)
            r = rows(out)
            named = [x for x in r if x[1].startswith("cc1 src/stats.c")]
            check(len(named) == 1 and named[0][0] == "slower" and
                  float(named[0][2]) > 0, f"cc1 src/stats.c slower:\n{out}")
            # Anything else beyond noise is a step of the same file, or
            # a compile that ran beside the slowed one on this machine's
            # two cores and shared its caches: one whose change is a
            # tenth of the slowed compile's at most (the lower ends of
            # their 95 % intervals), where a wrong attribution would move
            # the same time.
            big = abs(float(named[0][2]))
            for v, key, low in r:
                check("stats." in key or abs(float(low)) <= big / 10,
                      f"{key!r} ({v}, at least {low} s) listed:\n{out}")

        def t_path_column_agrees_with_report():
            """The diff's path column for the slowed compile counts the
            runs whose report shows it on the critical path."""
            out = diff(kept, slow, "--all", "-n", "1000")
            m = re.search(r"\s(\d+)/(\d+)\s+(?:slower|faster|within noise)"
                          r"\s+cc1 src/stats\.c", out)
            check(m, out)
            for side, caps in ((0, kept), (1, slow)):
                on = 0
                for cap in caps:
                    rep = subprocess.run(
                        [ARGS.proftrace, "report", "-n", "100", "--width",
                         "300", cap], capture_output=True, text=True,
                        check=True).stdout
                    path = rep.split("\nCritical path (")[1]
                    path = path.split("\n\n")[0]
                    on += bool(re.search(r"\scc1 src/stats\.c$", path, re.M))
                check(int(m.group(side + 1)) == on,
                      f"side {side}: diff says {m.group(side + 1)}, the "
                      f"reports {on}")

        def t_identical():
            out = diff(kept, plain2)
            check("No change beyond noise." in out, out)

        def t_one_run():
            out = diff(kept[:1], slow[:1])
            check("cannot tell noise from change" in out, out)

        def t_gate():
            diff(kept, slow, "--fail-if-slower", "cc1 src/stats.c=50", rc=1)
            diff(kept, plain2, "--fail-if-slower", "cc1 src/stats.c=50")
            diff(kept, plain2, "--fail-if-slower", "5")

        for name, fn in sorted(locals().items()):
            if not name.startswith("t_"):
                continue
            try:
                fn()
                passed += 1
                print(f"ok   {name}")
            except Failed as e:
                failed += 1
                print(f"FAIL {name}: {e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
