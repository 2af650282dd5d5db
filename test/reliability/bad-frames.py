#!/usr/bin/env python3
"""Bad input: malformed frames over the collector's socket.

Guarantee (doc/reliability.md, B2): each kind of malformed input drops
that one connection, with its reason in the collector's log and a DROP
record (or, for a frame cut short by EOF, a LOSS record) in the capture;
the collector and every other connection go on.  A well-behaved client
connected through it all sends a frame between any two bad peers, and
the capture must hold every one of its frames, byte for byte, in order.
Then a real traced program is still recorded.

    bad-frames.py --proftrace BIN --lib LIB [--wrapper 'valgrind ...']

--wrapper runs the daemon under a checker (valgrind, or nothing for a
sanitizer build, whose reports fail the daemon's exit status).
"""

import os
import random
import shlex
import socket
import time
import zlib

import ptrel
from ptrel import check, log, frame, hello, HELLO

PID = 3999999                   # the good client's frames say this pid


def extra(p):
    p.add_argument("--wrapper", default="")


def cases():
    """(name, messages to send, expected reason in the log and DROP;
    None: the peer is cut short and the collector records a LOSS)."""
    ok = hello(4000000, argv=["bad"])
    rnd = random.Random(6)
    junk = bytes(rnd.randrange(256) for _ in range(4096))
    zbad = b"\x78\x9c" + bytes(rnd.randrange(256) for _ in range(64))
    z50 = zlib.compress(b"x" * 50)
    return [
        ("oversized length", [frame(HELLO, 1, b"", length=(64 << 20) + 1,
                                    raw_length=(64 << 20) + 1)],
         "frame length over limit"),
        ("oversized inflated length",
         [frame(HELLO, 1, z50, flags=1, raw_length=(64 << 20) + 1)],
         "frame length over limit"),
        ("wrong magic", [frame(HELLO, 1, b"", magic=0x12345678)],
         "bad frame magic"),
        ("wrong version", [frame(HELLO, 1, b"", version=2)],
         "unsupported frame version"),
        ("unknown flags", [frame(HELLO, 1, b"", flags=0x80)],
         "unknown frame flags"),
        ("plain length mismatch", [frame(HELLO, 1, b"abc", raw_length=4)],
         "raw length differs"),
        ("corrupt deflate stream", [frame(HELLO, 1, zbad, flags=1,
                                          raw_length=100)],
         "corrupt deflate stream"),
        ("deflate size mismatch", [frame(HELLO, 1, z50, flags=1,
                                         raw_length=60)],
         "deflated frame size mismatch"),
        ("short fixed part", [frame(HELLO, 1, b"\0" * 10)],
         "shorter than its fixed part"),
        ("unterminated string", [frame(HELLO, 1, b"\0" * 32 +
                                       b"\x02no-nul-here")],
         "unterminated string"),
        ("random bytes", [junk], ""),
        ("garbage after a good frame", [ok, b"\xff" * 64], "bad frame magic"),
        ("header split across messages, then damage",
         [ok[:10], ok[10:40], ok[40:], frame(HELLO, 1, b"", version=9)],
         "unsupported frame version"),
        ("truncated payload, then EOF", [frame(HELLO, 1, b"\0" * 200)[:132]],
         None),
        ("truncated header, then EOF", [ok[:20]], None),
    ]


def wait_log(dm, text, count, what):
    ptrel.wait_for(lambda: dm.log().count(text) >= count or
                   dm.p.poll() is not None, 60, what)
    check(dm.p.poll() is None, "the collector died on %s:\n%s"
          % (what, dm.log()))


def main():
    a = ptrel.args(__doc__, extra)
    d = ptrel.tmpdir("frames")
    os.mkdir(d + "/run", 0o700)
    sock, cap = d + "/run/sock", d + "/frames.ptcap"
    env = None
    if "valgrind" in a.wrapper:
        env = ptrel.untraced_env()
    dm = ptrel.Daemon(a, cap, sock, wrapper=shlex.split(a.wrapper), env=env)

    good = ptrel.seqpacket(sock)
    sent = [hello(PID, argv=["good-client", "--flag"], cwd="/good")]
    good.send(sent[0])
    order = []                  # (name, why) of each bad peer, in order
    slow = None
    drops = losses = 0
    for i, (name, msgs, why) in enumerate(cases()):
        bad = ptrel.seqpacket(sock)
        order.append((name, why))
        for m in msgs:
            try:
                bad.send(m)
            except OSError:
                break           # already dropped: fine
        if why is None:
            bad.close()
            losses += 1
            wait_log(dm, "in the middle of a frame", losses, name)
        else:
            drops += 1
            wait_log(dm, "dropping connection", drops, name)
            bad.close()
        log("%-44s handled" % name)
        f = ptrel.exec_failed(PID, err=100 + i, t=1_000_000_000 + i)
        good.send(f)
        sent.append(f)
        if i == 2:
            # A peer that stops in the middle of a frame and stays: it
            # must hold up nobody.
            slow = ptrel.seqpacket(sock)
            order.append(("stalled mid-frame", None))
            slow.send(hello(4000001)[:50])

    # A message larger than the collector's receive buffer (256 KiB).
    big = ptrel.seqpacket(sock)
    try:
        big.setsockopt(socket.SOL_SOCKET, 32, 1 << 20)   # SO_SNDBUFFORCE
    except OSError:
        big.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    try:
        big.send(frame(HELLO, 1, b"\0" * (300 << 10)))
        order.append(("oversized message", "over the"))
        drops += 1
        wait_log(dm, "dropping connection", drops, "oversized message")
        log("%-44s handled" % "oversized message")
    except OSError as e:
        log("oversized message: cannot send one here (%s); skipped" % e)
        order.append(("oversized message (not sent)", ""))
    big.close()

    last = ptrel.exit_frame(PID, status=7)
    good.send(last)
    sent.append(last)
    good.close()
    slow.close()
    # Real clients are still served.
    r = ptrel.run(["/bin/echo", "still-recorded"],
                  env=ptrel.traced_env(a.lib, sock))
    check(r.returncode == 0, "a traced program failed after the bad peers")
    time.sleep(0.5)
    st = dm.stop(timeout=300)
    check(st == 0, "the collector exited %d:\n%s" % (st, dm.log()))

    recs = ptrel.read_capture(cap)
    conns = [r["conn"] for r in recs if r["kind"] == ptrel.K_CONNECT]
    check(len(conns) >= len(order) + 1, "%d connections in the capture, %d "
          "made" % (len(conns), len(order) + 1))
    byconn = {}
    for r in recs:
        byconn.setdefault(r["conn"], []).append(r)
    gframes = [r["data"] for r in byconn[conns[0]]
               if r["kind"] == ptrel.K_FRAME]
    check(gframes == sent, "the good client's frames: %d of %d in the "
          "capture, or changed" % (len(gframes), len(sent)))
    check(byconn[conns[0]][-1]["kind"] == ptrel.K_EOF,
          "the good connection does not end with EOF")
    for (name, why), conn in zip(order, conns[1:]):
        kinds = [r["kind"] for r in byconn[conn]]
        if why is None:
            check(ptrel.K_LOSS in kinds, "%s: no LOSS record" % name)
            continue
        dr = [r["data"] for r in byconn[conn] if r["kind"] == ptrel.K_DROP]
        check(len(dr) == 1 and why.encode() in dr[0],
              "%s: DROP record %s, want one naming %r" % (name, dr, why))
    text = dm.log()
    for line in text.splitlines():
        if "dropping connection" in line or "middle of a frame" in line:
            log("  log: " + line)
    rc, out, err = ptrel.convert(a, cap)
    check(rc == 0, "convert exited %d: %s" % (rc, err))
    rows = ptrel.csv_rows(out)
    check(any(r["command"] == "good-client --flag" and r["exit_code"] == "7"
              for r in rows), "the good client's execution is not converted")
    check(any(r["command"] == "/bin/echo still-recorded" for r in rows),
          "the traced program after the bad peers is not recorded")
    log("good client: all %d frames in the capture; %d bad peers dropped, "
        "%d cut short" % (len(sent), drops, losses))
    log("PASS")


if __name__ == "__main__":
    main()
