#!/bin/sh
# Two pid-namespace sandboxes side by side, and one made by unshare: inside
# each the same pids (1, 2, 3), which the capture must keep apart and hang
# under the sandbox that made them (ptcheck compares with strace -f).
# Not as root, bwrap and unshare -r make a user namespace: ptcheck's
# --userns-unless-root skips where the machine refuses one.
set -u
tree='sh -c "exit 11"; exit 5'
bw() {
	bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid sh -c "$tree"
}
bw & a=$!
bw & b=$!
if [ "$(id -u)" = 0 ]; then
	unshare --pid --fork sh -c "$tree"
else
	unshare -rp --fork sh -c "$tree"
fi
c=$?
wait $a; a=$?
wait $b; b=$?
[ "$a $b $c" = "5 5 5" ] || { echo "pidns.sh: got $a $b $c" >&2; exit 1; }
