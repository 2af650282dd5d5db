#!/bin/sh
# After a default `meson install` (prefix /usr/local, and libdir 'lib64':
# meson's default on Debian when dpkg-dev is missing), LD_PRELOAD names
# the library by its bare name and the loader finds it: a command run that
# way against a daemon is recorded, and ld.so says nothing.
#
# Only a real install tests the loader's search (its cache, its default
# directories), so this one is real, inside a private mount namespace in
# which /usr/local and /etc are overlays on a scratch directory: the
# install, its ldconfig and the ld.so.cache it writes are seen by nothing
# outside.  Needs root or unprivileged user namespaces; skips otherwise.
#
# usage: loader.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/pt-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if [ "${PT_IN_NS:-}" != 1 ]; then
	if [ "$(id -u)" -eq 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
	if ! $ns sh -c "mkdir $tmp/u $tmp/w && mount -t overlay overlay \
		-o lowerdir=/etc,upperdir=$tmp/u,workdir=$tmp/w /etc" 2>"$tmp/err"; then
		echo "SKIP: cannot mount an overlay in a private mount namespace" \
		     "($ns): $(cat "$tmp/err")"
		exit 77
	fi
	rm -rf "$tmp"/u "$tmp"/w
	meson setup "$tmp/build" "$src" --prefix /usr/local --libdir lib64 \
		-Dtests=false >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
	ninja -C "$tmp/build" >"$tmp/ninja.log" 2>&1 || { cat "$tmp/ninja.log"; exit 1; }
	PT_IN_NS=1 PT_TMP=$tmp exec $ns sh "$0" "$src"
fi

# In the namespace.
trap - EXIT
tmp=$PT_TMP
for d in etc usr/local; do
	mkdir -p "$tmp/ov/$d/u" "$tmp/ov/$d/w"
	mount -t overlay overlay \
		-o "lowerdir=/$d,upperdir=$tmp/ov/$d/u,workdir=$tmp/ov/$d/w" "/$d"
done
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
PROFTRACE_SOCKET=$sock LD_PRELOAD=libproftrace.so sh -c 'echo one; /bin/echo two' \
	>"$tmp/out" 2>"$tmp/err"
/usr/local/bin/proftrace stop --socket "$sock"
if [ -s "$tmp/err" ]; then
	echo "FAIL: the traced command printed on stderr:"; cat "$tmp/err"; exit 1
fi
/usr/local/bin/proftrace convert -f csv -o "$tmp/run.csv" "$tmp/run.ptcap"
echo "recorded:"; cut -d, -f4,5 "$tmp/run.csv"
grep -q ',exec,/bin/echo two,' "$tmp/run.csv" ||
	{ echo "FAIL: /bin/echo was not recorded"; exit 1; }
rm -rf "$tmp"
