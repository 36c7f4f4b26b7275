/*
 * A deploy target's paths, resolved beneath their roots (invariant I4,
 * docs/DEPLOY.md): the library folder and the binary as given, made clean
 * and absolute, each root resolved once and every part below it kept as
 * written, so the file layer (the rocmd_fs_*_in functions) opens each
 * component with no-follow opens relative to the root; a root that a
 * non-admin owns is refused unless the target is configured as such.
 */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "deploy-internal.h"

int
rocmd_deploy_name_check(const char *name)
{
	size_t len;

	if (name == NULL || (len = strlen(name)) == 0 || len > ROCMD_DEPLOY_NAME_MAX ||
	    name[0] == '.')
		return ROCMD_EINVAL;
	for (const char *c = name; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			return ROCMD_EINVAL;
	return 0;
}

int
deploy_path_set(char *out, const char *fmt, const char *a, const char *b)
{
	int n = snprintf(out, DEPLOY_PATH_MAX, fmt, a, b);

	return n < 0 || n >= DEPLOY_PATH_MAX ? ROCMD_EINVAL : 0;
}

/* Splits clean absolute PATH into its folder and its last name; the folder
 * of "/x" is "/", of "C:/x" is "C:/". */
void
deploy_split(const char *path, char *dir, char *base)
{
	const char *slash = strrchr(path, '/');
	size_t root = rocmd_fs_path_root(path), len = (size_t)(slash - path);

	if (len < root)
		len = root;
	snprintf(dir, DEPLOY_PATH_MAX, "%.*s", (int)len, path);
	snprintf(base, DEPLOY_PATH_MAX, "%s", slash + 1);
}

/* DIR joined with NAME: no doubled '/' after a root such as "/" or "C:/". */
int
deploy_join(char *out, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	return deploy_path_set(out, n > 0 && dir[n - 1] == '/' ? "%s%s" : "%s/%s", dir, name);
}

/* A clean absolute path, '/'-separated, into OUT (DEPLOY_PATH_MAX). */
static int
clean_abs(const char *in, char *out)
{
	size_t root;

	if (in == NULL || rocmd_fs_path_norm(in, out, DEPLOY_PATH_MAX) < 0)
		return ROCMD_EINVAL;
	root = rocmd_fs_path_root(out);
	if (root == 0 || strlen(out) <= root || strstr(out, "/../") != NULL ||
	    strstr(out, "/./") != NULL || out[strlen(out) - 1] == '/')
		return ROCMD_EINVAL;
	return 0;
}

/* The canonical root for target path PATH: ROOT (given, clean) resolved, and
 * PATH's part below it appended to it in OUT. */
static int
below_root(const char *given, const char *canon, const char *path, char *out, const char *what,
           char *why, size_t whylen)
{
	const char *rel = rocmd_fs_below(given, path);

	if (rel == NULL)
		rel = rocmd_fs_below(canon, path);
	if (rel == NULL || *rel == '\0') {
		snprintf(why, whylen, "%s %s is not inside its tree %s", what, path, given);
		return ROCMD_EUNSAFE;
	}
	return deploy_join(out, canon, rel);
}

/* A refusal of a folder's owner (rocmd_fs_resolve's ROCMD_EPERM) as the
 * unsafe target it is (the client's "permission denied" means its own
 * rights), with what it means in WHY. */
static int
owner_refused(char *why, size_t whylen)
{
	size_t l = strlen(why);

	snprintf(why + l, whylen - l,
	         ": a deploy target that a user other than root owns or may write is refused "
	         "unless it is configured as such (deploy.allow_user_owned_targets)");
	return ROCMD_EUNSAFE;
}

/*
 * Resolves target TG's paths (docs/DEPLOY.md, "Targets"). Its root (the SDK's
 * install folder, the application's folder; given by an admin or found by
 * discovery) is canonicalized once: /opt/rocm -> /opt/rocm-6.2.4 is fine.
 * Below it nothing may be a symlink: every folder down to the library folder
 * and to the binary's folder is checked, and named when it is one, and every
 * later operation opens them again without following any (rocmd_fs_*_in).
 * A binary that is a symlink is followed only to a sibling file
 * (librocblas.so.0 -> librocblas.so.0.1). Unless TG->user_owned_ok, those
 * folders must be root's (or rocmd's own user's) and writable by no one
 * else. Without a root, the library folder's grandparent stands for it (the
 * manual backup names live there: bin\rocblas_backup\library) and the
 * binary's folder for the binary.
 */
int
deploy_paths(const struct rocmd_deploy_target *tg, struct deploy_paths *p, char *why, size_t whylen)
{
	char path[DEPLOY_PATH_MAX], given[DEPLOY_PATH_MAX], dir[DEPLOY_PATH_MAX];
	char base[DEPLOY_PATH_MAX], pbase[DEPLOY_PATH_MAX], gdir[DEPLOY_PATH_MAX];
	unsigned fl = tg->user_owned_ok ? 0 : ROCMD_FS_RESOLVE_OWNER;
	int rc, kind;

	memset(p, 0, sizeof(*p));
	if (clean_abs(tg->lib_dir, path) < 0) {
		snprintf(why, whylen, "the library folder must be an absolute, clean path");
		return ROCMD_EINVAL;
	}
	if (tg->root != NULL) {
		if (rocmd_fs_path_norm(tg->root, given, sizeof(given)) < 0 ||
		    rocmd_fs_path_root(given) == 0) {
			snprintf(why, whylen, "the target's tree must be an absolute, clean path");
			return ROCMD_EINVAL;
		}
		if ((rc = rocmd_fs_realpath(given, p->lroot, sizeof(p->lroot))) < 0) {
			snprintf(why, whylen, "cannot resolve %s: %s", given, rocmd_strerror(rc));
			return rc;
		}
		if ((rc = below_root(given, p->lroot, path, p->lib, "the library folder", why,
		                     whylen)) < 0)
			return rc;
	} else {
		deploy_split(path, dir, base);
		deploy_split(dir, gdir, pbase);
		if (strlen(dir) <= rocmd_fs_path_root(dir)) {
			snprintf(why, whylen, "the library folder %s is too near the root", path);
			return ROCMD_EINVAL;
		}
		if ((rc = rocmd_fs_realpath(gdir, p->lroot, sizeof(p->lroot))) < 0) {
			snprintf(why, whylen, "cannot resolve %s: %s", gdir, rocmd_strerror(rc));
			return rc;
		}
		if (deploy_join(dir, p->lroot, pbase) < 0 || deploy_join(p->lib, dir, base) < 0) {
			snprintf(why, whylen, "path too long");
			return ROCMD_EINVAL;
		}
	}
	deploy_split(p->lib, p->parent, base);
	if ((rc = rocmd_fs_resolve(p->lroot, p->lib, fl | ROCMD_FS_RESOLVE_LAST, why, whylen)) < 0)
		return rc == ROCMD_EPERM ? owner_refused(why, whylen) : rc;
	if ((p->lib_kind = rocmd_fs_kind_in(p->lroot, p->lib, NULL, NULL)) < 0) {
		snprintf(why, whylen, "%s: %s", p->lib, rocmd_strerror(p->lib_kind));
		return p->lib_kind;
	}
	if (p->lib_kind != 0 && p->lib_kind != 'd') {
		snprintf(why, whylen, "%s is not a folder (a symlink or a file)", p->lib);
		return ROCMD_EUNSAFE;
	}
	if (tg->binary == NULL)
		return 0;
	p->has_binary = 1;
	if (clean_abs(tg->binary, path) < 0) {
		snprintf(why, whylen, "the binary must be an absolute, clean path");
		return ROCMD_EINVAL;
	}
	if (tg->root != NULL) {
		snprintf(p->broot, sizeof(p->broot), "%s", p->lroot);
		if ((rc = below_root(given, p->broot, path, p->bin, "the binary", why, whylen)) < 0)
			return rc;
	} else {
		deploy_split(path, dir, base);
		if ((rc = rocmd_fs_realpath(dir, p->broot, sizeof(p->broot))) < 0) {
			snprintf(why, whylen, "cannot resolve %s: %s", dir, rocmd_strerror(rc));
			return rc;
		}
		if (deploy_join(p->bin, p->broot, base) < 0) {
			snprintf(why, whylen, "path too long");
			return ROCMD_EINVAL;
		}
	}
	deploy_split(p->bin, p->bin_dir, base);
	if ((rc = rocmd_fs_resolve(p->broot, p->bin, fl, why, whylen)) < 0)
		return rc == ROCMD_EPERM ? owner_refused(why, whylen) : rc;
	kind = rocmd_fs_kind_in(p->broot, p->bin, NULL, NULL);
	if (kind == 'l') {
		char target[256];
		if (rocmd_fs_readlink_in(p->broot, p->bin, target, sizeof(target)) < 0 ||
		    target[0] == '\0' || strchr(target, '/') != NULL || strcmp(target, "..") == 0 ||
		    strcmp(target, ".") == 0) {
			snprintf(why, whylen,
			         "%s is a symlink out of its folder: name the file it points to",
			         p->bin);
			return ROCMD_EUNSAFE;
		}
		if (deploy_join(p->bin, p->bin_dir, target) < 0 ||
		    (kind = rocmd_fs_kind_in(p->broot, p->bin, NULL, NULL)) != 'f') {
			snprintf(why, whylen, "%s does not lead to a regular file", tg->binary);
			return ROCMD_EUNSAFE;
		}
	} else if (kind != 0 && kind != 'f') {
		snprintf(why, whylen, "%s is not a regular file", p->bin);
		return kind < 0 ? kind : ROCMD_EUNSAFE;
	}
	p->bin_kind = kind;
	return 0;
}

const char *
deploy_root_of(const struct deploy_paths *p, const char *path)
{
	if (rocmd_fs_below(p->lroot, path) != NULL)
		return p->lroot;
	if (p->has_binary && rocmd_fs_below(p->broot, path) != NULL)
		return p->broot;
	return NULL;
}
