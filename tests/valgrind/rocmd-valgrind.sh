#!/bin/sh
# rocmd under valgrind's memcheck, standing in for the real binary in the
# integration tests (tests/valgrind/valgrind.sh passes it where a test takes
# the path of rocmd). It execs, so the pid a test waits on or kills is the
# daemon's. $ROCMD_VALGRIND_BIN is the real rocmd; each process's report goes
# to $ROCMD_VALGRIND/rocmd.<pid>.log; any memory error or definitely lost
# block makes the process exit 99. The children that are rocmd again (the
# tuner's evaluation process, exec'd through /proc/self/fd/N: common/spawn.h)
# run under memcheck too; the helper programs rocmd starts (the SDK probe, the
# smoke test, hipconfig, systemctl, a shell) run natively.
exec valgrind --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	--error-exitcode=99 --num-callers=30 --log-file="$ROCMD_VALGRIND/rocmd.%p.log" \
	--trace-children=yes \
	--trace-children-skip='*/rocmd-hip-probe,*/rocmd-rocblas-smoke*,*hipconfig*,*/systemctl,*/sh,*/bash,*/env' \
	"$ROCMD_VALGRIND_BIN" "$@"
