#!/usr/bin/env python3
"""proftrace record --files and proftrace deps on builds whose answer is
known by construction:

- four independent one-second jobs run one after another by a shell
  script, then a fifth that reads all four outputs: the ideal times are
  those of the same jobs, with the durations the CSV gives, scheduled
  here (2 CPUs: two pairs then the fifth; unlimited: one, then the
  fifth); the four are the serializations, the fifth none;
- a Makefile whose b.o reads a header another rule regenerates without
  declaring it, under make -j2 with the read first: the race, with the
  header's path, its writer and its reader; the same Makefile with the
  dependency declared: no race, and the edge on the critical path;
- a Makefile as LZ4's: a flag emptied for one goal by a target-specific
  variable, objects from make's built-in rule, a library recipe that
  echoes, compiles and archives: each recipe one job, no race;
- the sample build (configure, make -j2): the ideal on this machine's
  CPUs never above the wall time, unlimited never above 1 CPU's; its
  capture with --files at most twice its size without;
- report and its Markdown: the section "What it could have been" with
  the ideal times deps gives, absent without --files;
- a capture without --files: one line from deps, exit 1;
- dl_iterate_phdr under --files lists what it lists untraced;
- what an image read before execl, execlp or execle, and what a child
  given an environment without LD_PRELOAD reads (env -i, execve);
- a path that is not UTF-8, a 4 KiB path, 100,000 files read by one
  program, and a program renaming the directory it is in, each found in
  convert -f files as Python itself named it.
Markdown goes through cmark-gfm, JSON through Python's json module."""
import argparse
import csv
import html as htmllib
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
ap.add_argument("--source", required=True)
args = ap.parse_args()
PT = os.path.abspath(args.proftrace)
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what} {detail}")
    else:
        print(f"ok: {what}")


def record(cwd, cap, *cmd, files=True, env=None):
    argv = [PT, "record", "-q", "--force", "-o", cap]
    argv += ["--files"] if files else []
    subprocess.run(argv + ["--", *cmd], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, env=env)


def deps_json(cap):
    out = subprocess.run([PT, "deps", "-f", "json", cap], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def csv_rows(cap, fmt="csv"):
    out = subprocess.run([PT, "convert", "-f", fmt, cap], check=True,
                         stdout=subprocess.PIPE).stdout
    # bytes as recorded: surrogateescape keeps a path that is not UTF-8
    return list(csv.DictReader(io.StringIO(
        out.decode("utf-8", "surrogateescape"), newline="")))


def leaf_jobs(d):
    """The jobs that do the work (not one that holds a tool's jobs)."""
    return [j for j in d["jobs"] if not j["holds_tool"]]


def races(d):
    return [{k: r[k] for k in ("path", "writer", "reader")}
            for r in d["races"]]


def waits(d):
    """Each job's run-queue wait, by command (0 where the capture has
    none): the ideal schedule takes it off the job's recorded time."""
    return {j["command"]: j["wait"] or 0.0 for j in d["jobs"]}


def ideal(d, cpus):
    return [i["wall"] for i in d["ideal"] if i["cpus"] == cpus][0]


def markdown_ok(cap, want):
    md = subprocess.run([PT, "deps", "-f", "markdown", cap], check=True,
                        stdout=subprocess.PIPE, text=True).stdout
    html = subprocess.run(["cmark-gfm", "-e", "table"], input=md,
                          check=True, stdout=subprocess.PIPE,
                          text=True).stdout
    codes = {htmllib.unescape(c) for c in
             re.findall(r"<code>(.*?)</code>", html, flags=re.S)}
    return all(w in codes for w in want) and html.count("<table>") >= 1


def page(cap, header):
    """The HTML report of the racy build in headless Chromium: the ideal
    schedule drawn, two bars side by side on this machine's CPUs, the
    writer's the critical path's, both marked as racing; the race listed
    with the header's path."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "tools"))
    import browser_pipe
    out = cap + ".html"
    subprocess.run([PT, "convert", "-f", "html", "-o", out, cap], check=True)
    rows = csv_rows(cap)
    with browser_pipe.Browser() as b:
        p = b.open("file://" + out, timeout=120, network=True)
        p.eval("new Promise(function (ok) { (function w() {"
               " if (window.proftrace && window.proftrace.ready) ok(true);"
               " else setTimeout(w, 20); })(); })")
        errs = p.errors + b.page_errors(p.session)
        check("html: no error", not errs and p.eval("proftrace.error") is None,
              errs)
        d = p.eval("proftrace.deps()")
    bars = d["bars"] if d else []
    check("html: two jobs drawn", len(bars) == 2, d)
    if len(bars) != 2:
        return
    w = [x for x in bars if "cp gen.h.in" in x["label"]]
    r = [x for x in bars if "cat gen.h" in x["label"]]
    check("html: both marked as racing", all(x["race"] for x in bars))
    check("html: the writer on the critical path, not the reader",
          w and r and w[0]["critical"] and not r[0]["critical"])
    check("html: side by side", bars[0]["cpu"] != bars[1]["cpu"] and
          all(x["w"] >= 1 for x in bars))
    wait = waits(deps_json(cap))
    dur = {r_["command"]: float(r_["duration"]) - wait.get(r_["command"], 0)
           for r_ in rows}
    wcmd = "/bin/sh -c 'sleep 1; cp gen.h.in gen.h'"
    check("html: the writer's bar lasts its recorded time",
          w and abs((w[0]["end"] - w[0]["start"]) / 1e6 - dur[wcmd]) < 0.002)
    check("html: the race listed with the header",
          len(d["races"]) == 2 and d["races"][1][0] == header, d["races"])


tmp = tempfile.mkdtemp(prefix="pt-deps-")
try:
    # ---- a shell script's sequence ----
    s = os.path.join(tmp, "seq")
    os.mkdir(s)
    with open(os.path.join(s, "job.sh"), "w") as f:
        f.write('#!/bin/sh\nsleep 1\necho "$1" > "$1.out"\n')
    with open(os.path.join(s, "fin.sh"), "w") as f:
        f.write("#!/bin/sh\nsleep 1\ncat a.out b.out c.out d.out > all.out\n")
    with open(os.path.join(s, "build.sh"), "w") as f:
        f.write("#!/bin/sh\n./job.sh a\n./job.sh b\n./job.sh c\n"
                "./job.sh d\n./fin.sh\n")
    for n in ("job.sh", "fin.sh", "build.sh"):
        os.chmod(os.path.join(s, n), 0o755)
    cap = os.path.join(tmp, "seq.ptcap")
    record(s, cap, "./build.sh")
    d = deps_json(cap)
    rows = csv_rows(cap)
    jobs = {r["command"]: r for r in rows
            if r["command"].startswith(("./job.sh", "./fin.sh"))}
    check("five jobs", len(leaf_jobs(d)) == 5 and len(jobs) == 5,
          leaf_jobs(d))
    wait = waits(d)
    # a job's CPU time is the floor of its load-free time: under load
    # the wait of processes that ran side by side adds up past it
    jobcpu = {j["command"]: j["cpu"] for j in d["jobs"]}
    csvdur = {c: float(r["duration"]) for c, r in jobs.items()}
    dur = {c: max(t - wait.get(c, 0), jobcpu.get(c, 0))
           for c, t in csvdur.items()}
    root = [r for r in rows if r["command"] == "./build.sh"][0]
    start = float(root["start"])
    end = start + float(root["duration"])
    # the script's own work (before, between and after its jobs) is work
    own = max((end - start) - sum(csvdur.values()) -
              wait.get("./build.sh", 0), jobcpu.get("./build.sh", 0))
    four = [dur[f"./job.sh {x}"] for x in "abcd"]
    fin = dur["./fin.sh"]
    # 2 CPUs: longest first, each to the CPU free first
    cpu = [0.0, 0.0]
    for t in sorted(four, reverse=True):
        cpu[cpu.index(min(cpu))] += t
    want2 = own + max(cpu) + fin
    wantu = own + max(four) + fin
    want1 = own + sum(four) + fin
    for cpus, want in ((1, want1), (2, want2), (None, wantu)):
        got = ideal(d, cpus)
        check(f"ideal on {cpus or 'unlimited'} CPUs", abs(got - want) < 0.005,
              f"{got} vs {want}")
    check("wall now", abs(d["wall"] - (end - start)) < 0.005,
          f"{d['wall']} vs {end - start}")
    named = {x["first"] for x in d["serializations"]} | \
        {x["then"] for x in d["serializations"]}
    check("the four are serializations",
          named == {f"./job.sh {x}" for x in "abcd"}, named)
    check("each gain is a job's", all(
        abs(x["gain"] - min(dur[x["first"]], dur[x["then"]])) < 0.001
        for x in d["serializations"]))
    check("no race in a sequence", d["races"] == [], d["races"])
    check("critical path ends with the reader",
          d["critical_path"][-1] == "./fin.sh", d["critical_path"])
    check("markdown (cmark-gfm)", markdown_ok(cap, ["./job.sh a", "./fin.sh"]))
    rep = subprocess.run([PT, "report", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    check("report: what it could have been, 2 CPUs",
          "what it could have been:" in rep and
          f"{ideal(d, 2):.2f} s on 2 CPUs" in rep, rep[-400:])
    md = subprocess.run([PT, "report", "-f", "markdown", cap], check=True,
                        stdout=subprocess.PIPE, text=True).stdout
    html = subprocess.run(["cmark-gfm", "-e", "table"], input=md,
                          check=True, stdout=subprocess.PIPE,
                          text=True).stdout
    check("report markdown: the section (cmark-gfm)",
          "<h2>What it could have been</h2>" in html and
          f"{ideal(d, None):.2f} s on unlimited CPUs" in html)

    # ---- a Makefile with an undeclared header ----
    m = os.path.join(tmp, "mk")
    os.mkdir(m)
    with open(os.path.join(m, "gen.h.in"), "w") as f:
        f.write("#define X 2\n")
    shutil.copy(os.path.join(m, "gen.h.in"), os.path.join(m, "gen.h"))
    with open(os.path.join(m, "b.c"), "w") as f:
        f.write('#include "gen.h"\nint b = X;\n')
    mk = ("all: gen b.o\n.PHONY: all gen\n"
          "gen:\n\tsleep 1; cp gen.h.in gen.h\n"
          "b.o: b.c%s\n\tcat gen.h b.c > b.o\n")
    header = os.path.join(os.path.realpath(m), "gen.h")
    for declared in (False, True):
        with open(os.path.join(m, "Makefile"), "w") as f:
            f.write(mk % (" gen" if declared else ""))
        cap = os.path.join(tmp, f"mk{int(declared)}.ptcap")
        record(m, cap, "make", "-s", "-j2")
        d = deps_json(cap)
        writer = "/bin/sh -c 'sleep 1; cp gen.h.in gen.h'"
        reader = "/bin/sh -c 'cat gen.h b.c > b.o'"
        if declared:
            check("declared: no race", d["races"] == [], d["races"])
            check("declared: the edge on the critical path",
                  d["critical_path"] == [writer, reader], d["critical_path"])
        else:
            check("undeclared: the race named",
                  races(d) == [{"path": header, "writer": writer,
                                "reader": reader}], d["races"])
            check("undeclared: the prerequisite to add",
                  d["races"][0]["fix"].startswith(
                      "add gen as a prerequisite of b.o (Makefile:"),
                  d["races"])
            check("race in markdown (cmark-gfm)",
                  markdown_ok(cap, [header, writer, reader]))
            text = subprocess.run([PT, "deps", cap], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout
            check("race in text", header in text and reader in text)
            page(cap, header)

    # ---- recipes as LZ4's Makefiles write them ----
    # A flag emptied for one goal (a target-specific variable, which its
    # prerequisites inherit), so that no recipe line runs as the
    # database spells it; objects from make's built-in rule; a library
    # whose recipe echoes, compiles two sources in one cc, then archives.
    # Each recipe is one job, whatever it ran: a job left out, or a
    # recipe cut in two (with a race between its halves), is wrong.
    lz = os.path.join(tmp, "lz")
    os.mkdir(lz)
    for n in ("a", "b", "x", "y"):
        with open(os.path.join(lz, n + ".c"), "w") as f:
            f.write(f"int {n}(void) {{ return 1; }}\n" if n != "a" else
                    "int b(void), x(void), y(void);\n"
                    "int main(void) { return b() + x() + y() - 3; }\n")
    with open(os.path.join(lz, "Makefile"), "w") as f:
        f.write("DEBUGFLAGS = -Wall -Wextra\nCFLAGS = -O1 $(DEBUGFLAGS)\n"
                ".PHONY: release\nrelease: DEBUGFLAGS =\nrelease: prog\n"
                "prog: a.o b.o libx.a\n\t$(CC) $(CFLAGS) a.o b.o libx.a "
                "-o prog\n"
                "libx.a: x.c y.c\n\t@echo making the library\n"
                "\t$(COMPILE.c) $^\n\t$(AR) rcs $@ x.o y.o\n")
    cap = os.path.join(tmp, "lz.ptcap")
    record(lz, cap, "make", "-s", "-j1", "release")
    d = deps_json(cap)
    check("target-specific flags, built-in rule: one job a recipe",
          sorted(j["label"] for j in leaf_jobs(d)) ==
          ["a.o", "b.o", "libx.a", "prog"],
          [(j["label"], j["command"]) for j in leaf_jobs(d)])
    check("target-specific flags, built-in rule: no race",
          d["races"] == [], d["races"])

    # ---- without --files ----
    cap = os.path.join(tmp, "plain.ptcap")
    record(s, cap, "./build.sh", files=False)
    p = subprocess.run([PT, "deps", cap], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check("without --files: exit 1, one line",
          p.returncode == 1 and p.stdout == "" and
          len(p.stderr.strip().splitlines()) == 1 and "--files" in p.stderr,
          repr(p.stderr))
    check("without --files: files CSV has its header only",
          csv_rows(cap, "files") == [])
    rep = subprocess.run([PT, "report", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    check("without --files: no such section in report",
          "could have been" not in rep)

    # ---- bad input: odd paths, many files, a directory renamed ----
    b = os.path.join(tmp, "bad")
    os.mkdir(b)
    rb = os.path.realpath(b).encode()
    deep = b"d" * 200
    depth = (4000 - len(rb)) // (len(deep) + 1)
    long_dir = rb + (b"/" + deep) * depth
    os.makedirs(long_dir)
    os.mkdir(os.path.join(b, "many"))
    for i in range(100000):
        open(os.path.join(b, "many", str(i)), "w").close()
    long_file = long_dir + b"/" + b"f" * (4090 - len(long_dir) - 1)
    odd = rb + b"/caf\xe9-\xff.txt"
    prog = f"""
import os
os.chdir({rb!r})
open({odd!r}, "w").close()
os.chdir({long_dir!r})
open({os.path.basename(long_file)!r}, "w").close()
os.chdir({rb!r})
for i in range(100000):
    open(b"many/%d" % i).close()
os.mkdir(b"inside")
os.chdir(b"inside")
open(b"before", "w").close()
os.rename({rb + b"/inside"!r}, {rb + b"/moved"!r})
open(b"after", "w").close()
"""
    cap = os.path.join(tmp, "bad.ptcap")
    record(b, cap, sys.executable, "-c", prog)
    rows = csv_rows(cap, "files")
    paths = {(r["access"], r["path"].encode("utf-8", "surrogateescape"))
             for r in rows}
    check("a path that is not UTF-8", ("write", odd) in paths)
    check("a 4 KiB path", len(long_file) >= 4000 and
          ("write", long_file) in paths, len(long_file))
    many = [r for r in rows if r["path"].startswith(
        os.path.realpath(b) + "/many/")]
    check("100,000 files read by one program", len(many) == 100000 and
          all(r["access"] == "read" for r in many), len(many))
    check("the directory it is in, renamed",
          ("write", rb + b"/inside/before") in paths and
          ("write", rb + b"/moved/after") in paths)
    d = subprocess.run([PT, "deps", "-f", "json", cap],
                       stdout=subprocess.PIPE, text=True)
    check("one program: deps says there are no jobs", d.returncode == 1)

    # ---- what an image read before execl, execlp, execle ----
    e = os.path.join(tmp, "execl")
    os.mkdir(e)
    with open(os.path.join(e, "el.c"), "w") as f:
        f.write('#include <fcntl.h>\n#include <string.h>\n#include <unistd.h>\n'
                'int main(int c, char **v) {\n'
                '  char *env[] = { "A=1", 0 };\n'
                '  close(open("input", O_RDONLY));\n'
                '  if (!strcmp(v[1], "l")) execl("/bin/true", "true", (char *)0);\n'
                '  if (!strcmp(v[1], "lp")) execlp("true", "true", (char *)0);\n'
                '  execle("/bin/true", "true", (char *)0, env);\n'
                '  return 1;\n}\n')
    open(os.path.join(e, "input"), "w").close()
    subprocess.run(["cc", "-o", "el", "el.c"], cwd=e, check=True)
    for how in ("l", "lp", "le"):
        cap = os.path.join(tmp, f"exec{how}.ptcap")
        record(e, cap, "./el", how)
        got = [r for r in csv_rows(cap, "files") if r["execution"] == f"./el {how}"
               and r["access"] == "read" and r["path"].endswith("/input")]
        check(f"read before exec{how}", len(got) == 1)

    # ---- a child given an empty environment stays recorded ----
    for how, cmd in (("env -i", "env -i /bin/cat input"),
                     ("execve with its own environment",
                      "exec python3 -c 'import os; os.execve(\"/bin/cat\", "
                      "[\"cat\", \"input\"], {\"A\": \"1\"})'")):
        cap = os.path.join(tmp, "envi.ptcap")
        record(e, cap, "sh", "-c", cmd + " > /dev/null")
        got = [r for r in csv_rows(cap, "files") if r["access"] == "read"
               and r["path"] == os.path.realpath(e) + "/input"
               and os.path.basename(r["execution"].split()[0]) == "cat"]
        check(f"files under {how}", len(got) == 1)

    # ---- a record without --files inside one with it: nothing of it ----
    inner = os.path.join(tmp, "inner.ptcap")
    out = subprocess.run(
        [PT, "record", "-q", "--force", "--files", "-o",
         os.path.join(tmp, "outer.ptcap"), "--", PT, "record", "-q",
         "--force", "-o", inner, "--", "sh", "-c",
         # The library takes its variables out of environ; the
         # kernel's copy of the initial environment still has them.
         "cat input >/dev/null; tr '\\0' '\\n' </proc/$$/environ | "
         "grep '^LD_PRELOAD='"], cwd=e, check=True,
        stdout=subprocess.PIPE, text=True).stdout
    check("nested record without --files: no file library",
          "libptfiles" not in out and "libproftrace" in out, out)
    check("nested record without --files: no accesses",
          csv_rows(inner, "files") == [])

    # ---- dl_iterate_phdr lists what it lists untraced ----
    with open(os.path.join(e, "ph.c"), "w") as f:
        f.write('#define _GNU_SOURCE\n#include <link.h>\n#include <stdio.h>\n'
                'static int cb(struct dl_phdr_info *i, size_t s, void *d)\n'
                '{ (void)s; (void)d; printf("%s\\n", i->dlpi_name); return 0; }\n'
                'int main(void) { return dl_iterate_phdr(cb, 0); }\n')
    subprocess.run(["cc", "-o", "ph", "ph.c"], cwd=e, check=True)
    plain = subprocess.run(["./ph"], cwd=e, check=True,
                           stdout=subprocess.PIPE, text=True).stdout
    traced = subprocess.run(
        [PT, "record", "-q", "--force", "--files", "-o",
         os.path.join(tmp, "ph.ptcap"), "--", "./ph"], cwd=e, check=True,
        stdout=subprocess.PIPE, text=True).stdout
    check("dl_iterate_phdr as untraced", traced == plain, (traced, plain))

    # ---- the sample build ----
    sizes = {}
    for files in (False, True):
        sb = os.path.join(tmp, f"sample{int(files)}")
        shutil.copytree(os.path.join(args.source, "sample"), sb)
        cap = os.path.join(tmp, f"sample{int(files)}.ptcap")
        # Debian's default PATH: each directory before the one that
        # holds a program is a miss recorded for every image that
        # searches it (a machine's ~/.cargo/bin, pyenv's shims...), and
        # the size compared is the library's, not this machine's PATH's.
        record(sb, cap, "sh", "-c",
               "./configure >/dev/null && make -j2 >/dev/null", files=files,
               env=dict(os.environ,
                        PATH="/usr/local/bin:/usr/bin:/bin"))
        sizes[files] = os.path.getsize(cap)
    d = deps_json(cap)
    cpus = os.cpu_count()
    mine = [i for i in d["ideal"] if i["cpus"] and i["cpus"] <= cpus][-1]
    check("sample: ideal on this machine's CPUs not above now",
          mine["wall"] <= d["wall"] + 1e-6, (mine, d["wall"]))
    check("sample: unlimited not above 1 CPU's",
          ideal(d, None) <= ideal(d, 1) + 1e-6, d["ideal"])
    check("sample: several jobs and dependencies",
          len(leaf_jobs(d)) > 3 and len(d["edges"]) > 0,
          (d["jobs"], d["edges"]))
    check("sample: --files at most doubles the capture",
          sizes[True] <= 2 * sizes[False], sizes)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
