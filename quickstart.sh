#!/bin/sh
# Install what building and running proftrace needs (tools/install-deps.sh
# build: the compiler, meson, zlib and libcurl; nothing the tests use),
# build the program and the library, and profile the sample build shipped
# in sample/ (a configure script and `make -j2`).
set -eu
cd "$(dirname "$0")"
tools/install-deps.sh build
if [ ! -f build/build.ninja ]; then   # none yet, or a setup that failed
	rm -rf build
	log=$(meson setup build 2>&1) || { printf '%s\n' "$log"; exit 1; }
fi
# Only what record runs: the tests are built by ./run-tests.sh.
targets="collector/proftrace preload/libproftrace.so"
ninja -C build $targets >/dev/null || ninja -C build $targets
rm -rf build/sample && cp -r sample build/sample
exec build/collector/proftrace record --force -o sample.ptcap --csv sample.csv -- \
	sh -c 'cd build/sample && ./configure && make -j2'
