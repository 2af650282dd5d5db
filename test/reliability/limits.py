#!/usr/bin/env python3
"""Resource limits: the command sees exactly the untraced ones.

Guarantee (doc/reliability.md, I1): under `proftrace record`, the command
and everything it starts see the soft and hard values of every resource
limit that they would see untraced, whatever record's collector raises
for itself (it raises its own open-file limit to serve many connections).
Checked from the command itself and from a grandchild, with the limits
as they are and with a soft open-file limit below the hard one (the
`ulimit -Sn 1024` of a login shell).
"""

import resource

import ptrel
from ptrel import check, log

# The command prints every limit as the kernel states it, itself and
# through a child of a child.
SCRIPT = "cat /proc/self/limits; sh -c 'cat /proc/self/limits'"


def limits_seen(a, d, traced, nofile):
    def lower():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)

    cmd = ["sh", "-c", SCRIPT]
    if traced:
        cmd = [a.proftrace, "record", "-q", "--force", "-o",
               d + "/limits.ptcap", "--"] + cmd
    r = ptrel.run(cmd, env=ptrel.untraced_env(), preexec_fn=lower)
    check(r.returncode == 0, "%s failed: %s" % (cmd[:3], r.stderr.decode()))
    return r.stdout.decode()


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("limits")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(1024, hard // 2) if hard != resource.RLIM_INFINITY else 1024
    check(low >= 16, "the open-file hard limit %d is too low to test" % hard)
    for name, nofile in (("as they are", None),
                         ("soft open-file limit %d" % low, (low, hard))):
        plain = limits_seen(a, d, False, nofile)
        traced = limits_seen(a, d, True, nofile)
        check(traced == plain, "%s: the command saw other limits traced:\n"
              "untraced:\n%s\ntraced:\n%s" % (name, plain, traced))
        log("limits %s: traced = untraced" % name)


if __name__ == "__main__":
    main()
