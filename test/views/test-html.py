#!/usr/bin/env python3
"""The HTML report (`proftrace convert -f html`), as a person sees it.

    test-html.py --proftrace BIN [--lib LIBPROFTRACE] [--sample DIR]
                 [--gencapture BIN] [--out DIR] [--doc-image PNG] [-k NAME]

A headless Chromium (tools/browser_pipe.py) opens each page, from captures whose
content is known by construction (mkcapture.py), the sample build recorded
here (with --lib and --sample) and a 100,000-execution synthetic build
(--gencapture).  It checks what a user would: the page loads with no
console error and asks for nothing on the network or the disk; it holds
as many executions as the capture; pointing the mouse at a known
execution (real mouse events) shows its exact command line and exit
status, clicking pins them with its ancestors; the search finds exactly
the executions whose command line matches; the critical path listed is
the one `proftrace report` prints; the wheel, a dragged range and a
double-click change the time range shown; each execution lies inside
its parent's band and no two bars overlap; screenshots at 1280x800 and
1920x1080 are not blank.  Bad input (no execution, one, unfinished ones,
a 100 KB command line, markup, quotes, newlines, invalid UTF-8) gives a
page that loads, shows the text as text, runs nothing planted in it and
says what is missing.  Events that programs wrote about themselves (trace
files in the capture, built by construction too) are held under the
execution that wrote them, drawn inside its bar once zoomed in (hovered
and clicked there, planted markup shown as text), found by the search,
added up as `proftrace report` adds them, and capped with a word on the
page.  --out keeps the screenshots; --doc-image writes the sample
build's, shrunk, for doc/views.md.

Without Chromium the browser tests fail: tools/install-deps.sh installs it.
The last line counts the results: "N passed, N failed".
"""

import base64
import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import browser_pipe  # noqa: E402
from mkcapture import Capture, K_EOF  # noqa: E402
from viewlib import (CC1, capture, check, eq, host_a, host_b,  # noqa: E402
                     make_like, random_run, run, sample_capture,
                     synthetic_capture)
import viewlib  # noqa: E402

ARGS = None
TMP = None

WAIT_READY = ("new Promise(function (ok) { (function w() {"
              " if (window.proftrace && window.proftrace.ready) ok(true);"
              " else setTimeout(w, 20); })(); })")


def html(cap, name, *extra):
    """Convert; check the page's data with Python's own readers."""
    path = os.path.join(TMP, name + ".html")
    run("convert", "-f", "html", "--force", "-o", path, *extra, *(
        cap if isinstance(cap, list) else [cap]))
    with open(path, encoding="utf-8") as f:
        page = f.read()
    head = re.search(r'<script type="application/json" id="pt-head">'
                     r'([^<]*)</script>', page)
    json.loads(head.group(1))
    data = re.search(r'<script type="application/octet-stream" '
                     r'id="pt-data">([A-Za-z0-9+/=]*)</script>', page)
    check(data, "the data is not base64")
    z = zlib.decompressobj()
    body = z.decompress(base64.b64decode(data.group(1), validate=True))
    check(z.eof and not z.unused_data, "the data's deflate stream")
    for line in body.decode("utf-8").split("\n")[:-1]:
        json.loads(line)
    return path


def out_dir():
    d = ARGS.out or TMP
    os.makedirs(d, exist_ok=True)
    return d


def colours(png):
    """Distinct colours in a PNG (ImageMagick)."""
    p = subprocess.run(["convert", png, "-format", "%k", "info:"],
                       capture_output=True, text=True, check=True)
    return int(p.stdout.strip())


class Opened:
    """A page loaded and drawn, with what it asked for and its errors."""

    def __init__(self, b, path, timeout=120):
        self.b = b
        self.url = "file://" + path
        self.page = b.open(self.url, timeout=timeout, network=True)
        self.page.eval(WAIT_READY)
        self.ev = self.page.eval

    def problems(self):
        """Console errors, and requests other than the page itself."""
        errs = self.page.errors + self.b.page_errors(self.page.session)
        self.page.errors = []
        reqs = [u for u in self.page.requests_now() if u != self.url]
        return errs + ["request: " + u for u in reqs]

    def shots(self, name):
        for w, h in ((1280, 800), (1920, 1080)):
            shot = os.path.join(out_dir(), f"html-{name}-{w}x{h}.png")
            self.page.screenshot(shot, w, h)
            check(colours(shot) >= 8, f"{shot} is blank")
        return shot

    def hover(self, i):
        """Move the mouse onto execution i's bar; the tooltip's text."""
        r = self.ev(f"proftrace.barRect({i})")
        x, y = r["x"] + min(r["w"], 20) / 2, r["y"] + r["h"] / 2
        self.page.mouse("mouseMoved", x, y)
        return self.ev("proftrace.tooltip()"), (x, y)

    def find(self, argv):
        """Index of the execution whose command line is argv."""
        n = self.ev("proftrace.count")
        got = [i for i in range(n)
               if self.ev(f"proftrace.argvOf({i})") == argv]
        eq(len(got), 1, f"executions with argv {argv!r}")
        return got[0]

    def cp_table(self):
        """The critical path table as shown: rows of cell texts."""
        return self.ev("Array.from(document.querySelectorAll('#cp tr'))"
                       ".slice(1).map(function (r) { return Array.from("
                       "r.cells).map(function (c) { return c.textContent; })"
                       "; })")


def report_cp(cap):
    """`proftrace report`'s critical path: rows of its six columns (the
    label with its indentation), then its '...' and 'off the path'
    lines as they are."""
    text = run("report", "-w", "400", *(
        cap if isinstance(cap, list) else [cap])).decode()
    m = re.search(r"Critical path \(.*\n.*\n((?:  .*\n)*)", text)
    rows = []
    for line in (m.group(1).splitlines() if m else []):
        f = re.match(r"  +([\d.]+) +([\d.]+) +([\d.]+%) +([\d.]+) +"
                     r"([\d.]+%)  (.*)$", line)
        if f:
            rows.append(list(f.groups()))
        else:
            rows.append(line.strip())
    return rows


def csv_rows(cap):
    """Executions in the capture, as the CSV (read by Python's csv) has
    them."""
    text = run("convert", "-f", "csv", cap).decode("utf-8", "replace")
    return sum(1 for _ in csv.reader(io.StringIO(text))) - 1


def check_cp(o, cap):
    want = report_cp(cap)
    got = o.cp_table()
    eq(len(got), len(want), "critical path rows")
    for g, w in zip(got, want):
        if isinstance(w, list):
            eq(g, w, "critical path step")
        elif w.startswith("..."):
            n, own, p = re.match(r"\.\.\. (\d+) shorter steps, own ([\d.]+)"
                                 r" s \(([\d.]+%)\)", w).groups()
            eq(g, ["", "", "", own, p, f"... {n} shorter steps"], w)
        else:
            own, p = re.match(r"off the path: ([\d.]+) s \(([\d.]+%)\)",
                              w).groups()
            eq(g[3:5], [own, p], w)


def check_parallelism(o, cap):
    """The parallelism table is the report's; the profile drawn over time
    averages to the report's busy executions."""
    text = run("report", "-w", "200", cap).decode()
    m = re.search(r"Parallelism \(.*\n.*\n((?:  .*\n)*)", text)
    rows = [r.split()[:3] for r in m.group(1).splitlines()
            if not r.strip().startswith("average")]
    avg = float(re.search(r"average ([\d.]+) busy", text).group(1))
    got = o.ev("Array.from(document.querySelectorAll('#levels tr'))"
               ".slice(1, -1).map(function (r) { return Array.from("
               "r.cells).map(function (c) { return c.textContent; }); })")
    eq(got, rows, "parallelism table")
    p = o.ev("proftrace.profile()")
    mean = sum(p["busy"]) / len(p["busy"]) / 100
    check(abs(mean - avg) <= 0.015, f"profile's mean {mean} for {avg}")


def check_layout(o):
    """Every bar inside its parent's band, below its parent; no two bars
    of a row overlap."""
    bars = o.ev("proftrace.bars()")
    rows = {}
    for i, (row, s, e, p, h) in enumerate(bars):
        if p >= 0:
            pr, ph = bars[p][0], bars[p][4]
            check(pr < row < pr + ph,
                  f"execution {i} (row {row}) outside its parent's band "
                  f"[{pr}, {pr + ph})")
        rows.setdefault(row, []).append((s, e, i))
    for row, items in rows.items():
        items.sort()
        for (s1, e1, i1), (s2, e2, i2) in zip(items, items[1:]):
            # a zero-length execution takes a microsecond
            check(s2 >= max(e1, s1 + 1),
                  f"row {row}: {i1} [{s1}, {e1}] and {i2} [{s2}, {e2}]")


# ---- the tests ----

def test_make():
    """The known run: count, hover, click, search, critical path, zoom."""
    cap = capture("make", make_like)
    path = html(cap, "make")
    with browser_pipe.Browser() as b:
        o = Opened(b, path)
        eq(o.problems(), [], "errors and requests")
        eq(o.ev("proftrace.count"), 6, "executions")
        eq(o.ev("proftrace.error"), None, "error")
        o.shots("make")

        # the header names what to look at first: the most self time,
        # the report's longest serial stretch, the critical path
        facts = dict(o.ev("Array.from(document.querySelectorAll("
                          "'#facts dt')).map(function (t) { return "
                          "[t.textContent, t.nextSibling.textContent]; })"))
        eq(facts.get("most self time"), "cc1 b.c: 3.500 s of 3.500 s",
           "most self time")
        eq(facts.get("longest serial stretch"),
           "ld prog ran alone for 2.500 s from 6.500 s", "serial stretch")
        eq(facts.get("critical path, most own time"),
           "cc1 b.c 3.500 s, make 2.500 s, ld prog 2.500 s", "path")
        eq(facts.get("executions"), "6: 1 failed, 0 killed by a signal, "
           "0 untraced", "executions")

        # hover with the mouse: the exact command line, exit, times
        ld = o.find(["ld", "-o", "prog", "a.o", "b.o"])
        tip, (x, y) = o.hover(ld)
        check(tip is not None, "no tooltip")
        lines = tip.split("\n")
        eq(lines[0], "ld prog", "tooltip label")
        eq(lines[1], "ld -o prog a.o b.o", "tooltip command")
        check("exit 1" in lines, f"exit status in {lines}")
        check("start 6.500 s, duration 2.500 s, self 2.500 s" in lines,
              f"times in {lines}")
        check("CPU user 750.0 ms, sys 500.0 ms, peak RSS 1000 KiB" in lines,
              f"CPU in {lines}")
        check("cwd /src" in lines, f"cwd in {lines}")

        # click: pinned details, with the ancestors
        o.page.click(x, y)
        eq(o.ev("proftrace.selected()"), ld, "selected")
        args = o.ev("Array.from(document.querySelectorAll('#details ol li'))"
                    ".map(function (l) { return l.textContent; })")
        eq(args, ["ld", "-o", "prog", "a.o", "b.o"], "argv in the details")
        anc = o.ev("Array.from(document.querySelectorAll("
                   "'#details .ancestors a')).map(function (a) {"
                   " return a.textContent; })")
        eq(anc, ["make"], "ancestors")
        check("exit 1" in o.ev("proftrace.details()"), "exit in details")

        # a cc1 inside cc inside make: ancestors nearest first
        c1 = o.find([CC1, "-quiet", "a.c", "-o", "/tmp/ccX.s"])
        o.ev(f"proftrace.select({c1})")
        anc = o.ev("Array.from(document.querySelectorAll("
                   "'#details .ancestors a')).map(function (a) {"
                   " return a.textContent; })")
        eq(anc, ["cc a.c", "make"], "ancestors of cc1")

        # search: exactly the command lines that match
        want = {("cc", "-c", "a.c", "-o", "a.o"), ("cc", "-c", "b.c", "-o",
                                                    "b.o")}
        r = o.ev("proftrace.search('/^cc /')")
        eq({tuple(o.ev(f"proftrace.argvOf({i})")) for i in r["ids"]}, want,
           "regex search")
        check(o.ev("document.getElementById('matches').textContent")
              .startswith("2 matches, 8.000 s in all, 5.000 s of wall"),
              "search summary")
        r = o.ev("proftrace.search('ccx.s')")   # substring, any case
        eq(r["count"], 1, "substring search")
        r = o.ev("proftrace.search('/(/')")
        check("error" in r, "a bad regex says so")
        o.ev("proftrace.search('')")

        # typed into the box, the same
        o.ev("document.getElementById('search').focus()")
        o.page.call("Input.insertText", {"text": "prog"})
        o.ev("new Promise(function (ok) { setTimeout(ok, 400); })")
        check(o.ev("document.getElementById('matches').textContent")
              .startswith("1 match, "), "typed search")
        o.ev("proftrace.search('')")

        check_cp(o, cap)
        check_layout(o)
        check_parallelism(o, cap)

        # zoom: the wheel, a dragged range, a double-click
        full = o.ev("proftrace.visibleRange()")
        eq(full, [0, 10_000_000], "full range")
        r = o.ev("(function () { var t = document.getElementById('tl');"
                 " t.scrollIntoView(); var r = t.getBoundingClientRect();"
                 " return [r.left, r.top, r.width]; })()")
        left, top, width = r
        o.page.wheel(left + width / 2, top + 30, -400)
        z = o.ev("proftrace.visibleRange()")
        check(z[0] > full[0] and z[1] < full[1], f"wheel zoomed in: {z}")
        check(z[0] < 5_000_000 < z[1], f"around the pointer: {z}")
        o.ev("proftrace.zoom(0, 10000000)")
        o.page.mouse("mousePressed", left + width * 0.2, top + 60)
        o.page.mouse("mouseMoved", left + width * 0.3, top + 60, buttons=1)
        o.page.mouse("mouseMoved", left + width * 0.4, top + 60, buttons=1)
        o.page.mouse("mouseReleased", left + width * 0.4, top + 60)
        z = o.ev("proftrace.visibleRange()")
        check(abs(z[0] - 2_000_000) < 20_000 and
              abs(z[1] - 4_000_000) < 20_000, f"dragged range: {z}")
        o.page.mouse("mousePressed", left + 5, top + 60, clicks=2)
        o.page.mouse("mouseReleased", left + 5, top + 60, clicks=2)
        eq(o.ev("proftrace.visibleRange()"), full, "double-click resets")
        # shift-drag pans
        o.page.mouse("mousePressed", left + width * 0.5, top + 60,
                     modifiers=8)
        o.page.mouse("mouseMoved", left + width * 0.4, top + 60, modifiers=8,
                     buttons=1)
        o.page.mouse("mouseReleased", left + width * 0.4, top + 60,
                     modifiers=8)
        z = o.ev("proftrace.visibleRange()")
        check(z[0] > 0 and abs((z[1] - z[0]) - 10_000_000) < 1,
              f"panned: {z}")

        # the flame graph: wall self times merged by label, as the
        # folded stacks weigh them; a click zooms into a frame
        folded = {}
        for line in run("convert", "-f", "folded", cap).decode().split("\n"):
            if line:
                stack, w = line.rsplit(" ", 1)
                folded[stack] = int(w)
        fl = o.ev("proftrace.flame()")
        eq(fl[0]["total"], sum(folded.values()), "flame graph's whole")
        bx = o.ev("proftrace.flameBox(['make', 'cc b.c'])")
        o.page.click(bx["x"] + bx["w"] / 2, bx["y"] + 8)
        want = sum(w for k, w in folded.items()
                   if k.startswith("make;cc b.c"))
        eq(o.ev("proftrace.flameInfo()"),
           f"cc b.c: {want / 1e6:.3f} s "
           f"({100 * want / sum(folded.values()):.1f} % of all)",
           "flame graph zoomed")

        # colours by exit status: the failed ld stands out
        o.ev("document.getElementById('colour').value = 'exit';"
             "document.getElementById('colour').dispatchEvent("
             "new Event('change'))")
        o.shots("make-exit")
        # tables
        t = o.ev("proftrace.table('failed')")
        check("ld prog" in t and "exit 1" in t and "cc a.c" not in t,
              f"failed table: {t}")
        t = o.ev("proftrace.table('prog')")
        check(re.search(r"cc1\t2\t5\.500", t), f"programs table: {t}")
        eq(o.problems(), [], "errors after the interactions")


def test_random():
    """A random tree: ties, zero-length and orphaned executions."""
    for seed in (1, 2):
        cap = capture(f"random{seed}", lambda: random_run(seed))
        path = html(cap, f"random{seed}")
        with browser_pipe.Browser() as b:
            o = Opened(b, path)
            eq(o.problems(), [], "errors")
            eq(o.ev("proftrace.count"), 300, "executions")
            check_cp(o, cap)
            check_parallelism(o, cap)
            check_layout(o)


def test_two_captures():
    """One band per capture; wall-clock axis or each at its own start."""
    caps = [capture("a", host_a), capture("b", host_b)]
    path = html(caps, "two")
    with browser_pipe.Browser() as b:
        o = Opened(b, path)
        eq(o.problems(), [], "errors")
        eq(o.ev("proftrace.captures"), 2, "captures")
        eq(o.ev("proftrace.fullRange()"), [0, 5_000_000], "wall clock")
        o.ev("proftrace.align(true)")
        eq(o.ev("proftrace.fullRange()"), [0, 4_000_000], "aligned")
        facts = o.ev("document.getElementById('facts').textContent")
        check("alpha" in facts and "beta" in facts and "a.ptcap" in facts
              and "b.ptcap" in facts, f"header: {facts}")
        o.shots("two")


def bad_run():
    c = Capture(host="h</script><script>window.pwned=1</script>",
                command="sh -c '</script><script>window.pwned=2</script>'")
    c.process(10, 1, ["sh", "-c", "x"], start=0, end=20)
    c.process(11, 10, ["echo", "</script><script>window.pwned=3</script>"],
              start=1, end=2)
    c.process(12, 10, ["say", "\"dq\" 'sq' `bq` $x", "two\nlines\r\n"],
              start=2, end=3)
    c.process(13, 10, [b"caf\xe9", b"\xff\xfe ok", "\u2028\u2029"],
              start=3, end=4)
    c.process(14, 10, ["big", "x" * 100_000], start=4, end=5)
    c.process(15, 10, ["killed"], start=5, end=6, signal=9, reaped=False)
    c.process(16, 10, ["unfinished", "&amp;<b>"], start=6, end=7,
              signal=9, reaped=False)
    # the collector stopped before this one ended: no EOF
    c.records = [r for r in c.records if not (r[2] == K_EOF and r[4] == 16)]
    return c


def test_bad_input():
    cap = capture("bad", bad_run)
    path = html(cap, "bad")
    with browser_pipe.Browser() as b:
        o = Opened(b, path)
        eq(o.problems(), [], "errors")
        check(o.ev("typeof window.pwned === 'undefined'"), "planted code ran")
        eq(o.ev("document.querySelectorAll('script').length"), 3,
           "script elements")
        eq(o.ev("proftrace.count"), 7, "executions")
        for argv, shown in (
                (["echo", "</script><script>window.pwned=3</script>"], None),
                (["say", "\"dq\" 'sq' `bq` $x", "two\nlines\r\n"], None),
                (["caf\ufffd", "\ufffd\ufffd ok", "\u2028\u2029"], None)):
            i = o.find(argv)
            tip, _ = o.hover(i)
            want = shown or " ".join(shlex.quote(a) for a in argv)
            check(want in tip, f"tooltip {tip!r} lacks {want!r}")
            o.ev(f"proftrace.select({i})")
            eq(o.ev("Array.from(document.querySelectorAll('#details ol li'))"
                    ".map(function (l) { return l.textContent; })"), argv,
               "argv in the details")
        big = o.find(["big", "x" * 100_000])
        tip, _ = o.hover(big)
        check(len(tip) < 6000 and "more characters" in tip, "big tooltip")
        notes = o.ev("document.getElementById('notes').textContent")
        check("no recorded end" in notes, f"notes: {notes}")
        unf = o.find(["unfinished", "&amp;<b>"])
        tip, _ = o.hover(unf)
        check("unfinished (no recorded end)" in tip, f"tooltip: {tip}")
        title = o.ev("document.title")
        check("</script>" in title, f"title as text: {title}")
        check(o.ev("typeof window.pwned === 'undefined'"), "planted code ran")
        eq(o.problems(), [], "errors after hovering")
        o.shots("bad")

    # an empty capture, and one with one execution
    empty = capture("empty", lambda: Capture(command="true"))
    one = capture("one", lambda: _one())
    with browser_pipe.Browser() as b:
        o = Opened(b, html(empty, "empty"))
        eq(o.problems(), [], "empty: errors")
        eq(o.ev("proftrace.count"), 0, "empty: executions")
        check("holds no executions" in
              o.ev("document.getElementById('notes').textContent"),
              "empty: says so")
        o.shots("empty")
        o = Opened(b, html(one, "one"))
        eq(o.problems(), [], "one: errors")
        eq(o.ev("proftrace.count"), 1, "one: executions")
        tip, _ = o.hover(0)
        check("true --version" in tip, f"one: {tip}")
        check_cp(o, one)


def _one():
    c = Capture(command="true")
    c.process(7, 1, ["true", "--version"], start=0, end=0.25)
    return c


def test_argv_budget():
    """Past 96 MB of command lines, the longest executions keep theirs,
    the others their label, and the page says so."""
    def build():
        c = Capture(command="big")
        c.process(10, 1, ["sh", "-c", "big"], start=0, end=100)
        for k in range(1, 61):
            c.process(10 + k, 10, ["big", chr(64 + k % 26) * (2 << 20) +
                                   str(k)], start=1, end=1 + k)
        return c
    cap = capture("budget", build)
    path = html(cap, "budget")
    with browser_pipe.Browser() as b:
        o = Opened(b, path, timeout=600)
        eq(o.problems(), [], "errors")
        eq(o.ev("proftrace.count"), 61, "executions")
        kept = o.ev("(function () { var k = []; for (var i = 0; i < "
                    "proftrace.count; i++) { var a = proftrace.argvOf(i);"
                    " if (a && a[0] === 'big') k.push(+a[1].slice("
                    "2 << 20)); } return k; })()")
        check(40 <= len(kept) <= 50, f"{len(kept)} command lines kept")
        eq(sorted(kept), list(range(61 - len(kept), 61)),
           "the longest executions keep their command lines")
        notes = o.ev("document.getElementById('notes').textContent")
        check(f"command lines of {60 - len(kept)} short executions are "
              "left out" in notes, f"notes: {notes}")
        short = o.ev("(function () { for (var i = 0; i < proftrace.count; "
                     "i++) if (!proftrace.argvOf(i)) return i; })()")
        tip, _ = o.hover(short)
        check("left out of this page" in tip, f"tooltip: {tip[:300]}")


def test_redact():
    """--redact masks the page's command lines too."""
    cap = capture("make", make_like)
    path = html(cap, "redacted", "--redact", "prog")
    with browser_pipe.Browser() as b:
        o = Opened(b, path)
        o.find(["ld", "-o", "***", "a.o", "b.o"])
        eq(o.ev("proftrace.search('prog')")["count"], 0, "prog found")


def test_record_and_daemon():
    """record --html and daemon --html write the page at the run's end."""
    if not ARGS.lib:
        raise viewlib.Failed("needs --lib")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PROFTRACE_SOCKET", "PROFTRACE_DIR")}
    env["PROFTRACE_LIB"] = ARGS.lib
    pt = ARGS.proftrace
    rcap, rpage = (os.path.join(TMP, "rec" + x) for x in (".ptcap", ".html"))
    subprocess.run([pt, "record", "-q", "-o", rcap, "--html", rpage, "--",
                    "sh", "-c", "sh -c 'exit 3'; true"], env=env, check=True)
    dcap, dpage = (os.path.join(TMP, "dmn" + x) for x in (".ptcap", ".html"))
    script = ('eval "$("$0" daemon -o "$1" --html "$2" --socket "$1.sock" '
              '--detach)" || exit 97; sh -c "exit 4"; "$0" stop >/dev/null')
    subprocess.run(["sh", "-c", script, pt, dcap, dpage], env=env, check=True,
                   cwd=TMP)
    with browser_pipe.Browser() as b:
        for cap, page, code in ((rcap, rpage, 3), (dcap, dpage, 4)):
            o = Opened(b, page)
            eq(o.problems(), [], f"{page}: errors")
            eq(o.ev("proftrace.count"), csv_rows(cap), f"{page}: executions")
            i = o.find(["sh", "-c", f"exit {code}"])
            tip, _ = o.hover(i)
            check(f"exit {code}" in tip.split("\n"), f"{page}: {tip}")


def test_sample_build():
    """The quick start's build: loads, counts, the report's path."""
    cap = sample_capture()
    path = html(cap, "sample")
    n = csv_rows(cap)
    with browser_pipe.Browser() as b:
        o = Opened(b, path)
        eq(o.problems(), [], "errors")
        eq(o.ev("proftrace.count"), n, "executions")
        check_cp(o, cap)
        check_layout(o)
        o.ev("proftrace.search('/^cc1? /')")
        shot = o.shots("sample")
        o.ev("proftrace.search('')")
        if ARGS.doc_image:
            o.page.screenshot(shot, 1000, 720)
            subprocess.run(["convert", shot, "-crop", "985x700+0+0",
                            "-colors", "32", "-strip", ARGS.doc_image],
                           check=True)


def test_large():
    """100,000 executions: loads, counts, zooms."""
    cap = synthetic_capture()
    n = csv_rows(cap)
    path = html(cap, "large")
    check(os.path.getsize(path) < 10 << 20, "over 10 MB")
    with browser_pipe.Browser() as b:
        o = Opened(b, path, timeout=600)
        eq(o.problems(), [], "errors")
        eq(o.ev("proftrace.count"), n, "executions")
        check_cp(o, cap)
        full = o.ev("proftrace.visibleRange()")
        r = o.ev("(function () { var t = document.getElementById('tl');"
                 " t.scrollIntoView(); var r = t.getBoundingClientRect();"
                 " return [r.left, r.top, r.width]; })()")
        o.page.wheel(r[0] + r[2] / 2, r[1] + 40, -600)
        z = o.ev("proftrace.visibleRange()")
        check(z[1] - z[0] < full[1] - full[0], "zoomed")
        o.shots("large")
        eq(o.problems(), [], "errors after zooming")


# ---- events programs wrote about themselves ----

EVIL = "</script><script>window.pwned=1</script> \"dq\" 'sq'\nline2"


def subs_run():
    """make (0-1000 s) runs a cc1 (100-102 s) that wrote a trace of
    itself, another cc1 that wrote none, and a program (300-302 s) whose
    events carry markup, quotes and newlines."""
    c = Capture(command="make")
    c.process(10, 1, ["make"], start=0, end=1000)
    c.process(11, 10, [CC1, "-quiet", "a.c"], start=100, end=102)
    c.process(12, 10, [CC1, "-quiet", "b.c"], start=200, end=201)
    c.process(13, 10, ["evil"], start=300, end=302)

    def x(name, at, dur, args=None, cat="clang"):
        e = {"name": name, "cat": cat, "ph": "X", "ts": c.epoch_us(at),
             "dur": dur * 1e6, "pid": 1, "tid": 1}
        if args is not None:
            e["args"] = args
        return e
    c.trace(11, [
        x("Frontend", 100.1, 1.0, {"detail": "a.c"}),
        x("Source", 100.2, 0.3, {"detail": "include/heavy.h"}),
        x("ParseClass", 100.25, 0.1, {"detail": "Big<int>", "n": 3}),
        x("Source", 100.6, 0.2, {"detail": "include/light.h"}),
        {"name": "mark", "cat": "test", "ph": "i", "ts": c.epoch_us(101.15),
         "pid": 1, "tid": 1, "s": "t"},
        {"name": "queue", "ph": "C", "ts": c.epoch_us(101.15), "pid": 1,
         "args": {"n": 7}},
        x("Backend", 101.2, 0.7),
        x("late", 105, 0.1),            # outside its writer: left out
    ])
    c.trace(13, [
        x(EVIL, 300.5, 1.0, {"detail": "</script><script>window.pwned=2"
                                       "</script>\nx", "q": "\"'"},
          cat='"c" <i>'),
        x("Source", 300.6, 0.4, {"detail": "include/heavy.h"}),
    ])
    return c


# By construction: (writer, start s, dur s, depth, ph, name, cat, args).
SUBS = [
    ("a.c", 100.1, 1.0, 0, "X", "Frontend", "clang", {"detail": "a.c"}),
    ("a.c", 100.2, 0.3, 1, "X", "Source", "clang",
     {"detail": "include/heavy.h"}),
    ("a.c", 100.25, 0.1, 2, "X", "ParseClass", "clang",
     {"detail": "Big<int>", "n": 3}),
    ("a.c", 100.6, 0.2, 1, "X", "Source", "clang",
     {"detail": "include/light.h"}),
    ("a.c", 101.15, 0, 0, "i", "mark", "test", None),
    ("a.c", 101.2, 0.7, 0, "X", "Backend", "clang", None),
    ("evil", 300.5, 1.0, 0, "X", EVIL, '"c" <i>',
     {"detail": "</script><script>window.pwned=2</script>\nx", "q": "\"'"}),
    ("evil", 300.6, 0.4, 1, "X", "Source", "clang",
     {"detail": "include/heavy.h"}),
]


def report_inside(cap):
    """`proftrace report`'s "Inside the programs": its count line and
    the rows of its two tables, [total, count, event(, subject)]."""
    text = run("report", "-w", "400", cap).decode()
    lines = viewlib.section(text, "Inside the programs (events")
    row = re.compile(r"  +([\d.]+) +(\d+)  (.*)$")
    names = [list(m.groups()) for m in map(row.match, lines) if m]
    subj = []
    for line in viewlib.section(text, "Inside the programs: what",
                                need=False) or []:
        m = row.match(line)
        if m:
            subj.append([m.group(1), m.group(2),
                         *m.group(3).split("  ", 1)])
    return lines[0].strip(), names, subj


def table_cells(o, kind):
    """The page's table of that kind, as shown: rows of cell texts."""
    o.ev(f"proftrace.table('{kind}')")
    return o.ev("Array.from(document.querySelectorAll('#table tr'))"
                ".slice(1).map(function (r) { return Array.from(r.cells)"
                ".map(function (c) { return c.textContent; }); })")


def as_report(s):
    """A string as the text report prints it: control characters as ?."""
    return re.sub(r"[\x00-\x1f\x7f]", "?", s)


def hover_sub(o, u):
    """Move the mouse onto event u where the page draws it; the tooltip
    and the point."""
    r = o.ev(f"proftrace.subRect({u})")
    check(r is not None, f"event {u} not drawn")
    x, y = r["x"] + max(r["w"], 1) / 2, r["y"] + r["h"] / 2
    o.page.mouse("mouseMoved", x, y)
    return o.ev("proftrace.tooltip()"), (x, y), r


def test_subs():
    """Events programs wrote: held, drawn, hovered, clicked, searched,
    added up as the report does; markup in them stays text."""
    cap = capture("subs", subs_run)
    path = html(cap, "subs")
    with browser_pipe.Browser() as b:
        o = Opened(b, path)
        eq(o.problems(), [], "errors and requests")
        eq(o.ev("proftrace.count"), 4, "executions")
        writer = {"a.c": o.find([CC1, "-quiet", "a.c"]),
                  "evil": o.find(["evil"])}
        got = o.ev("proftrace.subs()")
        eq(len(got), len(SUBS), "events in the page")
        for g, (ex, st, du, dp, ph, name, cat, args) in zip(got, SUBS):
            what = f"event {name!r} at {st} s"
            eq(g["exec"], writer[ex], what + ": its execution")
            eq((g["depth"], g["ph"], g["name"], g["cat"]),
               (dp, ph, name, cat), what)
            # epoch microseconds go through doubles: within 1 µs
            check(abs(g["start"] - st * 1e6) <= 1, f"{what}: {g['start']}")
            check(abs(g["dur"] - du * 1e6) <= 1, f"{what}: dur {g['dur']}")
            eq(None if g["args"] is None else json.loads(g["args"]), args,
               what + ": args")
        eq(o.ev("proftrace.subsInfo()"), {"total": 8, "kept": 8,
                                          "counters": 1, "argsOut": 0},
           "what the page says it holds")

        # zoomed out, the 2 s compile is a few pixels: nothing drawn
        eq(o.ev("proftrace.subsDrawn()"), 0, "events drawn zoomed out")
        o.ev("proftrace.zoom(100000000, 102000000)")
        eq(o.ev("proftrace.subsDrawn()"), 6, "events drawn zoomed in")
        left, width = o.ev("(function () { var t = document.getElementById("
                           "'tl').getBoundingClientRect(); return [t.left, "
                           "t.width]; })()")
        for k in (2, 1, 4):         # ParseClass, Source, the instant
            ex, st, du, dp, ph, name, cat, args = SUBS[k]
            tip, _, r = hover_sub(o, k)
            # where the time axis puts it, from the range shown
            v0, v1 = o.ev("proftrace.visibleRange()")
            want = left + (st * 1e6 - v0) * width / (v1 - v0)
            check(abs(r["x"] - want) <= 1.5,
                  f"{name} drawn at x {r['x']}, the axis puts it at {want}")
            check(tip is not None, f"no tooltip on {name}")
            lines = tip.split("\n")
            eq(lines[0], name, "the tooltip's event")
            if ph == "X":
                check(f"duration {du * 1000:.1f} ms, category {cat}"
                      in lines, f"duration in {lines}")
            for key, v in (args or {}).items():
                check(f"  {key}: {v}" in lines, f"args {key} in {lines}")
        # a click pins the event
        o.shots("subs")
        _, (x, y), _ = hover_sub(o, 1)
        o.page.click(x, y)
        eq(o.ev("proftrace.selectedSub()"), 1, "the event clicked")
        d = o.ev("proftrace.details()")
        check(d.startswith("Source") and "detail: include/heavy.h" in d,
              f"details: {d}")

        # the planted event: text everywhere, nothing ran
        o.ev("proftrace.zoom(300000000, 302000000)")
        tip, (x, y), _ = hover_sub(o, 6)
        check(tip.startswith(EVIL + "\n") and
              "detail: </script><script>window.pwned=2</script>\nx" in tip,
              f"tooltip: {tip!r}")
        o.page.click(x, y)
        eq(o.ev("document.querySelector('#details h3').textContent"), EVIL,
           "the event's name in the details")
        check(o.ev("typeof window.pwned === 'undefined'"), "planted code ran")
        eq(o.ev("document.querySelectorAll('script').length"), 3,
           "script elements")

        # the search finds events by name, and says so
        r = o.ev("proftrace.search('/^Source$/')")
        eq((r["count"], r["subs"]), (0, 3), "search for Source")
        check("; 3 events inside the programs" in
              o.ev("document.getElementById('matches').textContent"),
              "the search says it matched events")
        eq(o.ev("proftrace.search('pwned')")["subs"], 1, "search markup")
        o.ev("proftrace.search('')")

        # the table is the report's section
        count, names, subj = report_inside(cap)
        eq(count, "7 events from 2 executions", "the report's count")
        check(len(names) == 5 and len(subj) == 5, f"report: {names} {subj}")
        rows = table_cells(o, "inside")
        # and what was left out: the one event after its writer ended
        eq(o.ev("document.getElementById('table-note').textContent"),
           count + "; 1 event outside its writer's lifetime left out",
           "the table's count and what was left out")
        eq([[c[0], c[1], as_report(c[2])] for c in rows], names,
           "inside the programs: events")
        check([r for r in rows if r[2] == EVIL], "the name as text")
        rows = table_cells(o, "inside-subj")
        eq([[c[0], c[1], as_report(c[2]), as_report(c[3])] for c in rows],
           subj, "inside the programs: what they were about")
        eq(o.problems(), [], "errors after the interactions")


def test_subs_cap():
    """More events than a page holds: the longest are kept, and the page
    says how many were left out."""
    n, extra = 100_000, 50

    def build():
        c = Capture(command="big")
        c.process(10, 1, ["cc1", "big.c"], start=0, end=600)
        evs, t = [], 1.0
        for k in range(n + extra):
            d = 10 * (k % 1000 + 1)         # µs: 101 of them are 10 µs
            evs.append({"name": f"e{k % 7}", "ph": "X", "ts": c.epoch_us(t),
                        "dur": d, "pid": 1, "tid": 1})
            t += d / 1e6
        c.trace(10, evs)
        return c
    cap = capture("subs-cap", build)
    path = html(cap, "subs-cap")
    with browser_pipe.Browser() as b:
        o = Opened(b, path, timeout=600)
        eq(o.problems(), [], "errors")
        info = o.ev("proftrace.subsInfo()")
        eq((info["total"], info["kept"]), (n + extra, n), "events kept")
        durs = o.ev("proftrace.subs().map(function (s) { return s.dur; })")
        eq(len(durs), n, "events in the page")
        # the 50 left out are of the 101 shortest; every longer one is in
        eq(sum(1 for d in durs if d < 15), 101 - extra, "shortest kept")
        notes = o.ev("document.getElementById('notes').textContent")
        check(f"holds the {n} longest of the {n + extra} events" in notes,
              f"notes: {notes}")


def options(ap):
    ap.add_argument("--out", help="keep the screenshots here")
    ap.add_argument("--doc-image", help="write the doc's screenshot here")


if __name__ == "__main__":
    sys.exit(viewlib.main(globals(), options))
