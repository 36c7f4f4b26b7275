#!/bin/sh
# The conventions of rocmctl, rocmd and rocmtune (issue 20): the man pages and
# the bash, zsh and fish completions hold every command and option of the
# command table and nothing else (the table as cli-doc lists it, each
# completion run for every command path); --help of every command; usage
# errors exit 2 with "did you mean"; errors as JSON under --json; and, on a
# real rocmd: options anywhere, exit 5 for nothing to do, tables cut to
# COLUMNS, colour on a terminal (script(1)) and none under NO_COLOR or a pipe.
#
# Usage: test-cli.sh ROCMD ROCMCTL ROCMTUNE CLI-DOC DOC-DIR
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init cli
ROCMD=$1
CTL=$2
TUNE=$3
CLIDOC=$4
DOCS=$5

# unroff FILE: the man page's text with troff's escapes taken out.
unroff() { sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\&//g; s/\\e/\\/g' "$1"; }

# Each program's table: its command paths and each path's options.
for prog in rocmctl rocmd rocmtune; do
	case $prog in rocmd) page=rocmd.8 ;; *) page=$prog.1 ;; esac
	"$CLIDOC" $prog list >"$DIR/$prog.list" || bail "cli-doc $prog list"
	grep -v -- '--' "$DIR/$prog.list" >"$DIR/$prog.cmds"
	unroff "$DOCS/$page" >"$DIR/$prog.man"
	# The man page: a section per command and the options each defines.
	sed -n "s/^\.SS \"$prog \([a-z -]*[a-z]\).*/\1/p" "$DIR/$prog.man" | sed 's/ *$//' |
		sed 's/ [A-Z].*//' >"$DIR/$prog.man-cmds"
	if sort "$DIR/$prog.cmds" | cmp -s - "$(sort "$DIR/$prog.man-cmds" >"$DIR/x" && echo "$DIR/x")"; then
		ok "$page has a section for every command of the table, and no other"
	else
		bad "$page has a section for every command of the table, and no other" "$DIR/$prog.cmds" "$DIR/$prog.man-cmds"
	fi
	awk -v prog="$prog" '
		/^\.SS "/ { gsub(/"/, ""); sub(/^\.SS /, ""); sub(" *COMMAND.*", ""); sub(prog " ?", ""); sec = $0
			n = split(sec, w, " "); sec = ""
			for (i = 1; i <= n; i++) if (w[i] ~ /^[a-z][a-z-]*$/) sec = sec (sec == "" ? "" : " ") w[i]
			next }
		/^\.SH (OPTIONS|COMMANDS)/ { sec = "" }
		/^\.SH / && !/^\.SH (OPTIONS|COMMANDS)/ { sec = "-" }
		prev == ".TP" && sec != "-" && /^(-[A-Za-z], )?--[a-z]/ {
			o = $0; sub(/^-[A-Za-z], /, "", o); sub(/ .*/, "", o)
			if (o != "--help") print (sec == "" ? "" : sec " ") o }
		{ prev = $0 }' "$DIR/$prog.man" >"$DIR/$prog.man-opts"
	grep -- '--' "$DIR/$prog.list" | sort >"$DIR/want"
	sort "$DIR/$prog.man-opts" >"$DIR/got"
	if cmp -s "$DIR/want" "$DIR/got"; then
		ok "$page defines every option of the table where it belongs, and no other"
	else
		bad "$page defines every option of the table where it belongs, and no other" "$DIR/want" "$DIR/got"
	fi
done

# expect_words NAME WANT GOT: two lists of words, the same set.
expect_words() {
	_w=$(printf '%s\n' $2 | sort -u | tr '\n' ' ')
	_g=$(printf '%s\n' $3 | sort -u | tr '\n' ' ')
	if [ "$_w" = "$_g" ]; then ok "$1"; else
		bad "$1"
		printf '#   want: %s\n#   got:  %s\n' "$_w" "$_g"
	fi
}
# subs_of PROG PATH / opts_of PROG PATH: the table's sub-commands of PATH,
# and the options PATH takes (its own and those of the commands above it).
subs_of() {
	awk -v p="$2" 'BEGIN { n = split(p, w, " ") } !/--/ {
		m = split($0, x, " "); if (m != n + 1) next
		for (i = 1; i <= n; i++) if (x[i] != w[i]) next
		print x[m] }' "$DIR/$1.list"
}
opts_of() {
	_p= _all=$(grep '^--' "$DIR/$1.list")
	for _w in $2; do
		_p=${_p:+$_p }$_w
		_all="$_all $(grep -- "^$_p --" "$DIR/$1.list" | sed 's/.* //')"
	done
	echo "$_all --help"
}
# bash_complete PROG WORD...: what the generated bash completion of PROG
# offers for the words typed (the program's name first, the last one being
# completed); zsh_complete the same through zsh's (compadd prints).
bash_complete() {
	_p=$1
	shift
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _'"$_p"'
		printf "%s\n" "${COMPREPLY[@]}"' bash "$DOCS/$_p.bash" "$@"
}
zsh_complete() {
	_p=$1
	shift
	zsh -fc 'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }; _files() { }
		_message() { }; f=$1; shift; source "$f" >/dev/null 2>&1; words=("$@"); CURRENT=$#; _'"$_p" \
		zsh "$DOCS/_$_p" "$@"
}

for prog in rocmctl rocmd rocmtune; do
	n=0
	for sh in bash zsh fish; do
		command -v $sh >/dev/null || { skip "$prog: $sh completion" "$sh is not installed"; continue; }
		[ $sh = bash ] || n=0
		bad_before=$failed
		{ echo; cat "$DIR/$prog.cmds"; } | while IFS= read -r path; do
			# shellcheck disable=SC2086 # the path's words, split on purpose
			case $sh in
			bash) bash_complete $prog $prog $path "" >"$DIR/subs.got"; bash_complete $prog $prog $path - >"$DIR/opts.got" ;;
			zsh) zsh_complete $prog $prog $path "" >"$DIR/subs.got"; zsh_complete $prog $prog $path - >"$DIR/opts.got" ;;
			fish) fish -c 'source $argv[1]; complete -C "$argv[2..-1] "' "$DOCS/$prog.fish" $prog $path >"$DIR/subs.got"
				fish -c 'source $argv[1]; complete -C "$argv[2..-1] -"' "$DOCS/$prog.fish" $prog $path >"$DIR/opts.got" ;;
			esac
			subs=$(subs_of $prog "$path")
			if [ -n "$subs" ]; then
				[ "$(sort -u "$DIR/subs.got" | tr '\n' ' ')" = "$(printf '%s\n' $subs | sort -u | tr '\n' ' ')" ] ||
					echo "$sh: '$prog $path' offers $(tr '\n' ' ' <"$DIR/subs.got"), not $subs" >>"$DIR/compl.bad"
			fi
			want=$(printf '%s\n' $(opts_of $prog "$path") | sort -u | tr '\n' ' ')
			[ "$(sort -u "$DIR/opts.got" | tr '\n' ' ')" = "$want" ] ||
				echo "$sh: '$prog $path -' offers $(sort -u "$DIR/opts.got" | tr '\n' ' '), not $want" >>"$DIR/compl.bad"
		done
		if [ ! -s "$DIR/compl.bad" ]; then
			ok "$prog: the $sh completion offers each command's sub-commands and options, and nothing else"
		else
			bad "$prog: the $sh completion offers each command's sub-commands and options, and nothing else" "$DIR/compl.bad"
		fi
		rm -f "$DIR/compl.bad"
	done
done
# A few words the way a user types them.
expect_words "bash: rocmctl lib de<TAB>" "deploy" "$(bash_complete rocmctl rocmctl lib de)"
expect_words "bash: --to takes original or previous" "original previous" \
	"$(bash_complete rocmctl rocmctl --json lib rollback --to "")"
expect_words "bash: a value is not a command (-S PATH lib)" "status deploy verify history rollback recover ack forget" \
	"$(bash_complete rocmctl rocmctl -S /tmp/x lib "")"
expect_words "bash: log-level's levels" "info" "$(bash_complete rocmctl rocmctl log-level i)"
expect_words "bash: --force takes a list of checks" "arch" "$(bash_complete rocmctl rocmctl lib deploy --force a)"

# --help of every command, with each of its options.
for prog in rocmctl rocmd rocmtune; do
	case $prog in rocmctl) bin=$CTL ;; rocmd) bin=$ROCMD ;; *) bin=$TUNE ;; esac
	{ echo; cat "$DIR/$prog.cmds"; } | while IFS= read -r path; do
		# shellcheck disable=SC2086
		"$bin" $path --help >"$OUT" 2>"$ERR" || echo "'$prog $path --help' exits $?" >>"$DIR/help.bad"
		grep -q "^Usage: $prog${path:+ $path}" "$OUT" || echo "'$prog $path --help' has no usage line" >>"$DIR/help.bad"
		for o in $(grep -- "^${path:+$path }--" "$DIR/$prog.list" | sed 's/.* //'); do
			grep -q -- "$o" "$OUT" || echo "'$prog $path --help' lacks $o" >>"$DIR/help.bad"
		done
	done
	if [ ! -s "$DIR/help.bad" ]; then ok "$prog: --help of every command, with its options"; else
		bad "$prog: --help of every command, with its options" "$DIR/help.bad"
	fi
	rm -f "$DIR/help.bad"
done
check "rocmctl help lib (help as a command)" 0 "$CTL" help lib
contains "it is lib's help" "$OUT" "^Usage: rocmctl lib COMMAND"
check "rocmtune --version" 0 "$TUNE" --version
contains "it names rocmtune" "$OUT" "^rocmtune [0-9]"

# Usage errors: exit 2 and the reason, before any connection is made.
usage() { # usage NAME TEXT ARGS...: exit 2 and TEXT on stderr
	_n=$1 _t=$2
	shift 2
	check "$_n: exit 2" 2 "$@"
	contains "$_n: says why" "$ERR" "$_t"
}
usage "no command" "needs a command" "$CTL"
usage "an unknown command" "did you mean 'status'" "$CTL" statsu
usage "an unknown sub-command" "did you mean 'deploy'" "$CTL" lib deplyo
usage "an unknown option" "did you mean --dry-run" "$CTL" lib deploy --dryrun
usage "a bad choice" "did you mean original" "$CTL" lib rollback --to orignal
usage "a bad number" "--limit takes a whole number from 1 to 1000" "$CTL" events --limit abc
usage "an extra argument" "status takes no arguments" "$CTL" status extra
usage "a missing value" "--kind needs a value" "$CTL" events --kind
usage "a bad log level" "unknown log level 'verbose'" "$CTL" log-level verbose
usage "a bad transpose" "--trans takes NN/NT/TN/TT" "$CTL" tune add 64x64x64 --trans XY
usage "a bad shape" "not a GEMM shape" "$CTL" tune add 64x64
usage "a bad package ID" "not a package ID" "$CTL" pkg show abc
usage "a required option" "needs --arch" "$CTL" pkg match --sdk 6.2.4
usage "rocmd: an unknown option" "did you mean --foreground" "$ROCMD" --foregrund
usage "rocmd: a bad log level" "--log-level takes" "$ROCMD" --log-level verbose
usage "rocmtune: an unknown option" "did you mean --shape" "$TUNE" run --shpe 64x64x64
usage "rocmtune lib: an unknown command" "did you mean 'build'" "$TUNE" lib biuld
lacks "no getopt message" "$ERR" "unrecognized option"
check "under --json a usage error is one JSON object" 2 "$CTL" --json lib deploy --dryrun
contains "with its code and message" "$ERR" '^{"error":{"code":2,"kind":"usage","message":"unknown option'
[ "$(wc -l <"$ERR")" -eq 1 ] && ok "and nothing else on stderr" || bad "and nothing else on stderr" "$ERR"
[ ! -s "$OUT" ] && ok "nor on stdout" || bad "nor on stdout" "$OUT"
check "--json after the command too: an unreachable daemon" 3 "$CTL" lib status --json --socket "$DIR/none.sock"
contains "as JSON, kind unreachable" "$ERR" '"code":3,"kind":"unreachable"'

# On a real daemon.
printf '{}\n' >"$CONF"
mkdir -p "$DIR/root"
rocmd_start --root "$DIR/root" || bail "rocmd starts"
check "--json before the command" 0 ctl --json lib status
cp "$OUT" "$DIR/before"
check "--json after it" 0 ctl lib status --json
if cmp -s "$OUT" "$DIR/before"; then ok "the same answer"; else bad "the same answer" "$DIR/before" "$OUT"; fi
check "events --limit 1 --json: options in any order" 0 ctl events --json --limit 1
contains "JSON lines" "$OUT" '^{"id":'
check "lib recover with nothing unfinished: nothing to do" 5 ctl lib recover
contains "it says so" "$OUT" "Nothing to recover"
check "a daemon error under --json" 1 ctl --json pkg show 999
contains "is one JSON object with code 1" "$ERR" '^{"error":{"code":1,"kind":"error","message":'
lacks "no internal error name leaks" "$ERR" "ROCMD_E"
for s in 4096x4096x4096 2048x1024x4096 1024x1024x1024; do
	# (until the tuning device is probed)
	harness_retry /dev/null 30 ctl tune add $s --dtype fp16 --trans NT --budget 5 || bad "tune add $s"
done
# A raw call past the client's checks: the daemon says what is wrong in
# words, not in SQL (it answered "CHECK constraint failed: trans IN ...").
check "tune.add with a bad transpose is refused" 1 ctl call tune.add '{"m": 64, "n": 64, "k": 64, "trans": "XY"}'
contains "in words" "$ERR" "param 'trans' must be NN, NT, TN or TT, not 'XY'"
lacks "not in SQL" "$ERR" "CHECK constraint"
check "tune.add with a bad dtype is refused" 1 ctl call tune.add '{"m": 64, "n": 64, "k": 64, "dtype": "fp8"}'
contains "in words" "$ERR" "param 'dtype' must be fp32, fp16 or bf16"
tune_table() { ctl tune status | sed -n '/^ID /,$p'; }
tune_table >"$DIR/wide"
awk 'length > 80 { n++ } END { exit !n }' "$DIR/wide" && ok "piped, the queue's table is not cut" ||
	bad "piped, the queue's table is not cut" "$DIR/wide"
COLUMNS=80 ctl tune status | sed -n '/^ID /,$p' >"$DIR/cut"
if [ -s "$DIR/cut" ] && awk 'length > 80 { n++ } END { exit n }' "$DIR/cut"; then
	ok "COLUMNS=80: every line of the table fits 80 columns"
else
	bad "COLUMNS=80: every line of the table fits 80 columns" "$DIR/cut"
fi
contains "cut cells end in ..." "$DIR/cut" '\.\.\.'
# A terminal (script(1)): the states are coloured; NO_COLOR or a pipe: not.
esc=$(printf '\033')
if command -v script >/dev/null; then
	script -qec "\"$CTL\" --socket \"$SOCK\" tune status" /dev/null </dev/null >"$DIR/tty" 2>&1
	grep -q "$esc\[" "$DIR/tty" && ok "on a terminal the states are coloured" ||
		bad "on a terminal the states are coloured" "$DIR/tty"
	NO_COLOR=1 script -qec "\"$CTL\" --socket \"$SOCK\" tune status" /dev/null </dev/null >"$DIR/tty" 2>&1
	grep -q "$esc\[" "$DIR/tty" && bad "NO_COLOR: no colour" "$DIR/tty" || ok "NO_COLOR: no colour"
else
	skip "colour on a terminal" "script(1) is not installed"
fi
ctl tune status >"$DIR/pipe" 2>&1
grep -q "$esc\[" "$DIR/pipe" && bad "piped: no colour" "$DIR/pipe" || ok "piped: no colour"
rocmd_stop
harness_done
