#!/usr/bin/env python3
"""Every entry point that names a file, under record --files, against
strace -f of the same program untraced (doc/design.md, "File accesses").

fileentry calls each hooked function once, on a path of its own under
w/ (the open, at, 64 and fortified __open_2 variants, creat, fopen,
freopen, rename*, unlink*, remove of a file and of a directory, rmdir,
link*, symlink*, mkdir*, truncate, the stat family with glibc's older
__xstat entry points, access, euidaccess, the mkstemp family) and execs
w/prog.  What strace shows the kernel was asked, each successful call's
path under w/ with the kind of access it is (read, write, delete, new,
mkdir, probe, exec), is what convert -f files lists, no more, no less.
The time listed is that of the first access of its kind: w/IN.open,
read first and again last, comes before every other access.
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
ap.add_argument("--fileentry", required=True)
args = ap.parse_args()
PT = os.path.abspath(args.proftrace)
PROG = os.path.abspath(args.fileentry)

INPUTS = """open openat __open_2 __open64_2 __openat_2 __openat64_2 fopen
freopen64 rename renameat renameat2 unlink unlinkat remove link linkat
truncate truncate64 stat stat64 lstat lstat64 fstatat fstatat64 statx
access faccessat euidaccess eaccess __xstat __xstat64 __lxstat __lxstat64
__fxstatat __fxstatat64""".split()


def untraced_env():
    return {k: v for k, v in os.environ.items()
            if k != "LD_PRELOAD" and not k.startswith("PROFTRACE_")}


def fresh(top):
    w = os.path.join(top, "w")
    shutil.rmtree(w, ignore_errors=True)
    os.mkdir(w)
    for n in INPUTS:
        with open(os.path.join(w, "IN." + n), "w") as f:
            f.write("x\n")
    os.mkdir(os.path.join(w, "IN.removedir"))
    os.mkdir(os.path.join(w, "IN.rmdir"))
    shutil.copy("/bin/true", os.path.join(w, "prog"))
    return w


def same_name(p):
    """mkstemp's random six letters, as XXXXXX."""
    return re.sub(r"(\.mk\w*temp\w*\.)[A-Za-z0-9]{6}", r"\1XXXXXX",
                  re.sub(r"(/mk\w*temp\w*\.)[A-Za-z0-9]{6}", r"\1XXXXXX", p))


CALL = re.compile(r"^(\d+) +(\w+)\((.*)\) += (-?\d+)")
STR = re.compile(r'(-?\d+<[^>]*>|AT_FDCWD|"(?:[^"\\]|\\.)*")')


def truth(top, w):
    """(kind, path) of each successful call on a path under w, from
    strace -f -y of the untraced program."""
    out = os.path.join(top, "strace.txt")
    subprocess.run(["strace", "-f", "-qq", "-y", "-s", "4096", "-o", out,
                    "-e", "trace=%file", "-e", "status=successful", PROG],
                   cwd=top, env=untraced_env(), check=True)
    seen = set()
    for line in open(out):
        m = CALL.match(line)
        if not m:
            continue
        name, argstr = m.group(2), m.group(3)
        toks = STR.findall(argstr)
        paths, base = [], top
        for t in toks:      # a dirfd then its path, or a path alone
            if t.startswith('"'):
                p = t[1:-1]
                paths.append(os.path.normpath(os.path.join(base, p)))
                base = top
            elif t == "AT_FDCWD":
                base = top
            else:
                base = t[t.index("<") + 1:-1]
        flags = argstr

        def add(kind, p):
            if p.startswith(w + "/"):
                seen.add((kind, same_name(p)))
        if name in ("open", "openat", "creat"):
            wr = name == "creat" or re.search(r"O_WRONLY|O_RDWR|O_TRUNC",
                                              flags)
            add("probe" if "O_PATH" in flags else
                "write" if wr else "read", paths[0])
        elif name == "execve":
            add("exec", paths[0])
        elif name in ("stat", "lstat", "newfstatat", "statx", "access",
                      "faccessat", "faccessat2"):
            if "S_IFDIR" not in argstr and paths:
                add("probe", paths[0])
        elif name in ("unlink", "unlinkat", "rmdir"):
            add("delete", paths[0])
        elif name in ("rename", "renameat", "renameat2"):
            add("delete", paths[0])
            add("new", paths[1])
        elif name in ("link", "linkat"):
            add("read", paths[0])
            add("new", paths[1])
        elif name in ("symlink", "symlinkat"):
            add("new", paths[-1])
        elif name in ("mkdir", "mkdirat"):
            add("mkdir", paths[0])
        elif name == "truncate":
            add("write", paths[0])
    return seen


def recorded(top, w):
    cap = os.path.join(top, "c.ptcap")
    subprocess.run([PT, "record", "-q", "--force", "--files", "-o", cap,
                    "--", PROG], cwd=top, env=untraced_env(), check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([PT, "convert", "-f", "files", cap], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    rows = [r for r in csv.DictReader(io.StringIO(out, newline=""))
            if r["path"].startswith(w + "/")]
    first = min(rows, key=lambda r: float(r["time"])) if rows else {}
    return {(r["access"], same_name(r["path"])) for r in rows}, first


top = tempfile.mkdtemp(prefix="pt-files-entry-")
try:
    want = truth(top, fresh(top))
    w = fresh(top)
    got, first = recorded(top, w)
finally:
    shutil.rmtree(top, ignore_errors=True)

for k, p in sorted(want - got):
    print(f"missing: {k} {p[len(w) + 1:]}")
for k, p in sorted(got - want):
    print(f"extra: {k} {p[len(w) + 1:]}")
print(f"{len(want)} accesses by strace, {len(got)} recorded")
first_ok = (first.get("access"), first.get("path")) == \
    ("read", os.path.join(w, "IN.open"))
print("first access listed: %s %s" % (first.get("access"), first.get("path")))
if want != got or len(want) < 40 or not first_ok:
    print("FAIL")
    sys.exit(1)
print("every entry point's access recorded as strace saw it")
