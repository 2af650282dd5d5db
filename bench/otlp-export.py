#!/usr/bin/env python3
"""proftrace export --otlp at scale: wall time, CPU and peak RSS.

    bench/otlp-export.py [--build-dir build] [-n 1000000] [--rounds 3]
                         [--capture FILE]

Writes a synthetic capture of N executions with bench/gencapture (or takes
--capture), then exports it to a local OTLP/HTTP receiver that reads each
request whole and answers 200 (a thread of this script, on 127.0.0.1),
in interleaved rounds: `proftrace report` of the same capture (what loading
it costs), the export with its default --otlp-max-spans, every execution
as a span (--otlp-max-spans 0) in protobuf, and the same in JSON.  Prints
a Markdown table (medians of wall and CPU seconds, the largest peak RSS,
as wait4 reports it; requests and bytes the receiver took in the last
round) for doc/performance.md, and the 1-minute load average seen before
each command (on a shared machine the wall times depend on it).
"""

import argparse
import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = 0
    body_bytes = 0

    def do_POST(self):
        n = int(self.headers["Content-Length"])
        while n:
            n -= len(self.rfile.read(min(n, 1 << 20)))
        Sink.requests += 1
        Sink.body_bytes += int(self.headers["Content-Length"])
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def measured(cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("-n", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--capture")
    a = ap.parse_args()
    pt = os.path.join(a.build_dir, "collector", "proftrace")
    tmp = tempfile.mkdtemp(prefix="pt-otlp-bench-")
    cap = a.capture
    if not cap:
        cap = os.path.join(tmp, "synthetic.ptcap")
        subprocess.run([os.path.join(a.build_dir, "bench", "gencapture"),
                        "-n", str(a.n), cap], check=True,
                       stdout=subprocess.DEVNULL)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    runs = [
        ("`proftrace report` (loading the capture, for comparison)",
         [pt, "report", cap]),
        ("`export --otlp` (default: at most 10,000 spans)",
         [pt, "export", "--otlp", url, cap]),
        ("`export --otlp --otlp-max-spans 0` (every execution)",
         [pt, "export", "--otlp", url, "--otlp-max-spans", "0", cap]),
        ("`export --otlp --otlp-max-spans 0 --otlp-protocol http/json`",
         [pt, "export", "--otlp", url, "--otlp-max-spans", "0",
          "--otlp-protocol", "http/json", cap]),
    ]
    res = {name: [] for name, _ in runs}
    sent = {}
    loads = []
    for r in range(a.rounds):
        order = runs if r % 2 == 0 else runs[::-1]
        for name, cmd in order:
            Sink.requests = Sink.body_bytes = 0
            loads.append(os.getloadavg()[0])
            res[name].append(measured(cmd))
            sent[name] = (Sink.requests, Sink.body_bytes)
            print(f"round {r + 1}: {name}: {res[name][-1][:3]}",
                  file=sys.stderr)
    print("| command | wall s | CPU s | peak RSS MB | requests | "
          "MB sent (gzip) |")
    print("|---|---|---|---|---|---|")
    for name, _ in runs:
        w = statistics.median(x[0] for x in res[name])
        c = statistics.median(x[1] for x in res[name])
        m = max(x[2] for x in res[name])
        q, b = sent[name]
        sent_s = f"{q:,} | {b / 1e6:.1f}" if q else "– | –"
        print(f"| {name} | {w:.2f} | {c:.2f} | {m:.0f} | {sent_s} |")
    print()
    print(f"load average (1 min) before each command: "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(res[runs[2][0]][-1][3].strip())
    srv.shutdown()
    if not a.capture:
        os.unlink(cap)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
