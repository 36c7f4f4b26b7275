#!/bin/sh
# Re-tune after an update: evaluations a re-tune seeded with the previous
# winners needs next to a cold tune (docs/PERF.md, "Re-tune after an update").
#
#   bench/retune/retune.sh [BUILD-DIR]       (default: build; needs bench-retune built)
#
# 1. Landscape replay (no kernels run; deterministic): the previous tune is a
#    replay of the same strategy and budget on the old landscape (a different
#    seed per run), its winner seeds the re-tune on the new landscape.
#    - CPU fp32 256^3, old = new: an SDK update does not change the CPU kernel
#      (compiled into rocmd), so the landscape after the update is the one
#      before (up to noise);
#    - H200 fp32 NN 4096^3, old = new: the bound for an update that leaves the
#      kernels' speed as it was;
#    - H200 fp16 NN 4096^3, old = the first recording, new = the one made after
#      the kernel source changed (3 parameters added, -run3.csv): a real
#      software-key change with both landscapes measured. Both are samples (600 and 450 points).
# 2. Live, on the CPU backend: a cold tune under key K1, then the software
#    part of the key changes (runtime "+update") and the shape is tuned again,
#    seeded from the store and cold, with real measurements. On a loaded
#    machine the noise between runs (10-20%) blurs the 95%/99% levels.
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build}
R="$B/bench/bench-retune"
[ -x "$R" ] || { echo "build bench-retune first: cmake --build $B --target bench-retune" >&2; exit 1; }
D=bench/data
echo "## date: $(date -u +%FT%TZ), host: $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in sar ga; do
	echo "## CPU fp32 256^3 (old = new), $s"
	"$R" replay --old $D/cpu-fp32-256.csv --new $D/cpu-fp32-256.csv --strategy $s \
		--budget 300 --prev-budget 300 --runs 100
done
for s in sa ga; do
	echo "## H200 fp32 NN 4096^3 (old = new), $s"
	"$R" replay --old $D/landscape-h200-fp32-NN-4096.csv --new $D/landscape-h200-fp32-NN-4096.csv \
		--strategy $s --budget 100 --prev-budget 100 --runs ${H200_RUNS:-50}
	echo "## H200 fp16 NN 4096^3 (kernel source changed: first recording -> the later one), $s"
	"$R" replay --old $D/landscape-h200-fp16-NN-4096.csv --new $D/landscape-h200-fp16-NN-4096-run3.csv \
		--strategy $s --budget 100 --prev-budget 100 --runs ${H200_RUNS:-50}
done
echo "## live CPU backend, fp32 256^3, ga"
"$R" live --shape 256x256x256 --strategy ga --budget ${LIVE_BUDGET:-60} --runs ${LIVE_RUNS:-3}
