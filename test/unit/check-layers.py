#!/usr/bin/env python3
"""The preload library's files call one another in the direction that
doc/design.md draws, and in no other; the collector's folders include
one another in the order collector/meson.build gives them, and no two of
its modules include each other, however indirectly.

    check-layers.py OBJECT_DIR DESIGN_MD
    check-layers.py --collector COLLECTOR_DIR

doc/design.md ("Its files, and the direction of their calls") has one
line of the form

    seccomp → hooks, phdr → init → ... → state

Each group may call any group to its right, never one to its left or its
own members.  The calls are read from the objects (a symbol one object
leaves undefined and another defines), so a new call that goes up, or a
file the line does not name, fails here, and the drawing cannot drift
from the code.
"""

import glob
import os
import re
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRCV":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
    return defined, undefined


def chain(design):
    for line in open(design):
        if "→" in line and line.rstrip().endswith("→ state"):
            groups = [g.split(";")[0] for g in line.split("→")]
            return [[n.strip() for n in g.split(",") if n.strip()]
                    for g in groups]
    sys.exit("check-layers: no '... → state' line in " + design)


def includes(path):
    for line in open(path, encoding="utf-8"):
        m = re.match(r'\s*#\s*include\s+"([a-z0-9_-]+)/([^"]+)\.h"', line)
        if m:
            yield m.group(1), m.group(1) + "/" + m.group(2)


def collector(top):
    """The layers are the folders of the comment atop meson.build, lowest
    first: a file may include its own folder's headers and those of the
    folders before it.  A module is a .c file and its .h; a header
    without a .c (a folder's private one) belongs to whoever includes it."""
    order = []
    for line in open(os.path.join(top, "meson.build")):
        m = re.match(r"#\s+([a-z]+)/\s", line)
        if m:
            order.append(m.group(1))
    if not order:
        sys.exit("check-layers: no layers atop " + top + "/meson.build")
    rank = {name: i for i, name in enumerate(order)}
    bad, edges = [], {}
    files = sorted(glob.glob(os.path.join(top, "*", "*.[ch]")))
    mods = {os.path.relpath(f, top)[:-2] for f in files if f.endswith(".c")}
    for f in files:
        rel = os.path.relpath(f, top)
        layer, mod = rel.split("/")[0], rel[:-2]
        if layer not in rank:
            bad.append("%s: its folder is not in meson.build's layers" % rel)
            continue
        for folder, hdr in includes(f):
            if folder not in rank:
                continue
            if rank[folder] > rank[layer]:
                bad.append("%s includes %s.h, a layer above (%s after %s)"
                           % (rel, hdr, folder, layer))
            if hdr in mods and hdr != mod:
                edges.setdefault(mod, set()).add(hdr)
    # A circle of modules: a path from a module back to itself.
    for start in sorted(edges):
        seen, todo = set(), [(start, [start])]
        while todo:
            node, path = todo.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start and start == min(path):
                    bad.append("a circle of includes: " +
                               " -> ".join(path + [start]))
                elif nxt not in seen and nxt != start:
                    seen.add(nxt)
                    todo.append((nxt, path + [nxt]))
    for line in bad:
        print("FAIL:", line)
    print("%d files, %d layers, %d problems" % (len(files), len(order),
                                                len(bad)))
    return 1 if bad else 0


def main():
    if sys.argv[1] == "--collector":
        return collector(sys.argv[2])
    objdir, design = sys.argv[1], sys.argv[2]
    objs = {os.path.basename(o).split(".")[0]: o
            for o in glob.glob(os.path.join(objdir, "*.o"))}
    if not objs:
        sys.exit("check-layers: no objects in " + objdir)
    groups = chain(design)
    rank = {}
    for i, g in enumerate(groups):
        for name in g:
            rank[name] = i
    bad = []
    for name in sorted(set(objs) - set(rank)):
        bad.append("%s.c is not in doc/design.md's line of calls" % name)
    for name in sorted(set(rank) - set(objs)):
        bad.append("doc/design.md names %s, which is not a file" % name)
    syms = {n: symbols(o) for n, o in objs.items()}
    for a in sorted(objs):
        for b in sorted(objs):
            if a == b or a not in rank or b not in rank:
                continue
            used = sorted(syms[a][1] & syms[b][0])
            if used and rank[b] <= rank[a]:
                bad.append("%s.c calls %s.c (%s), against the direction"
                           % (a, b, ", ".join(used[:3])))
    for line in bad:
        print("FAIL:", line)
    print("%d files, %d groups, %d problems" % (len(objs), len(groups),
                                                len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
