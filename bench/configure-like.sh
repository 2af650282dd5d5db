#!/bin/sh
# A configure script's shape, for counting what each execution costs
# (doc/performance.md, "The library's pages and calls at the floor"):
# ROUNDS (default 100) rounds of five executions and three forks that do
# not exec, as dash runs them: /bin/true, expr and grep by vfork, sed in a
# command substitution's pipe, cat in a command substitution.
n=${1:-100}
i=0
while [ $i -lt "$n" ]; do
  /bin/true
  x=$(echo a | sed s/a/b/)
  expr 1 + 1 >/dev/null
  grep -q root /etc/passwd
  y=$(cat /etc/hostname)
  i=$((i + 1))
done
