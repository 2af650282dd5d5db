#!/usr/bin/env python3
"""The man pages as a user meets them: each renders with man(1) at 80
columns, and with groff for the typesetter, without a single warning of
any kind (`man --warnings=w`, `groff -ww`), and has a whatis entry; every
command of `proftrace --help` has its page, every option of its --help is
in that page, and the --help output names the page."""
import argparse
import os
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
ap.add_argument("--man-dir", required=True)
ap.add_argument("pages", nargs="+")
args = ap.parse_args()

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def render(page, width):
    env = dict(os.environ, MANWIDTH=str(width), LC_ALL="C.UTF-8",
               MAN_KEEP_FORMATTING="")
    env.pop("MANPAGER", None)
    p = subprocess.run(["man", "--warnings=w", "-l", page], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    # Hyphens as the reader types them.
    text = p.stdout.translate({0x2010: "-", 0x2011: "-", 0x2212: "-"})
    return p.returncode, text, p.stderr


def help_of(*argv):
    p = subprocess.run([args.proftrace, *argv, "--help"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        fail(f"proftrace {' '.join(argv)} --help exits {p.returncode}")
    return p.stdout


texts = {}
for name in args.pages:
    path = os.path.join(args.man_dir, name)
    if not os.path.exists(path):
        fail(f"{path} was not built (scdoc missing? tools/install-deps.sh "
             "build installs it)")
        continue
    rc, text, err = render(path, 80)
    if rc != 0 or err.strip():
        fail(f"man -l {name} at 80 columns: exit {rc}, stderr:\n{err}")
    # The typesetter's device, where tbl's tables and fonts are checked
    # too; -k: the pages are UTF-8, as man's preconv reads them.
    g = subprocess.run(["groff", "-k", "-t", "-man", "-ww", "-z", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if g.returncode != 0 or g.stderr.strip():
        fail(f"groff -ww {name}: exit {g.returncode}, stderr:\n{g.stderr}")
    if len(text.splitlines()) < 10:
        fail(f"man -l {name}: only {len(text.splitlines())} lines")
    w = subprocess.run(["lexgrog", path], stdout=subprocess.PIPE, text=True)
    base = name.rsplit(".", 1)[0]
    if w.returncode != 0 or f'"{base} - ' not in w.stdout:
        fail(f"{name}: no whatis entry for {base}: {w.stdout.strip()}")
    # Wide enough that no option is cut over two lines.
    texts[base] = render(path, 1000)[1]

main_help = help_of()
commands = re.findall(r"^  ([a-z]+) ", main_help, re.M)
if len(commands) < 6:
    fail(f"proftrace --help lists {commands}")
if "proftrace(1)" not in main_help:
    fail("proftrace --help does not point to proftrace(1)")
for cmd in commands:
    page = "proftrace-" + cmd
    if page not in texts:
        fail(f"no man page {page} for the command {cmd}")
        continue
    if cmd not in texts["proftrace"]:
        fail(f"proftrace(1) does not list {cmd}")
    text = help_of(cmd)
    if f"{page}(1)" not in text:
        fail(f"proftrace {cmd} --help does not point to {page}(1)")
    opts = set()
    for line in text.splitlines():
        m = re.match(r"^  (-[-\w]+)(?:, (--[-\w]+))?", line)
        if m:
            opts.update(o for o in m.groups() if o)
    if "--help" not in opts:
        fail(f"proftrace {cmd} --help does not list -h, --help")
    for o in sorted(opts):
        if not re.search(r"(?<![-\w])" + re.escape(o) + r"(?![-\w])",
                         texts[page]):
            fail(f"{page}(1) does not describe {o} (in its --help)")
    print(f"{page}: {len(opts)} options, all in the page")

sys.exit(1 if failures else 0)
