#!/usr/bin/env python3
"""A trace file under a name the contract does not take (doc/manual.md,
"Traces that programs write": PID.json, PID-ANYTHING.json...) is counted
with the other files not taken, and the line that convert and report
print names it with the rule it broke; the file written under a good
name beside it is taken as ever."""
import argparse
import json
import os
import re
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


def run(*argv):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROFTRACE_SOCKET", "PROFTRACE_TRACE_DIR",
                                "LD_PRELOAD"))}
    return subprocess.run(list(argv), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env,
                          timeout=120)


EV = '[{"name":"%s","ph":"X","ts":1,"dur":5}]'
# The writer says the names it wrote, with its pid, on stdout.
WRITER = """
d=$PROFTRACE_TRACE_DIR
printf '%s' '""" + EV % "good-event" + """' >"$d/$$.json"
printf '%s' '""" + EV % "misnamed-event" + """' >"$d/BAD"
echo "$d/BAD"
"""

for bad, rule in (("mytool-$$.json", "pid"), ("$$.trace", ".json")):
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        r = run(pt, "record", "-q", "-o", "run.ptcap", "--", "sh", "-c",
                WRITER.replace("BAD", bad))
        path = r.stdout.strip()
        name = os.path.basename(path)
        check(f"{name}: recorded", r.returncode == 0 and name, r.stderr)
        c = run(pt, "convert", "-f", "json", "-o", "run.json", "run.ptcap")
        rep = run(pt, "report", "run.ptcap")
        try:
            doc = json.load(open("run.json"))
        except (OSError, ValueError) as e:
            doc = {"traceEvents": []}
            check("convert -f json: a JSON trace", False, e)
        evs = doc["traceEvents"] if isinstance(doc, dict) else doc
        names = {e.get("name") for e in evs}
        check(f"{name}: the file named by the rule is taken",
              "good-event" in names, sorted(map(str, names))[:20])
        check(f"{name}: nothing of the misnamed file in the trace",
              "misnamed-event" not in names)
        for cmd, out in (("convert", c.stderr), ("report", rep.stderr)):
            line = [l for l in out.splitlines() if name in l]
            # After the file's name: why it was not taken.
            why = line[0].split(name, 1)[1] if line else ""
            check(f"{cmd}: one line counts it as not taken and names it "
                  f"with the rule it broke ({rule})",
                  len(line) == 1 and
                  re.search(r"\b1 trace file refused\b", line[0]) and
                  "name" in why and rule in why, out)

sys.exit(1 if failures else 0)
