#!/usr/bin/env python3
"""`proftrace whatif` and `proftrace deps`' ideal times against the real
build: each prediction made from one recorded build, each compared with
the changed build really run, untraced.

    bench/whatif-check.py [--build-dir build] [--rounds 5] [--cache DIR]
                          [--only a,b,c,d] [--work DIR] [--json FILE]
    bench/whatif-check.py --work DIR --again FILE   (predict again only)

The project is a real one: LZ4 1.9.4 as released (the upstream tarball
of Debian's source package `lz4`, the version of the installed liblz4-1,
fetched once into CACHE by test/tools/debsource.py: no deb-src line
needed), built by its own top Makefile (`make`: the static and the
shared library, each one cc over the five library sources, then the lz4
program).  The checks:

  a  `make -j1` recorded with `record --files`; predicted: `whatif --jobs
     2` and `--jobs 4`, and deps' ideal wall on 1 and 2 CPUs; measured:
     the untraced `make -j2`, `make -j4` (whatif) and `make -j1`, `make
     -j2` (deps)
  b  `make -j2 && make -j2 -C tests test-lz4-basic test-lz4-sparse
     test-lz4-frame-concatenation` recorded; predicted: `whatif --drop`
     of the test step; measured: `make -j2`
  c  `make -j2` recorded; the static library's compile made slower (its
     recipe compiles twice: lib/Makefile edited); the factor obtained
     is that job's time as deps schedules it (its own time less its
     wait for a CPU, never below its CPU time) in the recordings of the
     changed build over the one in the unchanged; predicted: `whatif --faster PATTERN=1/f`
     (and with the nominal 0.5); measured: the changed `make -j2`
  d  `make -j2` recorded with `.NOTPARALLEL:` planted in lib/Makefile
     (the static and the shared library, which share no file, built one
     after the other); predicted: `whatif --serial-free`; measured: the
     `make -j2` of the tree without it

Each round records every build a check predicts from (`record -q
--files`, each in a tree of its own, kept until the predictions are
read: deps and whatif read the makefiles where the build ran) and runs
every real build once, untraced, in a fresh copy of its tree at a fixed
path (the copy not timed); the order of all these rotates from round to
round, so that a machine shared with other work moves them alike.  A
measured figure is the median wall of the rounds' real builds; a
predicted one the median of the predictions from the rounds'
recordings.  --rounds 1 is a quick look (about 2 minutes quiet, 5 per
round at a load of 5).  --again predicts anew from the recordings and
walls of an earlier run (its --work and --json), for a newer proftrace.
The load average is printed: timed figures, which move with it, and
whatif predicts for the machine without the load its recording saw.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "test", "tools"))
import debsource  # noqa: E402

TESTS = ("test-lz4-basic", "test-lz4-sparse", "test-lz4-frame-concatenation")
CHECK = "make -j2 && make -j2 -C tests " + " ".join(TESTS)
# What whatif is told: the jobs of the test step, and the static
# library's compile (its label: the cc line, or the target).
DROP = "make -j2 -C tests*"
SLOW = "liblz4.a"

# The builds: name -> (tree variant, shell command).
BUILDS = {
    "j1": ("orig", "make -j1"),
    "j2": ("orig", "make -j2"),
    "j4": ("orig", "make -j4"),
    "check": ("orig", CHECK),
    "slow": ("slow", "make -j2"),
    "barrier": ("barrier", "make -j2"),
}
# What each check needs recorded and really run.
RECORDED = {"a": ["j1"], "b": ["check"], "c": ["j2", "slow"],
            "d": ["barrier"]}
TIMED = {"a": ["j1", "j2", "j4"], "b": ["j2"], "c": ["slow"], "d": ["j2"]}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def env():
    """This environment without a traced or enclosing make's variables."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("LD_PRELOAD", "MAKEFLAGS", "MFLAGS", "MAKELEVEL",
                      "MAKEOVERRIDES") and not k.startswith("PROFTRACE_")}
    e["LC_ALL"] = "C"
    return e


def edit(path, old, new):
    text = open(path).read()
    if old not in text:
        raise SystemExit(f"{path}: the line to change is not there: {old!r}")
    open(path, "w").write(text.replace(old, new, 1))


def variant(top, kind, dst):
    """A fresh copy of the source at dst, changed as kind says."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(top, dst, symlinks=True)
    mk = os.path.join(dst, "lib", "Makefile")
    if kind == "slow":
        # The static library's one cc over the five sources, twice.
        edit(mk, "\t$(COMPILE.c) $^\n", "\t$(COMPILE.c) $^\n\t$(COMPILE.c) $^\n")
    elif kind == "barrier":
        edit(mk, "\n.PHONY: default\n", "\n.NOTPARALLEL:\n\n.PHONY: default\n")
    return dst


def run(cmd, cwd):
    t = time.monotonic()
    r = subprocess.run(["sh", "-c", cmd], cwd=cwd, env=env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode:
        raise SystemExit(f"{cmd} in {cwd} failed:\n{r.stderr[-2000:]}")
    return time.monotonic() - t


def pjson(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None, (r.stderr or r.stdout).strip().splitlines()[-1:] or [""]
    return json.loads(r.stdout), None


def has_whatif(pt):
    r = subprocess.run([pt, "whatif", "--help"], capture_output=True, text=True)
    return r.returncode == 0


def load_free(j):
    """A job's time as deps schedules it: its own time less its wait for
    a CPU, never below its CPU time."""
    return max(j["own"] - (j["wait"] or 0), j["cpu"])


def slowed_time(pt, cap):
    """The load-free time of the static library's compile(s) in cap."""
    d, _ = pjson([pt, "deps", "-f", "json", cap])
    t = [load_free(j) for j in (d or {"jobs": []})["jobs"]
         if j["label"] == "lib/" + SLOW]
    return sum(t) if t else None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds, each one recording and one untraced "
                    "build of each kind (default 5)")
    ap.add_argument("--cache", default=os.path.join(
        os.path.expanduser("~"), ".cache", "proftrace-bench"),
        help="where the source is fetched and unpacked once")
    ap.add_argument("--work", help="the trees and recordings (default: a "
                    "temporary directory, removed at the end)")
    ap.add_argument("--only", default="a,b,c,d")
    ap.add_argument("--json", help="write every figure there too")
    ap.add_argument("--again", metavar="JSON",
                    help="no building: the recordings and walls of the "
                    "run that wrote JSON (with --work, kept), predicted "
                    "anew (by a newer proftrace)")
    a = ap.parse_args()
    pt = os.path.join(os.path.abspath(a.build_dir), "collector", "proftrace")
    checks = a.only.split(",")
    top = debsource.fetch("liblz4-1", "lz4", a.cache, log)
    work = a.work or tempfile.mkdtemp(prefix="pt-whatif-")
    os.makedirs(work, exist_ok=True)
    started = time.time()
    load0 = os.getloadavg()
    log(f"load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    out = {"date": datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC"), "source": top, "rounds": a.rounds,
        "load_start": load0}
    try:
        # Each round: every recording (in a tree of its own, kept for
        # the predictions) and every untraced build, the order rotating.
        recs = list(dict.fromkeys(n for c in checks for n in RECORDED[c]))
        timed = list(dict.fromkeys(n for c in checks for n in TIMED[c]))
        items = [("rec", n) for n in recs] + [("run", n) for n in timed]
        caps = {n: [] for n in recs}
        walls = {n: [] for n in timed}
        loads = []
        if a.again:
            prev = json.load(open(a.again))
            caps, walls, loads = prev["caps"], prev["walls"], prev["loads"]
            out.update({k: prev[k] for k in ("date", "rounds", "load_start")})
            load0, a.rounds = prev["load_start"], prev["rounds"]
        for r in range(0 if a.again else a.rounds):
            k = r % len(items)
            for what, n in items[k:] + items[:k]:
                kind, cmd = BUILDS[n]
                if what == "run":
                    tree = variant(top, kind, os.path.join(work, "run-" + kind))
                    walls[n].append(run(cmd, tree))
                    continue
                tree = variant(top, kind,
                               os.path.join(work, f"rec-{n}-{r}"))
                cap = os.path.join(work, f"{n}-{r}.ptcap")
                run(f"{pt} record -q --files -o {cap} -- sh -c '{cmd}'", tree)
                caps[n].append(cap)
            loads.append(os.getloadavg()[0])
            log(f"round {r + 1}/{a.rounds}: " + ", ".join(
                f"{n} {walls[n][-1]:.2f}" for n in timed) +
                f" (load {loads[-1]:.2f})")
        meas = {n: statistics.median(w) for n, w in walls.items()}
        out.update(walls=walls, caps=caps, loads=loads)
        wi = has_whatif(pt)
        rows = []

        def whatif(name, *change):
            """whatif's predicted wall from each round's recording of
            name: their median, and the JSON of the first."""
            if not wi:
                return None, "no whatif in this proftrace", []
            ps, first = [], None
            for cap in caps[name]:
                d, err = pjson([pt, "whatif", "--format", "json", cap, *change])
                if d is None:
                    return None, " ".join(err), []
                ps.append(d["predicted"])
                first = first or d
            return med(ps), first, ps

        if "a" in checks:
            ideal = {1: [], 2: []}
            for cap in caps["j1"]:
                d, _ = pjson([pt, "deps", "-f", "json", cap])
                for i in d["ideal"]:
                    if i["cpus"] in ideal:
                        ideal[i["cpus"]].append(i["wall"])
            for n in (1, 2):
                rows.append(("a", f"deps: ideal on {n} CPU{'s' * (n > 1)}, "
                             "from `make -j1` recorded", f"j{n}",
                             med(ideal[n]), None, ideal[n]))
            for j in (2, 4):
                p, d, ps = whatif("j1", "--jobs", str(j))
                rows.append(("a", f"whatif --jobs {j}, from `make -j1` "
                             "recorded", f"j{j}", p, d, ps))
        if "b" in checks:
            p, d, ps = whatif("check", "--drop", DROP)
            rows.append(("b", f"whatif --drop '{DROP}', from `{CHECK}` "
                         "recorded", "j2", p, d, ps))
        if "c" in checks:
            before = [slowed_time(pt, c) for c in caps["j2"]]
            after = [slowed_time(pt, c) for c in caps["slow"]]
            f = med(after) / med(before) if med(before) and med(after) \
                else None
            out["slowed"] = {"before": before, "after": after, "factor": f}
            log(f"the slowed compile, load-free: {med(before)} s -> "
                f"{med(after)} s" + (f" (x{f:.2f})" if f else ""))
            for fac, why in ((0.5, "nominal"),) + (((1 / f, "obtained"),)
                                                    if f else ()):
                p, d, ps = whatif("j2", "--faster", f"{SLOW}={fac:.3f}")
                rows.append(("c", f"whatif --faster '{SLOW}={fac:.3f}' "
                             f"({why}), from `make -j2` recorded", "slow",
                             p, d, ps))
        if "d" in checks:
            p, d, ps = whatif("barrier", "--serial-free")
            rows.append(("d", "whatif --serial-free, from `make -j2` "
                         "recorded with .NOTPARALLEL in lib/Makefile", "j2",
                         p, d, ps))
        load1 = os.getloadavg()
        out["load_end"] = load1
        out["rows"] = []
        real = {"j1": "make -j1", "j2": "make -j2", "j4": "make -j4",
                "slow": "make -j2, the static library compiled twice"}
        print(f"{out['date']}, {a.rounds} rounds, load average (1 min) "
              f"{load0[0]:.2f} at the start, {min(loads):.2f}–{max(loads):.2f}"
              f" after each round, {(time.time() - started) / 60:.1f} min"
              + (" (predicted again)" if a.again else "") + "\n")
        print("| check | predicted by | real build | predicted s (min–max) | "
              "measured s, median (min–max) | error, median | error, "
              "fastest |")
        print("|---|---|---|---|---|---|---|")
        for c, what, key, p, d, ps in rows:
            m, w = meas[key], walls[key]
            err = 100 * (p - m) / m if p is not None else None
            # whatif predicts the machine without the recording's load:
            # other work only adds to a build's wall, so the fastest
            # round is the nearest to that.
            best = min(w)
            errb = 100 * (p - best) / best if p is not None else None
            pred = (f"{p:.2f} ({min(ps):.2f}–{max(ps):.2f})" if p is not None
                    else d)
            print(f"| {c} | {what} | {real[key]} | {pred} | {m:.2f} "
                  f"({min(w):.2f}–{max(w):.2f}) | "
                  + (f"{err:+.1f} %" if err is not None else "—") + " | "
                  + (f"{errb:+.1f} % ({best:.2f})" if errb is not None
                     else "—") + " |")
            out["rows"].append({"check": c, "what": what, "real": real[key],
                                "predicted": p, "predictions": ps,
                                "measured": m, "error_pct": err,
                                "least_loaded": best,
                                "error_least_loaded_pct": errb,
                                "whatif": d if isinstance(d, dict) else None})
        if a.json:
            with open(a.json, "w") as fh:
                json.dump(out, fh, indent=1)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
