/*
 * The backup of a target's originals (I1): made once, on the first deploy,
 * under <state>/deploy/<name>/backup/ (library/, hipblaslt/ for the target's
 * hipBLASLt folder, binary, manifest.json), each
 * file hashed while copied and hashed again from the copy after it is on
 * disk. The manifest is written last: a backup without one was cut short
 * and is made again; a backup with one is never touched by a deploy, only
 * by rocmd_deploy_backup_discard on the user's request.
 *
 * People who replaced rocBLAS by hand know two names: bin\rocblas_backup\
 * (the renamed bin\rocblas folder) and bin\rocblas_backup.dll. When such a
 * backup exists and its content checks out (a library folder with a Tensile
 * index whose every file reads, and the binary beside it) it is what the
 * originals are, since the target itself then holds the hand-installed
 * build: it is adopted (copied and hashed into the state folder). With
 * ROCMD_DEPLOY_MANUAL_BACKUP the state copy is also written under those names
 * when they are free; they are never overwritten.
 */
#include "deploy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/failpoint.h"
#include "common/paths.h"
#include "deploy-internal.h"
#include "daemon/sdk/rocblas-library.h"

static int
is_dir(const char *root, const char *path)
{
	return rocmd_fs_kind_in(root, path, NULL, NULL) == 'd';
}

static int
is_file(const char *root, const char *path)
{
	return rocmd_fs_kind_in(root, path, NULL, NULL) == 'f';
}

/* Where target T keeps its manual backup (the names people use by hand). */
struct manual {
	char lib[DEPLOY_PATH_MAX], bin[DEPLOY_PATH_MAX];
	/* The roots they lie below (deploy_root_of), NULL when outside both:
	 * then there are no manual names for this target. */
	const char *lroot, *broot;
};

/*
 * The manual backup names for the target of P: the library folder's parent
 * named rocblas (Windows bin\rocblas\library, AMD's lib/rocblas/library)
 * gives <grandparent>/rocblas_backup/<folder>; any other layout gives
 * <parent>/rocblas_backup/<folder>. The binary: <its folder>/rocblas_backup.dll
 * on Windows, <the backup folder's parent>/rocblas_backup/<BINARY's name> on
 * Linux (a librocblas.so name in a library folder would be found by ldconfig).
 */
static void
manual_names(const struct deploy_paths *p, const char *binary, int windows, struct manual *m)
{
	char parent[DEPLOY_PATH_MAX];
	const char *base = strrchr(p->lib, '/') + 1, *pbase;
	char *slash;

	memset(m, 0, sizeof(*m));
	rocmd_fs_fmt(parent, sizeof(parent), "%s", p->parent);
	slash = strrchr(parent, '/');
	pbase = slash != NULL ? slash + 1 : parent;
	if (strcmp(pbase, "rocblas") == 0 && slash != NULL)
		*slash = '\0';
	rocmd_fs_fmt(m->lib, sizeof(m->lib), "%s/rocblas_backup/%s", parent, base);
	m->lroot = deploy_root_of(p, m->lib);
	if (binary == NULL || !p->has_binary)
		return;
	if (windows) {
		rocmd_fs_fmt(m->bin, sizeof(m->bin), "%s/rocblas_backup.dll", p->bin_dir);
	} else {
		char dir[DEPLOY_PATH_MAX];
		rocmd_fs_fmt(dir, sizeof(dir), "%s", m->lib);
		*strrchr(dir, '/') = '\0';
		rocmd_fs_fmt(m->bin, sizeof(m->bin), "%s/%s", dir, strrchr(binary, '/') + 1);
	}
	m->broot = deploy_root_of(p, m->bin);
}

/* A manual backup checks out when it is a library folder rocBLAS could load
 * (an index) and, for a target with a binary, the binary is there too. */
static int
manual_ok(const struct manual *m, int want_bin)
{
	struct rocmd_rocblas_lib l;
	char why[256];
	int ok;

	if (m->lroot == NULL || !is_dir(m->lroot, m->lib) ||
	    (want_bin && (m->broot == NULL || !is_file(m->broot, m->bin))))
		return 0;
	if (rocmd_rocblas_inspect(m->lib, ROCMD_ROCBLAS_SKIP_DAT, NULL, &l, why, sizeof(why)) < 0)
		return 0;
	ok = l.index != ROCMD_ROCBLAS_INDEX_NONE && l.nfiles > 0;
	rocmd_rocblas_lib_free(&l);
	return ok;
}

/* Whether file F (path and hash) is one of OURS: rocmd put it there. */
static int
is_ours(const struct rocmd_deploy_file *f, const struct rocmd_deploy_file *ours, size_t nours)
{
	for (size_t i = 0; i < nours; i++)
		if (ours[i].path != NULL && strcmp(ours[i].path, f->path) == 0 &&
		    strcmp(ours[i].sha256, f->sha256) == 0)
			return 1;
	return 0;
}

/* Copies tree SRC (below SROOT) into the new folder DST (below DROOT),
 * hashing; fills FILES (n of them). A file that is one of OURS (NOURS) is
 * copied and hashed, then removed again and left out: rocmd put it there. */
static int
copy_tree(const char *sroot, const char *src, const char *droot, const char *dst,
          const struct rocmd_deploy_file *ours, size_t nours, struct rocmd_deploy_file **files,
          size_t *nfiles, uint64_t *bytes, char *why, size_t whylen)
{
	struct rocmd_fs_copy_stats st = {.reflink = 1};
	struct rocmd_fs_entry *e = NULL;
	size_t ne = 0;
	int rc;

	*files = NULL;
	*nfiles = 0;
	if ((rc = rocmd_fs_walk_in(sroot, src, 0, &e, &ne, why, whylen)) < 0)
		return rc;
	if ((rc = rocmd_fs_mkdir_in(droot, dst, 0755)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot create %s: %s", dst, rocmd_strerror(rc));
		goto out;
	}
	*files = calloc(ne + 1, sizeof(**files));
	if (*files == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ne; i++) {
		char from[DEPLOY_PATH_MAX * 2], to[DEPLOY_PATH_MAX * 2];
		struct rocmd_deploy_file *f;

		rocmd_fs_fmt(from, sizeof(from), "%s/%s", src, e[i].path);
		rocmd_fs_fmt(to, sizeof(to), "%s/%s", dst, e[i].path);
		if (e[i].kind == 'd') {
			rc = rocmd_fs_mkdir_in(droot, to, 0755);
		} else {
			f = &(*files)[*nfiles];
			f->path = strdup(e[i].path);
			if (f->path == NULL) {
				rc = ROCMD_ENOMEM;
				goto out;
			}
			(*nfiles)++;
			f->exec = e[i].exec;
			if (e[i].kind == 'l') {
				f->kind = ROCMD_DEPLOY_SYMLINK;
				f->link = strdup(e[i].link);
				rc = f->link == NULL ? ROCMD_ENOMEM
				                     : rocmd_fs_symlink_in(droot, e[i].link, to);
			} else {
				f->kind = ROCMD_DEPLOY_FILE;
				f->size = e[i].size;
				rc = rocmd_fs_copy_file_in(sroot, from, droot, to,
				                           e[i].exec ? 0755 : 0644, 0, NULL,
				                           f->sha256, &st);
				if (rc == 0 && nours > 0 && is_ours(f, ours, nours)) {
					rc = rocmd_fs_unlink_in(droot, to);
					free((char *)f->path);
					memset(f, 0, sizeof(*f));
					(*nfiles)--;
				}
			}
		}
		if (rc < 0) {
			rocmd_fs_fmt(why, whylen, "cannot back up %s: %s", from,
			             rocmd_strerror(rc));
			goto out;
		}
	}
	*bytes = st.bytes;
out:
	rocmd_fs_entries_free(e, ne);
	return rc;
}

static void
files_free(struct rocmd_deploy_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)files[i].path);
		free((char *)files[i].link);
	}
	free(files);
}

static int
info_from(const char *mpath, struct rocmd_deploy_backup_info *info)
{
	struct rocmd_deploy_files f;
	cJSON *m = NULL;
	const cJSON *d;
	int rc;

	if ((rc = rocmd_fs_json_read(mpath, &m)) < 0)
		return rc;
	if ((rc = deploy_manifest_parse(m, NULL, NULL, &f)) == 0) {
		info->exists = 1;
		info->files = f.n;
		info->has_binary = f.binary != NULL;
		info->has_lt = f.has_lt;
		info->lt_files = f.nlt;
		for (size_t i = 0; i < f.n; i++)
			info->bytes += f.files[i].size;
		for (size_t i = 0; i < f.nlt; i++)
			info->bytes += f.lt_files[i].size;
		rocmd_deploy_files_free(&f);
	}
	info->adopted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "adopted"));
	d = cJSON_GetObjectItemCaseSensitive(m, "digest");
	if (cJSON_IsString(d))
		rocmd_fs_fmt(info->manifest, sizeof(info->manifest), "%s", d->valuestring);
	cJSON_Delete(m);
	return rc;
}

/* Copies the state backup to the manual names of M where those are free. */
static int
manual_copy(const char *bdir, const struct manual *m, int has_binary, char *why, size_t whylen)
{
	char src[DEPLOY_PATH_MAX + 16], tmp[DEPLOY_PATH_MAX + 16];
	struct rocmd_deploy_file *files = NULL;
	size_t n = 0;
	uint64_t bytes = 0;
	int rc = 0;

	if (m->lroot == NULL)
		return 0; /* no such names below the target's root */
	if (!is_dir(m->lroot, m->lib) && !is_file(m->lroot, m->lib)) {
		char parent[DEPLOY_PATH_MAX];
		rocmd_fs_fmt(parent, sizeof(parent), "%s", m->lib);
		*strrchr(parent, '/') = '\0';
		if (!is_dir(m->lroot, parent) &&
		    (rc = rocmd_fs_mkdir_in(m->lroot, parent, 0755)) < 0) {
			rocmd_fs_fmt(why, whylen, "cannot create %s: %s", parent,
			             rocmd_strerror(rc));
			return rc;
		}
		rocmd_fs_fmt(src, sizeof(src), "%s/library", bdir);
		rocmd_fs_fmt(tmp, sizeof(tmp), "%s.rocmd-tmp", m->lib);
		if ((rc = rocmd_fs_remove_tree_in(m->lroot, tmp, NULL)) < 0 ||
		    (rc = copy_tree(NULL, src, m->lroot, tmp, NULL, 0, &files, &n, &bytes, why,
		                    whylen)) < 0 ||
		    (rc = rocmd_fs_syncfs_in(m->lroot, tmp)) < 0 ||
		    (rc = rocmd_fs_rename_in(m->lroot, tmp, m->lib)) < 0) {
			files_free(files, n);
			rocmd_fs_remove_tree_in(m->lroot, tmp, NULL);
			if (why[0] == '\0')
				rocmd_fs_fmt(why, whylen, "cannot write %s: %s", m->lib,
				             rocmd_strerror(rc));
			return rc;
		}
		files_free(files, n);
	}
	if (has_binary && m->broot != NULL && m->bin[0] != '\0' && !is_file(m->broot, m->bin) &&
	    !is_dir(m->broot, m->bin)) {
		struct rocmd_fs_copy_stats st = {.reflink = 1};
		rocmd_fs_fmt(src, sizeof(src), "%s/binary", bdir);
		rocmd_fs_fmt(tmp, sizeof(tmp), "%s.rocmd-tmp", m->bin);
		rocmd_fs_os_unlink_in(m->broot, tmp);
		if ((rc = rocmd_fs_copy_file_in(NULL, src, m->broot, tmp, 0755, 0, NULL, NULL,
		                                &st)) < 0 ||
		    (rc = rocmd_fs_rename_in(m->broot, tmp, m->bin)) < 0) {
			rocmd_fs_os_unlink_in(m->broot, tmp);
			rocmd_fs_fmt(why, whylen, "cannot write %s: %s", m->bin,
			             rocmd_strerror(rc));
			return rc;
		}
	}
	return 0;
}

/* Renames the complete backup BDIR (in DIR) to backup.<N>, the lowest free N:
 * the originals an SDK update replaced stay, as an earlier generation. */
static int
retire_backup(const char *dir, const char *bdir, int *kept, char *why, size_t whylen)
{
	char old[DEPLOY_PATH_MAX + 32];
	int rc;

	for (int k = 1; k < 1000; k++) {
		rocmd_fs_fmt(old, sizeof(old), "%s/backup.%d", dir, k);
		if (rocmd_fs_kind(old, NULL, NULL) != 0)
			continue;
		if ((rc = rocmd_fs_rename(bdir, old)) < 0 || (rc = rocmd_fs_fsync_dir(dir)) < 0) {
			rocmd_fs_fmt(why, whylen, "cannot keep the earlier backup as %s: %s", old,
			             rocmd_strerror(rc));
			return rc;
		}
		*kept = k;
		return 0;
	}
	rocmd_fs_fmt(why, whylen, "999 earlier backups under %s: discard some first", dir);
	return ROCMD_EEXISTS;
}

/* Reads back from disk the backup just written (LIB, LT when not NULL, BIN
 * when not NULL) and compares it with what was copied: the file lists and
 * BINARY's hash; 0 or ROCMD_ECORRUPT with WHY. */
static int
check_backup(const char *lib, const struct rocmd_deploy_file *files, size_t n, const char *lt,
             const struct rocmd_deploy_file *lt_files, size_t nlt, const char *bin,
             const struct rocmd_deploy_file *binary, const char *src_bin, char *why,
             size_t whylen)
{
	uint64_t checked, bad;
	char first[256];
	int rc;

	rc = deploy_check_tree(NULL, lib, files, n, &checked, &bad, first, sizeof(first), NULL,
	                       NULL, "backup", why, whylen);
	if (rc == 0 && bad == 0 && lt != NULL)
		rc = deploy_check_tree(NULL, lt, lt_files, nlt, &checked, &bad, first,
		                       sizeof(first), NULL, NULL, "backup", why, whylen);
	if (rc == 0 && bad > 0) {
		rocmd_fs_fmt(why, whylen, "the backup copy differs from the original: %s", first);
		rc = ROCMD_ECORRUPT;
	}
	if (rc == 0 && bin != NULL) {
		char hex[ROCMD_SHA256_HEX];
		uint64_t size;
		if ((rc = rocmd_fs_hash_file(bin, hex, &size)) == 0 &&
		    strcmp(hex, binary->sha256) != 0) {
			rocmd_fs_fmt(why, whylen, "the backup copy of the binary differs from %s",
			             src_bin);
			rc = ROCMD_ECORRUPT;
		}
	}
	return rc;
}

/* The newest earlier generation backup.<N> of target NAME with a manifest
 * (by the time it was made, as rocmd_deploy_generations orders them), into
 * OUT ("" none): what a new backup cut short after the rename was made from. */
static void
newest_generation(const char *state_dir, const char *name, const char *dir, char *out,
                  size_t outlen)
{
	struct rocmd_deploy_generation g[ROCMD_DEPLOY_GENERATIONS_MAX];
	size_t n = 0;

	out[0] = '\0';
	if (rocmd_deploy_generations(state_dir, name, g, ROCMD_DEPLOY_GENERATIONS_MAX, &n) == 0 &&
	    n > 0 && g[n - 1].gen > 0)
		rocmd_fs_fmt(out, outlen, "%s/backup.%d", dir, g[n - 1].gen);
}

/* Copies folder SRC of an earlier generation to DST, which must then hold
 * exactly WANT (that generation's manifest): a damaged generation is never
 * carried into a new one. */
static int
copy_prev(const char *src, const char *dst, const struct rocmd_deploy_file *want, size_t nwant,
          struct rocmd_deploy_file **files, size_t *n, uint64_t *bytes, char *why, size_t whylen)
{
	char a[ROCMD_SHA256_HEX], b[ROCMD_SHA256_HEX];
	cJSON *ma, *mb;
	int rc;

	*files = NULL;
	*n = 0;
	if (!is_dir(NULL, src) && nwant == 0) {
		if ((rc = rocmd_fs_mkdir(dst, 0755)) < 0)
			rocmd_fs_fmt(why, whylen, "cannot create %s: %s", dst, rocmd_strerror(rc));
		return rc;
	}
	if ((rc = copy_tree(NULL, src, NULL, dst, NULL, 0, files, n, bytes, why, whylen)) < 0)
		return rc;
	ma = deploy_manifest_json("", *files, *n, NULL, 0, NULL, 0, a);
	mb = deploy_manifest_json("", want, nwant, NULL, 0, NULL, 0, b);
	rc = ma == NULL || mb == NULL ? ROCMD_ENOMEM : strcmp(a, b) != 0 ? ROCMD_ECORRUPT : 0;
	cJSON_Delete(ma);
	cJSON_Delete(mb);
	if (rc == ROCMD_ECORRUPT)
		rocmd_fs_fmt(
		    why, whylen,
		    "%s no longer holds what its manifest recorded: that generation of the "
		    "originals is damaged, and a new one is not made from it",
		    src);
	return rc;
}

/* A backup being made: where from, and what it holds. */
struct bk {
	const struct rocmd_deploy_target *t;
	unsigned flags;
	/* The earlier generation (a folder under the target's state, "" none)
	 * and its manifest: the source of each folder whose originals did not
	 * change. */
	char prev[DEPLOY_PATH_MAX + 32];
	struct rocmd_deploy_files pf;
	const char *src_lib, *src_lroot, *src_bin, *src_broot;
	struct rocmd_deploy_file *files, binary, *lt_files;
	size_t n, nlt;
	int has_binary, has_lt, adopted;
	uint64_t bytes;
};

/* rocBLAS's library folder and binary into LIB and BIN: the earlier
 * generation's unless ROCMD_DEPLOY_NEW_ORIGINALS, else the target's (or a
 * manual backup's, adopted) less what rocmd put there. */
static int
backup_rocblas(struct bk *b, const struct manual *man, const char *lib, const char *bin, char *why,
               size_t whylen)
{
	const struct rocmd_deploy_target *t = b->t;
	struct rocmd_fs_copy_stats st = {.reflink = 1};
	char src[DEPLOY_PATH_MAX + 48];
	int rc;

	if (b->prev[0] != '\0' && !(b->flags & ROCMD_DEPLOY_NEW_ORIGINALS)) {
		rocmd_fs_fmt(src, sizeof(src), "%s/library", b->prev);
		if ((rc = copy_prev(src, lib, b->pf.files, b->pf.n, &b->files, &b->n, &b->bytes,
		                    why, whylen)) < 0 ||
		    b->pf.binary == NULL)
			return rc;
		rocmd_fs_fmt(src, sizeof(src), "%s/binary", b->prev);
		if ((rc = rocmd_fs_copy_file_in(NULL, src, NULL, bin, 0755, b->pf.binary->size,
		                                b->pf.binary->sha256, b->binary.sha256, &st)) < 0) {
			rocmd_fs_fmt(why, whylen, "cannot back up %s: %s", src, rocmd_strerror(rc));
			return rc;
		}
		b->binary.kind = ROCMD_DEPLOY_FILE;
		b->binary.exec = 1;
		b->binary.size = b->pf.binary->size;
		b->has_binary = 1;
		return 0;
	}
	if (b->prev[0] == '\0' && !(b->flags & ROCMD_DEPLOY_NEW_LT_ORIGINALS) &&
	    manual_ok(man, t->binary != NULL)) {
		b->src_lib = man->lib;
		b->src_lroot = man->lroot;
		b->src_bin = t->binary != NULL ? man->bin : NULL;
		b->src_broot = man->broot;
		b->adopted = 1;
	}
	b->has_binary = b->src_bin != NULL && is_file(b->src_broot, b->src_bin);
	if (is_dir(b->src_lroot, b->src_lib)) {
		/* New originals: what rocmd put there is left out (I1). */
		const struct rocmd_deploy_file *ours = b->prev[0] ? t->ours : NULL;
		size_t nours = b->prev[0] ? t->nours : 0;
		rc = copy_tree(b->src_lroot, b->src_lib, NULL, lib, ours, nours, &b->files, &b->n,
		               &b->bytes, why, whylen);
		if (rc < 0)
			return rc;
	}
	if (!is_dir(b->src_lroot, b->src_lib) && (rc = rocmd_fs_mkdir(lib, 0755)) < 0)
		return rc;
	if (!b->has_binary)
		return 0;
	if ((rc = rocmd_fs_copy_file_in(b->src_broot, b->src_bin, NULL, bin, 0755, 0, NULL,
	                                b->binary.sha256, &st)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot back up %s: %s", b->src_bin, rocmd_strerror(rc));
		return rc;
	}
	b->binary.kind = ROCMD_DEPLOY_FILE;
	b->binary.exec = 1;
	if (rocmd_fs_kind(bin, &b->binary.size, NULL) != 'f')
		b->binary.size = 0;
	return 0;
}

/* hipBLASLt's folder into LT: the earlier generation's when it has one,
 * unless ROCMD_DEPLOY_NEW_LT_ORIGINALS; else the target's (never a manual
 * backup's) less what rocmd put there. One that cannot be resolved is left
 * out (and no hipBLASLt is deployed over it). */
static int
backup_lt(struct bk *b, const char *lt, char *why, size_t whylen)
{
	const struct rocmd_deploy_target *t = b->t;
	struct rocmd_deploy_target one = *t;
	struct deploy_paths ltp;
	char src[DEPLOY_PATH_MAX + 48];
	uint64_t ltbytes = 0;
	int rc, fresh = (b->flags & ROCMD_DEPLOY_NEW_LT_ORIGINALS) != 0;

	if (b->prev[0] != '\0' && !fresh && b->pf.has_lt) {
		rocmd_fs_fmt(src, sizeof(src), "%s/hipblaslt", b->prev);
		rc = copy_prev(src, lt, b->pf.lt_files, b->pf.nlt, &b->lt_files, &b->nlt, &ltbytes,
		               why, whylen);
		b->has_lt = rc == 0;
		b->bytes += ltbytes;
		return rc;
	}
	if (t->lt_dir == NULL)
		return 0;
	one.lib_dir = t->lt_dir;
	one.binary = NULL;
	b->has_lt = deploy_paths(&one, &ltp, why, whylen) == 0 && ltp.lib_kind == 'd';
	why[0] = '\0';
	if (b->has_lt &&
	    (rc = copy_tree(ltp.lroot, ltp.lib, NULL, lt, b->prev[0] ? t->lt_ours : NULL,
	                    b->prev[0] ? t->nlt_ours : 0, &b->lt_files, &b->nlt, &ltbytes, why,
	                    whylen)) < 0)
		return rc;
	b->bytes += ltbytes;
	return 0;
}

/* Writes B's manifest to MPATH durably (the backup's last step) into INFO. */
static int
backup_commit(struct bk *b, const char *bdir, const char *mpath, char *why, size_t whylen,
              struct rocmd_deploy_backup_info *info)
{
	char lib[DEPLOY_PATH_MAX + 16], lt[DEPLOY_PATH_MAX + 16], bin[DEPLOY_PATH_MAX + 16];
	cJSON *m;
	int rc;

	rocmd_fs_fmt(lib, sizeof(lib), "%s/library", bdir);
	rocmd_fs_fmt(lt, sizeof(lt), "%s/hipblaslt", bdir);
	rocmd_fs_fmt(bin, sizeof(bin), "%s/binary", bdir);
	if ((rc = rocmd_fs_syncfs(bdir)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot flush the backup: %s", rocmd_strerror(rc));
		return rc;
	}
	/* Read back from disk what was written and compare: the backup is what
	 * users trust, so it is checked, not assumed. */
	if ((rc = check_backup(lib, b->files, b->n, b->has_lt ? lt : NULL, b->lt_files, b->nlt,
	                       b->has_binary ? bin : NULL, &b->binary,
	                       b->src_bin != NULL ? b->src_bin : "the earlier backup", why,
	                       whylen)) < 0)
		return rc;
	if ((m = deploy_manifest_json("original", b->files, b->n, b->has_binary ? &b->binary : NULL,
	                              b->has_lt, b->lt_files, b->nlt, info->manifest)) == NULL)
		return ROCMD_ENOMEM;
	cJSON_AddBoolToObject(m, "adopted", b->adopted);
	cJSON_AddStringToObject(m, "source", b->src_lib);
	cJSON_AddBoolToObject(m, "absent", !is_dir(b->src_lroot, b->src_lib));
	cJSON_AddNumberToObject(m, "created_unix", (double)time(NULL));
	if ((rc = rocmd_fs_json_write(mpath, m)) < 0)
		rocmd_fs_fmt(why, whylen, "cannot write %s: %s", mpath, rocmd_strerror(rc));
	cJSON_Delete(m);
	return rc;
}

int
rocmd_deploy_backup(const char *state_dir, const struct rocmd_deploy_target *t, unsigned flags,
                    struct rocmd_deploy_backup_info *info, char *why, size_t whylen)
{
	struct deploy_paths p;
	struct manual man;
	struct bk b = {.t = t, .flags = flags};
	char dir[DEPLOY_PATH_MAX], bdir[DEPLOY_PATH_MAX + 16], mpath[DEPLOY_PATH_MAX + 32];
	char lib[DEPLOY_PATH_MAX + 16], bin[DEPLOY_PATH_MAX + 16], nbin[DEPLOY_PATH_MAX];
	char lt[DEPLOY_PATH_MAX + 16];
	int rc, retired = 0;
	int renew = (flags & (ROCMD_DEPLOY_NEW_ORIGINALS | ROCMD_DEPLOY_NEW_LT_ORIGINALS)) != 0;

	memset(info, 0, sizeof(*info));
	why[0] = '\0';
	if (rocmd_deploy_name_check(t->name) < 0 || t->lib_dir == NULL ||
	    (t->binary != NULL && (rocmd_fs_path_norm(t->binary, nbin, sizeof(nbin)) < 0 ||
	                           strchr(nbin, '/') == NULL))) {
		rocmd_fs_fmt(why, whylen, "invalid target");
		return ROCMD_EINVAL;
	}
	/* The target's paths, canonical and '/'-separated (Windows: "C:/..."),
	 * every folder on their way checked (I4). */
	if ((rc = deploy_paths(t, &p, why, whylen)) < 0)
		return rc;
	manual_names(&p, t->binary != NULL ? nbin : NULL, t->windows, &man);
	b.src_lib = p.lib;
	b.src_lroot = p.lroot;
	b.src_bin = p.has_binary && p.bin_kind == 'f' ? p.bin : NULL;
	b.src_broot = p.broot;
	rocmd_fs_fmt(dir, sizeof(dir), "%s/deploy/%s", state_dir, t->name);
	rocmd_fs_fmt(bdir, sizeof(bdir), "%s/backup", dir);
	rocmd_fs_fmt(mpath, sizeof(mpath), "%s/manifest.json", bdir);
	if (is_file(NULL, mpath) && renew) {
		if ((rc = retire_backup(dir, bdir, &retired, why, whylen)) < 0)
			return rc;
		rocmd_fs_fmt(b.prev, sizeof(b.prev), "%s/backup.%d", dir, retired);
	} else if (is_file(NULL, mpath)) {
		/* Made before: never made again (I1). */
		if ((rc = info_from(mpath, info)) < 0)
			rocmd_fs_fmt(why, whylen, "the backup manifest %s is damaged", mpath);
		else if ((flags & ROCMD_DEPLOY_MANUAL_BACKUP) && !info->adopted)
			rc = manual_copy(bdir, &man, info->has_binary, why, whylen);
		return rc;
	} else if (renew) {
		/* Cut short after the rename: the generation it retired. */
		newest_generation(state_dir, t->name, dir, b.prev, sizeof(b.prev));
	}
	if (b.prev[0] != '\0') {
		char pm[DEPLOY_PATH_MAX + 64];
		cJSON *m = NULL;
		rocmd_fs_fmt(pm, sizeof(pm), "%s/manifest.json", b.prev);
		if ((rc = rocmd_fs_json_read(pm, &m)) < 0 ||
		    (rc = deploy_manifest_parse(m, NULL, NULL, &b.pf)) < 0) {
			cJSON_Delete(m);
			rocmd_fs_fmt(why, whylen, "the backup manifest %s is damaged", pm);
			return rc;
		}
		cJSON_Delete(m);
	}
	if ((rc = rocmd_paths_mkdir_p(dir, 0755)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot create %s: %s", dir, rocmd_strerror(rc));
		goto out;
	}
	/* An incomplete backup (no manifest) of an earlier run goes. */
	if ((rc = rocmd_fs_remove_tree(bdir)) < 0 || (rc = rocmd_fs_mkdir(bdir, 0700)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot prepare %s: %s", bdir, rocmd_strerror(rc));
		goto out;
	}
	rocmd_fs_fmt(lib, sizeof(lib), "%s/library", bdir);
	rocmd_fs_fmt(bin, sizeof(bin), "%s/binary", bdir);
	rocmd_fs_fmt(lt, sizeof(lt), "%s/hipblaslt", bdir);
	if ((rc = backup_rocblas(&b, &man, lib, bin, why, whylen)) < 0 ||
	    (rc = backup_lt(&b, lt, why, whylen)) < 0 ||
	    (rc = backup_commit(&b, bdir, mpath, why, whylen, info)) < 0)
		goto out;
	ROCMD_KILLPOINT("backup.done");
	info->exists = 1;
	info->adopted = b.adopted;
	info->retired = retired;
	info->files = b.n;
	info->bytes = b.bytes;
	info->has_binary = b.has_binary;
	info->has_lt = b.has_lt;
	info->lt_files = b.nlt;
	if ((flags & ROCMD_DEPLOY_MANUAL_BACKUP) && !b.adopted)
		rc = manual_copy(bdir, &man, b.has_binary, why, whylen);
out:
	files_free(b.files, b.n);
	files_free(b.lt_files, b.nlt);
	rocmd_deploy_files_free(&b.pf);
	if (rc < 0 && !is_file(NULL, mpath))
		rocmd_fs_remove_tree(bdir);
	return rc;
}

/*
 * hipBLASLt's originals added to target T's complete backup made without
 * them (before the target had a hipBLASLt folder), before a deploy first
 * replaces that folder: rocmd never deployed there, so what it holds is the
 * vendor's. The folder is copied and read back beside the manifest, which is
 * then written again, durably, listing it: until then the backup is the one
 * it was (a copy cut short is removed by the next try). *ADDED 1 when done.
 */
int
deploy_backup_add_lt(const char *state_dir, const struct rocmd_deploy_target *t, int *added,
                     char *why, size_t whylen)
{
	struct rocmd_deploy_target one = *t;
	struct rocmd_deploy_files f = {0};
	struct rocmd_deploy_file *lt_files = NULL;
	struct deploy_paths ltp;
	char mpath[DEPLOY_PATH_MAX + 32], lt[DEPLOY_PATH_MAX + 16], digest[ROCMD_SHA256_HEX];
	char first[256];
	uint64_t bytes = 0, checked, bad;
	size_t nlt = 0;
	cJSON *m = NULL, *nm = NULL;
	static const char *const keep[] = {"adopted", "source", "absent", "created_unix", NULL};
	int rc, copying = 0;

	*added = 0;
	why[0] = '\0';
	if (t->lt_dir == NULL || rocmd_deploy_name_check(t->name) < 0)
		return 0;
	rocmd_fs_fmt(mpath, sizeof(mpath), "%s/deploy/%s/backup/manifest.json", state_dir, t->name);
	rocmd_fs_fmt(lt, sizeof(lt), "%s/deploy/%s/backup/hipblaslt", state_dir, t->name);
	if ((rc = rocmd_fs_json_read(mpath, &m)) < 0 ||
	    (rc = deploy_manifest_parse(m, NULL, NULL, &f)) < 0) {
		rocmd_fs_fmt(why, whylen, "the backup manifest %s is damaged", mpath);
		goto out;
	}
	one.lib_dir = t->lt_dir;
	one.binary = NULL;
	if (f.has_lt || deploy_paths(&one, &ltp, why, whylen) < 0 || ltp.lib_kind != 'd') {
		why[0] = '\0';
		rc = 0; /* it has them, or there is no folder to back up */
		goto out;
	}
	copying = 1; /* from here a failure removes the partial copy */
	if ((rc = rocmd_fs_remove_tree(lt)) < 0 ||
	    (rc = copy_tree(ltp.lroot, ltp.lib, NULL, lt, NULL, 0, &lt_files, &nlt, &bytes, why,
	                    whylen)) < 0 ||
	    (rc = rocmd_fs_syncfs(lt)) < 0 ||
	    (rc = deploy_check_tree(NULL, lt, lt_files, nlt, &checked, &bad, first, sizeof(first),
	                            NULL, NULL, "backup", why, whylen)) < 0)
		goto out;
	if (bad > 0) {
		rocmd_fs_fmt(why, whylen, "the backup copy of %s differs from it: %s", ltp.lib,
		             first);
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	if ((nm = deploy_manifest_json("original", f.files, f.n, f.binary, 1, lt_files, nlt,
	                               digest)) == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (size_t i = 0; keep[i] != NULL; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, keep[i]);
		if (v != NULL)
			cJSON_AddItemToObject(nm, keep[i], cJSON_Duplicate(v, 1));
	}
	/* A write that fails after its rename may have put the new manifest in
	 * place: the copy stays (one not in the manifest is redone next time). */
	copying = 0;
	if ((rc = rocmd_fs_json_write(mpath, nm)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot write %s: %s", mpath, rocmd_strerror(rc));
		goto out;
	}
	*added = 1;
out:
	if (rc < 0 && copying && !*added)
		rocmd_fs_remove_tree(lt); /* never in the manifest: not the backup's */
	if (rc < 0 && why[0] == '\0')
		rocmd_fs_fmt(why, whylen, "cannot back up hipBLASLt's originals: %s",
		             rocmd_strerror(rc));
	files_free(lt_files, nlt);
	rocmd_deploy_files_free(&f);
	cJSON_Delete(m);
	cJSON_Delete(nm);
	return rc;
}

int
rocmd_deploy_backup_info(const char *state_dir, const char *name,
                         struct rocmd_deploy_backup_info *info)
{
	char mpath[DEPLOY_PATH_MAX];
	int rc;

	memset(info, 0, sizeof(*info));
	if (rocmd_deploy_name_check(name) < 0)
		return ROCMD_EINVAL;
	rocmd_fs_fmt(mpath, sizeof(mpath), "%s/deploy/%s/backup/manifest.json", state_dir, name);
	rc = info_from(mpath, info);
	return rc == -ENOENT ? 0 : rc;
}

int
rocmd_deploy_backup_load(const char *state_dir, const char *name, struct rocmd_deploy_files *out,
                         char *why, size_t whylen)
{
	char mpath[DEPLOY_PATH_MAX], lib[DEPLOY_PATH_MAX], bin[DEPLOY_PATH_MAX];
	cJSON *m = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (rocmd_deploy_name_check(name) < 0)
		return ROCMD_EINVAL;
	rocmd_fs_fmt(mpath, sizeof(mpath), "%s/deploy/%s/backup/manifest.json", state_dir, name);
	rocmd_fs_fmt(lib, sizeof(lib), "%s/deploy/%s/backup/library", state_dir, name);
	rocmd_fs_fmt(bin, sizeof(bin), "%s/deploy/%s/backup/binary", state_dir, name);
	if ((rc = rocmd_fs_json_read(mpath, &m)) < 0) {
		rocmd_fs_fmt(why, whylen, "%s",
		             rc == -ENOENT ? "no backup of the originals" : rocmd_strerror(rc));
		return rc == -ENOENT ? ROCMD_ENOTFOUND : rc;
	}
	rc = deploy_manifest_parse(m, lib, bin, out);
	if (rc < 0)
		rocmd_fs_fmt(why, whylen, "%s is damaged", mpath);
	cJSON_Delete(m);
	return rc;
}

int
rocmd_deploy_backup_discard(const char *state_dir, const char *name, char *why, size_t whylen)
{
	char path[DEPLOY_PATH_MAX], bdir[DEPLOY_PATH_MAX + 16];
	int rc;

	why[0] = '\0';
	if (rocmd_deploy_name_check(name) < 0)
		return ROCMD_EINVAL;
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/journal", state_dir, name);
	if (is_file(NULL, path)) {
		rocmd_fs_fmt(why, whylen, "a deploy to %s is unfinished", name);
		return ROCMD_EBUSY;
	}
	rocmd_fs_fmt(bdir, sizeof(bdir), "%s/deploy/%s/backup", state_dir, name);
	/* The manifest goes first: a half-removed backup is then an incomplete one. */
	rocmd_fs_fmt(path, sizeof(path), "%s/manifest.json", bdir);
	if ((rc = rocmd_fs_unlink(path)) < 0 || (rc = rocmd_fs_remove_tree(bdir)) < 0)
		rocmd_fs_fmt(why, whylen, "cannot remove %s: %s", bdir, rocmd_strerror(rc));
	return rc;
}
