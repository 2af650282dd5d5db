#!/bin/sh
# Install what building and testing proftrace needs on Debian or Ubuntu.
# Only packages that are missing are installed; needs root (or sudo).
set -eu
pkgs="gcc make meson ninja-build pkg-config zlib1g-dev libc6-dev python3 strace binutils
	bubblewrap nodejs perl"
# The tests of the SVG and Markdown views: a browser, ImageMagick to look
# at its screenshots, a CommonMark parser with GitHub's tables.
pkgs="$pkgs chromium imagemagick cmark-gfm"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "proftrace: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
