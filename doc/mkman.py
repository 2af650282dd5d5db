#!/usr/bin/env python3
"""Build one man page from its Markdown source (doc/NAME.SECTION.md) with
pandoc: the same text is the page on the repository's web view and the
installed man page.

usage: mkman.py PANDOC SOURCE OUTPUT VERSION

pandoc gives a table of relative column widths 70 ens in all, which with
tbl's gutters is wider than man's text at 80 columns: the widths are
scaled down to fit.
"""
import os
import re
import subprocess
import sys

pandoc, src, out, version = sys.argv[1:5]
section = src.rsplit(".", 2)[-2]
here = os.path.dirname(os.path.abspath(__file__))
roff = subprocess.run(
    [pandoc, "-s", "-f", "markdown", "-t", "man",
     "--shift-heading-level-by=-1",
     "--lua-filter", os.path.join(here, "man.lua"),
     "-M", "section=" + section,
     "-M", "header=proftrace manual",
     "-M", "footer=proftrace " + version,
     src],
    check=True, stdout=subprocess.PIPE, text=True).stdout
roff = re.sub(r"lw\(([0-9.]+)n\)",
              lambda m: "lw(%.1fn)" % (float(m.group(1)) * 0.88), roff)
with open(out + ".tmp", "w") as f:
    f.write(roff)
os.replace(out + ".tmp", out)
