/*
 * Builds test archives with libarchive's writers: the package store tests
 * make every archive they import — good ones from real rocBLAS files, and
 * hostile ones (zip-slip, absolute paths, link escapes, device files, bombs)
 * that no well-behaved archiver would write.
 */
#ifndef ROCMD_TEST_MKARCHIVE_H
#define ROCMD_TEST_MKARCHIVE_H

#include <stdint.h>

enum mk_kind {
	MK_FILE, /* content from SRC (a file on disk) */
	MK_DATA, /* content: SIZE bytes of DATA's first byte (zeros when DATA is NULL) */
	MK_DIR,
	MK_SYMLINK,  /* target SRC */
	MK_HARDLINK, /* to the archive entry SRC */
	MK_FIFO,
	MK_CHARDEV,
};

struct mk_entry {
	enum mk_kind kind;
	const char *name;
	const char *src;
	uint64_t size;
	const char *data;
};

/*
 * Writes ENTRIES to OUT as FORMAT: "7z" (LZMA2, solid), "7z-fast" (LZMA2
 * level 1), "zip", "zip-store", "tar", "tar.gz", "tar.xz". Returns 0, or -1
 * with a message on stderr.
 */
int mkarchive(const char *out, const char *format, const struct mk_entry *entries, int n);

#endif
