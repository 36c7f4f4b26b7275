#!/bin/sh
# Package feeds on Windows, under wine (docs/FEEDS.md): the real rocmd.exe
# (console mode; libcurl with Schannel, libcrypto's Ed25519) and rocmctl.exe
# against tests/integration/feed-server.py on 127.0.0.1, over HTTPS with a
# self-signed certificate given to rocmd as its CA bundle (pkg.ca_bundle):
# a release listing in GitHub's shape and a catalogue signed with an Ed25519
# key made here, serving real archives (tests/fixtures/mkarchive.c):
# pkg refresh, pkg available, pkg fetch by name and by SDK and arch, a
# resume after a cut connection; refusals with nothing imported for a bad
# signature, a wrong hash and a truncated body; a server whose certificate
# the configured CA bundle did not sign is refused; https_proxy is used.
#
# Usage: test-wfeed-win.sh BUILD-DIR     (a mingw-w64 build folder)
# Called by scripts/test-windows.sh with its WINEPREFIX; alone, it makes its own.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$1
. "$(dirname "$0")/../lib/harness.sh"
. "$(dirname "$0")/../lib/harness-wine.sh"
win_prefix wfeed rocmd-feed
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
STATE=$T/state
SRV=$T/srv
mkdir -p "$SRV/files" "$SRV/cat" "$SRV/badsig" "$T/remotes.d" "$T/src"
for tool in python3 openssl cc pkg-config; do
	command -v "$tool" >/dev/null 2>&1 || {
		skip "feeds under wine" "$tool is not installed"
		harness_done "windows feeds"
		exit 0
	}
done
npkgs() { ctl --json pkg list | grep -o '"digest"' | wc -l; }
nobjects() { find "$STATE/store/objects" -type f | wc -l; }
npartial() { find "$STATE/store/partial" -type f 2>/dev/null | wc -l; }
staging_empty() { [ -z "$(ls -A "$STATE/store/staging" 2>/dev/null)" ]; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { wc -c <"$1" | tr -d ' '; }

# ---- archives, keys, the certificate (on the Linux side) ----
MK=$T/mk
if ! cc -O1 -DMKARCHIVE_MAIN -o "$MK" "$ROOT/tests/fixtures/mkarchive.c" \
	$(pkg-config --cflags --libs libarchive) 2>"$ERR"; then
	bail "build the archive maker (tests/fixtures/mkarchive.c against libarchive)" "$ERR"
fi
head -c 400000 /dev/urandom >"$T/src/a"
head -c 300000 /dev/urandom >"$T/src/b"
printf 'index' >"$T/src/index"
REL=$SRV/files/rocm.gfx1103.for.hip.sdk.6.2.7z
CAT=$SRV/files/cat.gfx1030.V3.zip
check "build the release feed's 7z" 0 "$MK" 7z "$REL" \
	"f:library/TensileLibrary_gfx1103.co=$T/src/a" "f:library/TensileLibrary_lazy_gfx1103.dat=$T/src/index"
check "build the catalogue's zip" 0 "$MK" zip "$CAT" \
	"f:library/TensileLibrary_gfx1030.co=$T/src/b" "f:library/TensileLibrary_lazy_gfx1030.dat=$T/src/index"
# For the name localhost: curl 7.88's Schannel code matches the host against
# the certificate's DNS names only (an IP address in it is not read). RSA:
# wine's crypt32 refused some ECDSA self-signatures (CertGetCertificateChain
# error mask 0x8, signature not valid) in one run of several.
cert() { # cert NAME: NAME.pem and NAME-key.pem, self-signed for localhost
	openssl req -x509 -newkey rsa:2048 -nodes \
		-keyout "$T/$1-key.pem" -out "$T/$1.pem" -days 2 -subj /CN=localhost \
		-addext subjectAltName=DNS:localhost
}
check "a certificate for localhost" 0 cert cert
check "another, that did not sign the server's" 0 cert other
check "the catalogue's key" 0 openssl genpkey -algorithm ed25519 -out "$T/k1.pem"
K1=$(openssl pkey -in "$T/k1.pem" -pubout -outform DER | tail -c 32 | base64 -w0)
signed() { # signed KEY BODY: BODY.sig, the base64 of BODY's Ed25519 signature
	openssl pkeyutl -sign -rawin -inkey "$1" -in "$2" -out "$2.bin" && base64 -w0 "$2.bin" >"$2.sig" &&
		rm "$2.bin"
}

# ---- the server ----
python3 "$ROOT/tests/integration/feed-server.py" "$SRV" "$T/cert.pem" "$T/cert-key.pem" "$T/port" \
	"$T/requests" 200 300 >"$T/server.log" 2>&1 &
SERVER=$!
on_exit() { kill "$SERVER" 2>/dev/null; }
wait_until 10 test -s "$T/port" || bail "the server did not start" "$T/server.log"
U=https://localhost:$(cat "$T/port")

cat >"$SRV/releases" <<JSON
[{"tag_name": "v0.6.2", "name": "ROCmLibs for HIP SDK 6.2", "draft": false, "prerelease": false,
  "body": "", "assets": [
  {"name": "rocm.gfx1103.for.hip.sdk.6.2.7z", "size": $(size "$REL"), "digest": "sha256:$(sha "$REL")",
   "browser_download_url": "$U/files/rocm.gfx1103.for.hip.sdk.6.2.7z"}]}]
JSON
cs=$(size "$CAT") ch=$(sha "$CAT")
entry() { # entry NAME URL SIZE SHA
	printf '{"name": "%s", "version": "V3", "sdk": ["6.2.4"], "platforms": ["windows"], "archs": ["gfx1030"], "url": "%s", "size": %s, "sha256": "%s"}' \
		"$1" "$2" "$3" "$4"
}
{
	printf '{"format": 1, "packages": [\n'
	entry resume.gfx1030.zip "$U/cut/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf ',\n'
	entry wronghash.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "0000000000000000000000000000000000000000000000000000000000000000"
	printf ',\n'
	entry truncated.zip "$U/trunc/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf '\n]}\n'
} >"$SRV/cat/catalogue.json"
check "sign the catalogue" 0 signed "$T/k1.pem" "$SRV/cat/catalogue.json"
# A catalogue whose signature is of other bytes.
printf '{"format": 1, "packages": [%s]}\n' "$(entry evil.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "$ch")" \
	>"$SRV/badsig/catalogue.json"
cp "$SRV/cat/catalogue.json.sig" "$SRV/badsig/catalogue.json.sig"
printf 'kind = releases\nurl = %s/releases\n' "$U" >"$T/remotes.d/rel.conf"
for r in cat badsig; do
	printf 'kind = catalogue\nurl = %s/%s/catalogue.json\nkey = ed25519:%s\n' "$U" "$r" "$K1" \
		>"$T/remotes.d/$r.conf"
done

# ---- the daemon ----
cp "$BUILD/daemon/rocmd.exe" "$BUILD/client/rocmctl.exe" "$T/"
# config NAME [CA-BUNDLE]: the daemon's configuration C:\rocmd-feed\NAME.json.
config() {
	ca=""
	[ -z "${2:-}" ] || ca=", \"ca_bundle\": \"$2\""
	cat >"$T/$1.json" <<JSON
{
	"state_dir": "C:\\\\rocmd-feed\\\\state",
	"log": { "level": "info", "file": "C:\\\\rocmd-feed\\\\rocmd.log" },
	"pkg": { "remotes_dir": "C:\\\\rocmd-feed\\\\remotes.d", "stall_timeout_s": 5,
	         "connect_timeout_s": 10$ca }
}
JSON
}
start_daemon() { # start_daemon NAME [VAR=VALUE...]: rocmd.exe with NAME.json, in that environment
	c=$1
	shift
	env "$@" wine 'C:\rocmd-feed\rocmd.exe' --foreground --config "C:\\rocmd-feed\\$c.json" \
		>"$T/console.out" 2>&1 &
	DAEMON=$!
	wait_until 60 ctl status
}
stop_daemon() {
	ctl shutdown >/dev/null 2>&1
	wait "$DAEMON"
}

# A CA bundle that did not sign the server's certificate: every remote is
# refused and nothing is cached. (Without a CA bundle, wine's Schannel
# accepts any certificate: it does not check the chain Windows' would.)
config wrongca 'C:\\rocmd-feed\\other.pem'
start_daemon wrongca || bail "rocmd.exe starts" "$T/console.out"
check "pkg refresh with the wrong CA bundle fails" 1 ctl pkg refresh
contains "the release feed's certificate is refused" "$OUT" "^rel: failed.*localhost.*CERT_TRUST_IS_UNTRUSTED_ROOT"
contains "the catalogue's too" "$OUT" "^cat: failed.*localhost"
grep '^rel:' "$OUT" | sed 's/^/#   /'
check "nothing was cached" 0 test ! -e "$STATE/feeds/rel.body" -a ! -e "$STATE/feeds/cat.body"
stop_daemon
# The proxy of the environment is used (libcurl reads https_proxy): one that
# listens nowhere makes every remote fail, naming it.
config feed 'C:\\rocmd-feed\\cert.pem'
start_daemon feed https_proxy=http://127.0.0.1:9 || bail "rocmd.exe starts with a proxy" "$T/console.out"
check "pkg refresh through a proxy that is not there fails" 1 ctl pkg refresh
contains "the proxy is what could not be reached" "$OUT" "^rel: failed.*127.0.0.1 port 9"
check "still nothing cached" 0 test ! -e "$STATE/feeds/rel.body"
stop_daemon
config feed 'C:\\rocmd-feed\\cert.pem'
start=$(date +%s)
start_daemon feed || bail "rocmd.exe starts with its CA bundle" "$T/console.out"
wait_until 10 test -d "$STATE/store/partial"

# ---- refresh, available ----
check "pkg refresh: the bad signature is refused" 1 ctl pkg refresh
contains "the release feed is read over HTTPS" "$OUT" "^rel: 1 package(s)"
contains "the signed catalogue is read" "$OUT" "^cat: 3 package(s)"
contains "a bad signature is refused (Ed25519 checked)" "$OUT" \
	"^badsig: failed.*not made by any of the 1 key(s)"
check "its cache holds nothing" 1 test -e "$STATE/feeds/badsig.body"
check "pkg refresh again" 1 ctl pkg refresh
contains "an unchanged listing is not fetched again" "$OUT" "^rel: 1 package(s) (not modified)"
check "pkg available" 0 ctl pkg available
contains "the release's archive is offered" "$OUT" \
	"rel .*rocm.gfx1103.for.hip.sdk.6.2.7z.*windows.*6.2.*gfx1103.*fetchable"
contains "the catalogue's are" "$OUT" "cat .*resume.gfx1030.zip"
lacks "nothing of a catalogue with a bad signature" "$OUT" "evil"
check "pkg available --sdk --arch" 0 ctl pkg available --sdk 6.2.4 --arch gfx1103
contains "it names what it would fetch" "$OUT" "would fetch rocm.gfx1103.for.hip.sdk.6.2.7z"

# ---- refusals: nothing imported, nothing left ----
O=$(nobjects)
refused() { # refused NAME TEXT
	check "fetch $1 is refused" 1 ctl pkg fetch "$1"
	contains "fetch $1: $2" "$ERR" "$2"
	check "fetch $1: nothing imported" 0 test "$(npkgs)" -eq 0 -a "$(nobjects)" -eq "$O"
	check "fetch $1: staging is empty" 0 staging_empty
	check "fetch $1: no partial file is kept" 0 test "$(npartial)" -eq 0
}
refused wronghash.zip "wrong hash"
refused truncated.zip "truncated"
refused evil.zip "no feed offers a package named evil.zip"

# ---- fetch, resume ----
check "fetch cut short" 1 ctl pkg fetch resume.gfx1030.zip
contains "the cut is said, and that it resumes" "$ERR" "pkg fetch. again resumes it"
check "what came is kept" 0 test "$(npartial)" -eq 1
check "fetch it again" 0 ctl pkg fetch resume.gfx1030.zip
contains "it is imported" "$OUT" "Fetched and imported package #1 resume.gfx1030.zip"
contains "the second request resumed" "$T/requests" "^/cut/files/cat.gfx1030.V3.zip range=bytes=[1-9]"
check "nothing partial is left" 0 test "$(npartial)" -eq 0
check "fetch by SDK and arch" 0 ctl pkg fetch --sdk 6.2.4 --arch gfx1103
contains "the matching 7z is fetched" "$OUT" "Fetched and imported package #2 rocm.gfx1103.for.hip.sdk.6.2.7z"
contains "and identified from its content" "$OUT" "gfx1103"
check "pkg list has both" 0 test "$(npkgs)" -eq 2
check "pkg verify" 0 ctl pkg verify
check "available knows what is stored" 0 ctl pkg available
contains "stored is shown" "$OUT" "rocm.gfx1103.for.hip.sdk.6.2.7z.*stored #2"
stop_daemon
echo "# feeds under wine: $(($(date +%s) - start)) s"
harness_done "windows feeds"
