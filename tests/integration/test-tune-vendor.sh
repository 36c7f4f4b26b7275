#!/bin/sh
# Vendor-library tuning end to end (issue 18), on the stand-in rocBLAS and
# hipBLASLt of tests/fixtures/vendor (their real C interfaces, CPU GEMMs whose
# solution indices differ in speed; no AMD GPU here), the real rocmd under
# --root and rocmctl:
#   capture    `rocmctl tune capture -- standin-app 2` runs the unmodified
#              program with the libraries' logging, queues its 3 distinct GEMMs
#              with their call counts, for the target of each library
#   own        `rocmctl tune capture -- gemm-app` of a program of
#              librocmd-gemm's API: its shapes and calls queued as jobs of
#              rocmd's kernels (the tuned library), not a vendor's
#   import-log rocblas-bench lines, hipblaslt-bench lines, a TunableOp CSV
#   tuning     every candidate measured against the library's own choice;
#              the override files in each library's format, the identity
#              line, environment.d and profile.d naming them; the unmodified
#              program, started with that environment, runs the tuned
#              solutions (a right one, never the fast wrong one; its time
#              is printed, not checked: a shared CPU's timings are noise);
#              tune results shows it
#   off / on   the override withdrawn and the environment cleared, then back
#   swap       the library replaced while rocmd is down (an SDK update): at
#              start the override is withdrawn, the jobs go stale and their
#              re-tunes are queued seeded; then again once per kill point of
#              that path (counted from a run with ROCMD_FAILPOINT_LOG), rocmd
#              killed there: a program sees either no override or one for its
#              library, and a clean restart ends where the run without a kill
#              did; the re-tunes run and write the new library's override,
#              also with a kill right after the file is written
#   deploy     (with the real SDK trees) a deploy to sdk-1 withdraws the
#              target's override before the swap: rocmd killed at the
#              deploy's first kill point finds it already withdrawn
# The libraries the daemon tunes are copies in the test folder (config key
# tune.libraries), so that the swap can replace them.
#
# Usage: test-tune-vendor.sh ROCMD ROCMCTL FIXTURES GEMM-APP
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init tunev
ROCMD=$1
CTL=$2
FIX=$3
GEMMAPP=${4:-}
ROOT=$DIR/root
DB=$STATE/rocmd.db
LIB=$DIR/lib
APP=$FIX/standin-app
ENVD=$ROOT/etc/environment.d/60-rocmd-tune.conf
PROF=$ROOT/etc/profile.d/rocmd-tune.sh
RCSV=$STATE/tune-overrides/lib-rocblas-1/rocblas.csv
HTXT=$STATE/tune-overrides/lib-hipblaslt-1/hipblaslt.txt

on_bad() {
	tail -n 12 "$DIR/log" 2>/dev/null | sed 's/^/#   log: /'
}
start() { rocmd_start --root "$ROOT" --log-level info 2>>"$DIR/log"; }
# The program as a user's login shell starts it: profile.d's environment.
app() {
	env -i PATH="$PATH" LD_LIBRARY_PATH="$LIB" sh -c "[ ! -f '$PROF' ] || . '$PROF'; '$APP' 1"
}
vendor_done() { [ "$(sql "SELECT count(*) FROM tune_queue WHERE target <> '' AND state IN ('queued', 'running')")" -eq 0 ]; }
daemon_pids() { pgrep -f -- "--state-dir $STATE --socket $SOCK" | tr '\n' ' '; }
daemon_gone() { [ -z "$(daemon_pids)" ]; }
entries() { grep -c ',' "$1" | tr -d ' '; } # header lines included
digest_of() { sed -n 's/^# rocmd override .*sha256=\([0-9a-f]*\).*/\1/p' "$1"; }

[ -x "$APP" ] || { echo "1..0 # skip: no stand-in libraries (Windows build)"; exit 0; }
mkdir -p "$ROOT/proc" "$ROOT/etc" "$STATE" "$LIB"
cp -a "$FIX/sysroot/sys" "$ROOT/sys"
mkdir -p "$ROOT/sys/class/kfd/kfd/proc"
echo "0.10 0.10 0.10 1/100 1" >"$ROOT/proc/loadavg"
cp -a "$FIX/sdk-a/lib/." "$LIB/"
cat >"$CONF" <<EOF
{"tune": {"idle_s": 2, "check_ms": 200, "budget": 40, "backend": "cpu", "max_cpu_load": 400,
 "families": 0, "enabled": 0,
 "libraries": "rocblas:$LIB/librocblas.so.4,hipblaslt:$LIB/libhipblaslt.so.0"}}
EOF
start || bail "rocmd did not start"

# ---- capture ----
app >"$DIR/before" 2>&1
grep -q "rocblas fp16 TN 256x16x256 solution 1 " "$DIR/before" && ok "the program runs rocBLAS's own choice" ||
	bad "the program runs rocBLAS's own choice"
ctl tune capture -- "$APP" 2 >"$DIR/cap" 2>"$DIR/cap.err"
contains "capture counts rocBLAS's calls" "$DIR/cap" "rocBLAS: 10 GEMM call(s), 2 distinct shape(s)"
contains "capture counts hipBLASLt's calls" "$DIR/cap" "hipBLASLt: 8 GEMM call(s), 1 distinct shape(s)"
contains "capture queues them for both targets" "$DIR/cap" "3 tuning job(s) queued, 0 already queued, for 2 target(s)"
contains "capture says how the program ended" "$DIR/cap.err" "standin-app exited with 0"
contains "the program's output reaches the user" "$DIR/cap" "hipblaslt bf16 TN 192x8x256"
[ "$(sql "SELECT calls || ' ' || source FROM tune_queue WHERE target = 'lib-rocblas-1' AND m = 256")" = "6 capture" ] &&
	ok "a job records its calls and origin" || bad "a job records its calls and origin"
[ "$(sql "SELECT calls FROM tune_queue WHERE target = 'lib-hipblaslt-1' AND dtype = 'bf16'")" = "8" ] &&
	ok "the hipBLASLt job has its 8 calls" || bad "the hipBLASLt job has its 8 calls"
ls "${TMPDIR:-/tmp}" | grep -q "^rocmctl-capture-" && bad "capture leaves its log folder" ||
	ok "capture removes its log folder"

# ---- own: a program of librocmd-gemm ----
if [ -n "$GEMMAPP" ]; then
	ctl tune capture -- "$GEMMAPP" >"$DIR/capg" 2>"$DIR/capg.err"
	contains "capture counts librocmd-gemm's calls" "$DIR/capg" "librocmd-gemm: 5 GEMM call(s), 2 distinct shape(s)"
	contains "they become jobs of rocmd's kernels" "$DIR/capg" "and 2 job(s) of rocmd's kernels"
	[ "$(sql "SELECT dtype || ' ' || trans || ' ' || m || 'x' || n || 'x' || k || ' ' || calls || ' ' || source || ' ' || origin FROM tune_queue WHERE target = '' AND source = 'capture' ORDER BY dtype")" = "fp16 NN 16x16x16 2 capture user
fp32 TN 64x8x32 3 capture user" ] && ok "each with its calls, for rocmd's own backend" ||
		bad "each with its calls, for rocmd's own backend ($(sql "SELECT dtype, trans, m, n, k, calls, source, origin, target FROM tune_queue WHERE source = 'capture'" | tr '\n' ';'))"
	ctl tune capture -- "$GEMMAPP" >"$DIR/capg2" 2>&1
	contains "capturing again queues nothing new" "$DIR/capg2" "0 tuning job(s) queued, 2 already queued"
else
	skip "librocmd-gemm capture" "no gemm-app"
fi

# ---- import-log ----
cat >"$DIR/bench.log" <<'EOF'
./rocblas-bench -f gemm_ex --transposeA T --transposeB N -m 128 -n 8 -k 128 --alpha 1 --a_type f16_r --lda 128 --b_type f16_r --ldb 128 --beta 0 --c_type f16_r --ldc 128 --d_type f16_r --ldd 128 --compute_type f32_r --algo 0 --solution_index 0 --flags 0
./rocblas-bench -f gemm_ex --transposeA T --transposeB N -m 128 -n 8 -k 128 --alpha 1 --a_type f16_r --lda 128 --b_type f16_r --ldb 128 --beta 0 --c_type f16_r --ldc 128 --d_type f16_r --ldd 128 --compute_type f32_r --algo 0 --solution_index 0 --flags 0
hipblaslt-bench --api_method c -m 64 -n 4 -k 128 --lda 128 --ldb 128 --ldc 64 --ldd 64  --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1  --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r --scale_type f32_r --bias_type f32_r   --compute_type f32_r
./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 8 -n 8 -k 8 --alpha 1 --a_type i8_r --lda 8 --b_type i8_r --ldb 8 --beta 0 --c_type i32_r --ldc 8 --d_type i32_r --ldd 8 --compute_type i32_r --algo 0 --solution_index 0 --flags 0
EOF
cat >"$DIR/tunableop.csv" <<'EOF'
Validator,PT_VERSION,2.5.0
GemmTunableOp_Half_TN,tn_96_4_64_ld_64_64_96,Gemm_Hipblaslt_1219,0.0152
EOF
ctl tune import-log "$DIR/bench.log" >"$DIR/imp" 2>&1
contains "import-log reads rocblas-bench lines" "$DIR/imp" "rocBLAS: 2 GEMM call(s), 1 distinct shape(s)"
contains "import-log reads hipblaslt-bench lines" "$DIR/imp" "hipBLASLt: 1 GEMM call(s), 1 distinct shape(s)"
contains "import-log says what it cannot tune" "$DIR/imp" "1 GEMM line(s) skipped"
contains "import-log queues 2 jobs" "$DIR/imp" "2 tuning job(s) queued"
ctl tune import-log "$DIR/tunableop.csv" >"$DIR/imp2" 2>&1
contains "import-log reads a TunableOp CSV" "$DIR/imp2" "1 tuning job(s) queued"
[ "$(sql "SELECT source || ' ' || calls || ' ' || lda FROM tune_queue WHERE m = 128 AND n = 8")" = "log 2 0" ] &&
	ok "an imported job is 'log' with its calls" || bad "an imported job is 'log' with its calls"
[ "$(sql "SELECT source || ' ' || backend || ' ' || ldc FROM tune_queue WHERE m = 96 AND n = 4")" = "tunableop hipblaslt 0" ] &&
	ok "a TunableOp job keeps its library (its layout is the tight one)" || bad "a TunableOp job keeps its library (its layout is the tight one)"
ctl tune import-log "$DIR/bench.log" >"$DIR/imp3" 2>&1
contains "importing again queues nothing new" "$DIR/imp3" "0 tuning job(s) queued, 2 already queued"
ctl --json tune status | grep -q '"source":[[:space:]]*"capture"' && ok "the queue shows a job's origin" ||
	bad "the queue shows a job's origin"

# ---- tuning and the override ----
ctl tune start >/dev/null
wait_for "the vendor jobs finish" 120 vendor_done
[ "$(sql "SELECT count(*) FROM tune_queue WHERE target <> '' AND state = 'done'")" -eq 6 ] &&
	ok "6 vendor jobs done" || bad "6 vendor jobs done"
wait_for "the environment names the overrides" 10 grep -q "^HIPBLASLT_TUNING_OVERRIDE_FILE=$HTXT" "$ENVD"
contains "environment.d names rocBLAS's override" "$ENVD" "^ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=$RCSV$"
contains "profile.d exports it" "$PROF" "^export ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH='$RCSV'$"
contains "rocBLAS's file has rocblas-gemm-tune's header" "$RCSV" "^transA,transB,M,N,batch_count,K,alpha,beta,lda,ldb,ldc,input_type,output_type,compute_type,solution_index$"
contains "rocBLAS's file has the fp16 TN entry" "$RCSV" "^T,N,256,16,1,256,1,0,256,256,256,f16_r,f16_r,f32_r,[1-9][0-9]*$"
contains "the identity line names the library and GPU" "$RCSV" "^# rocmd override library=librocblas.so.4 sha256=[0-9a-f]\{64\} stat=[0-9a-f]\{16\} gpu=gfx1103 cus=12 "
contains "hipBLASLt's file has 37 fields" "$HTXT" "^T,N,0,1,192,8,256,1,256,[0-9]*,0,256,[0-9]*,192,[0-9]*,192,[0-9]*,bf16_r,bf16_r,bf16_r,bf16_r,f32_r,\([^,]*,\)\{13\}gfx1103,12$"
app >"$DIR/after" 2>&1
lacks "the program no longer runs rocBLAS's default" "$DIR/after" "rocblas fp16 TN 256x16x256 solution 1 "
contains "the program reads the override" "$DIR/after" "rocblas fp16 TN 256x16x256 solution [0-9]* override 1"
lacks "the program no longer runs hipBLASLt's default" "$DIR/after" "hipblaslt bf16 TN 192x8x256 solution 1211 "
t0=$(awk '/rocblas fp16/ {s += $(NF-1)} END {print s}' "$DIR/before")
t1=$(awk '/rocblas fp16/ {s += $(NF-1)} END {print s}' "$DIR/after")
# Timings on a shared CPU are a figure, not a check (bench/vendor-gemm measures them).
echo "# rocblas fp16 TN 256x16x256: $t0 ms before, $t1 ms with the override"
sol=$(awk '/rocblas fp16/ {print $6; exit}' "$DIR/after")
case "$sol" in
[2-5]) ok "the override runs a right solution, not the fast wrong one" ;;
*) bad "the override runs a right solution, not the fast wrong one (solution '$sol')" ;;
esac
ctl tune results >"$DIR/res" 2>&1
contains "results list the target's shapes" "$DIR/res" "^lib-rocblas-1 *rocblas *fp16 TN 256x16x256 *6 "
contains "results say the override is live" "$DIR/res" "lib-rocblas-1 rocblas override: live"
ctl --json tune results lib-hipblaslt-1 >"$DIR/resj" 2>&1
grep -q '"live":[[:space:]]*true' "$DIR/resj" && grep -q '"calls":[[:space:]]*8' "$DIR/resj" &&
	ok "results --json: calls and live per job" || bad "results --json: calls and live per job"

# ---- off and on ----
ctl tune off lib-rocblas-1 >"$DIR/off" 2>&1
contains "tune off says so" "$DIR/off" "lib-rocblas-1 rocblas override: off, 0 entries"
lacks "tune off clears the variable" "$ENVD" "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH"
[ "$(entries "$RCSV")" -eq 0 ] && ok "tune off empties the file" || bad "tune off empties the file"
contains "hipBLASLt's override stays" "$ENVD" "HIPBLASLT_TUNING_OVERRIDE_FILE"
app >"$DIR/offapp" 2>&1
contains "the program runs rocBLAS's own choice again" "$DIR/offapp" "rocblas fp16 TN 256x16x256 solution 1 override 0"
ctl tune on lib-rocblas-1 >/dev/null 2>&1
contains "tune on brings it back" "$ENVD" "^ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=$RCSV$"
ctl tune off no-such-target >/dev/null 2>&1 && bad "tune off of an unknown target fails" ||
	ok "tune off of an unknown target fails"

# ---- the library swapped while rocmd is down ----
rocmd_stop
OLD=$(digest_of "$RCSV")
JOBS=$(sql "SELECT count(*) FROM tune_queue WHERE target = 'lib-rocblas-1' AND state = 'done'")
mkdir -p "$DIR/snap"
cp -a "$STATE" "$DIR/snap/state"
cp -a "$ROOT/etc" "$DIR/snap/etc"
restore() {
	rm -rf "$STATE" "$ROOT/etc"
	cp -a "$DIR/snap/state" "$STATE"
	cp -a "$DIR/snap/etc" "$ROOT/etc"
	cp -a "$FIX/sdk-a/lib/." "$LIB/"
	# An SDK update: rocBLAS's build 2 (the same solutions under other indices).
	cp "$FIX/sdk-b/lib/librocblas.so.4" "$LIB/librocblas.so.4.new"
	mv "$LIB/librocblas.so.4.new" "$(readlink -f "$LIB/librocblas.so.4")"
	cp "$FIX/sdk-b/lib/rocblas/library/"* "$LIB/rocblas/library/"
}
# What a program sees: no rocBLAS override, or one not measured on the old library.
invariant() {
	_f=$(sed -n 's/^ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=//p' "$ENVD" 2>/dev/null)
	[ -z "$_f" ] && return 0
	[ ! -f "$_f" ] && return 0
	[ "$(entries "$_f")" -eq 0 ] && return 0
	[ "$(digest_of "$_f")" != "$OLD" ]
}
settled() { # the state after a clean start on the new library
	[ "$(entries "$RCSV")" -eq 0 ] &&
		! grep -q ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH "$ENVD" &&
		[ "$(sql "SELECT count(*) FROM tune_queue WHERE target = 'lib-rocblas-1' AND state = 'stale'")" -eq "$JOBS" ] &&
		[ "$(sql "SELECT count(*) FROM tune_queue WHERE target = 'lib-rocblas-1' AND origin = 'retune' AND state = 'queued' AND seeded_from IS NOT NULL")" -eq "$JOBS" ]
}
restore
rm -f "$DIR/kp.log"
ROCMD_FAILPOINT_LOG=$DIR/kp.log start || bail "rocmd did not start on the new library"
wait_for "the override of the old library is withdrawn at start" 20 settled
has_event tune.withdrawn "library changed" && ok "the withdrawal is an event" || bad "the withdrawal is an event"
contains "the hipBLASLt override, its library unchanged, stays" "$ENVD" "HIPBLASLT_TUNING_OVERRIDE_FILE"
[ "$(sql "SELECT calls || ' ' || source FROM tune_queue WHERE target = 'lib-rocblas-1' AND origin = 'retune' AND m = 256")" = "6 capture" ] &&
	ok "a re-tune keeps its calls and origin" || bad "a re-tune keeps its calls and origin"
rocmd_stop
POINTS=$(sed -n 's/^kp [0-9]* \(tune\.[^ ]*\).*/\1/p' "$DIR/kp.log" | sort -u)
[ -n "$POINTS" ] && ok "the withdrawal has kill points: $(echo $POINTS)" || bad "the withdrawal has kill points"
for p in $POINTS; do
	restore
	ROCMD_KILLPOINT=$p start >/dev/null 2>&1
	if ! harness_retry /dev/null 15 daemon_gone; then
		bad "rocmd is killed at $p"
		kill -9 $(daemon_pids) 2>/dev/null
	fi
	invariant && ok "killed at $p: no stale override is visible" ||
		bad "killed at $p: no stale override is visible"
	start || bail "rocmd did not restart after $p"
	wait_for "after $p, a restart settles as without the kill" 20 settled
	invariant && ok "after $p: no stale override" || bad "after $p: no stale override"
	rocmd_stop
done

# The re-tunes on the new library write its override; a kill right after the
# file is written leaves it for the restart to finish.
# The kill point is the first after start-up's (counted from a start that
# tunes nothing: tune.enabled is 0 until tune start).
restore
start || bail "rocmd did not start"
wait_until 20 settled
rocmd_stop
rm -f "$DIR/kp3.log"
ROCMD_FAILPOINT_LOG=$DIR/kp3.log start || bail "rocmd did not start"
sleep 1
rocmd_stop
K=$(grep -c '^kp ' "$DIR/kp3.log")
ROCMD_KILLPOINT="*:$((K + 1))" start || bail "rocmd did not start"
ctl tune start >/dev/null 2>&1
harness_retry /dev/null 120 daemon_gone || kill -9 $(daemon_pids) 2>/dev/null
invariant && ok "killed after writing the new override: no stale override" ||
	bad "killed after writing the new override: no stale override"
start || bail "rocmd did not restart"
ctl tune start >/dev/null 2>&1
wait_for "the re-tunes finish" 120 vendor_done
wait_for "the new library's override is live" 20 grep -q "^ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH=$RCSV$" "$ENVD"
NEW=$(digest_of "$RCSV")
[ -n "$NEW" ] && [ "$NEW" != "$OLD" ] && ok "it is keyed to the new library" || bad "it is keyed to the new library"
[ "$(entries "$RCSV")" -ge 2 ] && ok "it holds the re-tuned entries" || bad "it holds the re-tuned entries"
app >"$DIR/app-b" 2>&1
contains "the program reads the new override" "$DIR/app-b" "rocblas fp16 TN 256x16x256 solution [0-9]* override 1"
rocmd_stop

# ---- an application's private copy ----
# deploy.app_targets names an application folder holding its own rocBLAS and
# hipBLASLt (as ollama and LM Studio ship them): both are tuning targets of
# the deploy target's name, app-myapp, and their overrides are written for it.
STATE=$DIR/state3
SOCK=$DIR/rocmd3.sock
CONF=$DIR/rocmd3.json
DB=$STATE/rocmd.db
APPDIR=$ROOT/opt/myapp
ACSV=$STATE/tune-overrides/app-myapp/rocblas.csv
mkdir -p "$STATE" "$APPDIR"
cp -a "$FIX/sdk-a/lib/." "$APPDIR/"
rm -f "$ENVD" "$PROF"
cat >"$CONF" <<EOF
{"tune": {"idle_s": 2, "check_ms": 200, "budget": 40, "backend": "cpu", "max_cpu_load": 400,
  "families": 0, "enabled": 0},
 "deploy": {"app_targets": "myapp=/opt/myapp@6.2", "allow_user_owned_targets": 1}}
EOF
start || bail "rocmd did not start with an application target"
LD_LIBRARY_PATH=$APPDIR ctl tune capture -- "$APP" 2 >"$DIR/cap-app" 2>&1
contains "capture queues the application's rocBLAS and hipBLASLt" "$DIR/cap-app" "3 tuning job(s) queued, 0 already queued, for 2 target(s)"
[ "$(sql "SELECT count(DISTINCT backend) FROM tune_queue WHERE target = 'app-myapp'")" = "2" ] &&
	ok "the jobs are the deploy target's, app-myapp" || bad "the jobs are the deploy target's, app-myapp"
ctl tune start >/dev/null
wait_for "the application's jobs finish" 120 vendor_done
[ "$(entries "$ACSV")" -ge 2 ] && ok "the application's rocBLAS override holds entries" ||
	bad "the application's rocBLAS override holds entries"
contains "it is keyed to the application's rocBLAS" "$ACSV" "^# rocmd override library=librocblas.so.4 sha256=[0-9a-f]\{64\}"
ctl tune results >"$DIR/res-app" 2>&1
contains "tune results show the application's target" "$DIR/res-app" "^app-myapp *rocblas *fp16 TN 256x16x256 "
contains "and where its override is" "$DIR/res-app" "app-myapp rocblas override: .*$ACSV"
rocmd_stop

# ---- deploy withdraws before it swaps ----
# Debian trixie's real rocBLAS tree (tests/fault/sandbox.sh) with the stand-in
# hipBLASLt beside its rocBLAS: target sdk-1 has both. The override of the
# stand-in is live; a deploy of a rocBLAS package to sdk-1 must withdraw it
# before the swap: rocmd killed at the deploy's first kill point (the backup
# of the originals, after job_start) finds it withdrawn already.
. "$(dirname "$0")/../fault/sandbox.sh"
if ! sandbox_check >/dev/null; then
	skip "deploy withdraws the target's override first" "$(sandbox_check)"
	harness_done
	exit 0
fi
ROOT=$DIR/root2
STATE=$DIR/state2
SOCK=$DIR/rocmd2.sock
CONF=$DIR/rocmd2.json
DB=$STATE/rocmd.db
ENVD=$ROOT/etc/environment.d/60-rocmd-tune.conf
HTXT=$STATE/tune-overrides/sdk-1/hipblaslt.txt
sandbox_root "$ROOT"
mkdir -p "$ROOT/proc" "$STATE"
echo "0.10 0.10 0.10 1/100 1" >"$ROOT/proc/loadavg"
L=$ROOT/usr/lib/x86_64-linux-gnu
cp "$FIX/sdk-a/lib/libhipblaslt.so.0" "$FIX/sdk-a/lib/libamdhip64.so.6" "$L/"
mkdir -p "$L/hipblaslt/library"
cp "$FIX/sdk-a/lib/hipblaslt/library/"* "$L/hipblaslt/library/"
sandbox_pkg "$DIR/pkg1" "package one" binary
cat >"$CONF" <<EOF
{"sdk": {"debounce_ms": 300},
 "tune": {"idle_s": 2, "check_ms": 200, "budget": 40, "backend": "cpu", "max_cpu_load": 400,
  "families": 0, "enabled": 0}}
EOF
retuned() { [ "$(sql "SELECT count(*) FROM tune_queue WHERE target = 'sdk-1' AND origin = 'retune' AND seeded_from IS NOT NULL")" -ge 1 ]; }
start || bail "rocmd did not start on the SDK tree"
wait_until 60 has_event sdk.library_inspected "/usr"
ctl pkg import "$DIR/pkg1" --sdk 5.7.1 >/dev/null 2>&1 || bad "import the package"
grep '^hipblaslt-bench' "$DIR/bench.log" >"$DIR/lt.log"
ctl tune import-log "$DIR/lt.log" >"$DIR/imp4" 2>&1
contains "the SDK's hipBLASLt is a target" "$DIR/imp4" "1 tuning job(s) queued, 0 already queued, for 1 target(s)"
ctl tune start >/dev/null
wait_for "sdk-1's job finishes" 60 vendor_done
wait_for "sdk-1's hipBLASLt override is live" 10 grep -q "^HIPBLASLT_TUNING_OVERRIDE_FILE=$HTXT$" "$ENVD"
[ "$(entries "$HTXT")" -ge 1 ] && ok "it holds the entry" || bad "it holds the entry"
rocmd_stop
ROCMD_KILLPOINT=backup.done start || bail "rocmd did not start"
ctl lib deploy sdk-1 --package 1 >"$DIR/dep0" 2>&1
harness_retry /dev/null 30 daemon_gone || { bad "the deploy reaches its kill point" "$DIR/dep0"; kill -9 $(daemon_pids) 2>/dev/null; }
[ "$(entries "$HTXT")" -eq 0 ] && ok "killed mid-deploy: the override was withdrawn before the swap" ||
	bad "killed mid-deploy: the override was withdrawn before the swap"
[ ! -f "$ENVD" ] || ! grep -q HIPBLASLT_TUNING_OVERRIDE_FILE "$ENVD" &&
	ok "killed mid-deploy: the environment no longer names it" ||
	bad "killed mid-deploy: the environment no longer names it"
start || bail "rocmd did not restart"
wait_for "the deploy queued a seeded re-tune" 30 retuned
# Deployed, or failed and rolled back (its GEMM smoke test needs a HIP
# runtime this tree lacks): either way the change is over.
ctl lib deploy sdk-1 --package 1 >"$DIR/dep" 2>&1
has_event lib.deploy "package #1" && ok "the deploy runs to its end after the restart" ||
	bad "the deploy runs to its end after the restart"
ctl tune start >/dev/null 2>&1
wait_for "the re-tune runs once the deploy is over" 60 vendor_done
wait_for "the override is live again" 20 grep -q "^HIPBLASLT_TUNING_OVERRIDE_FILE=$HTXT$" "$ENVD"
rocmd_stop

harness_done
