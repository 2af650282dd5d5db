#!/bin/sh
# After a default `meson install` (prefix /usr/local, and libdir 'lib64':
# meson's default on Debian when dpkg-dev is missing), LD_PRELOAD names
# the library by its bare name and the loader finds it: `make` run that
# way against a daemon is recorded, and ld.so says nothing; and
# `man proftrace-record` opens.
#
# Only a real install tests the loader's search (its cache, its default
# directories), so this one is real, inside a private mount namespace in
# which /usr/local and /etc are overlays on a scratch directory: the
# install, its ldconfig and the ld.so.cache it writes are seen by nothing
# outside.  Needs root (see ns.sh); skips otherwise.
#
# usage: loader.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
. "$src/test/install/ns.sh"
if [ "${PT_IN_NS:-}" != 1 ]; then
	tmp=$(mktemp -d /tmp/pt-install.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	pt_ns_check "$tmp"
	meson setup "$tmp/build" "$src" --prefix /usr/local --libdir lib64 \
		-Dtests=false >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
	ninja -C "$tmp/build" >"$tmp/ninja.log" 2>&1 || { cat "$tmp/ninja.log"; exit 1; }
	PT_IN_NS=1 PT_TMP=$tmp $(pt_ns_cmd) sh "$0" "$src"
	exit
fi

# In the namespace.
tmp=$PT_TMP
pt_ns_mount etc usr/local
meson install -C "$tmp/build" --no-rebuild >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; exit 1; }
echo "installed:"; grep -E 'Installing .*(libproftrace|proftrace to)' "$tmp/install.log"
if grep proftrace: "$tmp/install.log"; then
	echo "FAIL: the install step warned"; exit 1
fi

# No path anywhere: the loader searches for the bare name itself.
unset PROFTRACE_LIB
sock=$tmp/socket
eval "$(/usr/local/bin/proftrace daemon -o "$tmp/run.ptcap" --socket "$sock" --detach)"
printf 'all:\n\techo one; /bin/echo two\n' >"$tmp/Makefile"
PROFTRACE_SOCKET=$sock LD_PRELOAD=libproftrace.so make -s -C "$tmp" \
	>"$tmp/out" 2>"$tmp/err"
/usr/local/bin/proftrace stop --socket "$sock"
if [ -s "$tmp/err" ]; then
	echo "FAIL: the traced command printed on stderr:"; cat "$tmp/err"; exit 1
fi
/usr/local/bin/proftrace convert -f csv -o "$tmp/run.csv" "$tmp/run.ptcap"
echo "recorded:"; cut -d, -f4,5 "$tmp/run.csv"
grep -q ',exec,/bin/echo two,' "$tmp/run.csv" ||
	{ echo "FAIL: /bin/echo was not recorded"; exit 1; }
grep -q ',exec,make -s -C ' "$tmp/run.csv" ||
	{ echo "FAIL: make was not recorded"; exit 1; }

# The man pages, where man looks: `man proftrace-record` opens.
page=$(man -w proftrace-record 2>&1) || { echo "FAIL: man -w proftrace-record: $page"; exit 1; }
case $(readlink -f "$page") in     # /usr/local/man is share/man on Debian
/usr/local/share/man/man1/proftrace-record.1*) echo "man page: $page" ;;
*) echo "FAIL: man proftrace-record finds $page"; exit 1 ;;
esac
MANPAGER=cat MANWIDTH=80 man proftrace-record 2>"$tmp/man.err" | grep -q 'proftrace-record' ||
	{ echo "FAIL: man proftrace-record shows nothing"; cat "$tmp/man.err"; exit 1; }
for p in proftrace libproftrace; do
	man -w "$p" >/dev/null 2>&1 || { echo "FAIL: man $p: no entry"; exit 1; }
done
