#!/bin/sh
# Drives the real rocmd and rocmctl on a private socket and state folder, as a
# user would: status and events (with --follow), --json, exit codes, a denied
# mutating call from an unprivileged uid, the admin group through primary and
# supplementary groups, an invalid config, and SIGTERM.
#
# Usage: test-rocmctl.sh PATH-TO-ROCMD PATH-TO-ROCMCTL
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init ctl
ROCMD=$1
CTL=$2
FOLLOW_PID=

on_exit() { [ -z "$FOLLOW_PID" ] || kill "$FOLLOW_PID" 2>/dev/null; }
start_daemon() { # start_daemon CONFIG-JSON: detaches; returns once listening
	printf '%s\n' "$1" >"$CONF"
	rocmd_start
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
wait_until 5 grep -q daemon.log_level "$DIR/follow"
contains "events --follow streams new events" "$DIR/follow" "daemon.log_level"
kill "$FOLLOW_PID" 2>/dev/null
FOLLOW_PID=
contains "log file is written" "$DIR/rocmd.log" "listening on"

# A stopped daemon still accepts connections: rocmctl gives up, saying why,
# instead of hanging (a hard limit here only guards the test itself).
kill -STOP "$PID"
ROCMD_CLIENT_TIMEOUT_S=2 timeout 30 "$CTL" --socket "$SOCK" status >"$DIR/out" 2>"$DIR/err"
rc=$?
kill -CONT "$PID"
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then ok "a stopped daemon times out"; else
	bad "a stopped daemon times out (exit $rc)"
fi
contains "the timeout says why" "$DIR/err" "sent nothing for 2 s"
check "status after SIGCONT" 0 ctl status
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

# The daemon as a service (issue 20): a --root that is not a folder is refused
# as a usage error; the detached daemon leaves the terminal that started it
# once it serves (its log goes to <state>/rocmd.log when no log file is
# configured); a second instance exits 4 whether detached or not, saying so
# once.
rocmd_stop
check "a --root that does not exist is refused" 2 rocmd_start --root "$DIR/no-such-root"
contains "the refusal names the root" "$DIR/err" "no-such-root"
rm -f "$STATE/rocmd.log"
printf '{}\n' >"$CONF"
rocmd_start >"$DIR/term" 2>&1 || bad "rocmd starts detached without a log file"
check "log-level debug" 0 ctl log-level debug
check "status" 0 ctl status
check "a second instance, detached, exits 4" 4 rocmd_start
if [ "$(grep -c "already using state folder" "$DIR/err")" -eq 1 ]; then
	ok "it says why once"
else
	bad "it says why once" "$DIR/err"
fi
check "a second instance in the foreground exits 4" 4 rocmd_start --foreground
check "pkg list" 0 ctl pkg list
rocmd_stop
if [ ! -s "$DIR/term" ]; then ok "the detached daemon wrote nothing to its terminal"; else
	bad "the detached daemon wrote nothing to its terminal" "$DIR/term"
fi
contains "its log went to the state folder" "$STATE/rocmd.log" "log level"
contains "the stop is logged there" "$STATE/rocmd.log" "stopped"

harness_done
