# Sourced by the install tests: run this script again inside a private
# mount namespace in which some system directories are overlays on a
# scratch directory, so that a real install (dpkg, ldconfig, ld.so.cache)
# changes nothing outside.
#
# pt_ns_enter TMP DIR...   re-executes "$0" "$@" in the namespace (the
#                          caller passes its own arguments after --), or
#                          exits 77 if no overlay can be mounted there.
# In the namespace, PT_IN_NS=1 and PT_TMP=TMP; pt_ns_mount DIR... mounts
# the overlays.

pt_ns_cmd() {
	if [ "$(id -u)" -eq 0 ]; then echo "unshare -m"; else echo "unshare -rm"; fi
}

pt_ns_check() {
	ns=$(pt_ns_cmd)
	mkdir "$1/probe.u" "$1/probe.w"
	if ! $ns sh -c "mount -t overlay overlay \
		-o lowerdir=/etc,upperdir=$1/probe.u,workdir=$1/probe.w /etc" 2>"$1/probe.err"; then
		echo "SKIP: cannot mount an overlay in a private mount namespace" \
		     "($ns): $(cat "$1/probe.err")"
		exit 77
	fi
	rm -rf "$1"/probe.*
}

pt_ns_mount() {
	for d in "$@"; do
		mkdir -p "$PT_TMP/ov/$d/u" "$PT_TMP/ov/$d/w"
		mount -t overlay overlay \
			-o "lowerdir=/$d,upperdir=$PT_TMP/ov/$d/u,workdir=$PT_TMP/ov/$d/w" "/$d"
	done
}
