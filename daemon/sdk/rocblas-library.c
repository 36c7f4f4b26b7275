/*
 * rocBLAS library folders: locating, arch coverage, fingerprint. See
 * rocblas-library.h for the contract.
 *
 * The fingerprint is SHA-256 over, for each regular file in byte order of its
 * relative path: the path, one NUL byte, and the file's 32-byte SHA-256. It
 * names the content alone (not times or owners), so two copies of a library
 * have the same fingerprint. File hashes are cached by path, size, mtime,
 * device and inode; a changed file always changes at least one of these, so a
 * rescan of an unchanged multi-gigabyte folder costs one stat per file.
 *
 * A single TensileLibrary.dat is MessagePack: a map whose "library" holds a
 * tree of predicates; the archs are the values of {"type": "Processor",
 * "value": "gfxNNN"} predicates. They are read in one pass over the bytes,
 * without building a tree (0.3 s for rocBLAS 5.5's 117 MB file, where a
 * msgpack-c unpack took 4-5 s and about 4x the file in memory), and cached
 * with the file hash.
 */
#include "rocblas-library.h"
#include "mpwalk.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "common/amdgpu-elf.h"
#include "common/error.h"
#include "common/text.h"
#include "common/fs.h"
#include "sdk-version.h"

#define WALK_MAX_DEPTH 8
#define WALK_MAX_FILES 200000
#define CACHE_DEFAULT_ENTRIES 65536

/* ---- hash cache ---- */

struct cache_entry {
	char *path; /* NULL: empty slot */
	uint64_t size;
	int64_t mtime_ns;
	uint64_t dev, ino;
	uint8_t digest[ROCMD_SHA256_LEN];
	int have_digest;
	char **archs; /* a TensileLibrary.dat's archs, or NULL */
	size_t narchs;
	int have_archs;
};

struct rocmd_hash_cache {
	uv_mutex_t lock;
	struct cache_entry *slots;
	size_t nslots, used, max;
	uint64_t hits, misses;
};

struct file_key {
	const char *path;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t dev, ino;
};

static void
free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char **
dup_strv(char *const *v, size_t n)
{
	char **copy = calloc(n + 1, sizeof(*copy));

	for (size_t i = 0; copy != NULL && i < n; i++) {
		copy[i] = strdup(v[i]);
		if (copy[i] == NULL) {
			free_strv(copy, i);
			return NULL;
		}
	}
	return copy;
}

int
rocmd_hash_cache_new(size_t max_entries, struct rocmd_hash_cache **out)
{
	struct rocmd_hash_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return ROCMD_ENOMEM;
	c->max = max_entries > 0 ? max_entries : CACHE_DEFAULT_ENTRIES;
	c->nslots = 16;
	while (c->nslots < c->max * 2)
		c->nslots <<= 1;
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	if (c->slots == NULL || uv_mutex_init(&c->lock) != 0) {
		free(c->slots);
		free(c);
		return ROCMD_ENOMEM;
	}
	*out = c;
	return 0;
}

static void
cache_clear(struct rocmd_hash_cache *c)
{
	for (size_t i = 0; i < c->nslots; i++) {
		free(c->slots[i].path);
		free_strv(c->slots[i].archs, c->slots[i].narchs);
	}
	memset(c->slots, 0, c->nslots * sizeof(*c->slots));
	c->used = 0;
}

void
rocmd_hash_cache_free(struct rocmd_hash_cache *c)
{
	if (c == NULL)
		return;
	cache_clear(c);
	free(c->slots);
	uv_mutex_destroy(&c->lock);
	free(c);
}

void
rocmd_hash_cache_stats(struct rocmd_hash_cache *c, uint64_t *hits, uint64_t *misses)
{
	uv_mutex_lock(&c->lock);
	*hits = c->hits;
	*misses = c->misses;
	uv_mutex_unlock(&c->lock);
}

static size_t
path_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

/* The slot for K's path (empty or matching); the caller holds the lock. */
static struct cache_entry *
cache_slot(struct rocmd_hash_cache *c, const char *path)
{
	size_t i = path_hash(path) & (c->nslots - 1);

	while (c->slots[i].path != NULL && strcmp(c->slots[i].path, path) != 0)
		i = (i + 1) & (c->nslots - 1);
	return &c->slots[i];
}

static int
entry_matches(const struct cache_entry *e, const struct file_key *k)
{
	return e->path != NULL && e->size == k->size && e->mtime_ns == k->mtime_ns &&
	       e->dev == k->dev && e->ino == k->ino;
}

static int
cache_get_digest(struct rocmd_hash_cache *c, const struct file_key *k, uint8_t *digest)
{
	int found = 0;

	if (c == NULL)
		return 0;
	uv_mutex_lock(&c->lock);
	{
		struct cache_entry *e = cache_slot(c, k->path);
		if (entry_matches(e, k) && e->have_digest) {
			memcpy(digest, e->digest, ROCMD_SHA256_LEN);
			found = 1;
			c->hits++;
		} else {
			c->misses++;
		}
	}
	uv_mutex_unlock(&c->lock);
	return found;
}

/* Stores K's digest (and ARCHS when not NULL), replacing a stale entry. */
static void
cache_put(struct rocmd_hash_cache *c, const struct file_key *k, const uint8_t *digest,
          char *const *archs, size_t narchs)
{
	struct cache_entry *e;

	if (c == NULL)
		return;
	uv_mutex_lock(&c->lock);
	if (c->used >= c->max)
		cache_clear(c); /* simple and rare: a machine has a few libraries */
	e = cache_slot(c, k->path);
	if (e->path != NULL && !entry_matches(e, k)) {
		/* Stale: the file changed; forget what was known of it. */
		free_strv(e->archs, e->narchs);
		e->archs = NULL;
		e->narchs = 0;
		e->have_archs = 0;
		e->have_digest = 0;
	}
	if (e->path == NULL) {
		e->path = strdup(k->path);
		if (e->path == NULL)
			goto out;
		c->used++;
	}
	e->size = k->size;
	e->mtime_ns = k->mtime_ns;
	e->dev = k->dev;
	e->ino = k->ino;
	if (digest != NULL) {
		memcpy(e->digest, digest, ROCMD_SHA256_LEN);
		e->have_digest = 1;
	}
	if (archs != NULL && !e->have_archs) {
		e->archs = dup_strv(archs, narchs);
		e->narchs = e->archs != NULL ? narchs : 0;
		e->have_archs = e->archs != NULL;
	}
out:
	uv_mutex_unlock(&c->lock);
}

static int
cache_get_archs(struct rocmd_hash_cache *c, const struct file_key *k, char ***archs, size_t *narchs)
{
	int found = 0;

	if (c == NULL)
		return 0;
	uv_mutex_lock(&c->lock);
	{
		struct cache_entry *e = cache_slot(c, k->path);
		if (entry_matches(e, k) && e->have_archs) {
			*archs = dup_strv(e->archs, e->narchs);
			*narchs = e->narchs;
			found = *archs != NULL;
		}
	}
	uv_mutex_unlock(&c->lock);
	return found;
}

/* ---- arch names ---- */

size_t
rocmd_gfx_bare_len(const char *s)
{
	size_t n = 3;

	if (strncmp(s, "gfx", 3) != 0 || !isxdigit((unsigned char)s[3]))
		return 0;
	while (isxdigit((unsigned char)s[n]))
		n++;
	return n;
}

/* True when NAME (up to LEN bytes) is an arch with optional features only. */
static int
is_gfx_name(const char *name, size_t len)
{
	size_t n = rocmd_gfx_bare_len(name);

	if (n == 0 || n > len)
		return 0;
	for (size_t i = n; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && strchr(":-+", name[i]) == NULL)
			return 0;
	return len < ROCMD_GFX_MAX;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds a copy of the first LEN bytes of NAME to a set kept unsorted until sort_unique. */
static int
strv_add(char ***v, size_t *n, const char *name, size_t len)
{
	char **grown = realloc(*v, (*n + 2) * sizeof(**v));

	if (grown == NULL)
		return ROCMD_ENOMEM;
	*v = grown;
	grown[*n] = strndup(name, len);
	if (grown[*n] == NULL)
		return ROCMD_ENOMEM;
	(*n)++;
	grown[*n] = NULL;
	return 0;
}

static void
sort_unique(char **v, size_t *n)
{
	size_t w = 0;

	if (*n == 0)
		return;
	qsort(v, *n, sizeof(*v), cmp_str);
	for (size_t r = 0; r < *n; r++) {
		if (w > 0 && strcmp(v[w - 1], v[r]) == 0) {
			free(v[r]);
			continue;
		}
		v[w++] = v[r];
	}
	*n = w;
	v[w] = NULL;
}

/* ---- locating ---- */

static int
is_dir(const char *path)
{
	struct rocmd_fsinfo st;

	return rocmd_fsinfo_get(path, 1, &st) == 0 && st.type == ROCMD_FS_DIR;
}

int
rocmd_tensile_locate(const char *binary_dir, const char *env_libpath, const char *const *rel,
                     size_t nrel, char *out, size_t outlen)
{
	char path[PATH_MAX];

	if (outlen > 0)
		out[0] = '\0';
	if (env_libpath != NULL && env_libpath[0] != '\0') {
		if (!is_dir(env_libpath))
			return ROCMD_ENOTFOUND;
		snprintf(out, outlen, "%s", env_libpath);
		return 0;
	}
	if (binary_dir == NULL)
		return ROCMD_ENOTFOUND;
	for (size_t i = 0; i < nrel; i++) {
		snprintf(path, sizeof(path), "%s/%s", binary_dir, rel[i]);
		if (is_dir(path)) {
			snprintf(out, outlen, "%s", path);
			return 0;
		}
	}
	return ROCMD_ENOTFOUND;
}

int
rocmd_rocblas_locate(const char *binary_dir, const char *env_libpath, char *out, size_t outlen)
{
	static const char *const rel[] = {"library", "../rocblas/library", "rocblas/library"};
	char path[PATH_MAX], best[64] = "";
	struct rocmd_dir *d;
	struct rocmd_dirent *de;
	int rc = rocmd_tensile_locate(binary_dir, env_libpath, rel, sizeof(rel) / sizeof(rel[0]),
	                              out, outlen);

	if (rc == 0 || (env_libpath != NULL && env_libpath[0] != '\0') || binary_dir == NULL)
		return rc;
	/* Debian: <libdir>/rocblas/<rocblas-version>/library; the newest wins. */
	snprintf(path, sizeof(path), "%s/rocblas", binary_dir);
	d = rocmd_dir_open(path);
	if (d == NULL)
		return ROCMD_ENOTFOUND;
	while ((de = rocmd_dir_read(d)) != NULL) {
		char lib[PATH_MAX];
		if (!isdigit((unsigned char)de->d_name[0]) || strlen(de->d_name) >= sizeof(best))
			continue;
		rocmd_pathf(lib, sizeof(lib), "%s/%s/library", path, de->d_name);
		if (!is_dir(lib))
			continue;
		if (best[0] == '\0' || rocmd_version_cmp(de->d_name, best) > 0 ||
		    (rocmd_version_cmp(de->d_name, best) == 0 && strcmp(de->d_name, best) > 0))
			snprintf(best, sizeof(best), "%s", de->d_name);
	}
	rocmd_dir_close(d);
	if (best[0] == '\0')
		return ROCMD_ENOTFOUND;
	snprintf(out, outlen, "%s/%s/library", path, best);
	return 0;
}

/* ---- walking ---- */

struct walk {
	const char *top;
	size_t toplen;
	struct rocmd_rocblas_lib *lib;
	size_t cap;
	struct file_key *keys; /* parallel to lib->files: dev/ino for the cache */
	int err;
};

static int
walk_add(struct walk *w, const char *rel, const struct rocmd_fsinfo *st)
{
	struct rocmd_rocblas_lib *lib = w->lib;
	struct rocmd_rocblas_file *f;

	if (lib->nfiles == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		void *files = realloc(lib->files, cap * sizeof(*lib->files));
		void *keys;
		if (files == NULL)
			return ROCMD_ENOMEM;
		lib->files = files;
		keys = realloc(w->keys, cap * sizeof(*w->keys));
		if (keys == NULL)
			return ROCMD_ENOMEM;
		w->keys = keys;
		w->cap = cap;
	}
	f = &lib->files[lib->nfiles];
	memset(f, 0, sizeof(*f));
	f->relpath = strdup(rel);
	if (f->relpath == NULL)
		return ROCMD_ENOMEM;
	f->size = st->size;
	f->mtime_ns = st->mtime_ns;
	w->keys[lib->nfiles] = (struct file_key){NULL, f->size, f->mtime_ns, st->dev, st->ino};
	lib->nfiles++;
	lib->total_size += f->size;
	return 0;
}

/* Walks folder REL (relative to the top; "" for the top itself). */
static int
walk_dir(struct walk *w, const char *rel, int depth)
{
	char path[PATH_MAX], child[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s%s%s", w->top, rel[0] ? "/" : "", rel);
	d = rocmd_dir_open(path);
	if (d == NULL) {
		rocmd_text_addf(&w->lib->problems, "%s: cannot read folder: %s", path,
		                strerror(errno));
		return 0;
	}
	while (rc == 0 && (de = rocmd_dir_read(d)) != NULL) {
		struct rocmd_fsinfo st;
		int e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
		rocmd_pathf(path, sizeof(path), "%s/%s", w->top, child);
		if ((e = rocmd_fsinfo_get(path, 0, &st)) != 0) {
			rocmd_text_addf(&w->lib->problems, "%s: %s", path, strerror(-e));
			continue;
		}
		if (st.type == ROCMD_FS_LINK) {
			struct rocmd_fsinfo target;
			if ((e = rocmd_fsinfo_get(path, 1, &target)) != 0) {
				rocmd_text_addf(&w->lib->problems, "%s: broken symlink (%s)", path,
				                strerror(-e));
				continue;
			}
			if (target.type == ROCMD_FS_DIR) {
				/* rocBLAS does not descend either; never loops. */
				rocmd_text_addf(&w->lib->problems,
				                "%s: symlink to a folder, not followed", path);
				continue;
			}
			st = target;
		}
		if (st.type == ROCMD_FS_DIR) {
			if (depth >= WALK_MAX_DEPTH)
				rocmd_text_addf(&w->lib->problems, "%s: nested too deep, skipped",
				                path);
			else
				rc = walk_dir(w, child, depth + 1);
			continue;
		}
		if (st.type != ROCMD_FS_FILE)
			continue;
		if (w->lib->nfiles >= WALK_MAX_FILES) {
			rocmd_text_addf(&w->lib->problems, "more than %d files; the rest skipped",
			                WALK_MAX_FILES);
			rc = 1;
			break;
		}
		rc = walk_add(w, child, &st);
	}
	rocmd_dir_close(d);
	return rc < 0 ? rc : 0;
}

/* The target of code object PATH from its ELF header (rocmd_fs_map reads it, so
 * a UTF-8 path works on Windows too). Returns as rocmd_amdgpu_elf_arch. */
static int
co_arch(const char *path, char *out, size_t outlen)
{
	const void *map;
	size_t len;
	int rc = rocmd_fs_map(path, &map, &len);

	if (rc == ROCMD_ECORRUPT) /* empty */
		return rocmd_amdgpu_elf_arch("", 0, out, outlen);
	if (rc < 0)
		return rc;
	rc = rocmd_amdgpu_elf_arch(map, len, out, outlen);
	rocmd_fs_unmap(map, len);
	return rc;
}

/* ---- TensileLibrary.dat ---- */

/*
 * Collects the values of "Processor" predicates ({"type": "Processor",
 * "value": "gfx1103"} maps) in one pass straight over the MessagePack bytes.
 * Unpacking the document into a msgpack-c object tree first cost seconds and
 * hundreds of MB for a 117 MB TensileLibrary.dat (and a hostile file could
 * make it allocate far more); this allocates nothing but the names found.
 * Nesting deeper than 64 is skipped without recursion; every length is
 * checked against the bytes left.
 */
static int mp_fast_value(struct rocmd_mp_cur *c, int depth, char ***archs, size_t *n,
                         const char **str, uint64_t *slen);

static int
mp_fast_body(struct rocmd_mp_cur *c, int kind, uint64_t len, int depth, char ***archs, size_t *n)
{
	const char *type = NULL, *value = NULL, *s = NULL;
	uint64_t tlen = 0, vlen = 0, slen = 0;
	int rc = 0;

	if (depth > 64)
		return rocmd_mp_skip_items(c, kind == MP_MAP ? 2 * len : len);
	for (uint64_t i = 0; i < len && rc == 0; i++) {
		const char *key = NULL;
		uint64_t klen = 0;
		int kkind;
		if (kind == MP_ARRAY) {
			rc = mp_fast_value(c, depth + 1, archs, n, &s, &slen);
			continue;
		}
		if ((rc = rocmd_mp_head(c, &kkind, &klen, &key)) < 0)
			break;
		if (kkind == MP_ARRAY || kkind == MP_MAP) {
			rc = rocmd_mp_skip_items(c, kkind == MP_MAP ? 2 * klen : klen);
			key = NULL;
		} else if (kkind != MP_STR) {
			key = NULL;
		}
		if (rc == 0)
			rc = mp_fast_value(c, depth + 1, archs, n, &s, &slen);
		if (rc < 0 || key == NULL || s == NULL)
			continue;
		if (klen == 4 && memcmp(key, "type", 4) == 0) {
			type = s;
			tlen = slen;
		} else if (klen == 5 && memcmp(key, "value", 5) == 0) {
			value = s;
			vlen = slen;
		}
	}
	if (rc == 0 && type != NULL && value != NULL && tlen == 9 &&
	    memcmp(type, "Processor", 9) == 0 && is_gfx_name(value, (size_t)vlen))
		rc = strv_add(archs, n, value, (size_t)vlen);
	return rc;
}

/* Walks one value; *STR is set when it is a string, NULL otherwise. */
static int
mp_fast_value(struct rocmd_mp_cur *c, int depth, char ***archs, size_t *n, const char **str,
              uint64_t *slen)
{
	uint64_t len;
	int kind, rc;

	*str = NULL;
	if ((rc = rocmd_mp_head(c, &kind, &len, str)) < 0)
		return rc;
	if (kind == MP_STR) {
		*slen = len;
		return 0;
	}
	*str = NULL;
	if (kind == MP_SCALAR)
		return 0;
	return mp_fast_body(c, kind, len, depth, archs, n);
}

int
rocmd_rocblas_dat_archs(const char *path, char ***archs, size_t *narchs, char *why, size_t whylen)
{
	const void *map;
	size_t len;
	int rc;

	*archs = NULL;
	*narchs = 0;
	rc = rocmd_fs_map(path, &map, &len);
	if (rc == ROCMD_ECORRUPT) {
		snprintf(why, whylen, "%s: empty", path);
		return rc;
	}
	if (rc < 0) {
		snprintf(why, whylen, "%s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	{
		struct rocmd_mp_cur c = {map, len, 0};
		const char *str;
		uint64_t slen;
		rc = mp_fast_value(&c, 0, archs, narchs, &str, &slen);
		if (rc == ROCMD_ECORRUPT)
			snprintf(why, whylen, "%s: not a MessagePack Tensile library", path);
	}
	rocmd_fs_unmap(map, len);
	if (rc == ROCMD_ENOMEM)
		snprintf(why, whylen, "%s: out of memory reading its MessagePack", path);
	if (rc == 0 && *narchs == 0) {
		rc = ROCMD_ECORRUPT;
		snprintf(why, whylen, "%s: names no GPU arch", path);
	}
	if (rc != 0) {
		free_strv(*archs, *narchs);
		*archs = NULL;
		*narchs = 0;
		return rc;
	}
	sort_unique(*archs, narchs);
	return 0;
}

/* ---- inspection ---- */

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The file name of NAME when it is <gfx>/TensileLibrary_lazy_<gfx>.dat, the
 * per-arch subfolder hipBLASLt descends into when it exists (its
 * tensile_host.cpp: path + "/" + processor); else NULL. */
static const char *
arch_subdir_index(const char *name)
{
	const char *slash = strchr(name, '/');
	size_t d;

	if (slash == NULL || strchr(slash + 1, '/') != NULL)
		return NULL;
	d = (size_t)(slash - name);
	if (!is_gfx_name(name, d) || strncmp(slash + 1, "TensileLibrary_lazy_", 20) != 0 ||
	    strlen(slash + 21) != d + 4 || strncmp(slash + 21, name, d) != 0)
		return NULL;
	return slash + 1;
}

/* Index archs from the file names of the top folder (and, with
 * ROCMD_ROCBLAS_ARCH_SUBDIRS, of per-arch subfolders); sets lib->index. */
static int
index_from_names(struct rocmd_rocblas_lib *lib, unsigned flags, int *single)
{
	int lazy = 0, per_arch = 0, rc = 0;

	*single = 0;
	for (size_t i = 0; i < lib->nfiles && rc == 0; i++) {
		const char *name = lib->files[i].relpath;
		size_t len;

		if ((flags & ROCMD_ROCBLAS_ARCH_SUBDIRS) && arch_subdir_index(name) != NULL)
			name = arch_subdir_index(name);
		len = strlen(name);
		if (strchr(name, '/') != NULL || !ends_with(name, ".dat"))
			continue;
		if (strcmp(name, "TensileLibrary.dat") == 0) {
			*single = 1;
		} else if (strncmp(name, "TensileLibrary_lazy_", 20) == 0 &&
		           is_gfx_name(name + 20, len - 20 - 4)) {
			lazy = 1;
			rc = strv_add(&lib->archs, &lib->narchs, name + 20, len - 20 - 4);
		} else if (strncmp(name, "TensileLibrary_", 15) == 0 &&
		           is_gfx_name(name + 15, len - 15 - 4)) {
			per_arch = 1;
			rc = strv_add(&lib->archs, &lib->narchs, name + 15, len - 15 - 4);
		}
	}
	lib->index = lazy       ? ROCMD_ROCBLAS_INDEX_LAZY
	             : per_arch ? ROCMD_ROCBLAS_INDEX_PER_ARCH
	             : *single  ? ROCMD_ROCBLAS_INDEX_SINGLE
	                        : ROCMD_ROCBLAS_INDEX_NONE;
	return rc;
}

/* Base arch of a target id: "gfx90a:xnack+" / "gfx90a-xnack-" → "gfx90a". */
static size_t
base_len(const char *gfx)
{
	return rocmd_gfx_bare_len(gfx);
}

static int
arch_in(char *const *v, size_t n, const char *gfx)
{
	size_t b = base_len(gfx);

	for (size_t i = 0; i < n; i++)
		if (base_len(v[i]) == b && b > 0 && strncmp(v[i], gfx, b) == 0)
			return 1;
	return 0;
}

int
rocmd_rocblas_covers(const struct rocmd_rocblas_lib *lib, const char *gfx)
{
	return lib != NULL && gfx != NULL && arch_in(lib->archs, lib->narchs, gfx);
}

static int
hash_files(struct rocmd_rocblas_lib *lib, struct walk *w, struct rocmd_hash_cache *cache)
{
	struct rocmd_sha256 *fp = NULL;
	char path[PATH_MAX];
	int rc;

	rc = rocmd_sha256_new(&fp);
	for (size_t i = 0; rc == 0 && i < lib->nfiles; i++) {
		struct rocmd_rocblas_file *f = &lib->files[i];
		struct file_key k = w->keys[i];
		uint64_t size = 0;

		snprintf(path, sizeof(path), "%s/%s", lib->dir, f->relpath);
		k.path = path;
		if (!cache_get_digest(cache, &k, f->sha256)) {
			rc = rocmd_sha256_file(path, f->sha256, &size);
			if (rc < 0) {
				rocmd_text_addf(&lib->problems, "%s: cannot hash: %s", path,
				                rocmd_strerror(rc));
				break;
			}
			if (size != f->size) {
				/* Changed while we read it: the next scan sees it settled. */
				rocmd_text_addf(&lib->problems, "%s: changed while being hashed",
				                path);
				rc = ROCMD_EBUSY;
				break;
			}
			cache_put(cache, &k, f->sha256, NULL, 0);
		}
		rc = rocmd_sha256_update(fp, f->relpath, strlen(f->relpath) + 1);
		if (rc == 0)
			rc = rocmd_sha256_update(fp, f->sha256, ROCMD_SHA256_LEN);
	}
	if (rc == 0) {
		rc = rocmd_sha256_final(fp, lib->fingerprint);
		fp = NULL;
		lib->have_fingerprint = rc == 0;
	}
	rocmd_sha256_free(fp);
	return rc == ROCMD_ENOMEM ? rc : 0;
}

static int
cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_rocblas_file *)a)->relpath,
	              ((const struct rocmd_rocblas_file *)b)->relpath);
}

int
rocmd_rocblas_inspect(const char *dir, unsigned flags, struct rocmd_hash_cache *cache,
                      struct rocmd_rocblas_lib *out, char *why, size_t whylen)
{
	struct walk w = {0};
	struct rocmd_fsinfo st;
	char path[PATH_MAX];
	int rc, single = 0;

	memset(out, 0, sizeof(*out));
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if ((rc = rocmd_fsinfo_get(dir, 1, &st)) != 0) {
		snprintf(why, whylen, "%s: %s", dir, strerror(-rc));
		return rocmd_err_errno(-rc);
	}
	if (st.type != ROCMD_FS_DIR) {
		snprintf(why, whylen, "%s: not a folder", dir);
		return ROCMD_ENOTFOUND;
	}
	out->dir = strdup(dir);
	if (out->dir == NULL)
		return ROCMD_ENOMEM;
	w.top = dir;
	w.lib = out;
	rc = walk_dir(&w, "", 0);
	if (rc < 0)
		goto fail;
	/* Sort files and their keys together: sort an index permutation. */
	{
		struct rocmd_rocblas_file *files = out->files;
		struct file_key *keys = w.keys;
		size_t n = out->nfiles;
		/* relpath pointers are unique; pair keys to files via a temporary copy. */
		struct pair {
			struct rocmd_rocblas_file f;
			struct file_key k;
		} *pairs = n > 0 ? malloc(n * sizeof(*pairs)) : NULL;
		if (n > 0 && pairs == NULL) {
			rc = ROCMD_ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			pairs[i].f = files[i];
			pairs[i].k = keys[i];
		}
		if (n > 0) /* an empty folder: qsort is given no NULL array */
			qsort(pairs, n, sizeof(*pairs), cmp_file); /* f is the first member */
		for (size_t i = 0; i < n; i++) {
			files[i] = pairs[i].f;
			keys[i] = pairs[i].k;
		}
		free(pairs);
	}
	rc = index_from_names(out, flags, &single);
	if (rc < 0)
		goto fail;
	if (single && !(flags & ROCMD_ROCBLAS_SKIP_DAT)) {
		char **archs = NULL, dwhy[512] = "";
		size_t n = 0;
		struct file_key k = {0};

		snprintf(path, sizeof(path), "%s/TensileLibrary.dat", dir);
		for (size_t i = 0; i < out->nfiles; i++)
			if (strcmp(out->files[i].relpath, "TensileLibrary.dat") == 0)
				k = w.keys[i];
		k.path = path;
		if (!cache_get_archs(cache, &k, &archs, &n)) {
			rc = rocmd_rocblas_dat_archs(path, &archs, &n, dwhy, sizeof(dwhy));
			if (rc == ROCMD_ENOMEM)
				goto fail;
			if (rc < 0)
				rocmd_text_addf(&out->problems, "%s", dwhy);
			else
				cache_put(cache, &k, NULL, archs, n);
		}
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = strv_add(&out->archs, &out->narchs, archs[i], strlen(archs[i]));
		free_strv(archs, n);
		if (rc == ROCMD_ENOMEM)
			goto fail;
		rc = 0;
	}
	sort_unique(out->archs, &out->narchs);
	/* Code objects: their ELF says which chip they are for. */
	for (size_t i = 0; i < out->nfiles; i++) {
		struct rocmd_rocblas_file *f = &out->files[i];
		if (!ends_with(f->relpath, ".co") && !ends_with(f->relpath, ".hsaco"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, f->relpath);
		rc = co_arch(path, f->arch, sizeof(f->arch));
		if (rc == 0) {
			rc = strv_add(&out->co_archs, &out->nco_archs, f->arch, strlen(f->arch));
			if (rc < 0)
				goto fail;
		} else if (rc == ROCMD_ENOTFOUND) {
			rocmd_text_addf(&out->problems, "%s: AMDGPU code object of unknown chip %s",
			                f->relpath, f->arch);
		} else if (rc == ROCMD_EINVAL) {
			rocmd_text_addf(&out->problems, "%s: not an AMDGPU code object",
			                f->relpath);
		} else {
			rocmd_text_addf(&out->problems, "%s: cannot read: %s", f->relpath,
			                rocmd_strerror(rc));
		}
		rc = 0;
	}
	sort_unique(out->co_archs, &out->nco_archs);
	if (out->index == ROCMD_ROCBLAS_INDEX_NONE)
		rocmd_text_addf(&out->problems,
		                "no TensileLibrary index (.dat): rocBLAS would abort on every GPU");
	for (size_t i = 0; i < out->nco_archs; i++)
		if (out->narchs > 0 && !arch_in(out->archs, out->narchs, out->co_archs[i]))
			rocmd_text_addf(&out->problems,
			                "code objects for %s, which no index file lists",
			                out->co_archs[i]);
	for (size_t i = 0; i < out->narchs; i++)
		if (!arch_in(out->co_archs, out->nco_archs, out->archs[i]))
			rocmd_text_addf(&out->problems,
			                "the index lists %s but no code object is for it",
			                out->archs[i]);
	if (flags & ROCMD_ROCBLAS_FINGERPRINT) {
		rc = hash_files(out, &w, cache);
		if (rc < 0)
			goto fail;
	}
	free(w.keys);
	return 0;
fail:
	free(w.keys);
	snprintf(why, whylen, "%s: %s", dir, rocmd_strerror(rc));
	rocmd_rocblas_lib_free(out);
	return rc;
}

void
rocmd_rocblas_lib_free(struct rocmd_rocblas_lib *lib)
{
	if (lib == NULL)
		return;
	free(lib->dir);
	free_strv(lib->archs, lib->narchs);
	free_strv(lib->co_archs, lib->nco_archs);
	for (size_t i = 0; i < lib->nfiles; i++)
		free(lib->files[i].relpath);
	free(lib->files);
	free(lib->problems);
	memset(lib, 0, sizeof(*lib));
}

static const char *
index_name(enum rocmd_rocblas_index i)
{
	switch (i) {
	case ROCMD_ROCBLAS_INDEX_LAZY:
		return "lazy";
	case ROCMD_ROCBLAS_INDEX_PER_ARCH:
		return "per-arch";
	case ROCMD_ROCBLAS_INDEX_SINGLE:
		return "single";
	default:
		return "none";
	}
}

static cJSON *
strv_json(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

cJSON *
rocmd_rocblas_lib_to_json(const struct rocmd_rocblas_lib *lib, int files)
{
	cJSON *o = cJSON_CreateObject();
	char hex[ROCMD_SHA256_HEX];

	cJSON_AddStringToObject(o, "dir", lib->dir != NULL ? lib->dir : "");
	cJSON_AddStringToObject(o, "index", index_name(lib->index));
	cJSON_AddItemToObject(o, "archs", strv_json(lib->archs, lib->narchs));
	cJSON_AddItemToObject(o, "code_object_archs", strv_json(lib->co_archs, lib->nco_archs));
	cJSON_AddNumberToObject(o, "nfiles", (double)lib->nfiles);
	cJSON_AddNumberToObject(o, "total_size", (double)lib->total_size);
	if (lib->have_fingerprint) {
		rocmd_sha256_hex(lib->fingerprint, hex);
		cJSON_AddStringToObject(o, "fingerprint", hex);
	} else {
		cJSON_AddNullToObject(o, "fingerprint");
	}
	if (lib->problems != NULL)
		cJSON_AddStringToObject(o, "problems", lib->problems);
	if (files) {
		cJSON *a = cJSON_AddArrayToObject(o, "files");
		for (size_t i = 0; i < lib->nfiles; i++) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "path", lib->files[i].relpath);
			cJSON_AddNumberToObject(f, "size", (double)lib->files[i].size);
			if (lib->files[i].arch[0] != '\0')
				cJSON_AddStringToObject(f, "arch", lib->files[i].arch);
			if (lib->have_fingerprint) {
				rocmd_sha256_hex(lib->files[i].sha256, hex);
				cJSON_AddStringToObject(f, "sha256", hex);
			}
			cJSON_AddItemToArray(a, f);
		}
	}
	return o;
}
