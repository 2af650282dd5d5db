#!/bin/sh
# The 32-bit library's own system calls never pass through a syscall()
# (preload/pt-sys.h): not its exported hook, and not a program's own.
#
# A 32-bit program that exports a syscall() of its own (which counts its
# calls and fails them) and forks a child: under a daemon and a bare
# LD_PRELOAD of the 32-bit build, its stdout (the count) is byte for byte
# the untraced one, and the capture holds its exec and its fork child,
# which only the library in it can report.  Run natively, or through
# qemu-i386-static where the kernel runs no 32-bit program.
#
# usage: lib32-syscall.sh SOURCE_DIR PROFTRACE
set -eu
src=$(cd "$1" && pwd)
P=$(readlink -f "$2")
tmp=$(mktemp -d /tmp/pt-lib32sc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/own.c" <<'X'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static int calls;
/* The program's syscall(), exported (-rdynamic); it calls it nowhere. */
long syscall(long nr, ...)
{
	calls++;
	return -1;
}
int main(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	printf("syscall() called %d times\n", calls);
	return 0;
}
X
if ! gcc -m32 -rdynamic -o "$tmp/own32" "$tmp/own.c" 2>"$tmp/gcc.err"; then
	echo "SKIP: gcc -m32 cannot build a 32-bit program (gcc-multilib," \
	     "which tools/install-deps.sh installs on amd64):"
	cat "$tmp/gcc.err"
	exit 77
fi
run=
if ! "$tmp/own32" >/dev/null 2>&1; then
	run=/usr/bin/qemu-i386-static
	[ -x $run ] || { echo "SKIP: this kernel runs no 32-bit program and" \
		"$run is missing (qemu-user-static)"; exit 77; }
	echo "32-bit programs run through $run"
fi
meson setup "$tmp/b32" "$src" --cross-file "$src/cross/i386-linux-gnu.ini" \
	-Dtests=false >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
ninja -C "$tmp/b32" preload/libproftrace.so >"$tmp/ninja.log" 2>&1 ||
	{ cat "$tmp/ninja.log"; exit 1; }

cd "$tmp"
$run ./own32 >out.untraced
"$P" daemon --force -o d.ptcap --socket "$tmp/sock" --detach >/dev/null
PROFTRACE_SOCKET=$tmp/sock LD_PRELOAD=$tmp/b32/preload/libproftrace.so \
	$run ./own32 >out.traced
"$P" stop --socket "$tmp/sock"
fail=0
if ! cmp -s out.untraced out.traced; then
	echo "FAIL: stdout differs from the untraced run ($(cat out.untraced)):"
	cat out.traced
	fail=1
fi
"$P" convert -f csv -o d.csv d.ptcap
python3 - d.csv <<'X' || fail=1
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["command"] == "./own32"]
kinds = sorted(r["type"] for r in rows)
if kinds != ["exec", "fork"]:
    sys.exit(f"FAIL: own32's exec and fork child not recorded: {kinds}")
print("ok   own32 recorded: exec and its fork child")
X
exit $fail
