#!/bin/sh
# The Debian package: `dpkg-buildpackage -b -us -uc` on a copy of the
# source tree builds proftrace_*.deb, lintian finds no error in it, and
# once it is installed (dpkg -i, in a private mount namespace whose /etc,
# /usr and /var are overlays: the machine is left as it was), `man
# proftrace-record` opens, the bash completion is there, and a small make
# build run with a bare-name LD_PRELOAD=libproftrace.so against the
# installed daemon is recorded.
# Needs root for the install (see ns.sh); as another user it builds and
# checks the package, then skips the install.
#
# usage: deb.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
. "$src/test/install/ns.sh"

if [ "${PT_IN_NS:-}" != 1 ]; then
	tmp=$(mktemp -d /tmp/pt-deb.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	if ! dpkg-checkbuilddeps "$src/debian/control" 2>"$tmp/deps"; then
		echo "FAIL: $(cat "$tmp/deps") (./run-tests.sh installs them: tools/install-deps.sh test)"
		exit 1
	fi
	# What a clean clone holds: the tracked files (and new ones not ignored).
	mkdir "$tmp/src"
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 cp --parents -t "$tmp/src")
	(cd "$tmp/src" && dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1 ||
		{ tail -40 "$tmp/build.log"; echo "FAIL: dpkg-buildpackage"; exit 1; }
	deb=$(ls "$tmp"/proftrace_*.deb)
	echo "built: $(basename "$deb")"; dpkg-deb -c "$deb" | awk '{print "  " $6}'
	lintian --fail-on error "$deb" 2>/dev/null ||
		{ echo "FAIL: lintian found errors in $(basename "$deb")"; exit 1; }
	pt_ns_check "$tmp"
	PT_IN_NS=1 PT_TMP=$tmp PT_DEB=$deb $(pt_ns_cmd) sh "$0" "$src"
	exit
fi

# In the namespace.
tmp=$PT_TMP
pt_ns_mount etc usr var
dpkg -i "$PT_DEB" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; exit 1; }
man -w proftrace-record >/dev/null ||
	{ echo "FAIL: man proftrace-record: no page"; exit 1; }
[ -f /usr/share/bash-completion/completions/proftrace ] ||
	{ echo "FAIL: no bash completion installed"; exit 1; }
unset PROFTRACE_LIB

mkdir "$tmp/proj"
cd "$tmp/proj"
printf 'int f(void) { return 1; }\n' >f.c
printf 'int f(void);\nint main(void) { return f() - 1; }\n' >main.c
printf 'prog: main.o f.o\n\tcc -o prog main.o f.o\n%%.o: %%.c\n\tcc -c $<\n' >Makefile
sock=$tmp/socket
eval "$(proftrace daemon -o "$tmp/run.ptcap" --socket "$sock" --detach)"
PROFTRACE_SOCKET=$sock LD_PRELOAD=libproftrace.so make -j2 >"$tmp/out" 2>"$tmp/err"
proftrace stop --socket "$sock"
if [ -s "$tmp/err" ]; then
	echo "FAIL: the traced build printed on stderr:"; cat "$tmp/err"; exit 1
fi
./prog || { echo "FAIL: the build's program"; exit 1; }
proftrace convert -f csv -o "$tmp/run.csv" "$tmp/run.ptcap"
echo "recorded:"; cut -d, -f5 "$tmp/run.csv" | cut -c1-72
for c in 'make -j2' 'cc -c main.c' 'cc -c f.c' 'cc -o prog main.o f.o'; do
	grep -q ",exec,$c," "$tmp/run.csv" || { echo "FAIL: '$c' was not recorded"; exit 1; }
done
