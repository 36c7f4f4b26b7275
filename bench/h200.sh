#!/bin/sh
# Reproduces the "GPU kernels (H200)" figures of docs/PERF.md on an NVIDIA GPU:
# builds bench/gemm-cuda with the system C compiler (it needs no CUDA headers:
# libcuda, NVRTC and cuBLAS are dlopen'd), checks every kernel path, then tunes
# and times the kernels against cuBLAS. Logs and landscapes go to $OUT (or
# ./h200-out).
#
#   bench/h200.sh [all|check|landscape|square|llm|explore|profile|plr]...
#
# landscape: exhaustive sweeps of a restricted space (LAND_MAX points at most)
#            for fp32 and fp16 NN 4096^3, as CSV (config_key,outcome,median_ms,
#            p20_ms,p80_ms); the best of each vs the default point and cuBLAS
# square:    fp32 NN 8192^3, fp16 and bf16 NN 4096^3, seeded with the landscapes' 40 best
# llm:       M in {1,8,128,512} x (N,K) in {(4096,4096),(11008,4096),(4096,11008)},
#            TN (both operands K-contiguous), per dtype, geometric means
# explore:   focused sweeps around the landscapes' best with the later parameters
# profile:   Nsight Compute counters for the landscapes' best fp32 and fp16 points (fp32:
#            the fma stage's landscape when it ran in the same call)
# plr:       the 20 best fp32 4096^3 points with and without LDS-fragment prefetch
# wgmma:     every valid point of the Hopper wgmma space (MC=2) for fp16 and bf16 NN
#            and fp16 TN 4096^3, as CSV, vs cuBLAS and the default point
# llmwg:     the LLM shapes in fp16/bf16: the mma.sync space (sampled) and the whole
#            wgmma space per M, geometric means over the best of the two per shape
# profilewg: Nsight Compute on the best wgmma point of fp16 NN 4096^3 and on cuBLAS's
#            kernel for the same problem (L2 and shared-memory throughput, stalls)
# tuner:     the tuner core (rocmtune, built beforehand into $TUNER_DIR with its
#            shared libraries) through the CUDA backend: fp16 4096^3, sa, budget 60
# fma:       fp32 NN 4096^3 over the FMA space around the earlier winners (FMA_MAX
#            points, CSV), then its 20 best at 8192^3, vs cuBLAS and the default point
# profile32: the fp32 4096^3 winner's SASS (nvcc + cuobjdump: an opcode count of its
#            k-loop) and Nsight Compute on it and on cuBLAS's SGEMM kernel for the same problem
# cp32:      fp32 NN 4096^3 over the cp.async variant of the FMA path (PGR 2, CP_MAX points,
#            CSV), then its 12 best and the register-staged landscape's 8 best, each re-timed
#            against cuBLAS at 4096^3 and 8192^3 in the same call, and compute-sanitizer's
#            racecheck on its best point at an odd shape
# cpfocus:   every cp.async point around run 18's winner tile (256x128x16, both thread
#            tiles, STAGES 2-4, LDSPAD, PLR, WL, MINB, GROUP 4/8/16), CSV, then its 8 best at
#            4096^3 and 8192^3, and compute-sanitizer racecheck and memcheck on the best
# sk:        stream-K (SK 1) against the same points without it: fp32 NN 4096^3 (CSV), its
#            8 best re-timed at 4096^3 and 8192^3, then compute-sanitizer racecheck and
#            memcheck (our kernel only) on the best stream-K point at an odd shape
# skab:      the 4 best points with and the 4 best without stream-K of the sk landscape
#            (this call's, else bench/data's), re-timed at 4096^3 and 8192^3, CSV each
# sk512:     the fp32 LLM shapes of M = 512 (TN) with and without stream-K
# final32:   the 6 best points of the deep landscape and the 2 best without stream-K of the
#            sk landscape (this call's, else bench/data's), re-timed at 4096^3 and 8192^3, CSV
# regsk:     register staging (PGR 1) and cp.async, DU 8 and 16, with and without stream-K,
#            on the 256x128 16x8 tile (the tuner found PGR 1 DU 8 SK 1 in run 27), fp32 NN
#            4096^3 (CSV), its 6 best re-timed at 8192^3 (CSV)
# final32b:  the regsk landscape's 3 best (this call's, else bench/data's) and the tuner's
#            default, re-timed at FINAL_SHAPE (4096^3) twice (two draws of cuBLAS), CSV each
# deep:      stream-K cp.async points with DU 32 next to DU 16 (fewer barriers, twice the
#            unrolled code), both tile orientations, fp32 NN 4096^3, CSV
# llm32sk:   the fp32 LLM shapes of M = 128 and 512 over every cp.async, stream-K and split-K
#            point of a focused space; with run 14's M <= 8 (GEMV), the 12-shape geomean
# llm32:     the fp32 LLM shapes: M <= 8 from the FMA and the GEMV (GV=1) spaces,
#            M >= 128 from the FMA space, geometric means over the best per shape
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/h200-out}
mkdir -p "$OUT"
B=${BUILD:-/tmp/rocmd-gemm-cuda}
export ROCMD_CUBIN_CACHE=${ROCMD_CUBIN_CACHE:-$B/cubins}
mkdir -p "$B" "$ROCMD_CUBIN_CACHE"
THREADS=$(nproc 2>/dev/null || echo 8)

CC=${CC:-cc}
$CC -O2 -o "$B/rk-embed" kernels/gpu/embed.c
"$B/rk-embed" "$B/gpu-src.c" rk_gemm_src=kernels/gpu/gemm.cu rk_port_src=kernels/gpu/port.h
ERRSRC=common/error.c
[ ! -f common/error-unix.c ] || ERRSRC="$ERRSRC common/error-unix.c"
# shellcheck disable=SC2086
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter -I. \
	bench/gemm-cuda.c kernels/backend-cuda.c "$B/gpu-src.c" kernels/gemm.c kernels/space.c \
	$ERRSRC -ldl -lm -lpthread -o "$B/gemm-cuda"
G="$B/gemm-cuda"

run() {
	echo "+ gemm-cuda $*"
	"$G" "$@" --threads "$THREADS"
}

FP32_BIG="--only MT0=64,128,256 --only MT1=64,128,256 --only DU=8,16 --only TT0=4,8,16
	--only TT1=4,8,16 --only VW=1,4 --only PGR=0,1 --only LDSPAD=0,4 --only GSU=1 --only GROUP=1,8"
MMA_BIG="--only MC=1 --only MT0=64,128,256 --only MT1=64,128,256 --only DU=32,64 --only WM=1,2,4
	--only WN=1,2,4,8 --only STAGES=2,3,4,5 --only GSU=1 --only GROUP=1,8"
FP32_LLM="--only MT0=4,8,16,32,64,128 --only MT1=32,64,128,256 --only DU=8,16,32 --only TT0=1,2,4,8
	--only TT1=2,4,8 --only VW=1,4 --only PGR=1 --only LDSPAD=0 --only GSU=1,2,4,8,16 --only GROUP=1"
MMA_LLM="--only MC=1 --only MT0=16,32,64,128 --only MT1=32,64,128,256 --only DU=32,64 --only WM=1,2
	--only WN=1,2,4 --only STAGES=3,4,5 --only SWZ=1 --only GSU=1,2,4,8,16 --only GROUP=1 --only PLR=0,1"
# Focused spaces around the first landscapes' best points, with the later parameters
# (PLR fragment double-buffering, WL warp layout, MINB launch bounds).
FP32_FOCUS="--only MT0=128,256 --only MT1=128,256 --only DU=8,16 --only TT0=8,16 --only TT1=8,16
	--only VW=4 --only PGR=1 --only LDSPAD=0,4 --only WL=0,1 --only MINB=1,2 --only GSU=1 --only GROUP=1,8"
MMA_FOCUS="--only MC=1 --only MT0=128,256 --only MT1=128,256 --only DU=32,64 --only WM=2,4
	--only WN=2,4 --only STAGES=3,4 --only SWZ=1 --only PLR=0,1 --only GSU=1 --only GROUP=1,8"
# Hopper wgmma: WN warpgroups of 64 rows of n, MT0 the wgmma N.
WG_SQ="--only MC=2 --only MT0=64,128,256 --only MT1=64,128,256 --only DU=64 --only WM=1 --only WN=1,2,4
	--only STAGES=3,4,5 --only SWZ=1 --only PLR=0 --only GSU=1 --only GROUP=1,8 --only MINB=1,2"
WG_LLM="--only MC=2 --only MT0=64,128,256 --only MT1=64,128,256 --only DU=64 --only WM=1 --only WN=1,2,4
	--only STAGES=3,4,5 --only SWZ=1 --only PLR=0 --only GSU=1,2,4 --only GROUP=1"

# The FMA path after its load plan (session 3): every valid point (~370) of the tiles,
# thread tiles, depths, PLR and MINB that could win; VW 4, LDSPAD 4, GROUP 8 (run 1's best).
FP32_SQ="--only MC=0 --only GV=0 --only MT0=128,256 --only MT1=64,128,256 --only DU=8,16
	--only TT0=8,16 --only TT1=8,16 --only VW=4 --only PGR=1 --only LDSPAD=0,4 --only PLR=0,1,2
	--only WL=0,1 --only MINB=1,2 --only GSU=1 --only GROUP=8"
# The cp.async variant (PGR 2) around the same tiles; STAGES 2-4.
FP32_CP="--only MC=0 --only GV=0 --only MT0=128,256 --only MT1=64,128,256 --only DU=8,16
	--only TT0=8,16 --only TT1=8,16 --only VW=4 --only PGR=2 --only STAGES=2,3,4 --only LDSPAD=0,4
	--only PLR=0,1 --only WL=0,1 --only MINB=1,2 --only GSU=1 --only GROUP=8"
FP32_CP_FOCUS="--only MC=0 --only GV=0 --only MT0=256 --only MT1=128 --only DU=16 --only TT0=8,16
	--only TT1=8,16 --only VW=4 --only PGR=2 --only STAGES=2,3,4 --only LDSPAD=0,4 --only PLR=0,1
	--only WL=0,1 --only MINB=1,2 --only GSU=1 --only GROUP=4,8,16"
# Stream-K on and off around the cp.async and register-staged winners.
FP32_SK="--only MC=0 --only GV=0 --only MT0=128,256 --only MT1=128 --only DU=16 --only TT0=8
	--only TT1=8,16 --only VW=4 --only PGR=1,2 --only STAGES=2,3 --only LDSPAD=4 --only PLR=0
	--only WL=0,1 --only MINB=1 --only GSU=1 --only GROUP=8 --only SK=0,1"
FP32_LLM_SK="--only MC=0 --only GV=0 --only MT0=64,128,256 --only MT1=64,128 --only DU=16
	--only TT0=4,8 --only TT1=8,16 --only VW=4 --only PGR=1,2 --only STAGES=2 --only LDSPAD=4
	--only PLR=0 --only WL=0 --only MINB=1 --only GROUP=1"
FP32_DEEP="--only MC=0 --only GV=0 --only MT0=128,256 --only MT1=128,256 --only DU=16,32
	--only TT0=8,16 --only TT1=8,16 --only VW=4 --only PGR=2 --only STAGES=2,3 --only LDSPAD=4
	--only PLR=0 --only WL=1 --only MINB=1 --only GSU=1 --only GROUP=8 --only SK=1"
FP32_REGSK="--only MC=0 --only GV=0 --only MT0=256 --only MT1=128 --only DU=8,16 --only TT0=16
	--only TT1=8 --only VW=4 --only PGR=1,2 --only STAGES=2 --only LDSPAD=4 --only PLR=0,1
	--only WL=0,1 --only MINB=1 --only GSU=1 --only GROUP=8 --only SK=0,1"
FP32_LLM_SK2="--only MC=0 --only GV=0 --only MT0=64,128,256 --only MT1=64,128 --only DU=16
	--only TT0=8 --only TT1=8,16 --only VW=4 --only PGR=1,2 --only STAGES=2 --only LDSPAD=4
	--only PLR=0 --only WL=0,1 --only MINB=1 --only GSU=1,2,4 --only GROUP=1 --only SK=0,1"
FP32_LLM_BIG="--only MC=0 --only GV=0 --only MT0=32,64,128 --only MT1=64,128,256 --only DU=8,16
	--only TT0=4,8,16 --only TT1=4,8 --only VW=4 --only PGR=1 --only LDSPAD=0,4 --only GSU=1,2,4
	--only GROUP=1,8 --only MINB=1,2"
# GEMV (GV=1): rows per block MT0 = M (set per M), lane groups of TT1 columns.
GV_LLM="--only MC=0 --only GV=1 --only MT1=16,32,64,128,256 --only TT1=1,2,4,8 --only DU=8,16,32
	--only VW=4 --only GSU=1,2,4 --only MINB=1,2 --only TT0=4 --only PGR=1 --only LDSPAD=0
	--only WL=0 --only PLR=0 --only GROUP=1"

# Best of several searches per shape: cuBLAS/tuned and default/tuned over the shapes.
bestof() {
	awk -v dt="$1" '/^RESULT/ { sh = ""; for (i = 1; i <= NF; i++) { split($i, kv, "=");
			if (kv[1] == "shape") sh = kv[2]; else if (kv[1] == "cublas_ms") c = kv[2];
			else if (kv[1] == "default_ms") d = kv[2]; else if (kv[1] == "tuned_ms") t = kv[2];
			else if (kv[1] == "cfg") { cf = $i; sub(/^cfg=/, "", cf) } }
		if (!(sh in best) || t < best[sh]) { best[sh] = t; bc[sh] = cf } cb[sh] = c; if (!(sh in df)) df[sh] = d }
		END { for (sh in best) { r += log(cb[sh] / best[sh]); s += log(df[sh] / best[sh]); n++
				printf "LLM-SHAPE %s %s cublas_ms=%s tuned_ms=%s ratio=%.3f default_ms=%s cfg=%s\n", dt, sh, cb[sh], best[sh], cb[sh] / best[sh], df[sh], bc[sh] }
			if (n) printf "LLM-GEOMEAN %s over %d shapes: tuned/cuBLAS %.3f, tuned/default %.3f\n", dt, n, exp(r / n), exp(s / n) }' "$2"
}

[ $# -gt 0 ] || set -- all
for stage in "$@"; do
	case $stage in
	check | all)
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv || true
		run check 2>&1 | tee "$OUT/check.log"
		;;
	esac
	case $stage in
	landscape | all)
		for dt in ${LAND_DTYPES:-fp32 fp16}; do
			if [ $dt = fp32 ]; then S=$FP32_BIG; else S=$MMA_BIG; fi
			# shellcheck disable=SC2086
			run sweep --dtype $dt --trans NN --shapes 4096x4096x4096 $S --reps 7 --top 6 \
				--max "${LAND_MAX:-700}" --tag $dt-4096-landscape \
				--csv "$OUT/landscape-h200-$dt-NN-4096.csv" 2>&1 | tee "$OUT/landscape-$dt.log"
		done
		;;
	esac
	case $stage in
	profile)
		# Counters for the best points of the square shapes (Nsight Compute, clocks left
		# alone): the first launch of rk_gemm after the check is profiled.
		for dt in fp32 fp16; do
			L=bench/data/landscape-h200-$dt-NN-4096.csv
			[ $dt = fp32 ] || L=bench/data/landscape-h200-fp16-NN-4096-run3.csv
			# The fma stage's landscape (same call) when there is one.
			[ $dt != fp32 ] || [ ! -f "$OUT/landscape-h200-fp32-NN-4096-s3.csv" ] ||
				L=$OUT/landscape-h200-fp32-NN-4096-s3.csv
			grep ',ok,' "$L" | sort -t, -k3 -g | head -1 | cut -d, -f1 > "$B/best-$dt.txt"
			timeout 150 ncu --clock-control none --kernel-name rk_gemm --launch-skip 2 --launch-count 1 \
				--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
				--section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
				--section InstructionStats --print-details all \
				--metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active \
				"$G" tune --dtype $dt --trans NN --shapes 4096x4096x4096 --keys "$B/best-$dt.txt" \
				--no-default 1 --reps 3 --top 1 > "$OUT/ncu-$dt.txt" 2>&1 || echo "ncu $dt failed: $?"
			grep -E "Registers Per|Throughput|pipe|bank|wavefronts|Stall|Eligible|Issued Warp|Occupancy" \
				"$OUT/ncu-$dt.txt" | head -40
		done
		;;
	esac
	case $stage in
	plr)
		# The 20 best fp32 points of the landscape, each with and without PLR.
		grep ',ok,' bench/data/landscape-h200-fp32-NN-4096.csv | sort -t, -k3 -g | head -20 |
			cut -d, -f1 > "$B/plr.txt"
		sed 's/$/;PLR=1/' "$B/plr.txt" > "$B/plr1.txt"
		cat "$B/plr1.txt" >> "$B/plr.txt"
		run tune --dtype fp32 --trans NN --shapes 4096x4096x4096 --keys "$B/plr.txt" --reps 7 \
			--top 8 --tag plr 2>&1 | tee "$OUT/plr-fp32.log"
		;;
	esac
	case $stage in
	explore)
		# shellcheck disable=SC2086
		run tune --dtype fp16 --trans NN --shapes 4096x4096x4096 $MMA_FOCUS --reps 7 --top 8 \
			--tag explore 2>&1 | tee "$OUT/explore-fp16.log"
		# shellcheck disable=SC2086
		run tune --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_FOCUS --reps 5 --top 8 \
			--tag explore 2>&1 | tee "$OUT/explore-fp32.log"
		;;
	esac
	case $stage in
	wgmma)
		for dt in ${WG_DTYPES:-fp16 bf16}; do
			for tr in ${WG_TRANS:-NN TN}; do
				[ $dt = fp16 ] || [ $tr = NN ] || continue
				# shellcheck disable=SC2086
				run sweep --dtype $dt --trans $tr --shapes 4096x4096x4096 $WG_SQ --reps 7 --top 6 \
					--tag wgmma-$dt-$tr --csv "$OUT/landscape-h200-wgmma-$dt-$tr-4096.csv" 2>&1 |
					tee "$OUT/wgmma-$dt-$tr.log"
			done
		done
		;;
	esac
	case $stage in
	llmwg)
		# Per dtype: M=1 and 8 from the mma.sync space; M=128 and 512 from both spaces.
		for dt in ${LLM_DTYPES:-fp16 bf16}; do
			for m in ${LLM_MS:-1 8 128 512}; do
				SH="${m}x4096x4096,${m}x11008x4096,${m}x4096x11008"
				# shellcheck disable=SC2086
				run tune --dtype $dt --trans TN --shapes "$SH" $MMA_LLM --max "${LLM_MAX:-120}" --reps 5 \
					--tag llm-$dt 2>&1
				[ "$m" -lt 128 ] || run tune --dtype $dt --trans TN --shapes "$SH" $WG_LLM --reps 5 \
					--tag llmwg-$dt 2>&1
			done | tee "$OUT/llmwg-$dt.log"
			# Best of the two searches per shape: cuBLAS/tuned and default/tuned over the shapes.
			awk -v dt=$dt '/^RESULT/ { sh = ""; for (i = 1; i <= NF; i++) { split($i, kv, "=");
					if (kv[1] == "shape") sh = kv[2]; else if (kv[1] == "cublas_ms") c = kv[2];
					else if (kv[1] == "default_ms") d = kv[2]; else if (kv[1] == "tuned_ms") t = kv[2] }
				if (!(sh in best) || t < best[sh]) best[sh] = t; cb[sh] = c; if (!(sh in df)) df[sh] = d }
				END { for (sh in best) { r += log(cb[sh] / best[sh]); s += log(df[sh] / best[sh]); n++
						printf "LLM-SHAPE %s %s cublas_ms=%s tuned_ms=%s ratio=%.3f\n", dt, sh, cb[sh], best[sh], cb[sh] / best[sh] }
					if (n) printf "LLM-GEOMEAN %s over %d shapes: tuned/cuBLAS %.3f, tuned/default %.3f\n", dt, n, exp(r / n), exp(s / n) }' \
				"$OUT/llmwg-$dt.log" | tee -a "$OUT/llmwg-$dt.log"
		done
		;;
	esac
	case $stage in
	profilewg)
		L=$OUT/landscape-h200-wgmma-fp16-NN-4096.csv
		[ -f "$L" ] || L=bench/data/landscape-h200-wgmma-fp16-NN-4096.csv
		grep ',ok,' "$L" | sort -t, -k3 -g | head -1 | cut -d, -f1 > "$B/best-wg.txt"
		for who in rk_gemm cublas; do
			if [ $who = rk_gemm ]; then K="--kernel-name rk_gemm --launch-skip 2"; else
				K="--kernel-name regex:^(nvjet|sm90|cutlass|xmma) --launch-skip 2"; fi
			# shellcheck disable=SC2086
			timeout 80 ncu --clock-control none $K --launch-count 1 --section SpeedOfLight \
				--section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
				--section WarpStateStats --section Occupancy --section LaunchStats --print-details all \
				"$G" tune --dtype fp16 --trans NN --shapes 4096x4096x4096 --keys "$B/best-wg.txt" \
				--no-default 1 --reps 3 --top 1 > "$OUT/ncu-wg-$who.txt" 2>&1 || echo "ncu $who failed: $?"
			grep -E "^  [a-z]|Registers Per|Throughput|L2|Shared|Stall|Eligible|Issued Warp|Occupancy|Duration|Block Size|Grid Size" \
				"$OUT/ncu-wg-$who.txt" | head -60
		done
		;;
	esac
	case $stage in
	tuner)
		# The tuner core through the CUDA backend; rocmtune and its libraries in $TUNER_DIR.
		T=${TUNER_DIR:-.h200}
		for dt in ${TUNER_DTYPES:-fp16}; do
			echo "+ rocmtune run --backend cuda --shape 4096x4096x4096 --dtype $dt --strategy sa --budget ${TUNER_BUDGET:-60}"
			LD_LIBRARY_PATH="$T${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "${TUNER_TIMEOUT:-240}" "$T/rocmtune" run \
				--backend cuda --shape 4096x4096x4096 --dtype $dt --trans NN --strategy sa \
				--budget "${TUNER_BUDGET:-60}" --db "$B/tune.db" --record "$OUT/tuner-$dt.csv" 2>&1 |
				tee "$OUT/tuner-$dt.log" || echo "rocmtune $dt failed"
		done
		;;
	esac
	case $stage in
	fma)
		# shellcheck disable=SC2086
		run sweep --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_SQ --reps 5 --top 8 \
			--max "${FMA_MAX:-300}" --tag fma-fp32-4096 \
			--csv "$OUT/landscape-h200-fp32-NN-4096-s3.csv" 2>&1 | tee "$OUT/fma-fp32.log"
		grep ',ok,' "$OUT/landscape-h200-fp32-NN-4096-s3.csv" | sort -t, -k3 -g | head -20 |
			cut -d, -f1 > "$B/top-fma.txt"
		run tune --dtype fp32 --trans NN --shapes 8192x8192x8192 --keys "$B/top-fma.txt" --reps 5 \
			--top 6 --tag fma-fp32-8192 2>&1 | tee "$OUT/fma-fp32-8192.log"
		;;
	esac
	case $stage in
	profile32)
		L=$OUT/landscape-h200-fp32-NN-4096-s3.csv
		[ -f "$L" ] || L=bench/data/landscape-h200-fp32-NN-4096-s3.csv
		grep ',ok,' "$L" | sort -t, -k3 -g | head -1 | cut -d, -f1 > "$B/best-32.txt"
		# shellcheck disable=SC2046
		nvcc -cubin -arch=sm_90 -std=c++17 $(tr ';' '\n' < "$B/best-32.txt" | sed 's/^/-DRK_/') \
			-Xptxas -v -o "$B/best-32.cubin" -x cu kernels/gpu/gemm.cu &&
			cuobjdump -sass "$B/best-32.cubin" > "$OUT/sass-fp32.txt" || echo "sass failed"
		# Opcode counts over the whole kernel (the k-loop is read from the file).
		awk '/BAR.SYNC/ { nb++ } /^ +\/\*[0-9a-f]+\*\/ / { op = $2; if (op ~ /^@/) op = $3;
				sub(/;$/, "", op); n[op]++ } END { for (o in n) print n[o], o }' \
			"$OUT/sass-fp32.txt" | sort -rn | head -25
		for who in rk_gemm cublas; do
			K="regex:sgemm|f32|simt|xmma|nvjet|cutlass|sm90"
			[ $who = cublas ] || K=rk_gemm
			timeout 150 ncu --clock-control none --kernel-name "$K" \
				--launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
				--section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
				--section InstructionStats --print-details all \
				--metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active \
				"$G" tune --dtype fp32 --trans NN --shapes 4096x4096x4096 --keys "$B/best-32.txt" \
				--no-default 1 --reps 3 --top 1 > "$OUT/ncu-$who-fp32.txt" 2>&1 || echo "ncu $who failed: $?"
			grep -E 'Registers Per|Duration|Stall (Not|Short|Dispatch|Wait|Barrier|Long)|No Eligible|Instructions Executed  |fma_cycles' \
				"$OUT/ncu-$who-fp32.txt" | sort -u
		done
		;;
	esac
	case $stage in
	cp32)
		# shellcheck disable=SC2086
		run sweep --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_CP --reps 5 --top 8 \
			--max "${CP_MAX:-300}" --tag cp-fp32-4096 \
			--csv "$OUT/landscape-h200-fp32-NN-4096-cp.csv" 2>&1 | tee "$OUT/cp-fp32.log"
		L=$OUT/landscape-h200-fp32-NN-4096-s3.csv
		[ -f "$L" ] || L=bench/data/landscape-h200-fp32-NN-4096-s3.csv
		grep ',ok,' "$OUT/landscape-h200-fp32-NN-4096-cp.csv" | sort -t, -k3 -g | head -12 |
			cut -d, -f1 > "$B/top-cp.txt"
		grep ',ok,' "$L" | sort -t, -k3 -g | head -8 | cut -d, -f1 > "$B/top-regs.txt"
		for sh in 4096x4096x4096 8192x8192x8192; do
			for k in cp regs; do
				run tune --dtype fp32 --trans NN --shapes $sh --keys "$B/top-$k.txt" --reps 5 \
					--top 6 --tag $k 2>&1 | tee -a "$OUT/cp-fp32.log"
			done
		done
		head -1 "$B/top-cp.txt" > "$B/cp-best.txt"
		timeout 120 compute-sanitizer --tool racecheck "$G" tune --dtype fp32 --trans NN \
			--shapes 520x264x136 --keys "$B/cp-best.txt" --no-default 1 --reps 1 --top 1 \
			--threads 4 2>&1 | grep -E 'RACECHECK|hazard|RESULT' | tee -a "$OUT/cp-fp32.log" ||
			echo "racecheck failed"
		;;
	esac
	case $stage in
	cpfocus)
		# shellcheck disable=SC2086
		run sweep --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_CP_FOCUS --reps 5 --top 8 \
			--tag cpfocus-fp32-4096 --csv "$OUT/landscape-h200-fp32-NN-4096-cpfocus.csv" 2>&1 |
			tee "$OUT/cpfocus-fp32.log"
		grep ',ok,' "$OUT/landscape-h200-fp32-NN-4096-cpfocus.csv" | sort -t, -k3 -g | head -8 |
			cut -d, -f1 > "$B/top-cpfocus.txt"
		for sh in 4096x4096x4096 8192x8192x8192; do
			run tune --dtype fp32 --trans NN --shapes $sh --keys "$B/top-cpfocus.txt" --reps 5 \
				--top 6 --tag cpfocus 2>&1 | tee -a "$OUT/cpfocus-fp32.log"
		done
		# The best point under compute-sanitizer at an odd shape (edge tiles included),
		# whole output kept (run 18's filtered racecheck printed nothing).
		head -1 "$B/top-cpfocus.txt" > "$B/cpfocus-best.txt"
		for tool in racecheck memcheck; do
			timeout 240 compute-sanitizer --tool $tool "$G" tune --dtype fp32 --trans NN \
				--shapes 520x264x136 --keys "$B/cpfocus-best.txt" --no-default 1 --reps 1 \
				--top 1 --threads 4 > "$OUT/sanitizer-$tool.log" 2>&1
			echo "compute-sanitizer $tool: exit $?"
			tail -3 "$OUT/sanitizer-$tool.log"
		done
		;;
	esac
	case $stage in
	sk)
		# shellcheck disable=SC2086
		run sweep --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_SK --reps 5 --top 8 \
			--tag sk-fp32-4096 --csv "$OUT/landscape-h200-fp32-NN-4096-sk.csv" 2>&1 |
			tee "$OUT/sk-fp32.log"
		grep ',ok,' "$OUT/landscape-h200-fp32-NN-4096-sk.csv" | sort -t, -k3 -g | head -8 |
			cut -d, -f1 > "$B/top-sk.txt"
		# the best without stream-K too, so both sides are re-timed together
		grep ',ok,' "$OUT/landscape-h200-fp32-NN-4096-sk.csv" | grep 'SK=0' | sort -t, -k3 -g |
			head -2 | cut -d, -f1 >> "$B/top-sk.txt"
		for sh in 4096x4096x4096 8192x8192x8192; do
			run tune --dtype fp32 --trans NN --shapes $sh --keys "$B/top-sk.txt" --reps 7 \
				--top 10 --tag sk 2>&1 | tee -a "$OUT/sk-fp32.log"
		done
		grep 'SK=1' "$B/top-sk.txt" | head -1 > "$B/sk-best.txt"
		compute-sanitizer --help 2>&1 | grep -A3 -- '--kernel-name' | head -8
		for tool in racecheck memcheck; do
			rc=0
			timeout 120 compute-sanitizer --tool $tool --kernel-name kns=rk_gemm "$G" tune \
				--dtype fp32 --trans NN --shapes 520x264x136 --keys "$B/sk-best.txt" \
				--no-default 1 --reps 1 --top 1 --threads 4 > "$OUT/sanitizer-sk-$tool.log" 2>&1 ||
				rc=$?
			echo "compute-sanitizer $tool: exit $rc"
			grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard|RESULT' "$OUT/sanitizer-sk-$tool.log" |
				head -5
		done
		;;
	skab)
		L="$OUT/landscape-h200-fp32-NN-4096-sk.csv"
		[ -f "$L" ] || L=bench/data/landscape-h200-fp32-NN-4096-sk.csv
		for sk in 1 0; do
			grep ',ok,' "$L" | grep "SK=$sk" | sort -t, -k3 -g | head -4 | cut -d, -f1
		done > "$B/ab-sk.txt"
		for sh in 4096x4096x4096 8192x8192x8192; do
			run sweep --dtype fp32 --trans NN --shapes $sh --keys "$B/ab-sk.txt" --reps 9 \
				--top 8 --tag skab --csv "$OUT/skab-fp32-${sh%%x*}.csv" 2>&1 |
				tee -a "$OUT/skab-fp32.log"
		done
		;;
	final32)
		L="$OUT/landscape-h200-fp32-NN-4096-deep.csv"
		[ -f "$L" ] || L=bench/data/landscape-h200-fp32-NN-4096-deep.csv
		L0="$OUT/landscape-h200-fp32-NN-4096-sk.csv"
		[ -f "$L0" ] || L0=bench/data/landscape-h200-fp32-NN-4096-sk.csv
		{
			grep ',ok,' "$L" | sort -t, -k3 -g | head -6 | cut -d, -f1
			grep ',ok,' "$L0" | grep 'SK=0' | sort -t, -k3 -g | head -2 | cut -d, -f1
		} > "$B/final32.txt"
		for sh in 4096x4096x4096 8192x8192x8192; do
			run sweep --dtype fp32 --trans NN --shapes $sh --keys "$B/final32.txt" --reps 9 \
				--top 8 --tag final32 --csv "$OUT/final32-fp32-${sh%%x*}.csv" 2>&1 |
				tee -a "$OUT/final32-fp32.log"
		done
		;;
	regsk)
		# shellcheck disable=SC2086
		run sweep --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_REGSK --reps 7 --top 8 \
			--tag regsk-fp32-4096 --csv "$OUT/landscape-h200-fp32-NN-4096-regsk.csv" 2>&1 |
			tee "$OUT/regsk-fp32.log"
		grep ',ok,' "$OUT/landscape-h200-fp32-NN-4096-regsk.csv" | sort -t, -k3 -g | head -6 |
			cut -d, -f1 > "$B/top-regsk.txt"
		run sweep --dtype fp32 --trans NN --shapes 8192x8192x8192 --keys "$B/top-regsk.txt" \
			--reps 7 --top 6 --tag regsk-fp32-8192 --csv "$OUT/regsk-fp32-8192.csv" 2>&1 |
			tee -a "$OUT/regsk-fp32.log"
		;;
	final32b)
		L="$OUT/landscape-h200-fp32-NN-4096-regsk.csv"
		[ -f "$L" ] || L=bench/data/landscape-h200-fp32-NN-4096-regsk.csv
		# (STAGES shapes PGR 2 only; the full space takes PGR 0/1 points at its default, 3)
		grep ',ok,' "$L" | sort -t, -k3 -g | head -3 | cut -d, -f1 |
			sed '/PGR=[01];/s/STAGES=2/STAGES=3/' > "$B/final32b.txt"
		SH=${FINAL_SHAPE:-4096x4096x4096}
		for round in 1 2; do
			run sweep --dtype fp32 --trans NN --shapes $SH --keys "$B/final32b.txt" \
				--reps 9 --top 4 --tag final32b-$round \
				--csv "$OUT/final32b-fp32-${SH%%x*}-$round.csv" 2>&1 | tee -a "$OUT/final32b-fp32.log"
		done
		;;
	deep)
		# shellcheck disable=SC2086
		run sweep --dtype fp32 --trans NN --shapes 4096x4096x4096 $FP32_DEEP --reps 5 --top 8 \
			--tag deep-fp32-4096 --csv "$OUT/landscape-h200-fp32-NN-4096-deep.csv" 2>&1 |
			tee "$OUT/deep-fp32.log"
		;;
	llm32sk)
		for m in 128 512; do
			SH="${m}x4096x4096,${m}x11008x4096,${m}x4096x11008"
			# shellcheck disable=SC2086
			run tune --dtype fp32 --trans TN --shapes "$SH" $FP32_LLM_SK2 --max 400 --reps 5 \
				--tag llmsk-fp32 2>&1
		done | tee "$OUT/llm32sk-fp32.log"
		{
			grep '^RESULT' bench/data/h200-logs/run14-llm32-fp32.log | grep -E ' shape=(1|8)x'
			grep '^RESULT' "$OUT/llm32sk-fp32.log"
		} > "$B/llm12.txt"
		bestof fp32 "$B/llm12.txt" | tee -a "$OUT/llm32sk-fp32.log"
		;;
	sk512)
		for sk in 0 1; do
			# shellcheck disable=SC2086
			run tune --dtype fp32 --trans TN --shapes 512x4096x4096,512x11008x4096,512x4096x11008 \
				$FP32_LLM_SK --only SK=$sk --only GSU=$([ $sk = 1 ] && echo 1 || echo 1,2,4) \
				--max 150 --reps 5 --top 6 --tag sk512-$sk 2>&1
		done | tee "$OUT/sk512-fp32.log"
		;;
	esac
	case $stage in
	llm32)
		for m in ${LLM_MS:-1 8 128 512}; do
			SH="${m}x4096x4096,${m}x11008x4096,${m}x4096x11008"
			if [ "$m" -le 8 ]; then
				# shellcheck disable=SC2086
				run tune --dtype fp32 --trans TN --shapes "$SH" $FP32_LLM --max "${LLM_MAX:-120}" \
					--reps 5 --tag llm-fp32 2>&1
				# shellcheck disable=SC2086
				run tune --dtype fp32 --trans TN --shapes "$SH" $GV_LLM --only MT0=$m --reps 5 \
					--tag llmgv-fp32 2>&1
			else
				# shellcheck disable=SC2086
				run tune --dtype fp32 --trans TN --shapes "$SH" $FP32_LLM_BIG --max "${LLM_MAX:-120}" \
					--reps 5 --tag llm-fp32 2>&1
			fi
		done | tee "$OUT/llm32-fp32.log"
		bestof fp32 "$OUT/llm32-fp32.log" | tee -a "$OUT/llm32-fp32.log"
		;;
	esac
	case $stage in
	square | all)
		# The 40 best points of the 4096^3 landscapes seed 8192^3 (fp32) and bf16 (from fp16).
		top() { grep ',ok,' "$1" | sort -t, -k3 -g | head -40 | cut -d, -f1; }
		L32="$OUT/landscape-h200-fp32-NN-4096.csv" L16="$OUT/landscape-h200-fp16-NN-4096.csv"
		[ -f "$L32" ] || L32=bench/data/landscape-h200-fp32-NN-4096.csv
		[ -f "$L16" ] || L16=bench/data/landscape-h200-fp16-NN-4096-run3.csv
		top "$L32" > "$B/top-fp32.txt"
		top "$L16" > "$B/top-fp16.txt"
		top "$L16" | sed 's/DT=1/DT=2/' > "$B/top-bf16.txt"
		for dt in ${SQ_DTYPES:-fp32 fp16 bf16}; do
			if [ $dt = fp32 ]; then SH=8192x8192x8192; else SH=4096x4096x4096; fi
			run tune --dtype $dt --trans NN --shapes $SH --keys "$B/top-$dt.txt" --reps 7 \
				--tag square 2>&1 | tee "$OUT/square-$dt.log"
		done
		;;
	esac
	case $stage in
	llm | all)
		# One tuning per dtype and M: the candidates that suit M=1 are not those of M=512.
		for dt in ${LLM_DTYPES:-fp32 fp16 bf16}; do
			if [ $dt = fp32 ]; then S=$FP32_LLM; else S=$MMA_LLM; fi
			for m in ${LLM_MS:-1 8 128 512}; do
				# shellcheck disable=SC2086
				run tune --dtype $dt --trans TN --shapes "${m}x4096x4096,${m}x11008x4096,${m}x4096x11008" \
					$S --max "${LLM_MAX:-120}" --reps 5 --tag llm-$dt 2>&1
			done | tee "$OUT/llm-$dt.log"
			awk -v dt=$dt '/^RESULT/ { for (i = 1; i <= NF; i++) { if ($i ~ /^ratio=/) r += log(substr($i, 7)); if ($i ~ /^speedup=/) s += log(substr($i, 9)) } n++ }
				END { if (n) printf "LLM-GEOMEAN %s over %d shapes: tuned/cuBLAS %.3f, tuned/default %.3f\n", dt, n, exp(r / n), exp(s / n) }' \
				"$OUT/llm-$dt.log" | tee -a "$OUT/llm-$dt.log"
		done
		;;
	esac
done
grep -h -E "^(RESULT|GEOMEAN|LLM-GEOMEAN|LLM-SHAPE|check:)" "$OUT"/*.log > "$OUT/summary.txt" || true
cat "$OUT/summary.txt"
