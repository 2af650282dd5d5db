#!/usr/bin/env python3
"""Labels and keys against the command lines they name.

    test-labels.py --proftrace BIN [-k NAME]

A label ("cc1 slow.c", "sh -c") is the program and one whole argument of
its command line, or a file name's last component: never a piece of one
argument.  The trace JSON's events carry both the label (name) and the
argv, read here with Python's json module.  A diff key keeps every path
outside the checkout as written: shlex (the shell's own splitting rules)
reads the key back into the run's argv with only the checkout replaced.

The last line counts the results: "N passed, N failed".
"""

import json
import os
import shlex
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


if __name__ == "__main__":
    sys.exit(viewlib.main(globals()))
