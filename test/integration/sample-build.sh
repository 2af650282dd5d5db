#!/bin/sh
# Build a copy of the sample project: ./configure, make -j2, make check.
set -eu
src=$1/sample
dir=$(mktemp -d "${TMPDIR:-/tmp}/pt-sample-XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp -r "$src/." "$dir"
cd "$dir"
./configure >/dev/null
make -j2 >/dev/null
make check >/dev/null
