#!/usr/bin/env python3
"""proftrace whatif on planted builds whose answer is known by
construction: jobs that sleep take the same time on a busy machine, so
each saving is the jobs' own durations (from convert's CSV of the same
capture), whatever else runs.

- four independent one-second jobs under .NOTPARALLEL, make -j2:
  --serial-free saves two of them (they run two by two);
- the same four at make -j1: --jobs 2 saves two, --jobs 4 three;
  --cpus 4 too; a pattern that matches every job (--faster '*=2') halves
  the jobs;
- a two-second job beside a half-second one, make -j2: --faster
  'slow=2' saves one second and leaves it on the critical path;
- a test step: --drop check saves its second and takes along the
  program only it needs (its declared prerequisite), never the build's
  product it reads; --drop of a job whose file another job reads is
  refused (exit 1, one line naming the reader and the path); --cached
  of it is not;
- a pattern that matches nothing: exit 1, one line;
- a capture without --files: the process tree's order, said so, and
  --serial-free refused."""
import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
args = ap.parse_args()
PT = os.path.abspath(args.proftrace)
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what} {detail}")
    else:
        print(f"ok: {what}")


def near(what, got, want, tol):
    check(what, abs(got - want) <= tol, f"{got:.3f} vs {want:.3f} (±{tol})")


def build(tmp, name, makefile, cmd, files=True):
    """makefile: the Makefile's text, or {path: text}."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    tree = makefile if isinstance(makefile, dict) else {"Makefile": makefile}
    for path, text in tree.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), "w") as f:
            f.write(text)
    cap = os.path.join(tmp, name + ".ptcap")
    subprocess.run([PT, "record", "-q", "--force"] +
                   (["--files"] if files else []) + ["-o", cap, "--", *cmd],
                   cwd=d, check=True, stdout=subprocess.DEVNULL)
    rows = list(csv.DictReader(io.StringIO(subprocess.run(
        [PT, "convert", "-f", "csv", cap], check=True,
        stdout=subprocess.PIPE, text=True).stdout)))
    return d, cap, rows


def whatif(cap, *changes, rc=0):
    p = subprocess.run([PT, "whatif", "-f", "json", cap, *changes],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check(f"whatif {' '.join(changes)}: exit {rc}", p.returncode == rc,
          (p.returncode, p.stderr))
    if rc:
        return p.stderr
    return json.loads(p.stdout)


def sleeps(rows, secs):
    """Wall seconds of the recorded `sleep SECS` executions."""
    return [float(r["duration"]) for r in rows
            if r["command"] == f"sleep {secs}"]


def hints(cap, saving):
    """With no change, whatif's JSON, the report's text, its Markdown
    (cmark-gfm) and the HTML report (headless Chromium) name
    --serial-free first, with its saving; --cpus 4 saves nothing and is
    left out."""
    h = whatif(cap)
    check("hints: --serial-free first", h["hints"] and
          h["hints"][0]["change"] == "--serial-free", h)
    if not h["hints"]:
        return
    near("hints: its saving", h["hints"][0]["saving"], saving, 0.3)
    check("hints: nothing that saves nothing",
          all(x["saving"] > 0 for x in h["hints"]), h["hints"])
    rep = subprocess.run([PT, "report", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    m = re.search(r"^ +([0-9.]+) s  --serial-free:", rep, re.M)
    check("report: the hint in the text, with its saving",
          "what would save most" in rep and m and
          abs(float(m.group(1)) - h["hints"][0]["saving"]) < 0.006,
          rep[-600:])
    md = subprocess.run([PT, "report", "-f", "markdown", cap], check=True,
                        stdout=subprocess.PIPE, text=True).stdout
    html = subprocess.run(["cmark-gfm"], input=md, check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    check("report markdown: the section and the change as code (cmark-gfm)",
          "<h2>What would save most</h2>" in html and
          "<code>--serial-free</code>" in html, html[-800:])
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "tools"))
    import browser_pipe
    out = cap + ".html"
    subprocess.run([PT, "convert", "-f", "html", "-o", out, cap], check=True)
    with browser_pipe.Browser() as b:
        p = b.open("file://" + out, timeout=120, network=True)
        p.eval("new Promise(function (ok) { (function w() {"
               " if (window.proftrace && window.proftrace.ready) ok(true);"
               " else setTimeout(w, 20); })(); })")
        errs = p.errors + b.page_errors(p.session)
        check("html: no error", not errs and
              p.eval("proftrace.error") is None, errs)
        rows = p.eval("proftrace.deps()")["hints"]
    check("html: the hints table, --serial-free first",
          len(rows) == len(h["hints"]) + 1 and
          rows[1][2].endswith("--serial-free") and
          abs(float(rows[1][0]) - h["hints"][0]["saving"]) < 0.002, rows)


tmp = tempfile.mkdtemp(prefix="pt-whatif-")
try:
    four = ("all: a b c d\na b c d:\n\tsleep 1; echo $@ > $@\n")

    # ---- .NOTPARALLEL at -j2: --serial-free runs them two by two ----
    _, cap, rows = build(tmp, "np", ".NOTPARALLEL:\n" + four,
                         ["make", "-s", "-j2"])
    s = sleeps(rows, 1)
    check("notparallel: four sleeps recorded", len(s) == 4, s)
    w = whatif(cap, "--serial-free")
    near("notparallel: --serial-free saves two of the four", w["saving"],
         sum(sorted(s)[:2]), 0.3)
    check("notparallel: not within noise", not w["within_noise"], w)
    check("notparallel: two jobs on the new critical path",
          len(w["critical_path"]) == 2, w["critical_path"])
    check("notparallel: the JSON's keys",
          all(k in w for k in ("now", "predicted", "saving", "spread",
                               "critical_path")), sorted(w))
    near("notparallel: predicted = unloaded now - saving", w["predicted"],
         w["now_unloaded"] - w["saving"], 0.002)
    w = whatif(cap, "--cpus", "4")
    near("notparallel: more CPUs change nothing", w["saving"], 0, 0.05)
    hints(cap, sum(sorted(s)[:2]))

    # ---- make -j1: more job slots ----
    _, cap, rows = build(tmp, "j1", four, ["make", "-s", "-j1"])
    s = sorted(sleeps(rows, 1))
    w = whatif(cap, "--jobs", "2")
    near("-j1 capture: --jobs 2 saves two jobs", w["saving"], s[0] + s[1],
         0.3)
    check("-j1 capture: recorded at -j1", w["machine_now"]["jobs"] == 1,
          w["machine_now"])
    w = whatif(cap, "--jobs", "4")
    near("-j1 capture: --jobs 4 saves three jobs", w["saving"],
         s[0] + s[1] + s[2], 0.3)
    w = whatif(cap, "--cpus", "4")
    near("-j1 capture: --cpus 4 saves three jobs (they sleep)",
         w["saving"], s[0] + s[1] + s[2], 0.3)
    check("-j1 capture: --cpus 4 runs make at -j4",
          w["machine_predicted"] == {"cpus": 4, "jobs": 4},
          w["machine_predicted"])
    w = whatif(cap, "--faster", "*=2")
    check("a glob matching every job: each matched",
          w["changes"][0]["jobs"] >= 4, w["changes"])
    near("a glob matching every job: the jobs halved", w["saving"],
         sum(s) / 2, 0.4)
    err = whatif(cap, "--faster", "no-such-thing=2", rc=1)
    check("a pattern that matches nothing: one line naming it",
          err.count("\n") == 1 and "no-such-thing" in err, err)
    err = whatif(cap, "--faster", "a=0", rc=2)
    check("a factor of 0: one line", err.count("\n") == 1, err)

    # ---- the job on the critical path, faster ----
    _, cap, rows = build(tmp, "crit",
                         "all: slow quick\nslow:\n\tsleep 2\n"
                         "quick:\n\tsleep 0.5\n", ["make", "-s", "-j2"])
    w = whatif(cap, "--faster", "slow=2")
    near("--faster slow=2 saves half of the two-second job", w["saving"],
         sleeps(rows, 2)[0] / 2, 0.15)
    check("--faster slow=2: matched one job",
          w["changes"][0]["jobs"] == 1, w["changes"])
    check("--faster slow=2: slow still on the critical path",
          w["critical_path"] == ["slow"], w["critical_path"])

    # ---- a test step ----
    mk = ("all: prog\nprog:\n\tsleep 0.5; echo p > prog\n"
          "testbin:\n\tsleep 1; echo t > testbin\n"
          "check: prog testbin\n\tcat prog testbin > result; sleep 1\n")
    _, cap, rows = build(tmp, "check", mk, ["make", "-s", "-j1", "all",
                                            "check"])
    dj = json.loads(subprocess.run([PT, "deps", "-f", "json", cap],
                                   check=True, stdout=subprocess.PIPE).stdout)
    lab = {j["id"]: j["label"] for j in dj["jobs"]}
    decl = {(lab[e["from"]], lab[e["to"]]) for e in dj["edges"]
            if e["kind"] == "declared"}
    check("deps json: the declared prerequisites as edges",
          decl == {("prog", "check"), ("testbin", "check")}, decl)
    w = whatif(cap, "--drop", "check")
    near("--drop check: saves it and its own program", w["saving"],
         sum(sleeps(rows, 1)), 0.3)
    check("--drop check: takes testbin along, not prog",
          w["taken_along"] == ["testbin"], w["taken_along"])
    err = whatif(cap, "--drop", "prog", rc=1)
    check("--drop prog, which check reads: refused, naming both",
          err.count("\n") == 1 and "check" in err and "prog" in err, err)
    w = whatif(cap, "--drop", "prog", "--drop", "check")
    check("--drop prog --drop check: both at once, not refused",
          w["changes"][0]["jobs"] == 1 and w["changes"][1]["jobs"] == 1, w)
    w = whatif(cap, "--cached", "prog")
    near("--cached prog: its time saved", w["saving"], sleeps(rows, 0.5)[0],
         0.2)

    # ---- sub-makes: a SUBDIRS loop, and two sub-makes as prerequisites ----
    sub = {"s1/Makefile": "all:\n\tsleep 1; echo > x\n",
           "s2/Makefile": "all:\n\tsleep 1; echo > y\n"}
    _, cap, rows = build(tmp, "subdirs", dict(sub, **{
        "Makefile": "SUBDIRS = s1 s2\nall:\n\tfor d in $(SUBDIRS); "
                    "do $(MAKE) -C $$d || exit 1; done\n"}),
        ["make", "-s", "-j2"])
    s = sorted(sleeps(rows, 1))
    w = whatif(cap, "--serial-free")
    near("SUBDIRS loop: --serial-free runs the two sub-makes side by side",
         w["saving"], s[0], 0.3)
    w = whatif(cap, "--jobs", "8")
    near("SUBDIRS loop: more job slots change nothing", w["saving"], 0, 0.1)
    _, cap, rows = build(tmp, "submakes", dict(sub, **{
        "Makefile": "all: s1 s2\ns1 s2:\n\t$(MAKE) -C $@\n"
                    ".PHONY: all s1 s2\n"}), ["make", "-s", "-j1"])
    s = sorted(sleeps(rows, 1))
    w = whatif(cap, "--jobs", "2")
    near("two sub-makes at -j1: --jobs 2 runs them side by side",
         w["saving"], s[0], 0.3)

    # ---- without --files ----
    _, cap, rows = build(tmp, "nofiles", four, ["make", "-s", "-j1"],
                         files=False)
    w = whatif(cap, "--jobs", "2")
    check("no files: said so", w["file_dependencies"] is False, w)
    s = sorted(sleeps(rows, 1))
    near("no files: make's database still orders the jobs", w["saving"],
         s[0] + s[1], 0.3)
    p = subprocess.run([PT, "whatif", cap, "--jobs", "2"],
                       stdout=subprocess.PIPE, text=True)
    check("no files: the text says file dependencies would make it exact",
          "--files" in p.stdout, p.stdout)
    err = whatif(cap, "--serial-free", rc=1)
    check("no files: --serial-free refused in one line",
          err.count("\n") == 1 and "--files" in err, err)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
