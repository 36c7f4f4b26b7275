/*
 * What an archive's own bytes say and libarchive does not: see pkg-raw.h.
 * The zip structures are read as PKWARE's APPNOTE lays them out; every
 * offset and length is checked against the archive's size, since the bytes
 * are untrusted.
 */
#include "pkg-raw.h"
#include "pkg-bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>

#include "common/error.h"
#include "common/fs.h"

#define TAIL_MAX (65536 + 22)

/* Exactly N bytes at OFF, or ROCMD_ECORRUPT (past the end, a short read). */
static int
raw_read(const struct rocmd_pkg_raw *raw, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;

	if (off > raw->size || n > raw->size - off)
		return ROCMD_ECORRUPT;
	if (raw->mem != NULL) {
		memcpy(buf, raw->mem + off, n);
		return 0;
	}
	while (done < n) {
		size_t got = 0;
		if (rocmd_fs_pread(raw->fd, (char *)buf + done, n - done, off + done, &got) < 0 ||
		    got == 0)
			return ROCMD_ECORRUPT;
		done += got;
	}
	return 0;
}

int
rocmd_pkg_raw_fd(struct rocmd_pkg_raw *raw, int fd)
{
	int regular = 0, rc;

	memset(raw, 0, sizeof(*raw));
	raw->fd = fd;
	if ((rc = rocmd_fs_os_fstat(fd, &raw->size, &regular)) < 0)
		return rc;
	raw->tail_len = raw->size > TAIL_MAX ? TAIL_MAX : (size_t)raw->size;
	raw->tail = malloc(raw->tail_len > 0 ? raw->tail_len : 1);
	if (raw->tail == NULL)
		return ROCMD_ENOMEM;
	raw->tail_owned = 1;
	return raw_read(raw, raw->size - raw->tail_len, raw->tail, raw->tail_len) < 0 ? -EIO : 0;
}

void
rocmd_pkg_raw_memory(struct rocmd_pkg_raw *raw, const void *data, size_t len)
{
	memset(raw, 0, sizeof(*raw));
	raw->fd = -1;
	raw->mem = data;
	raw->size = len;
	raw->tail_len = len > TAIL_MAX ? TAIL_MAX : len;
	raw->tail = (uint8_t *)raw->mem + (len - raw->tail_len);
}

void
rocmd_pkg_raw_free(struct rocmd_pkg_raw *raw)
{
	if (raw->tail_owned)
		free(raw->tail);
	memset(raw, 0, sizeof(*raw));
	raw->fd = -1;
}

/* The offset in the tail of the end-of-central-directory record: the last
 * signature (nearest the end, as libarchive looks for it) whose fields fit,
 * or -1. */
static long
zip_end_record(const struct rocmd_pkg_raw *raw)
{
	const uint8_t *t = raw->tail;
	size_t n = raw->tail_len;

	for (size_t i = n >= 22 ? n - 22 + 1 : 0; i-- > 0;) {
		if (le32(t + i) != 0x06054b50)
			continue;
		/* One disk, its entries all on it, the comment inside the file. */
		if (le16(t + i + 4) == le16(t + i + 6) && le16(t + i + 8) == le16(t + i + 10) &&
		    i + 22 + le16(t + i + 20) <= n)
			return (long)i;
	}
	return -1;
}

int
rocmd_pkg_raw_check_end(const struct rocmd_pkg_raw *raw, int format, int filter, char *why,
                        size_t whylen)
{
	const uint8_t *t = raw->tail;
	size_t n = raw->tail_len;

	/* Without its end record libarchive falls back to reading local headers,
	 * which cannot tell a download cut at an entry boundary from a whole zip. */
	if ((format & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP) {
		for (size_t i = n >= 22 ? n - 22 + 1 : 0; i-- > 0;)
			if (le32(t + i) == 0x06054b50)
				return 0;
		snprintf(why, whylen,
		         "truncated or corrupt zip: it has no end-of-central-directory record");
		return ROCMD_ECORRUPT;
	}
	if ((format & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_TAR ||
	    filter != ARCHIVE_FILTER_NONE)
		return 0;
	for (size_t i = n >= 1024 ? n - 1024 : 0; n >= 1024 && i < n; i++)
		if (t[i] != 0)
			goto cut;
	if (n >= 1024)
		return 0;
cut:
	snprintf(why, whylen, "truncated tar: it does not end with the end-of-archive blocks");
	return ROCMD_ECORRUPT;
}

/* Where the central directory ends (the zip64 end record, else the end
 * record) and how many entries and bytes it has. */
static int
zip_directory(const struct rocmd_pkg_raw *raw, uint64_t *end, uint64_t *entries, uint64_t *size)
{
	long i = zip_end_record(raw);
	const uint8_t *e;
	uint8_t loc[20], z64[56];
	uint64_t at;

	if (i < 0)
		return ROCMD_ECORRUPT;
	e = raw->tail + i;
	at = raw->size - raw->tail_len + (uint64_t)i;
	*end = at;
	*entries = le16(e + 10);
	*size = le32(e + 12);
	if (*entries != 0xffff && *size != 0xffffffffu && le32(e + 16) != 0xffffffffu)
		return 0;
	/* Zip64: the locator just before the end record names the zip64 record. */
	if (at < sizeof(loc) || raw_read(raw, at - sizeof(loc), loc, sizeof(loc)) < 0 ||
	    le32(loc) != 0x07064b50 || raw_read(raw, le64(loc + 8), z64, sizeof(z64)) < 0 ||
	    le32(z64) != 0x06064b50)
		return ROCMD_ECORRUPT;
	*end = le64(loc + 8);
	*entries = le64(z64 + 32);
	*size = le64(z64 + 40);
	return 0;
}

static const char *
unix_type(unsigned mode)
{
	switch (mode & 0170000) {
	case 0:       /* no type given: libarchive takes it for a file or folder */
	case 0100000: /* file */
	case 0040000: /* folder */
	case 0120000: /* symlink */
		return NULL;
	case 0010000:
		return "FIFO";
	case 0020000:
	case 0060000:
		return "device file";
	case 0140000:
		return "socket";
	default:
		return "special file";
	}
}

int
rocmd_pkg_raw_zip_types(const struct rocmd_pkg_raw *raw, char *why, size_t whylen)
{
	uint64_t end, entries, size, at;

	if (zip_directory(raw, &end, &entries, &size) < 0 || size > end)
		goto corrupt;
	/* The directory lies right before its end record (data may precede the
	 * zip, as in a self-extracting one: its stated offset is not used). */
	at = end - size;
	for (uint64_t k = 0; k < entries; k++) {
		uint8_t h[46];
		const char *type;
		unsigned host;
		if (at > end || end - at < sizeof(h) || raw_read(raw, at, h, sizeof(h)) < 0 ||
		    le32(h) != 0x02014b50)
			goto corrupt;
		host = h[5];
		/* Only Unix (3) and OS X (19) keep a Unix mode in the high half. */
		if ((host == 3 || host == 19) && (type = unix_type(le32(h + 38) >> 16)) != NULL) {
			char name[161];
			size_t n =
			    le16(h + 28) < sizeof(name) - 1 ? le16(h + 28) : sizeof(name) - 1;
			if (raw_read(raw, at + sizeof(h), name, n) < 0)
				goto corrupt;
			name[n] = '\0';
			for (size_t j = 0; j < n; j++)
				if ((unsigned char)name[j] < 0x20 || name[j] == 0x7f)
					name[j] = '?';
			snprintf(why, whylen, "entry \"%s\": a %s, not a file, folder or symlink",
			         name, type);
			return ROCMD_EUNSAFE;
		}
		at += sizeof(h) + (uint64_t)le16(h + 28) + le16(h + 30) + le16(h + 32);
	}
	return 0;
corrupt:
	snprintf(why, whylen, "truncated or corrupt zip: its central directory cannot be read");
	return ROCMD_ECORRUPT;
}
