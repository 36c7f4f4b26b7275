# Sourced by the scripts that fetch Debian packages through a private apt
# configuration (tests/fixtures/fetch-debs.sh, scripts/build-windows.sh): which
# Debian archive to ask. No host name is written in the repository; the mirror
# is the one this machine's apt already uses, or the one the environment names.

# apt_mirror: prints the archive's URI: $ROCMD_TEST_MIRROR when set; else the
# first URI of a "deb" source, with the main component, for this machine's own
# release (VERSION_CODENAME in /etc/os-release, or stable, testing, unstable,
# sid), as apt reads its sources: /etc/apt/sources.list, then the files of
# /etc/apt/sources.list.d in order of name, one-line .list files and deb822
# .sources files (URIs:, Suites:, Components:, Enabled:). Status 1, and
# nothing printed, when there is none. $APT_MIRROR_ETC replaces /etc/apt, and
# $APT_MIRROR_RELEASE the codename (for trying it on other configurations).
apt_mirror() {
	if [ -n "${ROCMD_TEST_MIRROR:-}" ]; then
		printf '%s\n' "${ROCMD_TEST_MIRROR%/}"
		return 0
	fi
	_etc=${APT_MIRROR_ETC:-/etc/apt}
	_release=${APT_MIRROR_RELEASE-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}
	set --
	for _f in "$_etc/sources.list" "$_etc"/sources.list.d/*; do
		case $_f in
		*.list | *.sources) [ -f "$_f" ] && [ -r "$_f" ] && set -- "$@" "$_f" ;;
		esac
	done
	[ $# -gt 0 ] || return 1
	_uri=$(awk -v release="$_release" '
		function wanted(suites, comps,   n, s, i, main) {
			n = split(comps, s, " ")
			main = 0
			for (i = 1; i <= n; i++) if (s[i] == "main") main = 1
			if (!main) return 0
			n = split(suites, s, " ")
			for (i = 1; i <= n; i++) {
				if (release != "" && s[i] == release) return 1
				if (s[i] ~ /^(stable|testing|unstable|sid)$/) return 1
			}
			return 0
		}
		function found(uri) { sub(/\/+$/, "", uri); print uri; done = 1; exit }
		# The end of a deb822 stanza: is it a binary source we want?
		function stanza(   t, n, i, u) {
			if (tolower(f["enabled"]) != "no" && (" " f["types"] " ") ~ / deb / &&
			    wanted(f["suites"], f["components"]) && f["uris"] != "") {
				n = split(f["uris"], u, " ")
				for (i = 1; i <= n; i++) if (u[i] !~ /^cdrom:/) found(u[i])
			}
			delete f
			key = ""
		}
		FNR == 1 { if (deb822) stanza(); deb822 = FILENAME ~ /\.sources$/ }
		deb822 {
			if ($0 ~ /^[ \t]*$/) { stanza(); next }
			if ($0 ~ /^#/) next
			if ($0 ~ /^[ \t]/) {            # a continuation line
				if (key != "") f[key] = f[key] " " $0
				next
			}
			i = index($0, ":")
			if (i == 0) next
			key = tolower(substr($0, 1, i - 1))
			f[key] = substr($0, i + 1)
			gsub(/[ \t]+/, " ", f[key])
			sub(/^ /, "", f[key])
			sub(/ $/, "", f[key])
			next
		}
		{
			sub(/#.*/, "")
			if ($1 != "deb") next
			i = 2
			if ($2 ~ /^\[/) {                # [ options ]
				while (i <= NF && $i !~ /\]$/) i++
				i++
			}
			uri = $i
			suite = $(i + 1)
			comps = ""
			for (j = i + 2; j <= NF; j++) comps = comps " " $j
			if (uri != "" && uri !~ /^cdrom:/ && wanted(suite, comps)) found(uri)
		}
		END { if (deb822 && !done) stanza() }
	' "$@" 2>/dev/null)
	[ -n "$_uri" ] || return 1
	printf '%s\n' "$_uri"
}
