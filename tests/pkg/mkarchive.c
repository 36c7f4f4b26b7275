/*
 * Test archive builder (see mkarchive.h), and with MKARCHIVE_MAIN a command
 * for shell tests:
 *   pkg-mkarchive FORMAT OUT SPEC...
 * where SPEC is f:NAME=SRCFILE, z:NAME=BYTES (zeros), d:NAME, l:NAME=TARGET
 * (symlink), h:NAME=TARGET (hardlink), p:NAME (FIFO) or c:NAME (char device).
 */
#include "mkarchive.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

static int
set_format(struct archive *a, const char *format)
{
	int rc;

	if (strcmp(format, "7z") == 0 || strcmp(format, "7z-fast") == 0) {
		rc = archive_write_set_format_7zip(a);
		if (rc == ARCHIVE_OK)
			rc = archive_write_set_format_option(a, "7zip", "compression", "lzma2");
		if (rc == ARCHIVE_OK && strcmp(format, "7z-fast") == 0)
			rc = archive_write_set_format_option(a, "7zip", "compression-level", "1");
		return rc;
	}
	if (strcmp(format, "zip") == 0 || strcmp(format, "zip-store") == 0) {
		rc = archive_write_set_format_zip(a);
		if (rc == ARCHIVE_OK && strcmp(format, "zip-store") == 0)
			rc = archive_write_set_format_option(a, "zip", "compression", "store");
		return rc;
	}
	if (strncmp(format, "tar", 3) == 0) {
		rc = archive_write_set_format_pax_restricted(a);
		if (rc == ARCHIVE_OK && strcmp(format, "tar.gz") == 0)
			rc = archive_write_add_filter_gzip(a);
		else if (rc == ARCHIVE_OK && strcmp(format, "tar.xz") == 0)
			rc = archive_write_add_filter_xz(a);
		return rc;
	}
	return ARCHIVE_FATAL;
}

int
mkarchive(const char *out, const char *format, const struct mk_entry *entries, int n)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	static char buf[1 << 16];
	int rc = -1;

	if (set_format(a, format) != ARCHIVE_OK ||
	    archive_write_open_filename(a, out) != ARCHIVE_OK) {
		fprintf(stderr, "mkarchive %s: %s\n", out, archive_error_string(a));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const struct mk_entry *m = &entries[i];
		struct stat st;
		uint64_t size = 0;
		int fd = -1;

		archive_entry_clear(e);
		archive_entry_set_pathname(e, m->name);
		archive_entry_set_mtime(e, 1700000000, 0);
		archive_entry_set_perm(e, 0644);
		switch (m->kind) {
		case MK_FILE:
			fd = open(m->src, O_RDONLY);
			if (fd < 0 || fstat(fd, &st) < 0) {
				perror(m->src);
				goto out;
			}
			size = (uint64_t)st.st_size;
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_size(e, (la_int64_t)size);
			break;
		case MK_DATA:
			size = m->size;
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_size(e, (la_int64_t)size);
			break;
		case MK_DIR:
			archive_entry_set_filetype(e, AE_IFDIR);
			archive_entry_set_perm(e, 0755);
			break;
		case MK_SYMLINK:
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_symlink(e, m->src);
			break;
		case MK_HARDLINK:
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_hardlink(e, m->src);
			archive_entry_set_size(e, 0);
			break;
		case MK_FIFO:
			archive_entry_set_filetype(e, AE_IFIFO);
			break;
		case MK_CHARDEV:
			archive_entry_set_filetype(e, AE_IFCHR);
			archive_entry_set_rdevmajor(e, 1);
			archive_entry_set_rdevminor(e, 3);
			break;
		}
		if (archive_write_header(a, e) < ARCHIVE_WARN) {
			fprintf(stderr, "mkarchive %s: %s: %s\n", out, m->name,
			        archive_error_string(a));
			if (fd >= 0)
				close(fd);
			goto out;
		}
		if (m->kind == MK_DATA)
			memset(buf, m->data != NULL ? m->data[0] : 0, sizeof(buf));
		while (size > 0) {
			size_t chunk = size < sizeof(buf) ? (size_t)size : sizeof(buf);
			if (fd >= 0 && read(fd, buf, chunk) != (ssize_t)chunk) {
				perror(m->src);
				close(fd);
				goto out;
			}
			if (archive_write_data(a, buf, chunk) < 0) {
				fprintf(stderr, "mkarchive %s: %s\n", out, archive_error_string(a));
				if (fd >= 0)
					close(fd);
				goto out;
			}
			size -= chunk;
		}
		if (fd >= 0)
			close(fd);
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		fprintf(stderr, "mkarchive %s: %s\n", out, archive_error_string(a));
		goto out;
	}
	rc = 0;
out:
	archive_entry_free(e);
	archive_write_free(a);
	return rc;
}

#ifdef MKARCHIVE_MAIN
int
main(int argc, char **argv)
{
	struct mk_entry *es;
	int n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pkg-mkarchive FORMAT OUT SPEC...\n");
		return 2;
	}
	es = calloc((size_t)argc, sizeof(*es));
	for (int i = 3; i < argc; i++) {
		char *spec = argv[i], *eq;
		struct mk_entry *m = &es[n++];
		if (strlen(spec) < 3 || spec[1] != ':') {
			fprintf(stderr, "bad spec %s\n", spec);
			return 2;
		}
		m->name = spec + 2;
		eq = strchr(spec + 2, '=');
		if (eq != NULL) {
			*eq = '\0';
			m->src = eq + 1;
		}
		switch (spec[0]) {
		case 'f':
			m->kind = MK_FILE;
			break;
		case 'z':
			m->kind = MK_DATA;
			m->size = strtoull(m->src, NULL, 10);
			break;
		case 'd':
			m->kind = MK_DIR;
			break;
		case 'l':
			m->kind = MK_SYMLINK;
			break;
		case 'h':
			m->kind = MK_HARDLINK;
			break;
		case 'p':
			m->kind = MK_FIFO;
			break;
		case 'c':
			m->kind = MK_CHARDEV;
			break;
		default:
			fprintf(stderr, "bad spec %s\n", spec);
			return 2;
		}
	}
	return mkarchive(argv[2], argv[1], es, n) == 0 ? 0 : 1;
}
#endif
