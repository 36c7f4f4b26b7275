#!/bin/sh
# Drives the real rocmd and rocmctl on a private socket and state folder, as a
# user would: status and events (with --follow), --json, exit codes, a denied
# mutating call from an unprivileged uid, the admin group through primary and
# supplementary groups, an invalid config, and SIGTERM.
#
# Usage: test-rocmctl.sh PATH-TO-ROCMD PATH-TO-ROCMCTL
set -u
ROCMD=$1
CTL=$2
DIR=$(mktemp -d /tmp/rocmd-test-ctl-XXXXXX)
chmod 755 "$DIR"
SOCK=$DIR/rocmd.sock
STATE=$DIR/state
passed=0
failed=0
skipped=0

cleanup() {
	[ -n "${FOLLOW_PID:-}" ] && kill "$FOLLOW_PID" 2>/dev/null
	if [ -S "$SOCK" ]; then "$CTL" --socket "$SOCK" shutdown >/dev/null 2>&1; fi
	sleep 0.2
	rm -rf "$DIR"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; }
skip() { skipped=$((skipped + 1)); echo "ok - $1 # skip $2"; }
check() { # check NAME EXPECTED-EXIT COMMAND...
	name=$1 want=$2
	shift 2
	"$@" >"$DIR/out" 2>"$DIR/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else
		bad "$name (exit $got, wanted $want)"
		sed 's/^/#   /' "$DIR/out" "$DIR/err"
	fi
}
contains() { # contains NAME FILE TEXT
	if grep -q -- "$3" "$2"; then ok "$1"; else
		bad "$1 ('$3' not in $2)"
		sed 's/^/#   /' "$2"
	fi
}
ctl() { "$CTL" --socket "$SOCK" "$@"; }
start_daemon() { # start_daemon CONFIG-JSON: detaches; returns once listening
	printf '%s\n' "$1" >"$DIR/rocmd.json"
	"$ROCMD" --state-dir "$STATE" --socket "$SOCK" --config "$DIR/rocmd.json"
}
wait_gone() { # wait_gone PID
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	! kill -0 "$1" 2>/dev/null
}

# Not running yet: exit 3 and a plain message.
check "unreachable daemon exits 3" 3 ctl status
contains "unreachable message is plain" "$DIR/err" "rocmd is not running"
check "no command is a usage error" 2 "$CTL"
check "unknown command is a usage error" 2 ctl frobnicate

# An invalid config stops the daemon before it starts, naming the key.
printf '{"ipc": {"max_connections": "many"}, "colour": 1}\n' >"$DIR/bad.json"
check "invalid config refused with exit 3" 3 "$ROCMD" --foreground --state-dir "$STATE" \
	--socket "$SOCK" --config "$DIR/bad.json"
contains "config error names the path" "$DIR/err" "ipc.max_connections"
contains "config error names the unknown key" "$DIR/err" "colour"

check "daemon starts detached" 0 start_daemon '{"log": {"level": "info", "file": "'"$DIR"'/rocmd.log"}}'
check "status" 0 ctl status
contains "status shows the schema" "$DIR/out" "Schema version"
contains "status shows the state dir" "$DIR/out" "$STATE"
check "status --json" 0 ctl --json status
contains "json status has counts" "$DIR/out" '"tune_jobs"'
PID=$(sed -n 's/.*"pid":[[:space:]]*\([0-9]*\).*/\1/p' "$DIR/out" | head -n 1)
if [ -n "$PID" ] && kill -0 "$PID"; then ok "status names the daemon's pid"; else bad "status names the daemon's pid"; fi
check "events" 0 ctl events
contains "events show the start" "$DIR/out" "daemon.start"
check "events --json --kind" 0 ctl --json events --kind daemon.
contains "events json lines" "$DIR/out" '"kind":"daemon.start"'
check "config" 0 ctl config
contains "config shows the admin group" "$DIR/out" '"admin_group"'
check "raw call with bad params is an error" 1 ctl call events.list '{"limit": "x"}'
contains "bad params message names the param" "$DIR/err" "limit"

# events --follow sees an event that happens after it started.
ctl events --follow --kind daemon.log >"$DIR/follow" 2>&1 &
FOLLOW_PID=$!
sleep 0.5
check "log-level as root" 0 ctl log-level debug
i=0
while ! grep -q daemon.log_level "$DIR/follow" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
contains "events --follow streams new events" "$DIR/follow" "daemon.log_level"
kill "$FOLLOW_PID" 2>/dev/null
FOLLOW_PID=
contains "log file is written" "$DIR/rocmd.log" "listening on"
check "events --limit 1" 0 ctl events --limit 1
if [ "$(wc -l <"$DIR/out")" -eq 1 ]; then ok "events --limit 1 shows one event"; else bad "events --limit 1 shows one event"; fi
contains "events default view ends with the newest" "$DIR/out" "daemon.log_level"
check "events --all" 0 ctl events --all
contains "events --all starts at the first" "$DIR/out" "daemon.start"

# Unprivileged callers may read but not change anything.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	check "nobody may read status" 0 as_nobody "$CTL" --socket "$SOCK" status
	check "nobody may not shut down (exit 4)" 4 as_nobody "$CTL" --socket "$SOCK" shutdown
	contains "denial says why" "$DIR/err" "permission denied"
	check "daemon still serves after a denial" 0 ctl status
else
	skip "unprivileged denial" "needs root and setpriv"
fi

check "shutdown as root" 0 ctl shutdown
if wait_gone "$PID"; then ok "daemon exits after shutdown"; else bad "daemon exits after shutdown"; fi
if [ ! -e "$SOCK" ]; then ok "socket removed on exit"; else bad "socket removed on exit"; fi

# The admin group, through the primary group and through supplementary groups.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && getent group nogroup >/dev/null &&
	getent group daemon >/dev/null; then
	check "daemon restarts" 0 start_daemon '{"ipc": {"admin_group": "nogroup"}}'
	check "admin group as primary group" 0 \
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" --socket "$SOCK" log-level info
	check "admin group as supplementary group" 0 \
		setpriv --reuid=nobody --regid=daemon --groups=nogroup "$CTL" --socket "$SOCK" log-level info
	check "other groups denied" 4 \
		setpriv --reuid=nobody --regid=daemon --clear-groups "$CTL" --socket "$SOCK" log-level info
	PID=$(ctl --json status | sed -n 's/.*"pid":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
	kill -TERM "$PID"
	if wait_gone "$PID"; then ok "SIGTERM stops the daemon"; else bad "SIGTERM stops the daemon"; fi
	check "previous stop recorded as clean" 0 start_daemon '{}'
	check "status after restart" 0 ctl status
	contains "clean previous stop" "$DIR/out" "clean"
else
	skip "admin group" "needs root, setpriv and groups nogroup/daemon"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
