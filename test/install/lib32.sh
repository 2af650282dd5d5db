#!/bin/sh
# 32-bit programs under the 64-bit library (design.md, pitfall 7).
#
# A 32-bit program, run untraced, then under `proftrace record` and
# against a daemon with a bare-name LD_PRELOAD, at the root and under a
# traced sh:
#  (a) its stderr is byte for byte the untraced one: ld.so never says
#      "wrong ELF class" or "cannot be preloaded" into it;
#  (b) with the 32-bit build installed beside the 64-bit one (cross/), it
#      loads it: the child it forks without exec'ing, which only the
#      library in it can report, is recorded;
#  (c) without it, its execution is still recorded, from the parent side
#      (exit status 3, as run).
#
# The installs are real, as in loader.sh: a private mount namespace in
# which /usr/local and /etc are overlays on a scratch directory (root
# only; skips otherwise).  A kernel that runs no 32-bit program
# (IA-32 emulation off) runs them through qemu-i386-static, registered
# with a binfmt_misc of a private user namespace's own.
#
# usage: lib32.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
. "$src/test/install/ns.sh"

if [ "${PT_IN_NS:-}" = "" ]; then
	tmp=$(mktemp -d /tmp/pt-lib32.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	cat >"$tmp/prog32.c" <<'X'
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
/* Says something on stderr, forks a child that only sleeps, runs a 64-bit
 * program, exits 3. */
int main(void)
{
	pid_t p;

	fprintf(stderr, "32-bit program\n");
	if ((p = fork()) == 0) {
		usleep(100000);
		_exit(0);
	}
	waitpid(p, NULL, 0);
	if ((p = fork()) == 0) {
		execl("/bin/true", "true", (char *)0);
		_exit(127);
	}
	waitpid(p, NULL, 0);
	return 3;
}
X
	if ! gcc -m32 -o "$tmp/prog32" "$tmp/prog32.c" 2>"$tmp/gcc.err"; then
		echo "SKIP: gcc -m32 cannot build a 32-bit program (gcc-multilib," \
		     "which tools/install-deps.sh installs on amd64):"
		cat "$tmp/gcc.err"
		exit 77
	fi
	pt_ns_check "$tmp"
	# The 32-bit loader's $LIB: lib32 with Debian's libc6-i386,
	# lib/i386-linux-gnu with libc6:i386.
	lib32=$(dirname "$(readlink -f /lib/ld-linux.so.2)")
	lib32=${lib32#/usr/}; lib32=${lib32#/}
	echo "32-bit \$LIB: $lib32"
	meson setup "$tmp/b64" "$src" --prefix /usr/local -Dtests=false \
		>"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
	meson setup "$tmp/b32" "$src" --cross-file "$src/cross/i386-linux-gnu.ini" \
		--prefix /usr/local --libdir "$lib32" -Dtests=false \
		>"$tmp/setup32.log" 2>&1 || { cat "$tmp/setup32.log"; exit 1; }
	for b in b64 b32; do
		ninja -C "$tmp/$b" >"$tmp/ninja.log" 2>&1 ||
			{ cat "$tmp/ninja.log"; exit 1; }
	done
	PT_IN_NS=1 PT_TMP=$tmp PT_LIB32=$lib32 $(pt_ns_cmd) sh "$0" "$src"
	exit
fi

tmp=$PT_TMP
if [ "$PT_IN_NS" = 1 ]; then
	pt_ns_mount etc usr/local
	meson install -C "$tmp/b64" --no-rebuild >"$tmp/install.log" 2>&1 ||
		{ cat "$tmp/install.log"; exit 1; }
	# A user namespace of its own (root stays root) for binfmt_misc, where
	# the machine allows one (not in a chroot, test/tools/userns.py);
	# without one, binfmt_misc is not touched.
	if why=$(python3 "$1/test/tools/userns.py"); then
		PT_IN_NS=2 unshare -Urm sh "$0" "$1"
	else
		PT_IN_NS=2 PT_NO_USERNS=$why sh "$0" "$1"
	fi
	exit
fi

# In the user namespace (the mount namespace alone where the machine
# refuses one): the 64-bit build installed, the 32-bit one not yet.
cd "$tmp"
if ! ./prog32 2>/dev/null >&2; then
	q=/usr/bin/qemu-i386-static
	if [ -n "${PT_NO_USERNS:-}" ]; then
		echo "SKIP: this kernel runs no 32-bit program, and registering" \
		     "qemu with binfmt_misc needs a user namespace: $PT_NO_USERNS"
		exit 77
	fi
	if [ ! -x $q ]; then
		echo "SKIP: this kernel runs no 32-bit program and $q is missing" \
		     "(qemu-user-static, which tools/install-deps.sh installs on amd64)"
		exit 77
	fi
	mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>"$tmp/binfmt.err" ||
		{ echo "SKIP: this kernel runs no 32-bit program, and has no" \
		       "binfmt_misc for a user namespace: $(cat "$tmp/binfmt.err")"; exit 77; }
	# ELF, 32-bit, little-endian, executable or shared object, i386.
	printf '%s' ':pt-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:'$q':F' \
		>/proc/sys/fs/binfmt_misc/register
	echo "32-bit programs run through $q"
	./prog32 2>/dev/null >&2 || [ $? = 3 ] || { echo "FAIL: prog32 does not run"; exit 1; }
fi

./prog32 2>"$tmp/err.untraced" || [ $? = 3 ]
P=/usr/local/bin/proftrace
fail=0

# check NAME CAPTURE WANT_FORK: stderr and the capture's rows of prog32.
check() {
	if ! cmp -s "$tmp/err.untraced" "$tmp/err.$1"; then
		echo "FAIL $1: stderr differs from the untraced run:"
		cat "$tmp/err.$1"
		fail=1
	fi
	$P convert -f csv -o "$tmp/$1.csv" "$2"
	python3 - "$tmp/$1.csv" "$1" "$3" <<'X' || fail=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
name, want_fork = sys.argv[2], sys.argv[3] == "1"
progs = [r for r in rows if r["type"] == "exec" and r["command"] == "./prog32"]
if not progs:
    sys.exit(f"FAIL {name}: prog32 not recorded: {rows}")
for p in progs:
    if p["exit_code"] != "3":
        sys.exit(f"FAIL {name}: prog32 recorded with exit {p['exit_code']!r}")
    forks = [r for r in rows if r["type"] == "fork" and r["ppid"] == p["pid"]]
    true = [r for r in rows if r["command"] == "true" and r["ppid"] == p["pid"]]
    if want_fork and not forks:
        sys.exit(f"FAIL {name}: prog32's fork child not recorded "
                 "(the 32-bit library not loaded)")
    if not want_fork and forks:
        sys.exit(f"FAIL {name}: a fork child without the 32-bit library?")
    print(f"ok   {name}: prog32 exit 3, {len(forks)} fork child, "
          f"{len(true)} /bin/true" +
          (" (watched)" if true and not want_fork else ""))
X
}

# run NAME WANT_FORK: record at the root, record under sh, daemon + bare
# name at the root and under sh.
run() {
	$P record -q --force -o "$tmp/r.ptcap" -- ./prog32 2>"$tmp/err.$1-record" ||
		[ $? = 3 ]
	# record's own command: in full with the 32-bit build, and without it
	# traced with ptrace event stops (doc/reliability.md, W3), its fork
	# child included.
	check "$1-record" "$tmp/r.ptcap" 1
	$P record -q --force -o "$tmp/s.ptcap" -- sh -c './prog32 2>"$0"' \
		"$tmp/err.$1-record-sh" || [ $? = 3 ]
	check "$1-record-sh" "$tmp/s.ptcap" "$2"
	$P daemon --force -o "$tmp/d.ptcap" --socket "$tmp/sock" --detach >/dev/null
	PROFTRACE_SOCKET=$tmp/sock LD_PRELOAD=libproftrace.so \
		sh -c './prog32 2>"$0"' "$tmp/err.$1-bare-sh" || [ $? = 3 ]
	if [ "$2" = 1 ]; then
		# A bare name at the root of a 32-bit program is the user's
		# own LD_PRELOAD: only where the build is installed.
		PROFTRACE_SOCKET=$tmp/sock LD_PRELOAD=libproftrace.so \
			./prog32 2>"$tmp/err.$1-bare" || [ $? = 3 ]
	fi
	$P stop --socket "$tmp/sock"
	check "$1-bare-sh" "$tmp/d.ptcap" "$2"
	if [ "$2" = 1 ] && ! cmp -s "$tmp/err.untraced" "$tmp/err.$1-bare"; then
		echo "FAIL $1-bare: stderr differs from the untraced run:"
		cat "$tmp/err.$1-bare"
		fail=1
	fi
	# And from the build tree: a path to the 64-bit library, copied to
	# /tmp, which no 32-bit program can load.
	"$tmp/b64/collector/proftrace" record -q --force -o "$tmp/t.ptcap" -- \
		sh -c './prog32 2>"$0"' "$tmp/err.$1-tree-sh" || [ $? = 3 ]
	check "$1-tree-sh" "$tmp/t.ptcap" 0
	"$tmp/b64/collector/proftrace" record -q --force -o "$tmp/t.ptcap" -- \
		./prog32 2>"$tmp/err.$1-tree" || [ $? = 3 ]
	check "$1-tree" "$tmp/t.ptcap" 1
}

echo "without the 32-bit build:"
run no32 0
meson install -C "$tmp/b32" --no-rebuild >"$tmp/install32.log" 2>&1 ||
	{ cat "$tmp/install32.log"; exit 1; }
echo "installed:"; grep -E 'Installing .*libproftrace' "$tmp/install32.log"
if grep proftrace: "$tmp/install32.log"; then
	echo "FAIL: the install step warned"; exit 1
fi
echo "with the 32-bit build in /usr/local/$PT_LIB32:"
run with32 1
exit $fail
