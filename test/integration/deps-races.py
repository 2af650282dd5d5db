#!/usr/bin/env python3
"""proftrace deps on builds with a missing dependency planted, whose
answer is known by construction: each race is found from one ordinary
run of a build that succeeded, whatever order the run took, with the
path, the two jobs' targets and the prerequisite to add; the same build
with the dependency declared has no race.

- a read ordered by chance (`all: w r`, the reader slower), make -j2;
- two rules that write one file, make -j1;
- a read of a file that does not exist yet (its reader runs first),
  make -j1: needs the library to record failed look-ups (skipped when
  the capture has none);
- `install: $(DIRS) $(FILES)`, files installed into directories other
  prerequisites make, make -j1;
- objects compiled into a directory another rule creates, make -j1;
- two sub-makes that compile the same objects, their top Makefile
  without `prog: lib` (lz4's `lz4-release : lib-release`), make -j2;
- a ninja build whose generated header lacks its order-only input;
- one rule with two targets (`parse.c parse.h: parse.y`), which make
  runs once for each: the fix is a grouped target (`&:`);
- two rules that run one sub-make (`libs:` and `sub/lib.a:`), make -j1:
  the second's rule did not run, and the fix orders it after the first;
- a man page's rule that runs make for its program, make -j1: one race,
  the program before the man page;
- `mkdir -p` into a directory another rule made: no race;
- .NOTPARALLEL, and a SUBDIRS loop running two sub-makes one after the
  other: each a serialization, its gain what running the two one-second
  jobs side by side saves (the shorter's duration, from the CSV), and
  where it is declared.
JSON through Python's json module; durations from convert's CSV."""
import argparse
import csv
import io
import json
import os
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


def build(tmp, name, files, cmd):
    """Write files into tmp/name, record cmd there with --files; return
    (directory, deps JSON, CSV rows)."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), "w") as f:
            f.write(text)
    cap = os.path.join(tmp, name + ".ptcap")
    subprocess.run([PT, "record", "-q", "--force", "--files", "-o", cap,
                    "--", *cmd], cwd=d, check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([PT, "deps", "-f", "json", cap], check=True,
                         cwd=d, stdout=subprocess.PIPE).stdout
    rows = list(csv.DictReader(io.StringIO(subprocess.run(
        [PT, "convert", "-f", "csv", cap], check=True,
        stdout=subprocess.PIPE, text=True).stdout)))
    return os.path.realpath(d), json.loads(out), rows, cap


def targets(dj, race):
    jobs = {j["id"]: j for j in dj["jobs"]}
    return (jobs[race["writer_job"]]["target"],
            jobs[race["reader_job"]]["target"])


def one_race(what, dj, path, first, second, fix):
    rs = dj["races"]
    check(f"{what}: one race", len(rs) == 1, rs)
    if len(rs) != 1:
        return
    r = rs[0]
    check(f"{what}: its path", r["path"] == path, (r["path"], path))
    check(f"{what}: its jobs' targets", targets(dj, r) == (first, second),
          targets(dj, r))
    check(f"{what}: the prerequisite to add", r["fix"].startswith(fix),
          (r["fix"], fix))


def near(seconds):
    """How far a gain may be from a job's recorded duration: the gain
    is computed without the job's wait for a CPU, which the CSV's
    duration holds; on a loaded machine that is tens of milliseconds."""
    return max(0.05, 0.1 * seconds)


def no_race(what, dj):
    check(f"{what}, declared: no race", dj["races"] == [], dj["races"])


tmp = tempfile.mkdtemp(prefix="pt-deps-races-")
try:
    # ---- (a) a read ordered by chance ----
    mk = ("all: w r\nw:\n\tsleep 0.2; echo x > f\n"
          "r:%s\n\tsleep 0.6; cat f > out\n")
    d, dj, _, _ = build(tmp, "chance", {"Makefile": mk % ""},
                        ["make", "-s", "-j2"])
    one_race("chance-ordered read", dj, d + "/f", "w", "r",
             "add w as a prerequisite of r (Makefile:4)")
    _, dj, _, _ = build(tmp, "chance1", {"Makefile": mk % " w"},
                        ["make", "-s", "-j2"])
    no_race("chance-ordered read", dj)

    # ---- (b) two rules writing one file ----
    mk = ("all: a b\na:\n\techo a > f\nb:%s\n\techo b > f\n")
    d, dj, _, _ = build(tmp, "waw", {"Makefile": mk % ""},
                        ["make", "-s", "-j1"])
    one_race("two rules writing one file", dj, d + "/f", "a", "b",
             "a and b both write f")
    check("two rules writing one file: its kind",
          dj["races"] and dj["races"][0]["kind"] == "write-write")
    _, dj, _, _ = build(tmp, "waw1", {"Makefile": mk % " a"},
                        ["make", "-s", "-j1"])
    no_race("two rules writing one file", dj)

    # ---- (c) a read of a file that does not exist yet ----
    mk = ("all: r w\nr:%s\n\tcat f > out 2>/dev/null || true\n"
          "w:\n\techo x > f\n")
    d, dj, _, cap = build(tmp, "missing", {"Makefile": mk % ""},
                          ["make", "-s", "-j1"])
    acc = subprocess.run([PT, "convert", "-f", "files", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    if ",missing," not in acc:
        print("skip: a read of a file that does not exist yet: the "
              "library records no failed look-up")
    else:
        one_race("read before it exists", dj, d + "/f", "w", "r",
                 "add w as a prerequisite of r (Makefile:")
        check("read before it exists: its kind",
              dj["races"] and dj["races"][0]["kind"] == "missing")

    # ---- (d) install: $(DIRS) $(FILES) ----
    mk = ("DIRS = d1 d2\nFILES = d1/x d2/y\n"
          "install: $(DIRS) $(FILES)\n$(DIRS):\n\tmkdir $@\n"
          "d1/x d2/y:\n\tcp src $@\n%s")
    d, dj, _, _ = build(tmp, "install", {"Makefile": mk % "",
                                         "src": "x\n"},
                        ["make", "-s", "-j1"])
    rs = sorted((r["path"], targets(dj, r), r["kind"], r["fix"])
                for r in dj["races"])
    check("install: a race per directory", [x[:3] for x in rs] == [
        (d + "/d1/x", ("d1", "d1/x"), "directory"),
        (d + "/d2/y", ("d2", "d2/y"), "directory")], rs)
    check("install: an order-only prerequisite to add",
          all(x[3].startswith(f"add {x[1][0]} as an order-only "
                              f"prerequisite of {x[1][1]}") for x in rs), rs)
    _, dj, _, _ = build(tmp, "install1", {"Makefile": mk %
                                          "d1/x: | d1\nd2/y: | d2\n",
                                          "src": "x\n"},
                        ["make", "-s", "-j1"])
    no_race("install", dj)

    # ---- (e) objects into a directory another rule makes ----
    mk = ("all: obj prog\nprog: obj/a.o\n\tcat obj/a.o > $@\n"
          "obj/%%.o: %%.c%s\n\tcp $< $@\nobj:\n\tmkdir obj\n")
    d, dj, _, _ = build(tmp, "objdir", {"Makefile": mk % "",
                                        "a.c": "a\n"},
                        ["make", "-s", "-j1"])
    one_race("objects into a directory", dj, d + "/obj/a.o", "obj",
             "obj/a.o", "add obj as an order-only prerequisite of obj/a.o")
    _, dj, _, _ = build(tmp, "objdir1", {"Makefile": mk % " | obj",
                                         "a.c": "a\n"},
                        ["make", "-s", "-j1"])
    no_race("objects into a directory", dj)

    # ---- (f) two sub-makes compiling the same objects ----
    # Objects written as a compiler writes them (O_TRUNC, no O_EXCL):
    # cp's exclusive create made the race itself fail the build at times.
    sub = ("all: ../lib/x.o main.o\n\tcat ../lib/x.o main.o > prog\n"
           "../lib/%.o: ../lib/%.c\n\tsleep 0.3; cat $< > $@\n"
           "%.o: %.c\n\tcp $< $@\n")
    top = ("all: lib-release prog-release\nlib-release:\n\t$(MAKE) -C lib\n"
           "prog-release:%s\n\t$(MAKE) -C prog\n")
    files = {"lib/Makefile": "all: x.o\n\tar rc libx.a x.o\n"
                             "%.o: %.c\n\tsleep 0.3; cat $< > $@\n",
             "lib/x.c": "x\n", "prog/Makefile": sub, "prog/main.c": "m\n"}
    d, dj, _, _ = build(tmp, "submakes", dict(files, Makefile=top % ""),
                        ["make", "-s", "-j2"])
    rs = dj["races"]
    check("sub-makes: one race between the two recipes", len(rs) == 1, rs)
    if rs:
        check("sub-makes: the prerequisite between the recipes",
              rs[0]["fix"] == "add lib-release as a prerequisite of "
              "prog-release (Makefile:4)", rs[0]["fix"])
        check("sub-makes: a path of lib",
              rs[0]["path"].startswith(d + "/lib/x."), rs[0]["path"])
    _, dj, _, _ = build(tmp, "submakes1",
                        dict(files, Makefile=top % " lib-release"),
                        ["make", "-s", "-j2"])
    no_race("sub-makes", dj)

    # ---- (g) ninja: a generated header without its order-only input ----
    if shutil.which("ninja"):
        nj = ("rule gen\n  command = sleep 0.3; cp $in $out\n"
              "rule cc\n  command = cat $in gen.h > $out\n"
              "rule link\n  command = cat $in > $out\n"
              "build gen.h: gen gen.h.in\nbuild a.o: cc a.c%s\n"
              "build b.o: cc b.c || gen.h\nbuild prog: link a.o b.o\n")
        # gen.h there already (from a release tarball, say): the compile
        # that runs first reads it, stale
        files = {"gen.h.in": "x\n", "gen.h": "old\n", "a.c": "a\n",
                 "b.c": "b\n"}
        d, dj, _, _ = build(tmp, "ninja", dict(files, **{
            "build.ninja": nj % ""}), ["ninja", "-j2"])
        one_race("ninja header", dj, d + "/gen.h", "gen.h", "a.o",
                 "add gen.h as an input of a.o")
        _, dj, _, _ = build(tmp, "ninja1", dict(files, **{
            "build.ninja": nj % " || gen.h"}), ["ninja", "-j2"])
        no_race("ninja header", dj)
    else:
        print("skip: ninja: not installed")

    # ---- (i) one rule with two targets, as a parser generator's ----
    mk = ("all: prog\nprog: main.o parse.o\n\tcat main.o parse.o > prog\n"
          "main.o: main.c parse.h\n\tcat main.c parse.h > main.o\n"
          "parse.o: parse.c\n\tcat parse.c > parse.o\n"
          "parse.c parse.h %s parse.y\n"
          # cat, not cp: two cp's at once may both find no parse.c and
          # the second then fails its O_EXCL create, failing the build
          "\tsleep 0.3; cat parse.y > parse.c; cat parse.y > parse.h\n")
    src = {"parse.y": "y\n", "main.c": "m\n"}
    d, dj, _, _ = build(tmp, "tworule", dict(src, Makefile=mk % ":"),
                        ["make", "-s", "-j2"])
    rs = dj["races"]
    check("one rule, two targets: a race on what the rule makes",
          rs and all(r["path"] in (d + "/parse.c", d + "/parse.h")
                     for r in rs), rs)
    # the two targets in either order: one rule's runs have the same
    # command, and which target each was for is make -j's own choice
    check("one rule, two targets: the fix is a grouped target",
          rs and all(("parse.c parse.h &:" in r["fix"] or
                      "parse.h parse.c &:" in r["fix"]) and
                     "Makefile:8" in r["fix"] for r in rs),
          [r["fix"] for r in rs])
    check("one rule, two targets: make ran it twice, two jobs",
          sorted(j["label"] for j in dj["jobs"]
                 if j["label"] in ("parse.c", "parse.h")) ==
          ["parse.c", "parse.h"], [j["label"] for j in dj["jobs"]])
    _, dj, _, _ = build(tmp, "tworule1", dict(src, Makefile=mk % "&:"),
                        ["make", "-s", "-j2"])
    no_race("one rule, two targets", dj)

    # one rule with two targets whose recipe has two lines (lz4's
    # `lz4 lz4-release:`), run once, beside another job: its lines are one
    # job (the second line, the same for both targets, goes with the run
    # the first started), no race
    files = {"Makefile": "all: prog-release other\nother:\n"
                         "\tsleep 0.1; echo o > other\n"
                         "prog prog-release:\n\t$(MAKE) -s -C sub $@\n"
                         "\tcp sub/prog .\n",
             "sub/Makefile": "prog prog-release:\n"
                             "\tsleep 0.2; echo p > prog\n"}
    _, dj, _, _ = build(tmp, "tworule2", files, ["make", "-s", "-j2"])
    no_race("one rule, two targets, two lines", dj)
    check("one rule, two targets, two lines: one job for the recipe",
          sorted(j["label"] for j in dj["jobs"] if j["label"] in
                 ("prog", "prog-release")) == ["prog-release"],
          [j["label"] for j in dj["jobs"]])

    # ---- (j) two rules that run one sub-make (mdk4's `osd:` and
    # `osdep/libosdep.a:`, both `$(MAKE) -C osdep`): make -j1 ran the
    # first, which made the library, so the library's own rule never
    # ran; make -j2 runs both sub-makes at once ----
    mk = ("all: libs prog\nlibs:\n\t$(MAKE) -s -C sub\n"
          "sub/lib.a:%s\n\t$(MAKE) -s -C sub\n"
          "prog: sub/lib.a\n\tcat sub/lib.a > prog\n")
    files = {"sub/Makefile": "lib.a: x.c\n\tsleep 0.2; cat x.c > lib.a\n",
             "sub/x.c": "x\n"}
    d, dj, _, _ = build(tmp, "tworules-submake",
                        dict(files, Makefile=mk % ""), ["make", "-s", "-j1"])
    rs = dj["races"]
    check("one sub-make in two rules: one race", len(rs) == 1, rs)
    if len(rs) == 1:
        check("one sub-make in two rules: the library",
              rs[0]["path"] == d + "/sub/lib.a" and
              rs[0]["kind"] == "other-rule", rs[0])
        check("one sub-make in two rules: the rule that did not run, and "
              "the prerequisite to add",
              rs[0]["fix"].startswith("sub/lib.a has a rule of its own "
                                      "(Makefile:4)") and
              "add libs as a prerequisite of sub/lib.a" in rs[0]["fix"],
              rs[0]["fix"])
    check("one sub-make in two rules: the first sub-make is libs's",
          [j["label"] for j in dj["jobs"]
           if j["command"] == "make -s -C sub"] == ["libs"],
          [(j["label"], j["command"]) for j in dj["jobs"]])
    _, dj, _, _ = build(tmp, "tworules-submake1",
                        dict(files, Makefile=mk % " libs"),
                        ["make", "-s", "-j1"])
    no_race("one sub-make in two rules", dj)

    # ---- (k) a man page's rule that runs make for its program
    # (openpace's `cvc-create.1: ...; make cvc-create; help2man
    # ./cvc-create`): make -j1 had made the program before; make -j2 has
    # two makes build it at once.  One race, the program before the man
    # page, not one per object the inner make looked at ----
    mk = ("all: prog prog.1\nprog: prog.o\n"
          "\t{ echo '#!/bin/sh'; echo 'echo man'; } > $@; chmod +x $@\n"
          "prog.o: prog.c\n\tsleep 0.2; cat prog.c > prog.o\n"
          "prog.1: prog.in%s\n\t$(MAKE) -s prog\n"
          "\t$(ENV) ./prog > /dev/null\n\t./prog > $@\n")
    files = {"prog.c": "p\n", "prog.in": "i\n"}
    d, dj, _, _ = build(tmp, "manpage", dict(files, Makefile=mk % ""),
                        ["make", "-s", "-j1"])
    one_race("a man page's make of its program", dj, d + "/prog", "prog",
             "prog.1", "add prog as a prerequisite of prog.1 (Makefile:6)")
    check("a man page's make of its program: the recipe's lines, one job "
          "(`$(ENV)` empty)",
          [j["label"] for j in dj["jobs"] if "./prog" in j["command"] or
           j["label"] == "prog.1"] == ["prog.1"],
          [(j["label"], j["command"]) for j in dj["jobs"]])
    _, dj, _, _ = build(tmp, "manpage1", dict(files, Makefile=mk % " prog"),
                        ["make", "-s", "-j1"])
    no_race("a man page's make of its program", dj)

    # ---- (l) `mkdir -p` into a directory another rule made (automake's
    # install rules): coreutils' mkdir -p makes each parent and takes
    # EEXIST, which is no race ----
    mk = ("D = $(CURDIR)/dest\ninstall: inst-lib inst-man\n"
          "inst-lib:\n\tmkdir -p $(D)/usr/lib && echo > $(D)/usr/lib/x\n"
          "inst-man:\n\tmkdir -p $(D)/usr/share/man && "
          "echo > $(D)/usr/share/man/y\n")
    _, dj, _, _ = build(tmp, "mkdirp", {"Makefile": mk},
                        ["make", "-s", "-j1"])
    check("mkdir -p into a directory another rule made: no race",
          dj["races"] == [], dj["races"])

    # ---- (h) serializations: .NOTPARALLEL, a SUBDIRS loop ----
    mk = (".NOTPARALLEL:\nall: a b\na:\n\tsleep 1; echo a > a.out\n"
          "b:\n\tsleep 1; echo b > b.out\n")
    d, dj, rows, _ = build(tmp, "notpar", {"Makefile": mk},
                           ["make", "-s", "-j2"])
    dur = {r["command"]: float(r["duration"]) for r in rows}
    want = min(dur["/bin/sh -c 'sleep 1; echo a > a.out'"],
               dur["/bin/sh -c 'sleep 1; echo b > b.out'"])
    ss = dj["serializations"]
    check(".NOTPARALLEL: one serialization, named", len(ss) == 1 and
          ss[0]["why"].startswith(".NOTPARALLEL"), ss)
    check(".NOTPARALLEL: its gain, the shorter job",
          ss and abs(ss[0]["gain"] - want) < near(want), (ss, want))
    files = {"Makefile": "SUBDIRS = s1 s2\nall:\n\tfor d in $(SUBDIRS); "
                         "do $(MAKE) -C $$d || exit 1; done\n",
             "s1/Makefile": "all:\n\tsleep 1; echo > x\n",
             "s2/Makefile": "all:\n\tsleep 1; echo > y\n"}
    d, dj, rows, _ = build(tmp, "subdirs", files, ["make", "-s", "-j2"])
    dur = [float(r["duration"]) for r in rows
           if r["command"].startswith("/bin/sh -c 'sleep 1; echo >")]
    ss = dj["serializations"]
    check("SUBDIRS: one serialization, the loop named", len(ss) == 1 and
          f"make in {d}/s1, then the make in {d}/s2" in ss[0]["why"], ss)
    check("SUBDIRS: its gain, the shorter sub-make's job",
          ss and len(dur) == 2 and
          abs(ss[0]["gain"] - min(dur)) < near(min(dur)),
          (ss, dur))
    check("SUBDIRS: no race", dj["races"] == [], dj["races"])
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
