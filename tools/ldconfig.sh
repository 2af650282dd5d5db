#!/bin/sh
# Run by `meson install`: refresh ld.so's cache, so that a bare-name
# LD_PRELOAD=libproftrace.so finds the library just installed in $1.
# A directory the loader does not search (the 32-bit build's
# /usr/local/lib32 on Debian: cross/) is named to it in
# /etc/ld.so.conf.d/proftrace-*.conf first.
# A staged install (DESTDIR, a package build) leaves that to the package's
# own ldconfig trigger.
set -u
dir=$1
if [ "${MESON_INSTALL_DESTDIR_PREFIX:-}" != "${MESON_INSTALL_PREFIX:-}" ]; then
	exit 0
fi
PATH=$PATH:/sbin:/usr/sbin
if [ "$(id -u)" -ne 0 ]; then
	echo "proftrace: not root, ld.so's cache not refreshed: run 'ldconfig' as root" \
	     "for LD_PRELOAD=libproftrace.so, or name $dir/libproftrace.so" >&2
	exit 0
fi
ldconfig || exit 1
if ! ldconfig -p | grep -q "=> $dir/libproftrace.so\$" && [ -d /etc/ld.so.conf.d ]; then
	conf=/etc/ld.so.conf.d/proftrace$(echo "$dir" | tr / -).conf
	echo "# the directory of libproftrace.so, installed by proftrace" >"$conf" &&
		echo "$dir" >>"$conf" && ldconfig || exit 1
fi
if ! ldconfig -p | grep -q "=> $dir/libproftrace.so\$"; then
	echo "proftrace: $dir is not in the loader's search path (/etc/ld.so.conf):" \
	     "name the library as LD_PRELOAD=$dir/libproftrace.so" >&2
fi
exit 0
