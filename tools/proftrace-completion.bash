# bash completion for proftrace: its commands, each command's options and
# the formats and keys they take.  Read from the program's own --help, so
# that it never falls behind the program.  Installed as
# $datadir/bash-completion/completions/proftrace.

_proftrace_help()
{
	"$1" ${2:+"$2"} --help 2>/dev/null
}

_proftrace()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} i words
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		words=$(_proftrace_help "$prog" | sed -n 's/^  \([a-z][a-z]*\)  *.*/\1/p')
		COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
		return
	fi
	# record -- COMMAND...: complete the command, then its files.
	if [ "$cmd" = record ]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = -- ]; then
				if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return
			fi
		done
	fi
	case $prev in
	-f | --format)
		# Each command's own: "known: csv json ..." (convert) or
		# "text (default) or json" (report, diff, info).
		words=$(_proftrace_help "$prog" "$cmd" | sed -n \
			-e 's/.*known:\([^)]*\)).*/\1/p' \
			-e 's/^  -f, --format [A-Z]*  *\([a-z]*\) (default) or \([a-z]*\).*/\1 \2/p')
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
		;;
	-g | --group-by)
		words=$(_proftrace_help "$prog" "$cmd" | tr '|(),' '    ' |
			grep -o -w -E 'command|exe|package|cwd|env:NAME' | sort -u)
		COMPREPLY=($(compgen -W "${words//env:NAME/env:}" -- "$cur"))
		return
		;;
	--otlp-protocol)
		COMPREPLY=($(compgen -W "http/protobuf http/json" -- "$cur"))
		return
		;;
	--weight)
		COMPREPLY=($(compgen -W "wall self cpu" -- "$cur"))
		return
		;;
	--align)
		COMPREPLY=($(compgen -W "start wall" -- "$cur"))
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		words=$(_proftrace_help "$prog" "$cmd" |
			sed -n 's/^  \(-[-A-Za-z0-9]*\)\(, \(--[-a-z0-9]*\)\)\{0,1\}.*/\1 \3/p')
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _proftrace proftrace
