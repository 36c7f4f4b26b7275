#!/bin/sh
# Integration test of rocmtune with a real SQLite file: a tuning run killed
# with SIGKILL mid-run and restarted repeats no finished evaluation, and the
# evaluation count continues from where it stopped. Also checks clean errors
# and that replay of the recorded landscape is deterministic.
# usage: test-rocmtune.sh ROCMTUNE [STRATEGY]   (the killed run's strategy, ga by default)
set -eu
. "$(dirname "$0")/../lib/harness.sh"
harness_init rocmtune
TUNE=$1
STRATEGY=${2:-ga}
PID=
on_exit() { [ -z "$PID" ] || kill -9 "$PID" 2>/dev/null; }

# Clean usage errors.
rc=0; "$TUNE" run --backend nope --shape 8x8x8 2>"$DIR/err" || rc=$?
[ "$rc" = 2 ] || bail "unknown backend: exit $rc"
grep -q "unknown backend 'nope'" "$DIR/err" || bail "unknown backend message"
rc=0; "$TUNE" run --backend cpu --shape 8x8 2>"$DIR/err" || rc=$?
[ "$rc" = 2 ] || bail "bad shape: exit $rc"
rc=0; "$TUNE" replay --landscape "$DIR/none.csv" 2>"$DIR/err" || rc=$?
[ "$rc" = 1 ] || bail "missing landscape: exit $rc"
"$TUNE" space --backend cpu --shape 64x64x64 --json | grep -q '"valid":' || bail "space --json"

BUDGET=40
ARGS="run --backend cpu --shape 64x48x80 --dtype fp32 --strategy $STRATEGY --budget $BUDGET --seed 7
      --warmup 20 --runs 9 --db $DIR/tune.db --record $DIR/land.csv --topk 2"
# shellcheck disable=SC2086
"$TUNE" $ARGS --quiet >"$DIR/out1" 2>"$DIR/err1" &
PID=$!
# Wait until a few evaluations are committed (the CSV line follows the commit).
i=0
while :; do
	n=$(grep -c '^MT0=' "$DIR/land.csv" 2>/dev/null || true)
	[ "${n:-0}" -ge 8 ] && break
	i=$((i + 1))
	[ $i -lt 600 ] || bail "no progress: $(cat "$DIR/err1")"
	kill -0 $PID 2>/dev/null || bail "rocmtune ended early: $(cat "$DIR/err1")"
	sleep 0.05
done
kill -9 $PID
wait $PID 2>/dev/null || true
PID=
first=$(grep -c '^MT0=' "$DIR/land.csv")
[ "$first" -lt $BUDGET ] || bail "killed too late ($first evaluations)"

# shellcheck disable=SC2086
"$TUNE" $ARGS --json >"$DIR/out2" 2>"$DIR/err2" || bail "resume: $(cat "$DIR/err2")"
grep -q "resuming: [0-9]* evaluations stored" "$DIR/err2" || bail "no resume message"
json=$(cat "$DIR/out2")
get() { echo "$json" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
evals=$(get evaluations); measured=$(get measured); stored=$(get from_store)
before=$(get stored_before)
[ "$evals" = $BUDGET ] || bail "evaluations $evals != $BUDGET"
[ $((measured + stored)) = $BUDGET ] || bail "measured $measured + stored $stored"
# Every evaluation finished before the kill is reused, none measured again.
[ "$stored" = "$before" ] || bail "stored $stored != stored before $before"
[ "$before" -ge "$first" ] || bail "stored before $before < recorded $first"
dups=$(grep '^MT0=' "$DIR/land.csv" | cut -d, -f1 | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || bail "$dups configurations evaluated twice"
total=$(grep -c '^MT0=' "$DIR/land.csv")
[ "$total" -le $BUDGET ] || bail "$total lines for a budget of $BUDGET"

# A third run with the same budget measures nothing.
# shellcheck disable=SC2086
"$TUNE" $ARGS --json --no-seeds >"$DIR/out3" 2>/dev/null || bail "third run"
json=$(cat "$DIR/out3")
[ "$(get measured)" = 0 ] || bail "third run measured $(get measured)"

# A neighbouring shape on the same database is seeded with that winner.
winner=$(echo "$json" | sed -n 's/.*"best":"\([^"]*\)".*/\1/p')
"$TUNE" run --backend cpu --shape 64x48x96 --strategy random --budget 3 --warmup 5 --topk -1 \
	--db "$DIR/tune.db" >/dev/null 2>"$DIR/err4" || bail "neighbour run: $(cat "$DIR/err4")"
grep -q "$winner" "$DIR/err4" || bail "the neighbour's winner was not a seed"

# Replay of the recorded landscape is deterministic for a seed.
"$TUNE" replay --landscape "$DIR/land.csv" --strategy ls,ga --runs 5 --budget 20 --seed 3 \
	--json >"$DIR/r1" 2>/dev/null || bail "replay"
"$TUNE" replay --landscape "$DIR/land.csv" --strategy ls,ga --runs 5 --budget 20 --seed 3 \
	--json >"$DIR/r2" 2>/dev/null || bail "replay 2"
cmp -s "$DIR/r1" "$DIR/r2" || bail "replay not deterministic"
ok "killed after $first, resumed with $before stored, $measured measured, no repeats"
harness_done
