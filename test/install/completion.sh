#!/bin/bash
# The bash completion (tools/proftrace-completion.bash) against the
# program: every command of `proftrace --help`, every option of each
# command's --help, and the formats of convert, info and report are offered.
# usage: completion.sh SOURCE_DIR PROFTRACE
set -u
. "$1/tools/proftrace-completion.bash"
pt=$2
fail=0
complete_words() {      # complete_words WORD... (the last is completed)
	COMP_WORDS=("$pt" "$@")
	COMP_CWORD=$#
	_proftrace
	printf '%s\n' "${COMPREPLY[@]}"
}
offered() {             # offered WHAT WANT... -- GOT...
	local what=$1 w; shift
	local want=() got
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	got=" $* "
	for w in "${want[@]}"; do
		case $got in *" $w "*) ;; *) echo "FAIL: $what: $w not offered (got:$got)"; fail=1;; esac
	done
}

cmds=$("$pt" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ "$(echo "$cmds" | wc -w)" -ge 7 ] || { echo "FAIL: commands: $cmds"; exit 1; }
offered "commands" $cmds -- $(complete_words "")
for c in $cmds; do
	opts=$("$pt" "$c" --help | grep -o -E '^  -[-A-Za-z0-9]+(, --[-a-z0-9]+)?' | tr ',' ' ')
	[ -n "$opts" ] || { echo "FAIL: no options in $c --help"; fail=1; }
	offered "$c options" $opts -- $(complete_words "$c" -)
	echo "ok: $c:" $opts
done
formats=$("$pt" convert --help | sed -n 's/.*known:\([^)]*\)).*/\1/p')
offered "convert -f" $formats -- $(complete_words convert -f "")
offered "info --format" text json -- $(complete_words info --format "")
offered "report --format" text markdown -- $(complete_words report --format "")
offered "report --group-by" exe package cwd env: -- $(complete_words report --group-by "")
offered "record -- COMMAND" bash -- $(complete_words record -o x.ptcap -- ba)
[ $fail -eq 0 ] && echo "ok: every command, option and format is offered"
exit $fail
