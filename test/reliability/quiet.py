#!/usr/bin/env python3
"""record -q: nothing but the command's own output.

Guarantee (doc/reliability.md, C3): with -q, once the command runs,
record writes nothing to standard error: not the collector's messages
about bad peers ("dropping connection", "ended in the middle of a
frame"), not the count of dropped connections and lost frames, not the
summary.  The command provokes those messages itself, by sending bad
frames to $PROFTRACE_SOCKET (as bad-frames.py does), and writes a line
of its own; record -q's standard error must be byte for byte the
untraced run's.  As a control, without -q the messages do appear.
"""

import os
import sys

import ptrel
from ptrel import check, log

# Run as the command.  Untraced there is no socket and only the line of
# its own is written.
CHILD = r'''
import os, sys, time
sys.path.insert(0, sys.argv[1])
import ptrel
sock = %s
if sock:
    bad = ptrel.seqpacket(sock)
    bad.send(ptrel.frame(ptrel.HELLO, 1, b"", magic=0x12345678))
    time.sleep(0.2)
    bad.close()
    cut = ptrel.seqpacket(sock)
    cut.send(ptrel.hello(4000000)[:20])
    cut.close()
    time.sleep(0.2)
sys.stderr.write("the command's own line\n")
''' % ptrel.kernel_env_py("PROFTRACE_SOCKET")

MESSAGES = ("dropping connection", "ended in the middle of a frame",
            "connections dropped")


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("quiet")
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-c", CHILD, here]
    plain = ptrel.run(cmd, env=ptrel.untraced_env())
    check(plain.returncode == 0, "untraced: " + plain.stderr.decode())

    loud = ptrel.run([a.proftrace, "record", "--force", "-o",
                      d + "/loud.ptcap", "--"] + cmd,
                     env=ptrel.untraced_env())
    err = loud.stderr.decode()
    check(loud.returncode == 0, "record: status %d" % loud.returncode)
    for m in MESSAGES:
        check(m in err, "control: without -q, no %r in:\n%s" % (m, err))
    log("without -q: the collector's messages are there")

    quiet = ptrel.run([a.proftrace, "record", "-q", "--force", "-o",
                       d + "/quiet.ptcap", "--"] + cmd,
                      env=ptrel.untraced_env())
    check(quiet.returncode == 0, "record -q: status %d" % quiet.returncode)
    check(quiet.stderr == plain.stderr, "record -q added to stderr:\n"
          "untraced: %r\nrecord -q: %r" % (plain.stderr, quiet.stderr))
    log("with -q: stderr is the command's, byte for byte")


if __name__ == "__main__":
    main()
