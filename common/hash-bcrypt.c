/*
 * SHA-256 through Windows CNG (BCrypt): see hash.h. One algorithm provider
 * is opened per context (cheap with BCRYPT_HASH_REUSABLE_FLAG absent); files
 * are read 1 MiB at a time with FILE_FLAG_SEQUENTIAL_SCAN.
 */
#include "hash.h"

#include <stdlib.h>

#include <windows.h>
#include <bcrypt.h>

#include "error.h"
#include "win-util.h"

struct rocmd_sha256 {
	BCRYPT_ALG_HANDLE alg;
	BCRYPT_HASH_HANDLE hash;
};

int
rocmd_sha256_new(struct rocmd_sha256 **out)
{
	struct rocmd_sha256 *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return ROCMD_ENOMEM;
	if (!BCRYPT_SUCCESS(BCryptOpenAlgorithmProvider(&h->alg, BCRYPT_SHA256_ALGORITHM, NULL, 0)) ||
	    !BCRYPT_SUCCESS(BCryptCreateHash(h->alg, &h->hash, NULL, 0, NULL, 0, 0))) {
		rocmd_sha256_free(h);
		return ROCMD_EINTERNAL;
	}
	*out = h;
	return 0;
}

int
rocmd_sha256_update(struct rocmd_sha256 *h, const void *data, size_t len)
{
	const UCHAR *p = data;

	/* BCryptHashData takes a ULONG length. */
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!BCRYPT_SUCCESS(BCryptHashData(h->hash, (PUCHAR)p, n, 0)))
			return ROCMD_EINTERNAL;
		p += n;
		len -= n;
	}
	return 0;
}

int
rocmd_sha256_final(struct rocmd_sha256 *h, uint8_t digest[ROCMD_SHA256_LEN])
{
	int rc = BCRYPT_SUCCESS(BCryptFinishHash(h->hash, digest, ROCMD_SHA256_LEN, 0))
			 ? 0
			 : ROCMD_EINTERNAL;

	rocmd_sha256_free(h);
	return rc;
}

void
rocmd_sha256_free(struct rocmd_sha256 *h)
{
	if (h == NULL)
		return;
	if (h->hash != NULL)
		BCryptDestroyHash(h->hash);
	if (h->alg != NULL)
		BCryptCloseAlgorithmProvider(h->alg, 0);
	free(h);
}

int
rocmd_sha256_file(const char *path, uint8_t digest[ROCMD_SHA256_LEN], uint64_t *size_out)
{
	enum { CHUNK = 1 << 20 };
	struct rocmd_sha256 *h = NULL;
	wchar_t *wpath = rocmd_win_wide(path);
	uint64_t total = 0;
	HANDLE f;
	char *buf = NULL;
	int rc;

	if (wpath == NULL)
		return ROCMD_EINVAL;
	f = CreateFileW(wpath, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
			OPEN_EXISTING, FILE_FLAG_SEQUENTIAL_SCAN, NULL);
	free(wpath);
	if (f == INVALID_HANDLE_VALUE)
		return rocmd_win_error(GetLastError());
	buf = malloc(CHUNK);
	rc = buf == NULL ? ROCMD_ENOMEM : rocmd_sha256_new(&h);
	while (rc == 0) {
		DWORD n = 0;
		if (!ReadFile(f, buf, CHUNK, &n, NULL)) {
			rc = rocmd_win_error(GetLastError());
			break;
		}
		if (n == 0)
			break;
		total += n;
		rc = rocmd_sha256_update(h, buf, n);
	}
	if (rc == 0) {
		rc = rocmd_sha256_final(h, digest);
		h = NULL;
	}
	rocmd_sha256_free(h);
	free(buf);
	CloseHandle(f);
	if (rc == 0 && size_out != NULL)
		*size_out = total;
	return rc;
}
