/*
 * What an archive's own bytes say and libarchive does not (pkg-raw.c), for
 * the reader (pkg-read.c): whether a zip has its end record and an
 * uncompressed tar its end blocks (a download cut at an entry boundary reads
 * as a shorter, valid package otherwise), and the Unix file type of each zip
 * entry (libarchive reads a zip's FIFO as a regular file).
 */
#ifndef ROCMD_PKG_RAW_H
#define ROCMD_PKG_RAW_H

#include <stddef.h>
#include <stdint.h>

/* The archive: an open file or bytes in memory, and its last bytes. */
struct rocmd_pkg_raw {
	int fd;             /* the file (not owned), or -1 */
	const uint8_t *mem; /* else the archive in memory */
	uint64_t size;
	uint8_t *tail; /* the last bytes (a zip's end record is in the last 64 KiB + 22) */
	size_t tail_len;
	int tail_owned;
};

/* Over open file FD (its size and tail read now) / over LEN bytes at DATA.
 * 0 or a negative error. */
int rocmd_pkg_raw_fd(struct rocmd_pkg_raw *raw, int fd);
void rocmd_pkg_raw_memory(struct rocmd_pkg_raw *raw, const void *data, size_t len);
void rocmd_pkg_raw_free(struct rocmd_pkg_raw *raw);

/* After every entry was read: ROCMD_ECORRUPT with WHY when a zip (FORMAT, as
 * archive_format gives it) lacks its end-of-central-directory record or an
 * uncompressed tar (FILTER: archive_filter_code 0) its two end blocks. */
int rocmd_pkg_raw_check_end(const struct rocmd_pkg_raw *raw, int format, int filter, char *why,
                            size_t whylen);

/* Before any entry of a zip is read: walks its central directory and refuses
 * (ROCMD_EUNSAFE, the entry named in WHY) an entry whose Unix mode is a FIFO,
 * a device or a socket; ROCMD_ECORRUPT when the directory cannot be walked. */
int rocmd_pkg_raw_zip_types(const struct rocmd_pkg_raw *raw, char *why, size_t whylen);

#endif
