/*
 * Package feeds (docs/FEEDS.md): remotes declared one file each in a
 * remotes.d folder, the metadata they serve (a release host's release
 * listing, or a signed catalogue) read into one list of packages that could
 * be fetched, and the download client that fetches one of them into the
 * store's partial/ folder with its size and SHA-256 checked.
 *
 * Nothing here touches libuv or the database: the daemon (feed-service.c)
 * runs refreshes and downloads as jobs of the package store, off the loop
 * thread, and matches what the feeds offer with pkg-match.c's rules.
 */
#ifndef ROCMD_FEED_H
#define ROCMD_FEED_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/hash.h"

#define ROCMD_FEED_MAX_KEYS 8
#define ROCMD_FEED_KEY_LEN 32 /* an Ed25519 public key */
#define ROCMD_FEED_SIG_LEN 64 /* an Ed25519 signature */
/* Metadata larger than this is refused (a release listing of 100 releases is
 * well under 2 MiB). */
#define ROCMD_FEED_MAX_METADATA (8u << 20)

enum rocmd_feed_kind { ROCMD_FEED_RELEASES = 1, ROCMD_FEED_CATALOGUE = 2 };

/* One remote, from its file in remotes.d (feed-remote.c). */
struct rocmd_feed_remote {
	char name[64];  /* the file's name without ".conf" */
	char file[4096]; /* the file it was read from */
	int kind;        /* enum rocmd_feed_kind */
	int enabled;
	char url[2048];       /* the listing or the catalogue */
	char signature[2048]; /* catalogue: its detached signature (default URL.sig) */
	char platform[16];    /* release feed: what its archives hold ("windows") */
	uint8_t keys[ROCMD_FEED_MAX_KEYS][ROCMD_FEED_KEY_LEN];
	size_t nkeys;
};

/* Reads remote file PATH (NAME: its name without ".conf") into *OUT. Every
 * line is `key = value`, `#` comments and blank lines; an unknown key, a
 * repeated one, a URL that is not https (http://127.0.0.1 only with
 * ALLOW_LOOPBACK_HTTP), a key that is not 32 bytes of base64, or a catalogue
 * without keys is refused with ROCMD_ECONFIG and a sentence naming PATH and
 * the line in WHY. */
int rocmd_feed_remote_parse(const char *name, const char *path, const char *text, size_t len,
                            int allow_loopback_http, struct rocmd_feed_remote *out, char *why,
                            size_t whylen);
/* Checks URL as a remote's or a package's address: 0, or ROCMD_EINVAL with WHY. */
int rocmd_feed_url_check(const char *url, int allow_loopback_http, char *why, size_t whylen);
/* Every *.conf of DIR, sorted by name, into *OUT (*N of them; free()).
 * A missing folder is no remotes. A file that does not parse fails the whole
 * load (ROCMD_ECONFIG with WHY): a remote is trusted only as written. */
int rocmd_feed_remotes_load(const char *dir, int allow_loopback_http,
                            struct rocmd_feed_remote **out, size_t *n, char *why, size_t whylen);

/* A package a feed offers. */
struct rocmd_feed_pkg {
	char *remote;   /* the remote's name */
	char *name;     /* the archive's name: the package's name in the store */
	char *version;  /* "V5.0", or NULL */
	char *sdk;      /* "6.2.4", or NULL when neither the name nor the notes say */
	char *platform; /* "windows", "linux" */
	char *archs;    /* "gfx1103,gfx1150", or "" */
	char *url;
	uint64_t size;
	char sha256[ROCMD_SHA256_HEX]; /* "" when the feed publishes none */
	char *bad;         /* why the feed marks it bad, or NULL */
	cJSON *bad_drivers; /* [{"from","to","why"}] driver versions it breaks on, or NULL */
	char *release;     /* release feed: the release's tag, or NULL */
};

struct rocmd_feed_list {
	struct rocmd_feed_pkg *p;
	size_t n, cap;
};
void rocmd_feed_list_free(struct rocmd_feed_list *l);
/* Frees L's packages from the N-th on. */
void rocmd_feed_list_truncate(struct rocmd_feed_list *l, size_t n);
/* Appends a copy of P's strings and fields to L (feed-catalogue.c); 0 or
 * ROCMD_ENOMEM. */
int rocmd_feed_list_add(struct rocmd_feed_list *l, const struct rocmd_feed_pkg *p);
/* Whether the amdgpu driver version DRIVER ("6.10.5"; what follows its
 * digits and dots is ignored) is in one of BAD_DRIVERS' ranges ({"from",
 * "to"}, both optional and inclusive, compared on the parts both versions
 * give: "to": "24.3" includes 24.3.1): 1 with a sentence in WHY, else 0 (also
 * when DRIVER is "" or not a version). */
int rocmd_feed_driver_bad(const cJSON *bad_drivers, const char *driver, char *why,
                          size_t whylen);
/* Checks NAME as a package's archive name: a plain file name the store
 * reads (rocmd_pkg_archive_ext). 0, or ROCMD_EINVAL with WHY. */
int rocmd_feed_name_check(const char *name, char *why, size_t whylen);

/*
 * Checks the detached Ed25519 signature SIG_TEXT (the base64 of 64 bytes)
 * over BODY against R's keys: 0 when one key made it, ROCMD_ECORRUPT with a
 * sentence in WHY otherwise (bad base64, no key made it). libcrypto on
 * both platforms (feed-sig-openssl.c).
 */
int rocmd_feed_sig_check(const struct rocmd_feed_remote *r, const void *body, size_t len,
                         const char *sig_text, size_t sig_len, char *why, size_t whylen);
/* Base64 (RFC 4648, padding required, whitespace around allowed) into OUT;
 * the decoded length, or -1 when TEXT is not base64 or over OUTLEN. */
long rocmd_feed_base64(const char *text, size_t len, uint8_t *out, size_t outlen);

/* Appends the packages of catalogue BODY of remote R to L (feed-catalogue.c).
 * Call only after rocmd_feed_sig_check. ROCMD_ECORRUPT with WHY for a
 * document out of format (nothing appended). */
int rocmd_feed_catalogue_parse(const struct rocmd_feed_remote *r, const char *body, size_t len,
                               int allow_loopback_http, struct rocmd_feed_list *l, char *why,
                               size_t whylen);
/* Appends the archives of release listing BODY (a release API's array of
 * releases) of remote R to L (feed-releases.c): the SDK version from the
 * asset's name, else the release's name, tag or notes; the archs from the
 * asset's name, else the release's name; the size and the "sha256:" digest
 * as published. ROCMD_ECORRUPT with WHY when BODY is not such a listing. */
int rocmd_feed_releases_parse(const struct rocmd_feed_remote *r, const char *body, size_t len,
                              int allow_loopback_http, struct rocmd_feed_list *l, char *why,
                              size_t whylen);

/* A release listing is read for at most this many pages (Link: rel="next"). */
#define ROCMD_FEED_MAX_PAGES 10
/* The next page's URL of a response's Link header LINK ('<URL>; rel="next"')
 * into OUT: 1, or 0 when there is none; ROCMD_ECORRUPT with WHY when it is
 * not https (rocmd_feed_url_check) or not on BASE's scheme, host and port. */
int rocmd_feed_link_next(const char *link, const char *base, int allow_loopback_http, char *out,
                         size_t outlen, char *why, size_t whylen);
/* Appends the releases of listing page PAGE to listing *BODY (malloc'd,
 * replaced): 0, or ROCMD_ECORRUPT with WHY when either is not an array or
 * both are over ROCMD_FEED_MAX_METADATA. */
int rocmd_feed_releases_append(char **body, size_t *len, const char *page, size_t plen,
                               char *why, size_t whylen);

/* ---- the download client (feed-fetch-curl.c) ---- */

struct rocmd_feed_http {
	const char *ca_bundle;  /* CA file, or NULL for the system's */
	long connect_timeout_s;
	long stall_timeout_s;   /* under 1 KiB/s this long aborts */
	int allow_loopback_http;
	const char *user_agent;
};

/* A metadata GET: the validators of the copy held go out, a 304 says it is
 * still good (*NOT_MODIFIED). */
struct rocmd_feed_get {
	const char *url;
	const char *etag, *last_modified; /* of the copy held, or NULL */
	char *body;                       /* malloc'd, NUL-ended */
	size_t len;
	int not_modified;
	char etag_out[256], last_modified_out[128];
	char link_out[4096]; /* its Link header: a listing's next page */
	int offline; /* the failure was the network's (no route, no DNS, refused) */
};
int rocmd_feed_http_get(const struct rocmd_feed_http *h, struct rocmd_feed_get *g, char *why,
                        size_t whylen);

struct rocmd_feed_progress {
	uint64_t done, total;
};

/*
 * Downloads URL into PARTIAL (resuming it with a Range request when it
 * exists and is shorter than SIZE), hashing as it goes; never more than
 * SIZE bytes are accepted, and the server's length must be SIZE. On success
 * PARTIAL holds SIZE bytes whose SHA-256 is SHA256 (hex). On a refusal
 * (wrong size or hash, over the cap, an HTTP error, too many redirects)
 * PARTIAL is removed; on a connection cut short or a stall it is kept for
 * the next try (*KEPT). PROGRESS (may be NULL) is called as bytes arrive;
 * non-zero cancels (ROCMD_ECANCELED, PARTIAL kept).
 */
int rocmd_feed_download(const struct rocmd_feed_http *h, const char *url, const char *partial,
                        uint64_t size, const char *sha256,
                        int (*progress)(const struct rocmd_feed_progress *p, void *ctx),
                        void *ctx, int *kept, char *why, size_t whylen);

#endif
