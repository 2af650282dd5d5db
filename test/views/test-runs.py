#!/usr/bin/env python3
"""Many runs: matching executions across runs, `diff A... -- B...` and its
verdicts, the --fail-if-slower gate, `report --runs`, `report` of several
captures.

    test-runs.py --proftrace BIN [-k NAME]

Every run here is built by construction (mkcapture.py): a make of twenty
compiles whose CPU times are drawn around known values with a known noise
(a seeded generator), in a checkout under /tmp, with gcc's random
temporary names and configure's scratch directory, so that what the
tools print can be checked against medians computed here, and what is
beyond noise is known.  The Markdown goes through cmark-gfm, as in
test-md.py.

The last line counts the results: "N passed, N failed".
"""

import os
import random
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
from mkcapture import Capture  # noqa: E402
from viewlib import Failed, check, eq  # noqa: E402
import viewlib  # noqa: E402

ARGS = None
TMP = None
CM = "{http://commonmark.org/xml/1.0}"
NFILES = 20
BASE_CPU = [0.4 + 0.05 * i for i in range(NFILES)]     # s, file i
SLOW = 7                                                # the slowed file
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def rand6(rnd):
    return "".join(rnd.choice(ALNUM) for _ in range(6))


def build(seed, slow=0.0, scale=1.0, jobs=2, noise=0.03, long_job=False,
          meta=None, start=None):
    """One run: make -jJOBS in a checkout /tmp/tmp.XXXXXX/proj (its name
    drawn from seed), configure-like probes, then NFILES compiles one
    after the other (each one's wall = its CPU), file SLOW's CPU times
    1 + slow, all times `scale`.  With long_job a `sleep` runs beside the
    compiles and ends last: the compiles are off the critical path.
    Returns (capture, {file index: cpu seconds})."""
    rnd = random.Random(seed)
    checkout = f"/tmp/tmp.{rand6(rnd)}X/proj"
    c = Capture(host="ci", command=f"make -j{jobs}", meta=meta,
                realtime_base_ns=1_700_000_000_000_000_000 +
                (seed * 3600 if start is None else start) * 10**9)
    cpus = {}
    t = 0.1
    pid = 200
    procs = []
    # configure's mktemp -d conftest.XXXXXX; of one case about one time in
    # a hundred, as in run 2 here
    scratch = "/tmp/conftest." + (rand6(rnd) if seed != 2 else "FMCIRS")
    for k in range(3):
        # configure compiles three different conftest.c: one key each
        # by position
        procs.append((["cc", "-o", "conftest", "conftest.c"], 0.05))
    procs.append((["cat", f"{scratch}/confdefs.h", "-"], 0.01))
    for i in range(NFILES):
        cpu = BASE_CPU[i] * (1 + slow if i == SLOW else 1) * scale
        cpu *= 1 + rnd.gauss(0, noise)
        cpus[i] = cpu
        procs.append((["cc", "-c", f"{checkout}/src/f{i}.c", "-o",
                       f"/tmp/cc{rand6(rnd)}.o"], cpu))
    for argv, cpu in procs:
        c.process(pid, 100, argv, start=t, end=t + cpu, cpu=(cpu, 0.0),
                  cwd=checkout)
        pid += 1
        t += cpu + 0.01
    end = t + 0.1
    if long_job:
        end = t + 5
        c.process(pid, 100, ["sleep", "1000"], start=0.05, end=end - 0.05,
                  cwd=checkout)
    c.process(100, 1, ["make", f"-j{jobs}"], start=0, end=end,
              cwd=checkout)
    return c, cpus


def runs(name, seeds, **kw):
    """Write one capture per seed; returns (paths, [cpus of each])."""
    paths, cpus = [], []
    for s in seeds:
        c, cp = build(s, **kw)
        p = os.path.join(TMP, f"{name}-{s}.ptcap")
        c.write(p)
        paths.append(p)
        cpus.append(cp)
    return paths, cpus


def proftrace(*args, rc=0):
    p = subprocess.run([ARGS.proftrace] + list(args), capture_output=True)
    if rc is not None and p.returncode != rc:
        raise Failed(f"proftrace {' '.join(args)}: exit {p.returncode}, "
                     f"want {rc}; stderr: "
                     f"{p.stderr.decode(errors='replace')}")
    return p.stdout.decode(), p.stderr.decode()


ROW = re.compile(r"^\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)\s+([+-]\d+)%\s+"
                 r"(?:\[([+-][\d.]+), ([+-][\d.]+)\]|-)\s+(\S+)\s+(\d+)/(\d+)\s+"
                 r"(slower|faster|within noise|\?)\s+(.*)$")


def key_rows(text):
    """The per-key rows of the text diff, as dicts."""
    out = []
    for line in text.split("\n"):
        m = ROW.match(line)
        if m:
            g = m.groups()
            out.append(dict(a=float(g[0]), b=float(g[1]), delta=float(g[2]),
                            lo=float(g[4]) if g[4] else None,
                            hi=float(g[5]) if g[5] else None, q=g[6],
                            path=(int(g[7]), int(g[8])), verdict=g[9],
                            key=g[10]))
    return out


def only_count(text, side):
    m = re.search(rf"^Only in {side}: (\d+) command", text, re.M)
    check(m, f"no 'Only in {side}' line:\n{text}")
    return int(m.group(1))


def diff(a, b, *opts, rc=0):
    return proftrace("diff", "--width", "400", *opts, *a, "--", *b, rc=rc)


# ---- matching ----

def test_keys_match_across_checkouts_temp_names_and_jobs():
    a, _ = runs("keys-a", [1], jobs=2)
    b, _ = runs("keys-b", [2], jobs=8)
    text, _ = diff(a, b, "--all", "-n", "100")
    eq(only_count(text, "A"), 0, "only in A")
    eq(only_count(text, "B"), 0, "only in B")
    keys = [r["key"] for r in key_rows(text)]
    # make, three conftest compiles, cat, NFILES compiles: all distinct
    eq(len(keys), 1 + 3 + 1 + NFILES, f"keys: {keys}")
    eq(len(set(keys)), len(keys), "distinct keys")
    for i in range(NFILES):
        check(f"cc -c $SRC/src/f{i}.c -o $TMP/cc*.o" in keys,
              f"compile {i} keeps its file: {keys}")
    check("make" in keys, f"make -j2 and -j8 match as 'make': {keys}")
    check("cat $TMP/conftest.*/confdefs.h -" in keys, keys)
    for k in ("cc -o conftest conftest.c", "cc -o conftest conftest.c #2",
              "cc -o conftest conftest.c #3"):
        check(k in keys, f"{k!r} in {keys}")


def test_different_work_under_tmp_stays_apart():
    """Six compiles of a checkout under /tmp, with absolute paths, when
    the run's root is elsewhere: six keys, not one."""
    c = Capture(host="t")
    c.process(10, 1, ["sh", "-c", "build"], start=0, end=10, cwd="/")
    for i in range(6):
        c.process(11 + i, 10, ["cc", "-c", f"/tmp/b.Qz81/src/m{i}.c", "-o",
                               f"/tmp/b.Qz81/src/m{i}.o"],
                  start=1 + i, end=1.5 + i, cwd="/")
    p = os.path.join(TMP, "tmp6.ptcap")
    c.write(p)
    text, _ = proftrace("diff", "--width", "300", p, p)
    m = re.search(r"per command seen in both runs \((\d+) of them\)", text)
    check(m, text)
    eq(int(m.group(1)), 7, f"sh and six compiles:\n{text}")


def test_long_key_shows_its_file():
    """A key wider than its column shows the label (program and file)
    and whole words, never a word cut in the middle."""
    a, _ = runs("long-a", [3])
    b, _ = runs("long-b", [4])
    text, _ = proftrace("diff", "--all", "--width", "120", *a, "--", *b)
    rows = [line for line in text.split("\n") if "f1" in line and "cc" in line]
    check(rows, text)
    for line in rows:
        m = re.search(r"(cc f1\d?\.c)( · .*)?$", line)
        check(m, f"label with the file: {line!r}")
        rest = (m.group(2) or "")[3:]
        words = rest.replace("...", "").split()
        full = "cc -c $SRC/src/f1.c -o $TMP/cc*.o".split() + \
            "cc -c $SRC/src/f10.c -o $TMP/cc*.o".split() + \
            [f"$SRC/src/f1{d}.c" for d in range(10)]
        for w in words:
            check(w in full, f"word {w!r} cut in {line!r}")


# ---- diff A... -- B... ----

def test_slower_compile_named_with_known_medians():
    a, ca = runs("slow-a", [11, 12, 13])
    b, cb = runs("slow-b", [21, 22, 23], slow=0.5)
    text, _ = diff(a, b)
    rows = key_rows(text)
    eq([r["key"] for r in rows], [f"cc -c $SRC/src/f{SLOW}.c -o $TMP/cc*.o"],
       f"only the slowed compile:\n{text}")
    r = rows[0]
    eq(r["verdict"], "slower", "verdict")
    ma = statistics.median(x[SLOW] for x in ca)
    mb = statistics.median(x[SLOW] for x in cb)
    eq(r["a"], round(ma, 3), "median A")
    eq(r["b"], round(mb, 3), "median B")
    check(abs(r["delta"] - (mb - ma)) < 0.0015, "change of median")
    check(0 < r["lo"] <= r["delta"] <= r["hi"], f"interval {r}")
    eq(r["path"], (3, 3), "on the critical path in every run")
    check("Changes beyond noise in CPU time, per command: 1 of" in text, text)


def test_slower_off_the_critical_path_says_so():
    a, _ = runs("off-a", [31, 32, 33], long_job=True)
    b, _ = runs("off-b", [41, 42, 43], slow=0.5, long_job=True)
    rows = key_rows(diff(a, b)[0])
    eq([(r["key"], r["verdict"], r["path"]) for r in rows],
       [(f"cc -c $SRC/src/f{SLOW}.c -o $TMP/cc*.o", "slower", (0, 0))],
       "slower, on no run's critical path")


def test_identical_runs_no_change_beyond_noise():
    a, _ = runs("same-a", [51, 52, 53])
    b, _ = runs("same-b", [61, 62, 63])
    text, _ = diff(a, b)
    check("No change beyond noise." in text, text)
    eq(key_rows(text), [], "no rows")
    check(re.search(r"wall s .*within noise", text), text)
    # Everything is compared, none of it is beyond noise.
    rows = key_rows(diff(a, b, "--all", "-n", "100")[0])
    eq(len(rows), 1 + 3 + 1 + NFILES, "all keys with --all")
    check(all(r["verdict"] == "within noise" for r in rows), rows)


def test_one_run_per_side_warns():
    a, _ = runs("one-a", [71])
    b, _ = runs("one-b", [72], slow=0.5)
    text, _ = diff(a, b)
    check("cannot tell noise from change" in text, text)
    rows = key_rows(text)
    check(rows, text)
    check(all(r["verdict"] == "?" and r["lo"] is None and r["q"] == "-"
              for r in rows), "no verdicts, no intervals")
    eq(rows[0]["key"], f"cc -c $SRC/src/f{SLOW}.c -o $TMP/cc*.o",
       "largest change first")


def test_output_is_reproducible():
    a, _ = runs("rep-a", [81, 82, 83])
    b, _ = runs("rep-b", [91, 92, 93], slow=0.3)
    eq(diff(a, b, "--all")[0], diff(a, b, "--all")[0], "same output")
    # and the order of the captures on a side does not matter
    eq(key_rows(diff(a, b, "--all")[0]),
       key_rows(diff(a[::-1], b[::-1], "--all")[0]), "order of runs")


def test_fail_if_slower():
    a, _ = runs("gate-a", [101, 102, 103])
    same, _ = runs("gate-same", [111, 112, 113])
    slower, _ = runs("gate-slow", [121, 122, 123], scale=1.2)
    slowfile, _ = runs("gate-file", [131, 132, 133], slow=0.5)
    key = f"cc -c $SRC/src/f{SLOW}.c -o $TMP/cc*.o"
    _, err = diff(a, slower, "--fail-if-slower", "10", rc=1)
    check("beyond noise" in err, err)
    diff(a, slower, "--fail-if-slower", "40", rc=0)
    diff(a, same, "--fail-if-slower", "0", rc=0)
    diff(a, slowfile, "--fail-if-slower", f"{key}=30", rc=1)
    diff(a, slowfile, "--fail-if-slower", f"cc f{SLOW}.c=30", rc=1)
    diff(a, slowfile, "--fail-if-slower", f"{key}=80", rc=0)
    diff(a, same, "--fail-if-slower", f"{key}=0", rc=0)
    # One run a side: no verdict, so no failure, and it says so.
    _, err = diff(a[:1], slower[:1], "--fail-if-slower", "10", rc=0)
    check("not failing" in err, err)
    proftrace("diff", "--fail-if-slower", "x", *a, "--", *same, rc=2)


# ---- report --runs, report of several captures ----

def run_wall(cpus, long_job=False):
    """The wall time build() gives a run of these CPU times."""
    t = 0.1 + 3 * 0.06 + 0.02 + sum(c + 0.01 for c in cpus.values())
    return t + 5 if long_job else t + 0.1


def test_report_runs_medians_ranges_and_path():
    paths, cpus = runs("rr", [161, 162, 163], noise=0.05)
    text, _ = proftrace("report", "--runs", "--width", "300", "-n", "100",
                        *paths)
    walls = [run_wall(c) for c in cpus]
    m = re.search(r"^  wall time\s+([\d.]+) s\s+([\d.]+)-([\d.]+)$", text,
                  re.M)
    check(m, text)
    eq(tuple(float(x) for x in m.groups()),
       (round(statistics.median(walls), 3), round(min(walls), 3),
        round(max(walls), 3)), "run wall: median, min, max")
    m = re.search(r"^  executions\s+(\d+)\s+(\d+)-(\d+)$", text, re.M)
    eq(m.groups(), (str(1 + 4 + NFILES),) * 3, "executions")
    for i in (0, SLOW, NFILES - 1):
        v = [c[i] for c in cpus]
        key = f"cc -c $SRC/src/f{i}.c -o $TMP/cc*.o"
        m = re.search(r"^\s+([\d.]+)\s+([\d.]+)-([\d.]+)\s+(\d+)%\s+"
                      r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+" +
                      re.escape(key) + "$", text, re.M)
        check(m, f"row of {key}:\n{text}")
        g = m.groups()
        med = statistics.median(v)
        eq((float(g[0]), float(g[1]), float(g[2])),
           (round(med, 3), round(min(v), 3), round(max(v), 3)),
           f"duration of f{i}")
        eq(int(g[3]), round(100 * (max(v) - min(v)) / med), "spread")
        eq(float(g[5]), round(med, 3), "CPU median (= duration here)")
        eq(g[7], "3", "in 3 runs")
    # Every run has the same path: the compiles one after the other.
    check("Critical path met most often (3 of 3 runs" in text, text)
    path = text.split("Critical path met most often")[1].split("\n\n")[0]
    for i in range(NFILES):
        check(f"$SRC/src/f{i}.c" in path, f"f{i} on the path:\n{path}")


def test_report_of_repeated_runs_lays_them_over_each_other():
    """Two runs eleven minutes apart: one run's length, not 11 minutes."""
    c1, cp1 = build(171, start=0)
    c2, cp2 = build(172, start=660)
    p1, p2 = (os.path.join(TMP, f"apart{k}.ptcap") for k in (1, 2))
    c1.write(p1)
    c2.write(p2)
    text, _ = proftrace("report", "--width", "300", p1, p2)
    check("laid over each other" in text and "repeated runs" in text, text)
    m = re.search(r"wall time\s+([\d.]+) s", text)
    eq(float(m.group(1)), round(max(run_wall(cp1), run_wall(cp2)), 3),
       "the longer run's wall time")
    text, _ = proftrace("report", "--align", "wall", "--width", "300", p1, p2)
    m = re.search(r"wall time\s+([\d.]+) s", text)
    eq(float(m.group(1)), round(660 + run_wall(cp2), 3),
       "--align wall: from the first start to the last end")
    # Jobs of one pipeline (same CI pipeline id): one wall clock.
    c1, _ = build(173, start=0, meta={"CI_PIPELINE_ID": "77"})
    c2, cp2 = build(174, start=660, meta={"CI_PIPELINE_ID": "77"})
    c1.write(p1)
    c2.write(p2)
    text, _ = proftrace("report", "--width", "300", p1, p2)
    check("one wall clock" in text and "one CI pipeline id" in text, text)
    m = re.search(r"wall time\s+([\d.]+) s", text)
    eq(float(m.group(1)), round(660 + run_wall(cp2), 3), "pipeline span")


# ---- Markdown ----

def inline_text(el):
    return "".join((x.text or "") for x in el.iter()
                   if x.tag in (CM + "text", CM + "code"))


def md_tables(*args):
    """proftrace ARGS (Markdown) through cmark-gfm: its tables as
    (header, rows), every row as wide as its header."""
    md = subprocess.run([ARGS.proftrace, *args], capture_output=True,
                        check=True).stdout
    p = subprocess.run(["cmark-gfm", "-e", "table", "--to", "xml"],
                       input=md, capture_output=True, check=True)
    tables = []
    for t in ET.fromstring(p.stdout).iter(CM + "table"):
        head = [inline_text(c) for c in
                t.find(CM + "table_header").findall(CM + "table_cell")]
        rows = [[inline_text(c) for c in r.findall(CM + "table_cell")]
                for r in t.findall(CM + "table_row")]
        for r in rows:
            eq(len(r), len(head), "row width")
        tables.append((head, rows))
    return tables


def test_markdown_diff():
    a, _ = runs("md-a", [141, 142, 143])
    b, _ = runs("md-b", [151, 152, 153], slow=0.5)
    tables = md_tables("diff", "--format", "markdown", *a, "--", *b)
    run_t = tables[0]
    eq(run_t[0][0], "run", "the run's table")
    eq([r[0] for r in run_t[1]], ["wall s", "cpu s", "executions"], "rows")
    changes = tables[1]
    eq(changes[0][-1], "command", "changes table")
    eq([(r[-1], r[-2]) for r in changes[1]],
       [(f"cc -c $SRC/src/f{SLOW}.c -o $TMP/cc*.o", "slower")],
       "one change beyond noise, the key as code")
    text = key_rows(diff(a, b)[0])[0]
    eq(float(changes[1][0][0]), text["a"], "same median as the text")


def test_markdown_report_runs():
    paths, cpus = runs("mdr", [181, 182, 183])
    tables = md_tables("report", "--runs", "--format", "markdown", "-n",
                       "30", *paths)
    walls = [run_wall(c) for c in cpus]
    eq(tables[0][1][0], ["wall s", f"{statistics.median(walls):.3f}",
                         f"{min(walls):.3f}-{max(walls):.3f}"], "wall row")
    keys = [r[-1] for r in tables[-1][1]]
    check(f"cc -c $SRC/src/f{SLOW}.c -o $TMP/cc*.o" in keys, keys)


if __name__ == "__main__":
    sys.exit(viewlib.main(globals()))
