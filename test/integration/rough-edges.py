#!/usr/bin/env python3
"""Small things a new user trips over, each as the user would see it:
record's summary keeps one line per command; counts of one are singular;
convert -o does not replace an existing file without --force; record of a
command that does not exist says why; report and convert read a
directory of captures as those captures; a daemon --detach that cannot
start makes the shell's eval fail and leaves no log or CSV behind, and
keeps an earlier log; record's --csv and --html refuse an existing file
without --force, and a failed start never removes a device; --keep
prunes only the captures it named itself; bad options and settings are
refused before the command runs, in one line that names them."""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
args = ap.parse_args()
pt = os.path.abspath(args.proftrace)
failures = []


def check(what, ok, detail=""):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        print("      " + str(detail).replace("\n", "\n      "))
        failures.append(what)


def run(*argv, **kw):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROFTRACE_SOCKET", "LD_PRELOAD"))}
    env.update(kw.pop("env", {}))
    return subprocess.run(list(argv), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, **kw)


with tempfile.TemporaryDirectory() as tmp:
    os.chdir(tmp)
    # A command line with a newline in an argument.
    r = run(pt, "record", "-o", "ml.ptcap", "--", "/bin/sh", "-c",
            "true; \\\n/bin/true")
    lines = r.stderr.splitlines()
    slow = lines[lines.index("slowest commands:") + 1:] if \
        "slowest commands:" in lines else []
    check("summary: one line per command, newline shown as ?",
          any(l.endswith("/bin/sh -c 'true; \\?/bin/true'") for l in slow) and
          not any(l.strip() == "/bin/true'" for l in lines), r.stderr)

    r = run(pt, "record", "-o", "one.ptcap", "--", "/bin/true")
    check("summary: '1 execution'",
          "proftrace: 1 execution, wall" in r.stderr, r.stderr)
    r = run(pt, "report", "one.ptcap")
    check("report: '1 execution'", " 1 execution " in r.stdout and
          "1 executions" not in r.stdout, r.stdout[:400])

    # convert -o refuses to replace a file, as record and daemon do.
    with open("out.csv", "w") as f:
        f.write("keep\n")
    r = run(pt, "convert", "-o", "out.csv", "one.ptcap")
    check("convert -o: existing file refused, exit 1",
          r.returncode == 1 and "--force" in r.stderr and
          open("out.csv").read() == "keep\n", (r.returncode, r.stderr))
    r = run(pt, "convert", "--force", "-o", "out.csv", "one.ptcap")
    check("convert --force -o: replaced",
          r.returncode == 0 and open("out.csv").read().startswith("pipeline_id,"),
          r.stderr)
    r = run(pt, "convert", "-o", "/dev/null", "one.ptcap")
    check("convert -o /dev/null: written without --force", r.returncode == 0,
          r.stderr)

    # record of a command that does not exist, against env(1), which
    # searches PATH the same way (execvp): 127 and "No such file or
    # directory", or 126 and "Permission denied" where a directory of
    # PATH may not be searched, as /root/... in root's PATH after su.
    r0 = run("env", "--", "no-such-command-xyz")
    why = r0.stderr.strip().rsplit(": ", 1)[-1]
    r = run(pt, "record", "-o", "nx.ptcap", "--", "no-such-command-xyz")
    check(f"record -- nosuchcmd: {r0.returncode} and says why ({why})",
          r0.returncode in (126, 127) and r.returncode == r0.returncode and
          "no-such-command-xyz" in r.stderr and why in r.stderr,
          (r.returncode, r.stderr, r0.returncode, r0.stderr))

    # A folder of captures (CI artifacts), given to report and convert.
    os.mkdir("caps")
    os.rename("ml.ptcap", "caps/ml.ptcap")
    os.rename("one.ptcap", "caps/one.ptcap")
    r = run(pt, "report", "caps")
    check("report DIR of captures: both read, no complaint",
          r.returncode == 0 and not r.stderr and "#2 " in r.stdout,
          (r.returncode, r.stderr, r.stdout[:300]))
    r = run(pt, "convert", "caps")
    check("convert DIR of captures: every execution",
          r.returncode == 0 and len(list(csv.reader(io.StringIO(r.stdout)))) == 1 + 3,
          (r.returncode, r.stderr, r.stdout))

    # daemon --detach that cannot start: the socket is taken.
    sock = os.path.join(tmp, "sock")
    r = run("sh", "-c", f'eval "$("{pt}" daemon -o d1.ptcap --socket {sock} --detach)"')
    check("daemon --detach starts", r.returncode == 0, r.stderr)
    r = run("sh", "-c", f'eval "$("{pt}" daemon -o d2.ptcap --csv d2.csv '
            f'--socket {sock} --detach)"; echo "status $?"')
    check("failed daemon --detach: eval's status is 1",
          r.stdout.strip() == "status 1", (r.stdout, r.stderr))
    check("failed daemon --detach: says why", "already listening" in r.stderr,
          r.stderr)
    left = sorted(f for f in os.listdir(".") if f.startswith("d2"))
    check("failed daemon --detach: no log, CSV or capture left", not left, left)
    run(pt, "stop", "--socket", sock)

    # An earlier daemon's log is appended to, failed start or not.
    with open("d3.ptcap.log", "w") as f:
        f.write("earlier\n")
    run("sh", "-c", f'"{pt}" daemon -o d3.ptcap --socket {sock} --detach')
    run(pt, "stop", "--socket", sock)
    with open("d3.ptcap.log") as f:
        log = f.read()
    check("daemon --detach: an earlier CAPTURE.log is kept",
          log.startswith("earlier\n"), log)

    # record --csv/--html: an existing file is refused as -o's is, before
    # the command runs; a device is written to and never removed.
    for opt in ("--csv", "--html"):
        with open("victim", "w") as f:
            f.write("keep\n")
        r = run(pt, "record", "-q", "-o", "v%s.ptcap" % opt, opt, "victim",
                "--", "touch", "ran" + opt)
        with open("victim") as f:
            kept = f.read()
        check(f"record {opt} FILE: existing file refused, command not run",
              r.returncode == 1 and kept == "keep\n" and
              "already exists" in r.stderr and
              not os.path.exists("ran" + opt),
              (r.returncode, r.stderr, kept))
    null = os.stat("/dev/null")
    r = run(pt, "record", "-q", "-o", "n.ptcap", "--csv", "/dev/null",
            "--html", os.path.join(tmp, "no", "such", "dir.html"), "--",
            "true")
    check("record --csv /dev/null with a failing --html: /dev/null stays",
          r.returncode == 1 and os.path.exists("/dev/null") and
          os.stat("/dev/null").st_rdev == null.st_rdev, r.stderr)

    # --keep DIR --keep-last 1: other files of DIR are left alone, and
    # the run just kept is the one that stays.
    os.mkdir("kept")
    for name in ("release-1.0-baseline.ptcap", "zzz.ptcap", "notes.txt"):
        with open(os.path.join("kept", name), "w") as f:
            f.write("mine\n")
    for i in range(2):
        r = run(pt, "record", "-q", "--force", "-o", "k.ptcap", "--keep",
                "kept", "--keep-last", "1", "--", "true")
    names = sorted(os.listdir("kept"))
    ours = [n for n in names if n not in
            ("release-1.0-baseline.ptcap", "zzz.ptcap", "notes.txt")]
    check("--keep-last 1: others' files kept, one run of ours",
          r.returncode == 0 and len(names) == 4 and len(ours) == 1 and
          ours[0].endswith(".ptcap"), (r.returncode, r.stderr, names))
    r = run(pt, "record", "-q", "--force", "-o", "k.ptcap", "--keep", "",
            "--", "true")
    check("--keep '': refused with a reason, exit 2", r.returncode == 2 and
          r.stderr.startswith("proftrace: --keep: "), (r.returncode, r.stderr))

    # Settings refused before the command runs, each in one line that
    # names it, rather than after the run or never.
    for argv, what, want in (
            (["record", "--otlp=garbage", "--", "touch", "ran"],
             "record --otlp=garbage", "proftrace: --otlp: 'garbage' is not"),
            (["stop", "--timeout", "abc"], "stop --timeout abc",
             "proftrace: --timeout: "),
            (["export", "--otlp=http://127.0.0.1:9", "--trace-id", "",
              "one.ptcap"], "export --trace-id ''",
             "proftrace: --trace-id: empty"),
            (["diff", "--fail-if-slower", "0x10", "one.ptcap", "one.ptcap"],
             "diff --fail-if-slower 0x10",
             "proftrace: --fail-if-slower: expected PCT"),
            (["record", "--bogus", "--", "touch", "ran"], "record --bogus",
             "proftrace record: unrecognized option '--bogus'"),
            (["help", "bogus"], "help bogus", "proftrace: 'bogus' is not"),
            (["record", "-o", "", "--", "touch", "ran"], "record -o ''",
             "proftrace: -o: an empty file name"),
            (["daemon", "-o", ""], "daemon -o ''",
             "proftrace: -o: an empty file name"),
            (["convert", "-o", "", "one.ptcap"], "convert -o ''",
             "proftrace: -o: an empty file name")):
        r = run(pt, *argv)
        check("%s: exit 2, '%s'" % (what, want),
              r.returncode == 2 and r.stderr.startswith(want) and
              not os.path.exists("ran"), (r.returncode, r.stderr))
    os.mkdir("empty")
    r = run(pt, "convert", "empty")
    check("convert of an empty directory: said, the CSV header alone",
          r.returncode == 0 and len(r.stdout.splitlines()) == 1 and
          r.stderr == "proftrace: empty: no captures (*.ptcap) and no spool "
          "files in this directory\n", (r.returncode, r.stderr, r.stdout))
    r = run(pt, "help", "diff")
    d = run(pt, "diff", "--help")
    check("help diff is diff --help, and its PCT reads '%'",
          r.returncode == 0 and r.stdout == d.stdout and
          "usage: proftrace diff" in r.stdout and "%%" not in r.stdout,
          r.stdout[:300])

    # A configuration the run cannot use, known before it starts: a
    # preload library that is no shared object (ld.so would complain in
    # every process), the watch interval out of range, OTEL_ variables
    # that make no endpoint (the run goes on, unexported).
    for lib in ("/etc/passwd", os.path.realpath("/bin/true")):
        r = run(pt, "record", "-q", "--force", "-o", "l.ptcap", "--",
                "touch", "ran", env={"PROFTRACE_LIB": lib})
        check("PROFTRACE_LIB=%s: refused before the run" % lib,
              r.returncode == 1 and not os.path.exists("ran") and
              "cannot use the preload library" in r.stderr and
              "ld.so" not in r.stderr, (r.returncode, r.stderr))
    r = run(pt, "record", "-q", "--force", "-o", "w.ptcap", "--", "sh", "-c",
            "echo out; exit 3", env={"PROFTRACE_WATCH_MS": "5000"})
    check("PROFTRACE_WATCH_MS=5000: said, and the run goes on",
          r.returncode == 3 and r.stdout == "out\n" and
          r.stderr.startswith("proftrace: PROFTRACE_WATCH_MS: expected 1 "
                              "to 1000, not '5000'"), (r.returncode, r.stderr))
    r = run(pt, "record", "-q", "--force", "--otlp", "-o", "o.ptcap", "--",
            "sh", "-c", "echo out; exit 3",
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": "garbage"})
    err = r.stderr.splitlines()
    check("record --otlp with OTEL_EXPORTER_OTLP_ENDPOINT=garbage: said "
          "before the run, which goes on",
          r.returncode == 3 and r.stdout == "out\n" and len(err) == 2 and
          "is not an http:// or https:// URL" in err[0] and
          err[1] == "proftrace: --otlp: the run will not be exported",
          (r.returncode, r.stderr))

sys.exit(1 if failures else 0)
