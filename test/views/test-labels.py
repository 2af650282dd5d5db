#!/usr/bin/env python3
"""Labels and keys against the command lines they name, and in every
table of diff and report at every width.

    test-labels.py --proftrace BIN [-k NAME]

A label ("cc1 slow.c", "sh -c") is the program and one whole argument of
its command line, or a file name's last component: never a piece of one
argument.  The trace JSON's events carry both the label (name) and the
argv, read here with Python's json module.  A diff key keeps every path
outside the checkout as written: shlex (the shell's own splitting rules)
reads the key back into the run's argv with only the checkout replaced.

In a CI log (no terminal; COLUMNS=60, 80, 100, 200, and for diff A B
none at all) each table of diff (A B, and A... -- B...) and of report
(one run, and --runs) shows each label it names whole, the labels taken
from the trace JSON; no line ends in a piece of a label; only a line
that is a label alone may be wider than the width.

The last line counts the results: "N passed, N failed".
"""

import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
from mkcapture import Capture  # noqa: E402
import viewlib  # noqa: E402
from viewlib import capture, check, eq, run  # noqa: E402

ARGS = None
TMP = None
CC1 = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"

# What autom4te runs through the shell to trace the macros of aclocal's
# files (its --trace patterns hold quotes, '$' and braces).
M4_SCRIPT = (
    "/usr/bin/m4 --nesting-limit=1024 --gnu --include=/usr/share/autoconf "
    "--debug=aflq --fatal-warning --debugfile=/tmp/am4tWq0pLk/traces.0t "
    "--trace=AC_CANONICAL_BUILD --trace=AC_CONFIG_FILES "
    "/usr/share/autoconf/autoconf/autoconf.m4f "
    "'/usr/share/aclocal/xstrndup.m4' "
    "--trace='AC_DEFUN:$f::$n::${::}%' "
    "--trace='AC_DEFUN_ONCE:$f::$n::${::}%' "
    "--trace='AU_DEFUN:$f::$n::${::}%' configure.ac")
LONG_DIR = "/".join(f"level{i}" for i in range(12))


def autoconf_like():
    """autoreconf's shells: sh -c with an m4 command line of quoted
    --trace patterns, m4 itself, and a short sh -c script."""
    c = Capture(host="alpha", command="autoreconf -fi")
    c.process(100, 1, ["autoreconf", "-fi"], start=0, end=10, cwd="/src/p")
    c.process(101, 100, ["/bin/sh", "-c", M4_SCRIPT], start=1, end=4,
              cwd="/src/p")
    c.process(102, 101, ["/usr/bin/m4"] + shlex.split(M4_SCRIPT)[1:],
              start=1.1, end=3.9, cwd="/src/p")
    c.process(103, 100, ["sh", "-c", "cd sub && make"], start=4, end=5,
              cwd="/src/p")
    c.process(104, 100, ["perl", "-e", "print 'x' x 80; " * 8], start=5,
              end=6, cwd="/src/p")
    c.process(105, 100, ["cc", "-c", f"{LONG_DIR}/deep.c", "-o", "deep.o"],
              start=6, end=7, cwd="/src/p")
    return c


def whole_args_label(label, argv):
    """Is label the program's name and nothing, one whole argument, or
    the last component of a file name argument?"""
    prog, _, rest = label.partition(" ")
    if prog != os.path.basename(argv[0]):
        return False
    return rest == "" or any(rest == a or rest == os.path.basename(a)
                             for a in argv[1:])


def test_labels_are_whole_arguments():
    cap = capture("autoconf", autoconf_like)
    out = os.path.join(TMP, "autoconf.json")
    run("convert", "-f", "json", "--force", "-o", out, cap)
    with open(out) as f:
        events = [e for e in json.load(f)["traceEvents"]
                  if e.get("ph") == "X"]
    labels = {e["args"]["pid"]: (e["name"], e["args"]["argv"])
              for e in events}
    eq(sorted(labels), [100, 101, 102, 103, 104, 105], "executions")
    for pid, (label, argv) in sorted(labels.items()):
        argv = shlex.split(argv) if isinstance(argv, str) else argv
        check(whole_args_label(label, argv),
              f"pid {pid}: label {label!r} is not made of whole "
              f"arguments of {argv!r}")
    # What each says, as the report's readers expect it.
    eq(labels[101][0], "sh -c", "the long m4 script's shell")
    eq(labels[102][0], "m4 autoconf.m4f", "m4 itself")
    eq(labels[103][0], "sh cd sub && make", "a short script")
    eq(labels[104][0], "perl -e", "a long perl -e")
    eq(labels[105][0], "cc deep.c", "a long relative file name")
    # The report's tree and critical path show the same labels, whole.
    text = run("report", "--width", "200", cap).decode()
    for pid, (label, _) in labels.items():
        check(label in text, f"{label!r} not in the report:\n{text}")
    check("xstrndup.m4'" not in text, f"a cut argument:\n{text}")


def debian_build(checkout, slow):
    """One build of a Debian package, checked out in checkout: configure
    with absolute paths outside the checkout and one inside it."""
    c = Capture(host="builder", command="dpkg-buildpackage -b")
    c.process(100, 1, ["dpkg-buildpackage", "-b"], start=0, end=20,
              cwd=checkout)
    c.process(101, 100, ["./configure", "--build=x86_64-linux-gnu",
                         "--prefix=/usr", "--includedir=${prefix}/include",
                         "--sysconfdir=/etc",
                         "--libdir=/usr/lib/x86_64-linux-gnu",
                         f"--srcdir={checkout}"],
              start=1, end=1 + slow, cwd=checkout)
    c.process(102, 100, ["cc", "-I/usr/include/glib-2.0",
                         f"-I{checkout}/lib", "-c", f"{checkout}/src/a.c",
                         "-o", "a.o"], start=12, end=12 + slow / 2,
              cwd=checkout)
    return c


def test_key_keeps_paths_outside_the_checkout():
    a_dir, b_dir = "/build/hello-Xq3f9A/hello-2.10", "/home/ci/w/hello-2.10"
    a = capture("deb-a", lambda: debian_build(a_dir, 4))
    b = capture("deb-b", lambda: debian_build(b_dir, 6))
    text = run("diff", "--width", "300", a, b).decode()
    lines = viewlib.section(text, "Largest changes")
    keys = [line.split("  ")[-1].strip() for line in lines[1:]
            if not line.strip().startswith("...")]
    check(len(keys) >= 2, f"rows of the changes:\n{text}")
    want = {
        "configure": ["configure", "--build=x86_64-linux-gnu",
                      "--prefix=/usr", "--includedir=${prefix}/include",
                      "--sysconfdir=/etc",
                      "--libdir=/usr/lib/x86_64-linux-gnu",
                      "--srcdir=$SRC"],
        "cc": ["cc", "-I/usr/include/glib-2.0", "-I$SRC/lib", "-c",
               "$SRC/src/a.c", "-o", "a.o"],
    }
    got = {}
    for k in keys:
        words = shlex.split(k)
        got[words[0]] = words
    for prog, argv in want.items():
        eq(got.get(prog), argv, f"the {prog} key, read by shlex")
    check("Only in A: 0" in text and "Only in B: 0" in text,
          f"every execution matched across the checkouts:\n{text}")


# ---- widths ----

WIDTHS = (60, 80, 100, 200)
SRC1 = "src/frontend/expression-evaluator-with-long-name.c"
# A label of 64 bytes, the most a label holds: wider than what is left
# of any table's line at 60 and 80 columns, and than 60 columns itself.
SRC2 = "lib/" + "x" * (61 - len("lib/.c")) + ".c"
# cc1's label is one byte longer: its file loses its directory.
CC_1, CC1_1 = "cc " + SRC1, "cc1 " + SRC1
CC_2, CC1_2 = "cc " + SRC2, "cc1 " + os.path.basename(SRC2)
EVENT = "typecheck src/frontend/expression-evaluator-with-long-name.ml"


def build(name, slow, checkout, only):
    """make: two compiles (cc > cc1) in turn, a long sh -c script, a
    program of this run only, then ld, which fails; compiles take `slow`
    times as long; one cc1 wrote a trace event."""
    c = Capture(host=name, command="make")
    d = dict(cwd=checkout)
    t = 0.5
    c.process(100, 1, ["make", "-j1"], start=0, end=30, **d)
    pid = 101
    for src in (SRC1, SRC2):
        dur = 2 * slow
        c.process(pid, 100, ["cc", "-O2", "-c", src, "-o", "x.o"],
                  start=t, end=t + dur, cpu=(0.1 * dur, 0), **d)
        c.process(pid + 1, pid, [CC1, "-quiet", src, "-O2", "-o",
                                 "/tmp/ccQ2x9Zk.s"],
                  start=t + 0.1, end=t + dur - 0.1,
                  cpu=(0.8 * dur, 0.01), **d)
        if src == SRC1:
            c.trace(pid + 1, [{"name": EVENT, "cat": "x", "ph": "X",
                               "ts": c.epoch_us(t + 0.2),
                               "dur": 0.5 * 1e6, "pid": 1, "tid": 1}])
        pid += 2
        t += dur + 0.5
    c.process(pid, 100, ["sh", "-c", M4_SCRIPT], start=t, end=t + 1,
              cpu=(0.5, 0), **d)
    c.process(pid + 1, 100, [only, "--verbose", "data/input.txt"],
              start=t + 1, end=t + 2, cpu=(0.5, 0), **d)
    c.process(pid + 2, 100, ["ld", "-o", "prog", "x.o"], start=t + 2,
              end=t + 4, exit=1, cpu=(1.0, 0), **d)
    return c


def at_width(width, *args):
    """proftrace ARGS as in a CI log: COLUMNS=width (None: no COLUMNS,
    which is 100 columns), output to a pipe."""
    env = dict(os.environ, COLUMNS=str(width))
    if width is None:
        del env["COLUMNS"]
    p = subprocess.run([ARGS.proftrace] + list(args), env=env,
                       capture_output=True, stdin=subprocess.DEVNULL)
    check(p.returncode == 0, f"proftrace {args}: exit {p.returncode}: "
          f"{p.stderr.decode(errors='replace')}")
    return p.stdout.decode()


def trace_labels(*caps):
    """Every execution's label, as the trace JSON names it."""
    out = os.path.join(TMP, "labels.json")
    run("convert", "-f", "json", "--force", "-o", out, *caps)
    with open(out) as f:
        return {e["name"] for e in json.load(f)["traceEvents"]
                if e.get("ph") == "X" and "argv" in e.get("args", {})}


def table(text, heading):
    """The lines of the table under the heading that starts so."""
    return viewlib.section(text, heading)


def whole(lines, label):
    """Does label stand whole in one of lines: at the line's start or
    after a blank or a tree's branch, and at its end or before a blank?
    Or, where a table shows the whole command ("cc -O2 -c src/a.c -o
    a.o" for "cc src/a.c"), its program and then its file (or the file's
    last component) as whole words of one line?"""
    pats = [r"(?:^|[ `-])" + re.escape(label) + r"(?:$| )"]
    prog, _, arg = label.partition(" ")
    if arg:
        pats.append(r"(?:^|[ `-])" + re.escape(prog) + r" (?:.* )?"
                    r"(?:\S*/)?" + re.escape(arg) + r"(?:$| )")
    return any(re.search(p, line) for p in pats for line in lines)


def check_text(what, text, width, labels, tables):
    """tables: {heading: labels that table names}.  Each such label is
    whole in its table; no line ends in a piece of a label (as "cc1 sl"
    did); a line of a table wider than the width holds a label and
    nothing else."""
    rows = []
    for heading, want in tables.items():
        lines = table(text, heading)
        rows += lines
        for label in want:
            check(whole(lines, label), f"{what} at {width} columns: "
                  f"{label!r} not whole in {heading!r}:\n"
                  + "\n".join(lines))
    for line in rows:
        for label in labels:
            for k in range(4, len(label)):
                piece = label[:k]
                if line.endswith(" " + piece) and piece not in labels and \
                        not any(line.endswith(" " + other) or
                                line.strip() == other for other in labels):
                    check(False, f"{what} at {width} columns: a piece "
                          f"{piece!r} of {label!r}:\n{line}")
        if len(line) > width:
            check(line.strip() in labels or
                  re.sub(r"^[ |`-]*", "", line) in labels,
                  f"{what} at {width} columns: line of {len(line)} "
                  f"columns, not a label alone:\n{line}")


def progs(labels):
    return {label.split(" ")[0] for label in labels}


def test_widths_diff():
    a = capture("wa", lambda: build("wa", 1.0, "/home/ci/a/p", "only-a"))
    b = capture("wb", lambda: build("wb", 2.0, "/builds/b/p", "only-b"))
    la, lb = trace_labels(a), trace_labels(b)
    changed = {CC_1, CC1_1, CC_2, CC1_2}
    check(changed <= la and len(CC_2) == 64, f"labels: {la}")
    for w in WIDTHS + (None,):
        text = at_width(w, "diff", a, b)
        check_text("diff", text, w or 100, la | lb | progs(la | lb), {
            "Largest changes": changed,
            "Only in A": {"only-a data/input.txt"},
            "Only in B": {"only-b data/input.txt"}})


def test_widths_diff_runs():
    a = [capture(f"ra{i}", lambda i=i: build(f"ra{i}", 1.0 + 0.01 * i,
                                             "/home/ci/a/p", "only-a"))
         for i in range(3)]
    b = [capture(f"rb{i}", lambda i=i: build(f"rb{i}", 2.0 + 0.01 * i,
                                             "/builds/b/p", "only-b"))
         for i in range(3)]
    labels = trace_labels(a[0]) | trace_labels(b[0])
    labels |= progs(labels)
    for w in WIDTHS:
        text = at_width(w, "diff", *a, "--", *b)
        check_text("diff A... -- B...", text, w, labels, {
            # (cc's own CPU time changes less than the noise allows)
            "Changes beyond noise": {CC1_1, CC1_2},
            "Only in A": {"only-a data/input.txt"},
            "Only in B": {"only-b data/input.txt"}})
        text = at_width(w, "report", "--runs", *a)
        check_text("report --runs", text, w, labels, {
            "Critical path met most often": {"make", "ld prog", "sh -c"},
            "By median duration": trace_labels(a[0])})


def test_widths_report():
    cap = capture("w1", lambda: build("w1", 1.0, "/home/ci/a/p", "only-a"))
    labels = trace_labels(cap)
    eq(len(labels), 8, f"labels {labels}")
    for w in WIDTHS:
        text = at_width(w, "report", cap)
        check_text("report", text, w, labels | progs(labels) | {EVENT}, {
            "Programs by self time": progs(labels),
            "Programs by total time": progs(labels),
            "Process tree": labels,
            "Critical path (": labels - {CC_1, CC_2},
            "Critical path by": progs(labels) - {"cc"},
            "Longest stretches": {CC1_1, CC1_2, "sh -c", "ld prog"},
            "Failed executions": {"ld prog"},
            "Inside the programs (": {EVENT}})


if __name__ == "__main__":
    sys.exit(viewlib.main(globals()))
