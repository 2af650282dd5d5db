#!/bin/sh
# A short fuzz run of one target, registered as a test (suite fuzz).
#
#     run-fuzz.sh EXE SEED_DIR libfuzzer|replay RUNS
#
# libFuzzer writes what it finds new into a scratch directory, not into
# the seed corpus in the source tree; the replay driver (no libFuzzer:
# gcc) runs RUNS mutations spread over the seeds.  Exit status: the
# fuzzer's (nonzero on a finding).
set -eu
exe=$1 seeds=$2 mode=$3 runs=$4
if [ "$mode" = libfuzzer ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/pt-fuzz-XXXXXX")
	trap 'rm -rf "$work"' EXIT
	"$exe" -runs="$runs" -seed=1 -max_len=65536 -max_total_time=120 \
		-close_fd_mask=2 -print_final_stats=1 "$work" "$seeds"
else
	n=$(ls "$seeds" | wc -l)
	"$exe" -m $((runs / (n > 0 ? n : 1))) "$seeds" 2>/dev/null
fi
