#!/usr/bin/env python3
"""proftrace deps on an `opam install` of planted packages, in a switch of
a local repository (no network), whose answer is known by construction:

- each package's build, install and (for a reinstall) removal is a job,
  labelled by the package; opam's own commands stay its own;
- `prober` reads a file `user` installs, without depending on it: the
  one race, named by both packages, with the fix (add "user" to
  prober's depends); the run shows it was real (prober found nothing);
- `user` reads what `base` installs and depends on it: no race;
- `slow` depends on `base` {build} and reads nothing of it, while
  `busy` runs beside both: a serialization, its gain how long slow
  waited (from the first package's command, convert's CSV), named where
  it is declared; its `"other" {post}` is no order;
- `whatif --drop slow` drops slow's build and install;
- with prober depending on user, and after `opam reinstall base` (opam
  builds the new base, removes the old files, then installs): no race.
JSON through Python's json module."""
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

if not shutil.which("opam"):
    print("skip: opam is not installed")
    sys.exit(77)


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what} {detail}")
    else:
        print(f"ok: {what}")


PKGS = {
    "base": ("", "sleep 0.4; echo base > out"),
    "user": ('"base" {>= "1"}', "cat %{lib}%/base/out > out; sleep 0.2"),
    "slow": ('"base" {build}\n  "other" {post}',
             "sleep 1.2; echo slow > out"),
    "prober": ("", "sleep 0.1; cat %{lib}%/user/out > out 2>/dev/null "
                   "|| echo none > out"),
    "other": ("", "echo other > out"),
    # runs beside base and slow: no moment with nothing else running
    "busy": ("", "sleep 1.6; echo busy > out"),
}


def repo(root, pkgs):
    os.makedirs(os.path.join(root, "packages"))
    with open(os.path.join(root, "repo"), "w") as f:
        f.write('opam-version: "2.0"\n')
    for name, (deps, build) in pkgs.items():
        d = os.path.join(root, "packages", name, name + ".1")
        os.makedirs(d)
        with open(os.path.join(d, "opam"), "w") as f:
            f.write(f'opam-version: "2.0"\nsynopsis: "{name}"\n'
                    f'maintainer: "x"\ndepends: [ {deps} ]\n'
                    f'build: [ [ "sh" "-c" "{build}" ] ]\n'
                    f'install: [ [ "sh" "-c" "mkdir -p %{{lib}}%/{name} '
                    f'&& cp out %{{lib}}%/{name}/" ] ]\n')


def opam_env(tmp):
    env = dict(os.environ, OPAMROOT=os.path.join(tmp, "root"),
               OPAMROOTISOK="1", OPAMYES="1", OPAMNODEPEXTS="1",
               OPAMCOLOR="never")
    env.pop("OPAMSWITCH", None)
    return env


def switch(tmp, pkgs):
    repo(os.path.join(tmp, "repo"), pkgs)
    env = opam_env(tmp)
    for cmd in (["opam", "init", "--bare", "-n", "--disable-sandboxing",
                 "default", os.path.join(tmp, "repo")],
                ["opam", "switch", "create", "s", "--empty"]):
        subprocess.run(cmd, env=env, check=True, cwd=tmp,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return env


def record(tmp, env, name, cmd):
    cap = os.path.join(tmp, name + ".ptcap")
    subprocess.run([PT, "record", "-q", "--force", "--files", "-o", cap,
                    "--", *cmd], env=env, check=True, cwd=tmp,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dj = json.loads(subprocess.run([PT, "deps", "-f", "json", cap],
                                   check=True, stdout=subprocess.PIPE).stdout)
    rows = list(csv.DictReader(io.StringIO(subprocess.run(
        [PT, "convert", "-f", "csv", cap], check=True,
        stdout=subprocess.PIPE, text=True).stdout)))
    return dj, rows


def installed(env, name):
    prefix = os.path.join(env["OPAMROOT"], "s")
    with open(os.path.join(prefix, "lib", name, "out")) as f:
        return f.read().strip()


tmp = tempfile.mkdtemp(prefix="pt-deps-opam-")
try:
    a = os.path.join(tmp, "a")
    os.makedirs(a)
    env = switch(a, PKGS)
    prefix = os.path.realpath(os.path.join(env["OPAMROOT"], "s"))
    dj, rows = record(a, env, "install",
                      ["opam", "install", "-j2", *PKGS])
    jobs = {j["id"]: j for j in dj["jobs"]}
    labels = sorted(j["label"] for j in dj["jobs"]
                    if j["label"].split()[0].endswith(".1"))
    check("a job for each package's build and install",
          labels == sorted([p + ".1" for p in PKGS] +
                           [p + ".1 install" for p in PKGS]), labels)

    # the race, and that it was real in this run
    check("prober read before user installed (the run's own output)",
          installed(env, "prober") == "none", installed(env, "prober"))
    rs = dj["races"]
    check("one race", len(rs) == 1, rs)
    if len(rs) == 1:
        r = rs[0]
        check("its path: what user installs",
              r["path"].startswith(prefix + "/lib/user"), r["path"])
        check("its jobs: user's install, then prober",
              (jobs[r["writer_job"]]["label"],
               jobs[r["reader_job"]]["label"]) ==
              ("user.1 install", "prober.1"),
              (jobs[r["writer_job"]]["label"],
               jobs[r["reader_job"]]["label"]))
        check("its fix: the dependency to add, in prober's opam file",
              r["fix"] == 'add "user" to the depends of prober.1 (' +
              prefix + '/.opam-switch/packages/prober.1/opam)', r["fix"])

    # the declared order: depends, less {post}
    decl = {(jobs[e["from"]]["label"], jobs[e["to"]]["label"])
            for e in dj["edges"] if e["kind"] == "declared"}
    check("declared: user and slow after base's install",
          {("base.1 install", "user.1"),
           ("base.1 install", "slow.1")} <= decl, sorted(decl))
    check("declared: each install after its build",
          all((p + ".1", p + ".1 install") in decl for p in PKGS),
          sorted(decl))
    check("declared: no order from {post}",
          not any("other" in x and "slow" in y for x, y in decl),
          sorted(decl))

    # the serialization: slow waits for base, reads nothing of it
    # base's build and install: its commands that opam ran; slow's wait:
    # from the first package's command to slow's build
    top = [r for r in rows if r["package"] and
           "-c" in r["command"].split()[:2]]
    base = [float(r["duration"]) for r in top if r["package"] == "base.1"]
    first = min(float(r["start"]) for r in top)
    waited = min(float(r["start"]) for r in top
                 if r["package"] == "slow.1") - first
    ss = dj["serializations"]
    check("one serialization: slow waits for base's install, while busy "
          "ran (no moment with nothing running)",
          len(ss) == 1 and jobs[ss[0]["then_job"]]["label"] == "slow.1" and
          jobs[ss[0]["first_job"]]["label"] == "base.1 install", ss)
    if ss:
        check("named where declared",
              ss[0]["why"] == 'slow.1 depends on "base" (' + prefix +
              '/.opam-switch/packages/slow.1/opam)', ss[0]["why"])
        check("its gain: how long slow waited, at least base's build",
              len(base) == 2 and base[0] - 0.05 < ss[0]["gain"] and
              abs(ss[0]["gain"] - waited) < 0.05,
              (ss[0]["gain"], base, waited))

    # whatif: a package by its name is each of its phases
    cap = os.path.join(a, "install.ptcap")
    w = subprocess.run([PT, "whatif", "-f", "json", "--drop", "slow", cap],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check("whatif --drop slow: accepted", w.returncode == 0, w.stderr)
    if w.returncode == 0:
        wj = json.loads(w.stdout)
        check("whatif --drop slow: its build and its install",
              [c["jobs"] for c in wj["changes"]] == [2], wj["changes"])
        check("whatif --drop slow: off the critical path",
              not any(c.startswith("slow") for c in wj["critical_path"]),
              wj["critical_path"])

    # declared right: no race; and a reinstall (build, remove, install)
    b = os.path.join(tmp, "b")
    os.makedirs(b)
    fixed = dict(PKGS, prober=('"user"', PKGS["prober"][1]))
    env = switch(b, fixed)
    dj, _ = record(b, env, "fixed", ["opam", "install", "-j2", *fixed])
    check("prober depending on user: it read user's file",
          installed(env, "prober") == "base", installed(env, "prober"))
    check("prober depending on user: no race", dj["races"] == [],
          dj["races"])
    dj, rows = record(b, env, "reinstall",
                      ["opam", "reinstall", "-j2", "base"])
    check("reinstall: user rebuilt too",
          any(r["package"] == "user.1" for r in rows))
    check("reinstall: no race", dj["races"] == [], dj["races"])
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
