#!/usr/bin/env python3
"""The hook table, the library's exports and its PT_EXPORT definitions agree.

    check-hooks.py LIBPROFTRACE.so PRELOAD_SOURCE_DIR
    check-hooks.py --files LIBPTFILES.so FILES_HOOKS_DEF

preload/hooks.def lists every hooked function once; the version script is
made from it.  A hook defined with PT_EXPORT but missing from the table is
silently not exported (the version script hides it), and a table entry
without a definition exports nothing: both are caught here, as is an
export that comes from neither.  The file-access library has no version
script: there, preload/files/files-hooks.def and its exports agree.
"""

import glob
import os
import re
import subprocess
import sys


def table(path, pattern=r"^\s*PT_HOOK(?:_AS)?\(\s*(\w+)"):
    text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    return set(re.findall(pattern, text, flags=re.M))


def definitions(srcdir):
    names = set()
    for f in glob.glob(os.path.join(srcdir, "*.c")):
        text = re.sub(r"/\*.*?\*/", " ", open(f).read(), flags=re.S)
        # a definition, not the prototype that may precede it
        for m in re.finditer(r"PT_EXPORT\s+[^;{]*?\b(\w+)\s*\([^;{]*\)\s*\{",
                             text):
            names.add(m.group(1))
        # a C function exported under another name, or one in assembly
        for cname, label in re.findall(
                r'PT_EXPORT[^;{]*?\b(\w+)\s*\([^;{]*\)\s*__asm__\("(\w+)"\)',
                text):
            names.discard(cname)
            names.add(label)
        names.update(re.findall(r'"\.globl (\w+)\\n"', text))
    return names


def exports(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines()
            if line.split() and line.split()[-2] in "TtWw"}


def main():
    lib, srcdir = sys.argv[-2], sys.argv[-1]
    if sys.argv[1] == "--files":
        sets = {"files-hooks.def": table(srcdir, r"PT_FILES_\w+\((\w+)\)"),
                "exported by the library": exports(lib)}
    else:
        sets = {"hooks.def": table(os.path.join(srcdir, "hooks.def")),
                "PT_EXPORT definitions": definitions(srcdir),
                "exported by the library": exports(lib)}
    bad = 0
    names = sorted(set().union(*sets.values()))
    for name in names:
        missing = [k for k, v in sets.items() if name not in v]
        if missing:
            bad += 1
            print(f"{name}: not in {', '.join(missing)}")
    print(f"{len(names)} hooks, {bad} disagreeing")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main())
