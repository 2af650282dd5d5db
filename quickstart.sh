#!/bin/sh
# Install what is missing, build proftrace, and profile the sample build
# shipped in sample/ (a configure script and `make -j2`).
set -eu
cd "$(dirname "$0")"
tools/install-deps.sh
if [ ! -f build/build.ninja ]; then   # none yet, or a setup that failed
	rm -rf build
	log=$(meson setup build 2>&1) || { printf '%s\n' "$log"; exit 1; }
fi
ninja -C build >/dev/null || ninja -C build
rm -rf build/sample && cp -r sample build/sample
exec build/collector/proftrace record --force -o sample.ptcap --csv sample.csv -- \
	sh -c 'cd build/sample && ./configure && make -j2'
