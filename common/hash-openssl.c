/*
 * SHA-256 through OpenSSL's EVP interface (libcrypto): see hash.h. File
 * hashing reads 1 MiB at a time and tells the kernel the access is
 * sequential, which is what keeps it on par with sha256sum.
 */
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "error.h"

struct rocmd_sha256 {
	EVP_MD_CTX *ctx;
};

int
rocmd_sha256_new(struct rocmd_sha256 **out)
{
	struct rocmd_sha256 *h = malloc(sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return ROCMD_ENOMEM;
	h->ctx = EVP_MD_CTX_new();
	if (h->ctx == NULL || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		rocmd_sha256_free(h);
		return ROCMD_ENOMEM;
	}
	*out = h;
	return 0;
}

int
rocmd_sha256_update(struct rocmd_sha256 *h, const void *data, size_t len)
{
	return EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : ROCMD_EINTERNAL;
}

int
rocmd_sha256_final(struct rocmd_sha256 *h, uint8_t digest[ROCMD_SHA256_LEN])
{
	unsigned int len = 0;
	int rc = EVP_DigestFinal_ex(h->ctx, digest, &len) == 1 && len == ROCMD_SHA256_LEN
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
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int
rocmd_sha256_file(const char *path, uint8_t digest[ROCMD_SHA256_LEN], uint64_t *size_out)
{
	enum { CHUNK = 1 << 20 };
	struct rocmd_sha256 *h = NULL;
	uint64_t total = 0;
	char *buf = NULL;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rocmd_err_errno(errno);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	buf = malloc(CHUNK);
	rc = buf == NULL ? ROCMD_ENOMEM : rocmd_sha256_new(&h);
	while (rc == 0) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = rocmd_err_errno(errno);
			break;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		rc = rocmd_sha256_update(h, buf, (size_t)n);
	}
	if (rc == 0) {
		rc = rocmd_sha256_final(h, digest);
		h = NULL;
	}
	rocmd_sha256_free(h);
	free(buf);
	close(fd);
	if (rc == 0 && size_out != NULL)
		*size_out = total;
	return rc;
}
