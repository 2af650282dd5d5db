#!/usr/bin/env python3
"""record -q: what did not arrive where the user asked still says so.

-q silences progress and summaries, but an output that failed (an OTLP
export to a closed port, a --csv that could not be written, a --keep
directory that cannot be made) is one line on standard error, after the
command's own output, naming where it was to go; the exit status stays
the command's.  The command's own output is untouched, and a run where
everything arrives prints nothing of ours.  An output file in a missing
directory stops record before the command, in one line (proftrace-record.1).
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--proftrace", required=True)
args = ap.parse_args()
pt = os.path.abspath(args.proftrace)
failures = []


def check(what, ok, detail=""):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        print("      " + str(detail).replace("\n", "\n      "))
        failures.append(what)


def record(*opts):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROFTRACE_SOCKET", "LD_PRELOAD", "OTEL_"))}
    return subprocess.run(
        [pt, "record", "-q", "--force", "-o", "run.ptcap", *opts, "--",
         "sh", "-c", "echo out; echo err >&2; exit 3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        timeout=120)


def one_failure_line(what, r, names):
    lines = r.stderr.splitlines()
    check(f"{what}: exit status 3, the command's", r.returncode == 3,
          (r.returncode, r.stderr))
    check(f"{what}: the command's stdout as it was", r.stdout == "out\n",
          r.stdout)
    check(f"{what}: the command's stderr, then one line naming {names!r}",
          len(lines) == 2 and lines[0] == "err" and names in lines[1],
          r.stderr)


with tempfile.TemporaryDirectory() as tmp:
    os.chdir(tmp)
    r = record()
    check("nothing failed: only the command's output",
          r.returncode == 3 and r.stdout == "out\n" and r.stderr == "err\n",
          (r.returncode, r.stdout, r.stderr))

    # A port bound but not listening: connection refused, every time.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        os.unlink("run.ptcap")
        r = record(f"--otlp=http://127.0.0.1:{port}")
    one_failure_line("--otlp to a closed port", r, f"127.0.0.1:{port}")
    check("--otlp to a closed port: the capture is there",
          os.path.getsize("run.ptcap") > 0)

    # A device that takes no byte: the CSV is not written.
    r = record("--csv", "/dev/full")
    one_failure_line("--csv /dev/full", r, "/dev/full")

    # --keep under a regular file: the directory cannot be made.
    open("plain", "w").close()
    r = record("--keep", "plain/runs")
    one_failure_line("--keep plain/runs", r, "plain/runs")

    # Both at once: one line each, in the order of the options.
    r = record("--csv", "/dev/full", "--keep", "plain/runs")
    lines = r.stderr.splitlines()
    check("two failures: two lines after the command's",
          r.returncode == 3 and len(lines) == 3 and lines[0] == "err" and
          "/dev/full" in lines[1] and "plain/runs" in lines[2], r.stderr)

    # A file in a missing directory: refused before the command runs.
    r = record("--csv", "missing/run.csv")
    check("--csv missing/run.csv: one line naming it, the command not run, "
          "exit 1",
          r.returncode == 1 and r.stdout == "" and
          len(r.stderr.splitlines()) == 1 and "missing/run.csv" in r.stderr,
          (r.returncode, r.stdout, r.stderr))

sys.exit(1 if failures else 0)
