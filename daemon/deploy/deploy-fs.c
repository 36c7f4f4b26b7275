/*
 * The deploy engine's checks of trees on disk: a library folder against the
 * file list of a manifest (exactly these files, kinds, sizes, link targets
 * and hashes, nothing else: I2), read below the target's root without
 * following any link (fs.h's _in functions).
 */
#include "deploy-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static int
dfile_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct rocmd_deploy_file *const *)a)->path,
	              (*(const struct rocmd_deploy_file *const *)b)->path);
}

static int
dfile_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct rocmd_deploy_file *const *)elem)->path);
}

static int
entry_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct rocmd_fs_entry *)elem)->path);
}

static void
note_bad(uint64_t *bad, char *first, size_t len, const char *path, const char *what)
{
	if (*bad == 0)
		rocmd_fs_fmt(first, len, "%s: %s", path, what);
	(*bad)++;
}

int
deploy_check_tree(const char *troot, const char *root, const struct rocmd_deploy_file *files,
                  size_t n, uint64_t *checked, uint64_t *bad, char *first_bad, size_t first_len,
                  rocmd_deploy_progress_fn progress, void *ctx, const char *step, char *why,
                  size_t whylen)
{
	const struct rocmd_deploy_file **sorted = NULL;
	struct rocmd_fs_entry *e = NULL;
	struct rocmd_deploy_progress pr = {.step = step, .files_total = n};
	size_t ne = 0;
	int rc;

	*checked = *bad = 0;
	first_bad[0] = '\0';
	for (size_t i = 0; i < n; i++)
		pr.bytes_total += files[i].size;
	if ((rc = rocmd_fs_walk_in(troot, root, 0, &e, &ne, why, whylen)) < 0)
		return rc;
	sorted = calloc(n > 0 ? n : 1, sizeof(*sorted));
	if (sorted == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = &files[i];
	if (n > 1)
		qsort(sorted, n, sizeof(*sorted), dfile_cmp);
	/* Anything on disk the list does not name is stale (I2). */
	for (size_t i = 0; i < ne; i++) {
		if (e[i].kind == 'd') {
			/* A folder must lead to a listed file: the first listed path
			 * sorting after "dir/" starts with it. */
			char prefix[DEPLOY_PATH_MAX + 2];
			size_t lo = 0, hi = n, plen;
			rocmd_fs_fmt(prefix, sizeof(prefix), "%s/", e[i].path);
			plen = strlen(prefix);
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (strcmp(sorted[mid]->path, prefix) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == n || strncmp(sorted[lo]->path, prefix, plen) != 0)
				note_bad(bad, first_bad, first_len, e[i].path,
				         "folder not in the manifest");
			continue;
		}
		if (bsearch(e[i].path, sorted, n, sizeof(*sorted), dfile_key_cmp) == NULL)
			note_bad(bad, first_bad, first_len, e[i].path, "file not in the manifest");
	}
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f = sorted[i];
		const struct rocmd_fs_entry *d = bsearch(f->path, e, ne, sizeof(*e), entry_key_cmp);
		char path[DEPLOY_PATH_MAX * 2], hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;

		(*checked)++;
		pr.files_done++;
		if (d == NULL) {
			note_bad(bad, first_bad, first_len, f->path, "missing");
			continue;
		}
		if (f->kind == ROCMD_DEPLOY_SYMLINK) {
			if (d->kind != 'l' || strcmp(d->link, f->link != NULL ? f->link : "") != 0)
				note_bad(bad, first_bad, first_len, f->path,
				         "not the listed symlink");
			continue;
		}
		if (d->kind != 'f' || d->size != f->size) {
			note_bad(bad, first_bad, first_len, f->path, "wrong type or size");
			continue;
		}
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", root, f->path);
		if ((rc = rocmd_fs_hash_file_in(troot, path, hex, &size)) < 0) {
			rocmd_fs_fmt(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
			goto out;
		}
		if (size != f->size || strcmp(hex, f->sha256) != 0)
			note_bad(bad, first_bad, first_len, f->path, "content differs (SHA-256)");
		pr.bytes_done += size;
		if (progress != NULL && progress(&pr, ctx) != 0) {
			rc = ROCMD_ECANCELED;
			goto out;
		}
	}
	rc = 0;
out:
	free(sorted);
	rocmd_fs_entries_free(e, ne);
	return rc;
}
