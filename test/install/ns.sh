# Sourced by the install tests: run this script again inside a private
# mount namespace in which some system directories are overlays on a
# scratch directory, so that a real install (dpkg, ldconfig, ld.so.cache)
# changes nothing outside.
#
# pt_ns_check TMP      exits 77 (skip) unless a writable overlay can be
#                      mounted in such a namespace: in practice, as root
# pt_ns_cmd            the command that makes the namespace; the caller
#                      runs itself again under it with PT_IN_NS=1 and
#                      PT_TMP=TMP (its scratch directory)
# pt_ns_mount DIR...   in the namespace: overlays on /DIR, for each DIR

pt_ns_cmd() {
	if [ "$(id -u)" -eq 0 ]; then echo "unshare -m"; else echo "unshare -rm"; fi
}

pt_ns_check() {
	ns=$(pt_ns_cmd)
	mkdir "$1/probe.u" "$1/probe.w"
	# Mounted and writable below its top: in a user namespace (not
	# root), an overlay mounts, but its directories other than the top
	# one belong to the real root, unmapped there, so nothing can be
	# created in them.
	if ! $ns sh -c "mount -t overlay overlay \
		-o lowerdir=/etc,upperdir=$1/probe.u,workdir=$1/probe.w /etc &&
		touch /etc/ld.so.conf.d/.pt-probe" 2>"$1/probe.err"; then
		echo "SKIP: cannot write to an overlay of /etc in a private mount" \
		     "namespace ($ns; a real install needs root): $(cat "$1/probe.err")"
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
