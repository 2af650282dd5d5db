#!/usr/bin/env python3
"""Check pt_quote_shell against Python's shlex.split().

    check-quote.py TEST-QUOTE-BINARY

Runs `TEST-QUOTE-BINARY --emit`, which prints NUL-separated pairs (a string,
its quoted form) and then all the strings quoted as one command line.  Each
quoted form must split back to exactly its string, and the command line to
the whole list.  Bytes that are not UTF-8 travel as surrogate escapes.
"""

import shlex
import subprocess
import sys


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
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
