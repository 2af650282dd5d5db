#!/bin/sh
# Install what building and testing proftrace needs on Debian or Ubuntu.
# Only packages that are missing are installed; needs root (or sudo).
set -eu
# bubblewrap, nodejs, perl, golang-go and busybox-static run the tests;
# pandoc builds the man pages; man-db renders them in the tests;
# debhelper, dpkg-dev and lintian build and check the Debian package; git
# and python3-yaml run doc/ci.md's recipes.
pkgs="gcc make meson ninja-build pkg-config zlib1g-dev libc6-dev python3 strace binutils
bubblewrap nodejs perl golang-go busybox-static pandoc man-db debhelper dpkg-dev lintian git python3-yaml curl"
# The tests of the SVG, Markdown and Perfetto views: a browser, ImageMagick
# to look at its screenshots, a CommonMark parser with GitHub's tables,
# protoc to decode protobuf traces.
pkgs="$pkgs chromium imagemagick cmark-gfm protobuf-compiler"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "proftrace: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
# apt's own chatter (warnings about its CLI, debconf, dpkg's progress)
# goes to a log, shown only when the installation fails.
log=$(mktemp "${TMPDIR:-/tmp}/proftrace-install-deps.XXXXXX")
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086
if ! { $sudo apt-get update -qq &&
       DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends $missing; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "proftrace: installing$missing failed" >&2
	exit 1
fi
