/*
 * Remote files (docs/FEEDS.md, "Remote files"): one file per remote in the
 * remotes.d folder, `key = value` lines, read strictly: a remote is trusted
 * exactly as written, so anything unknown or malformed refuses the file with
 * a sentence naming it and the line. Also the URL rule every address a feed
 * gives must pass, and the base64 the keys and signatures are written in.
 */
#include "feed.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"

#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

#define REMOTE_MAX_FILE (64u << 10)

static int
b64_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
rocmd_feed_base64(const char *text, size_t len, uint8_t *out, size_t outlen)
{
	size_t i = 0, end = len, n = 0;
	uint32_t acc = 0;
	int bits = 0, pad = 0, chars = 0;

	while (i < end && isspace((unsigned char)text[i]))
		i++;
	while (end > i && isspace((unsigned char)text[end - 1]))
		end--;
	for (; i < end; i++) {
		int v;
		if (text[i] == '=') {
			pad++;
			chars++;
			continue;
		}
		if (pad > 0 || (v = b64_val((unsigned char)text[i])) < 0)
			return -1;
		chars++;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == outlen)
				return -1;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	if (chars == 0 || chars % 4 != 0 || pad > 2 || (acc & ((1u << bits) - 1)) != 0)
		return -1;
	return (long)n;
}

int
rocmd_feed_url_check(const char *url, int allow_loopback_http, char *why, size_t whylen)
{
	const char *host;

	if (strlen(url) >= 2048) {
		snprintf(why, whylen, "the URL is longer than 2047 bytes");
		return ROCMD_EINVAL;
	}
	for (const char *p = url; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '\\') {
			snprintf(why, whylen, "the URL holds a space, a control character or '\\'");
			return ROCMD_EINVAL;
		}
	}
	if (strncmp(url, "https://", 8) == 0) {
		host = url + 8;
	} else if (strncmp(url, "http://127.0.0.1:", 17) == 0 ||
	           strncmp(url, "http://127.0.0.1/", 17) == 0) {
		if (!allow_loopback_http) {
			snprintf(why, whylen,
			         "plain http is allowed only to 127.0.0.1 with "
			         "pkg.allow_loopback_http = 1 (a test setting)");
			return ROCMD_EINVAL;
		}
		host = url + 7;
	} else {
		snprintf(why, whylen, "\"%.80s\" is not an https:// URL", url);
		return ROCMD_EINVAL;
	}
	if (host[0] == '\0' || host[0] == '/' || host[0] == ':' || strchr(host, '@') != NULL) {
		snprintf(why, whylen, "\"%.80s\" has no host, or names a user", url);
		return ROCMD_EINVAL;
	}
	return 0;
}

/* One "key = value" line into R; 0, or ROCMD_ECONFIG with the problem in WHY. */
static int
remote_line(struct rocmd_feed_remote *r, const char *key, const char *val, unsigned *seen,
            int allow_loopback_http, char *why, size_t whylen)
{
	static const char *const keys[] = {"kind",     "url", "signature", "key",
	                                   "platform", "enabled", NULL};
	char sub[512];
	int k;

	for (k = 0; keys[k] != NULL && strcmp(keys[k], key) != 0; k++)
		;
	if (keys[k] == NULL) {
		snprintf(why, whylen,
		         "unknown key \"%.64s\" (known: kind, url, signature, key, platform, enabled)",
		         key);
		return ROCMD_ECONFIG;
	}
	if (strcmp(key, "key") != 0 && (*seen & (1u << k))) {
		snprintf(why, whylen, "\"%s\" is given twice", key);
		return ROCMD_ECONFIG;
	}
	*seen |= 1u << k;
	if (strcmp(key, "kind") == 0) {
		if (strcmp(val, "releases") == 0)
			r->kind = ROCMD_FEED_RELEASES;
		else if (strcmp(val, "catalogue") == 0)
			r->kind = ROCMD_FEED_CATALOGUE;
		else {
			snprintf(why, whylen, "kind must be releases or catalogue, not \"%.64s\"", val);
			return ROCMD_ECONFIG;
		}
	} else if (strcmp(key, "url") == 0 || strcmp(key, "signature") == 0) {
		if (rocmd_feed_url_check(val, allow_loopback_http, sub, sizeof(sub)) < 0) {
			rocmd_fs_fmt(why, whylen, "%s: %s", key, sub);
			return ROCMD_ECONFIG;
		}
		snprintf(strcmp(key, "url") == 0 ? r->url : r->signature, sizeof(r->url), "%s", val);
	} else if (strcmp(key, "key") == 0) {
		uint8_t buf[ROCMD_FEED_KEY_LEN + 4];
		const char *b64 = strncmp(val, "ed25519:", 8) == 0 ? val + 8 : NULL;
		if (b64 == NULL ||
		    rocmd_feed_base64(b64, strlen(b64), buf, sizeof(buf)) != ROCMD_FEED_KEY_LEN) {
			snprintf(why, whylen,
			         "key must be ed25519: followed by the base64 of a 32-byte public key");
			return ROCMD_ECONFIG;
		}
		if (r->nkeys == ROCMD_FEED_MAX_KEYS) {
			snprintf(why, whylen, "more than %d keys", ROCMD_FEED_MAX_KEYS);
			return ROCMD_ECONFIG;
		}
		memcpy(r->keys[r->nkeys++], buf, ROCMD_FEED_KEY_LEN);
	} else if (strcmp(key, "platform") == 0) {
		if (strcmp(val, "windows") != 0 && strcmp(val, "linux") != 0) {
			snprintf(why, whylen, "platform must be windows or linux, not \"%.64s\"", val);
			return ROCMD_ECONFIG;
		}
		snprintf(r->platform, sizeof(r->platform), "%s", val);
	} else {
		if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0) {
			snprintf(why, whylen, "enabled must be true or false, not \"%.64s\"", val);
			return ROCMD_ECONFIG;
		}
		r->enabled = strcmp(val, "true") == 0;
	}
	return 0;
}

int
rocmd_feed_remote_parse(const char *name, const char *path, const char *text, size_t len,
                        int allow_loopback_http, struct rocmd_feed_remote *out, char *why,
                        size_t whylen)
{
	char line[4096], sub[512];
	unsigned seen = 0, lineno = 0;
	size_t at = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->enabled = 1;
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->file, sizeof(out->file), "%s", path);
	for (const char *p = name; *p; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') {
			snprintf(why, whylen,
			         "%s: a remote's name (its file name) takes letters, digits, '-', "
			         "'_' and '.' only",
			         path);
			return ROCMD_ECONFIG;
		}
	}
	if (name[0] == '\0' || strlen(name) >= sizeof(out->name)) {
		snprintf(why, whylen, "%s: a remote's name must be 1 to 63 bytes", path);
		return ROCMD_ECONFIG;
	}
	while (at < len && rc == 0) {
		size_t n = 0;
		char *s, *eq, *key, *val, *e;
		lineno++;
		while (at < len && text[at] != '\n') {
			if (n + 1 >= sizeof(line) || text[at] == '\0') {
				snprintf(why, whylen, "%s:%u: the line is too long or holds a NUL byte",
				         path, lineno);
				return ROCMD_ECONFIG;
			}
			line[n++] = text[at++];
		}
		at++;
		line[n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		for (s = line; isspace((unsigned char)*s); s++)
			;
		if (*s == '\0' || *s == '#')
			continue;
		if ((eq = strchr(s, '=')) == NULL) {
			snprintf(why, whylen, "%s:%u: expected key = value", path, lineno);
			return ROCMD_ECONFIG;
		}
		key = s;
		for (e = eq; e > key && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		for (val = eq + 1; isspace((unsigned char)*val); val++)
			;
		for (e = val + strlen(val); e > val && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		if (*val == '\0') {
			snprintf(why, whylen, "%s:%u: \"%.64s\" has no value", path, lineno, key);
			return ROCMD_ECONFIG;
		}
		rc = remote_line(out, key, val, &seen, allow_loopback_http, sub, sizeof(sub));
		if (rc < 0)
			rocmd_fs_fmt(why, whylen, "%s:%u: %s", path, lineno, sub);
	}
	if (rc < 0)
		return rc;
	if (out->kind == 0 || out->url[0] == '\0') {
		snprintf(why, whylen, "%s: a remote needs kind and url", path);
		return ROCMD_ECONFIG;
	}
	if (out->kind == ROCMD_FEED_CATALOGUE) {
		if (out->nkeys == 0) {
			snprintf(why, whylen,
			         "%s: a catalogue remote needs at least one key to check its signature",
			         path);
			return ROCMD_ECONFIG;
		}
		if (out->platform[0] != '\0') {
			snprintf(why, whylen,
			         "%s: platform is for release feeds; a catalogue names each package's",
			         path);
			return ROCMD_ECONFIG;
		}
		if (out->signature[0] == '\0' &&
		    rocmd_fs_fmt(out->signature, sizeof(out->signature), "%s.sig", out->url) < 0) {
			snprintf(why, whylen, "%s: the URL is too long", path);
			return ROCMD_ECONFIG;
		}
	} else {
		if (out->nkeys > 0 || out->signature[0] != '\0') {
			snprintf(why, whylen,
			         "%s: key and signature are for catalogues; a release feed is trusted "
			         "through https and its published digests",
			         path);
			return ROCMD_ECONFIG;
		}
		if (out->platform[0] == '\0')
			snprintf(out->platform, sizeof(out->platform), "windows");
	}
	return 0;
}

/* A remote names what rocmd trusts: only its owner (root, or the user a
 * user's daemon runs as) may change it or its folder. Windows: the folder's
 * ACL decides (%ProgramData%\rocmd is admin-writable). */
static int
remote_owned(const char *path, char *why, size_t whylen)
{
#ifndef _WIN32
	struct stat st;

	if (lstat(path, &st) != 0) {
		snprintf(why, whylen, "%.300s: %s", path, strerror(errno));
		return ROCMD_ECONFIG;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, whylen,
		         "%.300s: a remote's file and folder must be owned by root (or rocmd's user) "
		         "and writable by nobody else; it is not used",
		         path);
		return ROCMD_ECONFIG;
	}
#else
	(void)path;
	(void)why;
	(void)whylen;
#endif
	return 0;
}

static int
cmp_remote(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_feed_remote *)a)->name,
	              ((const struct rocmd_feed_remote *)b)->name);
}

int
rocmd_feed_remotes_load(const char *dir, int allow_loopback_http, struct rocmd_feed_remote **out,
                        size_t *n, char *why, size_t whylen)
{
	struct rocmd_feed_remote *v = NULL;
	struct rocmd_dir *d;
	struct rocmd_dirent *e;
	size_t cnt = 0, cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if ((d = rocmd_dir_open(dir)) == NULL) {
		if (errno == ENOENT)
			return 0; /* no folder: no remotes */
		snprintf(why, whylen, "cannot list the remotes folder %s: %s", dir, strerror(errno));
		return ROCMD_ECONFIG;
	}
	if ((rc = remote_owned(dir, why, whylen)) < 0) {
		rocmd_dir_close(d);
		return rc;
	}
	while (rc == 0 && (e = rocmd_dir_read(d)) != NULL) {
		size_t len = strlen(e->d_name), tlen = 0;
		char path[4096], name[128], *text = NULL;
		if (len <= 5 || strcmp(e->d_name + len - 5, ".conf") != 0 || e->d_name[0] == '.')
			continue;
		if (rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, e->d_name) < 0 ||
		    len - 5 >= sizeof(name)) {
			snprintf(why, whylen, "%s/%s: the name is too long", dir, e->d_name);
			rc = ROCMD_ECONFIG;
			break;
		}
		memcpy(name, e->d_name, len - 5);
		name[len - 5] = '\0';
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			void *nv = realloc(v, ncap * sizeof(*v));
			if (nv == NULL) {
				rc = ROCMD_ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		if ((rc = remote_owned(path, why, whylen)) < 0)
			break;
		rc = rocmd_fs_read_file(path, REMOTE_MAX_FILE, &text, &tlen);
		if (rc < 0) {
			snprintf(why, whylen, "%s: cannot read it: %s", path,
			         rc == ROCMD_ECORRUPT ? "not a regular file of at most 64 KiB"
			                              : rocmd_strerror(rc));
			rc = ROCMD_ECONFIG;
			break;
		}
		rc = rocmd_feed_remote_parse(name, path, text, tlen, allow_loopback_http, &v[cnt],
		                             why, whylen);
		free(text);
		if (rc == 0)
			cnt++;
	}
	rocmd_dir_close(d);
	if (rc < 0) {
		free(v);
		return rc;
	}
	if (cnt > 1)
		qsort(v, cnt, sizeof(*v), cmp_remote);
	*out = v;
	*n = cnt;
	return 0;
}
