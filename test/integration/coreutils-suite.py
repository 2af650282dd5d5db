#!/usr/bin/env python3
"""GNU coreutils' own tests of env and printenv, run against the installed
programs untraced and under `proftrace record`: the same results, and a
record that equals strace's.

    coreutils-suite.py --proftrace BIN --cache DIR [-k TEST]...

The tests are those of the source of the very coreutils that is
installed (`apt-get source coreutils=VERSION`, fetched once into DIR by
test/tools/debsource.py, as make-suite does):

  tests/misc/env-S.pl         199 cases of env -S, many of them printing
                              what `env -i ...` gives the program it runs
  tests/misc/env.sh           env -i, -u, -C, exit statuses, PATH lookup
  tests/misc/env-null.sh      env -0 against printenv -0 under env -i
  tests/misc/env-S-script.sh  env -S in #! lines
  tests/misc/printenv.sh      printenv against env

Nothing is built.  The tests expect a built tree: the harness
(tests/local.mk's TESTS_ENVIRONMENT) runs them from the top build
directory with `srcdir`, `abs_top_builddir`, `built_programs` and the
like exported, `$abs_top_builddir/src` first in PATH, perl with
-I$srcdir/tests -MCuSkip -MCoreutils -MCuTmpdir, and the shell scripts
with fd 9 on stderr.  Here the build directory is a fresh directory
whose src/ holds a symlink to each program of the installed package
(/usr/bin/env, ...), and whose tests/misc/ takes the perl tests'
temporary directories; the source tree is only read.  That environment
is set as the harness sets it (LC_ALL=C, lang-default's and
envvar-check's variables unset).

Each test runs three times, each in a build directory of its own:
untraced; under `record`, where each case of env-S.pl and each script's
exit status must be the untraced one (the library's variables, which
the exec hooks give every program, must stay out of what `env` prints:
doc/design.md, "Environment repair"); and under test/tools/ptcheck.py
(`record -- strace -f`), which checks every process, parent, argv and
exit status against strace's.

Needs perl, apt-get and dpkg-query, and the network for the first
download (skipped without them).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PTCHECK = os.path.join(HERE, "..", "tools", "ptcheck.py")
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import debsource  # noqa: E402

TESTS = ["env-S.pl", "env.sh", "env-null.sh", "env-S-script.sh",
         "printenv.sh"]
# Coreutils.pm: "NAME..." as a case starts (VERBOSE=yes), then
# "env-S.pl: test NAME: ... mismatch" or "... test NAME failed: ..."
CASE = re.compile(r"^([^\s.]\S*)\.\.\.$")
CASE_FAIL = re.compile(r"^\S+: test (\S+?)(?::| failed)")
# and on stdout, `diff -c NAME.1 NAME.O` of each case whose output differs
DIFF = re.compile(r"^(\*\*\* \S+\.1\t.*)$", re.M)
# tests/lang-default, tests/envvar-check: unset before every test
UNSET = ("LANGUAGE NLSPATH LANG LC_COLLATE LC_CTYPE LC_MESSAGES "
         "LC_MONETARY LC_NUMERIC LC_TIME _POSIX2_VERSION _STDBUF_E "
         "_STDBUF_I _STDBUF_O BASH_ENV BLOCKSIZE BLOCK_SIZE CDPATH COLUMNS "
         "DF_BLOCK_SIZE DU_BLOCK_SIZE ENV LS_BLOCK_SIZE LS_COLORS "
         "OMP_NUM_THREADS POSIXLY_CORRECT QUOTING_STYLE SIMPLE_BACKUP_SUFFIX "
         "TABSIZE TERM COLORTERM TIME_STYLE VERSION_CONTROL").split()


def log(msg):
    print("[coreutils-suite] " + msg, flush=True)


def programs():
    """{name: path} of every program the installed coreutils has."""
    out = subprocess.run(["dpkg-query", "-L", "coreutils"],
                         capture_output=True, text=True).stdout
    progs = {}
    for path in out.splitlines():
        if re.match(r"^/(usr/)?s?bin/[^/]+$", path) and \
                os.path.isfile(path) and os.access(path, os.X_OK):
            progs.setdefault(os.path.basename(path), path)
    return progs


def builddir(into, progs):
    """A build directory as the tests expect one: src/ with the installed
    programs, tests/misc/ for the perl tests' temporary directories."""
    os.makedirs(os.path.join(into, "src"))
    os.makedirs(os.path.join(into, "tests", "misc"))
    for name, path in progs.items():
        os.symlink(path, os.path.join(into, "src", name))
    return into


def environment(top, build, progs, version):
    """tests/local.mk's TESTS_ENVIRONMENT for a build in BUILD."""
    env = dict(os.environ)
    for k in UNSET:
        env.pop(k, None)
    env.update({
        "LC_ALL": "C",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "VERSION": version, "PACKAGE_VERSION": version,
        "abs_top_builddir": build, "abs_top_srcdir": top,
        "abs_srcdir": top, "srcdir": top, "top_srcdir": top,
        "built_programs": " ".join(sorted(progs)),
        "fail": "0", "host_os": "linux-gnu",
        "CC": "cc", "AWK": "awk", "EGREP": "grep -E", "EXEEXT": "",
        "MAKE": "make", "PERL": "perl", "SHELL": "/bin/sh",
        "VERBOSE": "yes",
        "PATH": os.path.join(build, "src") + ":" + os.environ["PATH"],
    })
    return env


def command(top, test):
    script = os.path.join(top, "tests", "misc", test)
    if test.endswith(".pl"):
        return ["perl", "-w", "-I" + os.path.join(top, "tests"), "-MCuSkip",
                "-MCoreutils", "-MCuTmpdir=tests/misc/" + test, script]
    return ["sh", script]


def cases(err):
    """{case: "ok" or "FAIL"} from a perl test's stderr."""
    got = {}
    for line in err.splitlines():
        m = CASE.match(line)
        if m:
            got[m.group(1)] = "ok"
    for line in err.splitlines():
        m = CASE_FAIL.match(line)
        if m:
            got[m.group(1)] = "FAIL"
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("-k", dest="only", action="append", choices=TESTS,
                    help="run this test alone (repeatable)")
    a = ap.parse_args()
    for tool in ("perl", "apt-get", "dpkg-query"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed")
            sys.exit(77)
    proftrace = os.path.abspath(a.proftrace)
    try:
        top = debsource.fetch("coreutils", "coreutils",
                              os.path.abspath(a.cache), log)
    except debsource.Unavailable as e:
        print("SKIP: the source of the installed coreutils cannot be had: "
              + str(e))
        sys.exit(77)
    except debsource.Broken as e:
        sys.exit(f"coreutils-suite: FAIL: {e}")
    version = debsource.installed_version("coreutils")
    version = version.split(":")[-1].rsplit("-", 1)[0]
    progs = programs()
    if "env" not in progs:
        sys.exit("coreutils-suite: FAIL: dpkg-query -L coreutils lists no env")
    tmp = tempfile.mkdtemp(prefix="coreutils-suite-")
    problems = []

    def run(label, test, wrap):
        build = builddir(os.path.join(tmp, f"{label}-{test}"), progs)
        env = environment(top, build, progs, version)
        # The harness runs every test with 9>&2 (init.sh's warnings).
        r = subprocess.run(wrap(label) + command(top, test), cwd=build,
                           env=env, capture_output=True, text=True,
                           errors="replace", preexec_fn=lambda: os.dup2(2, 9))
        got = cases(r.stderr) if test.endswith(".pl") else {}
        bad = sorted(k for k, v in got.items() if v != "ok")
        log(f"{label} {test}: exit {r.returncode}"
            + (f", {len(got)} cases, failed: {', '.join(bad) or 'none'}"
               if test.endswith(".pl") else ""))
        return r, got

    for test in a.only or TESTS:
        base, want = run("untraced", test, lambda label: [])
        if test.endswith(".pl") and len(want) < 100:
            problems.append(f"untraced {test}: only {len(want)} cases:\n"
                            + base.stderr[-2000:])
        if base.returncode == 77:
            log(f"{test} skips itself here: {base.stderr.strip()[-300:]}")
        rec, got = run("record", test, lambda label: [
            proftrace, "record", "-q", "-o",
            os.path.join(tmp, f"{label}-{test}.ptcap"), "--"])
        if rec.returncode != base.returncode:
            # a shell test's set -x trace ends where it failed
            problems.append(f"record {test}: exit {rec.returncode}, untraced "
                            f"{base.returncode}" + ("" if got else ":\n" +
                                                    rec.stderr[-3000:]))
        differ = [f"{k} ({want.get(k)} untraced, {got.get(k)} traced)"
                  for k in sorted(want.keys() | got.keys())
                  if want.get(k) != got.get(k)]
        if differ:
            # Coreutils.pm prints a `diff -c` of expected and actual
            # output on stdout for each case that failed: the first one
            diffs = DIFF.split(rec.stdout)
            problems.append(f"record {test}: {len(differ)} of {len(want)} "
                            "cases not as untraced: " + ", ".join(differ)
                            + ("\nthe first that failed, expected and "
                               "actual output:\n" + diffs[1] + diffs[2][:1500]
                               if len(diffs) > 2 else ""))
        chk, _ = run("ptcheck", test, lambda label: [
            sys.executable, PTCHECK, "--proftrace", proftrace,
            "--expect-rc", str(base.returncode), "--"])
        said = [ln for ln in (chk.stdout + chk.stderr).splitlines()
                if ln.startswith("ptcheck:")]
        log(said[-1] if said else "ptcheck: said nothing")
        if chk.returncode != 0:
            problems.append(f"ptcheck {test}:\n" + "\n".join(said[-20:]))
    shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        for m in problems[:60]:
            print("coreutils-suite: FAIL: " + m)
        sys.exit(1)
    print("coreutils-suite: ok: every case and exit status as untraced, "
          "the record as strace's")


if __name__ == "__main__":
    main()
