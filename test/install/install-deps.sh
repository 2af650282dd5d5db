#!/bin/sh
# tools/install-deps.sh with apt replaced by a stand-in that warns as apt
# does: the quick start shows one line (what it installs), not apt's
# chatter; when apt fails, its output is shown and the script fails.
# usage: install-deps.sh SOURCE_DIR
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'X'
#!/bin/sh
case "$*" in *strace*) exit 1;; esac
echo 'install ok installed'
X
cat >"$tmp/bin/apt-get" <<'X'
#!/bin/sh
echo "W: an apt warning on stderr ($1)" >&2
echo "Reading package lists... ($1)"
[ "$1" = install ] && [ -n "${APT_FAIL:-}" ] && { echo "E: Unable to locate package" >&2; exit 100; }
exit 0
X
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
chmod +x "$tmp/bin"/*

PATH=$tmp/bin:$PATH sh "$src/tools/install-deps.sh" >"$tmp/out" 2>"$tmp/err"
if [ "$(cat "$tmp/out" "$tmp/err")" != "proftrace: installing: strace" ]; then
	echo "FAIL: install-deps.sh printed more than what it installs:"
	cat "$tmp/out" "$tmp/err"
	exit 1
fi
if APT_FAIL=1 PATH=$tmp/bin:$PATH sh "$src/tools/install-deps.sh" >"$tmp/out" 2>"$tmp/err"; then
	echo "FAIL: install-deps.sh succeeded although apt-get failed"; exit 1
fi
grep -q "E: Unable to locate package" "$tmp/err" ||
	{ echo "FAIL: apt's error was not shown:"; cat "$tmp/err"; exit 1; }
echo "ok: one line when apt succeeds, apt's output when it fails"
