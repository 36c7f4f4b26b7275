/*
 * The store's package records (see pkg.h): store/packages/<digest>.json,
 * one per package, so that the store is whole without the database. A
 * record is written durably after the package's objects and before its
 * database row, and removed before the row is; a record is read back only
 * after every field, path and link is checked and its digest computed again
 * from its files (a record is trusted no more than an archive is), and a
 * package is adopted from it only when every object it names is in the
 * store, whole (hashed again).
 *
 *   {"rocmd_package_record": 1, "digest": "77f8...", "name": "...",
 *    "source": "/home/u/x.7z", "imported_ms": 1700000000000,
 *    "identity": {...as pkg.show gives it...},
 *    "files": [["library/x.co", "f", 0, 1234, "ab12..."], ["lib", "l", "library"]]}
 */
#include "pkg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"

#define RECORD_FORMAT 1
#define RECORD_MAX (256u << 20) /* bytes: 100,000 files take about 15 MB */

static int
record_path(const char *store, const char *digest, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/packages/%s.json", store, digest);

	return n < 0 || (size_t)n >= outlen ? ROCMD_EINVAL : 0;
}

static int
is_hex64(const char *s)
{
	if (s == NULL || strlen(s) != 64)
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

cJSON *
rocmd_store_record_new(const struct rocmd_pkg_contents *c, const char *digest, const char *name,
                       const char *source, int64_t imported_ms, const cJSON *identity)
{
	cJSON *r = cJSON_CreateObject(), *files;

	if (r == NULL)
		return NULL;
	cJSON_AddNumberToObject(r, "rocmd_package_record", RECORD_FORMAT);
	cJSON_AddStringToObject(r, "digest", digest);
	cJSON_AddStringToObject(r, "name", name);
	cJSON_AddStringToObject(r, "source", source);
	cJSON_AddNumberToObject(r, "imported_ms", (double)imported_ms);
	cJSON_AddItemToObject(r, "identity", cJSON_Duplicate(identity, 1));
	files = cJSON_AddArrayToObject(r, "files");
	for (size_t i = 0; files != NULL && i < c->count; i++) {
		const struct rocmd_pkg_entry *e = &c->entries[i];
		cJSON *f = cJSON_CreateArray();
		char hex[ROCMD_SHA256_HEX];
		cJSON_AddItemToArray(f, cJSON_CreateString(e->path));
		if (e->kind == ROCMD_PKG_SYMLINK) {
			cJSON_AddItemToArray(f, cJSON_CreateString("l"));
			cJSON_AddItemToArray(f, cJSON_CreateString(e->link));
		} else {
			rocmd_sha256_hex(e->sha256, hex);
			cJSON_AddItemToArray(f, cJSON_CreateString("f"));
			cJSON_AddItemToArray(f, cJSON_CreateNumber(e->exec));
			cJSON_AddItemToArray(f, cJSON_CreateNumber((double)e->size));
			cJSON_AddItemToArray(f, cJSON_CreateString(hex));
		}
		cJSON_AddItemToArray(files, f);
	}
	if (files == NULL || cJSON_GetObjectItem(r, "identity") == NULL) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

int
rocmd_store_record_write(const char *store, const cJSON *rec, int replace, int *created, char *why,
                         size_t whylen)
{
	const char *digest = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "digest"));
	char path[4096], dir[4096];
	char *text = NULL;
	int rc;

	*created = 0;
	snprintf(dir, sizeof(dir), "%s/packages", store);
	if (!is_hex64(digest) || record_path(store, digest, path, sizeof(path)) < 0)
		return ROCMD_EINVAL;
	if ((rc = rocmd_fs_mkdir(dir, 0755)) < 0 && rc != -EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", dir, rocmd_strerror(rc));
		return rc;
	}
	if ((text = cJSON_PrintUnformatted(rec)) == NULL)
		return ROCMD_ENOMEM;
	rc = rocmd_fs_write_new(path, text, strlen(text), ROCMD_FS_MODE_SEALED);
	if (rc == 0) {
		*created = 1;
		rc = rocmd_fs_fsync_dir(dir);
	} else if (rc == -EEXIST) {
		rc = replace
		         ? rocmd_fs_replace(path, NULL, text, strlen(text), ROCMD_FS_MODE_SEALED)
		         : 0;
	}
	if (rc < 0)
		snprintf(why, whylen, "cannot write the package's record %s: %s", path,
		         rocmd_strerror(rc));
	free(text);
	return rc;
}

int
rocmd_store_record_remove(const char *store, const char *digest)
{
	char path[4096], dir[4096];
	int rc;

	if (!is_hex64(digest) || record_path(store, digest, path, sizeof(path)) < 0)
		return ROCMD_EINVAL;
	if ((rc = rocmd_fs_kind(path, NULL, NULL)) <= 0)
		return rc; /* none, or cannot tell */
	snprintf(dir, sizeof(dir), "%s/packages", store);
	if ((rc = rocmd_fs_unlink(path)) < 0)
		return rc;
	return rocmd_fs_fsync_dir(dir);
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_pkg_entry *)a)->path,
	              ((const struct rocmd_pkg_entry *)b)->path);
}

static int
hex_to_sha(const char *hex, uint8_t *out)
{
	for (int i = 0; i < ROCMD_SHA256_LEN; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return ROCMD_EINVAL;
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* One file of a record into E (its strings REC's: not to be freed). */
static int
record_file(const cJSON *f, struct rocmd_pkg_entry *e, char *why, size_t whylen)
{
	const char *path = cJSON_GetStringValue(cJSON_GetArrayItem(f, 0));
	const char *kind = cJSON_GetStringValue(cJSON_GetArrayItem(f, 1));
	char clean[4096], res[4096];

	memset(e, 0, sizeof(*e));
	if (path == NULL || kind == NULL ||
	    rocmd_pkg_path_clean(path, clean, sizeof(clean), why, whylen) < 0 ||
	    strcmp(clean, path) != 0)
		return ROCMD_ECORRUPT;
	e->path = (char *)path;
	if (strcmp(kind, "l") == 0 && cJSON_GetArraySize(f) == 3) {
		e->kind = ROCMD_PKG_SYMLINK;
		e->link = (char *)cJSON_GetStringValue(cJSON_GetArrayItem(f, 2));
		if (e->link == NULL ||
		    rocmd_pkg_link_resolve(path, e->link, res, sizeof(res), why, whylen) < 0)
			return ROCMD_ECORRUPT;
		return 0;
	}
	if (strcmp(kind, "f") != 0 || cJSON_GetArraySize(f) != 5 ||
	    !cJSON_IsNumber(cJSON_GetArrayItem(f, 2)) ||
	    !cJSON_IsNumber(cJSON_GetArrayItem(f, 3)) ||
	    cJSON_GetArrayItem(f, 3)->valuedouble < 0 ||
	    !is_hex64(cJSON_GetStringValue(cJSON_GetArrayItem(f, 4))))
		return ROCMD_ECORRUPT;
	e->kind = ROCMD_PKG_FILE;
	e->exec = cJSON_GetArrayItem(f, 2)->valueint != 0;
	e->size = (uint64_t)cJSON_GetArrayItem(f, 3)->valuedouble;
	return hex_to_sha(cJSON_GetStringValue(cJSON_GetArrayItem(f, 4)), e->sha256);
}

int
rocmd_store_record_contents(const cJSON *rec, struct rocmd_pkg_contents *c, char *why,
                            size_t whylen)
{
	const cJSON *files = cJSON_GetObjectItem(rec, "files"), *f;
	size_t n = 0;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsArray(files) || cJSON_GetArraySize(files) == 0)
		return ROCMD_ECORRUPT;
	c->entries = calloc((size_t)cJSON_GetArraySize(files), sizeof(*c->entries));
	if (c->entries == NULL)
		return ROCMD_ENOMEM;
	cJSON_ArrayForEach(f, files)
	{
		if (record_file(f, &c->entries[n], why, whylen) < 0) {
			free(c->entries);
			c->entries = NULL;
			return ROCMD_ECORRUPT;
		}
		c->total_size += c->entries[n].size;
		n++;
	}
	c->count = n;
	qsort(c->entries, n, sizeof(*c->entries), cmp_entry);
	for (size_t i = 0; i + 1 < n; i++)
		if (strcmp(c->entries[i].path, c->entries[i + 1].path) == 0) {
			free(c->entries);
			c->entries = NULL;
			return ROCMD_ECORRUPT;
		}
	return 0;
}

int
rocmd_store_record_read(const char *store, const char *digest, cJSON **out, char *why,
                        size_t whylen)
{
	struct rocmd_pkg_contents c;
	char path[4096], hex[ROCMD_SHA256_HEX], w[256] = "";
	const cJSON *v;
	char *text = NULL;
	cJSON *rec = NULL;
	int rc;

	*out = NULL;
	if (!is_hex64(digest) || record_path(store, digest, path, sizeof(path)) < 0)
		return ROCMD_EINVAL;
	if ((rc = rocmd_fs_read_file(path, RECORD_MAX, &text, NULL)) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	rec = cJSON_Parse(text);
	free(text);
	rc = ROCMD_ECORRUPT;
	if (rec == NULL || !cJSON_IsNumber(v = cJSON_GetObjectItem(rec, "rocmd_package_record")) ||
	    v->valueint != RECORD_FORMAT ||
	    !cJSON_IsString(v = cJSON_GetObjectItem(rec, "digest")) ||
	    strcmp(v->valuestring, digest) != 0 ||
	    !cJSON_IsString(cJSON_GetObjectItem(rec, "name")) ||
	    !cJSON_IsString(cJSON_GetObjectItem(rec, "source")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItem(rec, "imported_ms")) ||
	    !cJSON_IsObject(cJSON_GetObjectItem(rec, "identity")))
		goto bad;
	if ((rc = rocmd_store_record_contents(rec, &c, w, sizeof(w))) < 0)
		goto bad;
	rocmd_pkg_digest(&c, hex);
	free(c.entries);
	if (strcmp(hex, digest) != 0) {
		rc = ROCMD_ECORRUPT;
		snprintf(w, sizeof(w), "its files give another digest");
		goto bad;
	}
	*out = rec;
	return 0;
bad:
	snprintf(why, whylen, "%s is not a package record%s%s", path, w[0] ? ": " : "", w);
	cJSON_Delete(rec);
	return rc;
}

struct object_ref {
	const char *hex;
	uint64_t size;
};

static int
cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct object_ref *)a)->hex, ((const struct object_ref *)b)->hex);
}

int
rocmd_store_record_check(const char *store, const cJSON *rec, int (*canceled)(void *ctx), void *ctx,
                         char *why, size_t whylen)
{
	const cJSON *files = cJSON_GetObjectItem(rec, "files"), *f;
	struct object_ref *refs;
	size_t n = 0;
	int rc = 0;

	refs = malloc(((size_t)cJSON_GetArraySize(files) + 1) * sizeof(*refs));
	if (refs == NULL)
		return ROCMD_ENOMEM;
	cJSON_ArrayForEach(f, files)
	{
		const char *hex = cJSON_GetStringValue(cJSON_GetArrayItem(f, 4));
		if (hex != NULL) /* not a symlink */
			refs[n++] = (struct object_ref){
			    hex, (uint64_t)cJSON_GetArrayItem(f, 3)->valuedouble};
	}
	qsort(refs, n, sizeof(*refs), cmp_ref);
	/* Each object once, however many files hold it. */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char path[4096], hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;
		if (i > 0 && strcmp(refs[i].hex, refs[i - 1].hex) == 0) {
			if (refs[i].size != refs[i - 1].size) {
				snprintf(why, whylen, "%s has two sizes in it", refs[i].hex);
				rc = ROCMD_ECORRUPT;
			}
			continue;
		}
		if (canceled != NULL && canceled(ctx)) {
			rc = ROCMD_ECANCELED;
			break;
		}
		if ((rc = rocmd_store_object_path(store, refs[i].hex, path, sizeof(path))) < 0)
			break;
		rc = rocmd_fs_hash_file(path, hex, &size);
		if (rc < 0 || strcmp(hex, refs[i].hex) != 0 || size != refs[i].size) {
			snprintf(why, whylen, "its object %s is %s", refs[i].hex,
			         rc == -ENOENT ? "missing"
			         : rc < 0      ? rocmd_strerror(rc)
			                       : "damaged");
			rc = rc == -ENOENT ? ROCMD_ENOTFOUND : ROCMD_ECORRUPT;
		}
	}
	free(refs);
	return rc;
}

int
rocmd_pkg_strv_add(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *nv = realloc(*v, ncap * sizeof(**v));
		if (nv == NULL)
			return ROCMD_ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	if (((*v)[*n] = strdup(s)) == NULL)
		return ROCMD_ENOMEM;
	(*n)++;
	return 0;
}

int
rocmd_store_record_objects(const cJSON *rec, char ***keep, size_t *n, size_t *cap)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItem(rec, "files"))
	{
		const char *hex = cJSON_GetStringValue(cJSON_GetArrayItem(f, 4));
		if (hex != NULL && rocmd_pkg_strv_add(keep, n, cap, hex) < 0)
			return ROCMD_ENOMEM;
	}
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
rocmd_store_records_list(const char *store, char ***digests, size_t *n)
{
	char dir[4096];
	struct rocmd_dir *d;
	struct rocmd_dirent *de;
	size_t cap = 0;

	*digests = NULL;
	*n = 0;
	snprintf(dir, sizeof(dir), "%s/packages", store);
	if ((d = rocmd_dir_open(dir)) == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((de = rocmd_dir_read(d)) != NULL) {
		char digest[ROCMD_SHA256_HEX];
		if (strlen(de->d_name) != 64 + 5 || strcmp(de->d_name + 64, ".json") != 0)
			continue;
		snprintf(digest, sizeof(digest), "%.64s", de->d_name);
		if (is_hex64(digest) && rocmd_pkg_strv_add(digests, n, &cap, digest) < 0)
			goto oom;
	}
	rocmd_dir_close(d);
	if (*n > 1)
		qsort(*digests, *n, sizeof(**digests), cmp_str);
	return 0;
oom:
	rocmd_dir_close(d);
	rocmd_store_records_free(*digests, *n);
	*digests = NULL;
	*n = 0;
	return ROCMD_ENOMEM;
}

void
rocmd_store_records_free(char **digests, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(digests[i]);
	free(digests);
}

int
rocmd_store_records_complete(const char *store)
{
	char path[4096];
	cJSON *j = NULL;
	int ok;

	snprintf(path, sizeof(path), "%s/store.json", store);
	if (rocmd_fs_json_read(path, &j) < 0)
		return 0;
	ok = cJSON_IsNumber(cJSON_GetObjectItem(j, "records")) &&
	     cJSON_GetObjectItem(j, "records")->valueint == RECORD_FORMAT;
	cJSON_Delete(j);
	return ok;
}

int
rocmd_store_records_mark_complete(const char *store)
{
	char path[4096];
	cJSON *j = cJSON_CreateObject();
	int rc;

	if (j == NULL)
		return ROCMD_ENOMEM;
	cJSON_AddNumberToObject(j, "records", RECORD_FORMAT);
	snprintf(path, sizeof(path), "%s/store.json", store);
	rc = rocmd_fs_json_write(path, j);
	cJSON_Delete(j);
	return rc;
}
