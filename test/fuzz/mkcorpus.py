#!/usr/bin/env python3
"""Make the seed corpora of the fuzz targets from real runs.

    mkcorpus.py PROFTRACE LIBPROFTRACE   (from test/fuzz/)

corpus-frame/: spool files, i.e. each one connection's frames exactly as
the library sends them (HELLO with argv, cwd and allowlisted environment,
EXEC, FORK, REAP, EXIT, a deflated frame of a long command line).
corpus-capture/: a capture of a small pipeline, uncompressed, behind the
mode byte fuzz-capture.c reads (0 plain, 1 gzip, 4 redact), and spool
files behind mode 2.  Files are named by the SHA-1 of their contents, as
libFuzzer names what it adds.  Run again only to refresh the seeds; keep
the seeds of older capture versions (the reader still reads version 1),
which an older proftrace recorded.
"""

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def put(d, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def main(proftrace, lib):
    tmp = tempfile.mkdtemp()
    try:
        spool = tmp + "/spool"
        os.mkdir(spool)
        env = dict(os.environ, LD_PRELOAD=lib, PROFTRACE_DIR=spool,
                   PROFTRACE_SOCKET=tmp + "/none", CI_JOB_ID="7",
                   OPAM_PACKAGE_NAME="dune")
        long_args = " ".join("argument-%d" % i for i in range(800))
        subprocess.run(["sh", "-c", "/bin/echo hi | cat >/dev/null; "
                        "(cd / && ls >/dev/null); /bin/echo " + long_args +
                        " >/dev/null; /nonexistent 2>/dev/null; exit 0"],
                       env=env, check=True)
        files = sorted(os.listdir(spool))
        for f in files:
            with open(os.path.join(spool, f), "rb") as fh:
                data = fh.read()
            put("corpus-frame", data)
        for f in files[:3]:
            with open(os.path.join(spool, f), "rb") as fh:
                put("corpus-capture", b"\x02" + fh.read())
        cap = tmp + "/c.ptcap"
        subprocess.run([proftrace, "record", "-q", "-o", cap, "--", "sh",
                        "-c", "/bin/echo a1b2 | cat >/dev/null; kill -9 $$"],
                       env={k: v for k, v in os.environ.items()
                            if k != "LD_PRELOAD"})
        with open(cap, "rb") as fh:
            raw = gzip.decompress(fh.read())
        for mode in (0, 1, 4):
            put("corpus-capture", bytes([mode]) + raw)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main(*sys.argv[1:])
