#!/bin/sh
# Pipes, subshells, command substitution, a background job and a failing
# command: the shapes a configure script is made of.
set -u
ls / | grep -c . | tr -d ' ' > /dev/null
n=$(printf 'a\nb\nc\n' | wc -l)
[ "$n" -eq 3 ] || exit 9
( cd /tmp && /bin/true ) | cat
( exit 4 ) || echo "subshell said $?" | sed 's/said/returned/' >/dev/null
sleep 0.05 &
wait
sh -c 'exit 3' || true
false || :
printf '%s\n' done | cat | cat >/dev/null
exit 0
