#!/bin/sh
# Builds the Windows installer and the portable zip from the mingw build
# (scripts/build-windows.sh): rocmd-VERSION-x64.msi with Debian's wixl from
# service/windows/rocmd.wxs, then, with msibuild, the tables wixl has no
# element for:
#   Environment                     rocmctl's folder appended to the machine's
#                                   PATH, taken off again at uninstall;
#   MsiServiceConfig                the service's own SID (unrestricted), the
#                                   one privilege it keeps, recovery for
#                                   non-crash failures, the pre-shutdown wait;
#   MsiServiceConfigFailureActions  restart after 5 s, 30 s, 2 min (reset daily);
#   MsiLockPermissionsEx            the state folder's access list (below);
# the same settings "rocmd install" makes (service/service-win.c), applied by
# Windows Installer's MsiConfigureServices. Beside them rocmd-VERSION-x64.zip
# (the same files, for people who want no installer) and a SHA256SUMS file.
#
# Usage: scripts/build-msi.sh [BUILD [OUTDIR [VERSION]]]
#        (defaults: build-win, BUILD/dist, the project's version)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-win}
OUT=${2:-$BUILD/dist}
VERSION=${3:-$(sed -n 's/^project(rocmd VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
BINS="daemon/rocmd.exe daemon/rocmd-rocblas-smoke.exe daemon/rocmd-hip-probe.exe
client/rocmctl.exe client/rocmd-idle-agent.exe tools/rocmtune.exe kernels/librocmd-gemm.dll"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for b in $BINS; do
	[ -f "$BUILD/$b" ] || { echo "build-msi: $BUILD/$b is missing (run scripts/build-windows.sh)" >&2; exit 1; }
done
if ! command -v wixl >/dev/null 2>&1 || ! command -v msibuild >/dev/null 2>&1; then
	echo "== installing wixl msitools"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends wixl msitools >/dev/null
fi
command -v zip >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq zip >/dev/null

# %ProgramData%\rocmd: not inheriting ProgramData's entries (which let any
# user add files below), full control for SYSTEM and Administrators, modify
# for the service's own SID (NT SERVICE\rocmd: S-1-5-80- and the SHA-1 of
# "ROCMD" in UTF-16LE), read for Users: local users may read, only admins
# and the service change.
STATE_SDDL='D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1301bf;;;S-1-5-80-3164843249-3576408877-936424211-2145795740-1747293153)(A;OICI;0x1200a9;;;BU)'
# msiexec /x ... PURGE=1: rocmd.exe purge removes %ProgramData%\rocmd after
# the service is stopped and removed, before the files go (sequence 3450,
# between DeleteServices and RemoveFiles). The only custom action: deferred,
# in the system's context (the state folder is not the user's to remove), run
# only in an uninstall that is not an upgrade's removal of the old product,
# which needs an administrator; a repair never runs it. Its exit code is
# ignored: a purge that fails leaves the state and the uninstall ends.
# Type 3154 = an exe from an installed file (2 + 16) + exit code ignored (64)
# + deferred (1024) + no impersonation (2048).
PURGE_TYPE=3154
PURGE_IF='REMOVE="ALL" AND PURGE="1" AND NOT UPGRADINGPRODUCTCODE'
NAME=rocmd-$VERSION-x64
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin"
for b in $BINS; do cp "$BUILD/$b" "$STAGE/bin/"; done

# wixl resolves Source= relative to the current folder.
(cd "$STAGE" && wixl -a x64 -D "Version=$VERSION" -D Bin=bin -o "$STAGE/$NAME.msi" \
	"$ROOT/service/windows/rocmd.wxs")
msibuild "$STAGE/$NAME.msi" \
	-q "CREATE TABLE \`Environment\` (\`Environment\` CHAR(72) NOT NULL, \`Name\` CHAR(255) NOT NULL LOCALIZABLE, \`Value\` CHAR(255) LOCALIZABLE, \`Component_\` CHAR(72) NOT NULL PRIMARY KEY \`Environment\`)" \
	-q "INSERT INTO \`Environment\` (\`Environment\`, \`Name\`, \`Value\`, \`Component_\`) VALUES ('PATH', '=-*PATH', '[~];[INSTALLDIR]', 'Tools')" \
	-q "CREATE TABLE \`MsiServiceConfig\` (\`MsiServiceConfig\` CHAR(72) NOT NULL, \`Name\` CHAR(255) NOT NULL, \`Event\` SHORT NOT NULL, \`ConfigType\` LONG NOT NULL, \`Argument\` CHAR(0), \`Component_\` CHAR(72) NOT NULL PRIMARY KEY \`MsiServiceConfig\`)" \
	-q "INSERT INTO \`MsiServiceConfig\` (\`MsiServiceConfig\`, \`Name\`, \`Event\`, \`ConfigType\`, \`Argument\`, \`Component_\`) VALUES ('Sid', 'rocmd', 5, 5, '1', 'Service')" \
	-q "INSERT INTO \`MsiServiceConfig\` (\`MsiServiceConfig\`, \`Name\`, \`Event\`, \`ConfigType\`, \`Argument\`, \`Component_\`) VALUES ('Privileges', 'rocmd', 5, 6, 'SeChangeNotifyPrivilege', 'Service')" \
	-q "INSERT INTO \`MsiServiceConfig\` (\`MsiServiceConfig\`, \`Name\`, \`Event\`, \`ConfigType\`, \`Argument\`, \`Component_\`) VALUES ('NonCrash', 'rocmd', 5, 4, '1', 'Service')" \
	-q "INSERT INTO \`MsiServiceConfig\` (\`MsiServiceConfig\`, \`Name\`, \`Event\`, \`ConfigType\`, \`Argument\`, \`Component_\`) VALUES ('Preshutdown', 'rocmd', 5, 7, '15000', 'Service')" \
	-q "CREATE TABLE \`MsiServiceConfigFailureActions\` (\`MsiServiceConfigFailureActions\` CHAR(72) NOT NULL, \`Name\` CHAR(255) NOT NULL, \`Event\` SHORT NOT NULL, \`ResetPeriod\` LONG, \`RebootMessage\` CHAR(255) LOCALIZABLE, \`Command\` CHAR(255) LOCALIZABLE, \`Actions\` CHAR(255), \`DelayActions\` CHAR(255), \`Component_\` CHAR(72) NOT NULL PRIMARY KEY \`MsiServiceConfigFailureActions\`)" \
	-q "INSERT INTO \`MsiServiceConfigFailureActions\` (\`MsiServiceConfigFailureActions\`, \`Name\`, \`Event\`, \`ResetPeriod\`, \`Actions\`, \`DelayActions\`, \`Component_\`) VALUES ('Restart', 'rocmd', 5, 86400, '1[~]1[~]1', '5000[~]30000[~]120000', 'Service')" \
	-q "CREATE TABLE \`MsiLockPermissionsEx\` (\`MsiLockPermissionsEx\` CHAR(72) NOT NULL, \`LockObject\` CHAR(72) NOT NULL, \`Table\` CHAR(32) NOT NULL, \`SDDLText\` CHAR(255) NOT NULL, \`Condition\` CHAR(255) PRIMARY KEY \`MsiLockPermissionsEx\`)" \
	-q "INSERT INTO \`MsiLockPermissionsEx\` (\`MsiLockPermissionsEx\`, \`LockObject\`, \`Table\`, \`SDDLText\`) VALUES ('StateDir', 'STATEDIR', 'CreateFolder', '$STATE_SDDL')" \
	-q "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Sequence\`) VALUES ('RemoveEnvironmentStrings', 3300)" \
	-q "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Sequence\`) VALUES ('WriteEnvironmentStrings', 5200)" \
	-q "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Condition\`, \`Sequence\`) VALUES ('MsiConfigureServices', 'VersionNT >= 600', 5850)" \
	-q "INSERT INTO \`CustomAction\` (\`Action\`, \`Type\`, \`Source\`, \`Target\`) VALUES ('PurgeState', $PURGE_TYPE, 'rocmd.exe', 'purge')" \
	-q "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Condition\`, \`Sequence\`) VALUES ('PurgeState', '$PURGE_IF', 3450)"
mv "$STAGE/$NAME.msi" "$OUT/$NAME.msi"

# The portable zip: the same files in a folder of the release's name.
mkdir -p "$STAGE/$NAME"
cp "$STAGE"/bin/* "$ROOT/README.md" "$ROOT/docs/SERVICE.md" "$STAGE/$NAME/"
rm -f "$OUT/$NAME.zip"
(cd "$STAGE" && zip -q -r -X "$OUT/$NAME.zip" "$NAME")
(cd "$OUT" && sha256sum "$NAME.msi" "$NAME.zip" >SHA256SUMS)
cat "$OUT/SHA256SUMS"
