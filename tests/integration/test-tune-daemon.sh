#!/bin/sh
# Idle tuning end to end: the real rocmd (--root on a sandbox, the CPU
# backend) and rocmctl on a private socket. Every idle signal is driven from
# its real source in the sandbox: a uinput keyboard (where /dev/uinput opens;
# otherwise a FIFO at <root>/dev/input/event0 carrying the same evdev events,
# and the test says so), /sys/class/power_supply (AC and a battery),
# /sys/class/kfd/kfd/proc (another process on the GPU) and /proc/loadavg.
# Checked: the decision and its reason for each signal and the job yielding
# and resuming; rocmctl tune add/pause/resume and their permission; kill -9
# during a job and a restart that repeats no finished evaluation; the queue
# surviving restarts; results and export/import; a job with no correct
# configuration failing with its reason in results and the log; and, with the real SDK trees
# (tests/fixtures/make-trees.sh), an SDK upgrade from HIP 5.2.3 to 5.7.1 that marks
# the results stale and runs seeded re-tunes; then a driver update, live and
# across a restart, that does the same. No backend can change its driver on
# a test machine: the daemon runs with the test hook ROCMD_TUNE_DRIVER=@FILE,
# which replaces only the driver string the device reports (read at each
# evaluator open); the tuner, the store and the queue are the real ones.
#
# Usage: test-tune-daemon.sh ROCMD ROCMCTL INPUT-INJECT
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init tune
ROCMD=$1
CTL=$2
INJECT=$3
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
ROOT=$DIR/root
DB=$STATE/rocmd.db
UPID=""

on_exit() { [ -z "$UPID" ] || kill "$UPID" 2>/dev/null; }
on_bad() {
	ctl tune status 2>&1 | sed 's/^/#   /'
	tail -n 15 "$DIR/log" | sed 's/^/#   log: /'
	tail -n 15 "$STATE/rocmd.log" 2>/dev/null | sed "s/^/#   rocmd.log: /"
}
state() { ctl --json tune status | jstr state; }
decision() { ctl --json tune status | jstr decision; }
is_state() { [ "$(state)" = "$1" ]; }
decision_has() { decision | grep -q -- "$1"; }
start() {
	rocmd_start --root "$ROOT" --log-level info 2>>"$DIR/log"
}
touch_input() {
	if [ -n "$UPID" ]; then echo key >&8; else "$INJECT" fifo "$ROOT/dev/input/event0"; fi
}

mkdir -p "$ROOT/sys/class/power_supply/AC" "$ROOT/sys/class/power_supply/BAT0" \
	"$ROOT/sys/class/kfd/kfd/proc" "$ROOT/proc" "$ROOT/dev" "$STATE"
echo Mains >"$ROOT/sys/class/power_supply/AC/type"
echo 1 >"$ROOT/sys/class/power_supply/AC/online"
echo Battery >"$ROOT/sys/class/power_supply/BAT0/type"
echo Charging >"$ROOT/sys/class/power_supply/BAT0/status"
echo "0.10 0.10 0.10 1/100 1" >"$ROOT/proc/loadavg"
have_trees=0
if [ -f "$TREES/bookworm/usr/share/hip/version" ] && [ -f "$TREES/trixie/usr/share/hip/version" ]; then
	cp -al "$TREES/bookworm/usr" "$ROOT/usr" && have_trees=1
fi

# The input source: a real uinput keyboard, else a FIFO with the same events.
mkfifo "$DIR/keys"
"$INJECT" uinput <"$DIR/keys" >"$DIR/uinput.out" 2>&1 &
UPID=$!
exec 8>"$DIR/keys"
sleep 0.5
if grep -q '^skip' "$DIR/uinput.out"; then
	echo "# $(cat "$DIR/uinput.out"); using a FIFO at <root>/dev/input/event0 instead"
	UPID=""
	exec 8>&-
	mkdir -p "$ROOT/dev/input"
	mkfifo "$ROOT/dev/input/event0"
else
	ln -s /dev/input "$ROOT/dev/input"
	echo "# uinput keyboard at $(cat "$DIR/uinput.out")"
fi

# The driver the CPU backend reports (normally the kernel release), by the test hook.
echo "test driver 1" >"$DIR/driver"
export ROCMD_TUNE_DRIVER="@$DIR/driver"

cat >"$DIR/rocmd.json" <<EOF
{"tune": {"idle_s": 2, "check_ms": 200, "budget": 12, "backend": "cpu", "max_cpu_load": 400}}
EOF
start || bail "rocmd did not start"
wait_for "device probed (cpu backend)" 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json tune status | grep -q '\"backend\":[[:space:]]*\"cpu\"'"
[ $have_trees -eq 1 ] && wait_for "jobs keyed to SDK 5.2.3" 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json tune status | grep -q '\"sdk\":[[:space:]]*\"5.2.3\"'"

# The default shapes first: a job a user adds goes ahead of queued ones.
wait_for "default shapes done" 60 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE origin <> 'user' AND state = 'done'\") -ge 2 ]"

# tune watch: nothing to watch with an empty queue (exit 5); a small job
# followed to its end, a plain line per job off a terminal; on a terminal
# (script(1)) a bar that never passes 100 %.
wait_for "the queue is empty" 60 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE state IN ('queued', 'running')\") -eq 0 ]"
check "tune watch with an empty queue: nothing to do" 5 ctl tune watch
contains "it says the queue is empty" "$OUT" "The tuning queue is empty"
ctl tune add 96x96x96 --budget 12 >/dev/null 2>&1
check "tune watch follows the job to its end" 0 timeout 120 "$CTL" --socket "$SOCK" tune watch
contains "a plain line for the job, in evaluations" "$ERR" "^rocmctl: job [0-9]*: [0-9]* of 12 evaluations"
contains "then the end" "$OUT" "The tuning queue is empty: 1 job(s) done, 0 failed"
if command -v script >/dev/null 2>&1; then
	ctl tune add 80x80x80 --budget 12 >/dev/null 2>&1
	rc=0
	COLUMNS=100 script -qec "timeout 120 \"$CTL\" --socket \"$SOCK\" tune watch" /dev/null >"$DIR/watch.tty" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then ok "tune watch on a terminal: exit 0"; else
		bad "tune watch on a terminal: exit 0 (exit $rc)" "$DIR/watch.tty"; fi
	tr '\r' '\n' <"$DIR/watch.tty" >"$DIR/watch.lines"
	contains "a bar with its percentage and evaluations" "$DIR/watch.lines" "job [0-9]* *\[[#.]*\] *[0-9]*%  [0-9]* of 12 evaluations"
	lacks "never past 100 %" "$DIR/watch.lines" "\] *\(1[0-9][1-9]\|1[1-9][0-9]\|[2-9][0-9][0-9]\)%"
else
	skip "tune watch on a terminal" "no script(1)"
fi

# A long user job, so that there is something to interrupt.
ctl tune add 256x512x512 --budget 20000 >"$DIR/add" 2>&1
grep -q "queued" "$DIR/add" && ok "tune add queues a job" || bad "tune add queues a job"
ctl tune status >"$DIR/status"
grep -q "power .*AC online" "$DIR/status" && ok "status shows the power source" ||
	bad "status shows the power source"
grep -q "input .*[0-9] device" "$DIR/status" && ok "status shows the input devices" ||
	bad "status shows the input devices"
wait_for "tuning starts once idle" 30 is_state tuning

# AC power: on battery the job yields; back on AC it resumes.
echo 0 >"$ROOT/sys/class/power_supply/AC/online"
echo Discharging >"$ROOT/sys/class/power_supply/BAT0/status"
wait_for "yields on battery" 5 decision_has "on battery"
wait_for "not tuning on battery" 5 is_state waiting
echo 1 >"$ROOT/sys/class/power_supply/AC/online"
wait_for "resumes on AC" 10 is_state tuning

# Another process on the GPU.
mkdir "$ROOT/sys/class/kfd/kfd/proc/424242"
wait_for "yields to another GPU process" 5 decision_has "other process using the GPU"
rmdir "$ROOT/sys/class/kfd/kfd/proc/424242"
wait_for "resumes when the GPU is free" 10 is_state tuning

# User input: yields at once; the load limit then holds the next start.
touch_input
wait_for "yields on user input" 3 has_event tune.yielded "user input"
is_state waiting && ok "waiting after input" || bad "waiting after input"
decision_has "user active" && ok "decision names the user" || bad "decision names the user"
echo "9.00 9.00 9.00 1/100 1" >"$ROOT/proc/loadavg"
wait_for "CPU load holds the start" 10 decision_has "CPU load"
echo "0.10 0.10 0.10 1/100 1" >"$ROOT/proc/loadavg"
wait_for "starts again when idle and unloaded" 10 is_state tuning
lat=$(ctl --json tune status | jnum p99_ms)
echo "# preemption latency p99 so far: ${lat:-?} ms"

# Pause and resume; admin only.
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
	chmod 755 "$DIR" && chmod 666 "$SOCK" 2>/dev/null
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" --socket "$SOCK" tune pause \
		>"$DIR/np" 2>&1
	[ $? -eq 4 ] && ok "tune pause refused to nobody" || bad "tune pause refused to nobody"
fi
ctl tune pause >/dev/null && wait_for "paused" 5 is_state paused
ctl tune resume >/dev/null && wait_for "resumed" 10 is_state tuning

# kill -9 in the middle of a job: no finished evaluation is lost or repeated.
job=$(sql "SELECT id FROM tune_queue WHERE m = 256 AND state <> 'stale'")
wait_for "job has evaluations stored" 30 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_eval e JOIN tune_job j ON j.id = e.job_id WHERE j.problem LIKE '%256x512x512%'\") -ge 5 ]"
pid=$(ctl --json status | jnum pid)
kill -9 "$pid"
sleep 0.5
rm -f "$SOCK"
EVALS="SELECT e.job_id || ' ' || e.config || ' ' || e.time_ms FROM tune_eval e JOIN tune_job j ON j.id = e.job_id WHERE j.problem LIKE '%256x512x512%' ORDER BY 1"
sql "$EVALS" >"$DIR/before"
before=$(wc -l <"$DIR/before")
echo "# killed with $before evaluations stored"
start || bail "rocmd did not restart"
[ "$(sql "SELECT state FROM tune_queue WHERE id = $job")" = "running" ] &&
	ok "the interrupted job is still in the queue" || bad "the interrupted job is still in the queue"
wait_for "the interrupted job resumes" 30 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_eval e JOIN tune_job j ON j.id = e.job_id WHERE j.problem LIKE '%256x512x512%'\") -gt $before ]"
sql "$EVALS" >"$DIR/after"
lost=$(grep -Fxvc -f "$DIR/after" "$DIR/before")
[ "$lost" -eq 0 ] && ok "every evaluation finished before the kill is kept, none re-measured" ||
	bad "every evaluation finished before the kill is kept ($lost lost or re-measured)"
dups=$(sql "SELECT count(*) - count(DISTINCT e.job_id || e.config) FROM tune_eval e")
[ "$dups" -eq 0 ] && ok "no evaluation stored twice" || bad "no evaluation stored twice ($dups)"
ctl tune pause >/dev/null
ctl tune resume >/dev/null

# The queue survives a clean restart too, and a pause outlives it.
ctl tune pause >/dev/null
rocmd_stop
start || bail "rocmd did not restart"
wait_for "a pause survives a restart" 10 is_state paused
ctl tune resume >/dev/null

# Results, export and import.
ctl tune results >"$DIR/results"
grep -q "fp32 NN 8x256x256 .*MT0=" "$DIR/results" && ok "results list a winner" ||
	bad "results list a winner"
has_event tune.library "tuned library written" && ok "the tuned library is written" ||
	bad "the tuned library is written"
ctl tune export --format csv -o "$DIR/export.csv" 2>/dev/null
grep -q "8x256x256\|256" "$DIR/export.csv" && ok "export (CSV)" || bad "export (CSV)"
ctl tune export -o "$DIR/export.json" 2>/dev/null
ctl tune import "$DIR/export.json" >"$DIR/import" 2>&1
grep -q "imported" "$DIR/import" && ok "import of our own export" || bad "import of our own export"
sed 's/"compute_units":[[:space:]]*[0-9]*/"compute_units": 999/' "$DIR/export.json" >"$DIR/other.json"
ctl tune import "$DIR/other.json" >"$DIR/import2" 2>&1
[ $? -ne 0 ] && ok "import from another device refused" || bad "import from another device refused"

# An SDK upgrade: stale results, seeded re-tunes.
if [ $have_trees -eq 1 ]; then
	cold=$(sql "SELECT group_concat(detail, ' | ') FROM tune_queue WHERE origin <> 'user' AND state = 'done'")
	cp -al --remove-destination "$TREES/trixie/usr/." "$ROOT/usr/"
	wait_for "SDK upgrade noticed" 30 has_event sdk.version_changed "from 5.2.3 to 5.7.1"
	wait_for "results keyed to 5.2.3 become stale" 10 has_event tune.stale "SDK is now 5.7.1"
	n=$(sql "SELECT count(*) FROM tune_queue WHERE origin = 'retune' AND sdk = '5.7.1' AND seeded_from IS NOT NULL")
	[ "$n" -ge 2 ] && ok "seeded re-tunes queued ($n)" || bad "seeded re-tunes queued ($n)"
	wait_for "re-tunes run" 90 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE origin = 'retune' AND sdk = '5.7.1' AND state = 'done' AND m IN (8, 64)\") -ge 2 ]"
	re=$(sql "SELECT group_concat(detail, ' | ') FROM tune_queue WHERE origin = 'retune' AND sdk = '5.7.1' AND state = 'done' AND m IN (8, 64)")
	echo "# cold tunes: $cold"
	echo "# re-tunes:   $re"
	st=$(sql "SELECT count(*) FROM tune_queue WHERE sdk = '5.2.3' AND state <> 'stale'")
	[ "$st" -eq 0 ] && ok "no live job left on the old SDK" || bad "no live job left on the old SDK"
else
	echo "# skip: SDK upgrade (no real SDK trees in $TREES: tests/fixtures/make-trees.sh)"
fi

# A driver update while rocmd runs: noticed when the next job opens the
# device (pause/resume restarts the running one), as an SDK update is.
D1="test driver 1"
D2="test driver 2"
live1=$(sql "SELECT count(*) FROM tune_queue WHERE driver = '$D1' AND state <> 'stale'")
echo "$D2" >"$DIR/driver"
ctl tune pause >/dev/null
ctl tune resume >/dev/null
ctl tune start >/dev/null
wait_for "driver update noticed: results stale" 60 has_event tune.stale "driver is now $D2 (was $D1)"
n=$(sql "SELECT count(*) FROM tune_queue WHERE origin = 'retune' AND driver = '$D2' AND seeded_from IS NOT NULL")
[ "$n" -ge 2 ] && [ "$n" -eq "$live1" ] && ok "a seeded re-tune queued for each of the $live1 live jobs" ||
	bad "a seeded re-tune queued for each of the $live1 live jobs ($n)"
ctl tune status >"$DIR/status"
grep -q "re-tune .*driver is now $D2 (was $D1): [0-9]* job(s) stale" "$DIR/status" &&
	ok "tune status says why it re-tunes" || bad "tune status says why it re-tunes"
grep -q "driver .*$D2" "$DIR/status" && ok "tune status shows the driver" || bad "tune status shows the driver"
ctl --json tune status | grep -q "re-tune after driver $D1 -> $D2" && ok "the queued re-tunes name the driver change" ||
	bad "the queued re-tunes name the driver change"
wait_for "driver re-tunes run" 120 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE origin = 'retune' AND driver = '$D2' AND state = 'done' AND m IN (8, 64)\") -ge 2 ]"
# Seeded: each re-tune measured its seed job's winner under the new driver.
seeded=$(sql "SELECT count(*) FROM tune_queue r JOIN tune_queue s ON s.id = r.seeded_from JOIN tune_job tj ON tj.driver = r.driver AND tj.problem LIKE '%:' || r.m || 'x' || r.n || 'x' || r.k || ':%' JOIN tune_eval e ON e.job_id = tj.id AND e.config = s.winner WHERE r.driver = '$D2' AND r.state = 'done' AND r.m IN (8, 64)")
[ "$seeded" -ge 2 ] && ok "the re-tunes measured the previous winners first ($seeded)" ||
	bad "the re-tunes measured the previous winners first ($seeded)"
old=$(sql "SELECT count(*) FROM tune_queue WHERE driver = '$D1' AND state <> 'stale'")
[ "$old" -eq 0 ] && ok "no live job left on the old driver" || bad "no live job left on the old driver ($old)"
re=$(sql "SELECT group_concat(detail, ' | ') FROM tune_queue WHERE origin = 'retune' AND driver = '$D2' AND state = 'done' AND m IN (8, 64)")
echo "# driver re-tunes: $re"
has_event tune.library "tuned library written" && [ -n "$(find "$STATE/tuned" -name '*' -newer "$DIR/driver" -type f | head -n 1)" ] &&
	ok "a tuned library is written under the new driver" || bad "a tuned library is written under the new driver"

# A driver update across a restart (a reboot's case): the probe notices it.
ctl tune pause >/dev/null
rocmd_stop
echo "test driver 3" >"$DIR/driver"
start || bail "rocmd did not restart"
wait_for "driver update across a restart noticed" 30 has_event tune.stale "driver is now test driver 3 (was $D2)"
n=$(sql "SELECT count(*) FROM tune_queue WHERE driver = 'test driver 3' AND origin = 'retune' AND state = 'paused'")
[ "$n" -ge 2 ] && ok "its re-tunes are queued, paused as the queue was ($n)" ||
	bad "its re-tunes are queued, paused as the queue was ($n)"

# A job where no configuration runs correctly (every candidate planted wrong,
# the CPU backend's test hook) fails and says why, in tune results and the
# log: the jobs left from above are set aside (stale) while rocmd is down, and
# at start it queues its default shapes again, which then fail that way.
rocmd_stop
sql "UPDATE tune_queue SET state = 'stale' WHERE state IN ('queued', 'paused', 'running')" >/dev/null
ROCMD_TUNE_PLANT=wrong: start || bail "rocmd did not restart"
wait_for "device probed again" 30 sh -c "\"$CTL\" --socket \"$SOCK\" --json tune status | grep -q '\"backend\":[[:space:]]*\"cpu\"'"
ctl tune resume >/dev/null 2>&1
ctl tune start >/dev/null 2>&1
wait_for "a job with no correct configuration fails" 60 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT state FROM tune_queue WHERE m = 8 AND n = 256 AND k = 256 AND state <> 'stale'\")\" = failed ]"
ctl tune results >"$DIR/failres" 2>&1
contains "tune results lists the failed job" "$DIR/failres" "^Failed jobs:"
contains "tune results says why it failed" "$DIR/failres" "fp32 NN 8x256x256: no configuration ran correctly: [0-9]* evaluated ([0-9]* wrong_result); first: wrong_result"
contains "the log says why it failed" "$STATE/rocmd.log" "tuning job [0-9]* failed: no configuration ran correctly: [0-9]* evaluated"

harness_done
