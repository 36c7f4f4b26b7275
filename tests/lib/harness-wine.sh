# Sourced after harness.sh by the wine tests (tests/windows/test-*-win.sh,
# scripts/test-windows.sh): the wine prefix a script makes for itself when
# scripts/test-windows.sh did not give it one, rocmctl.exe as ctl, the live
# processes of the prefix, and failures that show the last output and the end
# of rocmd's log (its config puts rocmd.log in $T).

# A wine call takes about a second: waits go by the clock, 0.5 s apart.
# shellcheck disable=SC2034 # read by harness.sh's waits
WAIT_STEP=5
WAIT_CLOCK=1
OWN_PREFIX=0

# win_prefix NAME FOLDER: a fresh prefix in DIR=/tmp/rocmd-test-NAME-*, removed
# at exit, unless WINEPREFIX is set; in it C (drive C:) and the script's own
# folder C:\FOLDER, made afresh: T, with OUT and ERR in it, and CTL, where
# the script puts rocmctl.exe.
win_prefix() {
	if [ -z "${WINEPREFIX:-}" ]; then
		OWN_PREFIX=1
		harness_init "$1"
		export WINEPREFIX="$DIR/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
		wineboot -i >/dev/null 2>&1
		# Let the boot's own processes end: otherwise a second services.exe can
		# start beside the first, and sc then talks to either database at random.
		wineserver -w
	fi
	C=$WINEPREFIX/drive_c
	T=$C/$2
	OUT=$T/out
	ERR=$T/err
	CTL="C:\\$2\\rocmctl.exe"
	rm -rf "$T"
	mkdir -p "$T"
}

# At exit: the wine server of a prefix of our own (its processes with it).
harness_stop() {
	[ "$OWN_PREFIX" -eq 0 ] || wineserver -k >/dev/null 2>&1
	return 0
}

# A failure that named no file shows the last output; every one the end of rocmd's log.
on_bad() {
	[ "$1" -gt 0 ] || show "${OUT:-}" "${ERR:-}"
	if [ -n "${T:-}" ] && [ -s "$T/rocmd.log" ]; then
		tail -n 8 "$T/rocmd.log" | tr -d '\r' | sed 's/^/#   log: /'
	fi
	return 0
}

# ctl ARGS...: rocmctl.exe ($CTL), its output on stdout and stderr with the CRs
# dropped, and its exit status. Through files: a pipe can be held open by wine
# processes the call starts.
ctl() {
	wine "$CTL" "$@" >"$T/ctl.out" 2>"$T/ctl.err"
	_rc=$?
	tr -d '\r' <"$T/ctl.out"
	tr -d '\r' <"$T/ctl.err" >&2
	return $_rc
}

# The live processes of THIS prefix whose command line matches the extended
# regular expression $1 (pids, one a line; status 1 if none). Processes of
# other prefixes (CI stages or engineers beside this one) and zombies do not
# count: wine keeps exited processes as zombies a while.
prefix_procs() {
	_found=1
	for _p in $(pgrep -f -- "$1"); do
		grep -qzx "WINEPREFIX=$WINEPREFIX" "/proc/$_p/environ" 2>/dev/null || continue
		grep -q '^State:[[:space:]]*Z' "/proc/$_p/status" 2>/dev/null && continue
		echo "$_p $(tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null)"
		_found=0
	done
	return $_found
}
