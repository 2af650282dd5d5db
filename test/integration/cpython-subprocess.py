#!/usr/bin/env python3
"""CPython's own test_subprocess passes under `proftrace record` as it
does untraced.

    cpython-subprocess.py --proftrace BIN [--python PYTHON]

Runs `PYTHON -m test --junit-xml FILE test_subprocess` untraced, then
under `proftrace record`, and compares the outcome of every test case
(passed, failed, error, skipped) and the exit status.  The untraced run
must pass; the traced run must come out the same, case for case.  The
test suite is Debian's libpython3.11-testsuite (tools/install-deps.sh
installs it where apt has it); without it the test is skipped (exit 77).
Each run's time is printed, for information only.
"""

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402

SKIP = 77


def find_python(given):
    """A Python whose test package holds test_subprocess, or None."""
    cands = [given] if given else ["/usr/bin/python3", shutil.which("python3")]
    for p in cands:
        if not p or not os.path.exists(p):
            continue
        r = subprocess.run([p, "-c", "import importlib.util, sys; "
                            "sys.exit(importlib.util.find_spec("
                            "'test.test_subprocess') is None)"],
                           env=untraced_env(), capture_output=True)
        if r.returncode == 0:
            return os.path.realpath(p)
    return None


def outcomes(path):
    """{test case id: outcome} from regrtest's JUnit XML."""
    got = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name")
        out = "passed"
        for kind in ("failure", "error", "skipped"):
            if tc.find(kind) is not None:
                out = kind
        got[name] = out
    return got


def run(cmd, tmp, what):
    env = untraced_env({"TMPDIR": tmp})
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
    took = time.monotonic() - t0
    print("%s: exit %d after %.0f s (wall clock, for information)"
          % (what, r.returncode, took), file=sys.stderr)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("--python", help="default: /usr/bin/python3, or python3 "
                    "on PATH, whichever has the test package")
    a = ap.parse_args()
    py = find_python(a.python)
    if not py:
        print("SKIP: no Python here has CPython's test_subprocess (Debian's "
              "libpython3.11-testsuite, installed by tools/install-deps.sh "
              "where apt has it)", file=sys.stderr)
        return SKIP
    proftrace = os.path.abspath(a.proftrace)
    fails = []
    with tempfile.TemporaryDirectory(prefix="pt-cpython-") as tmp:
        res = {}
        for traced in (False, True):
            what = "traced" if traced else "untraced"
            d = os.path.join(tmp, what)
            os.mkdir(d)
            xml = os.path.join(d, "junit.xml")
            cmd = [py, "-m", "test", "--junit-xml", xml, "test_subprocess"]
            cap = os.path.join(d, "run.ptcap")
            if traced:
                cmd = [proftrace, "record", "-q", "-o", cap, "--"] + cmd
            r = run(cmd, d, what + " python3 -m test test_subprocess")
            try:
                res[what] = (r, outcomes(xml))
            except (OSError, ET.ParseError) as e:
                fails.append("%s run wrote no JUnit XML (%s); its output "
                             "ends:\n%s" % (what, e, r.stdout[-3000:]))
                res[what] = (r, {})
            if traced:
                c = subprocess.run([proftrace, "convert", "-f", "csv", "-o",
                                    "-", cap], env=untraced_env(),
                                   capture_output=True, text=True)
                rows = list(csv.DictReader(io.StringIO(c.stdout)))
                # test_subprocess starts hundreds of children: if hardly
                # any is in the capture, the run was not traced
                print("traced: %d executions in the capture" % len(rows),
                      file=sys.stderr)
                if c.returncode != 0 or len(rows) < 100:
                    fails.append("the traced run's capture holds %d "
                                 "executions (convert: %s)"
                                 % (len(rows), c.stderr.strip()))
        (ur, uo), (tr, to) = res["untraced"], res["traced"]
        if ur.returncode != 0:
            fails.append("untraced run failed (exit %d), so the comparison "
                         "means nothing; its output ends:\n%s"
                         % (ur.returncode, ur.stdout[-3000:]))
        if tr.returncode != ur.returncode:
            fails.append("traced run exited %d, untraced %d; the traced "
                         "run's output ends:\n%s"
                         % (tr.returncode, ur.returncode, tr.stdout[-3000:]))
        diff = sorted(k for k in set(uo) | set(to) if uo.get(k) != to.get(k))
        for k in diff:
            fails.append("%s: untraced %s, traced %s"
                         % (k, uo.get(k, "not run"), to.get(k, "not run")))
        print("%d test cases untraced, %d traced, %d differ"
              % (len(uo), len(to), len(diff)), file=sys.stderr)
    for f in fails:
        print("FAIL: " + f, file=sys.stderr)
    if fails:
        return 1
    print("cpython-subprocess: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
