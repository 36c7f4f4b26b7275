#!/bin/sh
# rocmctl bench end to end on the CPU, as CI runs it: the real rocmd (--root
# on a sandbox, the CPU backend) tunes two tiny shapes and writes its tuned
# library; `rocmctl bench` measures them for the variants "default"
# (librocmd-gemm's CPU backend without a tuned library) and "tuned" (with the
# daemon's), two rounds, each variant in a process of its own (rocmtune
# bench-run). Checked: the stored run's structure (read back with SQLite's
# JSON functions), that every round of every variant ran in its own
# process, that "tuned" used the daemon's library (exact entries) and
# "default" none; `bench list` and `bench compare` of two stored runs;
# bad input (a shape that is not one exits 2, changing nothing; a damaged
# stored run is named with a clear error; nothing captured exits 5); and
# `bench report --html` rendered by headless Chromium with every plot's
# marks drawn (tests/fixtures/png-marks.c counts them on the screenshot).
#
# Usage: test-bench.sh ROCMD ROCMCTL ROCMTUNE PNG-MARKS VENDOR-FIXTURES
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init bench
ROCMD=$1
CTL=$2
MARKS=$4
FIX=$5
ROOT=$DIR/root
DB=$STATE/rocmd.db
export ROCMD_ROCMTUNE="$3"
export XDG_STATE_HOME="$DIR/xdg"
RUNS=$XDG_STATE_HOME/rocmd/bench
# jq FILE PATH: a member of a JSON file, by SQLite's JSON functions.
jq() { sqlite3 :memory: "SELECT json_extract(readfile('$1'), '$2')"; }

need_chromium
rocmd_start_cpu_tuner 10

# Bad input first: nothing is measured or stored.
ctl bench --shapes 64x6x --rounds 2 >"$OUT" 2>"$ERR"
rc=$?
[ "$rc" -eq 2 ] && grep -q "'64x6x' is not a shape" "$ERR" && ok "a shape that is not one exits 2 and says why" ||
	{ cat "$ERR" >"$OUT"; bad "a shape that is not one exits 2 and says why (rc $rc)"; }
ctl bench --shapes 64x64x64 --rounds 0 >/dev/null 2>&1
[ $? -eq 2 ] && ok "--rounds 0 exits 2" || bad "--rounds 0 exits 2"
ctl bench compare onlyone >/dev/null 2>&1
[ $? -eq 2 ] && ok "bench compare with one run exits 2" || bad "bench compare with one run exits 2"
[ ! -d "$RUNS" ] && ok "bad input stores nothing" || bad "bad input stores nothing"
ctl bench --shapes captured >"$OUT" 2>"$ERR"
rc=$?
[ "$rc" -eq 5 ] && grep -q "no captured workload" "$ERR" && ok "--shapes captured with nothing captured exits 5" ||
	{ cat "$ERR" >"$OUT"; bad "--shapes captured with nothing captured exits 5 (rc $rc)"; }
ctl bench report --html "$DIR/none.html" >/dev/null 2>&1
[ $? -eq 5 ] && ok "bench report with no run exits 5" || bad "bench report with no run exits 5"

# The daemon tunes the two shapes and writes its tuned library.
ctl tune add 48x40x32 --budget 10 >/dev/null 2>&1
ctl tune add 64x32x16 --budget 10 >/dev/null 2>&1
ctl tune start >/dev/null 2>&1
wait_for "both shapes tuned, the queue empty" 240 sh -c "[ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE state = 'done' AND ((m = 48 AND n = 40 AND k = 32) OR (m = 64 AND n = 32 AND k = 16))\") -eq 2 ] && [ \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE state IN ('queued', 'running')\") -eq 0 ]"
# A library is written after each job: once there are as many as jobs done, it holds both.
wait_for "the tuned library written after every job" 60 sh -c "[ \$(\"$CTL\" --socket \"$SOCK\" events --limit 100 | grep -c 'tuned library written') -ge \$(sqlite3 -cmd '.timeout 5000' '$DB' \"SELECT count(*) FROM tune_queue WHERE state = 'done'\") ]"

check "rocmctl bench measures both variants" 0 ctl bench --shapes 48x40x32,64x32x16 --rounds 2 --runs 3
contains "it says which variants ran" "$OUT" "^ran: default (librocmd-gemm's CPU backend, no tuned library), 2 process(es)"
contains "the tuned variant ran" "$OUT" "^ran: tuned (librocmd-gemm's CPU backend with the daemon's tuned library), 2 process(es)"
contains "it says why the vendor variants did not" "$OUT" "^not run: original/deployed: no rocBLAS target has a deployed package .*the daemon's device is the CPU"
contains "each shape with both variants and the ratio" "$OUT" "^fp32:NN:48x40x32:b1 .* ms \[.*\] .* ms \[.*\] .*x"
contains "energy is said not to be reported" "$OUT" "not reported"
cp "$OUT" "$DIR/bench-out.txt"

n=$(ls "$RUNS" | wc -l)
[ "$n" -eq 1 ] && ok "the run is stored under XDG_STATE_HOME" || bad "the run is stored under XDG_STATE_HOME ($n files)"
RUN1=$(ls "$RUNS" | head -n 1)
F=$RUNS/$RUN1
[ "$(jq "$F" '$.id').json" = "$RUN1" ] && ok "the stored run carries its id" || bad "the stored run carries its id"
[ "$(jq "$F" '$.variants[0].name'),$(jq "$F" '$.variants[1].name')" = "default,tuned" ] &&
	ok "the stored run names its variants" || bad "the stored run names its variants"
[ "$(jq "$F" '$.rounds')" = 2 ] && ok "the stored run says its rounds" || bad "the stored run says its rounds"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$F'), '$.problems')")" -eq 2 ] &&
	ok "two shapes stored" || bad "two shapes stored"
for v in default tuned; do
	s=$(sqlite3 :memory: "SELECT json_array_length(readfile('$F'), '$.problems[0].variants.$v.samples_ms')")
	[ "$s" -eq 2 ] && [ -n "$(jq "$F" "\$.problems[0].variants.$v.median_ms")" ] &&
		[ -n "$(jq "$F" "\$.problems[0].variants.$v.lo_ms")" ] && [ -n "$(jq "$F" "\$.problems[0].variants.$v.gflops")" ] &&
		ok "$v: a sample per round, the median, the spread and GFLOP/s" ||
		bad "$v: a sample per round, the median, the spread and GFLOP/s ($s samples)"
done
# Four processes, one per variant and round, none of them another's.
pids=$(sqlite3 :memory: "SELECT value FROM json_each(readfile('$F'), '$.variants[0].pids') UNION ALL SELECT value FROM json_each(readfile('$F'), '$.variants[1].pids')")
np=$(echo "$pids" | grep -c .)
nu=$(echo "$pids" | sort -u | grep -c .)
[ "$np" -eq 4 ] && [ "$nu" -eq 4 ] && ok "every round of every variant ran in its own process (pids $(echo $pids))" ||
	bad "every round of every variant ran in its own process ($np pids, $nu distinct)"
[ "$(jq "$F" '$.problems[0].variants.tuned.how')" = "exact" ] &&
	[ "$(jq "$F" '$.problems[0].variants.default.how')" = "default" ] &&
	ok "tuned ran the daemon's library's exact entry, default the default" ||
	bad "tuned ran the daemon's library's exact entry, default the default"
case "$(jq "$F" '$.variants[1].tuned')" in
"$STATE"/tuned/*) ok "tuned opened the daemon's tuned library folder" ;;
*) bad "tuned opened the daemon's tuned library folder ($(jq "$F" '$.variants[1].tuned'))" ;;
esac
[ -n "$(jq "$F" '$.environment.load')" ] && [ -n "$(jq "$F" '$.environment.device')" ] &&
	[ -n "$(jq "$F" '$.environment.driver')" ] && [ -n "$(jq "$F" '$.environment.daemon.version')" ] &&
	ok "the environment is recorded (device, driver, load, the daemon)" || bad "the environment is recorded"

# A second run, then list and compare.
sleep 1
check "a second bench run" 0 ctl --json bench --shapes 48x40x32,64x32x16 --rounds 2 --runs 3
RUN2=$(ls "$RUNS" | sed -n 2p)
A=${RUN1%.json}
B=${RUN2%.json}
check "bench list" 0 ctl bench list
contains "bench list shows both runs" "$OUT" "^$A .*default,tuned"
contains "bench list shows the second" "$OUT" "^$B "
check "bench compare A B" 0 ctl bench compare "$A" "$B"
contains "compare: each shape and variant with both spreads and the change" "$OUT" "^fp32:NN:48x40x32:b1 *tuned .* ms \[.*\] .* ms \[.*\] *[-+][0-9.]*%"
contains "compare explains the noise" "$OUT" "within the noise when the two spreads overlap"
ctl --json bench compare "$A" "$B" >"$OUT" 2>&1
grep -q '"within_noise"' "$OUT" && ok "compare --json says whether each change is within the noise" ||
	bad "compare --json says whether each change is within the noise"

# A damaged run is named; the good ones still list.
printf '{"id": "2099' >"$RUNS/20990101-000000.json"
ctl bench compare "$A" 20990101-000000 >"$OUT" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "bench run '20990101-000000': .*20990101-000000.json is not valid JSON" "$OUT" &&
	ok "a damaged stored run gives a clear error" || bad "a damaged stored run gives a clear error (rc $rc)"
ctl bench list >"$OUT" 2>&1
grep -q "^20990101-000000 .*not valid JSON" "$OUT" && grep -q "^$A " "$OUT" &&
	ok "bench list names the damaged run beside the good ones" || bad "bench list names the damaged run beside the good ones"
echo '{"id": "20990101-000001", "problems": 3}' >"$RUNS/20990101-000001.json"
ctl bench compare 20990101-000001 "$A" >"$OUT" 2>&1
[ $? -eq 1 ] && grep -q "is JSON but not a bench run" "$OUT" && ok "JSON that is not a run is refused" ||
	bad "JSON that is not a run is refused"

# The report, rendered by a real browser.
check "bench report --html" 0 ctl bench report --html "$DIR/bench.html"
plots=$(grep -o '<svg class="plot"' "$DIR/bench.html" | wc -l)
[ "$plots" -eq 2 ] && ok "two plots: runs over time, the newest run per shape" || bad "two plots ($plots)"
report_plots_drawn "$DIR/bench.html" "$DIR/bench.png" 1000,700 "$MARKS"
ctl tune report --html "$DIR/tune.html" >/dev/null 2>&1
grep -q 'speed-up of each run' "$DIR/tune.html" && grep -q '>20[0-9-]*: default (grey), tuned (colour)<' "$DIR/tune.html" &&
	ok "the tuning report shows the bench runs too" || bad "the tuning report shows the bench runs too"
# The default shapes: the workload the daemon captured from a program. A
# second daemon knows the stand-in rocBLAS (tune.libraries, its KFD sysroot);
# `tune capture` runs the unmodified stand-in program and queues its GEMMs;
# `rocmctl bench` then measures those, and says that this daemon has no tuned
# library yet (the tuned variant runs the defaults).
C2=$DIR/cap
mkdir -p "$C2/root/proc" "$C2/lib"
cp -a "$FIX/sysroot/sys" "$C2/root/sys"
mkdir -p "$C2/root/sys/class/kfd/kfd/proc"
echo "0.10 0.10 0.10 1/100 1" >"$C2/root/proc/loadavg"
cp -a "$FIX/sdk-a/lib/." "$C2/lib/"
printf '{"tune": {"idle_s": 3600, "check_ms": 200, "backend": "cpu", "max_cpu_load": 400, "families": 0, "libraries": "rocblas:%s"}}\n' \
	"$C2/lib/librocblas.so.4" >"$C2/rocmd.json"
"$ROCMD" --state-dir "$C2/state" --socket "$C2/sock" --config "$C2/rocmd.json" --root "$C2/root" 2>>"$DIR/log" ||
	bail "the second rocmd did not start"
LD_LIBRARY_PATH="$C2/lib" "$CTL" --socket "$C2/sock" tune capture -- "$FIX/standin-app" 2 >"$OUT" 2>&1
contains "capture queues the program's 2 rocBLAS shapes" "$OUT" "^rocBLAS: 10 GEMM call(s), 2 distinct shape(s)"
"$CTL" --socket "$C2/sock" bench --rounds 2 --runs 3 >"$OUT" 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "shapes captured from your programs (2 shape(s))" "$OUT" &&
	grep -q "^fp16:TN:256x16x256:b1 .* ms \[.*\] .* ms \[.*\]" "$OUT" && grep -q "^fp32:NN:96x96x96:b1 " "$OUT" &&
	ok "bench measures the captured workload by default" || bad "bench measures the captured workload by default (rc $rc)"
contains "the tuned variant says the daemon has no tuned library yet" "$OUT" "^  no tuned library in $C2/state/tuned opens on the cpu backend .*: the defaults"

# The GPU variants' child on a machine without their library: the sensors of
# an amdgpu card (a sysfs tree written here) are read, and the variant ends
# with the reason it cannot run, exit 3 (rocmtune's "not available here").
SYS=$DIR/sysroot/sys/class/drm
mkdir -p "$SYS/card0/device/hwmon/hwmon3" "$SYS/card0-DP-1"
echo 0x1002 >"$SYS/card0/device/vendor"
echo 15000000 >"$SYS/card0/device/hwmon/hwmon3/power1_average"
printf '0: 800Mhz\n1: 2100Mhz *\n' >"$SYS/card0/device/pp_dpm_sclk"
printf '0: 400Mhz\n1: 1000Mhz *\n' >"$SYS/card0/device/pp_dpm_mclk"
"$ROCMD_ROCMTUNE" bench-run --variant original --backend rocblas --sysroot "$DIR/sysroot" \
	--library "$DIR/none/librocblas.so" --problems fp32:NN:64x64x64:b1 >"$OUT" 2>"$ERR"
rc=$?
[ "$rc" -eq 3 ] && grep -q '"unavailable":true' "$OUT" && grep -q '"error":"not available: ' "$OUT" &&
	ok "a vendor variant without its library ends with the reason, exit 3" ||
	bad "a vendor variant without its library ends with the reason, exit 3 (rc $rc)"
grep -q '"sensors":"amdgpu sysfs card0"' "$OUT" && grep -q '"clocks":"sclk 2100Mhz, mclk 1000Mhz"' "$OUT" &&
	ok "amdgpu's sysfs: the card, its current clocks" || bad "amdgpu's sysfs: the card, its current clocks"
# A vendor variant's child on the stand-in rocBLAS (tests/fixtures/vendor: its
# C interface over CPU GEMMs, a stand-in HIP beside it, a KFD sysroot): the
# library's own choice, checked against the reference and timed.
"$ROCMD_ROCMTUNE" bench-run --variant deployed --backend rocblas --sysroot "$FIX/sysroot" \
	--library "$FIX/sdk-a/lib/librocblas.so.4" --runs 3 \
	--problems fp16:TN:256x16x256:b1,fp32:NN:64x64x64:b1 >"$OUT" 2>"$ERR"
rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -o '"outcome":"ok","median_ms":[0-9.e-]*,"p20_ms":[0-9.e-]*,"p80_ms":[0-9.e-]*,"runs":3,"gflops":[0-9.e-]*,"rel_err":[0-9.e-]*' "$OUT" | wc -l)" -eq 2 ] &&
	grep -q '"runtime":"rocBLAS 4.2.4.rocmd-standin"' "$OUT" &&
	ok "a rocBLAS variant's child times the library's own choice, checked" ||
	bad "a rocBLAS variant's child times the library's own choice, checked (rc $rc)"
# Its energy per GEMM where the platform reports power: the stand-in's KFD
# sysroot with an amdgpu card drawing a steady 15 W (hwmon power1_average), so
# each GEMM took 15 W times its median time.
cp -a "$FIX/sysroot" "$DIR/sr15"
mkdir -p "$DIR/sr15/sys/class/drm/card0/device/hwmon/hwmon0"
echo 0x1002 >"$DIR/sr15/sys/class/drm/card0/device/vendor"
echo 15000000 >"$DIR/sr15/sys/class/drm/card0/device/hwmon/hwmon0/power1_average"
"$ROCMD_ROCMTUNE" bench-run --variant deployed --backend rocblas --sysroot "$DIR/sr15" \
	--library "$FIX/sdk-a/lib/librocblas.so.4" --runs 3 --energy-ms 50 \
	--problems fp32:NN:64x64x64:b1 >"$OUT" 2>"$ERR"
med=$(grep -o '"median_ms":[0-9.e-]*' "$OUT" | sed 's/.*://')
en=$(grep -o '"energy_j":[0-9.e-]*' "$OUT" | sed 's/.*://')
[ -n "$med" ] && [ -n "$en" ] && awk -v m="$med" -v e="$en" 'BEGIN { d = e - 15 * m / 1000; exit !(d < 1e-12 && d > -1e-12) }' &&
	ok "a vendor variant's energy per GEMM: the mean power times its time ($en J)" ||
	bad "a vendor variant's energy per GEMM: the mean power times its time (median $med ms, $en J)"
"$ROCMD_ROCMTUNE" bench-run --variant cpu --backend cpu --api --problems fp32:NN:64x64x64:b4,fp32:XX:1 >"$OUT" 2>"$ERR"
grep -q '"problem":"fp32:NN:64x64x64:b4","outcome":"skipped","detail":"batched GEMMs are not benched yet"' "$OUT" &&
	grep -q '"problem":"fp32:XX:1","outcome":"skipped","detail":"not a problem key"' "$OUT" &&
	ok "bench-run skips what it cannot bench, saying why" || bad "bench-run skips what it cannot bench, saying why"

[ -z "${ROCMD_BENCH_PNG:-}" ] || cp "$DIR/bench.png" "$ROCMD_BENCH_PNG"
[ -z "${ROCMD_BENCH_OUT:-}" ] || cp "$DIR/bench-out.txt" "$ROCMD_BENCH_OUT"

harness_done
