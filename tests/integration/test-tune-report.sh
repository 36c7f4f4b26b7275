#!/bin/sh
# The tuning report end to end: the real rocmd (--root on a sandbox, the CPU
# backend) tunes its default shapes and one added shape, `rocmctl tune report
# --html FILE` writes the page, and headless Chromium (Debian's chromium)
# renders it to a screenshot, in which every plot's own mark colour must
# appear (tests/fixtures/png-marks.c counts the pixels): the tuned-against-
# default bars, the roofline, and each job's convergence. Also checked: the
# page is self-contained (no script, nothing fetched), --json gives the data
# with each job's evaluations in order, and a report with no finished job says
# so. With ROCMD_REPORT_PNG set, a screenshot of the plots is written there
# (docs/tune-report.png, the README's picture, was made so).
#
# Usage: test-tune-report.sh ROCMD ROCMCTL PNG-MARKS
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init report
ROCMD=$1
CTL=$2
MARKS=$3
ROOT=$DIR/root
DB=$STATE/rocmd.db
# The report shows the caller's bench runs too: none here, whatever the caller has.
export XDG_STATE_HOME="$DIR/xdg"

need_chromium
rocmd_start_cpu_tuner 12

# (Beside the report: a session agent's input report has no use on Linux.)
ctl call tune.input '{"idle_ms": 5}' >"$OUT" 2>&1 && bad "tune.input is refused on Linux" ||
	{ grep -q "evdev and logind" "$OUT" && ok "tune.input is refused on Linux (rocmd reads evdev and logind)"; } ||
	bad "tune.input is refused on Linux (rocmd reads evdev and logind)"
ctl tune report --html "$DIR/empty.html" >"$OUT" 2>&1 && grep -q "No job has finished yet" "$DIR/empty.html" &&
	ok "a report before any job finished says so" || bad "a report before any job finished says so"

ctl tune add 40x48x32 --budget 30 >/dev/null 2>&1
ctl tune start >/dev/null 2>&1
wait_for "three jobs done" 120 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE state = 'done'\") -ge 3 ]"

ctl --json tune report >"$DIR/report.json" 2>&1
n=$(grep -o '"evals":' "$DIR/report.json" | wc -l)
[ "$n" -ge 3 ] && ok "tune.report: $n jobs with their evaluations" || bad "tune.report: jobs with their evaluations ($n)"
# The added job's 30 evaluations, each [ms or null, outcome], in the order they ran.
sqlite3 "$DB" "SELECT count(*) FROM tune_eval e JOIN tune_job j ON j.id = e.job_id WHERE j.problem LIKE 'fp32:NN:40x48x32:%'" >"$OUT"
[ "$(cat "$OUT")" -eq 30 ] && grep -q '\[[0-9.e-]*, *"ok"\]' "$DIR/report.json" &&
	ok "each evaluation is its time and outcome" || bad "each evaluation is its time and outcome"

ctl tune report --html "$DIR/report.html" >"$OUT" 2>&1 && ok "tune report --html writes the page" ||
	bad "tune report --html writes the page"
grep -q "plot(s) of [0-9]* job(s) written to" "$OUT" && ok "it says what it wrote" || bad "it says what it wrote"
plots=$(grep -o '<svg class="plot"' "$DIR/report.html" | wc -l)
[ "$plots" -ge 5 ] && ok "$plots plots: bars, roofline and a convergence per job" ||
	bad "plots: bars, roofline and a convergence per job ($plots)"

# Rendered by a real browser: every plot's mark colour is on the screenshot.
report_plots_drawn "$DIR/report.html" "$DIR/report.png" 1400,2400 "$MARKS"
# The README's picture: the same page, the height of its plots.
[ -z "${ROCMD_REPORT_PNG:-}" ] || timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu \
	--hide-scrollbars --force-device-scale-factor=1 --window-size=1320,700 \
	--screenshot="$ROCMD_REPORT_PNG" "file://$DIR/report.html" >/dev/null 2>&1

harness_done
