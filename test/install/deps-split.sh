#!/bin/sh
# The README's two commands on a machine where nothing is installed, with
# apt-get, dpkg-query, npm and meson replaced by stand-ins that note what
# they are asked (a copy of the source tree; nothing is installed):
# - ./quickstart.sh installs what the build needs (debian/control's
#   Build-Depends, as dpkg-checkbuilddeps reads them, and the compiler),
#   all of it (so that `meson install` after it brings what the package
#   brings: the man pages too), none of the packages that only the tests
#   use, and never runs npm;
# - ./run-tests.sh installs everything dpkg-checkbuilddeps demands (for
#   the install-deb test) and what the quick start installs.
# usage: deps-split.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v dpkg-checkbuilddeps >/dev/null ||
	{ echo "FAIL: dpkg-checkbuilddeps missing (dpkg-dev)"; exit 1; }

# What the Debian package's build demands of a machine that has nothing:
# dpkg-checkbuilddeps against an empty package database.
mkdir "$tmp/admin"
: >"$tmp/admin/status"
dpkg-checkbuilddeps --admindir="$tmp/admin" "$src/debian/control" \
	2>"$tmp/unmet" && { echo "FAIL: no build dependency unmet?"; exit 1; }
sed -n 's/.*Unmet build dependencies: //p' "$tmp/unmet" |
	sed 's/([^)]*)//g; s/:native//g; s/debhelper-compat/debhelper/' |
	tr ' ' '\n' | sed '/^$/d' | sort -u >"$tmp/builddeps"
[ -s "$tmp/builddeps" ] || { cat "$tmp/unmet"; echo "FAIL: unread"; exit 1; }
# The build itself: Build-Depends, with the compiler that build-essential
# names (but not debhelper, which only packages), and man-db, which
# reads the man pages the build installs.
{ grep -vx -e build-essential -e debhelper "$tmp/builddeps"
  printf '%s\n' gcc make libc6-dev man-db; } | sort -u >"$tmp/allowed"

# What the two commands and their install step read.
mkdir -p "$tmp/src/test/integration/otlp" "$tmp/bin"
cp -r "$src/quickstart.sh" "$src/run-tests.sh" "$src/tools" "$src/debian" \
	"$tmp/src/"
cp "$src/test/integration/otlp/package.json" \
	"$src/test/integration/otlp/package-lock.json" \
	"$tmp/src/test/integration/otlp/"
cat >"$tmp/bin/dpkg-query" <<'X'
#!/bin/sh
exit 1
X
cat >"$tmp/bin/apt-get" <<'X'
#!/bin/sh
[ "$1" = install ] && for a; do
	case $a in -*|install) ;; *) echo "$a" >>"$PT_LOG.apt";; esac
done
exit 0
X
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/apt-cache"
printf '#!/bin/sh\necho "npm $*" >>"$PT_LOG.npm"\nexit 0\n' >"$tmp/bin/npm"
# The build stops here: only the install step is looked at.
printf '#!/bin/sh\necho "meson: not run here"; exit 1\n' >"$tmp/bin/meson"
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
chmod +x "$tmp/bin"/*

fail=0
for c in quickstart run-tests; do
	PT_LOG=$tmp/$c PATH=$tmp/bin:$PATH sh "$tmp/src/$c.sh" \
		>"$tmp/$c.out" 2>&1 || true
	if [ ! -f "$tmp/$c.apt" ]; then
		cat "$tmp/$c.out"
		echo "FAIL: ./$c.sh installed nothing on an empty machine"
		fail=1
		: >"$tmp/$c.apt"
	fi
	sort -u "$tmp/$c.apt" -o "$tmp/$c.apt"
done
echo "quick start installs: $(tr '\n' ' ' <"$tmp/quickstart.apt")"
extra=$(comm -23 "$tmp/quickstart.apt" "$tmp/allowed" | tr '\n' ' ')
if [ -n "$extra" ]; then
	echo "FAIL: ./quickstart.sh installs what the build does not need: $extra"
	fail=1
fi
lack=$(comm -13 "$tmp/quickstart.apt" "$tmp/allowed" | tr '\n' ' ')
if [ -n "$lack" ]; then
	echo "FAIL: ./quickstart.sh does not install what the build uses: $lack"
	fail=1
fi
if [ -f "$tmp/quickstart.npm" ]; then
	echo "FAIL: ./quickstart.sh runs $(cat "$tmp/quickstart.npm")"
	fail=1
fi
lack=$(comm -23 "$tmp/builddeps" "$tmp/run-tests.apt" | tr '\n' ' ')
if [ -n "$lack" ]; then
	echo "FAIL: ./run-tests.sh does not install what dpkg-checkbuilddeps" \
		"demands (install-deb): $lack"
	fail=1
fi
lack=$(comm -23 "$tmp/quickstart.apt" "$tmp/run-tests.apt" | tr '\n' ' ')
if [ -n "$lack" ]; then
	echo "FAIL: ./run-tests.sh lacks what the quick start installs: $lack"
	fail=1
fi
[ -f "$tmp/run-tests.npm" ] ||
	{ echo "FAIL: ./run-tests.sh does not fetch the test receiver's npm package"; fail=1; }
[ $fail = 0 ] || exit 1
echo "ok: the quick start installs $(wc -l <"$tmp/quickstart.apt") packages," \
	"the tests $(wc -l <"$tmp/run-tests.apt")"
