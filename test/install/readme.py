#!/usr/bin/env python3
"""The README as GitHub shows it, read by cmark-gfm (CommonMark with
GitHub's tables): its first screen (the first 60 lines of its source)
holds what a newcomer needs (a picture of the HTML report, the two
commands, five common uses, the limits as a table that links to
doc/reliability.md), and every relative link or image of the README and
of the pages it links to leads to a file that exists and, with
#anchor, to a heading there.

usage: readme.py SOURCE_DIR [README]
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

src = os.path.abspath(sys.argv[1])
readme = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else \
    os.path.join(src, "README.md")
SCREEN = 60
failures = []
NS = "{http://commonmark.org/xml/1.0}"


def check(what, ok, detail=""):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        print("      " + str(detail).replace("\n", "\n      "))
        failures.append(what)


if not shutil.which("cmark-gfm"):
    print("FAIL: cmark-gfm is not installed (tools/install-deps.sh test)")
    sys.exit(1)


def parse(text):
    out = subprocess.run(["cmark-gfm", "-e", "table", "-t", "xml",
                          "--sourcepos"], input=text, capture_output=True,
                         text=True, check=True).stdout
    return ET.fromstring(out)


def text_of(node):
    return "".join(n.text or "" for n in node.iter()
                   if n.tag in (NS + "text", NS + "code"))


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    root = parse(open(path, encoding="utf-8").read())
    seen = {}
    out = set()
    for h in root.iter(NS + "heading"):
        a = slug(text_of(h))
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


def line_of(node):
    pos = node.get("sourcepos")
    return int(pos.split(":")[0]) if pos else 0


def links_ok(path, checked):
    """Every relative link and image of the page at path leads somewhere."""
    base = src if path == readme else os.path.dirname(path)
    root = parse(open(path, encoding="utf-8").read())
    for node in list(root.iter(NS + "link")) + list(root.iter(NS + "image")):
        dest = node.get("destination", "")
        if re.match(r"^[a-z]+:", dest):
            continue
        file, _, anchor = dest.partition("#")
        target = os.path.normpath(os.path.join(base, file)) if file else path
        name = "README.md" if path == readme else os.path.relpath(path, src)
        check(f"{name}: {dest} exists", os.path.exists(target), target)
        if anchor and target.endswith(".md") and os.path.exists(target):
            check(f"{name}: {dest}: the heading is there",
                  anchor in anchors(target), sorted(anchors(target)))
        if target.endswith(".md") and target not in checked and \
                os.path.exists(target) and path == readme:
            checked.add(target)


text = open(readme, encoding="utf-8").read()
root = parse(text)

# The first screen.
first = [n for n in root if line_of(n) and line_of(n) <= SCREEN]
imgs = [i for n in first for i in n.iter(NS + "image")]
check("first screen: a picture of the HTML report (doc/images)",
      any(i.get("destination", "").startswith("doc/images/") and
          os.path.exists(os.path.join(src, i.get("destination")))
          for i in imgs), [i.get("destination") for i in imgs])
blocks = [n.text or "" for n in first if n.tag == NS + "code_block"]
check("first screen: the two commands, ./quickstart.sh and ./run-tests.sh",
      any(re.search(r"^\./quickstart\.sh\b", b, re.M) and
          re.search(r"^\./run-tests\.sh\b", b, re.M) for b in blocks), blocks)
uses = [l for b in blocks for l in b.splitlines()
        if re.match(r"^(eval \"\$\()?proftrace ", l)]
check("first screen: five common uses", len(uses) >= 5, uses)
tables = [n for n in first if n.tag == NS + "table"]
limits = [t for t in tables
          if re.search(r"static", text_of(t)) and
          re.search(r"parent", text_of(t))]
near = [l.get("destination") for n in first for l in n.iter(NS + "link")]
check("first screen: the limits as a table (static programs: from the "
      "parent's side), linking to doc/reliability.md",
      limits and any(d and d.startswith("doc/reliability.md")
                     for d in near), near)

checked = set()
links_ok(readme, checked)
for page in sorted(checked):
    links_ok(page, set())

sys.exit(1 if failures else 0)
