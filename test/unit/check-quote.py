#!/usr/bin/env python3
"""Check pt_quote_shell against Python's shlex.split(), and pt_quote_json
against Python's json module.

    check-quote.py TEST-QUOTE-BINARY

Runs `TEST-QUOTE-BINARY --emit`, which prints NUL-separated pairs (a string,
its quoted form) and then all the strings quoted as one command line.  Each
quoted form must split back to exactly its string, and the command line to
the whole list.  Bytes that are not UTF-8 travel as surrogate escapes.
"""

import json
import shlex
import subprocess
import sys


def expected(raw):
    """What a JSON string of raw reads back as: each byte that is not
    part of valid UTF-8 is U+FFFD."""
    out, i = [], 0
    while i < len(raw):
        for n in (1, 2, 3, 4):
            try:
                out.append(raw[i:i + n].decode("utf-8"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def check_json(binary):
    """Each style's output parses as one JSON string holding the input; a
    script's holds nothing that could end a <script> element or, before
    ES2019, a JavaScript string."""
    out = subprocess.run([binary, "--json"], check=True,
                         stdout=subprocess.PIPE).stdout
    fields = out.split(b"\0")[:-1]
    bad = n = 0
    for style, raw, quoted in zip(fields[0::3], fields[1::3], fields[2::3]):
        n += 1
        try:
            text = quoted.decode("utf-8")
            got = json.loads(text)
        except ValueError as e:
            print("FAIL: style %s: %r quoted as %r: %s" % (style, raw, quoted, e))
            bad += 1
            continue
        if got != expected(raw):
            print("FAIL: style %s: %r reads back as %r" % (style, raw, got))
            bad += 1
        if style == b"1" and any(c in text for c in "<>&\u2028\u2029"):
            print("FAIL: %r in a script as %r" % (raw, text))
            bad += 1
    print("%s: %d JSON strings checked, %d failure(s)"
          % ("FAIL" if bad else "ok", n, bad))
    return bad


def main():
    out = subprocess.run([sys.argv[1], "--emit"], check=True,
                         stdout=subprocess.PIPE).stdout
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    line = fields.pop()
    pairs = list(zip(fields[0::2], fields[1::2]))
    bad = 0
    for orig, quoted in pairs:
        got = shlex.split(quoted)
        if got != [orig]:
            print("FAIL: %r quoted as %r splits to %r" % (orig, quoted, got))
            bad += 1
    origs = [o for o, _ in pairs]
    if shlex.split(line) != origs:
        print("FAIL: the joined command line splits to %r" % shlex.split(line))
        bad += 1
    print("%s: %d strings checked, %d failure(s)"
          % ("FAIL" if bad else "ok", len(pairs), bad))
    bad += check_json(sys.argv[1])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
