/*
 * The package feeds' readers (daemon/pkg/feed*.c): remote files parsed
 * strictly with the file and line named, URLs https only, the recorded
 * ROCmLibs release listing (tests/fixtures/feeds) read into packages with
 * their SDK versions and archs from the names, and signed catalogues used
 * only when one of the remote's keys made the signature (keys made here
 * with OpenSSL). Downloads are tested against a real server by
 * tests/integration/test-pkg-feed.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "common/error.h"
#include "common/fs.h"
#include "daemon/pkg/feed.h"

#define KEY_B64 "ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

static int
parse(const char *text, int allow_http, struct rocmd_feed_remote *r, char *why)
{
	return rocmd_feed_remote_parse("t", "/etc/rocmd/remotes.d/t.conf", text, strlen(text),
	                               allow_http, r, why, 512);
}

static void
test_remote_ok(void **state)
{
	struct rocmd_feed_remote r;
	char why[512] = "";

	(void)state;
	assert_int_equal(parse("# a catalogue\n kind = catalogue \r\nurl=https://example.org/c.json\n"
	                       "key = " KEY_B64 "\nkey = " KEY_B64 "\n\nenabled = false\n",
	                       0, &r, why),
	                 0);
	assert_int_equal(r.kind, ROCMD_FEED_CATALOGUE);
	assert_string_equal(r.url, "https://example.org/c.json");
	assert_string_equal(r.signature, "https://example.org/c.json.sig");
	assert_int_equal(r.nkeys, 2);
	assert_int_equal(r.enabled, 0);
	assert_int_equal(parse("kind = releases\nurl = https://api.github.com/repos/a/b/releases\n", 0,
	                       &r, why),
	                 0);
	assert_string_equal(r.platform, "windows");
	assert_int_equal(r.enabled, 1);
}

static void
test_remote_refused(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
	    {"kind = releases\nurl = https://a/b\ncolour = red\n", "t.conf:3: unknown key \"colour\""},
	    {"kind = releases\nurl = http://example.org/x\n", "t.conf:2: url: \"http://example.org/x\" "
	                                                      "is not an https:// URL"},
	    {"kind = releases\nurl = http://127.0.0.1:8000/x\n", "t.conf:2: url: plain http"},
	    {"kind = releases\nurl = ftp://a/b\n", "t.conf:2: url:"},
	    {"kind = releases\nurl = https://user@host/x\n", "t.conf:2: url:"},
	    {"kind = releases\nurl = https://a/b c\n", "t.conf:2: url:"},
	    {"kind = catalogue\nurl = https://a/b\nkey = ed25519:AAAA\n", "t.conf:3: key must be"},
	    {"kind = catalogue\nurl = https://a/b\nkey = rsa:" KEY_B64 "\n", "t.conf:3: key must be"},
	    {"kind = catalogue\nurl = https://a/b\n", "needs at least one key"},
	    {"kind = releases\nurl = https://a/b\nkey = " KEY_B64 "\n", "are for catalogues"},
	    {"kind = releases\nkind = releases\nurl = https://a/b\n", "t.conf:2: \"kind\" is given twice"},
	    {"kind = mirror\nurl = https://a/b\n", "t.conf:1: kind must be"},
	    {"kind = releases\nurl\n", "t.conf:2: expected key = value"},
	    {"kind = releases\nurl =\n", "t.conf:2: \"url\" has no value"},
	    {"kind = releases\n", "needs kind and url"},
	    {"kind = releases\nurl = https://a/b\nenabled = yes\n", "t.conf:3: enabled must be"},
	};
	struct rocmd_feed_remote r;
	char why[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(parse(bad[i].text, 0, &r, why), ROCMD_ECONFIG);
		if (strstr(why, bad[i].says) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, why, bad[i].says);
		assert_non_null(strstr(why, "/etc/rocmd/remotes.d/t.conf"));
	}
	/* The loopback exception exists only under the test setting. */
	assert_int_equal(parse("kind = releases\nurl = http://127.0.0.1:8000/x\n", 1, &r, why), 0);
	assert_int_equal(parse("kind = releases\nurl = http://127.0.0.2:8000/x\n", 1, &r, why),
	                 ROCMD_ECONFIG);
	assert_int_equal(parse("kind = releases\nurl = http://127.0.0.1.evil.org/x\n", 1, &r, why),
	                 ROCMD_ECONFIG);
}

static const struct rocmd_feed_pkg *
find(const struct rocmd_feed_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->p[i].name, name) == 0)
			return &l->p[i];
	return NULL;
}

static void
test_releases_fixture(void **state)
{
	struct rocmd_feed_remote r;
	struct rocmd_feed_list l = {0};
	const struct rocmd_feed_pkg *p;
	char why[512], *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(parse("kind = releases\nurl = https://api.github.com/repos/likelovewant/"
	                       "ROCmLibs-for-gfx1103-AMD780M-APU/releases?per_page=100\n",
	                       0, &r, why),
	                 0);
	assert_int_equal(rocmd_fs_read_file(ROCMD_SOURCE_DIR
	                                    "/tests/fixtures/feeds/rocmlibs-releases.json",
	                                    1 << 20, &text, &len),
	                 0);
	assert_int_equal(rocmd_feed_releases_parse(&r, text, len, 0, &l, why, sizeof(why)), 0);
	/* 7 archives; README.md and the draft's left out. */
	assert_int_equal(l.n, 7);
	assert_null(find(&l, "README.md"));
	assert_null(find(&l, "rocm.gfx1103.for.hip.7.0.7z"));
	p = find(&l, "rocm.gfx1103.for.hip.6.4.2.7z");
	assert_non_null(p);
	assert_string_equal(p->sdk, "6.4.2");
	assert_string_equal(p->archs, "gfx1103");
	assert_string_equal(p->platform, "windows");
	assert_string_equal(p->release, "v0.6.4.2");
	assert_int_equal(p->size, 44123456);
	assert_string_equal(p->sha256,
	                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_string_equal(p->url, "https://github.com/likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU"
	                            "/releases/download/v0.6.4.2/rocm.gfx1103.for.hip.6.4.2.7z");
	p = find(&l, "rocm.gfx1036.gfx1035.gfx1034.for.hip.6.4.2.7z");
	assert_string_equal(p->archs, "gfx1036,gfx1035,gfx1034");
	p = find(&l, "rocm.gfx1103.AMD.780M.phoenix.V5.0.for.hip.sdk.6.2.4.7z");
	assert_string_equal(p->sdk, "6.2.4");
	assert_string_equal(p->version, "V5.0");
	/* The SDK from the release's title when the asset's name has none. */
	p = find(&l, "gfx1103.7z");
	assert_string_equal(p->sdk, "6.2.4");
	assert_string_equal(p->archs, "gfx1103");
	/* The real-world "skd" typo; an asset published without a digest has none. */
	p = find(&l, "rocm.gfx1103.for.hip.skd.5.7.7z");
	assert_string_equal(p->sdk, "5.7");
	assert_string_equal(p->sha256, "");
	rocmd_feed_list_free(&l);
	/* Not a listing: refused, nothing added. */
	{
		const char *m = "{\"message\": \"API rate limit exceeded\"}";
		assert_int_equal(rocmd_feed_releases_parse(&r, m, strlen(m), 0, &l, why, sizeof(why)),
		                 ROCMD_ECORRUPT);
	}
	assert_int_equal(l.n, 0);
	{
		const char *m = "[{\"tag_name\":\"x\",\"assets\":[{\"name\":\"a.7z\",\"size\":5,"
		                "\"browser_download_url\":\"http://evil/a.7z\"}]}]";
		assert_int_equal(rocmd_feed_releases_parse(&r, m, strlen(m), 0, &l, why, sizeof(why)),
		                 ROCMD_ECORRUPT);
	}
	assert_int_equal(l.n, 0);
	free(text);
}

/* A fresh Ed25519 key: its remote-file line into LINE. */
static EVP_PKEY *
new_key(char *line, size_t len)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *k = NULL;
	uint8_t pub[32];
	size_t publen = sizeof(pub);
	char b64[64];

	assert_int_equal(EVP_PKEY_keygen_init(c), 1);
	assert_int_equal(EVP_PKEY_keygen(c, &k), 1);
	EVP_PKEY_CTX_free(c);
	assert_int_equal(EVP_PKEY_get_raw_public_key(k, pub, &publen), 1);
	EVP_EncodeBlock((unsigned char *)b64, pub, 32);
	snprintf(line, len, "key = ed25519:%s\n", b64);
	return k;
}

static void
sign(EVP_PKEY *k, const char *body, char *out)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t sig[64];
	size_t siglen = sizeof(sig);

	assert_int_equal(EVP_DigestSignInit(md, NULL, NULL, NULL, k), 1);
	assert_int_equal(EVP_DigestSign(md, sig, &siglen, (const uint8_t *)body, strlen(body)), 1);
	EVP_MD_CTX_free(md);
	EVP_EncodeBlock((unsigned char *)out, sig, 64);
}

static const char catalogue[] =
    "{\"format\": 1, \"packages\": [{\"name\": \"rocm.gfx1103.V5.0.7z\", \"version\": \"V5.0\","
    " \"sdk\": [\"6.2.4\", \"6.2\"], \"platforms\": [\"windows\"], \"archs\": [\"gfx1103\"],"
    " \"url\": \"https://example.org/a.7z\", \"size\": 123,"
    " \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
    " \"bad_drivers\": [{\"from\": \"24.1\", \"to\": \"24.3.1\", \"why\": \"crashes on load\"}]},"
    " {\"name\": \"old.zip\", \"sdk\": [\"5.7\"], \"platforms\": [\"linux\"], \"archs\":"
    " [\"gfx803\"], \"url\": \"https://example.org/o.zip\", \"size\": 9, \"sha256\":"
    " \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\", \"bad\": \"corrupt"
    " kernels\"}]}";

static void
test_catalogue_signed(void **state)
{
	struct rocmd_feed_remote r;
	struct rocmd_feed_list l = {0};
	char text[1024], line[128], other_line[128], sig[128], why[512];
	EVP_PKEY *k = new_key(line, sizeof(line)), *other = new_key(other_line, sizeof(other_line));

	(void)state;
	snprintf(text, sizeof(text), "kind = catalogue\nurl = https://example.org/c.json\n%s", line);
	assert_int_equal(parse(text, 0, &r, why), 0);
	sign(k, catalogue, sig);
	assert_int_equal(rocmd_feed_sig_check(&r, catalogue, strlen(catalogue), sig, strlen(sig), why,
	                                      sizeof(why)),
	                 0);
	assert_int_equal(rocmd_feed_catalogue_parse(&r, catalogue, strlen(catalogue), 0, &l, why,
	                                            sizeof(why)),
	                 0);
	/* One entry per SDK version and platform. */
	assert_int_equal(l.n, 3);
	assert_string_equal(l.p[0].sdk, "6.2.4");
	assert_string_equal(l.p[1].sdk, "6.2");
	assert_string_equal(l.p[0].version, "V5.0");
	assert_non_null(l.p[0].bad_drivers);
	assert_null(l.p[0].bad);
	assert_string_equal(l.p[2].bad, "corrupt kernels");
	rocmd_feed_list_free(&l);
	/* One byte changed: the signature no longer holds. */
	{
		char changed[sizeof(catalogue)];
		memcpy(changed, catalogue, sizeof(catalogue));
		changed[strlen(changed) - 5] = 'X';
		assert_int_equal(rocmd_feed_sig_check(&r, changed, strlen(changed), sig, strlen(sig),
		                                      why, sizeof(why)),
		                 ROCMD_ECORRUPT);
		assert_non_null(strstr(why, "not made by any of the 1 key(s)"));
	}
	/* Signed by a key the remote does not name. */
	sign(other, catalogue, sig);
	assert_int_equal(rocmd_feed_sig_check(&r, catalogue, strlen(catalogue), sig, strlen(sig), why,
	                                      sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_int_equal(rocmd_feed_sig_check(&r, catalogue, strlen(catalogue), "bm90IGEgc2ln", 12,
	                                      why, sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_non_null(strstr(why, "not the base64 of a 64-byte"));
	EVP_PKEY_free(k);
	EVP_PKEY_free(other);
}

static void
test_catalogue_refused(void **state)
{
	static const char *const bad[] = {
	    "[]",
	    "{\"format\": 2, \"packages\": []}",
	    "{\"format\": 1, \"packages\": [], \"extra\": 1}",
	    "{\"format\": 1, \"packages\": [{\"name\": \"a.7z\", \"sdk\": [\"6.2\"], \"platforms\":"
	    " [\"windows\"], \"archs\": [\"gfx1103\"], \"url\": \"https://e/a.7z\", \"size\": 1,"
	    " \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
	    " \"colour\": \"red\"}]}",
	    "{\"format\": 1, \"packages\": [{\"name\": \"../a.7z\", \"sdk\": [\"6.2\"], \"platforms\":"
	    " [\"windows\"], \"archs\": [\"gfx1103\"], \"url\": \"https://e/a.7z\", \"size\": 1,"
	    " \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}]}",
	    "{\"format\": 1, \"packages\": [{\"name\": \"a.7z\", \"sdk\": [\"6.2\"], \"platforms\":"
	    " [\"windows\"], \"archs\": [\"gfx1103\"], \"url\": \"http://e/a.7z\", \"size\": 1,"
	    " \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}]}",
	    "{\"format\": 1, \"packages\": [{\"name\": \"a.7z\", \"sdk\": [\"6.2\"], \"platforms\":"
	    " [\"windows\"], \"archs\": [\"gfx1103\"], \"url\": \"https://e/a.7z\", \"size\": 1,"
	    " \"sha256\": \"0123\"}]}",
	    "{\"format\": 1, \"packages\": [{\"name\": \"a.7z\", \"sdk\": [\"six\"], \"platforms\":"
	    " [\"windows\"], \"archs\": [\"gfx1103\"], \"url\": \"https://e/a.7z\", \"size\": 1,"
	    " \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}]}",
	    "{\"format\": 1, \"packages\": [{\"name\": \"a.7z\", \"sdk\": [\"6.2\"], \"platforms\":"
	    " [\"windows\"], \"archs\": [\"gfx1103\"], \"url\": \"https://e/a.7z\", \"size\": -1,"
	    " \"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}]}",
	};
	struct rocmd_feed_remote r;
	struct rocmd_feed_list l = {0};
	char why[512];

	(void)state;
	assert_int_equal(parse("kind = catalogue\nurl = https://e/c.json\nkey = " KEY_B64 "\n", 0, &r,
	                       why),
	                 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (rocmd_feed_catalogue_parse(&r, bad[i], strlen(bad[i]), 0, &l, why, sizeof(why)) !=
		    ROCMD_ECORRUPT)
			fail_msg("catalogue %zu was not refused", i);
		assert_int_equal(l.n, 0);
	}
}

static void
test_base64(void **state)
{
	uint8_t out[8];

	(void)state;
	assert_int_equal(rocmd_feed_base64(" aGk= \n", 7, out, sizeof(out)), 2);
	assert_memory_equal(out, "hi", 2);
	assert_int_equal(rocmd_feed_base64("aGk", 3, out, sizeof(out)), -1);
	assert_int_equal(rocmd_feed_base64("aG=k", 4, out, sizeof(out)), -1);
	assert_int_equal(rocmd_feed_base64("aGl0aGVyZQ==", 12, out, 2), -1);
}

static void
test_driver_ranges(void **state)
{
	cJSON *b = cJSON_Parse("[{\"from\": \"6.8\", \"to\": \"6.8.5\", \"why\": \"hangs\"},"
	                       " {\"from\": \"24.1\", \"why\": \"no lower end\"},"
	                       " {\"to\": \"5.1\", \"why\": \"old\"}]");
	cJSON *all = cJSON_Parse("[{\"why\": \"every driver\"}]");
	char why[512] = "";

	(void)state;
	assert_non_null(b);
	/* Both ends inclusive, on the parts both give. */
	assert_int_equal(rocmd_feed_driver_bad(b, "6.8", why, sizeof(why)), 1);
	assert_int_equal(rocmd_feed_driver_bad(b, "6.8.0", why, sizeof(why)), 1);
	assert_int_equal(rocmd_feed_driver_bad(b, "6.8.5", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "6.8.5 is in its bad range 6.8 to 6.8.5: hangs"));
	assert_int_equal(rocmd_feed_driver_bad(b, "6.8.5-2099283.24.04", why, sizeof(why)), 1);
	assert_int_equal(rocmd_feed_driver_bad(b, "6.8.6", why, sizeof(why)), 0);
	assert_int_equal(rocmd_feed_driver_bad(b, "6.7.9", why, sizeof(why)), 0);
	assert_int_equal(rocmd_feed_driver_bad(b, "6.10.5", why, sizeof(why)), 0);
	assert_int_equal(rocmd_feed_driver_bad(b, "24.3.1", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "24.1 to any: no lower end"));
	assert_int_equal(rocmd_feed_driver_bad(b, "5.1.3", why, sizeof(why)), 1);
	assert_int_equal(rocmd_feed_driver_bad(b, "5.2", why, sizeof(why)), 0);
	/* An unknown driver, or one that is not a version, is in no range. */
	assert_int_equal(rocmd_feed_driver_bad(all, "", why, sizeof(why)), 0);
	assert_int_equal(rocmd_feed_driver_bad(all, "unknown", why, sizeof(why)), 0);
	assert_int_equal(rocmd_feed_driver_bad(all, "1.2", why, sizeof(why)), 1);
	assert_int_equal(rocmd_feed_driver_bad(NULL, "1.2", why, sizeof(why)), 0);
	cJSON_Delete(b);
	cJSON_Delete(all);
}

static void
test_link_next(void **state)
{
	const char *base = "https://api.github.com/repos/a/b/releases?per_page=100";
	char out[2048], why[512];

	(void)state;
	assert_int_equal(
	    rocmd_feed_link_next("<https://api.github.com/repositories/1/releases?per_page=100&page=2>; "
	                         "rel=\"next\", <https://api.github.com/repositories/1/releases?"
	                         "per_page=100&page=5>; rel=\"last\"",
	                         base, 0, out, sizeof(out), why, sizeof(why)),
	    1);
	assert_string_equal(out, "https://api.github.com/repositories/1/releases?per_page=100&page=2");
	assert_int_equal(rocmd_feed_link_next("<https://api.github.com/x?page=1>; rel=\"prev\", "
	                                      "<https://api.github.com/x?page=3>; rel=\"next\"",
	                                      base, 0, out, sizeof(out), why, sizeof(why)),
	                 1);
	assert_string_equal(out, "https://api.github.com/x?page=3");
	/* The last page has no next; no header is no next. */
	assert_int_equal(rocmd_feed_link_next("<https://api.github.com/x?page=1>; rel=\"first\"", base,
	                                      0, out, sizeof(out), why, sizeof(why)),
	                 0);
	assert_int_equal(rocmd_feed_link_next("", base, 0, out, sizeof(out), why, sizeof(why)), 0);
	/* Another host, another port, plain http: refused. */
	assert_int_equal(rocmd_feed_link_next("<https://evil.example/x>; rel=\"next\"", base, 0, out,
	                                      sizeof(out), why, sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_non_null(strstr(why, "is not on https://api.github.com over https"));
	assert_int_equal(rocmd_feed_link_next("<https://api.github.com.evil.example/x>; rel=next", base,
	                                      0, out, sizeof(out), why, sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_int_equal(rocmd_feed_link_next("<https://api.github.com:8443/x>; rel=next", base, 0,
	                                      out, sizeof(out), why, sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_int_equal(rocmd_feed_link_next("<http://api.github.com/x>; rel=next", base, 0, out,
	                                      sizeof(out), why, sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_string_equal(out, "");
}

static void
test_releases_append(void **state)
{
	char *body = strdup("[{\"tag_name\": \"a\"}]"), why[512];
	size_t len = strlen(body);

	(void)state;
	assert_int_equal(rocmd_feed_releases_append(&body, &len, "[{\"tag_name\": \"b\"}, {}]", 23,
	                                            why, sizeof(why)),
	                 0);
	assert_string_equal(body, "[{\"tag_name\":\"a\"},{\"tag_name\":\"b\"},{}]");
	assert_int_equal(len, strlen(body));
	assert_int_equal(
	    rocmd_feed_releases_append(&body, &len, "{\"message\": \"x\"}", 16, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_string_equal(body, "[{\"tag_name\":\"a\"},{\"tag_name\":\"b\"},{}]");
	free(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_remote_ok),        cmocka_unit_test(test_remote_refused),
	    cmocka_unit_test(test_releases_fixture), cmocka_unit_test(test_catalogue_signed),
	    cmocka_unit_test(test_catalogue_refused), cmocka_unit_test(test_base64),
	    cmocka_unit_test(test_driver_ranges),    cmocka_unit_test(test_link_next),
	    cmocka_unit_test(test_releases_append),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
