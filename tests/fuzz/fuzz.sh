#!/bin/sh
# Fuzzes every target of tests/fuzz/ with libFuzzer for a bounded time: builds
# them with clang-19 -fsanitize=fuzzer,address,undefined (the whole core
# library instrumented for coverage) into a build folder of their own, then
# runs each from its committed seed corpus (tests/fuzz/corpus/NAME, read only:
# new inputs go to a scratch folder), two at a time, and prints per target the
# executions, the coverage (edges, features) and the corpus size. A crash,
# leak, sanitizer report or timeout keeps its input in OUT/ (printed, with
# the command that repeats it) and fails the run, unless it is a known one:
# reported, not yet fixed, listed in tests/fuzz/known/known.txt by its target
# and the function of rocmd's code it happens in (its input in known/TARGET/).
#
# usage: tests/fuzz/fuzz.sh [--time SEC] [--jobs N] [--targets LIST] [--out DIR]
#            [--merge] [BUILD_DIR]
#   --time SEC     seconds per target (default 30)
#   --jobs N       targets fuzzed at once (default 2)
#   --targets LIST comma-separated names (default: every corpus folder)
#   --out DIR      where crash inputs and logs go (default BUILD_DIR/fuzz-out)
#   --merge        afterwards, merge the inputs that add coverage into the
#                  committed corpus (libFuzzer -merge=1), for a person to review
#   BUILD_DIR      default build-fuzz beside the sources
# Exits 77 when clang-19 or its libFuzzer runtime is missing (scripts/deps-debian.sh
# installs clang-19 and libclang-rt-19-dev).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
TIME=30
JOBS=2
TARGETS=
OUT=
MERGE=0
BUILD=$SRC/build-fuzz
usage() { sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	--time) TIME=$2; shift ;;
	--jobs) JOBS=$2; shift ;;
	--targets) TARGETS=$(echo "$2" | tr ',' ' '); shift ;;
	--out) OUT=$2; shift ;;
	--merge) MERGE=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "fuzz.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
CC=${FUZZ_CC:-clang-19}
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "skip: $CC not found (apt-get install clang-19 libclang-rt-19-dev)"
	exit 77
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	"$CC" -x c -fsanitize=fuzzer,address -o /dev/null - 2>/dev/null; then
	echo "skip: $CC cannot link libFuzzer (apt-get install libclang-rt-19-dev)"
	exit 77
fi
[ -n "$TARGETS" ] || TARGETS=$(cd "$HERE/corpus" && ls -d -- */ | tr -d /)
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
OUT=${OUT:-$BUILD/fuzz-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# The build: ROCMD_BUILD_FUZZ links libFuzzer into the targets; every object
# gets coverage (fuzzer-no-link) and ASan + UBSan (ROCMD_SANITIZE).
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
	GEN=""
	command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
	# shellcheck disable=SC2086
	CC=$CC cmake -S "$SRC" -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DROCMD_BUILD_FUZZ=ON -DROCMD_SANITIZE=ON -DROCMD_BUILD_BENCH=OFF \
		-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
fi
t0=$(date +%s)
# shellcheck disable=SC2046
cmake --build "$BUILD" -j"$(nproc)" --target $(for t in $TARGETS; do printf 'fuzz-%s ' "$t"; done) >"$BUILD/fuzz-build.log" 2>&1 ||
	{ tail -n 30 "$BUILD/fuzz-build.log"; echo "fuzz.sh: the build failed"; exit 1; }
echo "# built $(echo "$TARGETS" | wc -w) targets with $CC in $(($(date +%s) - t0)) s; $TIME s each, $JOBS at a time"

rm -rf "$OUT"
mkdir -p "$OUT"
SYM=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || true)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0${SYM:+:external_symbolizer_path=$SYM}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# fuzz_one NAME: one target from its corpus; a line of figures in OUT/NAME.row.
fuzz_one() {
	name=$1
	work=$OUT/$name.corpus
	mkdir -p "$work"
	seeds=$(find "$HERE/corpus/$name" -type f | wc -l)
	rc=0
	# -timeout: an input taking 10 s is a hang; -rss_limit_mb: memory per input.
	(cd "$OUT" && "$BUILD/tests/fuzz/fuzz-$name" -max_total_time="$TIME" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/$name-" \
		"$work" "$HERE/corpus/$name") >"$OUT/$name.log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$name.log")
	last=$(grep -E '^#[0-9]+' "$OUT/$name.log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	secs=$(sed -n 's/^stat::\(average_exec_per_sec\): *//p' "$OUT/$name.log")
	verdict=ok
	if [ "$rc" -ne 0 ]; then
		verdict="FAILED (exit $rc)"
		# The first frame of rocmd's own code (not libFuzzer's, the
		# sanitizers', libc's or the target's) names the defect.
		fn=$(grep -E '^    #[0-9]+ 0x[0-9a-f]+ in ' "$OUT/$name.log" |
			grep -v -E ' in (fuzzer::|__sanitizer|__asan|__ubsan|__interceptor|LLVMFuzzer|main |abort|raise|__libc|__pthread)' |
			head -n 1 | sed 's/.* in \([^ ]*\) .*/\1/')
		if [ -n "$fn" ] && grep -q "^$name $fn " "$HERE/known/known.txt" 2>/dev/null; then
			verdict="known: $fn"
		fi
	fi
	printf '%s %s %s %s %s %s %s %s\n' "$name" "${execs:-0}" "${secs:-0}" "${cov:-?}" \
		"${ft:-?}" "$seeds" "${corp:-?}" "$verdict" >"$OUT/$name.row"
}

# Two lanes (JOBS of them), each taking the next target.
i=0
for t in $TARGETS; do
	echo "$t" >>"$OUT/lane$((i % JOBS))"
	i=$((i + 1))
done
for lane in "$OUT"/lane*; do
	(while read -r t; do fuzz_one "$t"; done <"$lane") &
done
wait

echo
printf '%-12s %12s %9s %6s %7s %6s %6s  %s\n' target execs exec/s cov ft seeds corpus verdict
failed=0
for t in $TARGETS; do
	[ -f "$OUT/$t.row" ] || echo "$t 0 0 ? ? ? ? FAILED (no result)" >"$OUT/$t.row"
	read -r name execs rate cov ft seeds corp verdict <"$OUT/$t.row"
	printf '%-12s %12s %9s %6s %7s %6s %6s  %s\n' "$name" "$execs" "$rate" "$cov" "$ft" "$seeds" "$corp" "$verdict"
	total=$(( ${total:-0} + execs ))
	case $verdict in ok | known:*) ;; *) failed=$((failed + 1)) ;; esac
done
echo "total: $total executions; cov = edges of instrumented code reached, ft = libFuzzer's features"
if grep -q ' known: ' "$OUT"/*.row; then
	echo "known (tests/fuzz/known/known.txt; the target stopped at it):"
	grep -h ' known: ' "$OUT"/*.row | while read -r t _ _ _ _ _ _ _ fn; do
		echo "  $t: $(grep "^$t $fn " "$HERE/known/known.txt" | cut -d' ' -f3-)"
	done
fi
if [ "$failed" -gt 0 ]; then
	for t in $TARGETS; do
		grep -q -E ' (ok|known: [^ ]*)$' "$OUT/$t.row" && continue
		echo
		echo "== $t: $(grep -m 1 -E 'ERROR|SUMMARY|deadly|timeout|leak' "$OUT/$t.log" || echo 'see the log')"
		grep -E '^    #[0-9]+ .* in ' "$OUT/$t.log" | grep -v -E 'libFuzzer|fuzzer::|__sanitizer|libc.so' | head -n 8
		for a in "$OUT/$t"-*; do
			[ -f "$a" ] || continue
			echo "input: $a (repeat: $BUILD/tests/fuzz/fuzz-$t $a; keep it as tests/fuzz/corpus/$t/crash-...)"
		done
	done
	exit 1
fi
if [ "$MERGE" -eq 1 ]; then
	for t in $TARGETS; do
		before=$(find "$HERE/corpus/$t" -type f | wc -l)
		"$BUILD/tests/fuzz/fuzz-$t" -merge=1 "$HERE/corpus/$t" "$OUT/$t.corpus" >"$OUT/$t.merge.log" 2>&1
		echo "merged $t: $before -> $(find "$HERE/corpus/$t" -type f | wc -l) files"
	done
fi
