/*
 * libarchive, loaded on first use. Only package imports (and reading a
 * gzip'd Debian changelog during SDK discovery) need it, and with it come
 * libxml2, ICU and libstdc++: megabytes of resident pages an idle daemon
 * should not carry. Callers use the sym_archive_* pointers declared here
 * (the same pattern systemd uses for its optional libraries), after a
 * successful rocmd_archive_dl_load(); archive.h still provides the types.
 */
#ifndef ROCMD_ARCHIVE_DL_H
#define ROCMD_ARCHIVE_DL_H

#include <stddef.h>

#include <archive.h>
#include <archive_entry.h>

#define ROCMD_ARCHIVE_SYMBOLS(X)                                                                   \
	X(archive_entry_filetype)                                                                  \
	X(archive_entry_hardlink)                                                                  \
	X(archive_entry_hardlink_utf8)                                                             \
	X(archive_entry_is_encrypted)                                                              \
	X(archive_entry_pathname)                                                                  \
	X(archive_entry_pathname_utf8)                                                             \
	X(archive_entry_perm)                                                                      \
	X(archive_entry_size)                                                                      \
	X(archive_entry_size_is_set)                                                               \
	X(archive_entry_sparse_count)                                                              \
	X(archive_entry_symlink)                                                                   \
	X(archive_entry_symlink_utf8)                                                              \
	X(archive_error_string)                                                                    \
	X(archive_filter_bytes)                                                                    \
	X(archive_filter_code)                                                                     \
	X(archive_format)                                                                          \
	X(archive_format_name)                                                                     \
	X(archive_read_data)                                                                       \
	X(archive_read_data_block)                                                                 \
	X(archive_read_free)                                                                       \
	X(archive_read_has_encrypted_entries)                                                      \
	X(archive_read_new)                                                                        \
	X(archive_read_next_header)                                                                \
	X(archive_read_open_fd)                                                                    \
	X(archive_read_open_filename)                                                              \
	X(archive_read_open_memory)                                                                \
	X(archive_read_support_filter_bzip2)                                                       \
	X(archive_read_support_filter_gzip)                                                        \
	X(archive_read_support_filter_lzma)                                                        \
	X(archive_read_support_filter_xz)                                                          \
	X(archive_read_support_filter_zstd)                                                        \
	X(archive_read_support_format_7zip)                                                        \
	X(archive_read_support_format_gnutar)                                                      \
	X(archive_read_support_format_rar)                                                         \
	X(archive_read_support_format_rar5)                                                        \
	X(archive_read_support_format_raw)                                                         \
	X(archive_read_support_format_tar)                                                         \
	X(archive_read_support_format_zip)

#define ROCMD_ARCHIVE_DECLARE(name) extern __typeof__(name) *sym_##name;
ROCMD_ARCHIVE_SYMBOLS(ROCMD_ARCHIVE_DECLARE)
#undef ROCMD_ARCHIVE_DECLARE

/*
 * Loads libarchive and resolves every symbol above, once; thread-safe (imports
 * run on worker threads). Returns 0, or ROCMD_EUNSUPPORTED with the loader's
 * reason in WHY.
 */
int rocmd_archive_dl_load(char *why, size_t whylen);
/* Opens the archive at PATH, which the caller opened as FD, for reading. On
 * Linux libarchive reads FD itself (archive_read_open_fd), the file the
 * caller opened with the importer's rights: one open, nothing to swap in
 * between. On Windows it opens PATH again by name, converted to UTF-16 for
 * archive_read_open_filename_w (the narrow call would read the name in the
 * ANSI code page), since a positioned read there (rocmd_fs_pread, on the
 * caller's FD) moves the handle's file pointer under libarchive. */
int rocmd_archive_open_file(struct archive *a, const char *path, int fd, size_t block);

#endif
