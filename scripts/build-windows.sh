#!/bin/sh
# Cross-builds rocmd.exe and rocmctl.exe for 64-bit Windows with Debian's
# mingw-w64. The dependencies (libuv, SQLite, cJSON, libarchive with zlib,
# liblzma and bzip2, msgpack-c, libcurl with Windows' own TLS (Schannel),
# OpenSSL's libcrypto for the feeds' Ed25519 signatures; cmocka for the tests
# run under wine) are built from Debian's own source packages
# (apt-get source, through a private apt configuration that adds the deb-src
# line for the mirror the system's apt already uses, scripts/apt-mirror.sh,
# so the system's apt setup is left alone) as static libraries into a
# cache OUTSIDE the repository, and reused on later runs: only the first run
# pays for them (10 to 20 minutes on two busy cores; later runs under a minute).
#
# Usage: scripts/build-windows.sh [deps|build|all]     (default: all)
# Environment: ROCMD_WIN_DEPS  the cache (default /var/cache/rocmd-win-deps, or
#                              ~/.cache/rocmd-win-deps when that is not writable)
#              ROCMD_WIN_BUILD the build folder (default build-win/)
#              JOBS            parallel jobs (default 2)
#              ROCMD_TEST_MIRROR  the Debian archive (default: the apt sources')
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/apt-mirror.sh"
DEFAULT_CACHE=/var/cache/rocmd-win-deps
# Without root, a per-user cache (still outside the repository).
if [ "$(id -u)" -ne 0 ] && ! { mkdir -p "$DEFAULT_CACHE" 2>/dev/null && [ -w "$DEFAULT_CACHE" ]; }; then
	DEFAULT_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/rocmd-win-deps
fi
CACHE=${ROCMD_WIN_DEPS:-$DEFAULT_CACHE}
BUILD=${ROCMD_WIN_BUILD:-$ROOT/build-win}
JOBS=${JOBS:-2}
HOST=x86_64-w64-mingw32
CC=$HOST-gcc-posix
AR=$HOST-ar
RANLIB=$HOST-ranlib
TOOLCHAIN=$ROOT/cmake/toolchain-mingw-w64.cmake
# Bump when a recipe below changes: every dependency is rebuilt.
RECIPE=3
PREFIX=$CACHE/r$RECIPE/prefix
SRC=$CACHE/r$RECIPE/src
WHAT=${1:-all}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

log() { printf '== %s\n' "$*"; }
# Third-party build chatter (their warnings are not ours) goes to a log file.
LOGFILE=$CACHE/build-deps.log
quiet() {
	"$@" >>"$LOGFILE" 2>&1 || { echo "failed: $* (see $LOGFILE)" >&2; tail -n 30 "$LOGFILE" >&2; exit 1; }
}

host_packages() {
	missing=""
	for p in mingw-w64 cmake make pkg-config dpkg-dev tcl xz-utils; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		log "installing$missing"
		$SUDO apt-get update -qq
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
	fi
}

# A private apt configuration that knows the deb-src line; nothing under /etc changes.
APTDIR=$CACHE/apt
# (As root, apt would drop to the _apt user, who cannot write the cache.)
SANDBOX=""
[ "$(id -u)" -eq 0 ] && SANDBOX="-o APT::Sandbox::User=root"
apt_private() {
	# shellcheck disable=SC2086
	apt-get -q -o Dir::Etc::SourceList="$APTDIR/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$APTDIR/lists" -o Dir::Cache="$APTDIR/cache" $SANDBOX "$@"
}
apt_ready=0
apt_setup() {
	[ "$apt_ready" -eq 1 ] && return 0
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	mirror=$(apt_mirror) || {
		echo "no Debian archive in this machine's apt sources: set ROCMD_TEST_MIRROR" >&2
		exit 1
	}
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
		>"$APTDIR/sources.list"
	apt_private update -qq
	apt_ready=1
}

# fetch SRCPKG: unpacks Debian's source package into $SRC and sets $dir to it.
fetch() {
	mkdir -p "$SRC/$1"
	dir=$(find "$SRC/$1" -mindepth 1 -maxdepth 1 -type d | head -n1)
	if [ -z "$dir" ]; then
		apt_setup
		(cd "$SRC/$1" && apt_private source -qq --only-source "$1" >/dev/null)
		dir=$(find "$SRC/$1" -mindepth 1 -maxdepth 1 -type d | head -n1)
	fi
	[ -n "$dir" ] || { echo "no source for $1" >&2; exit 1; }
}

# cmake_configure SRC OPTIONS...: configures SRC/_build for the cross target.
cmake_configure() {
	src=$1
	shift
	rm -rf "$src/_build"
	quiet cmake -S "$src" -B "$src/_build" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" \
		-DROCMD_WIN_PREFIX="$PREFIX" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
		-DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
		-DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=OFF "$@"
}

cmake_cross() {
	cmake_configure "$@"
	quiet cmake --build "$1/_build" -j"$JOBS"
	quiet cmake --install "$1/_build"
}

# pc NAME VERSION LIBS [REQUIRES]: our own pkg-config file for a static library.
pc() {
	mkdir -p "$PREFIX/lib/pkgconfig"
	cat >"$PREFIX/lib/pkgconfig/$1.pc" <<EOF
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: $1
Description: $1 (static, mingw-w64, built by rocmd's build-windows.sh)
Version: $2
Requires.private: ${4:-}
Cflags: -I\${includedir}
Libs: $3
EOF
}

# built NAME: true when NAME is already in the cache.
built() { [ -f "$PREFIX/.built-$1" ]; }
done_() { touch "$PREFIX/.built-$1"; log "$1 built"; }

build_zlib() {
	built zlib && return 0
	fetch zlib
	# Debian's dfsg tarball drops win32/: compile the library's files directly.
	objs=""
	for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast \
		inflate inftrees trees uncompr zutil; do
		quiet $CC -O2 -c "$dir/$f.c" -o "$dir/$f.o"
		objs="$objs $dir/$f.o"
	done
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	rm -f "$PREFIX/lib/libz.a"
	# shellcheck disable=SC2086
	$AR rcs "$PREFIX/lib/libz.a" $objs
	cp "$dir/zlib.h" "$dir/zconf.h" "$PREFIX/include/"
	pc zlib 1.2 "-L\${libdir} -lz"
	done_ zlib
}

build_bzip2() {
	built bzip2 && return 0
	fetch bzip2
	objs=""
	for f in blocksort huffman crctable randtable compress decompress bzlib; do
		quiet $CC -O2 -D_FILE_OFFSET_BITS=64 -c "$dir/$f.c" -o "$dir/$f.o"
		objs="$objs $dir/$f.o"
	done
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	rm -f "$PREFIX/lib/libbz2.a"
	# shellcheck disable=SC2086
	$AR rcs "$PREFIX/lib/libbz2.a" $objs
	cp "$dir/bzlib.h" "$PREFIX/include/"
	pc bzip2 1.0 "-L\${libdir} -lbz2"
	done_ bzip2
}

build_xz() {
	built xz && return 0
	fetch xz-utils
	rm -rf "$dir/_build" && mkdir -p "$dir/_build"
	(cd "$dir/_build" && ../configure -q --host=$HOST CC="$CC" --prefix="$PREFIX" \
		--disable-shared --enable-static --disable-xz --disable-xzdec --disable-lzmadec \
		--disable-lzmainfo --disable-lzma-links --disable-scripts --disable-doc --disable-nls \
		--disable-threads && make -j"$JOBS" -C src/liblzma install) >>"$LOGFILE" 2>&1 ||
		{ echo "failed: liblzma (see $LOGFILE)" >&2; exit 1; }
	# liblzma's own .pc wants LZMA_API_STATIC defined by users of the static library.
	pc liblzma 5 "-L\${libdir} -llzma"
	sed -i 's/^Cflags: .*/Cflags: -I${includedir} -DLZMA_API_STATIC/' "$PREFIX/lib/pkgconfig/liblzma.pc"
	done_ xz
}

build_libuv() {
	built libuv && return 0
	fetch libuv1
	cmake_cross "$dir" -DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_BENCH=OFF
	# Only the static library: the import library would win the link otherwise.
	rm -f "$PREFIX/lib/libuv.dll.a" "$PREFIX/bin/libuv.dll"
	[ -f "$PREFIX/lib/libuv_a.a" ] && cp "$PREFIX/lib/libuv_a.a" "$PREFIX/lib/libuv.a"
	pc libuv 1 "-L\${libdir} -luv -lpsapi -luser32 -ladvapi32 -liphlpapi -luserenv -lws2_32 -ldbghelp -lole32 -lshell32"
	done_ libuv
}

build_sqlite() {
	built sqlite && return 0
	fetch sqlite3
	if [ ! -f "$dir/_build/sqlite3.c" ]; then
		rm -rf "$dir/_build" && mkdir -p "$dir/_build"
		# The amalgamation is generated by native tools (tclsh, lemon); only
		# sqlite3.c itself is compiled for Windows.
		(cd "$dir/_build" && ../configure -q --disable-tcl && make sqlite3.c) >>"$LOGFILE" 2>&1 ||
			{ echo "failed: the SQLite amalgamation (see $LOGFILE)" >&2; exit 1; }
	fi
	quiet $CC -O2 -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_FTS5=0 -DSQLITE_DQS=0 \
		-DSQLITE_DEFAULT_FOREIGN_KEYS=0 -c "$dir/_build/sqlite3.c" -o "$dir/_build/sqlite3.o"
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	rm -f "$PREFIX/lib/libsqlite3.a"
	$AR rcs "$PREFIX/lib/libsqlite3.a" "$dir/_build/sqlite3.o"
	cp "$dir/_build/sqlite3.h" "$dir/src/sqlite3ext.h" "$PREFIX/include/" 2>/dev/null ||
		cp "$dir/_build/sqlite3.h" "$PREFIX/include/"
	pc sqlite3 3 "-L\${libdir} -lsqlite3"
	done_ sqlite
}

# cJSON with CJSON_HIDE_SYMBOLS: by default its objects carry dllexport
# directives, so that every DLL linking it (librocmd-gemm.dll) exported cJSON
# and a program linking that DLL and cJSON had each symbol twice. The stamp
# "cjson-hidden" rebuilds it alone in a cache made before.
build_cjson() {
	built cjson-hidden && return 0
	fetch cjson
	mkdir -p "$PREFIX/lib" "$PREFIX/include/cjson"
	quiet $CC -O2 -std=c89 -DCJSON_HIDE_SYMBOLS -c "$dir/cJSON.c" -o "$dir/cJSON.o"
	rm -f "$PREFIX/lib/libcjson.a"
	$AR rcs "$PREFIX/lib/libcjson.a" "$dir/cJSON.o"
	cp "$dir/cJSON.h" "$PREFIX/include/cjson/"
	pc libcjson 1.7 "-L\${libdir} -lcjson"
	sed -i 's|^Cflags: .*|Cflags: -I${includedir} -I${includedir}/cjson -DCJSON_HIDE_SYMBOLS|' "$PREFIX/lib/pkgconfig/libcjson.pc"
	done_ cjson-hidden
}

build_libarchive() {
	built libarchive && return 0
	fetch libarchive
	cmake_configure "$dir" -DENABLE_TEST=OFF -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF \
		-DENABLE_UNZIP=OFF -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
		-DENABLE_XML2=OFF -DENABLE_EXPAT=OFF -DENABLE_ZSTD=OFF -DENABLE_LZ4=OFF \
		-DENABLE_LZO=OFF -DENABLE_LIBB2=OFF -DENABLE_ICONV=OFF -DENABLE_ACL=OFF \
		-DENABLE_PCREPOSIX=OFF -DENABLE_PCRE2POSIX=OFF -DENABLE_CNG=ON \
		-DENABLE_ZLIB=ON -DENABLE_BZip2=ON -DENABLE_LZMA=ON \
		-DZLIB_LIBRARY="$PREFIX/lib/libz.a" -DZLIB_INCLUDE_DIR="$PREFIX/include" \
		-DBZIP2_LIBRARIES="$PREFIX/lib/libbz2.a" -DBZIP2_INCLUDE_DIR="$PREFIX/include" \
		-DLIBLZMA_LIBRARY="$PREFIX/lib/liblzma.a" -DLIBLZMA_INCLUDE_DIR="$PREFIX/include" \
		-DCMAKE_C_FLAGS="-DLZMA_API_STATIC" \
		-DZLIB_WINAPI_WITH_LIB:INTERNAL="$PREFIX/lib/libz.a" -DZLIB_WINAPI:INTERNAL=0
	# (ZLIB_WINAPI is a run test: a cross build cannot run it; our zlib is plain cdecl.)
	# Only the static library: the DLL would double the build time for nothing.
	quiet cmake --build "$dir/_build" -j"$JOBS" --target archive_static
	cp "$dir/_build/libarchive/libarchive_static.a" "$PREFIX/lib/libarchive.a"
	cp "$dir/libarchive/archive.h" "$dir/libarchive/archive_entry.h" "$PREFIX/include/"
	pc libarchive 3 "-L\${libdir} -larchive -lbcrypt" "zlib bzip2 liblzma"
	sed -i 's|^Cflags: .*|Cflags: -I${includedir} -DLIBARCHIVE_STATIC|' "$PREFIX/lib/pkgconfig/libarchive.pc"
	done_ libarchive
}

build_msgpack() {
	built msgpack && return 0
	fetch msgpack-c
	# The C library is five files; its CMake would also build a DLL, tests and
	# examples. The two generated headers only record the byte order (x86-64).
	for f in sysdep pack_template; do
		sed 's/@MSGPACK_ENDIAN_BIG_BYTE@/0/; s/@MSGPACK_ENDIAN_LITTLE_BYTE@/1/' \
			"$dir/cmake/$f.h.in" >"$dir/include/msgpack/$f.h"
	done
	objs=""
	for f in objectc unpack version vrefbuffer zone; do
		quiet $CC -O2 -I"$dir/include" -I"$dir/include/msgpack" -c "$dir/src/$f.c" -o "$dir/src/$f.o"
		objs="$objs $dir/src/$f.o"
	done
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	rm -f "$PREFIX/lib/libmsgpackc.a"
	# shellcheck disable=SC2086
	$AR rcs "$PREFIX/lib/libmsgpackc.a" $objs
	cp -r "$dir/include/." "$PREFIX/include/"
	pc msgpack 4 "-L\${libdir} -lmsgpackc"
	done_ msgpack
}

# cmocka, for the unit tests cross-built and run under wine (test-deploy.exe):
# its own CMake, the static library only. Added without bumping RECIPE: it is
# built once into the existing cache, beside the others.
build_cmocka() {
	built cmocka && return 0
	fetch cmocka
	cmake_configure "$dir" -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF
	quiet cmake --build "$dir/_build" -j"$JOBS" --target cmocka-static
	mkdir -p "$PREFIX/lib" "$PREFIX/include"
	cp "$dir/_build/src/libcmocka-static.a" "$PREFIX/lib/libcmocka.a"
	cp "$dir/include/cmocka.h" "$PREFIX/include/"
	pc cmocka 1.1 "-L\${libdir} -lcmocka"
	done_ cmocka
}

# libcurl for the feeds' downloads (docs/FEEDS.md): static, with Schannel,
# Windows' own TLS, so certificates are checked against the Windows store
# (or a configured CA bundle); HTTP and HTTPS only, with the zlib above and
# no other optional library. Only lib/ is built (not the curl tool).
build_curl() {
	built curl && return 0
	fetch curl
	rm -rf "$dir/_build" && mkdir -p "$dir/_build"
	(cd "$dir/_build" && PKG_CONFIG_LIBDIR="$PREFIX/lib/pkgconfig" ../configure -q --host=$HOST \
		CC="$CC" --prefix="$PREFIX" --disable-shared --enable-static --with-schannel --without-openssl \
		--with-zlib="$PREFIX" --without-brotli --without-zstd --without-libpsl \
		--without-libidn2 --without-winidn --without-nghttp2 --without-ngtcp2 \
		--without-nghttp3 --without-libssh2 --without-libssh --without-librtmp \
		--without-libgsasl --disable-ldap --disable-ldaps --disable-rtsp --disable-dict \
		--disable-telnet --disable-tftp --disable-pop3 --disable-imap --disable-smtp \
		--disable-smb --disable-gopher --disable-mqtt --disable-ftp --disable-file \
		--without-ca-bundle --without-ca-path --disable-manual --disable-ares --disable-docs &&
		make -j"$JOBS" -C lib && make -C lib install && make -C include install) \
		>>"$LOGFILE" 2>&1 || { echo "failed: libcurl (see $LOGFILE)" >&2; exit 1; }
	grep -q '^#define USE_SCHANNEL 1' "$dir/_build/lib/curl_config.h" ||
		{ echo "failed: libcurl was configured without Schannel (see $LOGFILE)" >&2; exit 1; }
	pc libcurl 7 "-L\${libdir} -lcurl -lbcrypt -ladvapi32 -lcrypt32 -lsecur32 -lws2_32" zlib
	sed -i 's|^Cflags: .*|Cflags: -I${includedir} -DCURL_STATICLIB|' "$PREFIX/lib/pkgconfig/libcurl.pc"
	done_ curl
}

# OpenSSL's libcrypto alone (static, the mingw64 target, no tests, no libssl,
# no apps): the feeds' Ed25519 signature check is the same file on both
# platforms (daemon/pkg/feed-sig-openssl.c). No configuration file is read
# (no-autoload-config) and nothing is loaded (no-dso, no-module, no-engine):
# the compiled-in OPENSSLDIR, /usr/local/ssl, is C:\usr\local\ssl on
# Windows, a folder any user may create. Its cold build (OpenSSL 3.0.20:
# Configure, the generated headers, libcrypto.a; the source already fetched)
# took 1.5 minutes here with JOBS=2 on two shared cores, libcurl's 1.3.
build_openssl() {
	built openssl && return 0
	fetch openssl
	rm -rf "$dir/_build" && mkdir -p "$dir/_build"
	(cd "$dir/_build" && CC="$CC" AR="$AR" RANLIB="$RANLIB" RC="$HOST-windres" \
		perl ../Configure mingw64 no-shared no-tests no-asm no-autoload-config no-module \
		no-legacy no-engine no-dso no-comp no-ui-console no-srp no-gost no-idea no-mdc2 \
		no-rc5 no-seed no-sm2 no-sm3 no-sm4 no-whirlpool no-aria no-camellia no-cmp &&
		make -j"$JOBS" build_generated && make -j"$JOBS" libcrypto.a) \
		>>"$LOGFILE" 2>&1 || { echo "failed: libcrypto (see $LOGFILE)" >&2; exit 1; }
	mkdir -p "$PREFIX/lib" "$PREFIX/include/openssl"
	cp "$dir/_build/libcrypto.a" "$PREFIX/lib/libcrypto.a"
	cp "$dir"/include/openssl/*.h "$dir"/_build/include/openssl/*.h "$PREFIX/include/openssl/"
	pc libcrypto 3 "-L\${libdir} -lcrypto -lws2_32 -lgdi32 -lcrypt32 -lbcrypt -luser32 -ladvapi32"
	done_ openssl
}

deps() {
	mkdir -p "$PREFIX" "$SRC"
	build_zlib
	build_bzip2
	build_xz
	build_libuv
	build_sqlite
	build_cjson
	build_libarchive
	build_msgpack
	build_cmocka
	build_curl
	build_openssl
	log "dependencies ready in $PREFIX"
}

build() {
	cmake -S "$ROOT" -B "$BUILD" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DROCMD_WIN_PREFIX="$PREFIX" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DROCMD_WERROR=ON -DROCMD_BUILD_TESTS=OFF \
		-DROCMD_BUILD_BENCH=OFF >/dev/null
	cmake --build "$BUILD" -j"$JOBS" --target rocmd rocmctl rocmd-hip-probe
	log "built $BUILD/daemon/rocmd.exe, rocmd-hip-probe.exe and $BUILD/client/rocmctl.exe"
}

host_packages
case $WHAT in
deps) deps ;;
build) build ;;
all) deps && build ;;
*) echo "usage: $0 [deps|build|all]" >&2 && exit 2 ;;
esac
