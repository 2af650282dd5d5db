#!/usr/bin/env python3
"""proftrace info against ground truth: a command recorded in a git
repository (a plain one, a linked worktree, refs packed) with fake CI ids;
every fact `info` shows (text and --format json) compared with what
Python reads from the machine and from git itself; an older capture
without the new keys still reads, its end taken from its last record.
Every text line is for a person: label and value, the values in one
column, no internal key (clock readings, the collector's bookkeeping)."""
import argparse
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
from mkcapture import Capture  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
args = ap.parse_args()
args.proftrace = os.path.abspath(args.proftrace)
failures = []


def check(what, got, want):
    if got != want:
        failures.append(what)
        print(f"FAIL: {what}: got {got!r}, want {want!r}")


def run(*argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                          text=True, **kw).stdout


def git(repo, *argv):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    return run("git", "-C", repo, *argv, env=env).strip()


def mem_total_kb():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return line.split()[1]


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def record_in(cwd, out):
    env = dict(os.environ, CI_PIPELINE_ID="7001", CI_JOB_ID="7002",
               GITHUB_RUN_ID="7003")
    before = time.time()
    subprocess.run([args.proftrace, "record", "-q", "-o", out, "--",
                    "sh", "-c", "sleep 0.2; true"], check=True, cwd=cwd,
                   env=env)
    return before, time.time()


def for_a_person(what, text, meta):
    """Each line "LABEL  VALUE", every value in the same column; no label
    is a key without a name of its own (only the CI's variables show
    under theirs), no value a raw clock reading."""
    cols = set()
    for line in text.splitlines():
        m = re.match(r"^(\S+(?: \S+)*)( {2,})(\S.*)$", line)
        if not m:
            check(f"{what}: line {line!r} is LABEL  VALUE", False, True)
            continue
        cols.add(len(m.group(1)) + len(m.group(2)))
        label = m.group(1)
        # (host, kernel and command are named by their keys.)
        if label in meta and label not in ("host", "kernel", "command"):
            check(f"{what}: {label!r} is a variable's name",
                  re.fullmatch(r"[A-Z0-9_]+", label) is not None, True)
    check(f"{what}: values in one column", len(cols), 1)
    for k, v in meta.items():
        if k.endswith("_ns"):
            check(f"{what}: raw {k} not shown", v in text, False)


def info(path):
    text = run(args.proftrace, "info", path)
    j = json.loads(run(args.proftrace, "info", "--format", "json", path))
    check("--json is --format json",
          json.loads(run(args.proftrace, "info", "--json", path)), j)
    for_a_person(path, text, j["meta"])
    return text, j


with tempfile.TemporaryDirectory() as tmp:
    repo = os.path.join(tmp, "repo")
    os.mkdir(repo)
    git(repo, "init", "-q", "-b", "main")
    open(os.path.join(repo, "f"), "w").write("x\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "one")
    sub = os.path.join(repo, "sub")
    os.mkdir(sub)

    cap = os.path.join(tmp, "run.ptcap")
    before, after = record_in(sub, cap)
    text, j = info(cap)
    print(text)
    m = j["meta"]
    check("host", m.get("host"), socket.gethostname())
    check("kernel", m.get("kernel"), os.uname().release)
    check("cpus", m.get("cpus"), str(os.cpu_count()))
    check("cpu_model", m.get("cpu_model"), cpu_model())
    check("mem_total_kb", m.get("mem_total_kb"), mem_total_kb())
    check("glibc_version", m.get("glibc_version"),
          os.confstr("CS_GNU_LIBC_VERSION").split()[1])
    check("proftrace_version", m.get("proftrace_version"),
          run(args.proftrace, "--version").split()[1])
    check("command", m.get("command"), "sh -c 'sleep 0.2; true'")
    check("cwd", m.get("cwd"), os.path.realpath(sub))
    check("git_commit", m.get("git_commit"), git(repo, "rev-parse", "HEAD"))
    for k, v in (("CI_PIPELINE_ID", "7001"), ("CI_JOB_ID", "7002"),
                 ("GITHUB_RUN_ID", "7003")):
        check(k, m.get(k), v)
        check(k + " in the text",
              any(re.fullmatch(rf"{k}  +{v}", line)
                  for line in text.splitlines()), True)
    start = int(m["start_realtime_ns"]) / 1e9
    end = int(m["end_realtime_ns"]) / 1e9
    check("start within the run", before <= start <= after, True)
    check("end within the run", start + 0.2 <= end <= after, True)
    check("wall time", abs(j["wall_time_s"] - (end - start)) < 1e-5, True)
    check("end from", j["end_from"], "meta")
    for label in ("host", "kernel", "CPUs", "CPU model", "memory (KiB)",
                  "glibc", "proftrace", "command", "directory",
                  "git commit", "start", "end", "wall time"):
        check(f"text line {label}",
              any(line.startswith(label + " ") for line in text.splitlines()),
              True)

    # A linked worktree on another branch, with every ref packed.
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    wt = os.path.join(tmp, "wt")
    git(repo, "worktree", "add", "-q", "-b", "side", wt, "HEAD~1")
    git(repo, "pack-refs", "--all")
    cap2 = os.path.join(tmp, "wt.ptcap")
    record_in(wt, cap2)
    check("git_commit in a worktree, packed refs",
          info(cap2)[1]["meta"].get("git_commit"), git(wt, "rev-parse", "HEAD"))
    # Detached HEAD.
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    record_in(repo, cap2 + "2")
    check("git_commit detached", info(cap2 + "2")[1]["meta"].get("git_commit"),
          git(repo, "rev-parse", "HEAD"))
    # No repository.
    plain = os.path.join(tmp, "plain")
    os.mkdir(plain)
    if subprocess.run(["git", "-C", plain, "rev-parse"],
                      stderr=subprocess.DEVNULL).returncode != 0:
        record_in(plain, cap2 + "3")
        check("no git_commit outside a repository",
              "git_commit" in info(cap2 + "3")[1]["meta"], False)

    # A capture written before these keys: no end META.
    old = Capture(host="alpha", meta={"CI_JOB_ID": "42"})
    old.process(100, 1, ["make"], start=0, end=10)
    old.process(101, 100, ["cc"], start=1, end=4)
    oldp = os.path.join(tmp, "old.ptcap")
    old.write(oldp)
    text, j = info(oldp)
    print(text)
    check("old: host", j["meta"].get("host"), "alpha")
    check("old: end from", j["end_from"], "last record")
    check("old: wall time", round(j["wall_time_s"]), 10)
    check("old: no git line", "git commit" in text, False)

    # The end META of a capture a STOP ended, and a key of a newer
    # version: in the JSON as recorded, not in the text.
    new = Capture(host="beta", meta={
        "end_monotonic_ns": str(1_000_000_000_000 + 10**10),
        "end_realtime_ns": str(1_700_000_000_000_000_000 + 10**10),
        "stopped_by": "4242", "queue_high_water": "17",
        "GITHUB_RUN_ATTEMPT": "3"})
    new.process(100, 1, ["make"], start=0, end=10)
    newp = os.path.join(tmp, "new.ptcap")
    new.write(newp)
    text, j = info(newp)
    print(text)
    for k in ("end_monotonic_ns", "end_realtime_ns", "stopped_by",
              "queue_high_water", "start_monotonic_ns"):
        check(f"new: {k} in the JSON", k in j["meta"], True)
        check(f"new: {k} not in the text", k in text, False)
    check("new: end from", j["end_from"], "meta")
    check("new: wall time", j["wall_time_s"], 10.0)
    check("new: stopped by", "proftrace stop (pid 4242)" in text, True)
    check("new: GITHUB_RUN_ATTEMPT", any(
        re.fullmatch(r"GITHUB_RUN_ATTEMPT  +3", line)
        for line in text.splitlines()), True)

sys.exit(1 if failures else 0)
