/*
 * Reading a package: an archive through libarchive, or an unpacked folder,
 * streamed into a staging folder while every file is hashed. Nothing an
 * entry says is trusted: names go through rocmd_pkg_path_clean, links
 * through rocmd_pkg_link_resolve, sizes are counted as bytes are written
 * (a zip bomb stops at the limit, whatever its headers claim), and staged
 * files are named by their index, never by the entry's name, so no entry can
 * write anywhere but the staging folder. Any refusal empties and removes the
 * staging folder before returning.
 *
 * Only the formats a package plausibly comes in are enabled (7z, zip, tar,
 * cpio-free, rar); in particular mtree is not, since it names local files.
 *
 * Files are opened through the shared file layer (fs.h), which never
 * follows a symlink as the last component of a name (on Windows, no reparse
 * point) and takes UTF-8 names on both systems; only the source path itself
 * is resolved once, since the user named it. A folder is walked without
 * following links (rocmd_fs_os_walk), and each file found is then opened by
 * its path beneath the folder with no link followed in any component
 * (rocmd_fs_open_beneath), so a subfolder swapped for a link between the
 * walk and the open makes the import fail, never read outside the folder.
 */
#include "pkg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <pthread.h>
#ifndef _WIN32
#include <locale.h>
#endif

#include "archive-dl.h"
#include "pkg-raw.h"
#include "common/error.h"
#include "common/fs.h"
#include "daemon/sdk/rocblas-library.h"

#define COPY_BUF (1 << 20)
#define COPY_BUF_DRY (64 << 10) /* dry runs (fuzzing) read small inputs */
#define REPORT_EVERY (4u << 20)
#define PATH_BYTES 4096

struct reader {
	const struct rocmd_pkg_read_opts *opts;
	struct rocmd_pkg_progress pr;
	struct rocmd_pkg_contents *out;
	size_t cap;
	char *buf;
	size_t buflen;
	char *why;
	size_t whylen;
	uint64_t last_report;
	/* Entries by path while reading (indexes + 1, open addressing), so that
	 * a hardlink finds its target in O(1): NSLOTS a power of two. */
	size_t *slots, nslots;
	const struct rocmd_pkg_raw *raw; /* the archive's own bytes, or NULL */
	int as_peer;                     /* this thread reads with opts->cred's rights */
	pthread_t dat_thread;            /* parsing TensileLibrary.dat meanwhile */
	int dat_started;
	char *dat_path;
};

/* ---- entry names as UTF-8 ----
 *
 * libarchive converts entry names to the charset of the current locale (7z
 * keeps UTF-16, a zip flagged UTF-8 and pax keep UTF-8), and the daemon
 * never sets one: it is multi-threaded, and setlocale is process-wide and
 * not thread-safe. In the "C" locale every name outside ASCII failed to
 * convert. The thread that reads an archive takes a UTF-8 character type of
 * its own for the read instead (newlocale, uselocale: this thread only), so
 * names come out as UTF-8 whatever the process's locale. Windows' libarchive
 * keeps names in UTF-16 and gives UTF-8 without a locale: nothing to do. */
#ifndef _WIN32
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static locale_t utf8_locale;

static void
utf8_init(void)
{
	static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8", NULL};

	for (int i = 0; names[i] != NULL && utf8_locale == (locale_t)0; i++)
		utf8_locale = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
}

typedef locale_t utf8_before;

/* The calling thread's locale before, for utf8_leave; 0 when no UTF-8
 * locale exists here (names outside ASCII are then refused, as they were). */
static utf8_before
utf8_enter(void)
{
	pthread_once(&utf8_once, utf8_init);
	return utf8_locale != (locale_t)0 ? uselocale(utf8_locale) : (locale_t)0;
}

static void
utf8_leave(utf8_before before)
{
	if (before != (locale_t)0)
		uselocale(before);
}
#else
typedef int utf8_before;

static utf8_before
utf8_enter(void)
{
	return 0;
}

static void
utf8_leave(utf8_before before)
{
	(void)before;
}
#endif

static void __attribute__((format(printf, 2, 3))) say(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->why == NULL || r->whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(r->why, r->whylen, fmt, ap);
	va_end(ap);
}

/* The source is opened, listed and looked up with the importer's rights
 * (opts->cred); the staging folder is written with the daemon's. */
static int
peer_on(struct reader *r)
{
	int rc;

	if (r->opts->cred == NULL || r->as_peer)
		return 0;
	if ((rc = rocmd_pkg_cred_enter(r->opts->cred)) < 0) {
		say(r, "rocmd cannot read files with your rights (%s): it must run as root",
		    rocmd_strerror(rc));
		return rc;
	}
	r->as_peer = 1;
	return 0;
}

static void
peer_off(struct reader *r)
{
	if (!r->as_peer)
		return;
	rocmd_pkg_cred_leave(r->opts->cred);
	r->as_peer = 0;
}

static const char *
printable(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; s[i] != '\0' && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static int
report(struct reader *r, int force)
{
	if (r->opts->progress == NULL)
		return 0;
	if (!force && r->pr.bytes_out - r->last_report < REPORT_EVERY)
		return 0;
	r->last_report = r->pr.bytes_out;
	if (r->opts->progress(&r->pr, r->opts->ctx) != 0) {
		say(r, "import canceled");
		return ROCMD_ECANCELED;
	}
	return 0;
}

static void
entry_free(struct rocmd_pkg_entry *e)
{
	free(e->path);
	free(e->link);
	free(e->staged);
}

void
rocmd_pkg_contents_free(struct rocmd_pkg_contents *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->count; i++) {
		if (c->entries[i].staged != NULL)
			rocmd_fs_unlink(c->entries[i].staged);
		entry_free(&c->entries[i]);
	}
	free(c->entries);
	/* Whatever else is there (a file cut short by the failure). */
	if (c->staging != NULL)
		rocmd_fs_remove_tree(c->staging);
	for (size_t i = 0; i < c->dat_narchs; i++)
		free(c->dat_archs[i]);
	free(c->dat_archs);
	free(c->dat_path);
	free(c->staging);
	free(c->strip);
	free(c->format);
	memset(c, 0, sizeof(*c));
}

static uint64_t
path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static void
slot_put(size_t *slots, size_t nslots, const char *path, size_t index)
{
	size_t i = (size_t)path_hash(path) & (nslots - 1);

	while (slots[i] != 0)
		i = (i + 1) & (nslots - 1);
	slots[i] = index + 1;
}

/* Indexes entry INDEX by its path, growing the table to stay half empty. */
static int
index_entry(struct reader *r, size_t index)
{
	struct rocmd_pkg_contents *c = r->out;

	if (2 * (index + 1) > r->nslots) {
		size_t n = r->nslots ? r->nslots * 2 : 1024, *slots = calloc(n, sizeof(*slots));
		if (slots == NULL)
			return ROCMD_ENOMEM;
		for (size_t i = 0; i < index; i++)
			slot_put(slots, n, c->entries[i].path, i);
		free(r->slots);
		r->slots = slots;
		r->nslots = n;
	}
	slot_put(r->slots, r->nslots, c->entries[index].path, index);
	return 0;
}

static struct rocmd_pkg_entry *
entry_add(struct reader *r, const char *path)
{
	struct rocmd_pkg_contents *c = r->out;
	struct rocmd_pkg_entry *e;

	if (c->count == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 256;
		void *n = realloc(c->entries, ncap * sizeof(*c->entries));
		if (n == NULL)
			return NULL;
		c->entries = n;
		r->cap = ncap;
	}
	e = &c->entries[c->count];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	if (e->path == NULL)
		return NULL;
	c->count++;
	if (index_entry(r, c->count - 1) < 0)
		return NULL;
	return e;
}

static int
check_count(struct reader *r, const char *name)
{
	char q[160];

	if (++r->pr.files > r->opts->limits.max_files) {
		say(r,
		    "entry \"%s\": more than %llu entries, the configured limit "
		    "(store.max_files)",
		    printable(name, q, sizeof(q)), (unsigned long long)r->opts->limits.max_files);
		return ROCMD_EUNSAFE;
	}
	return 0;
}

/*
 * Streams one file's bytes from READ_FN into a new staged file, hashing
 * them and counting against the limits. READ_FN returns bytes read, 0 at the
 * end, or a negative rocmd code.
 */
static int
copy_file(struct reader *r, struct rocmd_pkg_entry *e,
          ssize_t (*read_fn)(void *src, char *buf, size_t len, char *why, size_t whylen), void *src)
{
	struct rocmd_sha256 *h = NULL;
	char q[160];
	int fd = -1, rc;

	rc = rocmd_sha256_new(&h);
	if (rc < 0)
		return rc;
	if (r->out->staging != NULL) {
		if (asprintf(&e->staged, "%s/%06zu", r->out->staging, r->out->count - 1) < 0) {
			e->staged = NULL;
			rc = ROCMD_ENOMEM;
			goto out;
		}
		fd = rocmd_fs_open(e->staged, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			rc = fd;
			free(e->staged);
			e->staged = NULL;
			say(r, "cannot create a staging file: %s", rocmd_strerror(rc));
			goto out;
		}
	}
	snprintf(r->pr.current, sizeof(r->pr.current), "%s", e->path);
	for (;;) {
		ssize_t n = read_fn(src, r->buf, r->buflen, r->why, r->whylen);
		if (n < 0) {
			rc = (int)n;
			goto out;
		}
		if (n == 0)
			break;
		e->size += (uint64_t)n;
		r->pr.bytes_out += (uint64_t)n;
		if (e->size > r->opts->limits.max_file) {
			say(r,
			    "entry \"%s\": larger than %llu bytes uncompressed, the configured "
			    "limit (store.max_file_size)",
			    printable(e->path, q, sizeof(q)),
			    (unsigned long long)r->opts->limits.max_file);
			rc = ROCMD_EUNSAFE;
			goto out;
		}
		if (r->pr.bytes_out > r->opts->limits.max_total) {
			say(r,
			    "entry \"%s\": the package passes %llu bytes uncompressed, the "
			    "configured limit (store.max_total_size)",
			    printable(e->path, q, sizeof(q)),
			    (unsigned long long)r->opts->limits.max_total);
			rc = ROCMD_EUNSAFE;
			goto out;
		}
		rocmd_sha256_update(h, r->buf, (size_t)n);
		if (fd >= 0 && (rc = rocmd_fs_write_all(fd, r->buf, (size_t)n)) < 0) {
			say(r, "cannot write to the staging folder: %s", rocmd_strerror(rc));
			goto out;
		}
		if ((rc = report(r, 0)) < 0)
			goto out;
	}
	rc = rocmd_sha256_final(h, e->sha256);
	h = NULL;
	r->out->total_size += e->size;
out:
	rocmd_sha256_free(h);
	if (fd >= 0) {
		int crc = rocmd_fs_close(fd);
		if (crc < 0 && rc == 0) {
			rc = crc;
			say(r, "cannot write to the staging folder: %s", rocmd_strerror(rc));
		}
	}
	return rc;
}

/* ---- the Tensile index, parsed while reading goes on ---- */

static void *
dat_main(void *arg)
{
	struct reader *r = arg;
	struct rocmd_pkg_contents *c = r->out;

	c->dat_rc = rocmd_rocblas_dat_archs(r->dat_path, &c->dat_archs, &c->dat_narchs, c->dat_why,
	                                    sizeof(c->dat_why));
	return NULL;
}

/* Starts parsing E when it is the package's single TensileLibrary.dat. */
static void
dat_start(struct reader *r, const struct rocmd_pkg_entry *e)
{
	const char *b = strrchr(e->path, '/');

	b = b != NULL ? b + 1 : e->path;
	if (r->dat_started || e->staged == NULL || strcmp(b, "TensileLibrary.dat") != 0)
		return;
	r->dat_path = strdup(e->staged);
	if (r->dat_path == NULL)
		return;
	if (pthread_create(&r->dat_thread, NULL, dat_main, r) != 0) {
		free(r->dat_path);
		r->dat_path = NULL;
		return;
	}
	r->dat_started = 1;
}

static void
dat_join(struct reader *r)
{
	if (!r->dat_started)
		return;
	pthread_join(r->dat_thread, NULL);
	r->dat_started = 0;
	r->out->dat_done = 1;
	r->out->dat_path = r->dat_path;
	r->dat_path = NULL;
}

/* ---- archives ---- */

/* True when S holds WORD (lower case), in any case (strcasestr is a GNU
 * extension Windows' C library lacks). */
static int
mentions(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s != '\0'; s++) {
		size_t i = 0;
		while (i < n && s[i] != '\0' && tolower((unsigned char)s[i]) == word[i])
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

static int
is_encryption_error(struct archive *a)
{
	const char *s = sym_archive_error_string(a);

	return s != NULL &&
	       (mentions(s, "encrypt") || mentions(s, "passphrase") || mentions(s, "password"));
}

/* One entry's data as libarchive's blocks give it, holes included: a GNU
 * sparse tar member's blocks come with their offsets in the file, and the
 * holes between them (and after the last, up to the size the member
 * declares: a member that is all hole has no block at all) read as zeros, as
 * reading the file would give them. */
struct entry_src {
	struct archive *a;
	const char *block; /* the rest of the current block */
	size_t left;
	uint64_t pos;     /* bytes given so far */
	uint64_t zero_to; /* zeros owed up to here (a hole) */
	uint64_t end;     /* a sparse member's size, else 0 */
	int eof;
};

/* A sparse member's declared size, else 0: its holes have no bytes to count
 * (the limits still apply to the zeros that stand for them). */
static uint64_t
sparse_size(struct archive_entry *ae)
{
	if (sym_archive_entry_sparse_count(ae) == 0 || !sym_archive_entry_size_is_set(ae) ||
	    sym_archive_entry_size(ae) <= 0)
		return 0;
	return (uint64_t)sym_archive_entry_size(ae);
}

static ssize_t
entry_src_read(void *src, char *buf, size_t len, char *why, size_t whylen)
{
	struct entry_src *s = src;

	for (;;) {
		const void *b;
		size_t size;
		la_int64_t off;
		int rc;

		if (s->pos < s->zero_to) {
			size_t n = s->zero_to - s->pos < len ? (size_t)(s->zero_to - s->pos) : len;
			memset(buf, 0, n);
			s->pos += n;
			return (ssize_t)n;
		}
		if (s->left > 0) {
			size_t n = s->left < len ? s->left : len;
			memcpy(buf, s->block, n);
			s->block += n;
			s->left -= n;
			s->pos += n;
			return (ssize_t)n;
		}
		if (s->eof)
			return 0;
		rc = sym_archive_read_data_block(s->a, &b, &size, &off);
		if (rc == ARCHIVE_RETRY)
			continue;
		if (rc == ARCHIVE_EOF) {
			s->eof = 1;
			if (s->end > s->zero_to)
				s->zero_to = s->end;
			continue;
		}
		if (rc < ARCHIVE_WARN) {
			if (is_encryption_error(s->a)) {
				snprintf(why, whylen, "encrypted data: %s",
				         sym_archive_error_string(s->a));
				return ROCMD_EUNSAFE;
			}
			snprintf(why, whylen, "truncated or corrupt archive: %s",
			         sym_archive_error_string(s->a) != NULL
			             ? sym_archive_error_string(s->a)
			             : "read error");
			return ROCMD_ECORRUPT;
		}
		if (off < 0 || (uint64_t)off < s->pos) {
			snprintf(why, whylen, "corrupt archive: the data's blocks overlap");
			return ROCMD_ECORRUPT;
		}
		s->zero_to = (uint64_t)off;
		s->block = b;
		s->left = size;
	}
}

/* The first entry read with PATH, or NULL. */
static struct rocmd_pkg_entry *
find_entry(struct reader *r, const char *path)
{
	if (r->nslots == 0)
		return NULL;
	for (size_t i = (size_t)path_hash(path) & (r->nslots - 1); r->slots[i] != 0;
	     i = (i + 1) & (r->nslots - 1))
		if (strcmp(r->out->entries[r->slots[i] - 1].path, path) == 0)
			return &r->out->entries[r->slots[i] - 1];
	return NULL;
}

/* A hardlink entry at PATH: a file with the content of the file earlier in
 * the package it names, counted against the size limit again. */
static int
add_hardlink(struct reader *r, struct archive_entry *ae, const char *path)
{
	const char *hl = sym_archive_entry_hardlink_utf8(ae);
	char target[PATH_BYTES], why2[512], q[160];
	struct rocmd_pkg_entry *t, *e;
	uint8_t sha[ROCMD_SHA256_LEN];
	uint64_t size;
	int ex;

	if (hl == NULL)
		hl = sym_archive_entry_hardlink(ae);
	if (rocmd_pkg_path_clean(hl, target, sizeof(target), why2, sizeof(why2)) < 0 ||
	    (t = find_entry(r, target)) == NULL || t->kind != ROCMD_PKG_FILE) {
		say(r,
		    "entry \"%s\": hardlink to \"%s\", which is not a file earlier in the package",
		    printable(path, q, sizeof(q)), printable(hl, why2, 160));
		return ROCMD_EUNSAFE;
	}
	/* t may move when the array grows: copy what is needed first. */
	size = t->size;
	ex = t->exec;
	memcpy(sha, t->sha256, sizeof(sha));
	if ((e = entry_add(r, path)) == NULL)
		return ROCMD_ENOMEM;
	e->kind = ROCMD_PKG_FILE;
	e->size = size;
	e->exec = ex;
	memcpy(e->sha256, sha, sizeof(sha));
	r->pr.bytes_out += e->size;
	r->out->total_size += e->size;
	if (r->pr.bytes_out > r->opts->limits.max_total) {
		say(r,
		    "entry \"%s\": the package passes %llu bytes uncompressed, the configured "
		    "limit (store.max_total_size)",
		    printable(path, q, sizeof(q)), (unsigned long long)r->opts->limits.max_total);
		return ROCMD_EUNSAFE;
	}
	return 0;
}

static int
read_archive_entries(struct reader *r, struct archive *a, uint64_t total)
{
	struct archive_entry *ae;
	char path[PATH_BYTES], why2[512], q[160];
	int rc;

	r->pr.bytes_total = total;
	for (;;) {
		const char *raw;
		mode_t type;
		struct rocmd_pkg_entry *e;

		rc = sym_archive_read_next_header(a, &ae);
		if (rc == ARCHIVE_EOF)
			break;
		if (rc == ARCHIVE_RETRY)
			continue;
		if (rc < ARCHIVE_WARN) {
			if (is_encryption_error(a)) {
				say(r, "encrypted archive: %s", sym_archive_error_string(a));
				return ROCMD_EUNSAFE;
			}
			if (r->pr.files == 0 && sym_archive_format(a) == 0) {
				say(r, "not an archive rocmd reads (7z, zip, tar, rar): %s",
				    sym_archive_error_string(a) ? sym_archive_error_string(a)
				                                : "unknown");
				return ROCMD_EUNSUPPORTED;
			}
			say(r, "truncated or corrupt archive after %llu entries: %s",
			    (unsigned long long)r->pr.files,
			    sym_archive_error_string(a) ? sym_archive_error_string(a)
			                                : "read error");
			return ROCMD_ECORRUPT;
		}
		if (r->pr.files == 0 && r->raw != NULL &&
		    (sym_archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP &&
		    (rc = rocmd_pkg_raw_zip_types(r->raw, r->why, r->whylen)) < 0)
			return rc;
		if (r->out->format == NULL && sym_archive_format_name(a) != NULL)
			r->out->format = strdup(sym_archive_format_name(a));
		raw = sym_archive_entry_pathname_utf8(ae);
		if (raw == NULL)
			raw = sym_archive_entry_pathname(ae);
		if (raw == NULL) {
			say(r, "entry %llu: its name cannot be decoded as UTF-8 (%s)",
			    (unsigned long long)r->pr.files + 1,
			    sym_archive_error_string(a) != NULL ? sym_archive_error_string(a)
			                                        : "no name");
			return ROCMD_EUNSAFE;
		}
		if ((rc = check_count(r, raw)) < 0)
			return rc;
		if ((rc = rocmd_pkg_path_clean(raw, path, sizeof(path), r->why, r->whylen)) < 0)
			return rc;
		if (sym_archive_entry_is_encrypted(ae) ||
		    sym_archive_read_has_encrypted_entries(a) > 0) {
			say(r, "entry \"%s\": encrypted; rocmd does not import encrypted archives",
			    printable(path, q, sizeof(q)));
			return ROCMD_EUNSAFE;
		}
		r->pr.bytes_in = (uint64_t)sym_archive_filter_bytes(a, -1);
		type = sym_archive_entry_filetype(ae);
		if (sym_archive_entry_hardlink(ae) != NULL) {
			if ((rc = add_hardlink(r, ae, path)) < 0)
				return rc;
			continue;
		}
		switch (type) {
		case AE_IFDIR:
			continue;
		case AE_IFREG:
			if ((e = entry_add(r, path)) == NULL)
				return ROCMD_ENOMEM;
			e->kind = ROCMD_PKG_FILE;
			e->exec = (sym_archive_entry_perm(ae) & 0111) != 0;
			{
				struct entry_src src = {.a = a, .end = sparse_size(ae)};
				rc = copy_file(r, e, entry_src_read, &src);
			}
			if (rc == 0)
				dat_start(r, e);
			if (rc < 0) {
				/* Name the entry when the cause is the archive itself. */
				if (rc == ROCMD_ECORRUPT ||
				    (rc == ROCMD_EUNSAFE && strncmp(r->why, "encrypted", 9) == 0)) {
					snprintf(why2, sizeof(why2), "%s", r->why);
					say(r, "entry \"%s\": %s", printable(path, q, sizeof(q)),
					    why2);
				}
				return rc;
			}
			break;
		case AE_IFLNK: {
			const char *target = sym_archive_entry_symlink_utf8(ae);
			char resolved[PATH_BYTES];
			if (target == NULL)
				target = sym_archive_entry_symlink(ae);
			rc = rocmd_pkg_link_resolve(path, target, resolved, sizeof(resolved),
			                            r->why, r->whylen);
			if (rc < 0)
				return rc;
			if ((e = entry_add(r, path)) == NULL)
				return ROCMD_ENOMEM;
			e->kind = ROCMD_PKG_SYMLINK;
			e->link = strdup(target);
			if (e->link == NULL)
				return ROCMD_ENOMEM;
			break;
		}
		default:
			say(r, "entry \"%s\": a %s, not a file, folder or symlink",
			    printable(path, q, sizeof(q)),
			    type == AE_IFIFO                       ? "FIFO"
			    : type == AE_IFCHR || type == AE_IFBLK ? "device file"
			    : type == AE_IFSOCK                    ? "socket"
			                                           : "special file");
			return ROCMD_EUNSAFE;
		}
		if ((rc = report(r, 0)) < 0)
			return rc;
	}
	return 0;
}

static struct archive *
archive_new_reader(void)
{
	struct archive *a = sym_archive_read_new();

	if (a == NULL)
		return NULL;
	sym_archive_read_support_format_7zip(a);
	sym_archive_read_support_format_zip(a);
	sym_archive_read_support_format_tar(a);
	sym_archive_read_support_format_gnutar(a);
	sym_archive_read_support_format_rar(a);
	sym_archive_read_support_format_rar5(a);
	sym_archive_read_support_filter_gzip(a);
	sym_archive_read_support_filter_bzip2(a);
	sym_archive_read_support_filter_xz(a);
	sym_archive_read_support_filter_lzma(a);
	sym_archive_read_support_filter_zstd(a);
	return a;
}

/* ---- folders ---- */

struct fd_src {
	int fd;
	const char *path;
	struct reader *r;
};

static ssize_t
fd_src_read(void *src, char *buf, size_t len, char *why, size_t whylen)
{
	struct fd_src *s = src;
	size_t got = 0;
	int rc = rocmd_fs_read(s->fd, buf, len, &got);

	if (rc < 0) {
		snprintf(why, whylen, "cannot read \"%s\": %s", s->path, rocmd_strerror(rc));
		return rc;
	}
	s->r->pr.bytes_in += got;
	return (ssize_t)got;
}

/* Adds up a folder's file bytes (progress only: refusals are the read's to report). */
static uint64_t
folder_bytes(const char *dir)
{
	struct rocmd_fs_entry *e = NULL;
	uint64_t total = 0;
	size_t n = 0;
	char why[256];

	if (rocmd_fs_walk(dir, 0, &e, &n, why, sizeof(why)) == 0)
		for (size_t i = 0; i < n; i++)
			total += e[i].kind == 'f' ? e[i].size : 0;
	rocmd_fs_entries_free(e, n);
	return total;
}

/* A folder being read: the walk calls folder_one for each name below ROOT. */
struct folder {
	struct reader *r;
	const char *root;
};

static int
folder_one(void *ctx, const char *rel, int kind, int exec, uint64_t size, const char *link)
{
	struct folder *fo = ctx;
	struct reader *r = fo->r;
	char path[PATH_BYTES], q[160];
	struct rocmd_pkg_entry *e;
	int rc = 0;

	(void)size;
	if ((rc = check_count(r, rel)) < 0)
		return rc;
	if ((rc = rocmd_pkg_path_clean(rel, path, sizeof(path), r->why, r->whylen)) < 0)
		return rc;
	if (kind == 'd')
		return 0;
	if (kind == 'l') {
		char resolved[PATH_BYTES];
		rc = rocmd_pkg_link_resolve(path, link, resolved, sizeof(resolved), r->why,
		                            r->whylen);
		if (rc < 0)
			return rc;
		if ((e = entry_add(r, path)) == NULL || (e->link = strdup(link)) == NULL)
			return ROCMD_ENOMEM;
		e->kind = ROCMD_PKG_SYMLINK;
		return report(r, 0);
	}
	{
		struct fd_src src = {.path = path, .r = r};
		/* No link in any component: the walk saw a file here. */
		src.fd = rocmd_fs_open_beneath(fo->root, rel, O_RDONLY);
		if (src.fd == -ELOOP || src.fd == ROCMD_EUNSAFE) {
			say(r, "entry \"%s\": a folder on its path became a link while it was read",
			    printable(rel, q, sizeof(q)));
			return ROCMD_EUNSAFE;
		}
		if (src.fd < 0) {
			say(r, "cannot open \"%s\": %s", printable(rel, q, sizeof(q)),
			    rocmd_strerror(src.fd));
			return src.fd;
		}
		if ((e = entry_add(r, path)) == NULL) {
			rocmd_fs_close(src.fd);
			return ROCMD_ENOMEM;
		}
		e->kind = ROCMD_PKG_FILE;
		e->exec = exec;
		/* Opened with the importer's rights; copied with the daemon's. */
		peer_off(r);
		rc = copy_file(r, e, fd_src_read, &src);
		rocmd_fs_close(src.fd);
	}
	if (rc == 0)
		dat_start(r, e);
	if (rc == 0)
		rc = report(r, 0);
	return rc == 0 ? peer_on(r) : rc;
}

/* Reads folder ROOT. The walk refuses, in its own words, what no package
 * holds: special files, links leading out, reparse points on Windows. */
static int
read_folder(struct reader *r, const char *root)
{
	struct folder fo = {.r = r, .root = root};

	return rocmd_fs_os_walk(root, folder_one, &fo, r->why, r->whylen);
}

/* ---- after reading: names, links, the package root ---- */

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_pkg_entry *)a)->path,
	              ((const struct rocmd_pkg_entry *)b)->path);
}

static int
cmp_casepath(const void *a, const void *b)
{
	return rocmd_pkg_name_casecmp(*(char *const *)a, *(char *const *)b);
}

static struct rocmd_pkg_entry *
lookup(struct rocmd_pkg_contents *c, const char *path)
{
	struct rocmd_pkg_entry key = {.path = (char *)path};

	return bsearch(&key, c->entries, c->count, sizeof(*c->entries), cmp_entry);
}

/* Folders named like this are part of a package's layout, never a wrapper. */
static int
is_layout_dir(const char *name, size_t n)
{
	static const char *const names[] = {"library", "rocblas", "hipblaslt", "bin", "lib", NULL};

	for (int i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == n && strncasecmp(name, names[i], n) == 0)
			return 1;
	return 0;
}

/* Drops wrapper folders ("rocBLAS gfx1103 (HIP 6.2.4)/") every entry sits under. */
static int
strip_top(struct reader *r)
{
	struct rocmd_pkg_contents *c = r->out;
	char strip[PATH_BYTES] = "";

	for (int round = 0; round < 4 && c->count > 0; round++) {
		const char *first = c->entries[0].path, *slash = strchr(first, '/');
		size_t n;
		if (slash == NULL)
			break;
		n = (size_t)(slash - first);
		if (is_layout_dir(first, n))
			break;
		for (size_t i = 1; i < c->count; i++)
			if (strncmp(c->entries[i].path, first, n + 1) != 0)
				goto done;
		if (strlen(strip) + n + 2 >= sizeof(strip))
			break;
		strncat(strip, first, n + 1);
		for (size_t i = 0; i < c->count; i++) {
			char *p = c->entries[i].path;
			memmove(p, p + n + 1, strlen(p + n + 1) + 1);
		}
	}
done:
	if (strip[0] != '\0') {
		strip[strlen(strip) - 1] = '\0';
		c->strip = strdup(strip);
		if (c->strip == NULL)
			return ROCMD_ENOMEM;
	}
	return 0;
}

static int
check_names(struct reader *r)
{
	struct rocmd_pkg_contents *c = r->out;
	char **names = NULL, q[160], res[PATH_BYTES];
	int rc = 0;

	qsort(c->entries, c->count, sizeof(*c->entries), cmp_entry);
	for (size_t i = 0; i + 1 < c->count; i++)
		if (strcmp(c->entries[i].path, c->entries[i + 1].path) == 0) {
			say(r, "entry \"%s\": appears twice in the package",
			    printable(c->entries[i].path, q, sizeof(q)));
			return ROCMD_EUNSAFE;
		}
	names = malloc((c->count ? c->count : 1) * sizeof(*names));
	if (names == NULL)
		return ROCMD_ENOMEM;
	for (size_t i = 0; i < c->count; i++)
		names[i] = c->entries[i].path;
	qsort(names, c->count, sizeof(*names), cmp_casepath);
	for (size_t i = 0; i + 1 < c->count; i++)
		if (rocmd_pkg_name_casecmp(names[i], names[i + 1]) == 0) {
			say(r,
			    "entry \"%s\": differs from \"%s\" only in case, which Windows "
			    "cannot hold",
			    printable(names[i + 1], q, sizeof(q)), names[i]);
			rc = ROCMD_EUNSAFE;
			goto out;
		}
	for (size_t i = 0; i < c->count; i++) {
		struct rocmd_pkg_entry *e = &c->entries[i];
		char prefix[PATH_BYTES];
		/* No entry may sit under a file or a symlink. */
		snprintf(prefix, sizeof(prefix), "%s", e->path);
		for (char *s = strrchr(prefix, '/'); s != NULL; s = strrchr(prefix, '/')) {
			struct rocmd_pkg_entry *p;
			*s = '\0';
			if ((p = lookup(c, prefix)) != NULL) {
				say(r, "entry \"%s\": lies under \"%s\", which is a %s",
				    printable(e->path, q, sizeof(q)), prefix,
				    p->kind == ROCMD_PKG_SYMLINK ? "symlink" : "file");
				rc = ROCMD_EUNSAFE;
				goto out;
			}
		}
		if (e->kind != ROCMD_PKG_SYMLINK)
			continue;
		/* Checked again after stripping; no link may lead through another. */
		rc = rocmd_pkg_link_resolve(e->path, e->link, res, sizeof(res), r->why, r->whylen);
		if (rc < 0)
			goto out;
		for (char *s = strchr(res, '/'); s != NULL; s = strchr(s + 1, '/')) {
			struct rocmd_pkg_entry *p;
			*s = '\0';
			p = lookup(c, res);
			*s = '/';
			if (p != NULL && p->kind == ROCMD_PKG_SYMLINK) {
				say(r, "entry \"%s\": symlink leads through another symlink",
				    printable(e->path, q, sizeof(q)));
				rc = ROCMD_EUNSAFE;
				goto out;
			}
		}
	}
out:
	free(names);
	return rc;
}

static int
finish(struct reader *r)
{
	int rc;

	if (r->out->count == 0) {
		say(r, "the package holds no files");
		return ROCMD_EINVAL;
	}
	if ((rc = check_names(r)) < 0)
		return rc;
	if ((rc = strip_top(r)) < 0)
		return rc;
	if (r->out->strip != NULL && (rc = check_names(r)) < 0)
		return rc;
	r->pr.bytes_in = r->pr.bytes_total;
	r->pr.current[0] = '\0';
	return report(r, 1);
}

static int
reader_begin(struct reader *r, const char *staging, const struct rocmd_pkg_read_opts *opts,
             struct rocmd_pkg_contents *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	memset(r, 0, sizeof(*r));
	r->opts = opts;
	r->out = out;
	r->why = why;
	r->whylen = whylen;
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	r->buflen = opts->dry_run ? COPY_BUF_DRY : COPY_BUF;
	r->buf = malloc(r->buflen);
	if (r->buf == NULL)
		return ROCMD_ENOMEM;
	if (opts->dry_run)
		return 0;
	if (rocmd_fs_kind(staging, NULL, NULL) != 'd') {
		say(r, "the staging folder %s is missing", staging);
		return ROCMD_ENOTFOUND;
	}
	out->staging = strdup(staging);
	return out->staging == NULL ? ROCMD_ENOMEM : 0;
}

static int
reader_end(struct reader *r, int rc)
{
	peer_off(r);
	dat_join(r);
	free(r->buf);
	free(r->slots);
	if (rc < 0) {
		if (r->why != NULL && r->whylen > 0 && r->why[0] == '\0')
			say(r, "%s", rocmd_strerror(rc));
		rocmd_pkg_contents_free(r->out);
	}
	return rc;
}

static int
read_archive(struct reader *r, struct archive *a, int open_rc, const struct rocmd_pkg_raw *raw)
{
	int rc;

	if (open_rc != ARCHIVE_OK) {
		if (is_encryption_error(a)) {
			say(r, "encrypted archive: %s", sym_archive_error_string(a));
			return ROCMD_EUNSAFE;
		}
		say(r, "not an archive rocmd reads (7z, zip, tar, rar): %s",
		    sym_archive_error_string(a) ? sym_archive_error_string(a) : "unknown format");
		return ROCMD_EUNSUPPORTED;
	}
	r->raw = raw;
	rc = read_archive_entries(r, a, raw->size);
	if (rc == 0)
		rc = rocmd_pkg_raw_check_end(raw, sym_archive_format(a),
		                             sym_archive_filter_code(a, 0), r->why, r->whylen);
	if (rc == 0)
		rc = finish(r);
	return rc;
}

int
rocmd_pkg_read(const char *source, const char *staging, const struct rocmd_pkg_read_opts *opts,
               struct rocmd_pkg_contents *out, char *why, size_t whylen)
{
	struct reader r;
	char real[PATH_BYTES];
	uint64_t size = 0;
	int rc, kind;

	rc = reader_begin(&r, staging, opts, out, why, whylen);
	if (rc < 0 || (rc = peer_on(&r)) < 0)
		return reader_end(&r, rc);
	/* The user named SOURCE: follow its links once, then none below it. */
	if ((rc = rocmd_fs_realpath(source, real, sizeof(real))) < 0 ||
	    (rc = kind = rocmd_fs_kind(real, &size, NULL)) < 0) {
		say(&r, "cannot open %s: %s", source, rocmd_strerror(rc));
		return reader_end(&r, rc);
	}
	if (kind == 'd') {
		r.pr.bytes_total = folder_bytes(real);
		out->format = strdup("directory");
		rc = read_folder(&r, real);
		peer_off(&r);
		if (rc == 0)
			rc = finish(&r);
	} else if (kind == 'f') {
		struct rocmd_pkg_raw raw = {.fd = -1};
		struct archive *a;
		char dlwhy[256];
		int fd = rocmd_fs_open(real, O_RDONLY, 0);
		peer_off(&r);
		if (fd < 0) {
			say(&r, "cannot open %s: %s", source, rocmd_strerror(fd));
			return reader_end(&r, fd);
		}
		if ((rc = rocmd_archive_dl_load(dlwhy, sizeof(dlwhy))) < 0) {
			say(&r, "%s", dlwhy);
		} else if ((rc = rocmd_pkg_raw_fd(&raw, fd)) < 0) {
			say(&r, "cannot read %s: %s", source, rocmd_strerror(rc));
		} else if ((a = archive_new_reader()) == NULL) {
			rc = ROCMD_ENOMEM;
		} else {
			utf8_before before = utf8_enter();
			rc = read_archive(&r, a, rocmd_archive_open_file(a, real, fd, 1 << 20),
			                  &raw);
			sym_archive_read_free(a);
			utf8_leave(before);
		}
		rocmd_pkg_raw_free(&raw);
		rocmd_fs_close(fd);
	} else {
		peer_off(&r);
		say(&r, "%s is neither a file nor a folder", source);
		rc = ROCMD_EUNSAFE;
	}
	return reader_end(&r, rc);
}

int
rocmd_pkg_read_memory(const void *data, size_t len, const char *staging,
                      const struct rocmd_pkg_read_opts *opts, struct rocmd_pkg_contents *out,
                      char *why, size_t whylen)
{
	struct reader r;
	struct rocmd_pkg_raw raw;
	struct archive *a;
	utf8_before before;
	int rc;

	rc = reader_begin(&r, staging, opts, out, why, whylen);
	if (rc < 0)
		return reader_end(&r, rc);
	{
		char dlwhy[256];
		if ((rc = rocmd_archive_dl_load(dlwhy, sizeof(dlwhy))) < 0) {
			say(&r, "%s", dlwhy);
			return reader_end(&r, rc);
		}
	}
	a = archive_new_reader();
	if (a == NULL)
		return reader_end(&r, ROCMD_ENOMEM);
	rocmd_pkg_raw_memory(&raw, data, len);
	before = utf8_enter();
	rc = read_archive(&r, a, sym_archive_read_open_memory(a, data, len), &raw);
	sym_archive_read_free(a);
	utf8_leave(before);
	rocmd_pkg_raw_free(&raw);
	return reader_end(&r, rc);
}

void
rocmd_pkg_digest(const struct rocmd_pkg_contents *c, char hex[ROCMD_SHA256_HEX])
{
	struct rocmd_sha256 *h = NULL;
	uint8_t d[ROCMD_SHA256_LEN] = {0};

	if (rocmd_sha256_new(&h) == 0) {
		for (size_t i = 0; i < c->count; i++) {
			const struct rocmd_pkg_entry *e = &c->entries[i];
			char line[64];
			char sha[ROCMD_SHA256_HEX];
			rocmd_sha256_update(h, e->path, strlen(e->path) + 1);
			if (e->kind == ROCMD_PKG_SYMLINK) {
				rocmd_sha256_update(h, "l", 2);
				rocmd_sha256_update(h, e->link, strlen(e->link) + 1);
				continue;
			}
			rocmd_sha256_hex(e->sha256, sha);
			snprintf(line, sizeof(line), "%c%d %llu", e->kind, e->exec,
			         (unsigned long long)e->size);
			rocmd_sha256_update(h, line, strlen(line) + 1);
			rocmd_sha256_update(h, sha, 65);
		}
		rocmd_sha256_final(h, d);
	}
	rocmd_sha256_hex(d, hex);
}
