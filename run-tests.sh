#!/bin/sh
# Install what the tests use when it is missing (tools/install-deps.sh
# test: as root, or through sudo), build proftrace and run the whole test
# suite; the last line counts the results.  Extra arguments go to `meson
# test` (a suite, a test name...).
set -u
cd "$(dirname "$0")"
missing=$(tools/install-deps.sh --missing test) || exit 1
tools/install-deps.sh test || exit 1
if [ -n "$missing" ] && [ -f build/build.ninja ]; then
	# A build set up before (./quickstart.sh) looks again for what is
	# now installed: protoc, valgrind...
	log=$(meson setup --reconfigure build 2>&1) ||
		{ printf '%s\n' "$log"; exit 1; }
fi
if [ ! -f build/build.ninja ]; then   # none yet, or a setup that failed
	rm -rf build
	log=$(meson setup build 2>&1) || { printf '%s\n' "$log"; exit 1; }
fi
if [ $# -eq 0 ]; then
	cat >&2 <<'EOF'
proftrace: the whole suite takes 10 to 15 minutes on two shared cores (the slow,
  sanitize and install suites most of it).
  A quick subset (about two minutes):  ./run-tests.sh --suite unit --suite e2e
  Suites: unit e2e probes views reliability sanitize slow bench install;
  one test: ./run-tests.sh NAME (meson test -C build --list names them).
EOF
fi
meson test -C build --print-errorlogs "$@"
rc=$?
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
n = {"OK": 0, "FAIL": 0, "SKIP": 0}
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)["result"]
        key = "OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"
        n[key] += 1
except OSError:
    pass
print(f"tests: {n['OK']} passed, {n['FAIL']} failed, {n['SKIP']} skipped")
PY
exit $rc
