#!/usr/bin/env python3
"""`proftrace report --format markdown`, read by a CommonMark parser.

    test-md.py --proftrace BIN [--gencapture BIN] [--lib LIBPROFTRACE]
               [--sample DIR] [--out DIR] [--doc-image PNG] [-k NAME]

The Markdown goes through cmark-gfm (GitHub's parser, with its table
extension; tools/install-deps.sh installs it) as XML: each table must
come out with every row as wide as its header, and every raw table line
must split into exactly that many cells by GFM's rule (a '|' not escaped
by a backslash), so that no command line breaks a cell.  The numbers of
every table are compared with those of the text report of the same
capture, parsed from its columns; the command cells of failed executions
give back their exact argv through shlex.  A 100,000-execution synthetic
capture (bench/gencapture) and a capture of long, failing, piped command
lines stay under 1 MiB with every table at its largest.  The sample
build's summary, rendered, is drawn by headless Chromium as a step
summary shows it: its tables hold the parser's cells (--doc-image keeps
the screenshot for doc/views.md).

The last line counts the results: "N passed, N failed".
"""

import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import browser_pipe  # noqa: E402
from mkcapture import Capture  # noqa: E402
from viewlib import (Failed, capture, check, eq, host_a, host_b,  # noqa: E402
                     make_like, random_run, rows, run, sample_capture,
                     section, synthetic_capture)
import viewlib  # noqa: E402

ARGS = None
TMP = None
CM = "{http://commonmark.org/xml/1.0}"
MIB = 1 << 20


# ---- the Markdown, as a parser reads it ----

def inline_text(el):
    """The text of a cell or heading: its text and code descendants."""
    out = []
    for x in el.iter():
        if x.tag in (CM + "text", CM + "code"):
            out.append(x.text or "")
        elif x.tag == CM + "softbreak":
            out.append(" ")
    return "".join(out)


def raw_cells(line):
    """How GFM splits a table line: on '|' not escaped by a backslash,
    without the outer pipes."""
    check(line.startswith("|") and line.endswith("|"), f"row: {line!r}")
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def markdown(*args):
    """Parse `report --format markdown ARGS`: returns (sections, size),
    sections a dict heading -> list of tables (header, rows) and
    paragraphs."""
    return markdown_of(["report", "--format", "markdown"] + list(args))


def markdown_of(cmd):
    md = run(*cmd)
    text = md.decode("utf-8")                # valid UTF-8, or this fails
    check(not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), "control chars")
    # every raw table line splits into its header's number of cells
    width = None
    for line in text.split("\n"):
        if line.startswith("|"):
            n = raw_cells(line)
            if width is None:
                width = n
            eq(n, width, f"cells in {line[:120]!r}")
        else:
            width = None
    p = subprocess.run(["cmark-gfm", "-e", "table", "--to", "xml"],
                       input=md, capture_output=True, check=True)
    doc = ET.fromstring(p.stdout)
    sections, cur = {}, None
    for el in doc:
        if el.tag == CM + "heading":
            cur = sections.setdefault(inline_text(el), {"tables": [],
                                                        "text": []})
        elif el.tag == CM + "table":
            head = el.find(CM + "table_header")
            header = [inline_text(c) for c in head.findall(CM + "table_cell")]
            rows = []
            for r in el.findall(CM + "table_row"):
                cells = [inline_text(c) for c in r.findall(CM + "table_cell")]
                eq(len(cells), len(header), "row width")
                rows.append(cells)
            check(cur is not None, "a table before any heading")
            cur["tables"].append((header, rows))
        elif cur is not None:
            cur["text"].append(inline_text(el))
    return sections, len(md)


def md_table(sections, prefix, i=0):
    for k, v in sections.items():
        if k.startswith(prefix):
            return v["tables"][i]
    raise Failed(f"no section {prefix!r} in {list(sections)}")


def md_text(sections, prefix):
    for k, v in sections.items():
        if k.startswith(prefix):
            return " ".join(v["text"])
    raise Failed(f"no section {prefix!r}")


# ---- the text report, by its columns ----

def text_report(*args):
    return run("report", "--width", "1000", *args).decode("utf-8")


def strip_tree(label):
    return re.sub(r"^\[\d+\] ", "", label.strip())


def unpct(cells):
    return [c[:-1] if c.endswith("%") else c for c in cells]


def compare(*caps, args=()):
    """Every figure of the Markdown equals the text report's."""
    args = list(args)
    text = text_report(*args, *caps)
    md, size = markdown(*args, *caps)
    check(size < MIB, f"{size} bytes")

    # summary
    summ = "\n".join(section(text, "Summary"))
    sm = {r[0]: r[1] for r in md_table(md, "Summary")[1]}
    wall = re.search(r"wall time\s+([\d.]+) s\s+from (\S+)", summ).groups()
    eq(sm["wall time"], f"{wall[0]} s from {wall[1]}", "wall time")
    ex = re.search(r"executions\s+(\d+)\s+(\d+) failed, (\d+) killed by a "
                   r"signal, (\d+) untraced", summ).groups()
    eq(sm["executions"], f"{ex[0]}: {ex[1]} failed, {ex[2]} killed by a "
       f"signal, {ex[3]} untraced", "executions")
    cpu = re.search(r"CPU time\s+([\d.]+ s)\s+(.*)", summ).groups()
    eq(sm["CPU time"], f"{cpu[0]}: {cpu[1]}", "CPU time")
    par = re.search(r"parallelism\s+([\d.]+)\s+(.*)", summ).groups()
    eq(sm["parallelism"], f"{par[0]} {par[1]}", "parallelism")
    mem = re.search(r"peak memory\s+([\d.]+ MB)\s+(.*)", summ)
    if mem:
        eq(sm["peak memory"], f"{mem.group(1)} {mem.group(2)}", "memory")

    # captures
    caps_t = section(text, "Captures")
    caps_m = md_table(md, "Captures")[1]
    eq(len(caps_m), len(caps_t), "captures")
    for t, m in zip(caps_t, caps_m):
        want = re.match(r"\s+#(\d+)\s+(.*?)\s+(\S+)\s+([\d.]+) s\s+(\d+) "
                        r"executions?", t).groups()
        eq((m[0], m[1], m[2], m[3], m[4]), want, "capture row")

    if not section(text, "Programs by self", need=False):
        return text, md
    # programs, both orders
    for title in ("Programs by self", "Programs by total"):
        t = rows(section(text, title), 6)
        m = [unpct(r) for r in md_table(md, title)[1]]
        eq(m, t, title)
    # critical path
    cp = section(text, "Critical path (", need=False)
    if cp:
        t = [r[:5] + [strip_tree(r[5])] for r in rows(cp, 5)]
        m = [unpct(r[:5]) + [r[6]] for r in md_table(md, "Critical path")[1]]
        eq(m, t, "critical path")
        for line in cp:
            s = re.search(r"(\d+) shorter steps, own ([\d.]+) s \(([\d.]+)%",
                          line)
            if s:
                eq(re.search(r"(\d+) shorter steps not shown, own ([\d.]+) s "
                             r"\(([\d.]+)%", md_text(md, "Critical path"))
                   .groups(), s.groups(), "shorter steps")
            o = re.search(r"off the path: ([\d.]+) s \(([\d.]+)%", line)
            if o:
                eq(re.search(r"Off the path: ([\d.]+) s \(([\d.]+)%",
                             md_text(md, "Critical path")).groups(),
                   o.groups(), "off the path")
        t = rows(section(text, "Critical path by"), 3)
        m = [unpct(r) for r in md_table(md, "Critical path by")[1]]
        eq(m, t, "critical path by program")
    # parallelism
    t = [r[:3] for r in rows(section(text, "Parallelism"), 3)]
    m = [unpct(r[:3]) for r in md_table(md, "Parallelism")[1]]
    eq(m, t, "parallelism")
    avg = re.search(r"average ([\d.]+) busy, peak (\d+)",
                    "\n".join(section(text, "Parallelism"))).groups()
    eq(re.search(r"Average ([\d.]+) busy, peak (\d+)",
                 md_text(md, "Parallelism")).groups(), avg, "average")
    st = section(text, "Longest stretches", need=False)
    if st:
        eq([unpct(r) for r in md_table(md, "Longest stretches")[1]],
           rows(st, 3), "stretches")
    # failures
    fl = section(text, "Failed executions", need=False)
    if fl:
        t = []
        for line in fl[1:]:
            g = re.match(r"\s+([\d.]+)\s+([\d.]+)\s+((?:exit|signal) -?\d+)"
                         r"\s+(.*)$", line)
            if g:
                t.append(list(g.groups()))
        m = [r[:4] for r in md_table(md, "Failed executions")[1]]
        eq(m, t, "failures")
    else:
        check(not any(k.startswith("Failed") for k in md), "no failures")
    # what the tables left out, said alike
    for title in ("Programs by self", "Failed executions"):
        lines = section(text, title, need=False) or []
        more = [re.search(r"\.\.\. (\d+) more", x) for x in lines]
        more = [x.group(1) for x in more if x]
        got = re.findall(r"(\d+) more \w+", md_text(md, title)) \
            if any(k.startswith(title) for k in md) else []
        eq(got, more, f"rows left out of {title}")
    return text, md


def compare_diff(a, b, args=()):
    """The Markdown diff says what the text diff says."""
    args = list(args)
    text = run("diff", "--width", "1000", *args, a, b).decode(
        "utf-8", "replace")
    md, size = markdown_of(["diff", "--format", "markdown"] + args + [a, b])
    check(size < MIB, f"{size} bytes")
    lines = text.split("\n")
    tot = {r[0]: r[1:] for r in md_table(md, "proftrace diff")[1]}
    for key in ("wall s", "cpu s", "executions", "failed"):
        line = next(x for x in lines if x.strip().startswith(key))
        want = line.strip()[len(key):].split()
        got = [tot[key][0], tot[key][1]] + tot[key][2].split()
        eq(got, want, key)
    t = rows(section(text, "Largest changes"), 6)
    m = [r[:3] + [r[3] if r[3] == "new" else r[3]] + r[4:]
         for r in md_table(md, "Largest changes")[1]]
    eq([r[:3] + [r[3].rstrip("%")] + r[4:] for r in m], t, "changes")
    for side in "AB":
        head = next(x for x in lines if x.startswith(f"Only in {side}:"))
        key = next(k for k in md if k.startswith(f"Only in {side}:"))
        eq(key, head, f"only in {side}")
        t = rows([""] + section(text, f"Only in {side}:"), 2)
        m = md["" + key]["tables"][0][1] if md[key]["tables"] else []
        eq(m, t, f"rows only in {side}")
    for title in ("Largest changes", "Only in A", "Only in B"):
        more = [re.search(r"\.\.\. (\d+) more", x)
                for x in section(text, title, need=False) or []]
        got = re.findall(r"(\d+) more \w+", md_text(md, title))
        eq(got, [x.group(1) for x in more if x], f"left out of {title}")


# ---- the runs ----

PIPED = [["sh", "-c", "grep a\\|b x | sort || true"],
         ["awk", "{ print $1 | \"sort\" }", "f|g"],
         ["echo", "`tick` ``two`` |", "*bold* _it_ [l](x) <b>&amp; @all $m$"],
         ["printf", "a\nb\tc\x01"],
         [b"bad\xff\xfeutf8", "ok"]]


def failing():
    c = Capture(host="h|o`st", command="sh -c 'x | y'",
                meta={"CI_JOB_NAME": "test | `job`"})
    c.process(500, 1, ["sh", "-c", "x | y"], start=0, end=10)
    for i, argv in enumerate(PIPED):
        c.process(501 + i, 500, argv, start=1 + i, end=1.5 + i, exit=2 + i)
    c.process(510, 500, ["sleep", "100"], start=7, end=8, signal=9)
    return c


# ---- the tests ----

def test_make():
    text, md = compare(capture("make", make_like))
    eq(md_table(md, "Failed executions")[1],
       [["6.500", "2.500", "exit 1", "ld prog", "ld -o prog a.o b.o"]],
       "failure row")


def test_options():
    cap = capture("make", make_like)
    for args in (["--top", "2"], ["--group-by", "package"], ["-n", "1"],
                 ["--group-by", "cwd"]):
        compare(cap, args=args)
    p = subprocess.run([ARGS.proftrace, "report", "--format", "html", cap],
                       capture_output=True)
    eq(p.returncode, 2, "unknown format")


def test_random():
    for seed in range(5):
        cap = capture(f"random{seed}", lambda: random_run(seed))
        compare(cap, args=["--top", "5"])
        compare(cap)


def test_pipes_and_markup():
    cap = capture("failing", failing)
    text, md = compare(cap)
    fails = md_table(md, "Failed executions")[1]
    eq(len(fails), len(PIPED) + 1, "failures")
    for row, argv in zip(fails, PIPED):
        want = [a if isinstance(a, str) else
                a.decode("utf-8", "replace") for a in argv]
        # control characters show as '?' (as in the text), the rest is
        # exact
        got = shlex.split(row[4])
        eq(got, [re.sub(r"[\x00-\x1f]", "?", a) for a in want],
           f"command cell of {argv[0]!r}")
    eq(fails[-1][2], "signal 9", "killed")
    caps = md_table(md, "Captures")[1]
    eq((caps[0][1], caps[0][5], caps[0][6]),
       ("h|o`st", "test | `job`", "sh -c 'x | y'"), "capture row")
    # nothing of a command line became markup
    md_raw = run("report", "--format", "markdown", cap)
    html = subprocess.run(["cmark-gfm", "-e", "table", "-e", "autolink"],
                          input=md_raw, capture_output=True,
                          check=True).stdout.decode()
    for tag in ("<b>", "<strong>", "<em>it", "<a ", "<img"):
        check(tag not in html, f"{tag} in the HTML")


def test_two_captures():
    compare(capture("alpha", host_a), capture("beta", host_b))


def test_diff():
    a = capture("random1", lambda: random_run(1))
    b = capture("random2", lambda: random_run(2))
    f = capture("failing", failing)
    m = capture("make", make_like)
    for args in ([], ["-n", "3"], ["--group-by", "exe"],
                 ["--weight", "cpu"], ["--weight", "self", "-n", "1"]):
        compare_diff(a, b, args)
    compare_diff(f, m)
    compare_diff(capture("alpha", host_a), capture("beta", host_b))
    compare_diff(m, f, ["--group-by", "cwd"])
    md, _ = markdown_of(["diff", "--format", "markdown", f, m])
    only = md_table(md, "Only in A")[1]
    check([shlex.split(r[2]) for r in only if r[2].startswith("awk")] ==
          [PIPED[1]], f"pipes kept in a cell: {only}")


def test_empty():
    text, md = compare(capture("empty", lambda: Capture(host="empty")))
    check(not any(k.startswith("Programs") for k in md), "no tables")


def test_sample_build():
    cap = sample_capture("./configure && make -j2 && make check")
    compare(cap)
    compare(cap, args=["--group-by", "cwd", "--top", "3"])


# What a step summary shows: GitHub's own page style is not ours to
# copy; this is enough to see the tables as tables.
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { font: 14px sans-serif; margin: 16px; max-width: 960px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 3px 10px; }
th { background: #f6f8fa; } code { font-size: 12px; }
</style></head><body>%s</body></html>"""


def cell_text(cell):
    """A table cell's text as the parser read it: its text and code
    nodes, without the XML's indentation."""
    return "".join(n.text or "" for n in cell.iter()
                   if n.tag in (f"{CM}text", f"{CM}code"))


def test_rendered():
    """The sample build's summary, rendered by cmark-gfm and drawn by
    Chromium as a step summary is: the page's tables hold, cell by cell,
    the text the parser found in the Markdown, with no console error and
    a screenshot that is not blank (--doc-image keeps it for
    doc/views.md)."""
    cap = sample_capture("./configure && make -j2 && make check")
    md = run("report", "--format", "markdown", "--top", "8", cap)
    html = subprocess.run(["cmark-gfm", "-e", "table"], input=md,
                          capture_output=True, check=True).stdout
    xml = subprocess.run(["cmark-gfm", "-e", "table", "--to", "xml"],
                         input=md, capture_output=True, check=True).stdout
    tables = ET.fromstring(xml).findall(f".//{CM}table")
    path = os.path.join(TMP, "summary.html")
    with open(path, "wb") as f:
        f.write((PAGE % html.decode("utf-8")).encode("utf-8"))
    shot = os.path.join(ARGS.out or TMP, "summary.png")
    with browser_pipe.Browser() as b:
        page = b.open("file://" + path)
        eq(page.errors, [], "console errors")
        cells = page.eval(
            "Array.from(document.querySelectorAll('table')).map(function"
            " (t) { return Array.from(t.rows).map(function (r) { return"
            " Array.from(r.cells).map(function (c) { return c.textContent"
            "; }); }); })")
        want = [[[cell_text(c) for c in r.findall(f"{CM}table_cell")]
                 for r in t if r.tag in (f"{CM}table_header",
                                         f"{CM}table_row")]
                for t in tables]
        eq(len(cells), len(want), "tables drawn")
        eq(cells, want, "the cells drawn")
        drawn = page.eval("Array.from(document.querySelectorAll('h3'))"
                          ".map(function (h) { return h.textContent; })")
        check(any(h.startswith("Failed executions") for h in drawn),
              f"headings drawn: {drawn}")
        page.screenshot(shot, 1000, 1400)
    out = subprocess.run(["convert", shot, "-format", "%k", "info:"],
                         capture_output=True, text=True, check=True)
    check(int(out.stdout) >= 8, f"{shot} is blank")
    if ARGS.doc_image:
        subprocess.run(["convert", shot, "-crop", "985x640+0+0", "-trim",
                        "-colors", "16", "-strip", ARGS.doc_image],
                       check=True)


def test_size():
    """Every table at its largest, on runs far larger than its caps."""
    big = synthetic_capture()
    for args in ([], ["--top", "100000"], ["--top", "100000", "--group-by",
                                           "cwd"]):
        md, size = markdown(*args, big)
        check(size < MIB, f"{size} bytes with {args}")
        n = len(md_table(md, "Programs by self")[1])
        check(n <= 100, f"{n} rows")
    compare(big)

    def long_failures():
        c = Capture(host="long")
        c.process(900, 1, ["make", "-k"], start=0, end=3000)
        for i in range(2000):
            c.process(1000 + i, 900, ["sh", "-c", f"step{i} | " +
                                      "x|y " * 25000], start=1 + i,
                      end=2 + i, exit=1, cwd=f"/build/{'d|' * 100}{i}")
        return c
    cap = capture("long", long_failures)
    for args in ([], ["--top", "100000", "--group-by", "cwd"]):
        md, size = markdown(*args, cap)
        check(size < MIB, f"{size} bytes with {args}")
    eq(len(md_table(md, "Failed executions")[1]), 100, "failure rows")
    check("1900 more failed executions not shown" in
          md_text(md, "Failed executions"), "rows left out")


def options(ap):
    ap.add_argument("--out", help="keep the screenshot here")
    ap.add_argument("--doc-image", help="write the doc's screenshot here")


if __name__ == "__main__":
    sys.exit(viewlib.main(globals(), options))
