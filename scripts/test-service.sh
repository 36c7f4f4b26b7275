#!/bin/sh
# The Linux service stage of CI: checks rocmd's systemd units offline (no
# running systemd needed), the hardening score, the generator's drop-in,
# "cmake --install" into a scratch root, and the Debian package (file list,
# maintainer scripts, lintian).
#
# Usage: scripts/test-service.sh BUILD-DIR      (a configured and built tree)
# Prints "ok"/"not ok" lines; exits non-zero when anything failed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MAX_EXPOSURE=2.5
WORK=$(mktemp -d /tmp/rocmd-test-service-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failed=0

ok() { echo "ok - $1"; }
bad() {
	failed=$((failed + 1))
	echo "not ok - $1"
	[ -f "$WORK/out" ] && sed 's/^/#   /' "$WORK/out"
}
skip() { echo "ok - $1 # skip $2"; }

if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd units" "systemd-analyze is not installed (apt-get install systemd)"
else
	# The test copy of the unit runs this build's rocmd, so verify can check ExecStart.
	if systemd-analyze verify --man=no "$BUILD/service/test/rocmd.service" \
		"$BUILD/service/test/rocmd.socket" >"$WORK/out" 2>&1 && ! [ -s "$WORK/out" ]; then
		ok "systemd-analyze verify rocmd.service rocmd.socket: clean"
	else
		bad "systemd-analyze verify rocmd.service rocmd.socket"
	fi
	systemd-analyze security --offline=true "$BUILD/service/test/rocmd.service" >"$WORK/out" 2>&1
	score=$(sed -n 's/.*Overall exposure level for rocmd.service: \([0-9.]*\).*/\1/p' "$WORK/out")
	if [ -n "$score" ] && awk "BEGIN { exit !($score <= $MAX_EXPOSURE) }"; then
		ok "systemd-analyze security --offline=true rocmd.service: exposure $score (<= $MAX_EXPOSURE)"
	else
		bad "exposure score '$score' above $MAX_EXPOSURE"
	fi
	# The generator's drop-in names the configured extra roots.
	mkdir -p "$WORK/gen"
	printf '{"sdk": {"extra_roots": "/srv/sdk a:/data/rocm"}}\n' >"$WORK/gen.json"
	if ROCMD_CONFIG=$WORK/gen.json "$BUILD/service/rocmd-systemd-generator" "$WORK/gen" \
		>"$WORK/out" 2>&1 &&
		grep -qx 'ReadWritePaths=-/srv/sdk\\ a' "$WORK/gen/rocmd.service.d/50-sdk-roots.conf" &&
		grep -qx 'ReadWritePaths=-/data/rocm' "$WORK/gen/rocmd.service.d/50-sdk-roots.conf"; then
		ok "rocmd-systemd-generator writes ReadWritePaths= for sdk.extra_roots"
	else
		cat "$WORK/gen/rocmd.service.d/50-sdk-roots.conf" >>"$WORK/out" 2>/dev/null
		bad "rocmd-systemd-generator drop-in"
	fi
	mkdir -p "$WORK/units/rocmd.service.d"
	cp "$BUILD/service/test/rocmd.service" "$WORK/units/"
	cp "$WORK/gen/rocmd.service.d/50-sdk-roots.conf" "$WORK/units/rocmd.service.d/"
	if SYSTEMD_UNIT_PATH="$WORK/units:" systemd-analyze verify --man=no "$WORK/units/rocmd.service" \
		>"$WORK/out" 2>&1 && ! [ -s "$WORK/out" ]; then
		ok "rocmd.service with the generated drop-in verifies clean"
	else
		bad "rocmd.service with the generated drop-in"
	fi
fi

# cmake --install into a scratch root, with the prefix a package uses.
PKG=$WORK/pkg-build
if cmake -S "$ROOT" -B "$PKG" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DROCMD_BUILD_TESTS=OFF -DROCMD_BUILD_BENCH=OFF >"$WORK/out" 2>&1 &&
	cmake --build "$PKG" -j"${JOBS:-2}" >"$WORK/out" 2>&1 &&
	DESTDIR=$WORK/dest cmake --install "$PKG" >"$WORK/out" 2>&1; then
	ok "cmake --install"
else
	bad "cmake --install"
fi
for f in usr/sbin/rocmd usr/bin/rocmctl lib/systemd/system/rocmd.service \
	lib/systemd/system/rocmd.socket lib/systemd/system-generators/rocmd-systemd-generator \
	usr/lib/sysusers.d/rocmd.conf usr/lib/tmpfiles.d/rocmd.conf etc/rocmd/rocmd.json \
	usr/share/bash-completion/completions/rocmctl usr/share/man/man8/rocmd.8.gz \
	usr/share/man/man1/rocmctl.1.gz; do
	if [ -e "$WORK/dest/$f" ]; then ok "installs /$f"; else
		: >"$WORK/out"
		bad "installs /$f"
	fi
done
if grep -q '^ExecStart=/usr/sbin/rocmd --foreground$' "$WORK/dest/lib/systemd/system/rocmd.service"; then
	ok "installed unit runs /usr/sbin/rocmd"
else
	: >"$WORK/out"
	bad "installed unit's ExecStart"
fi
if command -v man >/dev/null 2>&1 && MANWIDTH=80 man -l "$WORK/dest/usr/share/man/man8/rocmd.8.gz" \
	>"$WORK/out" 2>&1 && grep -q "EXIT STATUS" "$WORK/out"; then
	ok "rocmd.8 renders"
else
	skip "rocmd.8 renders" "man is not installed"
fi
if bash -n "$WORK/dest/usr/share/bash-completion/completions/rocmctl" 2>"$WORK/out"; then
	ok "bash completion parses"
else
	bad "bash completion parses"
fi

# The Debian package.
if ! command -v dpkg-deb >/dev/null 2>&1; then
	skip "Debian package" "dpkg-deb is not installed"
elif (cd "$PKG" && cpack -G DEB >"$WORK/out" 2>&1); then
	DEB=$(ls "$PKG"/rocmd_*.deb | head -n1)
	ok "cpack -G DEB: $(basename "$DEB")"
	dpkg-deb --contents "$DEB" >"$WORK/contents"
	for f in ./usr/sbin/rocmd ./lib/systemd/system/rocmd.service ./usr/lib/sysusers.d/rocmd.conf \
		./etc/rocmd/rocmd.json; do
		if grep -q " $f\$" "$WORK/contents"; then ok "package holds $f"; else
			cp "$WORK/contents" "$WORK/out"
			bad "package holds $f"
		fi
	done
	dpkg-deb -e "$DEB" "$WORK/control"
	if grep -q '^/etc/rocmd/rocmd.json$' "$WORK/control/conffiles" 2>/dev/null; then
		ok "rocmd.json is a conffile"
	else
		: >"$WORK/out"
		bad "rocmd.json is a conffile"
	fi
	if sh -n "$WORK/control/postinst" && grep -q 'enable --now rocmd.service' "$WORK/control/postinst" &&
		grep -q '/run/systemd/system' "$WORK/control/postinst"; then
		ok "postinst enables and starts rocmd, guarded when systemd is not running"
	else
		: >"$WORK/out"
		bad "postinst"
	fi
	# Unpacked into a sandbox, the daemon from the package runs and answers.
	dpkg-deb -x "$DEB" "$WORK/sandbox"
	S=$WORK/sandbox
	if "$S/usr/sbin/rocmd" --state-dir "$WORK/state" --socket "$WORK/s.sock" \
		--config "$S/etc/rocmd/rocmd.json" >"$WORK/out" 2>&1 &&
		"$S/usr/bin/rocmctl" --socket "$WORK/s.sock" status >"$WORK/out" 2>&1; then
		ok "the packaged rocmd and rocmctl run from a dpkg -x sandbox"
	else
		bad "the packaged rocmd and rocmctl run from a dpkg -x sandbox"
	fi
	"$S/usr/bin/rocmctl" --socket "$WORK/s.sock" shutdown >/dev/null 2>&1
	if command -v lintian >/dev/null 2>&1; then
		lintian --tag-display-limit 0 "$DEB" >"$WORK/lintian" 2>&1
		errors=$(grep -c '^E:' "$WORK/lintian")
		echo "# lintian: $errors error(s), $(grep -c '^W:' "$WORK/lintian") warning(s)"
		sed 's/^/#   /' "$WORK/lintian"
		if [ "$errors" -eq 0 ]; then ok "lintian: no errors"; else
			cp "$WORK/lintian" "$WORK/out"
			bad "lintian errors"
		fi
	else
		skip "lintian" "lintian is not installed (apt-get install lintian)"
	fi
else
	bad "cpack -G DEB"
fi
[ "$failed" -eq 0 ]
