# Sourced by the wine stage scripts (tests/windows/test-*-win.sh): the TAP
# counters and reporters, and the wine prefix a script makes for itself when
# scripts/test-windows.sh did not give it one. A script sets T (its folder in
# the prefix) and OUT (and ERR, where it keeps stderr apart) before it reports.

passed=0
failed=0
OWN_PREFIX=0

# A fresh prefix under /tmp/rocmd-test-TAG-*, unless WINEPREFIX is set.
win_prefix() {
	[ -n "${WINEPREFIX:-}" ] && return 0
	OWN_PREFIX=1
	export WINEPREFIX
	WINEPREFIX=$(mktemp -d "/tmp/rocmd-test-$1-XXXXXX")/prefix
	export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
	wineboot -i >/dev/null 2>&1
	wineserver -w
}

ok() {
	passed=$((passed + 1))
	# printf, not echo: dash's echo would eat the backslashes of Windows paths.
	printf 'ok - %s\n' "$1"
}

# A failure, with the last command's output and the end of rocmd's log.
bad() {
	failed=$((failed + 1))
	printf 'not ok - %s\n' "$1"
	[ -s "$OUT" ] && tr -d '\r' <"$OUT" | sed 's/^/#   /'
	[ -n "${ERR:-}" ] && [ -s "$ERR" ] && tr -d '\r' <"$ERR" | sed 's/^/#   err: /'
	[ -s "$T/rocmd.log" ] && tail -n 8 "$T/rocmd.log" | tr -d '\r' | sed 's/^/#   log: /'
	return 0
}

# The live processes of THIS prefix whose command line matches the extended
# regular expression $1 (pids, one a line; status 1 if none). Processes of
# other prefixes (CI stages or engineers beside this one) and zombies do not
# count: wine keeps exited processes as zombies a while.
prefix_procs() {
	found=1
	for p in $(pgrep -f -- "$1"); do
		grep -qzx "WINEPREFIX=$WINEPREFIX" "/proc/$p/environ" 2>/dev/null || continue
		grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null && continue
		echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		found=0
	done
	return $found
}

# ctl ARGS...: rocmctl.exe ($CTL) with its output on stdout, CRs dropped, and
# its exit status. Through a file: a pipe can be held open by wine processes
# the call starts. (A script that wants the output elsewhere defines its own.)
ctl() {
	wine "$CTL" "$@" >"$T/ctl.raw" 2>&1
	rc=$?
	tr -d '\r' <"$T/ctl.raw"
	return $rc
}

# wait_for NAME SECONDS COMMAND...: retries COMMAND until it succeeds, then
# reports NAME as passed, or as failed after SECONDS.
wait_for() {
	name=$1 secs=$2
	shift 2
	end=$(($(date +%s) + secs))
	while [ "$(date +%s)" -le $end ]; do
		if "$@"; then ok "$name"; return 0; fi
		sleep 0.5
	done
	bad "$name (not within ${secs}s)"
	return 1
}
