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
. "$ROOT/tests/lib/harness.sh"
harness_init service
# Every failure shows the output of the command that failed ($OUT).
on_bad() { [ "$1" -gt 0 ] || show "$OUT"; }

if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd units" "systemd-analyze is not installed (apt-get install systemd)"
else
	# The test copy of the unit runs this build's rocmd, so verify can check ExecStart.
	if systemd-analyze verify --man=no "$BUILD/service/test/rocmd.service" \
		"$BUILD/service/test/rocmd.socket" >"$OUT" 2>&1 && ! [ -s "$OUT" ]; then
		ok "systemd-analyze verify rocmd.service rocmd.socket: clean"
	else
		bad "systemd-analyze verify rocmd.service rocmd.socket"
	fi
	systemd-analyze security --offline=true "$BUILD/service/test/rocmd.service" >"$OUT" 2>&1
	score=$(sed -n 's/.*Overall exposure level for rocmd.service: \([0-9.]*\).*/\1/p' "$OUT")
	if [ -n "$score" ] && awk "BEGIN { exit !($score <= $MAX_EXPOSURE) }"; then
		ok "systemd-analyze security --offline=true rocmd.service: exposure $score (<= $MAX_EXPOSURE)"
	else
		bad "exposure score '$score' above $MAX_EXPOSURE"
	fi
	# The generator's drop-in names the configured extra roots.
	mkdir -p "$DIR/gen"
	printf '{"sdk": {"extra_roots": "/srv/sdk a:/data/rocm"}}\n' >"$DIR/gen.json"
	if ROCMD_CONFIG=$DIR/gen.json "$BUILD/service/rocmd-systemd-generator" "$DIR/gen" \
		>"$OUT" 2>&1 &&
		grep -qx 'ReadWritePaths=-/srv/sdk\\ a' "$DIR/gen/rocmd.service.d/50-sdk-roots.conf" &&
		grep -qx 'ReadWritePaths=-/data/rocm' "$DIR/gen/rocmd.service.d/50-sdk-roots.conf"; then
		ok "rocmd-systemd-generator writes ReadWritePaths= for sdk.extra_roots"
	else
		cat "$DIR/gen/rocmd.service.d/50-sdk-roots.conf" >>"$OUT" 2>/dev/null
		bad "rocmd-systemd-generator drop-in"
	fi
	mkdir -p "$DIR/units/rocmd.service.d"
	cp "$BUILD/service/test/rocmd.service" "$DIR/units/"
	cp "$DIR/gen/rocmd.service.d/50-sdk-roots.conf" "$DIR/units/rocmd.service.d/"
	if SYSTEMD_UNIT_PATH="$DIR/units:" systemd-analyze verify --man=no "$DIR/units/rocmd.service" \
		>"$OUT" 2>&1 && ! [ -s "$OUT" ]; then
		ok "rocmd.service with the generated drop-in verifies clean"
	else
		bad "rocmd.service with the generated drop-in"
	fi
fi

# cmake --install into a scratch root, with the prefix a package uses.
PKG=$DIR/pkg-build
if cmake -S "$ROOT" -B "$PKG" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DROCMD_BUILD_TESTS=OFF -DROCMD_BUILD_BENCH=OFF >"$OUT" 2>&1 &&
	cmake --build "$PKG" -j"${JOBS:-2}" >"$OUT" 2>&1 &&
	DESTDIR=$DIR/dest cmake --install "$PKG" >"$OUT" 2>&1; then
	ok "cmake --install"
else
	bad "cmake --install"
fi
for f in usr/sbin/rocmd usr/bin/rocmctl lib/systemd/system/rocmd.service \
	lib/systemd/system/rocmd.socket lib/systemd/system-generators/rocmd-systemd-generator \
	usr/lib/sysusers.d/rocmd.conf usr/lib/tmpfiles.d/rocmd.conf etc/rocmd/rocmd.json \
	usr/share/bash-completion/completions/rocmctl usr/share/man/man8/rocmd.8.gz \
	usr/share/man/man1/rocmctl.1.gz usr/share/man/man1/rocmtune.1.gz \
	usr/share/zsh/vendor-completions/_rocmctl usr/share/fish/vendor_completions.d/rocmctl.fish; do
	if [ -e "$DIR/dest/$f" ]; then ok "installs /$f"; else
		: >"$OUT"
		bad "installs /$f"
	fi
done
if grep -q '^ExecStart=/usr/sbin/rocmd --foreground$' "$DIR/dest/lib/systemd/system/rocmd.service"; then
	ok "installed unit runs /usr/sbin/rocmd"
else
	: >"$OUT"
	bad "installed unit's ExecStart"
fi
if command -v man >/dev/null 2>&1 && MANWIDTH=80 man -l "$DIR/dest/usr/share/man/man8/rocmd.8.gz" \
	>"$OUT" 2>&1 && grep -q "EXIT STATUS" "$OUT"; then
	ok "rocmd.8 renders"
else
	skip "rocmd.8 renders" "man is not installed"
fi
if bash -n "$DIR/dest/usr/share/bash-completion/completions/rocmctl" 2>"$OUT"; then
	ok "bash completion parses"
else
	bad "bash completion parses"
fi

# The Debian package.
if ! command -v dpkg-deb >/dev/null 2>&1; then
	skip "Debian package" "dpkg-deb is not installed"
elif (cd "$PKG" && cpack -G DEB >"$OUT" 2>&1); then
	DEB=$(ls "$PKG"/rocmd_*.deb | head -n1)
	ok "cpack -G DEB: $(basename "$DEB")"
	dpkg-deb --contents "$DEB" >"$DIR/contents"
	for f in ./usr/sbin/rocmd ./lib/systemd/system/rocmd.service ./usr/lib/sysusers.d/rocmd.conf \
		./etc/rocmd/rocmd.json; do
		if grep -q " $f\$" "$DIR/contents"; then ok "package holds $f"; else
			cp "$DIR/contents" "$OUT"
			bad "package holds $f"
		fi
	done
	dpkg-deb -e "$DEB" "$DIR/control"
	if grep -q '^/etc/rocmd/rocmd.json$' "$DIR/control/conffiles" 2>/dev/null; then
		ok "rocmd.json is a conffile"
	else
		: >"$OUT"
		bad "rocmd.json is a conffile"
	fi
	if sh -n "$DIR/control/postinst" && grep -q 'enable --now rocmd.service' "$DIR/control/postinst" &&
		grep -q '/run/systemd/system' "$DIR/control/postinst"; then
		ok "postinst enables and starts rocmd, guarded when systemd is not running"
	else
		: >"$OUT"
		bad "postinst"
	fi
	# Unpacked into a sandbox, the daemon from the package runs and answers.
	dpkg-deb -x "$DEB" "$DIR/sandbox"
	S=$DIR/sandbox
	if "$S/usr/sbin/rocmd" --state-dir "$DIR/state" --socket "$DIR/s.sock" \
		--config "$S/etc/rocmd/rocmd.json" >"$OUT" 2>&1 &&
		"$S/usr/bin/rocmctl" --socket "$DIR/s.sock" status >"$OUT" 2>&1; then
		ok "the packaged rocmd and rocmctl run from a dpkg -x sandbox"
	else
		bad "the packaged rocmd and rocmctl run from a dpkg -x sandbox"
	fi
	"$S/usr/bin/rocmctl" --socket "$DIR/s.sock" shutdown >/dev/null 2>&1
	if command -v lintian >/dev/null 2>&1; then
		lintian --tag-display-limit 0 "$DEB" >"$DIR/lintian" 2>&1
		errors=$(grep -c '^E:' "$DIR/lintian")
		echo "# lintian: $errors error(s), $(grep -c '^W:' "$DIR/lintian") warning(s)"
		sed 's/^/#   /' "$DIR/lintian"
		if [ "$errors" -eq 0 ]; then ok "lintian: no errors"; else
			cp "$DIR/lintian" "$OUT"
			bad "lintian errors"
		fi
	else
		skip "lintian" "lintian is not installed (apt-get install lintian)"
	fi
else
	bad "cpack -G DEB"
fi
harness_done "service stage"
