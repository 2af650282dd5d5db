#!/usr/bin/env python3
"""Every execution of a dynamic program has its CPU time (doc/format.md,
"Where each CPU figure comes from").

    exec-cpu.py --proftrace PROFTRACE images
    exec-cpu.py --proftrace PROFTRACE build SAMPLE_DIR

images: programs whose CPU is spent where no EXIT reports it, each run
untraced (getrusage(RUSAGE_CHILDREN) around it: the ground truth) and
under `proftrace record`, read back from the CSV:

  - a fork child that burns 0.5 s of CPU and then execs /bin/true: the
    fork phase is no execution of its own; its CPU is in the row of the
    execution that forked (the parent's), as the tree folds it there;
  - `sh -c` and `bash -c` that burn CPU and exec their last command:
    the shell's row has its CPU, and the whole is about the untraced
    run's, not counted twice;
  - the same with a static program exec'd last (busybox), which loads no
    library: the shell's row still has its CPU, and the static program's
    (from the parent's wait) is not the shell's again.

build: the sample project configured and built with make -j2 and
SHELL=/bin/bash, whose recipe shells (`bash -c 'cc ...'`) exec their
command: no row of a dynamic program lacks user_cpu or sys_cpu, and the
report does not say that some lack CPU data.
"""

import argparse
import csv
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "reliability"))
from ptrel import untraced_env  # noqa: E402

BURN = ("import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    t = time.process_time()\n"
        "    while time.process_time() - t < 0.5:\n"
        "        pass\n"
        "    os.execv('/bin/true', ['true'])\n"
        "os.waitpid(pid, 0)\n")
LOOP = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; "


def child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def untraced_cpu(cmd):
    before = child_cpu()
    subprocess.run(cmd, env=untraced_env(), check=True)
    return child_cpu() - before


def record(pt, cmd, d, name, cwd=None):
    cap = os.path.join(d, name + ".ptcap")
    out = os.path.join(d, name + ".csv")
    subprocess.run([pt, "record", "-q", "-o", cap, "--csv", out, "--"] + cmd,
                   env=untraced_env(), check=True, cwd=cwd,
                   stdout=subprocess.DEVNULL)
    with open(out, newline="") as f:
        return cap, list(csv.DictReader(f))


def cpu(row):
    if row["user_cpu"] == "" or row["sys_cpu"] == "":
        return None
    return float(row["user_cpu"]) + float(row["sys_cpu"])


def show(rows):
    return "\n".join("  %s %s pid %s: user %r sys %r" %
                     (r["type"], r["command"][:60], r["pid"], r["user_cpu"],
                      r["sys_cpu"]) for r in rows)


def check_total(name, rows, untraced, fails):
    total = sum(cpu(r) or 0 for r in rows)
    print("%s: untraced %.3f s of CPU, the rows add up to %.3f s"
          % (name, untraced, total))
    if not untraced / 2 <= total <= untraced * 2 + 0.05:
        fails.append("%s: the rows' CPU %.3f s is not within a factor of "
                     "two of the untraced run's %.3f s\n%s"
                     % (name, total, untraced, show(rows)))


def images(pt):
    fails = []
    with tempfile.TemporaryDirectory(prefix="pt-exec-cpu-") as d:
        # The fork phase, in the parent's row.
        cmd = [sys.executable, "-c", BURN]
        untraced = untraced_cpu(cmd)
        _, rows = record(pt, cmd, d, "fork")
        check_total("fork child", rows, untraced, fails)
        par = [r for r in rows if r["command"].startswith(sys.executable)
               or "python" in r["command"].split(" ")[0]]
        true = [r for r in rows if r["command"] == "true"]
        if len(par) != 1 or len(true) != 1:
            fails.append("fork child: want one parent and one true row\n" +
                         show(rows))
        elif (cpu(par[0]) or 0) < 0.4 or (cpu(true[0]) or 0) > 0.1:
            fails.append("fork child: the 0.5 s before the exec is not in "
                         "the parent's row\n" + show(rows))
        # Shells that exec their last command.
        cases = [("sh -c", ["sh", "-c", LOOP + "exec /bin/true"], "true"),
                 ("bash -c", ["bash", "-c", LOOP + "exec /bin/true"], "true")]
        bb = shutil.which("busybox")
        if bb:
            cases.append(("sh -c, static last", ["sh", "-c", LOOP +
                                                 "exec " + bb + " true"],
                          "busybox"))
        else:
            print("exec-cpu: no busybox, the static case is left out")
        for name, cmd, last in cases:
            untraced = untraced_cpu(cmd)
            _, rows = record(pt, cmd, d, name.replace(" ", "_")
                             .replace(",", ""))
            check_total(name, rows, untraced, fails)
            shell = [r for r in rows if r["command"].startswith(cmd[0] + " -c")]
            if len(shell) != 1 or cpu(shell[0]) is None:
                fails.append("%s: the shell that execs has no CPU\n%s"
                             % (name, show(rows)))
            elif cpu(shell[0]) < untraced / 2:
                fails.append("%s: the shell's row has %.3f s of the "
                             "untraced run's %.3f s\n%s"
                             % (name, cpu(shell[0]), untraced, show(rows)))
            if not any(os.path.basename(r["exe"]) == last or
                       r["command"].split(" ")[0].endswith(last)
                       for r in rows):
                fails.append("%s: no row of %s\n%s" % (name, last, show(rows)))
    return fails


def dynamic(path):
    """Does the ELF file at path ask for an interpreter (load ld.so)?"""
    try:
        out = subprocess.run(["readelf", "-lW", path], capture_output=True,
                             text=True).stdout
    except OSError:
        return None
    return "Requesting program interpreter" in out


def build(pt, sample):
    fails = []
    with tempfile.TemporaryDirectory(prefix="pt-build-cpu-") as d:
        src = os.path.join(d, "sample")
        shutil.copytree(sample, src)
        cmd = ["sh", "-c", "CONFIG_SHELL=/bin/bash bash ./configure && "
               "make -j2 SHELL=/bin/bash"]
        cap, rows = record(pt, cmd, d, "build", cwd=src)
        rep = subprocess.run([pt, "report", cap], env=untraced_env(),
                             capture_output=True, text=True, check=True)
        shells = [r for r in rows if r["command"].startswith("/bin/bash -c")]
        lacking = [r for r in rows if cpu(r) is None and r["exe"] and
                   dynamic(r["exe"])]
        print("build: %d rows, %d recipe shells, %d dynamic rows without CPU"
              % (len(rows), len(shells), len(lacking)))
        if not shells:
            fails.append("build: no `/bin/bash -c` recipe shell was run")
        if lacking:
            fails.append("build: %d executions of dynamic programs have no "
                         "CPU time\n%s" % (len(lacking), show(lacking[:10])))
        m = re.search(r"without CPU data", rep.stdout)
        if m:
            fails.append("build: the report says: " +
                         rep.stdout[rep.stdout.rfind("\n", 0, m.start()) + 1:
                                    rep.stdout.find("\n", m.end())])
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--proftrace", required=True)
    ap.add_argument("what", choices=["images", "build"])
    ap.add_argument("sample", nargs="?")
    a = ap.parse_args()
    a.proftrace = os.path.abspath(a.proftrace)
    fails = images(a.proftrace) if a.what == "images" else \
        build(a.proftrace, a.sample)
    if fails:
        sys.exit("FAIL: " + "\n\nFAIL: ".join(fails))
    print("exec-cpu %s: ok" % a.what)


if __name__ == "__main__":
    main()
