#!/bin/sh
# The integration tests that start rocmd, with every rocmd they start running
# under valgrind's memcheck (tests/valgrind/rocmd-valgrind.sh: leak check
# full, definite leaks and memory errors counted). Each test's command comes
# from ctest (ctest --show-only=json-v1) with the path of rocmd replaced by
# the wrapper; ROCMD_VALGRIND tells the shell harness (tests/lib/harness.sh)
# to wait longer, as everything runs 10 to 50 times slower. One test at a
# time. Prints each test's result and, per test, the rocmd processes whose
# report was read (one killed on purpose with SIGKILL leaves none), the
# children without one (an exec of a helper program leaves valgrind; an
# evaluation process cancelled or timed out is killed),
# their errors and definitely lost bytes; exits 1 when a test failed or a
# report counts an error.
#
# The tuner's evaluation process is rocmd again and runs under memcheck too
# (rocmd-valgrind.sh); its reports are counted with the daemon's.
#
# usage: tests/valgrind/valgrind.sh BUILD-DIR [CTEST-REGEX]
#   CTEST-REGEX  the tests to run (default: every test that starts rocmd
#                but test-fault, whose runs kill rocmd at each fault point:
#                test-ipc, test-rocmctl, test-service, test-pkg-daemon,
#                test-sdk-daemon, test-lib-windows, test-lib-daemon,
#                test-lib-trust-*, test-doctor-*, test-tune-daemon, test-tune-vendor)
# Installs valgrind (apt-get) when it is missing.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
REGEX=${2:-'^(test-ipc|test-rocmctl|test-service|test-pkg-daemon|test-sdk-daemon|test-lib-windows|test-lib-daemon|test-lib-trust-.*|test-doctor-.*|test-tune-daemon|test-tune-vendor)$'}
ROCMD_BIN=$BUILD/daemon/rocmd
[ -x "$ROCMD_BIN" ] || { echo "valgrind.sh: $ROCMD_BIN not built" >&2; exit 2; }
if ! command -v valgrind >/dev/null 2>&1; then
	apt-get install -y valgrind >/dev/null || { echo "valgrind.sh: cannot install valgrind" >&2; exit 2; }
fi
OUTDIR=$(mktemp -d /tmp/rocmd-valgrind-XXXXXX)
# Tests start some daemons as nobody: their reports must be writable to them.
chmod 755 "$OUTDIR"
echo "# rocmd under $(valgrind --version), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs; reports in $OUTDIR"
(cd "$BUILD" && ctest --show-only=json-v1 -R "$REGEX") >"$OUTDIR/tests.json" || exit 2
python3 - "$OUTDIR/tests.json" "$ROCMD_BIN" "$HERE/rocmd-valgrind.sh" >"$OUTDIR/plan" <<'PY'
import json, shlex, sys
tests, real, wrap = sys.argv[1:4]
for t in json.load(open(tests))["tests"]:
    cmd = t.get("command")
    if not cmd or real not in cmd:
        continue
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if props.get("DISABLED"):
        continue
    cwd = props.get("WORKING_DIRECTORY", ".")
    env = " ".join(shlex.quote(e) for e in props.get("ENVIRONMENT", []))
    line = " ".join(shlex.quote(wrap if c == real else c) for c in cmd)
    print("\t".join([t["name"], shlex.quote(cwd), env, line]))
PY
export ROCMD_VALGRIND_BIN="$ROCMD_BIN"
bad=0
NOW=$(date +%s)
TAB=$(printf '\t')
while IFS=$TAB read -r name cwd env line; do
	mkdir -p "$OUTDIR/$name"
	chmod 1777 "$OUTDIR/$name"
	export ROCMD_VALGRIND="$OUTDIR/$name"
	t0=$(date +%s)
	rc=0
	eval "cd $cwd && env $env $line" >"$OUTDIR/$name/test.log" 2>&1 </dev/null || rc=$?
	cd "$BUILD" || exit 2
	t=$(($(date +%s) - t0))
	n=0 nerr=0 lost=0 noverdict=0 children=0
	for f in "$OUTDIR/$name"/rocmd.*.log; do
		[ -f "$f" ] || continue
		e=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$f" | tr -d , | tail -n 1)
		if [ -z "$e" ]; then
			# A child rocmd started (its parent's log is here) that
			# left valgrind at its exec of a helper, or an evaluation
			# process killed on purpose; any other was killed.
			pp=$(sed -n 's/.*Parent PID: \([0-9]*\).*/\1/p' "$f" | head -n 1)
			if [ -f "$OUTDIR/$name/rocmd.$pp.log" ]; then children=$((children + 1)); else
				n=$((n + 1)) noverdict=$((noverdict + 1)); fi
			continue
		fi
		n=$((n + 1))
		nerr=$((nerr + e))
		l=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$f" | tr -d , | tail -n 1)
		lost=$((lost + ${l:-0}))
	done
	verdict=pass
	[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || verdict="FAIL (exit $rc)"
	[ "$rc" -ne 77 ] || verdict=skip
	[ "$nerr" -eq 0 ] || verdict="$verdict, $nerr valgrind errors"
	case $verdict in pass | skip) ;; *) bad=1 ;; esac
	printf '%-22s %-10s %4d s  rocmd: %3d reports, %2d killed (no report), %2d children without one; errors %d; definitely lost %d bytes\n' \
		"$name" "$verdict" "$t" "$((n - noverdict))" "$noverdict" "$children" "$nerr" "$lost"
	if [ "$nerr" -gt 0 ]; then
		grep -l 'ERROR SUMMARY: [1-9]' "$OUTDIR/$name"/rocmd.*.log | head -n 3 | sed 's/^/  see /'
	fi
	case $verdict in pass | skip) ;; *) grep '^not ok\|FAILED\|ERROR' "$OUTDIR/$name/test.log" | head -n 5 | sed 's/^/  /' ;; esac
done <"$OUTDIR/plan"
echo "# $(wc -l <"$OUTDIR/plan") tests, $(($(date +%s) - NOW)) s"
exit "$bad"
