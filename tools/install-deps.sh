#!/bin/sh
# Install what proftrace needs on Debian or Ubuntu; only packages that are
# missing are installed; needs root (or sudo).
#
#   tools/install-deps.sh build            what building and running it needs
#                                          (./quickstart.sh)
#   tools/install-deps.sh [test]           that, and what the tests use
#                                          (./run-tests.sh)
#   tools/install-deps.sh --missing SET    print the missing packages of SET
#                                          on one line, install nothing
set -eu
list=
if [ "${1:-}" = --missing ]; then
	list=1
	shift
fi
set_=${1:-test}
case $set_ in
build|test) ;;
*) echo "usage: tools/install-deps.sh [--missing] [build|test]" >&2; exit 2;;
esac
if ! command -v dpkg-query >/dev/null 2>&1; then
	[ -n "$list" ] || echo "proftrace: not Debian or Ubuntu: install what" \
		"tools/install-deps.sh names yourself" >&2
	exit 0
fi

# The build (meson.build): a C compiler, meson and ninja, zlib and libcurl
# (the proftrace program's capture and OpenTelemetry export), python3 for
# meson's scripts, scdoc (a 50 KB program) for the man pages, so that
# `meson install` after the quick start brings them, and man-db to read
# them (a minimal Debian root has no `man`).
pkgs="gcc make libc6-dev meson ninja-build pkg-config zlib1g-dev
libcurl4-openssl-dev python3 scdoc man-db"

if [ "$set_" = test ]; then
	# bubblewrap, nodejs, perl, golang-go and busybox-static run the
	# tests; strace is their ground truth; man-db renders the man pages in
	# the tests; build-essential (which
	# dpkg-checkbuilddeps demands), debhelper, dpkg-dev and lintian build
	# and check the Debian package; git and python3-yaml run doc/ci.md's
	# recipes.
	pkgs="$pkgs strace binutils bubblewrap nodejs perl golang-go
busybox-static man-db build-essential debhelper dpkg-dev lintian git
python3-yaml curl"
	# The tests of traces that programs write: clang -ftime-trace, dune
	# --trace-file (which needs an OCaml compiler to start).
	pkgs="$pkgs clang ocaml-dune ocaml-nox"
	# deps on an opam install of packages of a local repository.
	pkgs="$pkgs opam"
	# and clang 16's -ftime-trace=PATH, where the default clang is older.
	case "$(clang --version 2>/dev/null)" in
	*"clang version "1[6-9]*|*"clang version "[2-9][0-9]*) ;;
	*) apt-cache show clang-16 >/dev/null 2>&1 && pkgs="$pkgs clang-16" ;;
	esac
	# The tests of the SVG, Markdown and Perfetto views: a browser,
	# ImageMagick to look at its screenshots, a CommonMark parser with
	# GitHub's tables, protoc to decode protobuf traces; of `top`: a
	# terminal, tmux, whose panes the tests read.
	pkgs="$pkgs chromium imagemagick cmark-gfm protobuf-compiler tmux"
	# OpenTelemetry export: npm for the test receiver's decoder (below),
	# openssl for its TLS certificate.
	# (npm comes with some builds of nodejs, and conflicts with them.)
	pkgs="$pkgs openssl"
	command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
	# 32-bit programs under a 64-bit library (test/install/lib32.sh): the
	# 32-bit toolchain, and an emulator for kernels that run none
	# natively.
	if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
		pkgs="$pkgs gcc-multilib qemu-user-static"
	fi
	# CPython's own test_subprocess
	# (test/integration/cpython-subprocess.py), where this release has it.
	apt-cache show libpython3.11-testsuite >/dev/null 2>&1 &&
		pkgs="$pkgs libpython3.11-testsuite"
fi
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$list" ]; then
	[ -z "$missing" ] || echo $missing
	exit 0
fi
# The test receiver of the OpenTelemetry export decodes with
# OpenTelemetry's own npm package, pinned by
# test/integration/otlp/package-lock.json.
npm_deps()
{
	[ "$set_" = test ] || return 0
	top=$(cd "$(dirname "$0")/.." && pwd)
	[ -d "$top/test/integration/otlp/node_modules" ] && return 0
	npmlog=$(mktemp "${TMPDIR:-/tmp}/proftrace-npm.XXXXXX")
	if ! (cd "$top/test/integration/otlp" && npm ci --no-audit --no-fund) \
			>"$npmlog" 2>&1; then
		cat "$npmlog" >&2
		rm -f "$npmlog"
		echo "proftrace: npm ci in test/integration/otlp failed" >&2
		exit 1
	fi
	rm -f "$npmlog"
}
if [ -z "$missing" ]; then
	npm_deps
	exit 0
fi
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
npm_deps
