#!/usr/bin/env python3
"""Paths that are not there, directories looked at and directories made,
under record --files, against strace -f of the same programs untraced
(doc/format.md, FILES; doc/design.md, "File accesses").

filemissing calls each entry point on a path that does not exist
(ENOENT, and ENOTDIR under a file), looks for a header in three -I
directories, runs a program by execvp, execlp and posix_spawnp with a
PATH of three directories of which the last has it, execs a path that
is not there, stats directories and makes two.  Then a shell runs
`mkdir -p` of three levels, `install -d` and `mkdir -p` of directories
that exist.  What strace shows the kernel was asked under w/ (each
successful call's path with its kind, and each call that failed with
ENOENT or ENOTDIR as missing, or its first directory that is not there
either; a mkdir that failed with EEXIST as a directory looked at; other
failures nothing) is what convert -f files lists, no more,
no less.
"""
import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
ap.add_argument("--filemissing", required=True)
args = ap.parse_args()
PT = os.path.abspath(args.proftrace)
PROG = os.path.abspath(args.filemissing)
SHELL = ["sh", "-c", "mkdir -p w/p/q/r && install -d w/p/q && "
         "mkdir -p w/p/q/r"]


def untraced_env():
    return {k: v for k, v in os.environ.items()
            if k != "LD_PRELOAD" and not k.startswith("PROFTRACE_")}


def fresh(top):
    w = os.path.join(top, "w")
    shutil.rmtree(w, ignore_errors=True)
    os.mkdir(w)
    with open(os.path.join(w, "IN.file"), "w") as f:
        f.write("x\n")
    for n in ("stat", "lstat", "fstatat", "statx", "__xstat"):
        os.mkdir(os.path.join(w, "DIR." + n))
    for n in ("inc1", "inc2", "inc3", "bin1", "bin3"):
        os.mkdir(os.path.join(w, n))
    with open(os.path.join(w, "inc3", "h.h"), "w") as f:
        f.write("x\n")
    shutil.copy("/bin/true", os.path.join(w, "bin3", "prog"))
    return w


CALL = re.compile(r"^(\d+) +(\w+)\((.*)\) += (-?\d+)(.*)$")
STR = re.compile(r'(-?\d+<[^>]*>|AT_FDCWD(?:<[^>]*>)?|"(?:[^"\\]|\\.)*")')


def truth(top, w, cmd):
    """(kind, path) of each call on a path under w, from strace -f -y of
    the untraced command."""
    out = os.path.join(top, "strace.txt")
    subprocess.run(["strace", "-f", "-qq", "-y", "-s", "4096", "-o", out,
                    "-e", "trace=%file,fchdir", *cmd],
                   cwd=top, env=untraced_env(), check=True)
    seen = set()
    cwd = {}            # pid: its working directory, where strace said it
    for line in open(out):
        m = CALL.match(line)
        if not m:
            continue
        pid, name, argstr, rest = m.group(1), m.group(2), m.group(3), \
            m.group(5)
        ok = not m.group(4).startswith("-")
        absent = not ok and re.match(r" (ENOENT|ENOTDIR) ", rest)
        toks = STR.findall(argstr)
        paths, here = [], cwd.get(pid, top)
        base = here
        for t in toks:      # a dirfd then its path, or a path alone
            if t.startswith('"'):
                p = t[1:-1]
                paths.append(os.path.normpath(os.path.join(base, p))
                             if p else None)
                base = here
            elif t == "AT_FDCWD":
                base = here
            else:
                base = t[t.index("<") + 1:-1]
                if t.startswith("AT_FDCWD"):
                    cwd[pid] = here = base
        if name == "fchdir" and ok:
            cwd[pid] = base
            continue
        if name == "chdir" and ok:
            cwd[pid] = paths[0]
            continue
        if not paths or paths[0] is None:   # AT_EMPTY_PATH: an fstat
            continue

        def add(kind, p):
            if p.startswith(w + "/"):
                seen.add((kind, p))
        if absent and name in ("open", "openat", "creat", "execve", "stat",
                               "lstat", "newfstatat", "statx", "access",
                               "faccessat", "faccessat2"):
            # recorded as its first directory that is not there either
            p = paths[0]
            while not os.path.lexists(os.path.dirname(p)):
                p = os.path.dirname(p)
            add("missing", p)
        elif (name in ("mkdir", "mkdirat") and not ok and
              re.match(r" EEXIST ", rest)):
            # found there, as by a stat (`mkdir -p`'s parents)
            add("dirstat", paths[0])
        elif not ok:
            continue
        elif name in ("open", "openat", "creat"):
            wr = name == "creat" or re.search(r"O_WRONLY|O_RDWR|O_TRUNC",
                                              argstr)
            add("probe" if "O_PATH" in argstr else
                "write" if wr else "read", paths[0])
        elif name == "execve":
            add("exec", paths[0])
        elif name in ("stat", "lstat", "newfstatat", "statx"):
            add("dirstat" if "S_IFDIR" in argstr else "probe", paths[0])
        elif name == "getcwd":
            pass
        elif name in ("access", "faccessat", "faccessat2"):
            add("probe", paths[0])
        elif name in ("mkdir", "mkdirat"):
            add("mkdir", paths[0])
        else:
            print(f"note: {name} not compared: {line.strip()}")
    return seen


def recorded(top, w, cmd):
    cap = os.path.join(top, "c.ptcap")
    subprocess.run([PT, "record", "-q", "--force", "--files", "-o", cap,
                    "--", *cmd], cwd=top, env=untraced_env(), check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([PT, "convert", "-f", "files", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return {(r["access"], r["path"])
            for r in csv.DictReader(io.StringIO(out, newline=""))
            if r["path"].startswith(w + "/")}


bad = False
for label, cmd, least in (("filemissing", [PROG], 25),
                          ("mkdir -p, install -d", SHELL, 3)):
    top = tempfile.mkdtemp(prefix="pt-files-missing-")
    try:
        want = truth(top, fresh(top), cmd)
        w = fresh(top)
        got = recorded(top, w, cmd)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    for k, p in sorted(want - got):
        print(f"{label}: not recorded: {k} {p[len(w) + 1:]}")
    for k, p in sorted(got - want):
        print(f"{label}: recorded, not in strace: {k} {p[len(w) + 1:]}")
    kinds = sorted({k for k, _ in want})
    print(f"{label}: {len(want)} accesses by strace ({', '.join(kinds)}), "
          f"{len(got)} recorded")
    if want != got or len(want) < least:
        bad = True
if bad:
    print("FAIL")
    sys.exit(1)
print("every missing path, directory looked at and directory made "
      "recorded as strace saw it")
