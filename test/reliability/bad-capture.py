#!/usr/bin/env python3
"""Bad input: a truncated or bit-flipped capture, a truncated spool file.

Guarantee (doc/reliability.md, B3): convert delivers every intact record
before the damage, names the byte (of the uncompressed stream) where the
damage starts, and exits 1; damage is never silent.  Checked exactly:
 - truncation at many points: the record count and byte offset convert
   reports equal those of the last whole record Python's zlib can decode
   from the same bytes, and every execution it outputs is one of the
   undamaged capture's (same pid and command);
 - a damaged record (kind, length, a frame's tail): the offset reported
   is that record's, with exactly the records before it delivered;
 - a file header claiming 2 GiB: refused at once, in bounded memory;
 - a bit flipped anywhere in the gzip file: exit 1 naming the byte where
   the damage starts (or where a stream the flip made longer is cut
   off), with at least every record Python's zlib decodes before it
   delivered (all of them when the flip is in the trailer's CRC-32 or
   length), and, when all the records delivered are intact, only the
   capture's executions; or (a flip in a header field gzip does not
   check) an output identical to the undamaged one;
 - a spool file cut in the middle of a frame: exit 1 naming the file, and
   the other files' executions all converted.
"""

import gzip
import os
import random
import re
import resource
import struct

import ptrel
from ptrel import check, log

MSG = re.compile(r"(truncated|corrupt) at byte (\d+) \(after (\d+) records\)")


def key(r):
    # Not the start: known only from the parent's EXEC when the image's
    # own HELLO is past the damage, it may differ by the exec's duration.
    return (r["pid"], r["command"])


def check_from_capture(rows, full, what):
    """Every execution converted from a damaged capture is one of the
    undamaged capture's executions `full`.  A forked child whose exec lies
    past the damage is, as far as the intact part knows, a fork that never
    exec'd: in the whole capture that fork phase is folded into the program
    it exec'd.  One whose parent's HELLO lies past it (the collector reads
    the connections of a round in any order) has no program to inherit: it
    comes out with an empty command."""
    fullkeys = {key(x) for x in full}
    exec_pids = {x["pid"] for x in full if x["type"] == "exec"}
    fork_pids = {x["pid"] for x in full if x["type"] == "fork"}
    extra = [x for x in rows if key(x) not in fullkeys and
             not (x["type"] == "fork" and x["pid"] in exec_pids) and
             not (x["type"] == "fork" and x["command"] == "''" and
                  x["pid"] in fork_pids)]
    check(not extra, "%s: executions not in the capture: %s"
          % (what, extra[:2]))


def conv(a, path):
    rc, out, err = ptrel.convert(a, path)
    check(rc in (0, 1), "convert crashed or failed oddly (%d) on %s: %s"
          % (rc, path, err))
    return rc, ptrel.csv_rows(out), err


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("cap")
    cap = d + "/good.ptcap"
    r = ptrel.run([a.proftrace, "record", "-q", "-o", cap, "--", "sh", "-c",
                   "for i in $(seq 30); do /bin/echo x$i; done | cat >/dev/null;"
                   " (cd /tmp && ls >/dev/null)"], env=ptrel.untraced_env())
    check(r.returncode == 0, "record failed: " + r.stderr.decode())
    data = open(cap, "rb").read()
    raw = gzip.decompress(data)
    recs, end = ptrel.parse_records(raw)
    check(end == len(raw), "the test's own parser disagrees with the capture")
    rc, full, err = conv(a, cap)
    check(rc == 0, "the undamaged capture does not convert: " + err)
    fullkeys = {key(x) for x in full}
    log("capture: %d bytes gzip, %d uncompressed, %d records, %d executions"
        % (len(data), len(raw), len(recs), len(full)))

    # ---- truncation ----
    cuts = sorted({10, 20, len(data) // 8, len(data) // 4, len(data) // 3,
                   len(data) // 2, 2 * len(data) // 3, 3 * len(data) // 4,
                   7 * len(data) // 8, len(data) - 9, len(data) - 8,
                   len(data) - 1})
    for cut in cuts:
        path = "%s/cut-%d.ptcap" % (d, cut)
        with open(path, "wb") as f:
            f.write(data[:cut])
        prefix, _ = ptrel.gunzip_prefix(data[:cut])
        want_recs, want_off = ptrel.parse_records(prefix)
        rc, rows, err = conv(a, path)
        check(rc == 1, "cut at %d: convert exited %d, not 1" % (cut, rc))
        m = MSG.search(err)
        check(m, "cut at %d: no damage offset in: %s" % (cut, err))
        off, n = int(m.group(2)), int(m.group(3))
        if want_off >= 16:
            check((off, n) == (want_off, len(want_recs)),
                  "cut at %d: convert says byte %d after %d records; the "
                  "intact prefix ends at byte %d after %d records"
                  % (cut, off, n, want_off, len(want_recs)))
        check_from_capture(rows, full, "cut at %d" % cut)
        if cut >= len(data) - 8:
            check({key(x) for x in rows} == fullkeys,
                  "cut at %d (only the gzip trailer lost): executions lost"
                  % cut)
        log("cut at %5d of %d: exit 1, %s at byte %d after %d records, %d "
            "executions" % (cut, len(data), m.group(1), off, n, len(rows)))

    # ---- damaged record and frame headers ----
    # A frame whose last byte ends a string of its tail.
    k = len(recs) // 2
    while recs[k]["kind"] != ptrel.K_FRAME or raw[recs[k]["end"] - 1] != 0:
        k += 1
    rec = recs[k]
    for what, pos, val in (
            ("record kind and flags", rec["off"], b"\x4f"),
            ("record length", rec["off"] + 1, b"\xff\xff\xff\xff\x0f"),
            ("frame tail", rec["end"] - 1, b"X")):
        bad = bytearray(raw)
        bad[pos:pos + len(val)] = val
        path = "%s/hdr-%s.ptcap" % (d, what.replace(" ", "-"))
        with open(path, "wb") as f:
            f.write(gzip.compress(bytes(bad)))
        rc, rows, err = conv(a, path)
        m = MSG.search(err)
        check(rc == 1 and m and m.group(1) == "corrupt",
              "%s damaged: exit %d, %s" % (what, rc, err))
        check((int(m.group(2)), int(m.group(3))) == (rec["off"], k),
              "%s damaged in record %d at byte %d: convert says byte %s "
              "after %s records" % (what, k, rec["off"], m.group(2),
                                    m.group(3)))
        log("%s damaged at byte %d: exit 1, reported at byte %s after %s "
            "records" % (what, pos, m.group(2), m.group(3)))

    # ---- a header size of 2 GiB (found by fuzzing) ----
    # Before the fix, convert tried to buffer the whole header first: with
    # its address space capped at 512 MiB it died "out of memory".
    bad = bytearray(raw[:200])
    bad[12:16] = struct.pack("<I", 0x80808080)
    path = d + "/hdrsize.ptcap"
    with open(path, "wb") as f:
        f.write(gzip.compress(bytes(bad)))
    with open(a.proftrace, "rb") as f:
        asan = b"__asan_init" in f.read()
    # (ASan reserves terabytes of address space for its shadow: no cap.)
    r = ptrel.run([a.proftrace, "convert", path], env=ptrel.untraced_env(),
                  preexec_fn=None if asan else lambda: resource.setrlimit(
                      resource.RLIMIT_AS, (512 << 20, 512 << 20)))
    err = r.stderr.decode()
    check(r.returncode == 1 and "header size" in err,
          "a 2 GiB header size: exit %d, %s" % (r.returncode, err))
    log("header size of 2 GiB: " + err.strip())

    # ---- bit flips in the gzip file ----
    # Every byte inflate produced before the damage is kept: gzread, which
    # drops a whole call's output on a data error, lost all of a capture
    # this small to one flipped bit, or to a wrong CRC-32 after intact data.
    rnd = random.Random(1)
    positions = sorted({rnd.randrange(len(data)) for _ in range(60)} |
                       set(range(0, 10)) | set(range(len(data) - 8,
                                                     len(data))))
    caught = same = 0
    for pos in positions:
        bad = bytearray(data)
        bad[pos] ^= 1 << rnd.randrange(8)
        path = d + "/flip.ptcap"
        with open(path, "wb") as f:
            f.write(bad)
        rc, rows, err = ptrel.convert(a, path)
        rows = ptrel.csv_rows(rows)
        check(rc in (0, 1), "flip at %d: convert exited %d: %s"
              % (pos, rc, err))
        if rc == 0:
            check({key(x) for x in rows} == fullkeys,
                  "flip at byte %d of the gzip file went unnoticed and "
                  "changed the output" % pos)
            same += 1
            continue
        caught += 1
        if pos < 2:
            # Not the gzip magic any more: some other file.
            check("not a proftrace capture" in err,
                  "flip in the gzip magic: %s" % err)
            continue
        if pos == 3 and "not a proftrace capture" in err:
            # FNAME or FCOMMENT set in the flags: gzip takes the deflate
            # data up to a NUL for a file name, and what it inflates after
            # that is no capture.
            continue
        m = MSG.search(err)
        # "truncated": a flip can also turn the deflate stream into one
        # that goes on past the file's end (a length, a block's BFINAL
        # bit, FEXTRA's length in the gzip header).
        check(m, "flip at %d: exit 1 without saying where: %s" % (pos, err))
        off, n = int(m.group(2)), int(m.group(3))
        if pos >= len(data) - 8:
            # The trailer's CRC-32 or length: every record was intact.
            check((off, n) == (len(raw), len(recs)) and
                  {key(x) for x in rows} == fullkeys,
                  "flip at %d in the gzip trailer: byte %d after %d "
                  "records and %d executions, not the whole capture (byte "
                  "%d, %d records, %d executions)" % (
                      pos, off, n, len(rows), len(raw), len(recs),
                      len(fullkeys)))
            continue
        # A flipped literal inflates to other bytes without an error
        # (only the CRC-32 at the end tells): the records intact are those
        # wholly inside what inflates as the undamaged capture did.
        prefix, _ = ptrel.gunzip_prefix(bytes(bad))
        same_len = next((i for i, (x, y) in enumerate(zip(prefix, raw))
                         if x != y), min(len(prefix), len(raw)))
        intact = sum(1 for x in recs if x["end"] <= same_len)
        check(n >= intact,
              "flip at %d: %d records delivered, but %d precede the "
              "damage" % (pos, n, intact))
        # Only when every record delivered is intact must its executions
        # be the capture's.  One holding flipped literals is delivered as
        # any other: a HELLO whose tail became an unknown tag (skipped, as
        # doc/format.md says) is an execution without exe, command or cwd.
        if n > intact:
            continue
        check_from_capture(rows, full, "flip at %d" % pos)
    log("%d single-bit flips in the gzip file: %d reported (exit 1) with "
        "every record before the damage delivered, %d harmless (gzip "
        "header fields; output unchanged)" % (len(positions), caught, same))

    # ---- spool files ----
    spool = d + "/spool"
    os.mkdir(spool, 0o700)
    r = ptrel.run(["sh", "-c", "/bin/echo one; /bin/echo two; /bin/echo "
                   "three"], env=ptrel.traced_env(a.lib, d + "/none", spool))
    check(r.returncode == 0, "the spooled command failed")
    files = sorted(os.listdir(spool), key=lambda f: -os.path.getsize(
        os.path.join(spool, f)))
    check(len(files) >= 4, "want a spool file per process: %s" % files)
    victim = os.path.join(spool, files[0])
    size = os.path.getsize(victim)
    with open(victim, "r+b") as f:
        f.truncate(size - 5)
    rc, rows, err = conv(a, spool)
    check(rc == 1 and files[0] in err and "at byte" in err,
          "truncated spool file: exit %d, %s" % (rc, err))
    cmds = {x["command"] for x in rows}
    check({"/bin/echo one", "/bin/echo two", "/bin/echo three"} <= cmds,
          "executions of the undamaged spool files lost: %s" % cmds)
    log("spool file cut: exit 1, " + err.strip().replace("\n", " / "))
    log("PASS")


if __name__ == "__main__":
    main()
