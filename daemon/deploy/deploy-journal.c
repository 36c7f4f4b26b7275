/*
 * The deploy engine's on-disk records: manifests (current.json, the backup's
 * manifest.json, and the "manifest" member of a journal). A manifest lists every file of a library
 * folder with its kind, mode, size and SHA-256, plus the binary; its digest is the SHA-256 over one
 * line per file in path order ("f 1 123 <hex> path\n", "l 0 0 - path -> target\n") and a last line
 * for the binary ("binary <size> <hex>\n"), then, when hipBLASLt's folder is deployed with it, a
 * line "hipblaslt\n" and its files' lines ("hipblaslt" member), so two manifests with the same
 * content have the same digest whatever the JSON looks like. Writing them durably is the file
 * layer's job (rocmd_fs_json_write). Also the reading of each target's records in the state folder:
 * which targets have a journal, and what current.json says is deployed.
 */
#include "deploy-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static int
file_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct rocmd_deploy_file *const *)a)->path,
	              (*(const struct rocmd_deploy_file *const *)b)->path);
}

static cJSON *
file_json(const struct rocmd_deploy_file *f, int with_path)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	if (with_path)
		cJSON_AddStringToObject(o, "path", f->path);
	cJSON_AddStringToObject(o, "kind", f->kind == ROCMD_DEPLOY_SYMLINK ? "l" : "f");
	cJSON_AddBoolToObject(o, "exec", f->exec != 0);
	cJSON_AddNumberToObject(o, "size", (double)f->size);
	if (f->kind == ROCMD_DEPLOY_SYMLINK)
		cJSON_AddStringToObject(o, "link", f->link != NULL ? f->link : "");
	else
		cJSON_AddStringToObject(o, "sha256", f->sha256);
	return o;
}

/* Adds FILES (N) to ARR in path order and their digest lines to H. */
static int
files_json(cJSON *arr, struct rocmd_sha256 *h, const struct rocmd_deploy_file *files, size_t n)
{
	const struct rocmd_deploy_file **sorted = calloc(n > 0 ? n : 1, sizeof(*sorted));

	if (sorted == NULL || arr == NULL) {
		free(sorted);
		return ROCMD_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = &files[i];
	if (n > 1)
		qsort(sorted, n, sizeof(*sorted), file_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f = sorted[i];
		char line[DEPLOY_PATH_MAX * 3];
		int len;
		cJSON_AddItemToArray(arr, file_json(f, 1));
		if (f->kind == ROCMD_DEPLOY_SYMLINK)
			len = snprintf(line, sizeof(line), "l 0 0 - %s -> %s\n", f->path,
			               f->link != NULL ? f->link : "");
		else
			len = snprintf(line, sizeof(line), "f %d %llu %s %s\n", f->exec != 0,
			               (unsigned long long)f->size, f->sha256, f->path);
		rocmd_sha256_update(h, line,
		                    (size_t)len < sizeof(line) ? (size_t)len : sizeof(line));
	}
	free(sorted);
	return 0;
}

cJSON *
deploy_manifest_json(const char *label, const struct rocmd_deploy_file *files, size_t n,
                     const struct rocmd_deploy_file *binary, int has_lt,
                     const struct rocmd_deploy_file *lt, size_t nlt, char digest[ROCMD_SHA256_HEX])
{
	struct rocmd_sha256 *h = NULL;
	uint8_t d[ROCMD_SHA256_LEN];
	cJSON *m = NULL;

	if (rocmd_sha256_new(&h) < 0 || (m = cJSON_CreateObject()) == NULL)
		goto fail;
	cJSON_AddNumberToObject(m, "version", 1);
	cJSON_AddStringToObject(m, "label", label != NULL ? label : "");
	if (files_json(cJSON_AddArrayToObject(m, "files"), h, files, n) < 0)
		goto fail;
	if (binary != NULL) {
		char line[128];
		int len = snprintf(line, sizeof(line), "binary %llu %s\n",
		                   (unsigned long long)binary->size, binary->sha256);
		rocmd_sha256_update(h, line, (size_t)len);
		cJSON_AddItemToObject(m, "binary", file_json(binary, 0));
	} else {
		cJSON_AddNullToObject(m, "binary");
	}
	if (has_lt) {
		/* hipBLASLt's folder after a line of its own: a manifest without
		 * one keeps the digest it always had. */
		rocmd_sha256_update(h, "hipblaslt\n", 10);
		if (files_json(cJSON_AddArrayToObject(m, "hipblaslt"), h, lt, nlt) < 0)
			goto fail;
	}
	rocmd_sha256_final(h, d);
	h = NULL;
	rocmd_sha256_hex(d, digest);
	cJSON_AddStringToObject(m, "digest", digest);
	return m;
fail:
	rocmd_sha256_free(h);
	cJSON_Delete(m);
	return NULL;
}

static int
file_parse(const cJSON *o, struct rocmd_deploy_file *f, int want_path)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
	const cJSON *exec = cJSON_GetObjectItemCaseSensitive(o, "exec");
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");
	const cJSON *sha = cJSON_GetObjectItemCaseSensitive(o, "sha256");
	const cJSON *link = cJSON_GetObjectItemCaseSensitive(o, "link");

	memset(f, 0, sizeof(*f));
	if (!cJSON_IsString(kind) || !cJSON_IsNumber(size) || size->valuedouble < 0)
		return ROCMD_ECORRUPT;
	if (want_path && (!cJSON_IsString(path) || rocmd_fs_relpath_ok(path->valuestring) < 0))
		return ROCMD_ECORRUPT;
	f->kind = strcmp(kind->valuestring, "l") == 0 ? ROCMD_DEPLOY_SYMLINK : ROCMD_DEPLOY_FILE;
	f->exec = cJSON_IsTrue(exec);
	f->size = (uint64_t)size->valuedouble;
	if (f->kind == ROCMD_DEPLOY_SYMLINK) {
		if (!cJSON_IsString(link))
			return ROCMD_ECORRUPT;
		f->link = strdup(link->valuestring);
		if (f->link == NULL)
			return ROCMD_ENOMEM;
	} else {
		if (!cJSON_IsString(sha) || strlen(sha->valuestring) != 64)
			return ROCMD_ECORRUPT;
		memcpy(f->sha256, sha->valuestring, ROCMD_SHA256_HEX);
	}
	if (want_path && (f->path = strdup(path->valuestring)) == NULL)
		return ROCMD_ENOMEM;
	return 0;
}

static void
file_free(struct rocmd_deploy_file *f)
{
	free((char *)f->path);
	free((char *)f->link);
	free((char *)f->source);
}

/* The file list ARR into *OUT (*N of them; freed by the caller's
 * rocmd_deploy_files_free even on failure), each file's source
 * SOURCE_ROOT/<path> when SOURCE_ROOT is given. */
static int
files_parse(const cJSON *arr, const char *source_root, struct rocmd_deploy_file **out, size_t *n)
{
	const cJSON *it;
	int rc;

	if (!cJSON_IsArray(arr))
		return ROCMD_ECORRUPT;
	*out = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(**out));
	if (*out == NULL)
		return ROCMD_ENOMEM;
	cJSON_ArrayForEach(it, arr)
	{
		struct rocmd_deploy_file *f = &(*out)[*n];
		if ((rc = file_parse(it, f, 1)) < 0) {
			file_free(f);
			return rc;
		}
		(*n)++;
		if (source_root != NULL && f->kind == ROCMD_DEPLOY_FILE &&
		    asprintf((char **)&f->source, "%s/%s", source_root, f->path) < 0) {
			f->source = NULL;
			return ROCMD_ENOMEM;
		}
	}
	return 0;
}

int
deploy_manifest_parse(const cJSON *m, const char *source_root, const char *binary_source,
                      struct rocmd_deploy_files *out)
{
	const cJSON *bin = cJSON_GetObjectItemCaseSensitive(m, "binary");
	const cJSON *label = cJSON_GetObjectItemCaseSensitive(m, "label");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(m, "hipblaslt");
	char lt_root[DEPLOY_PATH_MAX + 16];
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->label = strdup(cJSON_IsString(label) ? label->valuestring : "");
	if (out->label == NULL) {
		rc = ROCMD_ENOMEM;
		goto fail;
	}
	if ((rc = files_parse(cJSON_GetObjectItemCaseSensitive(m, "files"), source_root,
	                      &out->files, &out->n)) < 0)
		goto fail;
	if (cJSON_IsArray(lt)) {
		/* A backup keeps hipBLASLt's folder beside library/: hipblaslt/. */
		if (source_root != NULL) {
			const char *slash = strrchr(source_root, '/');
			snprintf(lt_root, sizeof(lt_root), "%.*s/hipblaslt",
			         (int)(slash != NULL ? slash - source_root : 0), source_root);
		}
		out->has_lt = 1;
		if ((rc = files_parse(lt, source_root != NULL ? lt_root : NULL, &out->lt_files,
		                      &out->nlt)) < 0)
			goto fail;
	}
	if (cJSON_IsObject(bin)) {
		out->binary = calloc(1, sizeof(*out->binary));
		if (out->binary == NULL) {
			rc = ROCMD_ENOMEM;
			goto fail;
		}
		if ((rc = file_parse(bin, out->binary, 0)) < 0)
			goto fail;
		if (binary_source != NULL &&
		    (out->binary->source = strdup(binary_source)) == NULL) {
			rc = ROCMD_ENOMEM;
			goto fail;
		}
	}
	return 0;
fail:
	rocmd_deploy_files_free(out);
	return rc;
}

void
rocmd_deploy_files_free(struct rocmd_deploy_files *f)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < f->n; i++)
		file_free(&f->files[i]);
	free(f->files);
	for (size_t i = 0; i < f->nlt; i++)
		file_free(&f->lt_files[i]);
	free(f->lt_files);
	if (f->binary != NULL)
		file_free(f->binary);
	free(f->binary);
	free(f->label);
	memset(f, 0, sizeof(*f));
}

/* ---- the state folder's records of each target ---- */

int
rocmd_deploy_pending(const char *state_dir, char ***names, size_t *n)
{
	char path[DEPLOY_PATH_MAX], j[DEPLOY_PATH_MAX * 2];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;
	int rc = 0;

	*names = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/deploy", state_dir);
	if ((d = rocmd_dir_open(path)) == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((de = rocmd_dir_read(d)) != NULL) {
		char **p;
		if (rocmd_deploy_name_check(de->d_name) < 0)
			continue;
		snprintf(j, sizeof(j), "%s/%s/journal", path, de->d_name);
		if (rocmd_fs_kind_in(NULL, j, NULL, NULL) <= 0)
			continue;
		if ((p = realloc(*names, (*n + 1) * sizeof(**names))) == NULL ||
		    (p[*n] = strdup(de->d_name)) == NULL) {
			if (p != NULL)
				*names = p;
			rc = ROCMD_ENOMEM;
			break;
		}
		*names = p;
		(*n)++;
	}
	rocmd_dir_close(d);
	if (rc < 0) {
		for (size_t i = 0; i < *n; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		*n = 0;
	}
	return rc;
}

int
rocmd_deploy_current_load(const char *state_dir, const char *name, struct rocmd_deploy_files *out,
                          char *why, size_t whylen)
{
	char path[DEPLOY_PATH_MAX];
	cJSON *cur = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (rocmd_deploy_name_check(name) < 0)
		return ROCMD_EINVAL;
	snprintf(path, sizeof(path), "%s/deploy/%s/current.json", state_dir, name);
	if ((rc = rocmd_fs_json_read(path, &cur)) < 0) {
		snprintf(why, whylen, "%s: %s", path,
		         rc == -ENOENT ? "nothing deployed" : rocmd_strerror(rc));
		return rc == -ENOENT ? ROCMD_ENOTFOUND : rc;
	}
	rc = deploy_manifest_parse(cur, NULL, NULL, out);
	if (rc < 0)
		snprintf(why, whylen, "%s is damaged", path);
	cJSON_Delete(cur);
	return rc;
}

int
deploy_kept_files(const char *state_dir, const char *name, unsigned flags,
                  struct rocmd_deploy_files *out, char *why, size_t whylen)
{
	int rc;

	if (!(flags & ROCMD_DEPLOY_NEW_ORIGINALS)) {
		/* What rocmd's last deploy or rollback put in place. */
		rc = rocmd_deploy_current_load(state_dir, name, out, why, whylen);
		if (rc != ROCMD_ENOTFOUND)
			return rc;
	}
	/* The originals are in place (the backup was just made when needed). */
	rc = rocmd_deploy_backup_load(state_dir, name, out, why, whylen);
	if (rc == ROCMD_ENOTFOUND && (flags & ROCMD_DEPLOY_NO_BACKUP)) {
		memset(out, 0, sizeof(*out));
		why[0] = '\0';
		return 0;
	}
	return rc;
}
