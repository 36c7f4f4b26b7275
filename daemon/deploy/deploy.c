/*
 * The deploy transaction: plan, back up, stage, journal, swap, verify, then
 * commit or roll back (docs/DEPLOY.md). The new library folder is staged in
 * full beside the target (<parent>/.rocmd-stage-<name>, same file system),
 * then swapped with it in one renameat2(RENAME_EXCHANGE), so the folder is
 * at every instant either the old tree or the new one (I2). The binary is
 * staged beside itself and renamed over the old one (on Windows, renamed
 * aside first). The journal, written durably before every step that changes
 * the target, records the paths and the device/inode of the old and new
 * trees, so recovery tells them apart without trusting names, then checks
 * the content against the manifest's hashes before keeping a new tree.
 *
 * Undo and commit are written to be run again from any point they may have
 * been cut at: run-time failure, recovery after a crash and recovery after a
 * crash during recovery all take the same path (I3).
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

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Fills folder D of target TG (LIB_DIR: its rocBLAS or its hipBLASLt folder;
 * deploy_paths) and its stage and aside names (PREFIX ".rocmd-" or
 * ".rocmd-lt-", then "stage-<name>", "old-<name>"). */
static int
dir_paths(struct txn *t, struct txn_dir *d, const struct rocmd_deploy_target *tg,
          const char *lib_dir, const char *prefix, struct deploy_paths *p, char *why, size_t whylen)
{
	struct rocmd_deploy_target one = *tg;
	char stage_name[ROCMD_DEPLOY_NAME_MAX + 24], old_name[ROCMD_DEPLOY_NAME_MAX + 24];
	int rc;

	one.lib_dir = lib_dir;
	if (lib_dir != tg->lib_dir)
		one.binary = NULL;
	if ((rc = deploy_paths(&one, p, why, whylen)) < 0)
		return rc;
	snprintf(stage_name, sizeof(stage_name), "%sstage-%s", prefix, t->name);
	snprintf(old_name, sizeof(old_name), "%sold-%s", prefix, t->name);
	snprintf(d->lroot, sizeof(d->lroot), "%s", p->lroot);
	snprintf(d->lib, sizeof(d->lib), "%s", p->lib);
	snprintf(d->parent, sizeof(d->parent), "%s", p->parent);
	d->existed = p->lib_kind == 'd';
	if (deploy_join(d->stage, d->parent, stage_name) < 0 ||
	    deploy_join(d->old, d->parent, old_name) < 0) {
		snprintf(why, whylen, "path too long");
		return ROCMD_EINVAL;
	}
	return 0;
}

/* Fills the paths of T for target TG (deploy_paths), its stage and aside
 * names, and its state folder; with TG->lt_dir hipBLASLt's folder too (T->nd
 * 2), which must resolve only when NEED_LT (it is to be replaced). Paths are
 * kept '/'-separated (Windows: "C:/Program Files/..."). */
int
deploy_txn_paths(struct txn *t, const char *state_dir, const struct rocmd_deploy_target *tg,
                 int create, int need_lt, char *why, size_t whylen)
{
	struct deploy_paths p;
	char stage_name[ROCMD_DEPLOY_NAME_MAX + 16], old_name[ROCMD_DEPLOY_NAME_MAX + 16];
	int rc;

	if (rocmd_deploy_name_check(tg->name) < 0) {
		snprintf(why, whylen, "invalid target name");
		return ROCMD_EINVAL;
	}
	snprintf(t->name, sizeof(t->name), "%s", tg->name);
	t->nd = 1;
	if (tg->lt_dir != NULL) {
		rc = dir_paths(t, &t->d[1], tg, tg->lt_dir, ".rocmd-lt-", &p, why, whylen);
		if (rc < 0 && need_lt)
			return rc;
		t->nd = rc < 0 ? 1 : 2;
		why[0] = '\0';
	}
	if ((rc = dir_paths(t, &t->d[0], tg, tg->lib_dir, ".rocmd-", &p, why, whylen)) < 0)
		return rc;
	snprintf(old_name, sizeof(old_name), ".rocmd-old-%s", t->name);
	if (deploy_path_set(t->dir, "%s/deploy/%s", state_dir, t->name) < 0 ||
	    deploy_path_set(t->journal, "%s/%s", t->dir, "journal") < 0) {
		snprintf(why, whylen, "path too long");
		return ROCMD_EINVAL;
	}
	if (!t->d[0].existed && !create) {
		snprintf(why, whylen, "%s: %s", t->d[0].lib, rocmd_strerror(-ENOENT));
		return ROCMD_ENOTFOUND;
	}
	t->windows = tg->windows != 0;
	if (!p.has_binary)
		return 0;
	t->has_binary = 1;
	snprintf(t->broot, sizeof(t->broot), "%s", p.broot);
	snprintf(t->bin, sizeof(t->bin), "%s", p.bin);
	snprintf(t->bin_dir, sizeof(t->bin_dir), "%s", p.bin_dir);
	snprintf(stage_name, sizeof(stage_name), ".rocmd-new-%s", t->name);
	if (deploy_join(t->bin_new, t->bin_dir, stage_name) < 0 ||
	    deploy_join(t->bin_old, t->bin_dir, old_name) < 0) {
		snprintf(why, whylen, "path too long");
		return ROCMD_EINVAL;
	}
	return 0;
}

static cJSON *
id_json(const struct rocmd_fs_id *id)
{
	cJSON *a = cJSON_CreateArray();
	char buf[2][24];

	/* As strings: inode numbers may exceed a double's 53 bits. */
	snprintf(buf[0], sizeof(buf[0]), "%llu", (unsigned long long)id->dev);
	snprintf(buf[1], sizeof(buf[1]), "%llu", (unsigned long long)id->ino);
	cJSON_AddItemToArray(a, cJSON_CreateString(buf[0]));
	cJSON_AddItemToArray(a, cJSON_CreateString(buf[1]));
	return a;
}

static void
id_parse(const cJSON *a, struct rocmd_fs_id *id)
{
	const cJSON *d = cJSON_GetArrayItem(a, 0), *i = cJSON_GetArrayItem(a, 1);

	id->dev = id->ino = 0;
	if (cJSON_IsString(d) && cJSON_IsString(i)) {
		id->dev = strtoull(d->valuestring, NULL, 10);
		id->ino = strtoull(i->valuestring, NULL, 10);
	}
}

/* Folder D's members of a journal: at its top for rocBLAS's, in its
 * "hipblaslt" object for hipBLASLt's. */
static void
dir_json(cJSON *o, const struct txn_dir *d)
{
	cJSON_AddStringToObject(o, "root", d->lroot);
	cJSON_AddStringToObject(o, "lib_dir", d->lib);
	cJSON_AddStringToObject(o, "stage", d->stage);
	cJSON_AddStringToObject(o, "old", d->old);
	cJSON_AddBoolToObject(o, "lib_existed", d->existed);
	cJSON_AddItemToObject(o, "new_id", id_json(&d->new_id));
	cJSON_AddItemToObject(o, "old_id", id_json(&d->old_id));
}

/* Writes the journal durably with STEP, then passes its kill point. */
static int
txn_journal(struct txn *t, const char *step)
{
	cJSON *j = cJSON_CreateObject();
	char kp[64];
	int rc;

	if (j == NULL)
		return ROCMD_ENOMEM;
	cJSON_AddNumberToObject(j, "version", t->nd > 1 ? 3 : 2);
	cJSON_AddStringToObject(j, "step", step);
	cJSON_AddStringToObject(j, "name", t->name);
	cJSON_AddStringToObject(j, "label", t->label);
	dir_json(j, &t->d[0]);
	if (t->keep0)
		cJSON_AddBoolToObject(j, "lib_kept", 1);
	if (t->nd > 1)
		dir_json(cJSON_AddObjectToObject(j, "hipblaslt"), &t->d[1]);
	cJSON_AddBoolToObject(j, "windows", t->windows);
	if (t->has_binary) {
		cJSON_AddStringToObject(j, "binary_root", t->broot);
		cJSON_AddStringToObject(j, "binary", t->bin);
		cJSON_AddStringToObject(j, "binary_new", t->bin_new);
		cJSON_AddStringToObject(j, "binary_old", t->bin_old);
		cJSON_AddItemToObject(j, "binary_new_id", id_json(&t->bin_new_id));
	} else {
		cJSON_AddNullToObject(j, "binary");
	}
	if (t->manifest != NULL)
		cJSON_AddItemReferenceToObject(j, "manifest", t->manifest);
	rc = rocmd_fs_json_write(t->journal, j);
	cJSON_Delete(j);
	if (rc < 0)
		return rc;
	snprintf(kp, sizeof(kp), "journal.%s", step);
	ROCMD_KILLPOINT(kp);
	return 0;
}

static int
str_member(const cJSON *j, const char *key, char *out, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= len)
		return ROCMD_ECORRUPT;
	snprintf(out, len, "%s", v->valuestring);
	return 0;
}

/* Folder D from journal object O (dir_json's members). */
static int
dir_from_json(const cJSON *o, struct txn_dir *d)
{
	char base[DEPLOY_PATH_MAX];

	if (str_member(o, "lib_dir", d->lib, sizeof(d->lib)) < 0 ||
	    str_member(o, "stage", d->stage, sizeof(d->stage)) < 0 ||
	    str_member(o, "old", d->old, sizeof(d->old)) < 0)
		return ROCMD_ECORRUPT;
	d->existed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "lib_existed"));
	id_parse(cJSON_GetObjectItemCaseSensitive(o, "new_id"), &d->new_id);
	id_parse(cJSON_GetObjectItemCaseSensitive(o, "old_id"), &d->old_id);
	if (rocmd_fs_path_root(d->lib) == 0 || strlen(d->lib) <= rocmd_fs_path_root(d->lib))
		return ROCMD_ECORRUPT;
	deploy_split(d->lib, d->parent, base);
	/* Version 1 journals have no roots: the folders they name act as ones. */
	if (str_member(o, "root", d->lroot, sizeof(d->lroot)) < 0)
		snprintf(d->lroot, sizeof(d->lroot), "%s", d->parent);
	if (rocmd_fs_below(d->lroot, d->lib) == NULL ||
	    rocmd_fs_below(d->lroot, d->stage) == NULL || rocmd_fs_below(d->lroot, d->old) == NULL)
		return ROCMD_ECORRUPT;
	return 0;
}

/* Loads T from the journal J; *STEP gets its step. */
static int
txn_from_journal(struct txn *t, const cJSON *j, char *step, size_t steplen)
{
	char base[DEPLOY_PATH_MAX];
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "manifest");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(j, "hipblaslt");

	if (str_member(j, "step", step, steplen) < 0 || dir_from_json(j, &t->d[0]) < 0 ||
	    (cJSON_IsObject(lt) && dir_from_json(lt, &t->d[1]) < 0))
		return ROCMD_ECORRUPT;
	t->nd = cJSON_IsObject(lt) ? 2 : 1;
	t->keep0 = t->nd > 1 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "lib_kept"));
	str_member(j, "label", t->label, sizeof(t->label));
	t->windows = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "windows"));
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "binary"))) {
		t->has_binary = 1;
		if (str_member(j, "binary", t->bin, sizeof(t->bin)) < 0 ||
		    str_member(j, "binary_new", t->bin_new, sizeof(t->bin_new)) < 0 ||
		    str_member(j, "binary_old", t->bin_old, sizeof(t->bin_old)) < 0)
			return ROCMD_ECORRUPT;
		id_parse(cJSON_GetObjectItemCaseSensitive(j, "binary_new_id"), &t->bin_new_id);
		if (rocmd_fs_path_root(t->bin) == 0 || strlen(t->bin) <= rocmd_fs_path_root(t->bin))
			return ROCMD_ECORRUPT;
		deploy_split(t->bin, t->bin_dir, base);
		if (str_member(j, "binary_root", t->broot, sizeof(t->broot)) < 0)
			snprintf(t->broot, sizeof(t->broot), "%s", t->bin_dir);
		if (rocmd_fs_below(t->broot, t->bin) == NULL ||
		    rocmd_fs_below(t->broot, t->bin_new) == NULL ||
		    rocmd_fs_below(t->broot, t->bin_old) == NULL)
			return ROCMD_ECORRUPT;
	}
	if (cJSON_IsObject(m) && (t->manifest = cJSON_Duplicate(m, 1)) == NULL)
		return ROCMD_ENOMEM;
	return 0;
}

static int
is_id(const char *root, const char *path, const struct rocmd_fs_id *want)
{
	struct rocmd_fs_id id;

	return rocmd_fs_id_of_in(root, path, &id) == 0 && rocmd_fs_id_eq(&id, want);
}

static int
exists(const char *root, const char *path)
{
	return rocmd_fs_kind_in(root, path, NULL, NULL) > 0;
}

/* Removes PATH, below ROOT (a library folder's), keeping what stopped it. */
static int
remove_tree(struct txn *t, const char *root, const char *path)
{
	return rocmd_fs_remove_tree_in(root, path, &t->fail);
}

/* Removes PATH (a binary, maybe loaded), below the binary's root, keeping
 * what stopped it. */
static int
remove_binary(struct txn *t, const char *path)
{
	int rc = rocmd_fs_remove_loaded_in(t->broot, path);

	if (rc < 0 && t->fail.err == 0) {
		snprintf(t->fail.path, sizeof(t->fail.path), "%s", path);
		t->fail.err = rc == ROCMD_EPERM ? EPERM : EIO;
	}
	return rc;
}

/* What stopped the undo or the commit (RC), for the admin: above all a file
 * that is immutable or append-only (chattr +i, +a), which even root cannot
 * remove (EPERM) and which no retry gets past. */
static void
fail_why(const struct txn *t, int rc, char *why, size_t whylen)
{
	const struct rocmd_fs_fail *f = &t->fail;

	if (f->err == 0 || f->path[0] == '\0') {
		rocmd_fs_fmt(why, whylen, "%s", rocmd_strerror(rc));
		return;
	}
#ifndef _WIN32
	if (f->err == EPERM) {
		rocmd_fs_fmt(why, whylen,
		             "%s cannot be removed: it or its folder is immutable or append-only "
		             "(lsattr -d shows i or a); run chattr -ia '%s' (and on its folder if "
		             "lsattr shows it there), then recover the target again",
		             f->path, f->path);
		return;
	}
#endif
	rocmd_fs_fmt(why, whylen, "cannot remove %s: %s", f->path, rocmd_strerror(rc));
}

/* Removes folder D's stage and old tree (a commit's cleanup, leftovers). */
static int
clean_dir(struct txn *t, const struct txn_dir *d)
{
	int rc;

	if ((rc = remove_tree(t, d->lroot, d->stage)) < 0 ||
	    (rc = remove_tree(t, d->lroot, d->old)) < 0)
		return rc;
	return rocmd_fs_fsync_dir_in(d->lroot, d->parent);
}

/* Puts folder D's old tree back (see txn_undo); the new one is left in its
 * stage slot for clean_dir. */
static int
undo_dir(struct txn *t, struct txn_dir *d)
{
	int rc;

	if (d->existed) {
		if (!is_id(d->lroot, d->lib, &d->old_id)) {
			const char *oldloc = is_id(d->lroot, d->stage, &d->old_id) ? d->stage
			                     : is_id(d->lroot, d->old, &d->old_id) ? d->old
			                                                           : NULL;
			if (oldloc == NULL)
				return ROCMD_ECORRUPT; /* the old tree is nowhere: not ours */
			if (is_id(d->lroot, d->lib, &d->new_id) && oldloc == d->stage &&
			    (rc = rocmd_fs_exchange_in(d->lroot, d->lib, d->stage)) !=
			        ROCMD_EUNSUPPORTED) {
				if (rc < 0)
					return rc;
			} else {
				if (exists(d->lroot, d->lib)) {
					/* The new tree moves to the slot the old one is not in. */
					const char *free_slot =
					    oldloc == d->stage ? d->old : d->stage;
					if ((rc = remove_tree(t, d->lroot, free_slot)) < 0 ||
					    (rc = rocmd_fs_rename_in(d->lroot, d->lib, free_slot)) <
					        0)
						return rc;
				}
				if ((rc = rocmd_fs_rename_in(d->lroot, oldloc, d->lib)) < 0)
					return rc;
			}
			ROCMD_KILLPOINT("undo.folder");
		}
	} else if (exists(d->lroot, d->lib) && is_id(d->lroot, d->lib, &d->new_id)) {
		if ((rc = remove_tree(t, d->lroot, d->stage)) < 0 ||
		    (rc = rocmd_fs_rename_in(d->lroot, d->lib, d->stage)) < 0)
			return rc;
	}
	return 0;
}

/*
 * Puts the old trees and binary back and removes the new ones. Each move is
 * decided from what is on disk (device and inode), so this can start from
 * any state a crash or a failure left, including its own partial run. Every
 * folder is put back before any is cleaned up: a removal that fails leaves
 * both old trees in place, never one of each.
 */
static int
txn_undo(struct txn *t)
{
	int rc;

	for (int i = t->nd - 1; i >= t->keep0; i--)
		if ((rc = undo_dir(t, &t->d[i])) < 0)
			return rc;
	for (int i = t->nd - 1; i >= t->keep0; i--)
		if ((rc = clean_dir(t, &t->d[i])) < 0)
			return rc;
	if (t->has_binary) {
		if (exists(t->broot, t->bin_old)) {
			if (!exists(t->broot, t->bin)) {
				rc = rocmd_fs_rename_in(t->broot, t->bin_old, t->bin);
			} else if (is_id(t->broot, t->bin, &t->bin_new_id)) {
				/* Windows: the new DLL may be loaded by now; rename it
				 * aside rather than replace it. */
				if (t->windows &&
				    (rc = rocmd_fs_rename_in(t->broot, t->bin, t->bin_new)) < 0)
					return rc;
				rc = rocmd_fs_rename_in(t->broot, t->bin_old, t->bin);
			} else {
				rc = remove_binary(t, t->bin_old);
			}
			if (rc < 0)
				return rc;
		} else if (is_id(t->broot, t->bin, &t->bin_new_id)) {
			/* There was no binary before: the new one goes. */
			if ((rc = rocmd_fs_rename_in(t->broot, t->bin, t->bin_new)) < 0)
				return rc;
		}
		ROCMD_KILLPOINT("undo.binary");
		if ((rc = remove_binary(t, t->bin_new)) < 0 ||
		    (rc = rocmd_fs_fsync_dir_in(t->broot, t->bin_dir)) < 0)
			return rc;
	}
	if ((rc = rocmd_fs_unlink(t->journal)) < 0)
		return rc;
	return rocmd_fs_fsync_dir_in(NULL, t->dir);
}

/* Records the new tree as current, removes the old one and the journal. */
static int
txn_commit(struct txn *t)
{
	char path[DEPLOY_PATH_MAX + 16];
	cJSON *cur;
	int rc;

	for (int i = t->keep0; i < t->nd; i++)
		if (!is_id(t->d[i].lroot, t->d[i].lib, &t->d[i].new_id))
			return ROCMD_ECORRUPT;
	if (t->has_binary && !is_id(t->broot, t->bin, &t->bin_new_id))
		return ROCMD_ECORRUPT;
	snprintf(path, sizeof(path), "%s/current.json", t->dir);
	if ((cur = cJSON_Duplicate(t->manifest, 1)) == NULL)
		return ROCMD_ENOMEM;
	cJSON_AddStringToObject(cur, "lib_dir", t->d[0].lib);
	if (t->nd > 1)
		cJSON_AddStringToObject(cur, "hipblaslt_dir", t->d[1].lib);
	if (t->has_binary)
		cJSON_AddStringToObject(cur, "binary_path", t->bin);
	cJSON_AddNumberToObject(cur, "deployed_unix", (double)time(NULL));
	rc = rocmd_fs_json_write(path, cur);
	cJSON_Delete(cur);
	if (rc < 0)
		return rc;
	ROCMD_KILLPOINT("commit.current");
	for (int i = t->keep0; i < t->nd; i++)
		if ((rc = clean_dir(t, &t->d[i])) < 0)
			return rc;
	if (t->has_binary &&
	    ((rc = remove_binary(t, t->bin_old)) < 0 || (rc = remove_binary(t, t->bin_new)) < 0 ||
	     (rc = rocmd_fs_fsync_dir_in(t->broot, t->bin_dir)) < 0))
		return rc;
	ROCMD_KILLPOINT("commit.cleanup");
	if ((rc = rocmd_fs_unlink(t->journal)) < 0)
		return rc;
	return rocmd_fs_fsync_dir_in(NULL, t->dir);
}

/* Creates the folders leading to REL inside DIR (they are ours: DIR is new),
 * below ROOT. */
static int
mkdirs_for(const char *root, const char *dir, const char *rel)
{
	char path[DEPLOY_PATH_MAX * 2];
	size_t rootlen = strlen(dir);
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + rootlen + 1; *p != '\0'; p++) {
		int kind;
		if (*p != '/')
			continue;
		*p = '\0';
		if ((kind = rocmd_fs_kind_in(root, path, NULL, NULL)) == 0) {
			if ((rc = rocmd_fs_mkdir_in(root, path, 0755)) < 0)
				return rc;
		} else if (kind != 'd') {
			return kind < 0 ? kind : ROCMD_EUNSAFE;
		}
		*p = '/';
	}
	return 0;
}

struct tick_ctx {
	const struct rocmd_deploy_request *req;
	struct rocmd_deploy_progress pr;
};

static int
stage_tick(void *ctx, uint64_t bytes)
{
	struct tick_ctx *tc = ctx;

	tc->pr.bytes_done = bytes;
	return tc->req->progress != NULL ? tc->req->progress(&tc->pr, tc->req->ctx) : 0;
}

/* Copies FILES (N) into folder D's fresh stage folder, each hash checked. */
static int
stage_dir(const struct txn_dir *d, const struct rocmd_deploy_file *files, size_t n,
          const struct rocmd_deploy_request *req, struct rocmd_fs_copy_stats *st,
          struct tick_ctx *tc, char *why, size_t whylen)
{
	char path[DEPLOY_PATH_MAX * 2];
	int rc;

	if ((rc = rocmd_fs_mkdir_in(d->lroot, d->stage, 0755)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", d->stage, rocmd_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f = &files[i];

		snprintf(path, sizeof(path), "%s/%s", d->stage, f->path);
		if ((rc = mkdirs_for(d->lroot, d->stage, f->path)) < 0) {
			snprintf(why, whylen, "cannot create the folders of %s: %s", path,
			         rocmd_strerror(rc));
			return rc;
		}
		if (f->kind == ROCMD_DEPLOY_SYMLINK)
			rc = rocmd_fs_symlink_in(d->lroot, f->link, path);
		else
			rc = rocmd_fs_copy_file_in(NULL, f->source, d->lroot, path,
			                           f->exec ? 0755 : 0644, f->size, f->sha256, NULL,
			                           st);
		if (rc < 0) {
			if (rc == ROCMD_ECORRUPT && req->label != NULL &&
			    strcmp(req->label, "original") == 0)
				snprintf(why, whylen,
				         "%s does not match its hash: the backup of the originals is "
				         "damaged (rocmctl lib verify says whether an older generation "
				         "is intact, for lib rollback --to original --generation N; "
				         "reinstalling the SDK's rocBLAS brings the vendor's files back)",
				         f->source);
			else if (rc == ROCMD_ECORRUPT)
				snprintf(why, whylen,
				         "%s does not match its hash: the store object is corrupt "
				         "(run a store verify)",
				         f->source);
			else
				snprintf(why, whylen, "cannot place %s: %s", f->path,
				         rocmd_strerror(rc));
			return rc;
		}
		tc->pr.files_done++;
	}
	/* Data and names on disk before the journal may point at them. */
	if ((rc = rocmd_fs_syncfs_in(d->lroot, d->stage)) < 0) {
		snprintf(why, whylen, "cannot flush the staged files: %s", rocmd_strerror(rc));
		return rc;
	}
	return 0;
}

/* Copies every file of REQ into the fresh stage folders, each hash checked. */
static int
stage(struct txn *t, const struct rocmd_deploy_request *req, struct rocmd_deploy_result *res,
      char *why, size_t whylen)
{
	struct tick_ctx tc = {
	    .req = req,
	    .pr = {.step = "stage",
	           .files_total = (t->keep0 ? 0 : req->nfiles) + (t->nd > 1 ? req->nlt_files : 0)}};
	struct rocmd_fs_copy_stats st = {.tick = stage_tick, .ctx = &tc, .reflink = 1};
	int rc;

	for (size_t i = 0; !t->keep0 && i < req->nfiles; i++)
		tc.pr.bytes_total += req->files[i].size;
	for (size_t i = 0; t->nd > 1 && i < req->nlt_files; i++)
		tc.pr.bytes_total += req->lt_files[i].size;
	if (req->binary != NULL)
		tc.pr.bytes_total += req->binary->size;
	if ((!t->keep0 &&
	     (rc = stage_dir(&t->d[0], req->files, req->nfiles, req, &st, &tc, why, whylen)) < 0) ||
	    (t->nd > 1 && (rc = stage_dir(&t->d[1], req->lt_files, req->nlt_files, req, &st, &tc,
	                                  why, whylen)) < 0))
		return rc;
	if (req->binary != NULL) {
		rc = rocmd_fs_copy_file_in(NULL, req->binary->source, t->broot, t->bin_new,
		                           req->binary->exec ? 0755 : 0644, req->binary->size,
		                           req->binary->sha256, NULL, &st);
		if (rc < 0) {
			snprintf(why, whylen, "cannot stage the binary from %s: %s",
			         req->binary->source, rocmd_strerror(rc));
			return rc;
		}
		if ((rc = rocmd_fs_syncfs_in(t->broot, t->bin_dir)) < 0) {
			snprintf(why, whylen, "cannot flush the staged files: %s",
			         rocmd_strerror(rc));
			return rc;
		}
	}
	res->files = tc.pr.files_done + (req->binary != NULL);
	res->bytes = st.bytes;
	res->bytes_copied = st.bytes_copied;
	return 0;
}

/* Folder D's swap: one exchange where the file system has it. */
static int
swap_dir(const struct txn_dir *d, struct rocmd_deploy_result *res)
{
	int rc;

	if (!d->existed)
		return rocmd_fs_rename_in(d->lroot, d->stage, d->lib);
	rc = rocmd_fs_exchange_in(d->lroot, d->lib, d->stage);
	if (rc == ROCMD_EUNSUPPORTED) {
		/* Two renames: the folder is missing between them, which
		 * recovery repairs from the journal. */
		res->exchange = 0;
		if ((rc = rocmd_fs_rename_in(d->lroot, d->lib, d->old)) < 0)
			return rc;
		ROCMD_KILLPOINT("swap.half");
		return rocmd_fs_rename_in(d->lroot, d->stage, d->lib);
	}
	return rc;
}

/* The folder swaps (rocBLAS's, then hipBLASLt's), then the binary. */
static int
swap(struct txn *t, struct rocmd_deploy_result *res)
{
	int64_t t0;
	int rc;

	res->exchange = t->d[t->keep0].existed;
	if (!t->keep0 && (rc = swap_dir(&t->d[0], res)) < 0)
		return rc;
	t0 = now_ns();
	ROCMD_KILLPOINT("swap.folder");
	if (t->nd > 1) {
		if ((rc = swap_dir(&t->d[1], res)) < 0)
			return rc;
		ROCMD_KILLPOINT("swap.hipblaslt");
	}
	if (t->has_binary) {
		if (exists(t->broot, t->bin)) {
			if (t->windows) {
				/* A loaded DLL can be renamed, not replaced. */
				if ((rc = rocmd_fs_rename_in(t->broot, t->bin, t->bin_old)) < 0)
					return rc;
				ROCMD_KILLPOINT("swap.aside");
			} else if ((rc = rocmd_fs_link_in(t->broot, t->bin, t->bin_old)) < 0) {
				struct rocmd_fs_copy_stats st = {0};
				if ((rc = rocmd_fs_copy_file_in(t->broot, t->bin, t->broot,
				                                t->bin_old, 0755, 0, NULL, NULL,
				                                &st)) < 0)
					return rc;
			}
		}
		if ((rc = rocmd_fs_rename_in(t->broot, t->bin_new, t->bin)) < 0)
			return rc;
		res->pair_window_ns = now_ns() - t0;
		ROCMD_KILLPOINT("swap.binary");
		if ((rc = rocmd_fs_fsync_dir_in(t->broot, t->bin_dir)) < 0)
			return rc;
	}
	for (int i = t->keep0; i < t->nd; i++)
		if ((rc = rocmd_fs_fsync_dir_in(t->d[i].lroot, t->d[i].parent)) < 0)
			return rc;
	return 0;
}

static void
txn_free(struct txn *t)
{
	cJSON_Delete(t->manifest);
	t->manifest = NULL;
}

/* Every file of a list to place: safe paths, symlinks inside, a source and a
 * hash for each file. */
static int
check_files(const struct rocmd_deploy_file *files, size_t n, char *why, size_t whylen)
{
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f = &files[i];
		if (rocmd_fs_relpath_ok(f->path) < 0) {
			snprintf(why, whylen, "unsafe path in the file list: %s",
			         f->path != NULL ? f->path : "(null)");
			return ROCMD_EUNSAFE;
		}
		if (f->kind == ROCMD_DEPLOY_SYMLINK && !ROCMD_FS_HAS_SYMLINKS) {
			snprintf(why, whylen,
			         "%s is a symlink: packages with symlinks are not deployed on this "
			         "platform",
			         f->path);
			return ROCMD_EUNSUPPORTED;
		}
		if (f->kind == ROCMD_DEPLOY_SYMLINK) {
			if (f->link == NULL || rocmd_fs_link_inside(f->path, f->link) < 0) {
				snprintf(why, whylen, "symlink %s leads outside the library",
				         f->path);
				return ROCMD_EUNSAFE;
			}
		} else if (f->kind != ROCMD_DEPLOY_FILE || f->source == NULL ||
		           rocmd_fs_path_root(f->source) == 0 || strlen(f->sha256) != 64) {
			snprintf(why, whylen, "%s: a file needs an absolute source and a hash",
			         f->path);
			return ROCMD_EINVAL;
		}
	}
	return 0;
}

static int
check_request(const struct rocmd_deploy_request *req, char *why, size_t whylen)
{
	int rc;

	if (req->state_dir == NULL || req->state_dir[0] == '\0' ||
	    (req->nfiles > 0 && req->files == NULL)) {
		snprintf(why, whylen, "incomplete deploy request");
		return ROCMD_EINVAL;
	}
	if (req->binary != NULL && req->target.binary == NULL) {
		snprintf(why, whylen, "a binary to place but no binary path in the target");
		return ROCMD_EINVAL;
	}
	if (req->keep_lib && (!req->lt || req->binary != NULL)) {
		snprintf(why, whylen, "a request keeping rocBLAS's folder replaces hipBLASLt's only");
		return ROCMD_EINVAL;
	}
	if (!req->keep_lib && (rc = check_files(req->files, req->nfiles, why, whylen)) < 0)
		return rc;
	if (req->lt && (rc = check_files(req->lt_files, req->nlt_files, why, whylen)) < 0)
		return rc;
	if (req->lt &&
	    (req->target.lt_dir == NULL || (req->nlt_files > 0 && req->lt_files == NULL))) {
		snprintf(why, whylen,
		         "hipBLASLt files to place but no hipBLASLt folder in the target");
		return ROCMD_EINVAL;
	}
	if (req->binary != NULL &&
	    (req->binary->kind != ROCMD_DEPLOY_FILE || req->binary->source == NULL ||
	     strlen(req->binary->sha256) != 64)) {
		snprintf(why, whylen, "the binary needs a source and a hash");
		return ROCMD_EINVAL;
	}
	return 0;
}

static int64_t
us_since(int64_t t0)
{
	return (now_ns() - t0) / 1000;
}

/* The backup of the originals (I1): once per target, before anything
 * changes, and again (keeping the earlier one) when an SDK update brought new
 * originals. */
static int
backup_originals(const struct txn *t, const struct rocmd_deploy_request *req,
                 struct rocmd_deploy_result *res, struct rocmd_deploy_progress *pr, char *why,
                 size_t whylen)
{
	struct rocmd_deploy_backup_info bi;
	struct rocmd_deploy_target tg = req->target;
	char mpath[DEPLOY_PATH_MAX + 32];
	int had, rc;

	snprintf(mpath, sizeof(mpath), "%s/backup/manifest.json", t->dir);
	had = exists(NULL, mpath);
	pr->step = "backup";
	if (req->progress != NULL && req->progress(pr, req->ctx) != 0)
		return ROCMD_ECANCELED;
	/* A backup made before the target had a hipBLASLt folder gets its
	 * originals now, before anything replaces them: a rollback restores
	 * them as it does rocBLAS's. */
	if (had && req->lt && req->nlt_files > 0 &&
	    !(req->flags & (ROCMD_DEPLOY_NEW_ORIGINALS | ROCMD_DEPLOY_NEW_LT_ORIGINALS))) {
		rc = deploy_backup_add_lt(req->state_dir, &tg, &res->lt_backup_added, why, whylen);
		if (rc < 0)
			return rc;
	}
	/* With a backup made before, MANUAL_BACKUP still writes the manual
	 * names if a deploy that made the backup could not (they were in use). */
	if (had && !(req->flags & (ROCMD_DEPLOY_NEW_ORIGINALS | ROCMD_DEPLOY_NEW_LT_ORIGINALS |
	                           ROCMD_DEPLOY_MANUAL_BACKUP)))
		return 0;
	if ((rc = rocmd_deploy_backup(req->state_dir, &tg, req->flags, &bi, why, whylen)) < 0)
		return rc;
	if (!had || bi.retired) {
		res->backup_made = 1;
		res->backup_adopted = bi.adopted;
		res->backup_retired = bi.retired;
	}
	return 0;
}

/* T's manifest: REQ's files; with keep0 what rocBLAS's folder and binary
 * hold, recorded as they are, with REQ's hipBLASLt files. */
static int
txn_manifest(struct txn *t, const struct rocmd_deploy_request *req,
             struct rocmd_deploy_result *res, char *why, size_t whylen)
{
	struct rocmd_deploy_files k;
	int rc;

	if (!t->keep0) {
		t->manifest = deploy_manifest_json(t->label, req->files, req->nfiles, req->binary,
		                                   t->nd > 1, req->lt_files, req->nlt_files,
		                                   res->manifest);
		return t->manifest != NULL ? 0 : ROCMD_ENOMEM;
	}
	if ((rc = deploy_kept_files(req->state_dir, t->name, req->flags, &k, why, whylen)) < 0)
		return rc;
	t->manifest = deploy_manifest_json(t->label, k.files, k.n, k.binary, 1, req->lt_files,
	                                   req->nlt_files, res->manifest);
	rocmd_deploy_files_free(&k);
	return t->manifest != NULL ? 0 : ROCMD_ENOMEM;
}

int
rocmd_deploy_run(const struct rocmd_deploy_request *req, struct rocmd_deploy_result *res, char *why,
                 size_t whylen)
{
	struct txn t;
	struct rocmd_deploy_progress pr = {0};
	int rc, swapped = 0;
	int64_t t0;

	memset(&t, 0, sizeof(t));
	memset(res, 0, sizeof(*res));
	why[0] = '\0';
	/* plan */
	if ((rc = check_request(req, why, whylen)) < 0)
		return rc;
	if ((rc = deploy_txn_paths(&t, req->state_dir, &req->target,
	                    (req->flags & ROCMD_DEPLOY_CREATE) != 0, req->lt, why, whylen)) < 0)
		return rc;
	if (req->binary == NULL)
		t.has_binary = 0; /* the binary stays as it is */
	if (!req->lt)
		t.nd = 1; /* so does hipBLASLt's folder */
	t.keep0 = req->keep_lib && t.nd > 1;
	if (t.nd > 1 && !t.d[1].existed && !(req->flags & ROCMD_DEPLOY_CREATE)) {
		snprintf(why, whylen, "%s: %s", t.d[1].lib, rocmd_strerror(-ENOENT));
		return ROCMD_ENOTFOUND;
	}
	snprintf(t.label, sizeof(t.label), "%s", req->label != NULL ? req->label : "");
	if ((rc = rocmd_paths_mkdir_p(t.dir, 0755)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", t.dir, rocmd_strerror(rc));
		return rc;
	}
	if (exists(NULL, t.journal)) {
		snprintf(why, whylen,
		         "an earlier deploy to %s was not finished (its journal %s remains): it "
		         "must be recovered first",
		         t.name, t.journal);
		return ROCMD_EBUSY;
	}
	pr.step = "plan";
	if (req->progress != NULL && req->progress(&pr, req->ctx) != 0)
		return ROCMD_ECANCELED;
	/* Leftovers of a run that never wrote its journal carry our names only. */
	for (int i = t.keep0; i < t.nd && rc >= 0; i++)
		rc = clean_dir(&t, &t.d[i]);
	if (rc < 0 || (t.has_binary && ((rc = remove_binary(&t, t.bin_new)) < 0 ||
	                                (rc = remove_binary(&t, t.bin_old)) < 0))) {
		char what[1024];
		fail_why(&t, rc, what, sizeof(what));
		snprintf(why, whylen, "cannot remove leftovers of an earlier run: %s", what);
		return rc;
	}
	if (!(req->flags & ROCMD_DEPLOY_NO_BACKUP) &&
	    (rc = backup_originals(&t, req, res, &pr, why, whylen)) < 0)
		return rc;
	if ((rc = txn_manifest(&t, req, res, why, whylen)) < 0)
		return rc;
	for (int i = 0; i < t.nd; i++)
		if (t.d[i].existed &&
		    (rc = rocmd_fs_id_of_in(t.d[i].lroot, t.d[i].lib, &t.d[i].old_id)) < 0)
			goto fail;
	/* stage */
	if ((rc = txn_journal(&t, "stage")) < 0) {
		snprintf(why, whylen, "cannot write the journal %s: %s", t.journal,
		         rocmd_strerror(rc));
		goto fail; /* it may exist all the same (a folder fsync failed) */
	}
	t0 = now_ns();
	if ((rc = stage(&t, req, res, why, whylen)) < 0)
		goto fail;
	res->stage_us = us_since(t0);
	for (int i = t.keep0; i < t.nd; i++)
		if ((rc = rocmd_fs_id_of_in(t.d[i].lroot, t.d[i].stage, &t.d[i].new_id)) < 0)
			goto fail;
	if (t.has_binary && (rc = rocmd_fs_id_of_in(t.broot, t.bin_new, &t.bin_new_id)) < 0)
		goto fail;
	pr.step = "swap";
	if (req->progress != NULL && req->progress(&pr, req->ctx) != 0) {
		rc = ROCMD_ECANCELED;
		goto fail;
	}
	/* journal, swap */
	if ((rc = txn_journal(&t, "swap")) < 0) {
		snprintf(why, whylen, "cannot write the journal: %s", rocmd_strerror(rc));
		goto fail;
	}
	t0 = now_ns();
	swapped = 1;
	if ((rc = swap(&t, res)) < 0) {
		snprintf(why, whylen, "cannot swap %s: %s", t.d[t.keep0].lib, rocmd_strerror(rc));
		goto fail;
	}
	res->swap_us = us_since(t0);
	/* verify, then the caller's check (the smoke test) */
	t0 = now_ns();
	if ((rc = deploy_verify_swapped(&t, req, why, whylen)) < 0)
		goto fail;
	if (req->check != NULL && (rc = req->check(&req->target, req->ctx, why, whylen)) != 0) {
		if (rc > 0 || why[0] == '\0')
			snprintf(why + strlen(why), whylen - strlen(why), "%sthe check refused it",
			         why[0] != '\0' ? ": " : "");
		rc = rc < 0 ? rc : ROCMD_ECORRUPT;
		goto fail;
	}
	res->verify_us = us_since(t0);
	/* commit */
	t0 = now_ns();
	pr.step = "commit";
	if ((rc = txn_journal(&t, "commit")) < 0) {
		snprintf(why, whylen, "cannot write the journal: %s", rocmd_strerror(rc));
		goto fail;
	}
	res->committed = 1;
	if ((rc = txn_commit(&t)) < 0) {
		/* The new tree is in place and verified; recovery finishes it. */
		char what[1024];
		fail_why(&t, rc, what, sizeof(what));
		snprintf(why, whylen, "deployed, but cleaning up failed: %s", what);
		txn_free(&t);
		return rc;
	}
	res->commit_us = us_since(t0);
	txn_free(&t);
	return 0;

fail:
	/* Roll back: the target goes back to exactly the old tree. */
	{
		int urc;
		if (swapped) {
			res->rolled_back = 1;
			pr.step = "rollback";
			if (txn_journal(&t, "rollback") < 0) {
				/* The "swap" journal stays: recovery undoes. */
			}
		}
		urc = txn_undo(&t);
		if (urc < 0) {
			char what[1024];
			size_t l = strlen(why);
			fail_why(&t, urc, what, sizeof(what));
			snprintf(why + l, whylen - l,
			         "%sundoing failed too (%s): the journal stays for recovery",
			         l > 0 ? "; " : "", what);
		}
	}
	if (why[0] == '\0')
		snprintf(why, whylen, "%s", rocmd_strerror(rc));
	txn_free(&t);
	return rc;
}

/* Loads target NAME's journal into T (its step into STEP); ROCMD_ENOTFOUND
 * when there is none. */
static int
txn_load(struct txn *t, const char *state_dir, const char *name, char *step, size_t steplen,
         char *why, size_t whylen)
{
	cJSON *j = NULL;
	int rc;

	if (rocmd_deploy_name_check(name) < 0) {
		snprintf(why, whylen, "invalid target name");
		return ROCMD_EINVAL;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	if (deploy_path_set(t->dir, "%s/deploy/%s", state_dir, name) < 0 ||
	    deploy_path_set(t->journal, "%s/%s", t->dir, "journal") < 0)
		return ROCMD_EINVAL;
	if ((rc = rocmd_fs_json_read(t->journal, &j)) == -ENOENT)
		return ROCMD_ENOTFOUND;
	if (rc < 0) {
		snprintf(why, whylen, "cannot read the journal %s: %s", t->journal,
		         rocmd_strerror(rc));
		return rc;
	}
	rc = txn_from_journal(t, j, step, steplen);
	cJSON_Delete(j);
	if (rc < 0)
		snprintf(why, whylen, "the journal %s is damaged: leaving the target as it is",
		         t->journal);
	return rc;
}

int
rocmd_deploy_recover(const char *state_dir, const char *name, struct rocmd_deploy_recovery *out,
                     char *why, size_t whylen)
{
	struct txn t;
	int rc;

	memset(&t, 0, sizeof(t));
	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	rc = txn_load(&t, state_dir, name, out->step, sizeof(out->step), why, whylen);
	if (rc == ROCMD_ENOTFOUND) {
		char tmp[DEPLOY_PATH_MAX + 8];
		snprintf(tmp, sizeof(tmp), "%s.tmp", t.journal);
		rocmd_fs_os_unlink(tmp); /* a journal write cut short: it never took effect */
		return 0;
	}
	if (rc < 0)
		goto out;
	snprintf(out->label, sizeof(out->label), "%s", t.label);
	if (strcmp(out->step, "commit") == 0 && t.manifest != NULL &&
	    (t.keep0 || is_id(t.d[0].lroot, t.d[0].lib, &t.d[0].new_id)) &&
	    (t.nd < 2 || is_id(t.d[1].lroot, t.d[1].lib, &t.d[1].new_id))) {
		/* Keep the new tree only if its content is what was staged. */
		struct rocmd_deploy_files f;
		uint64_t checked = 0, bad = 0;
		char first[256], hex[ROCMD_SHA256_HEX];
		int ok = 0, crc;
		if ((crc = deploy_manifest_parse(t.manifest, NULL, NULL, &f)) == 0) {
			crc = t.keep0 ? 0
			              : deploy_check_tree(t.d[0].lroot, t.d[0].lib, f.files, f.n,
			                                  &checked, &bad, first, sizeof(first), NULL,
			                                  NULL, "recover", why, whylen);
			if (crc == 0 && bad == 0 && t.nd > 1)
				crc = deploy_check_tree(t.d[1].lroot, t.d[1].lib, f.lt_files, f.nlt,
				                        &checked, &bad, first, sizeof(first), NULL,
				                        NULL, "recover", why, whylen);
			ok = crc == 0 && bad == 0;
			if (ok && f.binary != NULL && t.has_binary && !t.keep0) {
				uint64_t size;
				crc = rocmd_fs_hash_file_in(t.broot, t.bin, hex, &size);
				ok = crc == 0 && strcmp(hex, f.binary->sha256) == 0;
			}
			rocmd_deploy_files_free(&f);
		}
		if (crc < 0 && crc != ROCMD_ECORRUPT && crc != -ENOENT && crc != ROCMD_ENOTFOUND) {
			/* A read that failed proves nothing against the tree, and
			 * current.json names it already: undoing would leave the
			 * old tree behind a record of the new one. */
			char what[512];
			snprintf(what, sizeof(what), "%s", why[0] ? why : rocmd_strerror(crc));
			snprintf(why, whylen,
			         "cannot check the deployed files of %s (%s): the journal stays",
			         name, what);
			rc = crc;
			goto out;
		}
		why[0] = '\0';
		if (ok) {
			if ((rc = txn_commit(&t)) < 0) {
				char what[1024];
				fail_why(&t, rc, what, sizeof(what));
				snprintf(why, whylen, "finishing the deploy to %s failed: %s", name,
				         what);
				goto out;
			}
			out->action = ROCMD_DEPLOY_RECOVER_FINISHED;
			snprintf(
			    out->what, sizeof(out->what),
			    "recovered %s: the verified deployment of %s was kept and committed",
			    name, t.label);
			goto out;
		}
	}
	if ((rc = txn_undo(&t)) < 0) {
		char what[1024];
		fail_why(&t, rc, what, sizeof(what));
		snprintf(why, whylen, "undoing the interrupted deploy to %s failed: %s", name,
		         what);
		goto out;
	}
	out->action = ROCMD_DEPLOY_RECOVER_UNDONE;
	snprintf(out->what, sizeof(out->what),
	         "recovered %s: the deploy of %s was interrupted at step '%s' and undone; the "
	         "target holds its previous content",
	         name, t.label, out->step);
out:
	txn_free(&t);
	return rc;
}

int
rocmd_deploy_journal_state(const char *state_dir, const char *name,
                           struct rocmd_deploy_journal_state *out)
{
	struct txn t;
	char why[512];
	int rc, lib_new, lib_old, bin_new;

	memset(&t, 0, sizeof(t));
	memset(out, 0, sizeof(*out));
	if ((rc = txn_load(&t, state_dir, name, out->step, sizeof(out->step), why, sizeof(why))) <
	    0) {
		out->holds = ROCMD_DEPLOY_HOLDS_UNKNOWN;
		goto out;
	}
	snprintf(out->label, sizeof(out->label), "%s", t.label);
	lib_new = lib_old = 1;
	for (int i = t.keep0; i < t.nd; i++) {
		const struct txn_dir *d = &t.d[i];
		lib_new = lib_new && is_id(d->lroot, d->lib, &d->new_id);
		lib_old = lib_old && (d->existed ? is_id(d->lroot, d->lib, &d->old_id)
		                                 : !exists(d->lroot, d->lib));
	}
	bin_new = t.has_binary && is_id(t.broot, t.bin, &t.bin_new_id);
	if (lib_new && (!t.has_binary || bin_new))
		out->holds = ROCMD_DEPLOY_HOLDS_NEW;
	else if (lib_old && !bin_new)
		out->holds = ROCMD_DEPLOY_HOLDS_OLD;
	else
		out->holds =
		    lib_new || lib_old ? ROCMD_DEPLOY_HOLDS_MIXED : ROCMD_DEPLOY_HOLDS_UNKNOWN;
out:
	txn_free(&t);
	return rc;
}
