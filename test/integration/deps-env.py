#!/usr/bin/env python3
"""PROFTRACE_FILES=1 with a bare LD_PRELOAD of libproftrace.so against a
daemon started without --files: the file accesses of a small make -j2
build are recorded as record --files records them.

- the rows of convert -f files under the build's directory (command,
  access, path) are those of the same build under record --files, and
  the files each program wrote are the files the build left (the
  directory listed after it);
- proftrace deps answers as for record --files: the same driver, jobs
  and edges between them, no race;
- the first process given an environment of its own to pass on
  (env -i ... make): its children record their accesses all the same;
- without PROFTRACE_FILES, the same daemon gets no file access: deps
  says so in one line and exits 1;
- daemon --files: the LD_PRELOAD of its shell code names libptfiles.so
  first, and with it the build (make itself the first process) gives
  the accesses of record --files."""
import argparse
import csv
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
args = ap.parse_args()
PT = os.path.abspath(args.proftrace)
LIB = os.environ["PROFTRACE_LIB"]
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what} {detail}")
    else:
        print(f"ok: {what}")


MAKEFILE = """\
all: d
a:
\tprintf a > a
b:
\tprintf b > b
c: a b
\tcat a b > c
d: c
\tenv -i /bin/sh -c 'cat c > d'
"""


def untraced_env():
    return {k: v for k, v in os.environ.items()
            if k != "LD_PRELOAD" and not k.startswith("PROFTRACE_")}


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.mkdir(d)
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(MAKEFILE)


def rows(cap, d):
    out = subprocess.run([PT, "convert", "-f", "files", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return {(r["execution"], r["access"], r["path"])
            for r in csv.DictReader(io.StringIO(out, newline=""))
            if r["path"].startswith(d + "/")}


def deps(cap):
    r = subprocess.run([PT, "deps", "-f", "json", cap],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0
                          else r.stderr)


def shape(dj):
    """What deps says that does not hang on the recorded times: its
    graph (which jobs ran side by side, the serializations, does)."""
    lab = {j["id"]: j["label"] for j in dj["jobs"]}
    return (dj["driver"],
            sorted((j["label"], j["command"], j["holds_tool"])
                   for j in dj["jobs"]),
            sorted((lab[e["from"]], lab[e["to"]], e["path"])
                   for e in dj["edges"] if e["kind"] == "file"),
            sorted((r["path"], r["writer"], r["reader"])
                   for r in dj["races"]),
            [i["cpus"] for i in dj["ideal"]])


def under_daemon(tmp, d, cap, cmd, files, daemon_files=False):
    sock = os.path.join(tmp, "sock")
    out = subprocess.run([PT, "daemon", "-o", cap, "--socket", sock,
                          "--force", "--detach"] +
                         (["--files"] if daemon_files else []),
                         env=untraced_env(), check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    env = untraced_env()
    if daemon_files:    # its shell code, as eval would set it
        for m in re.finditer(r"^export (\w+)=(.*)$", out, re.M):
            env[m.group(1)] = shlex.split(m.group(2))[0]
        pre = env.get("LD_PRELOAD", "").split(":")
        check("daemon --files: LD_PRELOAD names libptfiles first",
              len(pre) == 2 and "libptfiles" in os.path.basename(pre[0]),
              pre)
    else:
        env.update(LD_PRELOAD=LIB, PROFTRACE_SOCKET=sock)
    if files:
        env["PROFTRACE_FILES"] = "1"
    try:
        subprocess.run(cmd, cwd=d, env=env, check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        subprocess.run([PT, "stop", "--socket", sock], env=untraced_env(),
                       check=True)


tmp = tempfile.mkdtemp(prefix="pt-deps-env-")
try:
    d = os.path.join(tmp, "b")
    make = ["env", "make", "-j2"]

    fresh(d)
    rec = os.path.join(tmp, "rec.ptcap")
    subprocess.run([PT, "record", "-q", "--force", "--files", "-o", rec,
                    "--", *make], cwd=d, env=untraced_env(), check=True,
                   stdout=subprocess.DEVNULL)
    want = rows(rec, d)
    rc, want_deps = deps(rec)
    check("record --files: deps answers", rc == 0, want_deps)

    fresh(d)
    bare = os.path.join(tmp, "bare.ptcap")
    under_daemon(tmp, d, bare, make, True)
    got = rows(bare, d)
    check("bare LD_PRELOAD + PROFTRACE_FILES: the accesses of record "
          "--files", got == want and got, (sorted(got ^ want)))
    left = {os.path.join(d, f) for f in os.listdir(d)} - \
        {os.path.join(d, "Makefile")}
    written = {p for _, a, p in got if a == "write"}
    check("the files written are the files the build left",
          written == left, (sorted(written), sorted(left)))
    check("the env -i child's read recorded",
          ("cat c", "read", os.path.join(d, "c")) in got, sorted(got))
    rc, got_deps = deps(bare)
    check("deps answers", rc == 0, got_deps)
    if rc == 0 and isinstance(want_deps, dict):
        check("deps: the driver, jobs, edges and races of record --files",
              shape(got_deps) == shape(want_deps),
              (shape(got_deps), shape(want_deps)))
        check("deps: no race", got_deps["races"] == [])

    # The first process passes an environment of its own: repair puts
    # the file library back with libproftrace.so.
    fresh(d)
    cleared = os.path.join(tmp, "cleared.ptcap")
    under_daemon(tmp, d, cleared,
                 ["env", "-i", "PATH=" + os.environ["PATH"], "make", "-j2"],
                 True)
    got = rows(cleared, d)
    check("env -i make: its children's accesses recorded",
          {(c, a, p) for c, a, p in got if c != "make -j2"} ==
          {(c, a, p) for c, a, p in want if c != "env make -j2"
           and c != "make -j2"} and got, sorted(got))

    # daemon --files, its own LD_PRELOAD: make is the first process.
    fresh(d)
    dfiles = os.path.join(tmp, "dfiles.ptcap")
    under_daemon(tmp, d, dfiles, ["make", "-j2"], False, daemon_files=True)
    got = rows(dfiles, d)
    check("daemon --files: the accesses of record --files",
          got == want and got, sorted(got ^ want))

    # Without the variable: nothing of it.
    fresh(d)
    plain = os.path.join(tmp, "plain.ptcap")
    under_daemon(tmp, d, plain, make, False)
    check("without PROFTRACE_FILES: no file access", not rows(plain, d))
    rc, why = deps(plain)
    check("without PROFTRACE_FILES: deps says so in one line, exit 1",
          rc == 1 and isinstance(why, str) and
          len(why.strip().splitlines()) == 1 and
          re.search(r"--files", why), why)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("%d failed: %s" % (len(failures), ", ".join(failures)))
    sys.exit(1)
print("all passed")
