#!/usr/bin/env python3
"""Every hook's stack stays within the bound it asks pt_stack_fits() for.

    check-stack.py BUILD_DIR PRELOAD_SRC_DIR

doc/design.md ("The stack the hooks use"): a hook asks from a small frame
whether the stack has room for all it will do, and only then calls the
noinline function with the large frame.  The library's files are compiled
again, as the build compiles them, with gcc's -fcallgraph-info=su, which
gives each function's frame and its calls; the longest path from each
exported hook (and the destructor, the exit handler, the clone
trampoline) (zlib's dlopen counted where it is called) must stay under the bound
the hook asks for: PT_EXEC_STACK for the exec family and posix_spawn, PT_HOOK_STACK
for the others (preload/pt-preload.h).  And what runs outside the large
frames (the check included) must stay under 1.5 KiB.  A frame that grows,
or a large frame inlined into a hook's entry, fails here.  Skipped
(exit 77) where the compiler has no -fcallgraph-info.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

DLOPEN = 6144           # dlopen + compress2, measured on guard-paged stacks
SMALL = 1536            # what may run before the answer (-O0: 1,184)
# The functions with the large frames, called only once there is room.
BIG = re.compile(r"(_traced|_quiet)$|^send_(reap|fork|exit)$")
EXTRA_ROOTS = ["pt_fini", "pt_on_exit", "clone_trampoline"]
# Hooks the graph knows by another name: syscall is assembly (its six
# pushes, then pt_syscall_enter); fcntl64 is fcntl (an assembler label).
ALIASES = {"syscall": ("pt_syscall_enter", 56), "fcntl64": ("fcntl", 0)}


def constant(header, name):
    m = re.search(r"#define %s (\d+)u" % name, open(header).read())
    return int(m.group(1))


def hooks(hooks_def):
    return re.findall(r"^PT_HOOK(?:_AS)?\((\w+)", open(hooks_def).read(), re.M)


def compile_graphs(build, out):
    with open(os.path.join(build, "compile_commands.json")) as f:
        cmds = [c for c in json.load(f)
                if "libproftrace.so.p" in c.get("output", c["command"])]
    if not cmds:
        print("no compile commands for the preload library")
        sys.exit(1)
    for i, c in enumerate(cmds):
        args, skip = [], 0
        for a in shlex.split(c["command"]):
            if skip:
                skip -= 1
                continue
            if a in ("-o", "-MQ", "-MF"):
                skip = 1
                continue
            if a == "-MD":
                continue
            args.append(a)
        obj = os.path.join(out, "%d.o" % i)
        r = subprocess.run(args + ["-fcallgraph-info=su", "-o", obj],
                           cwd=c["directory"], capture_output=True, text=True)
        if r.returncode != 0:
            if "callgraph-info" in r.stderr:
                print("no -fcallgraph-info here: " + r.stderr.strip())
                sys.exit(77)
            print(r.stderr)
            sys.exit(1)


def read_graph(out):
    size, edges = {}, {}
    node = re.compile(r'node: \{ title: "([^"]+)" label: "[^"\\]*\\n'
                      r'[^"\\]*\\n(\d+) bytes')
    edge = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
    name = lambda t: t.split(":")[-1].split(".")[0].lstrip("*")
    for f in os.listdir(out):
        if not f.endswith(".ci"):
            continue
        for line in open(os.path.join(out, f)):
            m = node.match(line)
            if m:
                n = name(m.group(1))
                size[n] = max(size.get(n, 0), int(m.group(2)))
                continue
            m = edge.match(line)
            if m:
                edges.setdefault(name(m.group(1)), set()).add(name(m.group(2)))
    # What zlib's loading takes, where the library calls it.
    size["dlopen"] = DLOPEN
    return size, edges


def deepest(size, edges, n, seen, stop=None):
    """The longest path from n that visits no function twice (the library
    recurses nowhere it could go on: conn_open's HELLO, send_large's
    connection of its own), without entering a function stop matches."""
    best, path = 0, []
    for t in sorted(edges.get(n, ())):
        if t in seen or t not in size or (stop and stop.search(t)):
            continue
        d, p = deepest(size, edges, t, seen | {t}, stop)
        if d > best:
            best, path = d, p
    return size.get(n, 0) + best, [n] + path


def main():
    build, src = sys.argv[1], sys.argv[2]
    header = os.path.join(src, "pt-preload.h")
    exec_bound = constant(header, "PT_EXEC_STACK")
    hook_bound = constant(header, "PT_HOOK_STACK")
    failed = False
    with tempfile.TemporaryDirectory() as out:
        compile_graphs(build, out)
        size, edges = read_graph(out)
    for h in hooks(os.path.join(src, "hooks.def")) + EXTRA_ROOTS:
        name, extra = ALIASES.get(h, (h, 0))
        if name not in size:
            print("%s: not in the call graph" % h)
            failed = True
            continue
        bound = exec_bound if re.match(r"(f?exec|posix_spawn)", h) else \
            hook_bound
        d, p = deepest(size, edges, name, {name})
        pre, pp = deepest(size, edges, name, {name}, BIG)
        d, pre = d + extra, pre + extra
        ok = d <= bound and pre <= SMALL
        print("%-16s %6d of %6d, before the answer %4d: %s%s" % (
            h, d, bound, pre, " > ".join(p),
            "" if ok else "   <- TOO DEEP (small part: %s)" % " > ".join(pp)))
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
