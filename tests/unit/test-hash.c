/* Unit tests for SHA-256: known vectors, streaming equals one-shot, files, hex. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "common/hash.h"

static void
digest_of(const void *data, size_t len, char hex[ROCMD_SHA256_HEX])
{
	struct rocmd_sha256 *h;
	uint8_t d[ROCMD_SHA256_LEN];

	assert_int_equal(rocmd_sha256_new(&h), 0);
	assert_int_equal(rocmd_sha256_update(h, data, len), 0);
	assert_int_equal(rocmd_sha256_final(h, d), 0);
	rocmd_sha256_hex(d, hex);
}

static void
test_vectors(void **state)
{
	char hex[ROCMD_SHA256_HEX];

	digest_of("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	digest_of("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void
test_file_matches_stream(void **state)
{
	char path[] = "/tmp/rocmd-test-hash-XXXXXX", a[ROCMD_SHA256_HEX], b[ROCMD_SHA256_HEX];
	size_t len = (3u << 20) + 12345; /* crosses the 1 MiB read size */
	unsigned char *data = malloc(len);
	uint8_t d[ROCMD_SHA256_LEN];
	uint64_t size = 0;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	for (size_t i = 0; i < len; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 9));
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	digest_of(data, len, a);
	assert_int_equal(rocmd_sha256_file(path, d, &size), 0);
	rocmd_sha256_hex(d, b);
	assert_string_equal(a, b);
	assert_int_equal(size, len);
	unlink(path);
	assert_int_equal(rocmd_sha256_file(path, d, NULL), rocmd_err_errno(2 /* ENOENT */));
	free(data);
}

static void
test_hex_roundtrip(void **state)
{
	uint8_t d[ROCMD_SHA256_LEN], e[ROCMD_SHA256_LEN];
	char hex[ROCMD_SHA256_HEX];

	for (int i = 0; i < ROCMD_SHA256_LEN; i++)
		d[i] = (uint8_t)(i * 37);
	rocmd_sha256_hex(d, hex);
	assert_int_equal(rocmd_sha256_parse(hex, e), 0);
	assert_memory_equal(d, e, sizeof(d));
	hex[5] = 'g';
	assert_int_equal(rocmd_sha256_parse(hex, e), ROCMD_EINVAL);
	assert_int_equal(rocmd_sha256_parse("abcd", e), ROCMD_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_file_matches_stream),
		cmocka_unit_test(test_hex_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
