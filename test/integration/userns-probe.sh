#!/bin/sh
# test/tools/userns.py, which the tests that need a user namespace ask
# before they skip a part, against bubblewrap, the program those parts
# run (with --unshare-user, as an ordinary user's bwrap does): its
# verdict must be bwrap's, "allowed" where bwrap makes its sandbox and
# "refused" where it cannot,
# - here;
# - inside a plain chroot (its root a bind mount of /, in a private mount
#   namespace), where the kernel refuses every process a user namespace;
# - inside a user namespace whose user.max_user_namespaces is 0 (a
#   machine that allows none), as its root.
# Needs root (the chroot, setpriv) and bwrap; skips otherwise.
# usage: userns-probe.sh SOURCE_DIR
set -u
src=$(cd "$1" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chroot, setpriv)"; exit 77; }
command -v bwrap >/dev/null ||
	{ echo "SKIP: bwrap is missing (tools/install-deps.sh)"; exit 77; }

# Prints "probe=N bwrap=M", the exit statuses of each, run as $2...
# shellcheck disable=SC2016
both='src=$1; shift
verdict=$(python3 "$src/test/tools/userns.py" "$@"); p=$?
"$@" bwrap --unshare-user --dev-bind / / true 2>/dev/null; b=$?
echo "probe=$p bwrap=$b ($verdict)"'
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --"

tmp=$(mktemp -d)
mkdir "$tmp/root"
# rmdir, never rm -r: / was mounted on it, in another mount namespace.
trap 'rmdir "$tmp/root" "$tmp"' EXIT

fail=0
judge() {   # what, "probe=N bwrap=M (...)", the verdict wanted or ""
	echo "$1: $2"
	case $2 in
	"probe=0 bwrap=0"*|"probe=1 bwrap=1"*) ;;
	*) echo "FAIL: $1: the probe's verdict is not bwrap's"; fail=1; return;;
	esac
	case $3 in
	refused) case $2 in "probe=1 "*) ;; *)
		echo "FAIL: $1: the kernel refuses a user namespace here," \
		     "the probe says it allows one"; fail=1;; esac;;
	esac
}

# shellcheck disable=SC2086
judge "here, as nobody" "$(sh -c "$both" _ "$src" $nobody)" ""
judge "in a chroot, as nobody" "$(unshare -m --propagation private sh -c '
	mount --rbind / "$1" && exec chroot "$1" sh -c "$2" _ "$3" $4' \
	_ "$tmp/root" "$both" "$src" "$nobody")" refused
judge "in a chroot, as root" "$(unshare -m --propagation private sh -c '
	mount --rbind / "$1" && exec chroot "$1" sh -c "$2" _ "$3"' \
	_ "$tmp/root" "$both" "$src")" refused
if unshare -Ur true 2>/dev/null; then
	judge "user.max_user_namespaces=0" "$(unshare -Ur sh -c '
		echo 0 >/proc/sys/user/max_user_namespaces &&
		sh -c "$1" _ "$2"' _ "$both" "$src")" refused
fi
[ $fail = 0 ] || exit 1
echo "ok: the probe says what bwrap finds"
