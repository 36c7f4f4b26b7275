#!/bin/sh
# The tuned library as an application sees it (docs/PERF.md, "Re-tune after an
# update" → "Through the C API"): tunes two shapes on the CPU backend with
# rocmtune, builds the library, then times GEMMs through librocmd-gemm with
# the library and without it (defaults), for tuned, nearest and untuned shapes.
#
#   bench/gemm-api/gemm-api.sh [BUILD-DIR]   (needs rocmtune and bench-gemm-api built)
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build}
T="$B/tools/rocmtune"
D=$(mktemp -d /tmp/rocmd-gemm-api.XXXXXX)
trap 'rm -rf "$D"' EXIT
echo "## date: $(date -u +%FT%TZ), host: $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in 256x256x256 512x128x256; do
	"$T" run --backend cpu --shape $s --strategy sar --budget "${BUDGET:-80}" --db "$D/tune.db" \
		--quiet | tail -3
done
"$T" lib build --db "$D/tune.db" --backend cpu --out "$D/lib"
"$T" lib show --dir "$D/lib"
"$B/bench/bench-gemm-api" --lib "$D/lib" --rounds "${ROUNDS:-15}" \
	--shape 256x256x256,512x128x256,240x250x270,480x140x230
"$B/bench/bench-gemm-api" --lib "$D/lib" --rounds "${ROUNDS:-15}" --trans TT --shape 256x256x256
