#!/bin/sh
# Integration test of the tuned kernel library with the real rocmtune and
# SQLite: tune two shapes, build the library, read it back, query the
# selection (exact, nearest, default), export and import (refused for another
# GPU or SDK), a damaged library refused, and a rebuild that replaces the
# library as a whole (a new generation, the old one kept one round).
# usage: test-rocmtune-lib.sh ROCMTUNE
set -eu
. "$(dirname "$0")/../lib/harness.sh"
harness_init rocmtune-lib
TUNE=$1
Q="--warmup 2 --runs 3 --quiet --db $DIR/tune.db"

# No winners yet: a clean refusal, no library written.
rc=0; "$TUNE" lib build --db "$DIR/tune.db" --backend cpu --out "$DIR/lib" 2>"$DIR/err" || rc=$?
[ "$rc" = 1 ] || bail "build without winners: exit $rc"
grep -q "no winners" "$DIR/err" || bail "build without winners: message"
[ ! -e "$DIR/lib/CURRENT" ] || bail "a library appeared without winners"

# shellcheck disable=SC2086
"$TUNE" run --backend cpu --shape 96x96x96 --budget 6 $Q >/dev/null
# shellcheck disable=SC2086
"$TUNE" run --backend cpu --shape 64x32x48 --dtype bf16 --trans TN --budget 5 $Q >/dev/null
"$TUNE" lib build --db "$DIR/tune.db" --backend cpu --out "$DIR/lib" >"$DIR/out" ||
	bail "lib build"
grep -q "generation 1, 2 shapes, 0 code objects" "$DIR/out" || bail "build summary: $(cat "$DIR/out")"
[ "$(cat "$DIR/lib/CURRENT")" = v1 ] || bail "CURRENT"
"$TUNE" lib show --dir "$DIR/lib" | grep -q "fp32:NN:96x96x96:b1" || bail "show"

"$TUNE" lib query --dir "$DIR/lib" --shape 96x96x96 | head -1 | grep -q "^exact" || bail "exact"
"$TUNE" lib query --dir "$DIR/lib" --shape 80x100x90 | head -1 | grep -q "^nearest" ||
	bail "nearest"
"$TUNE" lib query --dir "$DIR/lib" --shape 96x96x96 --trans TT | head -1 | grep -q "^default" ||
	bail "default"

# Export, import on the same machine, refusal of another GPU and another SDK.
"$TUNE" lib export --db "$DIR/tune.db" --backend cpu --out "$DIR/res.json" 2>/dev/null
"$TUNE" lib export --db "$DIR/tune.db" --backend cpu --csv --out "$DIR/res.csv" 2>/dev/null
"$TUNE" lib import "$DIR/res.json" --db "$DIR/other.db" --backend cpu | grep -q "imported 2" ||
	bail "import json"
"$TUNE" lib import "$DIR/res.csv" --db "$DIR/other2.db" --backend cpu | grep -q "imported 2" ||
	bail "import csv"
"$TUNE" lib build --db "$DIR/other.db" --backend cpu --out "$DIR/lib2" >/dev/null ||
	bail "build from imported results"
sed 's/^# compute_units=.*/# compute_units=999/' "$DIR/res.csv" >"$DIR/gpu.csv"
rc=0; "$TUNE" lib import "$DIR/gpu.csv" --db "$DIR/x.db" --backend cpu 2>"$DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "another GPU: compute_units '999'" "$DIR/err" || bail "other GPU: $(cat "$DIR/err")"
sed 's/"runtime":.*/"runtime": "HIP 9.9",/' "$DIR/res.json" >"$DIR/sdk.json"
rc=0; "$TUNE" lib import "$DIR/sdk.json" --db "$DIR/x.db" --backend cpu 2>"$DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "another software: runtime 'HIP 9.9'" "$DIR/err" || bail "other SDK: $(cat "$DIR/err")"
head -c 200 "$DIR/res.json" >"$DIR/cut.json"
rc=0; "$TUNE" lib import "$DIR/cut.json" --db "$DIR/x.db" --backend cpu 2>"$DIR/err" || rc=$?
[ "$rc" = 1 ] || bail "truncated import accepted"

# A rebuild is a new generation; the previous one stays one round.
"$TUNE" lib build --db "$DIR/tune.db" --backend cpu --out "$DIR/lib" >/dev/null
[ "$(cat "$DIR/lib/CURRENT")" = v2 ] && [ -f "$DIR/lib/v1/index.json" ] || bail "generation 2"
# A damaged index is refused, not half read.
chmod u+w "$DIR/lib/v2/index.json"
printf '{"format":"rocmd-tunedlib","version":1,"id":' >"$DIR/lib/v2/index.json"
rc=0; "$TUNE" lib show --dir "$DIR/lib" 2>"$DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q "index.json" "$DIR/err" || bail "damaged index: $(cat "$DIR/err")"
ok "tuned library: build, show, query, export, import, refusals, a new generation"
harness_done
