/*
 * The deploy engine on real folder trees: Linux-shaped (lib/librocblas.so.0.1
 * with its librocblas.so.0 symlink + lib/rocblas/library) and Windows-shaped
 * (bin/rocblas.dll + bin/rocblas/library, windows = 1) targets filled with
 * small synthetic libraries, packages whose files sit in a real
 * content-addressed store (pkg.h). Every outcome is judged by a hash of the
 * whole tree (names, kinds, modes' exec bit, content, link targets), so
 * "equals the old tree or the new one" is exact:
 *   - deploy -> rollback to the original -> redeploy, byte for byte;
 *   - a stale-file case (the old library has files and folders the new lacks);
 *   - SIGKILL at every kill point (a child deploys with ROCMD_KILLPOINT
 *     "*:N" for N = 1, 2, ... until it finishes), recovery in the parent,
 *     then recovery killed at each of its own kill points too;
 *   - a failpoint (EIO, ENOSPC, EACCES) at every file operation ("*:N");
 *   - verification catching changed, extra and mismatched files; refusals
 *     of unsafe paths; adoption of a manual rocblas_backup;
 *   - a target with hipBLASLt's library folder beside rocBLAS's (WITH_LT):
 *     both folders in one transaction, killed at every kill point and
 *     failed at every file operation, each folder the old or the new tree
 *     on the same side, the backup holding hipBLASLt's originals.
 * After each fault the target is exactly the old or the new tree, its binary
 * belongs to the same package as its library, and the backup of the
 * originals still matches its manifest.
 *
 * The same file is cross-built as test-deploy.exe and run under wine
 * (tests/windows/test-wdep-win.sh): there the trees live under the wine
 * prefix's %TEMP% ("C:/users/.../Temp"), packages hold no symlinks (refused
 * on Windows, checked), the swap is the two-rename one, and
 * test_loaded_dll deploys over a bin/rocblas.dll that this process has
 * loaded (LoadLibrary), twice, then rolls back. The kill points run there
 * through the program started again as a child (--child) for the
 * Windows-shaped deploys. Skipped there, each with its reason printed: the
 * kill points of the Linux-shaped deploys, one fault walk per error kind of
 * the three, the symlink refusals, the real Debian tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _WIN32
#include <process.h>
#include <windows.h>
#else
#include <ftw.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#endif

#include <cmocka.h>

#include "common/error.h"
#include "common/failpoint.h"
#include "common/fs.h"
#include "common/hash.h"
#include "common/paths.h"
#include "daemon/deploy/deploy.h"
#include "daemon/pkg/pkg.h"

#ifdef _WIN32
#define IS_WINDOWS 1
#else
#define IS_WINDOWS 0
#endif

/* Paths are joined with rocmd_fs_fmt (common/fs.h): snprintf through a
 * function, so -Wformat-truncation does not flag every join of the test's
 * short-by-construction paths. */

/* ---- trees and packages ---- */

struct spec {
	const char *path;    /* relative to the library folder */
	const char *content; /* NULL: a symlink to LINK */
	const char *link;
};

/* Original (vendor) library, package A, package B (lacks A's extra files). */
static const struct spec ORIG[] = {{"TensileLibrary.dat", "vendor index for gfx1030 gfx1100", NULL},
                                   {"TensileLibrary_gfx1030.co", "vendor code gfx1030", NULL},
                                   {"Kernels.so-000-gfx1030.hsaco", "vendor kernels", NULL},
                                   {NULL, NULL, NULL}};
static const struct spec PKG_A[] = {
    {"TensileLibrary_lazy_gfx1103.dat", "A lazy index gfx1103", NULL},
    {"TensileLibrary_gfx1103.co", "A code objects gfx1103 .......", NULL},
    {"extra/old-only.co", "A file in a folder B lacks", NULL},
    {"stale_gfx1103.hsaco", "A stale kernels", NULL},
    {"TensileManifest.txt", "A manifest", NULL},
    {"alias.dat", NULL, "TensileLibrary_lazy_gfx1103.dat"},
    {NULL, NULL, NULL}};
static const struct spec PKG_B[] = {
    {"TensileLibrary_lazy_gfx1103.dat", "B lazy index gfx1103 v2", NULL},
    {"TensileLibrary_gfx1103.co", "B code objects gfx1103", NULL},
    {"TensileManifest.txt", "B manifest", NULL},
    {NULL, NULL, NULL}};

/* hipBLASLt's folder: the vendor's, and packages A's and B's (WITH_LT). */
static const struct spec ORIG_LT[] = {
    {"TensileLibrary_lazy_gfx1030.dat", "vendor hipBLASLt index gfx1030", NULL},
    {"extop_gfx1030.co", "vendor hipBLASLt ext ops", NULL},
    {"gfx1030/TensileLibrary_gfx1030.co", "vendor hipBLASLt per-arch code", NULL},
    {NULL, NULL, NULL}};
static const struct spec PKG_A_LT[] = {
    {"TensileLibrary_lazy_gfx1103.dat", "A hipBLASLt index gfx1103", NULL},
    {"hipblasltExtOpLibrary.dat", "A hipBLASLt ext op index", NULL},
    {"extop_gfx1103.co", "A hipBLASLt ext ops", NULL},
    {NULL, NULL, NULL}};
static const struct spec PKG_B_LT[] = {
    {"TensileLibrary_lazy_gfx1103.dat", "B hipBLASLt index gfx1103", NULL},
    {"extop_gfx1103.co", "B hipBLASLt ext ops v2", NULL},
    {NULL, NULL, NULL}};

/* 1: fixtures get hipBLASLt's folder, and deploys carry its files. */
static int with_lt;
/* 1 (with WITH_LT): deploys carry hipBLASLt's files only, rocBLAS's folder
 * and binary stay as they are (a package of hipBLASLt's folder alone). */
static int keep_lib;

struct pkg {
	struct rocmd_deploy_file files[16];
	size_t n;
	struct rocmd_deploy_file lt[8]; /* hipBLASLt's folder (WITH_LT) */
	size_t nlt;
	char lt_src[8][512];
	struct rocmd_deploy_file binary;
	char src[16][512];
	char bin_src[512];
	const char *label;
};

struct fx {
	char dir[512];
	char state[512], store[512];
	char root[600]; /* the SDK's tree */
	char lib[512], bin[512], binlink[512];
	int windows;
	struct rocmd_deploy_target target;
	struct pkg a, b;
	char orig_tree[ROCMD_SHA256_HEX], orig_bin[ROCMD_SHA256_HEX];
	/* WITH_LT: hipBLASLt's folder, its originals' tree hash, and the trees
	 * a scenario's old and new content give it. */
	char lt[512];
	char orig_lt[ROCMD_SHA256_HEX], old_lt[ROCMD_SHA256_HEX], new_lt[ROCMD_SHA256_HEX];
};

static void
write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

static void
mkdirs(const char *path)
{
	assert_int_equal(rocmd_paths_mkdir_p(path, 0755), 0);
}

/* Copies file SRC to DST (created or truncated) the plain way, 0644. */
static void
copy_plain(const char *src, const char *dst)
{
	FILE *in = fopen(src, "rb"), *out;
	char buf[65536];
	size_t n;

	assert_non_null(in);
	if (access(dst, F_OK) == 0) {
		chmod(dst, 0644);
		assert_int_equal(unlink(dst), 0);
	}
	out = fopen(dst, "wb");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* A fresh folder PREFIX-XXXXXX under the temporary folder, '/'-separated. */
static void
make_temp_dir(char *out, size_t len, const char *prefix)
{
#ifdef _WIN32
	static int seq;
	const char *tmp = getenv("TEMP");
	char base[400];

	assert_non_null(tmp);
	assert_int_equal(rocmd_fs_path_norm(tmp, base, sizeof(base)), 0);
	for (;;) {
		rocmd_fs_fmt(out, len, "%s/%s-%lu-%d", base, prefix,
		             (unsigned long)GetCurrentProcessId(), ++seq);
		if (rocmd_fs_mkdir(out, 0700) == 0)
			return;
	}
#else
	rocmd_fs_fmt(out, len, "/tmp/%s-XXXXXX", prefix);
	assert_non_null(mkdtemp(out));
#endif
}

/* Removes a whole test folder, read-only store objects included. */
static void
remove_all(const char *dir)
{
#ifdef _WIN32
	assert_int_equal(rocmd_fs_remove_tree(dir), 0);
#else
	char cmd[1200];

	rocmd_fs_fmt(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
	assert_int_equal(system(cmd), 0);
#endif
}

static void
hex_of(const char *content, char hex[ROCMD_SHA256_HEX])
{
	struct rocmd_sha256 *h;
	uint8_t d[ROCMD_SHA256_LEN];

	assert_int_equal(rocmd_sha256_new(&h), 0);
	rocmd_sha256_update(h, content, strlen(content));
	rocmd_sha256_final(h, d);
	rocmd_sha256_hex(d, hex);
}

/* Where the store keeps object HEX (pkg.h). The Windows build made while the
 * package store is not ported (ROCMD_WIN_PENDING) has no store: a plain
 * folder of objects named by their hash stands in. */
static int
object_path(const char *store, const char *hex, char *out, size_t len)
{
#ifdef ROCMD_TEST_NO_STORE
	rocmd_fs_fmt(out, len, "%s/objects/%s", store, hex);
	return 0;
#else
	return rocmd_store_object_path(store, hex, out, len);
#endif
}

/* Puts CONTENT in the store as an object; SRC gets its path. */
static void
store_put(struct fx *f, const char *content, char hex[ROCMD_SHA256_HEX], char *src, size_t len)
{
	char dir[1600];

	hex_of(content, hex);
	assert_int_equal(object_path(f->store, hex, src, len), 0);
	rocmd_fs_fmt(dir, sizeof(dir), "%s", src);
	*strrchr(dir, '/') = 0;
	mkdirs(dir);
	if (access(src, F_OK) != 0) {
		write_file(src, content);
		chmod(src, 0444);
	}
}

/* The files of spec S as a deploy list (*N of them), sources in the store. */
static void
files_make(struct fx *f, const struct spec *s, struct rocmd_deploy_file *files, size_t *n,
           char (*src)[512])
{
	for (; s->path != NULL; s++) {
		struct rocmd_deploy_file *e = &files[*n];
		/* No symlinks on Windows (test_refusals checks the refusal). */
		if (s->content == NULL && IS_WINDOWS)
			continue;
		e->path = s->path;
		if (s->content == NULL) {
			e->kind = ROCMD_DEPLOY_SYMLINK;
			e->link = s->link;
			(*n)++;
			continue;
		}
		e->kind = ROCMD_DEPLOY_FILE;
		e->size = strlen(s->content);
		store_put(f, s->content, e->sha256, src[*n], sizeof(src[*n]));
		e->source = src[*n];
		(*n)++;
	}
}

static void
pkg_make(struct fx *f, struct pkg *p, const struct spec *s, const char *bin_content,
         const char *label)
{
	memset(p, 0, sizeof(*p));
	p->label = label;
	files_make(f, s, p->files, &p->n, p->src);
	p->binary.kind = ROCMD_DEPLOY_FILE;
	p->binary.exec = 1;
	p->binary.size = strlen(bin_content);
	store_put(f, bin_content, p->binary.sha256, p->bin_src, sizeof(p->bin_src));
	p->binary.source = p->bin_src;
}

/* A hash over a whole tree: every entry's kind, path, exec bit, content or
 * link target, in path order. Symlinks are not followed. (Windows: the
 * listing comes from rocmd_dir_* and rocmd_fsinfo_get, the SDK scanner's
 * calls, not from the engine's own walker; there is no exec bit and there are
 * no symlinks.) */
static char tree_lines[256][700];
static int tree_nlines;
static const char *tree_root;

static void
tree_add(const char *line)
{
	assert_true(tree_nlines < 256);
	rocmd_fs_fmt(tree_lines[tree_nlines++], sizeof(tree_lines[0]), "%s", line);
}

#ifdef _WIN32
static void
tree_list(const char *dir)
{
	struct rocmd_dir *d = rocmd_dir_open(dir);
	struct rocmd_dirent *de;

	assert_non_null(d);
	while ((de = rocmd_dir_read(d)) != NULL) {
		char path[1600], line[700], hex[ROCMD_SHA256_HEX];
		struct rocmd_fsinfo fi;
		uint8_t dg[ROCMD_SHA256_LEN];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, de->d_name);
		assert_int_equal(rocmd_fsinfo_get(path, 0, &fi), 0);
		if (fi.type == ROCMD_FS_DIR) {
			rocmd_fs_fmt(line, sizeof(line), "d %s", path + strlen(tree_root));
			tree_add(line);
			tree_list(path);
			continue;
		}
		assert_int_equal(fi.type, ROCMD_FS_FILE);
		assert_int_equal(rocmd_sha256_file(path, dg, NULL), 0);
		rocmd_sha256_hex(dg, hex);
		rocmd_fs_fmt(line, sizeof(line), "f %s 0 %s", path + strlen(tree_root), hex);
		tree_add(line);
	}
	rocmd_dir_close(d);
}
#else
static int
tree_visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char line[700], hex[ROCMD_SHA256_HEX] = "-";
	const char *rel = path + strlen(tree_root);

	(void)ftw;
	if (type == FTW_SL) {
		char t[512];
		ssize_t n = readlink(path, t, sizeof(t) - 1);
		t[n < 0 ? 0 : n] = 0;
		rocmd_fs_fmt(line, sizeof(line), "l %s -> %s", rel, t);
	} else if (type == FTW_D || type == FTW_DP) {
		rocmd_fs_fmt(line, sizeof(line), "d %s", rel);
	} else {
		uint8_t d[ROCMD_SHA256_LEN];
		assert_int_equal(rocmd_sha256_file(path, d, NULL), 0);
		rocmd_sha256_hex(d, hex);
		rocmd_fs_fmt(line, sizeof(line), "f %s %d %s", rel, (st->st_mode & 0100) != 0, hex);
	}
	tree_add(line);
	return 0;
}
#endif

static int
line_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The tree hash of ROOT, or "absent". */
static void
tree_hash(const char *root, char out[ROCMD_SHA256_HEX])
{
	struct rocmd_sha256 *h;
	uint8_t d[ROCMD_SHA256_LEN];
	struct rocmd_fsinfo fi;

	if (rocmd_fsinfo_get(root, 0, &fi) != 0) {
		rocmd_fs_fmt(out, ROCMD_SHA256_HEX, "absent");
		return;
	}
	tree_nlines = 0;
	tree_root = root;
#ifdef _WIN32
	tree_add("d ");
	tree_list(root);
#else
	assert_int_equal(nftw(root, tree_visit, 16, FTW_PHYS), 0);
#endif
	qsort(tree_lines, (size_t)tree_nlines, sizeof(tree_lines[0]), line_cmp);
	assert_int_equal(rocmd_sha256_new(&h), 0);
	for (int i = 0; i < tree_nlines; i++)
		rocmd_sha256_update(h, tree_lines[i], strlen(tree_lines[i]) + 1);
	rocmd_sha256_final(h, d);
	rocmd_sha256_hex(d, out);
}

static void
file_hash(const char *path, char out[ROCMD_SHA256_HEX])
{
	uint8_t d[ROCMD_SHA256_LEN];

	if (rocmd_sha256_file(path, d, NULL) != 0) {
		rocmd_fs_fmt(out, ROCMD_SHA256_HEX, "absent");
		return;
	}
	rocmd_sha256_hex(d, out);
}

/* The tree hash a package deploys to, computed by writing it once into a
 * scratch folder the plain way. */
static void
files_tree_hash(struct fx *f, const struct rocmd_deploy_file *files, size_t n,
                char out[ROCMD_SHA256_HEX])
{
	char dir[1600], path[1600];

	rocmd_fs_fmt(dir, sizeof(dir), "%s/expect", f->dir);
	mkdirs(dir);
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *e = &files[i];
		char parent[1600];
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, e->path);
		rocmd_fs_fmt(parent, sizeof(parent), "%s", path);
		*strrchr(parent, '/') = 0;
		mkdirs(parent);
		if (e->kind == ROCMD_DEPLOY_SYMLINK) {
#ifndef _WIN32
			assert_int_equal(symlink(e->link, path), 0);
#endif
		} else {
			copy_plain(e->source, path);
		}
	}
	tree_hash(dir, out);
	remove_all(dir);
}

static void
pkg_tree_hash(struct fx *f, const struct pkg *p, char out[ROCMD_SHA256_HEX])
{
	/* Relative paths only: the same for every fixture, so computed once. */
	static char cache[2][ROCMD_SHA256_HEX];
	int slot = p->files[0].size == strlen(PKG_A[0].content) ? 0 : 1;

	if (cache[slot][0] != '\0') {
		memcpy(out, cache[slot], ROCMD_SHA256_HEX);
		return;
	}
	files_tree_hash(f, p->files, p->n, out);
	memcpy(cache[slot], out, ROCMD_SHA256_HEX);
}

/* The paths and the target of the fixture in F->dir. */
static void
fx_paths(struct fx *f, int windows)
{
	f->windows = windows;
	rocmd_fs_fmt(f->state, sizeof(f->state), "%s/state", f->dir);
	rocmd_fs_fmt(f->store, sizeof(f->store), "%s/store", f->dir);
	/* A Windows-layout SDK where the installer puts it (spaces included). */
	rocmd_fs_fmt(f->root, sizeof(f->root), windows ? "%s/Program Files/AMD/ROCm/6.2" : "%s/sdk",
	             f->dir);
	if (windows) {
		rocmd_fs_fmt(f->lib, sizeof(f->lib), "%s/bin/rocblas/library", f->root);
		rocmd_fs_fmt(f->bin, sizeof(f->bin), "%s/bin/rocblas.dll", f->root);
		f->binlink[0] = 0;
	} else {
		rocmd_fs_fmt(f->lib, sizeof(f->lib), "%s/lib/rocblas/library", f->root);
		rocmd_fs_fmt(f->bin, sizeof(f->bin), "%s/lib/librocblas.so.0.1", f->root);
		/* The SONAME symlink, where there are symlinks. */
		if (!IS_WINDOWS)
			rocmd_fs_fmt(f->binlink, sizeof(f->binlink), "%s/lib/librocblas.so.0",
			             f->root);
	}
	f->target.name = windows ? "win-6.2" : "linux-5.7";
	f->target.lib_dir = f->lib;
	f->target.binary = f->binlink[0] ? f->binlink : f->bin;
	f->target.windows = windows;
	/* The Windows-layout target names its tree: its parents are checked to
	 * lie inside it, resolved (GetFinalPathNameByHandleW on Windows). */
	f->target.root = windows ? f->root : NULL;
	if (with_lt) {
		rocmd_fs_fmt(f->lt, sizeof(f->lt),
		             windows ? "%s/bin/hipblaslt/library" : "%s/lib/hipblaslt/library",
		             f->root);
		f->target.lt_dir = f->lt;
	}
}

static void
fx_build(struct fx *f, int windows)
{
	char path[1200];

	memset(f, 0, sizeof(*f));
	make_temp_dir(f->dir, sizeof(f->dir), "rocmd-test-deploy");
	fx_paths(f, windows);
	mkdirs(f->state);
	mkdirs(f->store);
	mkdirs(f->lib);
	for (const struct spec *s = ORIG; s->path != NULL; s++) {
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", f->lib, s->path);
		write_file(path, s->content);
	}
	write_file(f->bin, "vendor rocblas binary");
	chmod(f->bin, 0755);
#ifndef _WIN32
	if (f->binlink[0])
		assert_int_equal(symlink("librocblas.so.0.1", f->binlink), 0);
#endif
	pkg_make(f, &f->a, PKG_A, "rocblas binary of A", "package A");
	pkg_make(f, &f->b, PKG_B, "rocblas binary of B", "package B");
	tree_hash(f->lib, f->orig_tree);
	file_hash(f->bin, f->orig_bin);
	if (with_lt) {
		rocmd_fs_fmt(path, sizeof(path), "%s/gfx1030", f->lt);
		mkdirs(path);
		for (const struct spec *s = ORIG_LT; s->path != NULL; s++) {
			rocmd_fs_fmt(path, sizeof(path), "%s/%s", f->lt, s->path);
			write_file(path, s->content);
		}
		files_make(f, PKG_A_LT, f->a.lt, &f->a.nlt, f->a.lt_src);
		files_make(f, PKG_B_LT, f->b.lt, &f->b.nlt, f->b.lt_src);
		tree_hash(f->lt, f->orig_lt);
	}
}

static void
fx_free(struct fx *f)
{
	rocmd_failpoint_set(NULL, NULL);
	remove_all(f->dir);
}

static int
deploy(struct fx *f, const struct pkg *p, unsigned flags, rocmd_deploy_check_fn check,
       struct rocmd_deploy_result *res, char *why, size_t whylen)
{
	struct rocmd_deploy_request req = {
	    .state_dir = f->state,
	    .target = f->target,
	    .files = keep_lib ? NULL : p->files,
	    .nfiles = keep_lib ? 0 : p->n,
	    .binary = keep_lib ? NULL : &p->binary,
	    .lt = with_lt,
	    .lt_files = p->lt,
	    .nlt_files = p->nlt,
	    .keep_lib = keep_lib,
	    .label = p->label,
	    .flags = flags,
	    .check = check,
	};
	return rocmd_deploy_run(&req, res, why, whylen);
}

/* Deploys the backup of the originals (rollback --to original). */
static int
deploy_original(struct fx *f, char *why, size_t whylen)
{
	struct rocmd_deploy_files o;
	struct rocmd_deploy_result res;
	int rc = rocmd_deploy_backup_load(f->state, f->target.name, &o, why, whylen);

	if (rc < 0)
		return rc;
	{
		struct rocmd_deploy_request req = {
		    .state_dir = f->state,
		    .target = f->target,
		    .files = o.files,
		    .nfiles = o.n,
		    .binary = o.binary,
		    .lt = o.has_lt,
		    .lt_files = o.lt_files,
		    .nlt_files = o.nlt,
		    .label = "original",
		};
		rc = rocmd_deploy_run(&req, &res, why, whylen);
	}
	rocmd_deploy_files_free(&o);
	return rc;
}

static void
assert_tree(const char *root, const char *want)
{
	char got[ROCMD_SHA256_HEX];

	tree_hash(root, got);
	assert_string_equal(got, want);
}

/* The backup of the originals matches its manifest, and that manifest is the
 * originals' content. */
static void
assert_backup_intact(struct fx *f)
{
	struct rocmd_deploy_files o;
	char why[512], lib[1600], bin[1600];

	assert_int_equal(rocmd_deploy_backup_load(f->state, f->target.name, &o, why, sizeof(why)),
	                 0);
	rocmd_fs_fmt(lib, sizeof(lib), "%s/deploy/%s/backup/library", f->state, f->target.name);
	rocmd_fs_fmt(bin, sizeof(bin), "%s/deploy/%s/backup/binary", f->state, f->target.name);
	assert_tree(lib, f->orig_tree);
	{
		char h[ROCMD_SHA256_HEX];
		file_hash(bin, h);
		assert_string_equal(h, f->orig_bin);
		assert_non_null(o.binary);
		assert_string_equal(o.binary->sha256, f->orig_bin);
	}
	assert_int_equal(o.n, 3);
	if (with_lt) {
		/* hipBLASLt's originals beside the library's. */
		rocmd_fs_fmt(lib, sizeof(lib), "%s/deploy/%s/backup/hipblaslt", f->state,
		             f->target.name);
		assert_tree(lib, f->orig_lt);
		assert_true(o.has_lt);
		assert_int_equal(o.nlt, 3);
	}
	rocmd_deploy_files_free(&o);
}

/* ---- tests ---- */

static void
cycle(int windows)
{
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_verify_report rep;
	char why[512], a_tree[ROCMD_SHA256_HEX], h[ROCMD_SHA256_HEX];

	fx_build(&f, windows);
	pkg_tree_hash(&f, &f.a, a_tree);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_true(res.backup_made);
	/* One RENAME_EXCHANGE on Linux; NTFS has none: two renames. */
	assert_int_equal(res.exchange, !IS_WINDOWS);
	assert_int_equal(res.files, f.a.n + 1);
	assert_tree(f.lib, a_tree);
	file_hash(f.bin, h);
	assert_string_equal(h, f.a.binary.sha256);
	assert_backup_intact(&f);
	/* The Linux SONAME symlink still leads to the binary. */
	if (f.binlink[0]) {
		char t[64];
		assert_int_equal(rocmd_fs_readlink(f.binlink, t, sizeof(t)), 0);
		assert_string_equal(t, "librocblas.so.0.1");
	}
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, "gfx1103", NULL, NULL, &rep, why, sizeof(why)),
	    0);
	assert_int_equal(rep.files_bad, 0);
	assert_int_equal(rep.pair_ok, 1);
	assert_int_equal(rep.arch_ok, 1);
	assert_string_equal(rep.label, "package A");
	/* Rollback to the original, byte for byte. */
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, f.orig_tree);
	file_hash(f.bin, h);
	assert_string_equal(h, f.orig_bin);
	/* Redeploy: the same tree as the first time; the backup is not redone. */
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_false(res.backup_made);
	assert_tree(f.lib, a_tree);
	assert_backup_intact(&f);
	/* Nothing of ours is left beside the target. */
	{
		char p[1600];
		rocmd_fs_fmt(p, sizeof(p), "%s/../.rocmd-stage-%s", f.lib, f.target.name);
		assert_int_not_equal(access(p, F_OK), 0);
	}
	fx_free(&f);
}

static void
test_cycle_linux(void **state)
{
	(void)state;
	cycle(0);
}

static void
test_cycle_windows(void **state)
{
	(void)state;
	cycle(1);
}

static void
test_stale_files(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512], b_tree[ROCMD_SHA256_HEX], p[1600];

	(void)state;
	fx_build(&f, 0);
	pkg_tree_hash(&f, &f.b, b_tree);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	/* B lacks extra/, stale_gfx1103.hsaco and alias.dat: none survive. */
	assert_tree(f.lib, b_tree);
	rocmd_fs_fmt(p, sizeof(p), "%s/extra", f.lib);
	assert_int_not_equal(access(p, F_OK), 0);
	rocmd_fs_fmt(p, sizeof(p), "%s/stale_gfx1103.hsaco", f.lib);
	assert_int_not_equal(access(p, F_OK), 0);
	fx_free(&f);
}

/* An SDK update replaces what was deployed with new vendor files: a deploy
 * with ROCMD_DEPLOY_NEW_ORIGINALS keeps the earlier backup as backup.1 and
 * backs up the update's files; rolling back to the originals then gives the
 * update's files, and backup.1 still holds the first originals (I1). */
static void
test_new_originals(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512], upd_tree[ROCMD_SHA256_HEX], upd_bin[ROCMD_SHA256_HEX],
	    a_tree[ROCMD_SHA256_HEX];
	char path[1600], h[ROCMD_SHA256_HEX];
	struct rocmd_deploy_generation gens[8];
	size_t ngens;

	(void)state;
	fx_build(&f, 0);
	pkg_tree_hash(&f, &f.a, a_tree);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	/* The update: a new library folder and binary, as an installer writes them. */
	remove_all(f.lib);
	mkdirs(f.lib);
	rocmd_fs_fmt(path, sizeof(path), "%s/TensileLibrary.dat", f.lib);
	write_file(path, "vendor index 2 for gfx1030 gfx1100 gfx1103");
	rocmd_fs_fmt(path, sizeof(path), "%s/TensileLibrary_gfx1103.co", f.lib);
	write_file(path, "vendor code 2 gfx1103");
	assert_int_equal(unlink(f.bin), 0);
	write_file(f.bin, "vendor rocblas binary 2");
	chmod(f.bin, 0755);
	tree_hash(f.lib, upd_tree);
	file_hash(f.bin, upd_bin);
	/* With the flag: the update's files become the originals. */
	assert_int_equal(deploy(&f, &f.a, ROCMD_DEPLOY_NEW_ORIGINALS, NULL, &res, why, sizeof(why)),
	                 0);
	assert_true(res.backup_made);
	assert_int_equal(res.backup_retired, 1);
	assert_tree(f.lib, a_tree);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/library", f.state, f.target.name);
	assert_tree(path, upd_tree);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup.1/library", f.state, f.target.name);
	assert_tree(path, f.orig_tree);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup.1/binary", f.state, f.target.name);
	file_hash(path, h);
	assert_string_equal(h, f.orig_bin);
	/* A later deploy without the flag leaves both generations alone. */
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	assert_false(res.backup_made);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, upd_tree);
	file_hash(f.bin, h);
	assert_string_equal(h, upd_bin);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup.1/library", f.state, f.target.name);
	assert_tree(path, f.orig_tree);
	/* The generations are listed from the target's folder: the two there,
	 * in order; names retire_backup does not write ("backup.01") are not
	 * generations, and no other manifest is opened (a third open fails). */
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup.01", f.state, f.target.name);
	mkdirs(path);
	assert_int_equal(rocmd_failpoint_set("fs.open:3:EIO", NULL), 0);
	assert_int_equal(rocmd_deploy_generations(f.state, f.target.name, gens, 8, &ngens), 0);
	assert_int_equal(ngens, 2);
	assert_int_equal(gens[0].gen, 1);
	assert_int_equal(gens[1].gen, 0);
	assert_false(rocmd_failpoint_fired());
	fx_free(&f);
}

static int
check_refuses(const struct rocmd_deploy_target *t, void *ctx, char *why, size_t whylen)
{
	(void)t;
	(void)ctx;
	rocmd_fs_fmt(why, whylen, "smoke test failed");
	return 1;
}

static void
test_check_rolls_back(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512], a_tree[ROCMD_SHA256_HEX], h[ROCMD_SHA256_HEX];

	(void)state;
	fx_build(&f, 0);
	pkg_tree_hash(&f, &f.a, a_tree);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_int_not_equal(deploy(&f, &f.b, 0, check_refuses, &res, why, sizeof(why)), 0);
	assert_true(res.rolled_back);
	assert_non_null(strstr(why, "smoke test failed"));
	assert_tree(f.lib, a_tree);
	file_hash(f.bin, h);
	assert_string_equal(h, f.a.binary.sha256);
	fx_free(&f);
}

/* The state a fault may leave: exactly OLD or NEW, binary of the same one. */
static void
assert_old_or_new(struct fx *f, const char *old_tree, const char *old_bin, const char *new_tree,
                  const char *new_bin, int *was_new)
{
	char t[ROCMD_SHA256_HEX], b[ROCMD_SHA256_HEX];

	tree_hash(f->lib, t);
	file_hash(f->bin, b);
	if (strcmp(t, new_tree) == 0) {
		assert_string_equal(b, new_bin);
		*was_new = 1;
	} else {
		if (strcmp(t, old_tree) != 0)
			fail_msg("target %s is neither the old nor the new tree", f->lib);
		assert_string_equal(b, old_bin);
		*was_new = 0;
	}
	if (with_lt && keep_lib) {
		/* rocBLAS's never changes (checked above): hipBLASLt's says. */
		tree_hash(f->lt, t);
		*was_new = strcmp(t, f->new_lt) == 0;
		if (!*was_new && strcmp(t, f->old_lt) != 0)
			fail_msg("hipBLASLt's folder %s is neither the old nor the new tree", f->lt);
	} else if (with_lt) {
		/* hipBLASLt's folder on the same side as rocBLAS's: never a mix. */
		tree_hash(f->lt, t);
		if (strcmp(t, *was_new ? f->new_lt : f->old_lt) != 0)
			fail_msg("hipBLASLt's folder %s is not the %s tree rocBLAS's is", f->lt,
			         *was_new ? "new" : "old");
	}
}

/* No journal, no leftovers of ours next to the target. */
static void
assert_clean(struct fx *f)
{
	char **names;
	size_t n;
	char p[1600], parent[1600], bdir[1600];

	assert_int_equal(rocmd_deploy_pending(f->state, &names, &n), 0);
	assert_int_equal(n, 0);
	free(names);
	rocmd_fs_fmt(parent, sizeof(parent), "%s", f->lib);
	*strrchr(parent, '/') = 0;
	rocmd_fs_fmt(bdir, sizeof(bdir), "%s", f->bin);
	*strrchr(bdir, '/') = 0;
	rocmd_fs_fmt(p, sizeof(p), "%s/.rocmd-stage-%s", parent, f->target.name);
	assert_int_not_equal(access(p, F_OK), 0);
	rocmd_fs_fmt(p, sizeof(p), "%s/.rocmd-old-%s", parent, f->target.name);
	assert_int_not_equal(access(p, F_OK), 0);
	rocmd_fs_fmt(p, sizeof(p), "%s/.rocmd-new-%s", bdir, f->target.name);
	assert_int_not_equal(access(p, F_OK), 0);
	rocmd_fs_fmt(p, sizeof(p), "%s/.rocmd-old-%s", bdir, f->target.name);
	assert_int_not_equal(access(p, F_OK), 0);
	if (with_lt) {
		rocmd_fs_fmt(parent, sizeof(parent), "%s", f->lt);
		*strrchr(parent, '/') = 0;
		rocmd_fs_fmt(p, sizeof(p), "%s/.rocmd-lt-stage-%s", parent, f->target.name);
		assert_int_not_equal(access(p, F_OK), 0);
		rocmd_fs_fmt(p, sizeof(p), "%s/.rocmd-lt-old-%s", parent, f->target.name);
		assert_int_not_equal(access(p, F_OK), 0);
	}
}

enum scenario { SC_FIRST, SC_SECOND, SC_ROLLBACK, SC_FALLBACK };

/* Runs one deploy of the scenario in this process. */
static int
scenario_run(struct fx *f, enum scenario sc, struct rocmd_deploy_result *res, char *why,
             size_t whylen)
{
	switch (sc) {
	case SC_FIRST:
		return deploy(f, &f->a, 0, NULL, res, why, whylen);
	case SC_SECOND:
	case SC_FALLBACK:
		return deploy(f, &f->b, 0, NULL, res, why, whylen);
	case SC_ROLLBACK:
		return deploy(f, &f->b, 0, check_refuses, res, why, whylen);
	}
	return -1;
}

static void
scenario_prepare(struct fx *f, enum scenario sc, int windows)
{
	struct rocmd_deploy_result res;
	char why[512];

	fx_build(f, windows);
	if (sc != SC_FIRST)
		assert_int_equal(deploy(f, &f->a, 0, NULL, &res, why, sizeof(why)), 0);
}

static void
scenario_old_new(struct fx *f, enum scenario sc, char *old_tree, char *old_bin, char *new_tree,
                 char *new_bin)
{
	if (with_lt) {
		/* hipBLASLt's folder goes the same way: originals or A before,
		 * A or B after (a rolled-back deploy keeps the old). */
		if (sc == SC_FIRST)
			strcpy(f->old_lt, f->orig_lt);
		else
			files_tree_hash(f, f->a.lt, f->a.nlt, f->old_lt);
		if (sc == SC_ROLLBACK)
			strcpy(f->new_lt, f->old_lt);
		else
			files_tree_hash(f, sc == SC_FIRST ? f->a.lt : f->b.lt,
			                sc == SC_FIRST ? f->a.nlt : f->b.nlt, f->new_lt);
	}
	if (sc == SC_FIRST) {
		strcpy(old_tree, f->orig_tree);
		strcpy(old_bin, f->orig_bin);
		pkg_tree_hash(f, &f->a, new_tree);
		strcpy(new_bin, f->a.binary.sha256);
	} else {
		pkg_tree_hash(f, &f->a, old_tree);
		strcpy(old_bin, f->a.binary.sha256);
		if (sc == SC_ROLLBACK) {
			strcpy(new_tree, old_tree); /* never kept */
			strcpy(new_bin, old_bin);
		} else {
			pkg_tree_hash(f, &f->b, new_tree);
			strcpy(new_bin, f->b.binary.sha256);
		}
	}
	if (keep_lib) {
		/* rocBLAS's folder and binary: the originals, before and after. */
		strcpy(old_tree, f->orig_tree);
		strcpy(new_tree, f->orig_tree);
		strcpy(old_bin, f->orig_bin);
		strcpy(new_bin, f->orig_bin);
	}
}

static const char *
fallback_spec(enum scenario sc)
{
	/* EINVAL from renameat2: the file system "lacks" RENAME_EXCHANGE. */
	return sc == SC_FALLBACK ? "deploy.exchange:1:22" : NULL;
}

/*
 * SIGKILL at the N-th kill point, for every N the deploy reaches; then
 * recovery killed at its M-th kill point for every M; then a clean recovery.
 */
/*
 * Runs scenario SC's deploy (RECOVER 0) or recovery (1) on fixture F in a
 * child process with kill point KILLSPEC armed; 1 when the child was killed
 * there, 0 when it ran to its end. Linux: fork. Windows: this program
 * started again (--child), which rebuilds F's paths from its folder; a kill
 * point ends it with _exit(137), as abruptly as TerminateProcess.
 */
static const char *self_exe;

static void
child_act(struct fx *f, enum scenario sc, int recover)
{
	struct rocmd_deploy_result res;
	struct rocmd_deploy_recovery rec;
	char why[512];

	if (recover)
		_exit(rocmd_deploy_recover(f->state, f->target.name, &rec, why, sizeof(why)) == 0
		          ? 0
		          : 1);
	_exit(scenario_run(f, sc, &res, why, sizeof(why)) == 0 ? 0 : 1);
}

#ifdef _WIN32
static int
child_killed(struct fx *f, enum scenario sc, int recover, const char *killspec)
{
	char env[96], args[4][600];
	const char *argv[7];
	intptr_t rc;

	rocmd_fs_fmt(env, sizeof(env), "ROCMD_KILLPOINT=%s", killspec);
	assert_int_equal(_putenv(env), 0);
	rocmd_fs_fmt(env, sizeof(env), "ROCMD_FAILPOINT=%s",
	             !recover && fallback_spec(sc) != NULL ? fallback_spec(sc) : "");
	assert_int_equal(_putenv(env), 0);
	rocmd_fs_fmt(args[0], sizeof(args[0]), "%d", (int)sc);
	rocmd_fs_fmt(args[1], sizeof(args[1]), "%d", f->windows);
	rocmd_fs_fmt(args[2], sizeof(args[2]), "%d", recover);
	rocmd_fs_fmt(args[3], sizeof(args[3]), "\"%s\"", f->dir);
	argv[0] = "test-deploy.exe";
	argv[1] = "--child";
	argv[2] = args[0];
	argv[3] = args[1];
	argv[4] = args[2];
	argv[5] = args[3];
	argv[6] = NULL;
	rc = _spawnv(_P_WAIT, self_exe, argv);
	assert_int_equal(_putenv("ROCMD_KILLPOINT="), 0);
	assert_int_equal(_putenv("ROCMD_FAILPOINT="), 0);
	assert_true(rc == 0 || rc == 1 || rc == 137);
	return rc == 137;
}
#else
static int
child_killed(struct fx *f, enum scenario sc, int recover, const char *killspec)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		rocmd_failpoint_set(recover ? NULL : fallback_spec(sc), killspec);
		child_act(f, sc, recover);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status))
		return 0;
	assert_int_equal(WTERMSIG(status), SIGKILL);
	return 1;
}
#endif

static void
kill_everywhere(enum scenario sc, int windows)
{
	int kills = 0;

	for (int n = 1; n < 64; n++) {
		struct fx f;
		char old_tree[ROCMD_SHA256_HEX], old_bin[ROCMD_SHA256_HEX];
		char new_tree[ROCMD_SHA256_HEX], new_bin[ROCMD_SHA256_HEX], spec[32], why[512];
		struct rocmd_deploy_recovery rec;
		int was_new, done = 0;

		scenario_prepare(&f, sc, windows);
		scenario_old_new(&f, sc, old_tree, old_bin, new_tree, new_bin);
		rocmd_fs_fmt(spec, sizeof(spec), "*:%d", n);
		if (!child_killed(&f, sc, 0, spec)) {
			/* Past the last kill point: the deploy ran to its end. */
			done = 1;
		} else {
			kills++;
			/* Recovery, itself killed at each of its kill points. */
			for (int m = 1; m < 16; m++) {
				char rspec[32];
				rocmd_fs_fmt(rspec, sizeof(rspec), "*:%d", m);
				if (!child_killed(&f, sc, 1, rspec))
					break;
			}
			rocmd_failpoint_set(NULL, NULL);
			if (rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)) !=
			    0)
				fail_msg("recovery after kill point %d failed: %s", n, why);
			/* Idempotent: a second run finds nothing to do. */
			assert_int_equal(
			    rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)),
			    0);
			assert_int_equal(rec.action, ROCMD_DEPLOY_RECOVER_NONE);
		}
		assert_old_or_new(&f, old_tree, old_bin, new_tree, new_bin, &was_new);
		assert_clean(&f);
		if (sc == SC_FIRST) {
			/* A backup either complete and right, or absent (redone). */
			struct rocmd_deploy_files o;
			if (rocmd_deploy_backup_load(f.state, f.target.name, &o, why,
			                             sizeof(why)) == 0) {
				rocmd_deploy_files_free(&o);
				assert_backup_intact(&f);
			} else {
				assert_false(was_new);
			}
		} else {
			assert_backup_intact(&f);
		}
		/* And the next deploy works. */
		{
			struct rocmd_deploy_result res;
			char b_tree[ROCMD_SHA256_HEX];
			pkg_tree_hash(&f, &f.b, b_tree);
			if (deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)) != 0)
				fail_msg("deploy after kill point %d: %s", n, why);
			if (keep_lib)
				files_tree_hash(&f, f.b.lt, f.b.nlt, b_tree);
			assert_tree(keep_lib ? f.lt : f.lib, b_tree);
		}
		fx_free(&f);
		if (done)
			break;
	}
	print_message("  %d kill points reached and recovered\n", kills);
	assert_true(kills >= 5);
}

/* Under wine every kill is a process started anew (about a second each), so
 * there only the Windows-shaped deploys (test_kill_windows) are killed; the
 * Linux run kills all five. */
static void
skip_on_windows(void)
{
	if (IS_WINDOWS) {
		print_message("  skip (Windows): a Linux-shaped target; test_kill_windows kills "
		              "the Windows-shaped deploys here\n");
		skip();
	}
}

static void
test_kill_first(void **state)
{
	(void)state;
	skip_on_windows();
	kill_everywhere(SC_FIRST, 0);
}

static void
test_kill_second(void **state)
{
	(void)state;
	skip_on_windows();
	kill_everywhere(SC_SECOND, 0);
}

static void
test_kill_rollback(void **state)
{
	(void)state;
	skip_on_windows();
	kill_everywhere(SC_ROLLBACK, 0);
}

static void
test_kill_fallback(void **state)
{
	(void)state;
	skip_on_windows();
	kill_everywhere(SC_FALLBACK, 0);
}

static void
test_kill_windows(void **state)
{
	(void)state;
	kill_everywhere(SC_SECOND, 1);
	kill_everywhere(SC_FIRST, 1);
}

/* Arms failpoint SPEC (common/failpoint.h). */
static void
arm(const char *spec)
{
	assert_int_equal(rocmd_failpoint_set(spec, NULL), 0);
}

/* Whether the armed failpoint fired; disarms it. */
static int
disarm(void)
{
	int hit = rocmd_failpoint_fired();

	rocmd_failpoint_set(NULL, NULL);
	return hit;
}

/* A failpoint with ERR at every file operation the deploy makes. */
static void
fail_everywhere(enum scenario sc, int windows, const char *err)
{
	int fired = 0;

	for (int n = 1; n < 2000; n++) {
		struct fx f;
		char old_tree[ROCMD_SHA256_HEX], old_bin[ROCMD_SHA256_HEX];
		char new_tree[ROCMD_SHA256_HEX], new_bin[ROCMD_SHA256_HEX], spec[64], why[512];
		struct rocmd_deploy_result res;
		struct rocmd_deploy_recovery rec;
		int rc, was_new, hit;
		char fired_name[64];

		scenario_prepare(&f, sc, windows);
		scenario_old_new(&f, sc, old_tree, old_bin, new_tree, new_bin);
		rocmd_fs_fmt(spec, sizeof(spec), "*:%d:%s", n, err);
		assert_int_equal(rocmd_failpoint_set(spec, NULL), 0);
		rc = scenario_run(&f, sc, &res, why, sizeof(why));
		hit = rocmd_failpoint_fired();
		rocmd_fs_fmt(fired_name, sizeof(fired_name), "%s", rocmd_failpoint_fired_name());
		rocmd_failpoint_set(NULL, NULL);
		if (!hit) {
			fx_free(&f);
			break;
		}
		fired++;
		if (sc != SC_ROLLBACK && rc == 0) {
			/* A failure the engine got past (a leftover it could not
			 * remove, say) must not have cost the deploy. */
		}
		if (rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)) != 0)
			fail_msg("recovery after %s at operation %d failed: %s", err, n, why);
		assert_old_or_new(&f, old_tree, old_bin, new_tree, new_bin, &was_new);
		if (rc != 0 && !res.committed && sc != SC_ROLLBACK && was_new)
			fail_msg(
			    "%s at operation %d (%s) failed the deploy (%s) but left the new tree",
			    err, n, fired_name, why);
		if (rc == 0 || res.committed)
			assert_true(was_new); /* a failed deploy left the old tree */
		assert_clean(&f);
		if (sc != SC_FIRST)
			assert_backup_intact(&f);
		fx_free(&f);
	}
	print_message("  %s: %d file operations failed in turn\n", err, fired);
	assert_true(fired >= 20);
}

/*
 * A commit journal (the deploy killed at commit.current: current.json names
 * the new tree) whose recovery meets a read error as it checks the new tree:
 * an error is no proof the tree is bad, so recovery keeps the journal and the
 * tree, and never undoes to the old tree while current.json names the new
 * one (the fault harness found it: finish:fp:4:eio). Every read of the
 * recovery fails in turn; then a recovery without faults finishes, and
 * current.json matches the disk (lib verify passes).
 */
static void
test_recover_read_error(void **state)
{
	int fired = 0;

	(void)state;
	if (IS_WINDOWS) {
		print_message("  skip (Windows): each kill is a process started anew; the "
		              "recovery's decision is the same code\n");
		skip();
	}
	for (int n = 1; n < 64; n++) {
		struct fx f;
		char old_tree[ROCMD_SHA256_HEX], old_bin[ROCMD_SHA256_HEX];
		char new_tree[ROCMD_SHA256_HEX], new_bin[ROCMD_SHA256_HEX], spec[64], why[512];
		struct rocmd_deploy_recovery rec;
		struct rocmd_deploy_verify_report rep;
		int rc, was_new;

		scenario_prepare(&f, SC_SECOND, 0);
		scenario_old_new(&f, SC_SECOND, old_tree, old_bin, new_tree, new_bin);
		assert_true(child_killed(&f, SC_SECOND, 0, "commit.current"));
		rocmd_fs_fmt(spec, sizeof(spec), "fs.read:%d:EIO", n);
		arm(spec);
		rc = rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why));
		if (!disarm()) {
			fx_free(&f);
			break;
		}
		fired++;
		assert_old_or_new(&f, old_tree, old_bin, new_tree, new_bin, &was_new);
		if (!was_new)
			fail_msg("read %d failed (%s): recovery undid a committed deploy", n,
			         rc < 0 ? why : "recovery said it succeeded");
		if (rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)) != 0)
			fail_msg("recovery after read %d failed: %s", n, why);
		assert_old_or_new(&f, old_tree, old_bin, new_tree, new_bin, &was_new);
		assert_true(was_new);
		if (rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why,
		                        sizeof(why)) != 0)
			fail_msg("after read %d failed: current.json differs from the disk: %s", n,
			         why);
		assert_clean(&f);
		fx_free(&f);
	}
	print_message("  %d reads of the recovery failed in turn\n", fired);
	assert_true(fired >= 2);
}

/* Under wine each round costs about a second (a fresh tree, a deploy,
 * recovery, two tree hashes), so there the three tests walk one scenario
 * each, on the Windows-shaped target: a second deploy, a first deploy (with
 * the backup) and a rolled-back one; every file operation of each still
 * fails in turn. The Linux run walks them all. */
static void
test_fail_eio(void **state)
{
	(void)state;
	if (IS_WINDOWS) {
		fail_everywhere(SC_SECOND, 1, "EIO");
		return;
	}
	fail_everywhere(SC_FIRST, 0, "EIO");
	fail_everywhere(SC_SECOND, 0, "EIO");
	fail_everywhere(SC_ROLLBACK, 0, "EIO");
}

static void
test_fail_enospc(void **state)
{
	(void)state;
	if (IS_WINDOWS) {
		fail_everywhere(SC_FIRST, 1, "ENOSPC");
		return;
	}
	fail_everywhere(SC_SECOND, 0, "ENOSPC");
	fail_everywhere(SC_FALLBACK, 0, "ENOSPC");
}

static void
test_fail_eacces(void **state)
{
	(void)state;
	if (IS_WINDOWS) {
		fail_everywhere(SC_ROLLBACK, 1, "EACCES");
		return;
	}
	fail_everywhere(SC_SECOND, 0, "EACCES");
	fail_everywhere(SC_FIRST, 1, "EACCES");
	fail_everywhere(SC_SECOND, 1, "EIO");
}

/* hipBLASLt's folder beside rocBLAS's (WITH_LT): a deploy places both and
 * backs up both originals; verify hashes both and catches a changed hipBLASLt
 * file; the originals come back byte for byte; a deploy that carries no
 * hipBLASLt files leaves that folder exactly as it is. */
static void
test_lt_cycle(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_verify_report rep;
	char why[512], a_lt[ROCMD_SHA256_HEX], path[1600];

	(void)state;
	with_lt = 1;
	fx_build(&f, 0);
	files_tree_hash(&f, f.a.lt, f.a.nlt, a_lt);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_int_equal(res.files, f.a.n + f.a.nlt + 1);
	assert_tree(f.lt, a_lt);
	assert_backup_intact(&f);
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, "gfx1103", NULL, NULL, &rep, why, sizeof(why)),
	    0);
	assert_true(rep.lt_checked);
	assert_int_equal(rep.files_checked, f.a.n + f.a.nlt + 1);
	rocmd_fs_fmt(path, sizeof(path), "%s/extop_gfx1103.co", f.lt);
	write_file(path, "changed behind rocmd's back");
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, "gfx1103", NULL, NULL, &rep, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_int_equal(rep.files_bad, 1);
	assert_non_null(strstr(rep.first_bad, "extop_gfx1103.co"));
	/* Back to the originals: hipBLASLt's too, byte for byte. */
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, f.orig_tree);
	assert_tree(f.lt, f.orig_lt);
	/* A request without hipBLASLt files leaves the folder as it is. */
	with_lt = 0;
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	assert_tree(f.lt, f.orig_lt);
	assert_int_equal(res.files, f.b.n + 1);
	fx_free(&f);
}

/* Both folders killed at every kill point (and recovery at each of its own),
 * then failed at every file operation: each time rocBLAS's and hipBLASLt's
 * folders are both the old tree or both the new one. */
static void
test_lt_kill(void **state)
{
	(void)state;
	skip_on_windows();
	with_lt = 1;
	kill_everywhere(SC_FIRST, 0);
	kill_everywhere(SC_SECOND, 0);
	kill_everywhere(SC_FALLBACK, 0);
	with_lt = 0;
}

static void
test_lt_fail(void **state)
{
	(void)state;
	skip_on_windows();
	with_lt = 1;
	fail_everywhere(SC_SECOND, 0, "EIO");
	fail_everywhere(SC_ROLLBACK, 0, "ENOSPC");
	with_lt = 0;
}

/* A request keeping rocBLAS's folder (a package of hipBLASLt's folder
 * alone): hipBLASLt's folder replaced, rocBLAS's the same folder (its inode)
 * with the same files, the binary untouched; the manifest records what
 * rocBLAS's holds, so verify checks both; over another package's rocBLAS
 * that package's files stay; back to the originals byte for byte; killed at
 * every kill point and failed at every file operation, rocBLAS's folder never
 * changes and hipBLASLt's is the old or the new tree. */
static void
test_lt_only(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_verify_report rep;
	struct rocmd_deploy_files cur;
	struct stat before, after;
	char why[512], a_lt[ROCMD_SHA256_HEX], b_tree[ROCMD_SHA256_HEX], h[ROCMD_SHA256_HEX];
	char path[1600];

	(void)state;
	with_lt = 1;
	fx_build(&f, 0);
	files_tree_hash(&f, f.a.lt, f.a.nlt, a_lt);
	assert_int_equal(stat(f.lib, &before), 0);
	keep_lib = 1;
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_int_equal(res.files, f.a.nlt);
	assert_tree(f.lt, a_lt);
	assert_tree(f.lib, f.orig_tree);
	assert_int_equal(stat(f.lib, &after), 0);
	assert_true(before.st_ino == after.st_ino); /* never swapped */
	file_hash(f.bin, h);
	assert_string_equal(h, f.orig_bin);
	assert_backup_intact(&f);
	/* current.json names the originals' rocBLAS files and binary. */
	assert_int_equal(rocmd_deploy_current_load(f.state, f.target.name, &cur, why, sizeof(why)),
	                 0);
	assert_true(cur.n > 0);
	assert_non_null(cur.binary);
	assert_string_equal(cur.binary->sha256, f.orig_bin);
	assert_int_equal(cur.nlt, f.a.nlt);
	rocmd_deploy_files_free(&cur);
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why, sizeof(why)), 0);
	assert_true(rep.lt_checked);
	assert_int_equal(rep.pair_ok, 1);
	/* A changed rocBLAS file is caught too: the manifest holds both. */
	rocmd_fs_fmt(path, sizeof(path), "%s/TensileManifest.txt", f.lib);
	write_file(path, "changed behind rocmd's back");
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, f.orig_tree);
	assert_tree(f.lt, f.orig_lt);
	/* Over package B's rocBLAS: B's files and binary stay. */
	keep_lib = 0;
	with_lt = 0;
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	pkg_tree_hash(&f, &f.b, b_tree);
	assert_int_equal(stat(f.lib, &before), 0);
	with_lt = 1;
	keep_lib = 1;
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_tree(f.lib, b_tree);
	assert_int_equal(stat(f.lib, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	file_hash(f.bin, h);
	assert_string_equal(h, f.b.binary.sha256);
	assert_tree(f.lt, a_lt);
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why, sizeof(why)), 0);
	assert_int_equal(rep.pair_ok, 1);
	/* A request keeping rocBLAS's folder must replace hipBLASLt's. */
	with_lt = 0;
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EINVAL);
	with_lt = 1;
	assert_tree(f.lib, b_tree);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, f.orig_tree);
	assert_tree(f.lt, f.orig_lt);
	fx_free(&f);
#ifndef _WIN32
	kill_everywhere(SC_FIRST, 0);
	kill_everywhere(SC_SECOND, 0);
	fail_everywhere(SC_SECOND, 0, "EIO");
	fail_everywhere(SC_ROLLBACK, 0, "ENOSPC");
#endif
	keep_lib = 0;
	with_lt = 0;
}

/* Writes a new vendor hipBLASLt (or rocBLAS) folder DIR, as an update does,
 * and its tree hash into OUT. */
static void
vendor_update(const char *dir, const char *what, char out[ROCMD_SHA256_HEX])
{
	char path[1600];

	remove_all(dir);
	mkdirs(dir);
	rocmd_fs_fmt(path, sizeof(path), "%s/TensileLibrary.dat", dir);
	write_file(path, what);
	rocmd_fs_fmt(path, sizeof(path), "%s/TensileLibrary_gfx1030.co", dir);
	write_file(path, "vendor code 2 gfx1030");
	tree_hash(dir, out);
}

/* Each library's new originals from its own flag: an update of hipBLASLt's
 * folder alone (ROCMD_DEPLOY_NEW_LT_ORIGINALS) backs up the update's files
 * and carries rocBLAS's originals and binary from backup.1 (the target holds
 * package A's rocBLAS, never an original); then an update of rocBLAS's alone
 * (ROCMD_DEPLOY_NEW_ORIGINALS) carries hipBLASLt's from backup.2 (the target
 * holds package A's hipBLASLt). A damaged earlier generation is not carried. */
static void
test_lt_new_originals(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512], upd_lt[ROCMD_SHA256_HEX], upd_lib[ROCMD_SHA256_HEX], h[ROCMD_SHA256_HEX];
	char path[1600];

	(void)state;
	with_lt = 1;
	fx_build(&f, 0);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	vendor_update(f.lt, "vendor hipblaslt index 2", upd_lt);
	assert_int_equal(
	    deploy(&f, &f.b, ROCMD_DEPLOY_NEW_LT_ORIGINALS, NULL, &res, why, sizeof(why)), 0);
	assert_int_equal(res.backup_retired, 1);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/library", f.state, f.target.name);
	assert_tree(path, f.orig_tree);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/hipblaslt", f.state, f.target.name);
	assert_tree(path, upd_lt);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/binary", f.state, f.target.name);
	file_hash(path, h);
	assert_string_equal(h, f.orig_bin);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, f.orig_tree);
	assert_tree(f.lt, upd_lt);
	/* rocBLAS's folder updated alone, over package A. */
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	vendor_update(f.lib, "vendor rocblas index 2", upd_lib);
	assert_int_equal(deploy(&f, &f.b, ROCMD_DEPLOY_NEW_ORIGINALS, NULL, &res, why, sizeof(why)),
	                 0);
	assert_int_equal(res.backup_retired, 2);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/library", f.state, f.target.name);
	assert_tree(path, upd_lib);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/hipblaslt", f.state, f.target.name);
	assert_tree(path, upd_lt);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, upd_lib);
	assert_tree(f.lt, upd_lt);
	/* An earlier generation damaged: no new one is made from it. */
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/library/TensileLibrary.dat", f.state,
	             f.target.name);
	write_file(path, "damaged");
	vendor_update(f.lt, "vendor hipblaslt index 3", upd_lt);
	assert_int_equal(
	    deploy(&f, &f.b, ROCMD_DEPLOY_NEW_LT_ORIGINALS, NULL, &res, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_non_null(strstr(why, "damaged"));
	fx_free(&f);
	with_lt = 0;
}

/* The tree hash of generation GEN's hipBLASLt folder ("" when its manifest
 * names none or there is no such generation). */
static void
backup_lt_hash(struct fx *f, const char *gen, char out[ROCMD_SHA256_HEX])
{
	char path[1600];
	struct rocmd_deploy_files b;
	char why[256];

	out[0] = '\0';
	if (rocmd_deploy_backup_load(f->state, f->target.name, &b, why, sizeof(why)) < 0)
		return;
	if (b.has_lt) {
		rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/%s/hipblaslt", f->state,
		             f->target.name, gen);
		tree_hash(path, out);
	}
	rocmd_deploy_files_free(&b);
}

/*
 * The new backup paths failed at every file operation in turn (EIO), then
 * recovered: the target is the old or the new content (both folders on one
 * side), the backup is never one that lies, and the next deploy, with the flag
 * the daemon would derive again, succeeds and leaves the right originals:
 *   ADD    hipBLASLt's originals added to a backup made without them: when
 *          the target holds the package's hipBLASLt, the backup has the
 *          vendor's;
 *   RENEW  an update of hipBLASLt alone over package A (NEW_LT_ORIGINALS):
 *          rocBLAS's originals stay the vendor's, hipBLASLt's become the
 *          update's, whichever operation failed.
 */
static void
lt_backup_walk(int renew)
{
	int fired = 0;

	for (int n = 1; n < 2000; n++) {
		struct fx f;
		struct rocmd_deploy_result res;
		struct rocmd_deploy_recovery rec;
		char why[512], spec[64], upd_lt[ROCMD_SHA256_HEX] = "", a_tree[ROCMD_SHA256_HEX];
		char b_tree[ROCMD_SHA256_HEX], b_lt[ROCMD_SHA256_HEX], old_lt[ROCMD_SHA256_HEX];
		char t[ROCMD_SHA256_HEX], l[ROCMD_SHA256_HEX], bl[ROCMD_SHA256_HEX], path[1600];
		unsigned flag = renew ? ROCMD_DEPLOY_NEW_LT_ORIGINALS : 0;

		with_lt = 1;
		fx_build(&f, 0);
		pkg_tree_hash(&f, &f.a, a_tree);
		pkg_tree_hash(&f, &f.b, b_tree);
		files_tree_hash(&f, f.b.lt, f.b.nlt, b_lt);
		if (renew) {
			assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
			vendor_update(f.lt, "vendor hipblaslt index 2", upd_lt);
			strcpy(old_lt, upd_lt);
		} else {
			f.target.lt_dir = NULL;
			with_lt = 0;
			assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
			f.target.lt_dir = f.lt;
			with_lt = 1;
			strcpy(old_lt, f.orig_lt);
		}
		rocmd_fs_fmt(spec, sizeof(spec), "*:%d:EIO", n);
		arm(spec);
		deploy(&f, &f.b, flag, NULL, &res, why, sizeof(why));
		if (!disarm()) {
			fx_free(&f);
			break;
		}
		fired++;
		if (rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)) != 0)
			fail_msg("recovery after EIO at operation %d failed: %s", n, why);
		tree_hash(f.lib, t);
		tree_hash(f.lt, l);
		if (!((strcmp(t, a_tree) == 0 && strcmp(l, old_lt) == 0) ||
		      (strcmp(t, b_tree) == 0 && strcmp(l, b_lt) == 0)))
			fail_msg("EIO at operation %d: the target is neither the old nor the new",
			         n);
		backup_lt_hash(&f, "backup", bl);
		if (strcmp(t, b_tree) == 0 && strcmp(bl, renew ? upd_lt : f.orig_lt) != 0)
			fail_msg(
			    "EIO at operation %d: the package's hipBLASLt is in place, but the "
			    "backup lacks the originals it replaced",
			    n);
		/* The next deploy: the daemon's flag again (the update's files are not
		 * the originals in use yet). */
		if (renew && strcmp(bl, upd_lt) == 0)
			flag = 0;
		if (deploy(&f, &f.b, flag, NULL, &res, why, sizeof(why)) != 0)
			fail_msg("the deploy after EIO at operation %d failed: %s", n, why);
		rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/library", f.state,
		             f.target.name);
		assert_tree(path, f.orig_tree);
		backup_lt_hash(&f, "backup", bl);
		assert_string_equal(bl, renew ? upd_lt : f.orig_lt);
		assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
		assert_tree(f.lib, f.orig_tree);
		assert_tree(f.lt, renew ? upd_lt : f.orig_lt);
		fx_free(&f);
	}
	print_message("  %s: %d file operations failed in turn\n", renew ? "renew" : "add", fired);
	assert_true(fired >= 20);
	with_lt = 0;
}

static void
test_lt_backup_faults(void **state)
{
	(void)state;
	skip_on_windows();
	lt_backup_walk(0);
	lt_backup_walk(1);
}

/* A backup made before the target had a hipBLASLt folder: the first deploy
 * that replaces that folder adds its originals to the backup first (the
 * result says so), and the originals come back byte for byte; a deploy that
 * leaves hipBLASLt's folder does not add them. */
static void
test_lt_backup_added(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_backup_info bi;
	char why[512], path[1600], a_lt[ROCMD_SHA256_HEX];

	(void)state;
	with_lt = 1;
	fx_build(&f, 0);
	files_tree_hash(&f, f.a.lt, f.a.nlt, a_lt);
	f.target.lt_dir = NULL; /* no hipBLASLt folder known yet */
	with_lt = 0;
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_int_equal(rocmd_deploy_backup_info(f.state, f.target.name, &bi), 0);
	assert_false(bi.has_lt);
	f.target.lt_dir = f.lt;
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	assert_false(res.lt_backup_added);
	with_lt = 1;
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_true(res.lt_backup_added);
	assert_tree(f.lt, a_lt);
	assert_int_equal(rocmd_deploy_backup_info(f.state, f.target.name, &bi), 0);
	assert_true(bi.has_lt);
	rocmd_fs_fmt(path, sizeof(path), "%s/deploy/%s/backup/hipblaslt", f.state, f.target.name);
	assert_tree(path, f.orig_lt);
	assert_backup_intact(&f);
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	assert_false(res.lt_backup_added);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lt, f.orig_lt);
	assert_tree(f.lib, f.orig_tree);
	fx_free(&f);
	with_lt = 0;
}

static void
test_verify_detects(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_verify_report rep;
	char why[512], p[1600];

	(void)state;
	fx_build(&f, 0);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	/* A changed file. */
	rocmd_fs_fmt(p, sizeof(p), "%s/TensileManifest.txt", f.lib);
	write_file(p, "A manifesT");
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_int_equal(rep.files_bad, 1);
	assert_non_null(strstr(rep.first_bad, "TensileManifest.txt"));
	write_file(p, "A manifest");
	/* An extra file (what copying over the old folder leaves). */
	rocmd_fs_fmt(p, sizeof(p), "%s/TensileLibrary_gfx1030.co", f.lib);
	write_file(p, "stale");
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_non_null(strstr(rep.first_bad, "TensileLibrary_gfx1030.co"));
	unlink(p);
	/* Another package's binary: binary and library do not pair. */
	copy_plain(f.b.binary.source, f.bin);
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, NULL, NULL, NULL, &rep, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_int_equal(rep.pair_ok, 0);
	/* An arch the library lacks. */
	copy_plain(f.a.binary.source, f.bin);
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, "gfx1150", NULL, NULL, &rep, why, sizeof(why)),
	    ROCMD_ECORRUPT);
	assert_int_equal(rep.arch_ok, 0);
	assert_int_equal(
	    rocmd_deploy_verify(f.state, &f.target, "gfx1103", NULL, NULL, &rep, why, sizeof(why)),
	    0);
	fx_free(&f);
}

static void
test_refusals(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512];
	struct pkg bad;

	(void)state;
	fx_build(&f, 0);
	/* ".." in the file list. */
	bad = f.a;
	bad.files[0].path = "../escape.dat";
	assert_int_equal(deploy(&f, &bad, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
	/* A name Windows would read as a drive or an alternate data stream. */
	bad = f.a;
	bad.files[0].path = "TensileLibrary.dat:stream";
	assert_int_equal(deploy(&f, &bad, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
	/* A symlink leaving the library; on Windows any symlink is refused. */
	bad = f.a;
	bad.files[bad.n] = (struct rocmd_deploy_file){
	    .path = "escape.dat", .kind = ROCMD_DEPLOY_SYMLINK, .link = "../../../../etc/passwd"};
	bad.n++;
	assert_int_equal(deploy(&f, &bad, 0, NULL, &res, why, sizeof(why)),
	                 IS_WINDOWS ? ROCMD_EUNSUPPORTED : ROCMD_EUNSAFE);
	if (IS_WINDOWS) {
		assert_non_null(strstr(why, "symlink"));
		bad.files[bad.n - 1].link = "TensileManifest.txt";
		assert_int_equal(deploy(&f, &bad, 0, NULL, &res, why, sizeof(why)),
		                 ROCMD_EUNSUPPORTED);
	}
	/* A corrupt store object: refused while staging, target untouched. */
	bad = f.a;
	bad.files[1].size = 3;
	assert_int_equal(deploy(&f, &bad, 0, NULL, &res, why, sizeof(why)), ROCMD_ECORRUPT);
	assert_non_null(strstr(why, "corrupt"));
	assert_tree(f.lib, f.orig_tree);
	assert_clean(&f);
#ifdef _WIN32
	print_message("  skip (Windows): symlinked parents and target folders need symlinks\n");
#else
	/* A parent folder that is a symlink leading out of the SDK's tree:
	 * refused, naming it, nothing read or written there (I4). */
	{
		char outside[1600], cmd[4000], root[1600], link[1600];
		rocmd_fs_fmt(outside, sizeof(outside), "%s/outside", f.dir);
		rocmd_fs_fmt(root, sizeof(root), "%s/sdk", f.dir);
		rocmd_fs_fmt(link, sizeof(link), "%s/sdk/lib/rocblas", f.dir);
		rocmd_fs_fmt(
		    cmd, sizeof(cmd),
		    "mkdir -p '%s' && mv '%s/sdk/lib/rocblas' '%s/' && ln -s ../../outside/rocblas "
		    "'%s/sdk/lib/rocblas'",
		    outside, f.dir, outside, f.dir);
		assert_int_equal(system(cmd), 0);
		f.target.root = root;
		assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
		assert_non_null(strstr(why, link));
		assert_non_null(strstr(why, "is a symlink"));
		rocmd_fs_fmt(cmd, sizeof(cmd), "%s/rocblas/library", outside);
		assert_tree(cmd, f.orig_tree);
		rocmd_fs_fmt(cmd, sizeof(cmd), "%s/rocblas/.rocmd-stage-%s", outside,
		             f.target.name);
		assert_int_not_equal(access(cmd, F_OK), 0);
		/* Inside the tree too (lib -> lib64 kinds of layouts): every
		 * component below the root is refused, and named. */
		f.target.root = f.dir;
		assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
		assert_non_null(strstr(why, link));
		/* Without a root the library's grandparent stands for it. */
		f.target.root = NULL;
		assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
		assert_non_null(strstr(why, link));
		rocmd_fs_fmt(cmd, sizeof(cmd), "%s/rocblas/library", outside);
		assert_tree(cmd, f.orig_tree);
		rocmd_fs_fmt(cmd, sizeof(cmd),
		             "rm '%s/sdk/lib/rocblas' && mv '%s/rocblas' '%s/sdk/lib/'", f.dir,
		             outside, f.dir);
		assert_int_equal(system(cmd), 0);
		/* The root itself may be reached through a symlink (/opt/rocm ->
		 * rocm-6.2.4): it is resolved once. */
		rocmd_fs_fmt(link, sizeof(link), "%s/rocm", f.dir);
		assert_int_equal(symlink("sdk", link), 0);
		f.target.root = link;
		rocmd_fs_fmt(cmd, sizeof(cmd), "%s/rocm/lib/rocblas/library", f.dir);
		f.target.lib_dir = cmd;
		assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
		f.target.lib_dir = f.lib;
		assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
		f.target.root = NULL;
		assert_tree(f.lib, f.orig_tree);
	}
	/* The target folder a symlink: refused. */
	{
		char real[1600], cmd[4000], p[1600];
		rocmd_fs_fmt(real, sizeof(real), "%s/elsewhere", f.dir);
		rocmd_fs_fmt(cmd, sizeof(cmd), "mv '%s' '%s' && ln -s '%s' '%s'", f.lib, real, real,
		             f.lib);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
		rocmd_fs_fmt(p, sizeof(p), "%s/TensileLibrary.dat", real);
		assert_int_equal(access(p, F_OK), 0);
	}
#endif
	fx_free(&f);
}

/* bin\rocblas_backup\library and bin\rocblas_backup.dll hold the originals. */
static void
assert_manual_names(const struct fx *f)
{
	char manual[1000], manual_bin[1000], h[ROCMD_SHA256_HEX];

	rocmd_fs_fmt(manual, sizeof(manual), "%s/bin/rocblas_backup/library", f->root);
	rocmd_fs_fmt(manual_bin, sizeof(manual_bin), "%s/bin/rocblas_backup.dll", f->root);
	assert_tree(manual, f->orig_tree);
	file_hash(manual_bin, h);
	assert_string_equal(h, f->orig_bin);
}

static void
test_manual_backup(void **state)
{
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512], p[4000], manual[1000];

	(void)state;
	/* MANUAL_BACKUP writes bin\rocblas_backup\library and rocblas_backup.dll. */
	fx_build(&f, 1);
	assert_int_equal(deploy(&f, &f.a, ROCMD_DEPLOY_MANUAL_BACKUP, NULL, &res, why, sizeof(why)),
	                 0);
	assert_manual_names(&f);
	/* Never overwritten by a later deploy. */
	assert_int_equal(deploy(&f, &f.b, ROCMD_DEPLOY_MANUAL_BACKUP, NULL, &res, why, sizeof(why)),
	                 0);
	assert_manual_names(&f);
	fx_free(&f);

	/* The manual names could not be written on the first deploy (on Windows a
	 * folder in use; here bin/rocblas_backup is a file in the way), after the
	 * state backup was made: the deploy fails and changes nothing, and the
	 * next one, once the way is clear, still writes them. */
	fx_build(&f, 1);
	rocmd_fs_fmt(p, sizeof(p), "%s/bin/rocblas_backup", f.root);
	write_file(p, "in the way\n");
	assert_true(deploy(&f, &f.a, ROCMD_DEPLOY_MANUAL_BACKUP, NULL, &res, why, sizeof(why)) < 0);
	assert_false(res.committed);
	assert_tree(f.lib, f.orig_tree);
	assert_int_equal(remove(p), 0);
	assert_int_equal(deploy(&f, &f.a, ROCMD_DEPLOY_MANUAL_BACKUP, NULL, &res, why, sizeof(why)),
	                 0);
	assert_manual_names(&f);
	assert_backup_intact(&f);
	fx_free(&f);

	/* Adoption: the user renamed the originals by hand and copied a
	 * community build in; the backup is made from rocblas_backup. */
	fx_build(&f, 1);
	rocmd_fs_fmt(manual, sizeof(manual), "%s/bin/rocblas_backup/library", f.root);
	mkdirs(manual);
	for (const struct spec *s = ORIG; s->path != NULL; s++) {
		rocmd_fs_fmt(p, sizeof(p), "%s/%s", manual, s->path);
		write_file(p, s->content);
	}
	rocmd_fs_fmt(p, sizeof(p), "%s/bin/rocblas_backup.dll", f.root);
	copy_plain(f.bin, p);
	rocmd_fs_fmt(p, sizeof(p), "%s/TensileLibrary_lazy_gfx1103.dat", f.lib);
	write_file(p, "community\n");
	write_file(f.bin, "community-dll\n");
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_true(res.backup_adopted);
	assert_backup_intact(&f);
	fx_free(&f);
}

#ifdef _WIN32
/* Counts names ending in ".del" in folder DIR; the last one into OUT. */
static int
count_deleted_later(const char *dir, char *out, size_t len)
{
	struct rocmd_dir *d = rocmd_dir_open(dir);
	struct rocmd_dirent *de;
	int n = 0;

	out[0] = '\0';
	assert_non_null(d);
	while ((de = rocmd_dir_read(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l > 4 && strcmp(de->d_name + l - 4, ".del") == 0) {
			rocmd_fs_fmt(out, len, "%s", de->d_name);
			n++;
		}
	}
	rocmd_dir_close(d);
	return n;
}
#endif

/*
 * Windows: the rocblas.dll being replaced is loaded in this process
 * (LoadLibrary, as an application using the SDK holds it). The deploy
 * renames it aside and puts the new one in; the loaded module keeps working
 * from the file aside; a second deploy and a rollback to the original run
 * while it is still loaded. ROCMD_TEST_DLL names a real DLL with rocBLAS's
 * version query (tests/windows/fake-rocblas.c).
 */
static void
test_loaded_dll(void **state)
{
	(void)state;
#ifndef _WIN32
	print_message("  skip: LoadLibrary is Windows' (test_cycle_windows runs the rules here)\n");
	skip();
#else
	const char *dll = getenv("ROCMD_TEST_DLL");
	struct fx f;
	struct rocmd_deploy_result res;
	char why[512], h[ROCMD_SHA256_HEX], a_tree[ROCMD_SHA256_HEX], b_tree[ROCMD_SHA256_HEX];
	char path[1600], bdir[1600], later[256], v[64];
	int (*ver)(char *, size_t);
	HMODULE mod;

	if (dll == NULL || access(dll, R_OK) != 0) {
		print_message("  skip: ROCMD_TEST_DLL does not name a DLL (fake-rocblas.dll)\n");
		skip();
	}
	fx_build(&f, 1);
	copy_plain(dll, f.bin);
	file_hash(f.bin, f.orig_bin);
	rocmd_fs_fmt(path, sizeof(path), "%s", f.bin);
	for (char *c = path; *c != '\0'; c++)
		if (*c == '/')
			*c = '\\';
	mod = LoadLibraryA(path);
	assert_non_null(mod);
	ver = (int (*)(char *, size_t))(void (*)(void))GetProcAddress(mod,
	                                                              "rocblas_get_version_string");
	assert_non_null(ver);
	rocmd_fs_fmt(bdir, sizeof(bdir), "%s", f.bin);
	*strrchr(bdir, '/') = 0;

	pkg_tree_hash(&f, &f.a, a_tree);
	if (deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)) != 0)
		fail_msg("deploy over the loaded rocblas.dll: %s", why);
	assert_false(res.exchange);
	assert_tree(f.lib, a_tree);
	file_hash(f.bin, h);
	assert_string_equal(h, f.a.binary.sha256);
	/* The backup holds the DLL that was loaded, byte for byte. */
	assert_backup_intact(&f);
	/* The process still runs the old code, from the file renamed aside. */
	assert_int_equal(ver(v, sizeof(v)), 0);
	assert_string_equal(v, "4.2.0-stand-in");
	assert_clean(&f);
	if (count_deleted_later(bdir, later, sizeof(later)) > 0)
		print_message("  the loaded DLL could not be deleted: kept as %s, deleted at the "
		              "next reboot\n",
		              later);
	else
		print_message("  the DLL renamed aside was deleted at once (this system lets a "
		              "loaded DLL be deleted)\n");

	/* Again while it is still loaded: the aside name is free. */
	pkg_tree_hash(&f, &f.b, b_tree);
	if (deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)) != 0)
		fail_msg("second deploy with the old DLL loaded: %s", why);
	assert_tree(f.lib, b_tree);
	assert_clean(&f);
	/* Rollback to the original: the loaded DLL's bytes are back in place. */
	if (deploy_original(&f, why, sizeof(why)) != 0)
		fail_msg("rollback with the old DLL loaded: %s", why);
	assert_tree(f.lib, f.orig_tree);
	file_hash(f.bin, h);
	assert_string_equal(h, f.orig_bin);
	assert_clean(&f);
	assert_int_equal(ver(v, sizeof(v)), 0);
	FreeLibrary(mod);
	fx_free(&f);
#endif
}

static void
test_failpoint_spec(void **state)
{
	(void)state;
	assert_int_equal(rocmd_failpoint_set("deploy.rename:2:ENOSPC", NULL), 0);
	assert_int_equal(rocmd_failpoint_hit("deploy.open"), 0);
	assert_int_equal(rocmd_failpoint_hit("deploy.rename"), 0);
	assert_int_equal(rocmd_failpoint_hit("deploy.rename"), ROCMD_ENOSPACE);
	assert_int_equal(rocmd_failpoint_hit("deploy.rename"), 0);
	assert_true(rocmd_failpoint_fired());
	assert_string_equal(rocmd_failpoint_fired_name(), "deploy.rename");
	assert_int_equal(rocmd_failpoint_set("x:0:EIO", NULL), ROCMD_EINVAL);
	assert_int_equal(rocmd_failpoint_set("x:1:EWHAT", NULL), ROCMD_EINVAL);
	assert_int_equal(rocmd_failpoint_set(NULL, NULL), 0);
	assert_int_equal(ROCMD_FAILPOINT("deploy.rename"), 0);
}

/* The real thing: Debian trixie's rocBLAS 5.5.1 (librocblas.so.0.1, 450 MB,
 * and the 4-file library tests/fixtures/make-trees.sh extracts) as the originals of
 * a sandbox SDK; the package is three of those real files (the fourth is the
 * stale one) and the real binary, from the store. deploy -> diff -r ->
 * rollback -> diff -r against the Debian tree -> redeploy -> diff -r. */
static void
test_real_tree(void **state)
{
	const char *trees = getenv("ROCMD_SDK_TREES");
	static const char *keep[] = {"TensileLibrary.dat", "TensileLibrary_gfx803.co",
	                             "Kernels.so-000-gfx803.hsaco"};
	char real[1200], realbin[1200], cmd[8000], why[1024], src[3][600], binsrc[600];
	char expect[1200];
	struct rocmd_deploy_file files[3];
	struct rocmd_deploy_file bin = {.kind = ROCMD_DEPLOY_FILE, .exec = 1};
	struct rocmd_deploy_result res;
	struct fx f;

	(void)state;
	if (IS_WINDOWS) {
		print_message("  skip (Windows): Debian's rocBLAS tree is a Linux one\n");
		skip();
	}
	if (trees == NULL || trees[0] == '\0') {
		print_message(
		    "  skip: ROCMD_SDK_TREES is not set (tests/fixtures/make-trees.sh)\n");
		skip();
	}
	rocmd_fs_fmt(real, sizeof(real),
	             "%s/trixie/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library", trees);
	rocmd_fs_fmt(realbin, sizeof(realbin),
	             "%s/trixie/usr/lib/x86_64-linux-gnu/librocblas.so.0.1", trees);
	if (access(real, R_OK) != 0 || access(realbin, R_OK) != 0) {
		print_message("  skip: no trixie rocBLAS tree under %s (no network?)\n", trees);
		skip();
	}
	memset(&f, 0, sizeof(f));
	make_temp_dir(f.dir, sizeof(f.dir), "rocmd-test-deploy-real");
	rocmd_fs_fmt(f.state, sizeof(f.state), "%s/state", f.dir);
	rocmd_fs_fmt(f.store, sizeof(f.store), "%s/store", f.dir);
	rocmd_fs_fmt(f.lib, sizeof(f.lib), "%s/sdk/lib/rocblas/2.47.0/library", f.dir);
	rocmd_fs_fmt(f.bin, sizeof(f.bin), "%s/sdk/lib/librocblas.so.0.1", f.dir);
	rocmd_fs_fmt(f.binlink, sizeof(f.binlink), "%s/sdk/lib/librocblas.so.0", f.dir);
	rocmd_fs_fmt(expect, sizeof(expect), "%s/expect", f.dir);
	mkdirs(f.state);
	mkdirs(expect);
	rocmd_fs_fmt(cmd, sizeof(cmd),
	             "mkdir -p '%s/sdk/lib/rocblas/2.47.0' && cp -a --reflink=auto '%s' '%s' && "
	             "cp -a --reflink=auto '%s' '%s' && ln -s librocblas.so.0.1 '%s'",
	             f.dir, real, f.lib, realbin, f.bin, f.binlink);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < 3; i++) {
		char p[1800], d[1800];
		uint8_t dg[ROCMD_SHA256_LEN];
		rocmd_fs_fmt(p, sizeof(p), "%s/%s", real, keep[i]);
		files[i] = (struct rocmd_deploy_file){.path = keep[i], .kind = ROCMD_DEPLOY_FILE};
		assert_int_equal(rocmd_sha256_file(p, dg, &files[i].size), 0);
		rocmd_sha256_hex(dg, files[i].sha256);
		assert_int_equal(object_path(f.store, files[i].sha256, src[i], sizeof(src[i])), 0);
		rocmd_fs_fmt(d, sizeof(d), "%s", src[i]);
		*strrchr(d, '/') = 0;
		mkdirs(d);
		rocmd_fs_fmt(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 444 '%s' && cp '%s' '%s/'", p,
		             src[i], src[i], p, expect);
		assert_int_equal(system(cmd), 0);
		files[i].source = src[i];
	}
	{
		uint8_t dg[ROCMD_SHA256_LEN];
		assert_int_equal(rocmd_sha256_file(realbin, dg, &bin.size), 0);
		rocmd_sha256_hex(dg, bin.sha256);
		assert_int_equal(object_path(f.store, bin.sha256, binsrc, sizeof(binsrc)), 0);
		rocmd_fs_fmt(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'",
		             binsrc, realbin, binsrc);
		assert_int_equal(system(cmd), 0);
		bin.source = binsrc;
	}
	f.target.name = "trixie";
	f.target.lib_dir = f.lib;
	f.target.binary = f.binlink;
	{
		struct rocmd_deploy_request req = {.state_dir = f.state,
		                                   .target = f.target,
		                                   .files = files,
		                                   .nfiles = 3,
		                                   .binary = &bin,
		                                   .label = "real",
		                                   .arch = "gfx803"};
		assert_int_equal(rocmd_deploy_run(&req, &res, why, sizeof(why)), 0);
		assert_true(res.backup_made);
		rocmd_fs_fmt(cmd, sizeof(cmd), "diff -r '%s' '%s' && cmp '%s' '%s'", expect, f.lib,
		             realbin, f.bin);
		assert_int_equal(system(cmd), 0);
		/* Rollback to the original: byte for byte Debian's tree again. */
		assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
		rocmd_fs_fmt(cmd, sizeof(cmd), "diff -r '%s' '%s' && cmp '%s' '%s'", real, f.lib,
		             realbin, f.bin);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(rocmd_deploy_run(&req, &res, why, sizeof(why)), 0);
		assert_false(res.backup_made);
		rocmd_fs_fmt(cmd, sizeof(cmd), "diff -r '%s' '%s'", expect, f.lib);
		assert_int_equal(system(cmd), 0);
	}
	fx_free(&f);
}

/* ---- the resolver: nothing below a root is followed (I4) ---- */

#ifndef _WIN32
/* Every operation below ROOT with the folder "a/b" a symlink to OUTSIDE
 * fails, and OUTSIDE (holding a canary) is untouched. */
static void
resolver_round(const char *dir, int no_openat2)
{
	char root[1200], outside[1200], p[1600], q[1600], why[1024], canary[1600], cmd[4000];
	char hex[ROCMD_SHA256_HEX], before[ROCMD_SHA256_HEX];
	struct rocmd_fs_copy_stats st = {0};
	struct rocmd_fs_entry *e = NULL;
	struct rocmd_fs_id id;
	size_t n = 0;
	int fd;

	rocmd_fs_test_no_openat2 = no_openat2;
	rocmd_fs_fmt(root, sizeof(root), "%s/root%d", dir, no_openat2);
	rocmd_fs_fmt(outside, sizeof(outside), "%s/outside%d", dir, no_openat2);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c", root);
	mkdirs(p);
	mkdirs(outside);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c/file", root);
	write_file(p, "inside");
	/* Real folders all the way: fine, and the operations work. */
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c/x", root);
	assert_int_equal(rocmd_fs_resolve(root, p, ROCMD_FS_RESOLVE_OWNER, why, sizeof(why)), 0);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c", root);
	assert_int_equal(rocmd_fs_resolve(root, p, ROCMD_FS_RESOLVE_LAST, why, sizeof(why)), 0);
	assert_int_equal(rocmd_fs_kind_in(root, p, NULL, NULL), 'd');
	assert_int_equal(rocmd_fs_kind_in(root, root, NULL, NULL), 'd');
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c/new", root);
	assert_int_equal(rocmd_fs_mkdir_in(root, p, 0755), 0);
	rocmd_fs_fmt(q, sizeof(q), "%s/a/b/c/new2", root);
	assert_int_equal(rocmd_fs_rename_in(root, p, q), 0);
	assert_int_equal(rocmd_fs_remove_tree_in(root, q, NULL), 0);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c/file", root);
	assert_int_equal(rocmd_fs_hash_file_in(root, p, hex, NULL), 0);
	/* Not below the root, or with "..": refused before anything is opened. */
	rocmd_fs_fmt(p, sizeof(p), "%s/a/../../x", root);
	assert_int_equal(rocmd_fs_mkdir_in(root, p, 0755), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_mkdir_in(root, outside, 0755), ROCMD_EUNSAFE);
	rocmd_fs_fmt(p, sizeof(p), "%sx/y", root);
	assert_int_equal(rocmd_fs_mkdir_in(root, p, 0755), ROCMD_EUNSAFE);
	/* The user's move: a/b becomes a symlink to a folder outside. */
	rocmd_fs_fmt(canary, sizeof(canary), "%s/c/canary", outside);
	rocmd_fs_fmt(cmd, sizeof(cmd),
	             "mkdir -p '%s/c' && echo root-only > '%s' && "
	             "mv '%s/a/b' '%s/a/b.real' && ln -s '%s' '%s/a/b'",
	             outside, canary, root, root, outside, root);
	assert_int_equal(system(cmd), 0);
	tree_hash(outside, before);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c/x", root);
	assert_int_equal(rocmd_fs_resolve(root, p, 0, why, sizeof(why)), ROCMD_EUNSAFE);
	rocmd_fs_fmt(q, sizeof(q), "%s/a/b is a symlink", root);
	assert_non_null(strstr(why, q));
	assert_int_equal(rocmd_fs_mkdir_in(root, p, 0755), ROCMD_EUNSAFE);
	fd = rocmd_fs_open_in(root, p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_int_equal(fd, ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_symlink_in(root, "t", p), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_kind_in(root, canary, NULL, NULL), ROCMD_EUNSAFE);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c/canary", root);
	assert_int_equal(rocmd_fs_kind_in(root, p, NULL, NULL), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_id_of_in(root, p, &id), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_hash_file_in(root, p, hex, NULL), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_unlink_in(root, p), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_set_writable_in(root, p, 1), ROCMD_EUNSAFE);
	rocmd_fs_fmt(q, sizeof(q), "%s/a/stolen", root);
	assert_int_equal(rocmd_fs_rename_in(root, p, q), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_link_in(root, p, q), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_copy_file_in(root, p, NULL, q, 0644, 0, NULL, NULL, &st),
	                 ROCMD_EUNSAFE);
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b/c", root);
	assert_true(rocmd_fs_walk_in(root, p, 0, &e, &n, why, sizeof(why)) < 0);
	assert_int_equal(rocmd_fs_remove_tree_in(root, p, NULL), ROCMD_EUNSAFE);
	assert_int_equal(rocmd_fs_fsync_dir_in(root, p), ROCMD_EUNSAFE);
	rocmd_fs_fmt(q, sizeof(q), "%s/a/b.real/c", root);
	assert_int_equal(rocmd_fs_exchange_in(root, p, q), ROCMD_EUNSAFE);
	/* The link itself (the last name) is removed as a link, never followed. */
	rocmd_fs_fmt(p, sizeof(p), "%s/a/b", root);
	assert_int_equal(rocmd_fs_kind_in(root, p, NULL, NULL), 'l');
	tree_hash(outside, hex);
	assert_string_equal(hex, before);
	assert_int_equal(rocmd_fs_remove_tree_in(root, p, NULL), 0);
	assert_int_equal(access(canary, F_OK), 0);
	/* A root named through a symlink is not followed either: callers pass
	 * the canonical one (rocmd_fs_realpath). */
	rocmd_fs_fmt(p, sizeof(p), "%s/root-link%d", dir, no_openat2);
	assert_int_equal(symlink(root, p), 0);
	rocmd_fs_fmt(q, sizeof(q), "%s/a", p);
	assert_int_equal(rocmd_fs_kind_in(p, q, NULL, NULL), ROCMD_EUNSAFE);
	/* Folders a user other than root owns or may write (root only). */
	if (geteuid() == 0) {
		rocmd_fs_fmt(p, sizeof(p), "%s/a/b.real/c", root);
		rocmd_fs_fmt(q, sizeof(q), "%s/a/b.real/c/x", root);
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_int_equal(
		    rocmd_fs_resolve(root, q, ROCMD_FS_RESOLVE_OWNER, why, sizeof(why)),
		    ROCMD_EPERM);
		assert_non_null(strstr(why, "owned by uid 65534"));
		assert_int_equal(rocmd_fs_resolve(root, q, 0, why, sizeof(why)), 0);
		assert_int_equal(chown(p, 0, 0), 0);
		assert_int_equal(chmod(p, 01777), 0);
		assert_int_equal(
		    rocmd_fs_resolve(root, q, ROCMD_FS_RESOLVE_OWNER, why, sizeof(why)),
		    ROCMD_EPERM);
		assert_non_null(strstr(why, "every user"));
		assert_int_equal(chmod(p, 0755), 0);
	}
	rocmd_fs_entries_free(e, n);
	rocmd_fs_test_no_openat2 = 0;
}
#endif

static void
test_resolver(void **state)
{
	(void)state;
#ifdef _WIN32
	print_message("  skip (Windows): symlinked folders need symlinks (wine: none to make)\n");
	skip();
#else
	char dir[512];

	make_temp_dir(dir, sizeof(dir), "rocmd-test-resolve");
	resolver_round(dir, 0); /* openat2 */
	resolver_round(dir, 1); /* kernels without it: a walk of O_NOFOLLOW opens */
	remove_all(dir);
#endif
}

#ifndef _WIN32
/* The user's move while a deploy runs: when the engine reports the step
 * ("backup", after its checks), the target's parent folder rocblas becomes
 * a symlink to a folder elsewhere with a library of its own. */
struct swap_ctx {
	const char *parent, *moved, *outside;
	int done;
};

static int
swap_parent(const struct rocmd_deploy_progress *p, void *arg)
{
	struct swap_ctx *c = arg;

	if (!c->done && strcmp(p->step, "backup") == 0) {
		c->done = 1;
		assert_int_equal(rename(c->parent, c->moved), 0);
		assert_int_equal(symlink(c->outside, c->parent), 0);
	}
	return 0;
}
#endif

static void
test_race_parent(void **state)
{
#ifdef _WIN32
	(void)state;
	print_message("  skip (Windows): symlinked folders need symlinks\n");
	skip();
#else
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_recovery rec;
	struct swap_ctx c = {0};
	char why[1024], a_tree[ROCMD_SHA256_HEX], out_tree[ROCMD_SHA256_HEX], h[ROCMD_SHA256_HEX];
	char parent[1600], moved[1600], outside[1600], cmd[4000];

	(void)state;
	fx_build(&f, 0);
	f.target.root = f.root;
	pkg_tree_hash(&f, &f.a, a_tree);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	/* A root-owned library elsewhere, which the user may not touch. */
	rocmd_fs_fmt(parent, sizeof(parent), "%s/lib/rocblas", f.root);
	rocmd_fs_fmt(moved, sizeof(moved), "%s/lib/rocblas.real", f.root);
	rocmd_fs_fmt(outside, sizeof(outside), "%s/victim/rocblas", f.dir);
	rocmd_fs_fmt(cmd, sizeof(cmd),
	             "mkdir -p '%s/library' && echo root-only > '%s/library/canary'", outside,
	             outside);
	assert_int_equal(system(cmd), 0);
	rocmd_fs_fmt(cmd, sizeof(cmd), "%s/victim", f.dir);
	tree_hash(cmd, out_tree);
	c.parent = parent;
	c.moved = moved;
	c.outside = outside;
	{
		struct rocmd_deploy_request req = {.state_dir = f.state,
		                                   .target = f.target,
		                                   .files = f.b.files,
		                                   .nfiles = f.b.n,
		                                   .binary = &f.b.binary,
		                                   .label = f.b.label,
		                                   .progress = swap_parent,
		                                   .ctx = &c};
		assert_true(rocmd_deploy_run(&req, &res, why, sizeof(why)) < 0);
	}
	assert_true(c.done);
	/* Nothing outside was written, moved or removed. */
	rocmd_fs_fmt(cmd, sizeof(cmd), "%s/victim", f.dir);
	tree_hash(cmd, h);
	assert_string_equal(h, out_tree);
	/* The user puts the folder back; recovery (journal left or not) gives
	 * the target as it was: package A. */
	assert_int_equal(unlink(parent), 0);
	assert_int_equal(rename(moved, parent), 0);
	assert_int_equal(rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)), 0);
	assert_tree(f.lib, a_tree);
	assert_int_equal(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)), 0);
	assert_int_equal(deploy_original(&f, why, sizeof(why)), 0);
	assert_tree(f.lib, f.orig_tree);
	fx_free(&f);
#endif
}

/* A target whose folders a user other than root owns: refused unless the
 * target says it is configured as such; nothing changes when refused. */
static void
test_user_owned(void **state)
{
#ifdef _WIN32
	(void)state;
	print_message("  skip (Windows): needs chown\n");
	skip();
#else
	struct fx f;
	struct rocmd_deploy_result res;
	char why[1024], p[1600], a_tree[ROCMD_SHA256_HEX];

	(void)state;
	if (geteuid() != 0) {
		print_message("  skip: needs root (chown)\n");
		skip();
	}
	fx_build(&f, 0);
	f.target.root = f.root;
	pkg_tree_hash(&f, &f.a, a_tree);
	rocmd_fs_fmt(p, sizeof(p), "%s/lib/rocblas", f.root);
	assert_int_equal(chown(p, 65534, 65534), 0);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EUNSAFE);
	assert_non_null(strstr(why, "owned by uid 65534"));
	assert_non_null(strstr(why, "deploy.allow_user_owned_targets"));
	assert_tree(f.lib, f.orig_tree);
	assert_false(res.backup_made);
	f.target.user_owned_ok = 1;
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	assert_tree(f.lib, a_tree);
	f.target.user_owned_ok = 0;
	assert_int_equal(chown(p, 0, 0), 0);
	fx_free(&f);
#endif
}

#ifndef _WIN32
/* Sets or clears the immutable attribute of PATH (chattr +i / -i); 0, or -1
 * where this process or the file system cannot. */
static int
set_immutable(const char *path, int on)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK), flags = 0, rc = -1;

	if (fd < 0)
		return -1;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
		rc = ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0 ? 0 : -1;
	}
	close(fd);
	return rc;
}
#endif

/* A file of the old library is immutable (chattr +i): the new tree goes in
 * and is verified, but the old one cannot be removed, so the journal stays
 * and every later deploy is refused. Recovery says which file stands in the
 * way and what the admin runs; once it is mutable again, recovery finishes
 * the commit. */
static void
test_immutable(void **state)
{
#ifdef _WIN32
	(void)state;
	print_message("  skip (Windows): no immutable attribute (chattr)\n");
	skip();
#else
	struct fx f;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_recovery rec;
	char why[2048], b_tree[ROCMD_SHA256_HEX], file[1600], moved[1600];

	(void)state;
	fx_build(&f, 0);
	f.target.root = f.root;
	pkg_tree_hash(&f, &f.b, b_tree);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	rocmd_fs_fmt(file, sizeof(file), "%s/TensileManifest.txt", f.lib);
	if (set_immutable(file, 1) < 0) {
		print_message("  skip: cannot set the immutable attribute here (needs root and a "
		              "file system that has it: ext4, xfs, btrfs, tmpfs from Linux 6.0)\n");
		fx_free(&f);
		skip();
	}
	rocmd_fs_fmt(moved, sizeof(moved), "%s/../.rocmd-stage-%s/TensileManifest.txt", f.lib,
	             f.target.name);
	assert_true(deploy(&f, &f.b, 0, NULL, &res, why, sizeof(why)) < 0);
	assert_true(res.committed);
	assert_non_null(strstr(why, "immutable"));
	assert_non_null(strstr(why, "chattr -ia"));
	assert_non_null(strstr(why, "TensileManifest.txt"));
	assert_tree(f.lib, b_tree);
	/* Every later deploy is refused until it is recovered. */
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), ROCMD_EBUSY);
	assert_non_null(strstr(why, "must be recovered first"));
	assert_true(rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "chattr -ia"));
	assert_non_null(strstr(why, ".rocmd-stage-"));
	/* What the admin runs. */
	assert_int_equal(set_immutable(moved, 0), 0);
	assert_int_equal(rocmd_deploy_recover(f.state, f.target.name, &rec, why, sizeof(why)), 0);
	assert_int_equal(rec.action, ROCMD_DEPLOY_RECOVER_FINISHED);
	assert_tree(f.lib, b_tree);
	assert_clean(&f);
	assert_int_equal(deploy(&f, &f.a, 0, NULL, &res, why, sizeof(why)), 0);
	fx_free(&f);
#endif
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failpoint_spec),   cmocka_unit_test(test_cycle_linux),
	    cmocka_unit_test(test_cycle_windows),    cmocka_unit_test(test_stale_files),
	    cmocka_unit_test(test_check_rolls_back), cmocka_unit_test(test_verify_detects),
	    cmocka_unit_test(test_refusals),         cmocka_unit_test(test_resolver),
	    cmocka_unit_test(test_race_parent),      cmocka_unit_test(test_user_owned),
	    cmocka_unit_test(test_immutable),        cmocka_unit_test(test_manual_backup),
	    cmocka_unit_test(test_real_tree),        cmocka_unit_test(test_new_originals),
	    cmocka_unit_test(test_loaded_dll),       cmocka_unit_test(test_kill_first),
	    cmocka_unit_test(test_kill_second),      cmocka_unit_test(test_kill_rollback),
	    cmocka_unit_test(test_kill_fallback),    cmocka_unit_test(test_kill_windows),
	    cmocka_unit_test(test_fail_eio),         cmocka_unit_test(test_fail_enospc),
	    cmocka_unit_test(test_fail_eacces),      cmocka_unit_test(test_recover_read_error),
	    cmocka_unit_test(test_lt_cycle),         cmocka_unit_test(test_lt_kill),
	    cmocka_unit_test(test_lt_fail),          cmocka_unit_test(test_lt_only),
	    cmocka_unit_test(test_lt_new_originals), cmocka_unit_test(test_lt_backup_added),
	    cmocka_unit_test(test_lt_backup_faults),
	};
#ifdef _WIN32
	static char exe[1024];

	assert_true(GetModuleFileNameA(NULL, exe, sizeof(exe)) < sizeof(exe));
	self_exe = exe;
#else
	self_exe = argv[0];
#endif
	/* A child of child_killed: --child SCENARIO WINDOWS RECOVER DIR. */
	if (argc == 6 && strcmp(argv[1], "--child") == 0) {
		struct fx f;
		memset(&f, 0, sizeof(f));
		rocmd_fs_fmt(f.dir, sizeof(f.dir), "%s", argv[5]);
		fx_paths(&f, atoi(argv[3]));
		pkg_make(&f, &f.a, PKG_A, "rocblas binary of A", "package A");
		pkg_make(&f, &f.b, PKG_B, "rocblas binary of B", "package B");
		child_act(&f, (enum scenario)atoi(argv[2]), atoi(argv[4]));
	}
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* e.g. "test_kill_*" */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
