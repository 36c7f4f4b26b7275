# The shell harness every shell test sources (tests/integration/*.sh,
# tests/windows/*.sh, scripts/test-windows.sh, scripts/test-service.sh): TAP
# lines and their counts, checks of exit statuses, files and trees, waiting
# for a condition, a private temporary folder removed at exit, and rocmd on a
# private socket and state folder in it, stopped at exit. POSIX sh (the tests
# run under dash); the harness's own variables start with an underscore.
#
#	. "$(dirname "$0")/../lib/harness.sh"
#	harness_init ctl        # DIR=/tmp/rocmd-test-ctl-XXXXXX; SOCK, STATE, CONF, OUT, ERR in it
#	ROCMD=$1 CTL=$2
#	rocmd_start || bail "rocmd did not start"
#	check "status" 0 ctl status
#	contains "status shows the schema" "$OUT" "Schema version"
#	harness_done
#
# A test may define on_bad, run after each failure's lines (its argument: how
# many files the failure named and showed), and on_exit, run first at exit,
# before the daemons are stopped and DIR is removed.

passed=0
failed=0
skipped=0
# Only the folder harness_init made is ever removed (never one from the environment).
HARNESS_DIR=
# rocmctl cuts its tables to COLUMNS and colours with NO_COLOR unset on a
# terminal: the tests read its output as a pipe gets it, whatever the caller's.
unset COLUMNS NO_COLOR
# Waits try every WAIT_STEP tenths of a second, SECONDS*10/WAIT_STEP times (a
# loaded machine gets more time, as these tests always had); with WAIT_CLOCK
# set, until SECONDS have passed on the clock (harness-wine.sh: a wine call
# takes about a second).
WAIT_STEP=1
WAIT_CLOCK=
# Under tests/valgrind/valgrind.sh (ROCMD_VALGRIND set) every rocmd runs
# under memcheck, 10 to 50 times slower: each wait is 10 times as long, and
# so is rocmctl's wait for a reply.
WAIT_SCALE=1
if [ -n "${ROCMD_VALGRIND:-}" ]; then
	WAIT_SCALE=10
	export ROCMD_CLIENT_TIMEOUT_S="${ROCMD_CLIENT_TIMEOUT_S:-600}"
fi

# harness_init NAME: the test's folder, and the paths of its daemon and outputs.
harness_init() {
	HARNESS_DIR=$(mktemp -d "/tmp/rocmd-test-$1-XXXXXX") || bail "mktemp"
	# Readable by the unprivileged users some tests run commands as.
	chmod 755 "$HARNESS_DIR"
	DIR=$HARNESS_DIR
	SOCK=$DIR/rocmd.sock
	STATE=$DIR/state
	CONF=$DIR/rocmd.json
	OUT=$DIR/out
	ERR=$DIR/err
}

# ---- TAP ----

ok() {
	passed=$((passed + 1))
	# printf, not echo: dash's echo would eat the backslashes of Windows paths.
	printf 'ok - %s\n' "$1"
}

skip() { # skip NAME WHY
	skipped=$((skipped + 1))
	printf 'ok - %s # skip %s\n' "$1" "$2"
}

# show FILE...: the first 60 lines of each non-empty FILE as TAP comments.
show() {
	for _f in "$@"; do
		[ -s "$_f" ] && head -n 60 "$_f" | tr -d '\r' | sed 's/^/#   /'
	done
	return 0
}

# bad NAME [FILE...]: a failure, with FILEs shown.
bad() {
	failed=$((failed + 1))
	printf 'not ok - %s\n' "$1"
	shift
	show "$@"
	if command -v on_bad >/dev/null 2>&1; then on_bad $#; fi
	return 0
}

# bail NAME: a failure after which nothing can pass; ends the test.
bail() {
	bad "$@"
	exit 1
}

# harness_done [WHAT]: the summary line; status 0 when nothing failed.
harness_done() {
	printf '# %s%s passed, %s failed' "${1:+$1: }" "$passed" "$failed"
	[ "$skipped" -eq 0 ] || printf ', %s skipped' "$skipped"
	printf '\n'
	[ "$failed" -eq 0 ]
}

# ---- checks ----

# check NAME WANT COMMAND...: COMMAND exits with WANT; its output is left in
# $OUT and $ERR.
check() {
	_name=$1 _want=$2
	shift 2
	_got=0
	"$@" >"$OUT" 2>"$ERR" || _got=$?
	if [ "$_got" -eq "$_want" ]; then ok "$_name"; else
		bad "$_name (exit $_got, wanted $_want)" "$OUT" "$ERR"
	fi
}

contains() { # contains NAME FILE TEXT: a line of FILE matches the basic regular expression TEXT
	if grep -q -- "$3" "$2"; then ok "$1"; else bad "$1 ('$3' not in $2)" "$2"; fi
}

lacks() { # lacks NAME FILE TEXT: no line of FILE matches TEXT
	if grep -q -- "$3" "$2"; then bad "$1 ('$3' in $2)" "$2"; else ok "$1"; fi
}

same() { # same NAME A B: two trees (or files) byte for byte, symlinks as links
	if diff -r --no-dereference "$2" "$3" >"$OUT.diff" 2>&1; then ok "$1"; else
		bad "$1" "$OUT.diff"
	fi
}

# ---- waiting ----

# harness_retry FILE SECONDS COMMAND...: retries COMMAND (its output into FILE,
# each try anew) until it succeeds; its status.
harness_retry() {
	_to=$1 _secs=$(($2 * WAIT_SCALE))
	shift 2
	_tries=$((_secs * 10 / WAIT_STEP))
	_end=$(($(date +%s) + _secs))
	_i=0
	until "$@" >"$_to" 2>&1; do
		_i=$((_i + 1))
		if [ -n "$WAIT_CLOCK" ]; then
			[ "$(date +%s)" -le "$_end" ] || return 1
		elif [ "$_i" -ge "$_tries" ]; then
			return 1
		fi
		sleep "$((WAIT_STEP / 10)).$((WAIT_STEP % 10))"
	done
}

# wait_for NAME SECONDS COMMAND...: retries COMMAND until it succeeds, then
# reports NAME as passed, or as failed (with the daemon's last events) after
# SECONDS.
# settle SECONDS: sleeps SECONDS (times WAIT_SCALE under valgrind), where a
# test must let a time window of the daemon's pass (the grace after its own
# writes, sdk-own.c) and there is nothing to wait for.
settle() { sleep $(($1 * WAIT_SCALE)); }

wait_for() {
	_wname=$1
	shift
	if harness_retry /dev/null "$@"; then
		ok "$_wname"
		return 0
	fi
	bad "$_wname (not within ${1}s)"
	if [ -n "${CTL:-}" ] && [ -S "${SOCK:-}" ]; then
		ctl events --all 2>&1 | tail -n 15 | sed 's/^/#   event: /'
	fi
	return 1
}

# wait_until SECONDS COMMAND...: the same, silent; the last try's output is left in $OUT.
wait_until() {
	harness_retry "$OUT" "$@"
}

# wait_gone PID [SECONDS]: until process PID has ended (10 s unless given).
wait_gone() {
	harness_retry /dev/null "${2:-10}" harness_gone "$1"
}
harness_gone() { ! kill -0 "$1" 2>/dev/null; }

# ---- rocmd, rocmctl ----

# rocmd_start [ARGS...]: $ROCMD on $SOCK with $STATE and $CONF; it detaches
# and returns once it listens.
rocmd_start() {
	"$ROCMD" --state-dir "$STATE" --socket "$SOCK" --config "$CONF" "$@"
}

# rocmd_stop: shuts down the rocmd on $SOCK and waits until it has ended (20 s at most).
rocmd_stop() {
	_p=$(ctl --json status 2>/dev/null | jnum pid)
	ctl shutdown >/dev/null 2>&1
	[ -z "$_p" ] || wait_gone "$_p" 20
}

ctl() { "$CTL" --socket "$SOCK" "$@"; }

# has_event KIND TEXT: an event of KIND (a prefix) holds TEXT; the list is left in $OUT.
has_event() {
	ctl events --all --kind "$1" >"$OUT" 2>&1 && grep -q -- "$2" "$OUT"
}

# jnum KEY / jstr KEY: the first number / string after "KEY": in JSON on stdin.
jnum() { grep -o "\"$1\":[[:space:]]*[-0-9.e]*" | head -n 1 | sed 's/.*:[[:space:]]*//'; }
jstr() { grep -o "\"$1\":[[:space:]]*\"[^\"]*\"" | head -n 1 | sed 's/.*:[[:space:]]*"//; s/"$//'; }

# sql QUERY: the daemon's database ($DB), waiting out its writer's locks.
sql() { sqlite3 -cmd ".timeout 5000" "$DB" "$1"; }

# make_rocblas_dll DIR DLL FILEVERSION [VALUE]: builds DLL, a real PE rocblas.dll,
# with mingw-w64 in DIR: it imports amdhip64_6.dll's hipMalloc (asking for VALUE
# bytes, 64 unless given, so that two builds differ) and has a VERSIONINFO with
# FILEVERSION (such as 4,2,0,7). Status 1 when mingw-w64 cannot build it.
make_rocblas_dll() {
	_d=$1
	mkdir -p "$_d"
	printf 'LIBRARY amdhip64_6.dll\nEXPORTS\nhipMalloc\n' >"$_d/hip.def"
	printf '%s\n%s\n' '__declspec(dllimport) int hipMalloc(void **p, unsigned long long n);' \
		'__declspec(dllexport) int rocblas_create_handle(void **h) { return hipMalloc(h, VALUE); }' \
		>"$_d/rb.c"
	printf '1 VERSIONINFO\nFILEVERSION %s\nPRODUCTVERSION 6,2,4,0\nBEGIN\nEND\n' "$3" >"$_d/rb.rc"
	x86_64-w64-mingw32-dlltool -d "$_d/hip.def" -l "$_d/libamdhip64_6.a" &&
		x86_64-w64-mingw32-windres "$_d/rb.rc" -O coff -o "$_d/rb.res" &&
		x86_64-w64-mingw32-gcc -DVALUE="${4:-64}" -shared -o "$2" "$_d/rb.c" "$_d/rb.res" \
			-L"$_d" -lamdhip64_6
}

# ---- at exit ----

# rocmd_start_cpu_tuner BUDGET: rocmd under --root $ROOT (a quiet
# /proc/loadavg there) with the CPU tuner, tuning only after `tune start`,
# BUDGET evaluations per job; returns once the device is probed
# (test-tune-report.sh, test-bench.sh).
rocmd_start_cpu_tuner() {
	mkdir -p "$ROOT/proc" "$STATE"
	echo "0.10 0.10 0.10 1/100 1" >"$ROOT/proc/loadavg"
	printf '{"tune": {"idle_s": 3600, "check_ms": 200, "budget": %d, "backend": "cpu", "max_cpu_load": 400}}\n' \
		"$1" >"$CONF"
	rocmd_start --root "$ROOT" --log-level info 2>>"$DIR/log" || bail "rocmd did not start"
	wait_for "device probed (cpu backend)" 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json tune status | grep -q '\"backend\":[[:space:]]*\"cpu\"'"
}

# need_chromium: CHROME, Debian's chromium, for report_plots_drawn.
need_chromium() {
	CHROME=$(command -v chromium || command -v chromium-browser || true)
	[ -n "$CHROME" ] || bail "chromium is not installed (scripts/deps-debian.sh installs it)"
}

# report_plots_drawn HTML PNG WIDTH,HEIGHT PNG-MARKS: checks that the HTML
# report (client/report-html.c) is self-contained (no script, nothing
# fetched), renders it in headless Chromium ($CHROME) to PNG and checks that
# every plot (<svg class="plot" data-mark="#rrggbb">) drew marks of its own
# colour on the screenshot (tests/fixtures/png-marks.c counts the pixels):
# test-tune-report.sh and test-bench.sh.
report_plots_drawn() {
	if grep -qi '<script\|https\?://\|<link\|<img' "$1"; then
		bad "the page is self-contained (no script, nothing fetched)"
	else
		ok "the page is self-contained (no script, nothing fetched)"
	fi
	_plots=$(grep -o '<svg class="plot"' "$1" | wc -l)
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--force-device-scale-factor=1 --window-size="$3" --screenshot="$2" \
		"file://$1" >"$DIR/chrome.log" 2>&1
	[ -s "$2" ] && ok "chromium renders the page to a screenshot" ||
		{ cp "$DIR/chrome.log" "$OUT"; bad "chromium renders the page to a screenshot"; }
	grep -o 'data-mark="#[0-9a-f]*"' "$1" | sed 's/data-mark="\(.*\)"/\1/' >"$DIR/colours"
	# shellcheck disable=SC2046 # one argument per colour
	"$4" "$2" $(cat "$DIR/colours") >"$DIR/marks" 2>&1
	sed 's/^/#   /' "$DIR/marks"
	_blank=$(awk '$2 < 10' "$DIR/marks" | wc -l)
	_drawn=$(awk '$2 >= 10' "$DIR/marks" | wc -l)
	[ "$_drawn" -eq "$_plots" ] && [ "$_blank" -eq 0 ] && ok "every plot drew its marks ($_drawn of $_plots)" ||
		bad "every plot drew its marks ($_drawn of $_plots)"
}

# harness_stop: stops every rocmd whose socket is in DIR, and kills one that
# has not ended 5 s after (harness-wine.sh replaces it: there, the wine server
# of the test's own prefix).
harness_stop() {
	[ -n "${CTL:-}" ] && [ -n "$HARNESS_DIR" ] || return 0
	_pids=$(find "$HARNESS_DIR" -type s 2>/dev/null | while IFS= read -r _s; do
		_p=$("$CTL" --socket "$_s" --json status </dev/null 2>/dev/null | jnum pid)
		"$CTL" --socket "$_s" shutdown </dev/null >/dev/null 2>&1 && echo "$_p"
	done)
	for _p in $_pids; do
		wait_gone "$_p" 5 && continue
		echo "# rocmd (pid $_p) still running 5 s after its shutdown: killed"
		kill -9 "$_p" 2>/dev/null
	done
	return 0
}

harness_cleanup() {
	set +e
	if command -v on_exit >/dev/null 2>&1; then on_exit; fi
	harness_stop
	if [ -n "$HARNESS_DIR" ]; then
		# Folders a test made unreadable or read-only (files need no change:
		# some are hard links into the shared cache of SDK trees).
		find "$HARNESS_DIR" -type d ! -perm -u=rwx -exec chmod u+rwx {} + 2>/dev/null
		rm -rf "$HARNESS_DIR"
	fi
}
trap harness_cleanup EXIT
trap 'exit 1' INT TERM HUP
