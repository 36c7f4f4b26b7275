#!/bin/sh
# Package feeds through the real rocmd and rocmctl (docs/FEEDS.md), against
# a loopback HTTPS server this test starts (feed-server.py, 127.0.0.1 only,
# a self-signed certificate made by the openssl CLI and given to rocmd as
# its CA bundle, bounded in requests and time) serving a release listing in
# GitHub's shape, a catalogue signed with an Ed25519 key made here, and real
# archives made by pkg-mkarchive: refresh (and its validators), available
# with its reasons, fetch by name and by SDK and arch, resume after a cut
# connection; refusals with nothing imported for a bad signature, an unknown
# key, a wrong hash, a wrong size, a truncated body, a redirect loop, a
# stalled server, a 404, an asset over the cap and a package marked bad; a
# release listing of two pages (Link: rel="next"). Then (with the real
# Debian SDK trees) the automatic fetch: an in-place upgrade of /usr from
# HIP 5.2.3 to 5.7.1 with deploy.sync = deploy and pkg.auto_fetch = 1
# refreshes the feeds it has no copy of, fetches, imports and deploys the
# matching package, and never the ones listed first that are marked bad or
# bad for the installed amdgpu driver (a sandbox's sys/module/amdgpu/version).
# The server gone: no network said once, the last good copy kept, and the
# automatic fetch after a stale cache's failed refresh says so once and
# chooses from the last good copy.
#
# Usage: test-pkg-feed.sh ROCMD ROCMCTL PKG-MKARCHIVE
set -u
. "$(dirname "$0")/../lib/harness.sh"
harness_init feed
ROCMD=$1
CTL=$2
MK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
command -v python3 >/dev/null || { skip "feeds" "python3 is not installed"; harness_done; exit 0; }

SRV=$DIR/srv
mkdir -p "$SRV/files" "$SRV/cat" "$SRV/badsig" "$SRV/otherkey" "$DIR/remotes.d" "$DIR/src"
npkgs() { ctl --json pkg list | grep -o '"digest"' | wc -l; }
nobjects() { find "$STATE/store/objects" -type f | wc -l; }
npartial() { find "$STATE/store/partial" -type f | wc -l; }
staging_empty() { [ -z "$(ls -A "$STATE/store/staging")" ]; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { wc -c <"$1" | tr -d ' '; }

# ---- archives, keys, the certificate ----
head -c 400000 /dev/urandom >"$DIR/src/a"
head -c 300000 /dev/urandom >"$DIR/src/b"
printf 'index' >"$DIR/src/index"
check "build the release feed's 7z" 0 "$MK" 7z-fast "$SRV/files/rocm.gfx803.for.hip.sdk.5.7.7z" \
	"f:library/TensileLibrary_gfx803.co=$DIR/src/a" "f:library/TensileLibrary_lazy_gfx803.dat=$DIR/src/index"
check "build the catalogue's zip" 0 "$MK" zip "$SRV/files/cat.gfx1030.V3.zip" \
	"f:library/TensileLibrary_gfx1030.co=$DIR/src/b" "f:library/TensileLibrary_lazy_gfx1030.dat=$DIR/src/index"
REL=$SRV/files/rocm.gfx803.for.hip.sdk.5.7.7z
CAT=$SRV/files/cat.gfx1030.V3.zip
check "a certificate for 127.0.0.1" 0 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	-nodes -keyout "$DIR/key.pem" -out "$DIR/cert.pem" -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1
check "the catalogue's key" 0 openssl genpkey -algorithm ed25519 -out "$DIR/k1.pem"
check "a key no remote names" 0 openssl genpkey -algorithm ed25519 -out "$DIR/k2.pem"
K1=$(openssl pkey -in "$DIR/k1.pem" -pubout -outform DER | tail -c 32 | base64 -w0)
signed() { # signed KEY BODY: BODY.sig, the base64 of BODY's Ed25519 signature
	openssl pkeyutl -sign -rawin -inkey "$1" -in "$2" -out "$2.bin" && base64 -w0 "$2.bin" >"$2.sig" &&
		rm "$2.bin"
}

# ---- the server ----
python3 "$HERE/feed-server.py" "$SRV" "$DIR/cert.pem" "$DIR/key.pem" "$DIR/port" "$DIR/requests" 300 $((240 * WAIT_SCALE)) \
	>"$DIR/server.log" 2>&1 &
SERVER=$!
on_exit() { kill "$SERVER" 2>/dev/null; }
wait_until 10 test -s "$DIR/port" || bail "the server did not start" "$DIR/server.log"
PORT=$(cat "$DIR/port")
U=https://127.0.0.1:$PORT

# The release listing: SDK 5.7 from the asset's name; the second archive's
# SDK from the release's title.
cat >"$SRV/releases" <<JSON
[{"tag_name": "v0.5.7", "name": "ROCmLibs for HIP SDK 5.7", "draft": false, "prerelease": false,
  "body": "Tensile libraries.\r\n", "assets": [
  {"name": "rocm.gfx803.for.hip.sdk.5.7.7z", "size": $(size "$REL"), "digest": "sha256:$(sha "$REL")",
   "browser_download_url": "$U/rocm.gfx803.for.hip.sdk.5.7.7z", "content_type": "application/x-7z-compressed"},
  {"name": "notes.txt", "size": 10, "digest": null, "browser_download_url": "$U/notes.txt"}]}]
JSON
cp "$REL" "$SRV/rocm.gfx803.for.hip.sdk.5.7.7z"
# The signed catalogue: the good package, then one of each misbehaviour, all
# over the same real zip.
cs=$(size "$CAT") ch=$(sha "$CAT")
entry() { # entry NAME URL SIZE SHA [EXTRA]
	printf '{"name": "%s", "version": "V3", "sdk": ["6.2.4"], "platforms": ["linux"], "archs": ["gfx1030"], "url": "%s", "size": %s, "sha256": "%s"%s}' \
		"$1" "$2" "$3" "$4" "${5:-}"
}
{
	printf '{"format": 1, "packages": [\n'
	entry cat.gfx1030.V3.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf ',\n'
	entry resume.gfx1030.zip "$U/cut/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf ',\n'
	entry wronghash.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "0000000000000000000000000000000000000000000000000000000000000000"
	printf ',\n'
	entry wrongsize.zip "$U/files/cat.gfx1030.V3.zip" "$((cs + 100))" "$ch"
	printf ',\n'
	entry truncated.zip "$U/trunc/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf ',\n'
	entry loop.zip "$U/loop" "$cs" "$ch"
	printf ',\n'
	entry slow.zip "$U/slow/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf ',\n'
	entry missing.zip "$U/files/nothing-here.zip" "$cs" "$ch"
	printf ',\n'
	entry overcap.zip "$U/chunked/files/cat.gfx1030.V3.zip" "$cs" "$ch"
	printf ',\n'
	entry withdrawn.gfx1030.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "$ch" ', "bad": "its kernels give wrong results"'
	printf '\n]}\n'
} >"$SRV/cat/catalogue.json"
check "sign the catalogue" 0 signed "$DIR/k1.pem" "$SRV/cat/catalogue.json"
# A catalogue whose signature is of other bytes, and one signed by a key the remote does not name.
printf '{"format": 1, "packages": [%s]}\n' "$(entry evil-a.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "$ch")" \
	>"$SRV/badsig/catalogue.json"
cp "$SRV/cat/catalogue.json.sig" "$SRV/badsig/catalogue.json.sig"
printf '{"format": 1, "packages": [%s]}\n' "$(entry evil-b.zip "$U/files/cat.gfx1030.V3.zip" "$cs" "$ch")" \
	>"$SRV/otherkey/catalogue.json"
check "sign it with the other key" 0 signed "$DIR/k2.pem" "$SRV/otherkey/catalogue.json"

printf 'kind = releases\nurl = %s/releases\nplatform = linux\n' "$U" >"$DIR/remotes.d/rel.conf"
# A listing of two pages: page 1 names page 2 in its Link header.
cat >"$SRV/pages1" <<JSON
[{"tag_name": "v0.5.7", "name": "ROCmLibs for HIP SDK 5.7", "draft": false, "body": "", "assets": [
  {"name": "rocm.gfx803.for.hip.sdk.5.7.7z", "size": $(size "$REL"), "digest": "sha256:$(sha "$REL")",
   "browser_download_url": "$U/rocm.gfx803.for.hip.sdk.5.7.7z"}]}]
JSON
printf '<%s/pages2>; rel="next", <%s/pages2>; rel="last"\n' "$U" "$U" >"$SRV/pages1.link"
cat >"$SRV/pages2" <<JSON
[{"tag_name": "v0.5.7-old", "name": "ROCmLibs for HIP SDK 5.7", "draft": false, "body": "", "assets": [
  {"name": "rocm.gfx906.on.page2.for.hip.sdk.5.7.7z", "size": $(size "$REL"), "digest": "sha256:$(sha "$REL")",
   "browser_download_url": "$U/rocm.gfx803.for.hip.sdk.5.7.7z"}]}]
JSON
# Page 2 links back to page 1 (a server's loop): read once, not ten times.
printf '<%s/pages1>; rel="next"\n' "$U" >"$SRV/pages2.link"
printf 'kind = releases\nurl = %s/pages1\nplatform = linux\n' "$U" >"$DIR/remotes.d/paged.conf"
for r in cat badsig otherkey; do
	printf '# %s\nkind = catalogue\nurl = %s/%s/catalogue.json\nkey = ed25519:%s\n' "$r" "$U" "$r" "$K1" \
		>"$DIR/remotes.d/$r.conf"
done
printf '{"pkg": {"remotes_dir": "%s/remotes.d", "ca_bundle": "%s/cert.pem", "stall_timeout_s": 2, "connect_timeout_s": 5}}\n' \
	"$DIR" "$DIR" >"$CONF"
check "daemon starts" 0 rocmd_start
wait_until 10 test -d "$STATE/store/partial"

# ---- refresh, available ----
check "available before any refresh says so" 0 ctl pkg available
contains "not fetched yet" "$OUT" "remote rel: not fetched yet"
check "pkg refresh: two remotes are refused" 1 ctl pkg refresh
contains "the release feed is read" "$OUT" "^rel: 1 package(s)"
contains "the catalogue is read" "$OUT" "^cat: 10 package(s)"
contains "both pages of a listing are read" "$OUT" "^paged: 2 package(s) from 2 pages"
contains "the second page was asked for" "$DIR/requests" "^/pages2 range=None"
[ "$(grep -c '^/pages1 ' "$DIR/requests")" -eq 1 ] && ok "page 2's link back to page 1 is not followed" ||
	bad "page 2's link back to page 1 is not followed" "$DIR/requests"
contains "a bad signature is refused" "$OUT" "^badsig: failed.*not made by any of the 1 key(s)"
contains "an unknown key is refused" "$OUT" "^otherkey: failed.*not made by any of the 1 key(s)"
check "their cache holds nothing" 1 test -e "$STATE/feeds/badsig.body"
# A remote file others may write is not trusted: nothing is refreshed.
chmod g+w "$DIR/remotes.d/cat.conf"
check "a remote file writable by its group is refused" 1 ctl pkg refresh
contains "the refusal names the file" "$ERR" "remotes.d/cat.conf: a remote's file and folder must be owned by root"
chmod g-w "$DIR/remotes.d/cat.conf"
printf 'kind = releases\nurl = %s/releases\ncolour = red\n' "$U" >"$DIR/remotes.d/zz.conf"
check "a remote file with an unknown key is refused" 1 ctl pkg refresh
contains "the refusal names the file and the line" "$ERR" "remotes.d/zz.conf:3: unknown key \"colour\""
rm "$DIR/remotes.d/zz.conf"
check "pkg refresh again" 1 ctl pkg refresh
contains "an unchanged listing is not fetched again" "$OUT" "^rel: 1 package(s) (not modified)"
contains "the validator went out" "$DIR/requests" '^/releases range=None inm="'
check "pkg available" 0 ctl pkg available
contains "the release's archive is offered" "$OUT" "rel .*rocm.gfx803.for.hip.sdk.5.7.7z.*linux.*5.7.*gfx803.*fetchable"
lacks "notes are not offered" "$OUT" "notes.txt"
contains "the second page's archive is offered" "$OUT" "paged .*rocm.gfx906.on.page2.for.hip.sdk.5.7.7z.*gfx906.*fetchable"
contains "the withdrawn one is never chosen" "$OUT" "withdrawn.gfx1030.zip: marked bad by remote cat: its kernels"
lacks "nothing of a catalogue with a bad signature" "$OUT" "evil-"
check "pkg available --sdk --arch" 0 ctl pkg available --sdk 6.2.4 --arch gfx1030
contains "it names what it would fetch" "$OUT" "would fetch cat.gfx1030.V3.zip"
contains "with the match's reasons" "$OUT" "^cat.gfx1030.V3.zip (cat): chosen"
contains "and why the bad one is not" "$OUT" "^withdrawn.gfx1030.zip (cat): never chosen"
check "pkg available --json" 0 ctl --json pkg available --sdk 5.7.1 --arch gfx803
contains "json names the choice" "$OUT" '"chosen":[[:space:]]*"rocm.gfx803.for.hip.sdk.5.7.7z"'

# ---- refusals: nothing imported, nothing left ----
O=$(nobjects)
refused() { # refused NAME TEXT
	check "fetch $1 is refused" 1 ctl pkg fetch "$1"
	contains "fetch $1: $2" "$ERR" "$2"
	check "fetch $1: nothing imported" 0 test "$(npkgs)" -eq 0 -a "$(nobjects)" -eq "$O"
	check "fetch $1: staging is empty" 0 staging_empty
}
refused wronghash.zip "wrong hash"
refused wrongsize.zip "wrong size"
refused truncated.zip "truncated"
refused loop.zip "more than 5 redirects"
refused slow.zip "timed out"
# (Every entry here is the same zip: one partial file, named by its hash.)
find "$STATE/store/partial" -type f -size -17c >"$DIR/kept"
check "the stalled download's 16 bytes are kept, to resume" 0 test "$(npartial)" -eq 1 -a "$(wc -l <"$DIR/kept")" -eq 1
rm -f "$STATE"/store/partial/*
refused missing.zip "HTTP 404"
refused overcap.zip "over the cap"
refused withdrawn.gfx1030.zip "marked bad by remote cat"
refused evil-a.zip "no feed offers a package named evil-a.zip"
check "no refusal left a partial file" 0 test "$(npartial)" -eq 0
check "fetch without a name or an SDK is a usage error" 2 ctl pkg fetch

# ---- fetch, resume ----
check "fetch cut short" 1 ctl pkg fetch resume.gfx1030.zip
contains "the cut is said, and that it resumes" "$ERR" "pkg fetch. again resumes it"
check "what came is kept" 0 test "$(npartial)" -eq 1
check "fetch it again" 0 ctl pkg fetch resume.gfx1030.zip
contains "it is imported" "$OUT" "Fetched and imported package #1 resume.gfx1030.zip"
contains "the second request resumed" "$DIR/requests" "^/cut/files/cat.gfx1030.V3.zip range=bytes=[1-9]"
check "nothing partial is left" 0 test "$(npartial)" -eq 0
check "fetch by SDK and arch" 0 ctl pkg fetch --sdk 5.7.1 --arch gfx803
contains "the matching archive is fetched" "$OUT" "Fetched and imported package #2 rocm.gfx803.for.hip.sdk.5.7.7z"
contains "and identified from its content" "$OUT" "gfx803"
check "pkg list has both" 0 test "$(npkgs)" -eq 2
check "available knows what is stored" 0 ctl pkg available
contains "stored is shown" "$OUT" "rocm.gfx803.for.hip.sdk.5.7.7z.*stored #2"
check "events: the fetch is an import from a feed" 0 has_event pkg.imported "rocm.gfx803"

# ---- rights: available for all, refresh and fetch for admins ----
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	chmod 755 "$DIR"
	nob() { setpriv --reuid nobody --regid nogroup --clear-groups "$CTL" --socket "$SOCK" "$@"; }
	check "a user may list what is available" 0 nob pkg available
	check "a user may not refresh" 4 nob pkg refresh
	check "a user may not fetch" 4 nob pkg fetch cat.gfx1030.V3.zip
else
	skip "rights" "needs root, nobody and setpriv"
fi

LAST_GOOD=cat.gfx1030.V3.zip
AUTO=0

# ---- automatic: an in-place SDK upgrade fetches, imports and deploys ----
# A second rocmd on a sandbox: Debian bookworm's HIP 5.2.3 under /usr, a
# gfx1030 GPU in a fake KFD topology, deploy.sync = deploy and
# pkg.auto_fetch = 1, one remote whose catalogue lists a package marked bad
# first and then the one built from trixie's real rocBLAS files; /usr is
# then upgraded in place to trixie's HIP 5.7.1.
TREES=${ROCMD_SDK_TREES:-/var/cache/rocmd-test-debs/trees}
T=$TREES/trixie
LIBREL=usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library
if [ -f "$T/$LIBREL/TensileLibrary.dat" ] && [ -f "$T/usr/lib/x86_64-linux-gnu/librocblas.so.0.1" ] &&
	[ -f "$TREES/bookworm/usr/share/hip/version" ]; then
	rocmd_stop
	ROOT=$DIR/root
	mkdir -p "$ROOT" "$DIR/auto.d" "$SRV/auto" "$DIR/p5/library"
	cp -al "$TREES/bookworm/usr" "$ROOT/usr"
	n=$ROOT/sys/class/kfd/kfd/topology/nodes
	mkdir -p "$n/0" "$n/1/mem_banks/0" "$ROOT/sys/class/kfd/kfd/proc"
	printf 'cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n' >"$n/0/properties"
	printf 'cpu_cores_count 0\nsimd_count 24\nsimd_per_cu 2\ngfx_target_version 100300\nvendor_id 4098\ndevice_id 29631\nlocation_id 49408\n' >"$n/1/properties"
	printf 'heap_type 1\nsize_in_bytes 536870912\n' >"$n/1/mem_banks/0/properties"
	# The installed amdgpu driver, as AMD's amdgpu-dkms module says it.
	mkdir -p "$ROOT/sys/module/amdgpu"
	printf '6.8.5\n' >"$ROOT/sys/module/amdgpu/version"
	cp "$T/$LIBREL/TensileLibrary.dat" "$T/$LIBREL/Kernels.so-000-gfx1030.hsaco" "$DIR/p5/library/"
	echo "fetched package" >"$DIR/p5/library/TensileManifest.txt"
	cp "$T/usr/lib/x86_64-linux-gnu/librocblas.so.0.1" "$DIR/p5/librocblas.so.0"
	A5=$SRV/files/rocm.gfx1030.V3.for.hip.sdk.5.7.zip
	(cd "$DIR/p5" && zip -0 -qr "$A5" .) || bad "zip the package (stored: quick to make)"
	{
		printf '{"format": 1, "packages": [\n'
		printf '{"name": "bad.gfx1030.for.hip.sdk.5.7.zip", "sdk": ["5.7"], "platforms": ["linux"], "archs": ["gfx1030"], "url": "%s/files/rocm.gfx1030.V3.for.hip.sdk.5.7.zip", "size": %s, "sha256": "%s", "bad": "withdrawn"},\n' \
			"$U" "$(size "$A5")" "$(sha "$A5")"
		printf '{"name": "rocm.gfx1030.V4.for.hip.sdk.5.7.zip", "version": "V4", "sdk": ["5.7"], "platforms": ["linux"], "archs": ["gfx1030"], "url": "%s/files/rocm.gfx1030.V3.for.hip.sdk.5.7.zip", "size": %s, "sha256": "%s", "bad_drivers": [{"from": "6.8", "to": "6.8.9", "why": "hangs the GPU"}]},\n' \
			"$U" "$(size "$A5")" "$(sha "$A5")"
		printf '{"name": "rocm.gfx1030.V3.for.hip.sdk.5.7.zip", "version": "V3", "sdk": ["5.7"], "platforms": ["linux"], "archs": ["gfx1030"], "url": "%s/files/rocm.gfx1030.V3.for.hip.sdk.5.7.zip", "size": %s, "sha256": "%s"}\n]}\n' \
			"$U" "$(size "$A5")" "$(sha "$A5")"
	} >"$SRV/auto/catalogue.json"
	check "sign the automatic catalogue" 0 signed "$DIR/k1.pem" "$SRV/auto/catalogue.json"
	printf 'kind = catalogue\nurl = %s/auto/catalogue.json\nkey = ed25519:%s\n' "$U" "$K1" >"$DIR/auto.d/auto.conf"
	printf 'kind = releases\nurl = %s/pages1\nplatform = linux\n' "$U" >"$DIR/auto.d/paged.conf"
	STATE=$DIR/state2
	printf '{"sdk": {"debounce_ms": 300}, "deploy": {"sync": "deploy", "smoke_timeout_ms": 20000}, "pkg": {"remotes_dir": "%s/auto.d", "ca_bundle": "%s/cert.pem", "auto_fetch": 1}}\n' \
		"$DIR" "$DIR" >"$CONF"
	rocmd_start --root "$ROOT" || bail "the second rocmd did not start"
	wait_for "HIP 5.2.3 is found" 30 has_event sdk.added "/usr"
	check "the store is empty" 0 test "$(npkgs)" -eq 0
	check "no feed was fetched yet" 1 test -e "$STATE/feeds/auto.body"
	cp -al --remove-destination "$T/usr/." "$ROOT/usr/"
	wait_for "the upgrade is noticed" 30 has_event sdk.version_changed "from 5.2.3 to 5.7.1"
	# No refresh was asked for: the automatic fetch refreshes the feeds it
	# has no copy of first.
	wait_for "the feeds are refreshed first" 30 has_event pkg.auto_fetch "SDK #1 (5.7.1, linux, gfx1030): no stored package fits; refreshing the feeds first"
	wait_for "the matching package is fetched" 60 has_event pkg.auto_fetch "fetching rocm.gfx1030.V3.for.hip.sdk.5.7.zip from remote auto"
	wait_for "it is imported from the feed" 60 has_event pkg.imported "rocm.gfx1030.V3.for.hip.sdk.5.7.zip"
	wait_for "and deployed by the sync" 120 has_event lib.deployed "(sync)"
	same "the library is the fetched package's" "$DIR/p5/library" "$ROOT/$LIBREL"
	check "pkg list" 0 ctl pkg list
	lacks "the package marked bad was never chosen" "$OUT" "bad.gfx1030"
	lacks "nor the one bad for this driver" "$OUT" "V4"
	check "pkg available --sdk 5.7.1 --arch gfx1030" 0 ctl pkg available --sdk 5.7.1 --arch gfx1030
	contains "the driver's bad range is said" "$OUT" \
		"^rocm.gfx1030.V4.for.hip.sdk.5.7.zip (auto): never chosen"
	contains "with the driver and the range" "$OUT" \
		"marked bad for this driver by remote auto: the installed amdgpu driver 6.8.5 is in its bad range 6.8 to 6.8.9: hangs the GPU"
	contains "the good one would be fetched" "$OUT" "would fetch rocm.gfx1030.V3.for.hip.sdk.5.7.zip"
	check "gpu.list names the driver" 0 ctl --json gpu list
	contains "amdgpu_version" "$OUT" '"amdgpu_version":[[:space:]]*"6.8.5"'
	check "fetch of the one bad for this driver is refused" 1 ctl pkg fetch rocm.gfx1030.V4.for.hip.sdk.5.7.zip
	contains "the refusal says why" "$ERR" "marked bad for this driver"
	AUTO=1
	LAST_GOOD=rocm.gfx1030.V3.for.hip.sdk.5.7.zip
else
	skip "automatic fetch" "no real SDK trees in $TREES (tests/fixtures/make-trees.sh)"
fi

# ---- the server gone ----
kill "$SERVER"
wait_gone "$SERVER" 10
check "refresh with no server" 1 ctl pkg refresh
contains "no network is said" "$OUT" "^No network"
check "refresh again with no server" 1 ctl pkg refresh
check "available still has the last good copy" 0 ctl pkg available
contains "cached packages still listed" "$OUT" "$LAST_GOOD"
check "no network is an event once" 0 test "$(ctl events --all --kind pkg.offline | grep -c 'no network')" -eq 1
check "not one per remote either" 0 test "$(ctl events --all --kind pkg.feed_failed | grep -c 'no network')" -eq 0
check "the store keeps working" 0 ctl pkg list
contains "its packages listed" "$OUT" "$LAST_GOOD"
if [ "$AUTO" = 1 ]; then
	# The cached copies grown stale, with no network: the automatic fetch
	# after a downgrade to 5.2.3 tries to refresh, says so once, and chooses
	# from the last good copies.
	for m in "$STATE"/feeds/*.meta; do
		sed 's/"fetched_ms":[^,}]*/"fetched_ms": 1/' "$m" >"$m.new" && mv "$m.new" "$m"
	done
	cp -al --remove-destination "$TREES/bookworm/usr/." "$ROOT/usr/"
	wait_for "the downgrade is noticed" 30 has_event sdk.version_changed "from 5.7.1 to 5.2.3"
	wait_for "the failed refresh is said" 60 has_event pkg.auto_fetch "could not be refreshed first (no network"
	wait_for "the choice is made from the last good copies" 30 has_event pkg.auto_fetch \
		"failed: no package the feeds offer fits SDK 5.2.3"
	check "said once, not per remote" 0 test "$(ctl events --all --kind pkg.auto_fetch | grep -c 'could not be refreshed')" -eq 1
	check "available still reads the cached copies" 0 ctl pkg available
	lacks "no remote lost its copy" "$OUT" "not fetched yet"
fi
rocmd_stop
harness_done
