#!/usr/bin/env python3
"""The SVG flame graph (`proftrace convert -f svg`), read as its readers do.

    test-svg.py --proftrace BIN [--lib LIBPROFTRACE] [--sample DIR]
                [--gencapture BIN] [--out DIR] [--doc-image PNG] [-k NAME]

Each SVG is parsed as XML (xml.dom.minidom and ElementTree); each frame's
stack is rebuilt from the parsed file alone (its parents' labels) and its
value and rect width are checked against the folded stacks of the same
capture (`convert -f folded`), on captures built by construction
(mkcapture.py), on the sample build recorded here (with --lib and
--sample) and on a 100,000-execution synthetic build (--gencapture).  Then a headless Chromium (browser_pipe.py) loads the files:
no console error or exception, a screenshot that is not blank, and
hovering, clicking (zoom), searching and resetting do what a user sees.
--out keeps the screenshots; --doc-image writes the sample build's one,
shrunk, for doc/views.md.

Without Chromium the browser tests fail: tools/install-deps.sh installs it.
The last line counts the results: "N passed, N failed".
"""

import os
import re
import subprocess
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import browser_pipe  # noqa: E402
from mkcapture import Capture  # noqa: E402
from viewlib import (capture, check, eq, host_a, host_b,  # noqa: E402
                     make_like, random_run, run, sample_capture,
                     synthetic_capture)
import viewlib  # noqa: E402

ARGS = None
TMP = None
NS = "{http://www.w3.org/2000/svg}"
WIDTH, PAD = 1200, 10


def folded(cap, weight):
    """The folded stacks, with U+FFFE and U+FFFF (which XML cannot hold,
    so the SVG shows U+FFFD) as U+FFFD."""
    return folded_lines(run("convert", "-f", "folded", "--weight", weight,
                            cap))


def folded_lines(data):
    text = data.decode("utf-8")
    out = {}
    for line in text.splitlines():
        stack, w = re.fullmatch(r"(.+) (\d+)", line).groups()
        stack = re.sub("[\ufffe\uffff]", "\ufffd", stack)
        check(stack not in out, f"{stack!r} twice")
        out[stack] = int(w)
    return out


def svg(cap, weight, name="t"):
    path = os.path.join(TMP, f"{name}-{weight}.svg")
    args = ["convert", "-f", "svg", "--force", "-o", path, cap]
    if weight != "wall":
        args[3:3] = ["--weight", weight]
    run(*args)
    return path


def frames(path):
    """The frames of an SVG as dicts: id, parent, value, offset, label,
    stack (labels from the top frame down, ';'-joined), x, width."""
    xml.dom.minidom.parse(path)             # a second, strict parser
    root = ET.parse(path).getroot()
    eq(root.tag, NS + "svg", "root element")
    out, by_id = [], {}
    for g in root.iter(NS + "g"):
        if g.get("class") != "f":
            continue
        title = g.find(NS + "title")
        rect = g.find(NS + "rect")
        # a tooltip on the frames one can point at, and only on them
        check((title is not None) == (float(rect.get("width")) >= 1),
              f"{g.get('id')}: title")
        if title is not None:
            eq(title.text.split("\n")[0], g.get("data-l"), "title")
        f = {"id": g.get("id"), "parent": g.get("data-p"),
             "value": int(g.get("data-v")), "offset": int(g.get("data-o")),
             "label": g.get("data-l"), "x": float(rect.get("x")),
             "width": float(rect.get("width"))}
        if f["parent"] is None:
            f["stack"] = None               # the root, "all"
        else:
            check(f["parent"] in by_id, f"{f['id']}: parent comes later")
            p = by_id[f["parent"]]["stack"]
            f["stack"] = f["label"] if p is None else p + ";" + f["label"]
        by_id[f["id"]] = f
        out.append(f)
    return out


def check_against_folded(cap, weight, complete=True):
    """Every frame's value is the sum of the folded weights of the stacks
    it begins; widths and offsets are to scale; with complete, every
    stack prefix of the folded output is a frame."""
    fl = folded(cap, weight)
    fs = frames(svg(cap, weight))
    root = fs[0]
    eq(root["stack"], None, "first frame is the root")
    eq(root["value"], sum(fl.values()), "root value")
    scale = (WIDTH - 2 * PAD) / root["value"] if root["value"] else 0
    want = prefix_sums(fl)
    seen = set()
    for f in fs[1:]:
        s = f["stack"]
        check(s not in seen, f"stack twice: {s!r}")
        seen.add(s)
        eq(f["value"], want.get(s), f"value of {s!r}")
        check(abs(f["width"] - f["value"] * scale) <= 0.002,
              f"{s!r}: width {f['width']} for value {f['value']}")
        check(abs(f["x"] - PAD - f["offset"] * scale) <= 0.002,
              f"{s!r}: x {f['x']} for offset {f['offset']}")
    # siblings side by side, inside their parent
    kids = {}
    by_id = {f["id"]: f for f in fs}
    for f in fs[1:]:
        kids.setdefault(f["parent"], []).append(f)
    for pid, ks in kids.items():
        p = by_id[pid]
        end = p["offset"]
        for k in sorted(ks, key=lambda k: k["offset"]):
            check(k["offset"] >= end, f"{k['stack']!r} overlaps a sibling")
            end = k["offset"] + k["value"]
        check(end <= p["offset"] + p["value"], f"children of {pid} spill")
    if complete:
        eq(seen, set(want), "frames = stack prefixes")
    else:
        # a frame is left out only when it is narrower than 0.01 px
        for p, v in want.items():
            check(p in seen or v * scale < 0.01, f"{p!r} ({v}) left out")
    return fs, fl


def prefix_sums(fl):
    """Each stack prefix of the folded lines with the sum of the weights
    of the lines that start with it."""
    out = {}
    for k, w in fl.items():
        parts = k.split(";")
        for i in range(len(parts)):
            p = ";".join(parts[:i + 1])
            out[p] = out.get(p, 0) + w
    return out


# ---- the runs ----

def repeated():
    """sh [0,20] runs `cc x.c` eight times (identical stacks merge) and
    a deep chain of nested shells."""
    c = Capture(host="rep")
    c.process(200, 1, ["sh", "-c", "loop"], start=0, end=20)
    for i in range(8):
        c.process(201 + i, 200, ["cc", "-c", "x.c"], start=i, end=i + 0.75,
                  reaped=False)
    for i in range(20):
        c.process(300 + i, 299 + i if i else 200, ["sh", f"l{i}"],
                  start=10 + i * 0.1, end=19 - i * 0.1, reaped=False)
    return c


NASTY = ["<script>pwned=1</script>", "a&b&amp;", "]]>", "x]]>y<![CDATA[",
         "\"dq\" 'sq'", b"caf\xe9 \xff\xfe", "\ufffe\uffff".encode(
             "utf-8", "surrogatepass"), "ctl\x01\x0b\x1b[31m", "semi;colon",
         "<!-- c -->", "</svg>"]


def nasty():
    c = Capture(host="h<&>\"'", command="sh -c '</text><script>pwned=1"
                "</script> ]]> \xe9'")
    c.process(500, 1, ["sh", "-c", "<b>&amp; ]]>"], start=0, end=5)
    for i, a in enumerate(NASTY):
        c.process(501 + i, 500, [a, a], start=0.1 + 0.4 * i,
                  end=0.4 + 0.4 * i, exe=a if isinstance(a, str) else None,
                  cpu=(0.1, 0.0))
    return c


# ---- the tests ----

def test_make_frames():
    cap = capture("make", make_like)
    fs, _ = check_against_folded(cap, "wall")
    got = {f["stack"]: f["value"] for f in fs[1:]}
    # by construction: self times in µs, summed up the tree
    eq(got, {"make": 13_000_000, "make;cc a.c": 3_000_000,
             "make;cc a.c;cc1 a.c": 2_000_000, "make;cc b.c": 5_000_000,
             "make;cc b.c;cc1 b.c": 3_500_000, "make;ld prog": 2_500_000},
       "wall values")
    fs, _ = check_against_folded(cap, "cpu")
    got = {f["stack"]: f["value"] for f in fs[1:]}
    eq(got, {"make": 6_725_000, "make;cc a.c": 2_350_000,
             "make;cc a.c;cc1 a.c": 1_750_000, "make;cc b.c": 3_125_000,
             "make;cc b.c;cc1 b.c": 3_125_000, "make;ld prog": 1_250_000},
       "cpu values")


def test_merged_and_deep():
    fs, fl = check_against_folded(capture("rep", repeated), "wall")
    cc = [f for f in fs if f["label"] == "cc x.c"]
    eq(len(cc), 1, "eight identical stacks, one frame")
    eq(cc[0]["value"], 8 * 750_000, "merged value")
    check(max(f["stack"].count(";") for f in fs[1:]) == 20, "depth")


def test_random():
    for seed in range(4):
        cap = capture(f"random{seed}", lambda: random_run(seed))
        for w in ("wall", "cpu"):
            check_against_folded(cap, w)


def test_two_captures():
    ca, cb = capture("alpha", host_a), capture("beta", host_b)
    path = os.path.join(TMP, "two.svg")
    run("convert", "-f", "svg", "--force", "-o", path, ca, cb)
    fs = frames(path)
    eq(sorted(f["stack"] for f in fs[1:]),
       ["capture 1 alpha", "capture 1 alpha;build-a", "capture 2 beta",
        "capture 2 beta;build-b"], "a frame per capture")


def test_weight_option():
    cap = capture("make", make_like)
    eq(folded(cap, "cpu"), folded_lines(run("convert", "-f", "folded-cpu",
                                            cap)), "folded --weight cpu")
    for args in (["-f", "csv", "--weight", "cpu"], ["-f", "svg", "--weight",
                                                    "nope"]):
        p = subprocess.run([ARGS.proftrace, "convert"] + args + [cap],
                           capture_output=True)
        eq(p.returncode, 2, " ".join(args))


def test_empty():
    cap = capture("empty", lambda: Capture(host="empty"))
    fs = frames(svg(cap, "wall"))
    eq([(f["stack"], f["value"]) for f in fs], [(None, 0)], "only the root")


def test_escaping():
    cap = capture("nasty", nasty)
    for w in ("wall", "cpu"):
        path = svg(cap, w)
        fs, fl = check_against_folded(cap, w)
        root = ET.parse(path).getroot()
        eq(len(root.findall(f".//{NS}script")), 1, "scripts")
        tags = {el.tag for el in root.iter()}
        eq(tags, {NS + t for t in ("svg", "style", "rect", "text", "g",
                                   "title", "script")}, "element kinds")
        for el in root.iter(NS + "text"):
            eq(list(el), [], "markup inside a text")
        labels = {f["label"] for f in fs}
        check(any("<script>pwned=1</script>" in lab for lab in labels),
              f"label kept as text: {sorted(labels)}")
        check(any("]]>" in lab for lab in labels), "]]> kept as text")
        check(any("\ufffd" in lab for lab in labels), "bad UTF-8 replaced")
        sub = [el.text for el in root.iter(NS + "text")
               if el.get("class") == "sub"]
        check("</text><script>pwned=1</script> ]]>" in sub[0], sub[0])
        check("h<&>\"'" in sub[0], sub[0])


def test_big_command_line():
    def big():
        c = Capture(host="big")
        c.process(600, 1, ["sh", "-c", "echo " + "x<&" * 40000],
                  start=0, end=1)
        return c
    fs, _ = check_against_folded(capture("bigcmd", big), "wall")
    check(all(len(f["label"].encode()) <= 64 for f in fs), "labels capped")


def test_sample_build():
    cap = sample_capture()
    for w in ("wall", "cpu"):
        fs, fl = check_against_folded(cap, w, complete=False)
        check(len(fs) > 50, f"{len(fs)} frames")


def test_large():
    """100,000 executions (bench/gencapture): frames agree with the folded
    stacks, the file loads in Chromium with no error and zooms."""
    cap = synthetic_capture()
    fs, fl = check_against_folded(cap, "wall", complete=False)
    path = svg(cap, "wall", "large")
    with browser_pipe.Browser() as b:
        page = b.open("file://" + path, timeout=600)
        eq(page.errors, [], "console errors")
        big = max(fs[1:], key=lambda f: (f["stack"].count(";"),
                                         f["value"]))
        page.eval(f"zoom(byId['{big['id']}'])")
        vis = {i: w for i, x, w in visible(page)}
        eq(vis[big["id"]], WIDTH - 2 * PAD, "zoomed frame spans the width")
        eq(page.errors + b.page_errors(page.session), [], "errors")


def colours(png):
    """Distinct colours in a PNG (ImageMagick)."""
    p = subprocess.run(["convert", png, "-format", "%k", "info:"],
                       capture_output=True, text=True, check=True)
    return int(p.stdout.strip())


def centre(page, fid):
    return page.eval(f"(function () {{ var r = document.getElementById("
                     f"'{fid}').querySelector('rect').getBoundingClientRect();"
                     f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")


def visible(page):
    return page.eval("[].filter.call(document.querySelectorAll('g.f'), "
                     "function (g) { return getComputedStyle(g).display "
                     "!== 'none'; }).map(function (g) { return [g.id, "
                     "+g.querySelector('rect').getAttribute('x'), "
                     "+g.querySelector('rect').getAttribute('width')]; })")


def text_of(page, eid):
    return page.eval(f"document.getElementById('{eid}').textContent")


def test_browser():
    cap = capture("make", make_like)
    path = svg(cap, "wall", "browser")
    fs = {f["stack"]: f for f in frames(path)}
    fl = folded(cap, "wall")
    out = ARGS.out or TMP
    os.makedirs(out, exist_ok=True)
    with browser_pipe.Browser() as b:
        page = b.open("file://" + path)
        eq(page.errors, [], "console errors")
        shot = os.path.join(out, "svg-make-1280x800.png")
        page.screenshot(shot)
        check(colours(shot) >= 8, "screenshot is blank")

        # hover: the details line names the frame, its time and share
        x, y = centre(page, fs["make;cc b.c;cc1 b.c"]["id"])
        page.mouse("mouseMoved", x, y)
        eq(text_of(page, "details"), "cc1 b.c: 3.500 s, 26.9 %", "hover")

        # click: zoom to cc b.c, which spans the width; only its
        # ancestors and descendants stay, to scale
        z = fs["make;cc b.c"]
        x, y = centre(page, z["id"])
        page.click(x, y)
        vis = {i: (x, w) for i, x, w in visible(page)}
        want = {fs[s]["id"] for s in (None, "make", "make;cc b.c",
                                      "make;cc b.c;cc1 b.c")}
        eq(set(vis), want, "frames shown after zoom")
        full = WIDTH - 2 * PAD
        eq(vis[z["id"]], (PAD, full), "zoomed frame spans the width")
        c = fs["make;cc b.c;cc1 b.c"]
        cx, cw = vis[c["id"]]
        # children from the left edge, the parent's own time after them
        check(abs(cw - full * 3.5 / 5) < 0.01 and abs(cx - PAD) < 0.01,
              f"child {cx} {cw}")
        check("hide" not in page.eval(
            "document.getElementById('unzoom').getAttribute('class')"),
            "reset button shown")

        # reset: everything back where the file drew it
        x, y = page.eval("(function () { var r = document.getElementById("
                         "'unzoom').getBBox(); return [r.x + 5, r.y + 5]; "
                         "})()")
        page.click(x, y)
        vis = {i: (x, w) for i, x, w in visible(page)}
        eq(set(vis), {f["id"] for f in fs.values()}, "all frames after reset")
        for f in fs.values():
            check(abs(vis[f["id"]][1] - f["width"]) < 0.002, "width reset")

        # search: the matched share is that of the stacks holding a match
        page.eval("search(new RegExp('^cc'))")
        hit = sum(w for k, w in fl.items()
                  if any(re.search("^cc", p) for p in k.split(";")))
        total = sum(fl.values())
        eq(text_of(page, "matched"),
           f"Matched: {100 * hit / total:.1f} % ({hit / 1e6:.3f} s, "
           f"4 frames)", "search")
        fills = page.eval("[].map.call(document.querySelectorAll('g.f rect')"
                          ", function (r) { return r.getAttribute('fill'); })")
        eq(fills.count("rgb(230,0,230)"), 4, "highlighted frames")
        page.eval("document.dispatchEvent(new KeyboardEvent('keydown', "
                  "{key: 'Escape'}))")
        eq(text_of(page, "matched"), "", "search reset")
        eq(page.errors + b.page_errors(page.session), [], "errors")

        # a state to open in, from the URL
        page = b.open("file://" + path + "#z=" + z["id"] + "&s=ld")
        eq(page.errors, [], "console errors")
        eq(len(visible(page)), 4, "zoomed from the URL")
        check(text_of(page, "matched").startswith("Matched: 19.2 %"),
              text_of(page, "matched"))

        # the nasty strings and the sample build load without an error
        for cap2, name in ((capture("nasty", nasty), "nasty"),
                           (sample_capture() if ARGS.lib and ARGS.sample
                            else None, "sample")):
            if not cap2:
                continue
            for w in ("wall", "cpu"):
                p2 = svg(cap2, w, "browser-" + name)
                page = b.open("file://" + p2)
                eq(page.errors, [], f"{name} {w}: console errors")
                check(page.eval("typeof pwned === 'undefined'"),
                      "script from a label ran")
                shot = os.path.join(out, f"svg-{name}-{w}-1280x800.png")
                page.screenshot(shot)
                check(colours(shot) >= 8, f"{shot} is blank")
                if name == "sample" and w == "wall" and ARGS.doc_image:
                    subprocess.run(["convert", shot, "-trim", "-colors",
                                    "64", "-strip", ARGS.doc_image],
                                   check=True)


def options(ap):
    ap.add_argument("--out", help="keep the screenshots here")
    ap.add_argument("--doc-image", help="write the doc's screenshot here")


if __name__ == "__main__":
    sys.exit(viewlib.main(globals(), options))
