#!/bin/sh
# Builds rocmd and runs it in the foreground with the default setup: as root,
# state in /var/lib/rocmd and the socket /run/rocmd/rocmd.sock; as another
# user, state in ~/.local/state/rocmd and the socket in $XDG_RUNTIME_DIR.
# Talk to it from another terminal with build/client/rocmctl status.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/build.sh" "$ROOT/build"
echo "rocmd: starting in the foreground; Ctrl-C stops it."
echo "rocmd: try '$ROOT/build/client/rocmctl status' in another terminal."
exec "$ROOT/build/daemon/rocmd" --foreground "$@"
