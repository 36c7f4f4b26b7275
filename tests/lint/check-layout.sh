#!/bin/sh
# The size rules of the layout (issue 15), checked on every C source of the
# tree: no file under daemon/ over 1,200 lines, and no function of the
# product (everything but tests/) over 150 lines, except in the GPU kernel
# source (kernels/gpu/), whose kernel body is one long function by design. A function is what the project's style
# writes: a line "{" in column 0 up to the next "}" in column 0.
#
# Usage: tests/lint/check-layout.sh [SOURCE-DIR]
set -u
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 2
FILE_MAX=1200
FUNC_MAX=150
bad=0
files=$(git ls-files '*.c' '*.h' '*.cpp' 2>/dev/null || find . -name '*.[ch]' | sed 's|^\./||')
for f in $files; do
	[ -f "$f" ] || continue
	case $f in kernels/gpu/* | tests/*) continue ;; esac
	case $f in
	daemon/*)
		n=$(wc -l <"$f")
		if [ "$n" -gt "$FILE_MAX" ]; then
			echo "not ok - $f: $n lines (daemon/ files stay under $FILE_MAX)"
			bad=$((bad + 1))
		fi
		;;
	esac
	out=$(awk -v max="$FUNC_MAX" -v file="$f" '
		/^\{/ { start = NR; name = prev; next }
		/^\}/ && start {
			if (NR - start + 1 > max)
				printf "not ok - %s:%d: %s is %d lines (functions stay under %d)\n",
				       file, start, name, NR - start + 1, max
			start = 0
		}
		{ if ($0 ~ /\(/ && $0 !~ /^[ \t]/) prev = $0 }
	' "$f")
	if [ -n "$out" ]; then
		echo "$out"
		bad=$((bad + $(echo "$out" | wc -l)))
	fi
done
if [ "$bad" -eq 0 ]; then
	echo "ok - no daemon/ file over $FILE_MAX lines, no function over $FUNC_MAX lines"
	exit 0
fi
echo "# $bad over the limits"
exit 1
