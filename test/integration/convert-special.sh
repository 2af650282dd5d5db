#!/bin/sh
# convert -o onto something that is not a regular file (here a FIFO, as
# /dev/null or a terminal would be) writes into it; it must not replace
# it with a file by renaming a temporary over it.
set -eu
pt=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/pt-special-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$pt" record -q -o "$dir/c.ptcap" -- sh -c 'true; exit 0'
mkfifo "$dir/out"
timeout 30 cat "$dir/out" > "$dir/got" &
"$pt" convert "$dir/c.ptcap" -f csv -o "$dir/out"
wait
[ -p "$dir/out" ] || { echo "FAIL: the FIFO was replaced" >&2; exit 1; }
head -n 1 "$dir/got" | grep -q '^pipeline_id,job_id,job_name,type,command,' ||
	{ echo "FAIL: no CSV came through the FIFO" >&2; exit 1; }
[ ! -e "$dir/out.tmp" ] || { echo "FAIL: left out.tmp behind" >&2; exit 1; }
echo "ok: convert wrote into the FIFO and left it a FIFO"
