#!/bin/sh
# Records the CPU backend's exhaustive fp32 256^3 landscape (THREADS=1, PAR=0,
# PGR=0 fixed, 7,680 points) on a quiet machine, twice (replicates A and B),
# for bench-tune-strategies and the noise figures of docs/PERF.md, "Tuner".
#
#   ROCMTUNE=path/to/rocmtune OUT=dir bench/tune-strategies/record.sh [SECONDS]
#
# For a machine without SQLite or the same libc, a static rocmtune without the
# store (what the figures in docs/PERF.md used; G = build-dir/generated):
#   cc -std=c11 -D_GNU_SOURCE -O3 -DNDEBUG -I. -IG -c kernels/backend-cpu.c -o cpu.o
#   cc -std=c11 -D_GNU_SOURCE -O2 -DNDEBUG -DROCMTUNE_NO_DB -I. -IG tools/rocmtune.c \
#      tools/rocmtune-table.c tools/rocmtune-tunedlib.c common/cli.c \
#      kernels/gemm.c kernels/space.c kernels/backend.c kernels/measure.c kernels/tune.c \
#      kernels/landscape.c kernels/strategy*.c common/error.c common/error-unix.c cpu.o \
#      -static -lm -lpthread -ldl -o rocmtune
#
# Each replicate is split into four shards by TT1 (--fix TT1=v); the eight
# processes run at once, each pinned with taskset to two CPUs (both threads of
# one physical core where the machine has SMT), so the backend sees 2 CPUs as
# on the team's build VM and no two shards share a core. Replicate B's shards
# sit on other cores than A's, so a slow core shows as a shard that disagrees
# between A and B. SECONDS (default 300) bounds each process (timeout): the
# CSVs are flushed per line, so a cut run keeps what it measured. The shards
# are merged into $OUT/cpu-fp32-256-{a,b}.csv with the full TT1 list.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/record-out}
ROCMTUNE=${ROCMTUNE:-build/tools/rocmtune}
LIMIT=${1:-300}
mkdir -p "$OUT"

# Pairs of CPUs: the SMT siblings of each physical core, else two cores.
pairs=$(
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		cat "$c/topology/thread_siblings_list" 2>/dev/null || true
	done | sort -u -t, -k1,1n | awk -F'[,-]' '
		NF >= 2 { print $1 "," $2; next }
		{ if (p == "") p = $1; else { print p "," $1; p = "" } }' | head -8
)
npairs=$(echo "$pairs" | grep -c , || true)
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "pairs ($npairs): $(echo "$pairs" | tr '\n' ' ')"
uptime
[ "$npairs" -ge 4 ] || { echo "fewer than 4 pairs of CPUs: not recording" >&2; exit 1; }

ARGS="run --backend cpu --shape 256x256x256 --dtype fp32 --strategy exhaustive --budget 100000
	--fix THREADS=1 --fix PAR=0 --fix PGR=0 --warmup 30 --runs 15 --seed 1 --no-seeds
	--topk -1 --quiet"
i=0
for rep in a b; do
	[ "$rep" = a ] || [ "$npairs" -ge 8 ] || break
	for tt1 in 1 2 4 8; do
		if [ "$rep" = a ]; then k=$i; else k=$((4 + (i + 1) % 4)); fi
		cpus=$(echo "$pairs" | sed -n "$((k + 1))p")
		echo "replicate $rep TT1=$tt1 on CPUs $cpus"
		# shellcheck disable=SC2086
		timeout "$LIMIT" taskset -c "$cpus" "$ROCMTUNE" $ARGS --fix TT1=$tt1 \
			--record "$OUT/shard-$rep-$tt1.csv" >"$OUT/shard-$rep-$tt1.log" 2>&1 &
		i=$(((i + 1) % 4))
	done
done
wait || true
uptime

for rep in a b; do
	[ -f "$OUT/shard-$rep-1.csv" ] || continue
	f="$OUT/cpu-fp32-256-$rep.csv"
	{
		grep '^#' "$OUT/shard-$rep-1.csv" | sed 's/^# param=TT1=.*/# param=TT1=1,2,*4,8/'
		echo "# recorded by bench/tune-strategies/record.sh, replicate $rep: 4 shards" \
			"by TT1 run at once, each pinned (taskset) to 2 CPUs of an otherwise idle" \
			"$(nproc)-CPU host; --warmup 30 --runs 15"
		echo "config,outcome,median_ms,p20_ms,p80_ms,gflops"
		for tt1 in 1 2 4 8; do
			grep -v -e '^#' -e '^config,' "$OUT/shard-$rep-$tt1.csv" || true
		done
	} >"$f"
	echo "$f: $(grep -c ',ok,' "$f") ok entries"
done
