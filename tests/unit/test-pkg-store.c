/*
 * The package store end to end below the daemon: archives built here —
 * 7z (LZMA2, solid), zip and tar.gz under a top folder named with spaces and
 * parentheses — from real rocBLAS library files (Debian trixie librocblas0,
 * via tests/fixtures/fetch-files.sh; those tests skip without them), read,
 * identified, stored and recorded; deduplication across packages; garbage
 * collection and verification, a deployment blocking removal. Then hostile archives, each of which
 * must be refused with the entry named and leave the store folder and the database exactly as they
 * were.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/error.h"
#include "db/db-pkg.h"
#include "db/db.h"
#include "common/fs.h"
#include "daemon/pkg/pkg.h"
#include "tests/fixtures/mkarchive.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library"

struct fx {
	char dir[64];
	char store[256];
	struct rocmd_db *db;
	struct rocmd_pkg_db *pdb;
	struct rocmd_pkg_limits limits;
	char real[4096]; /* the real files' folder, or "" */
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[512], why[256];
	const char *real = getenv("ROCMD_PKG_FILES");

	strcpy(f->dir, "/tmp/rocmd-test-store-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->store, sizeof(f->store), "%s/store", f->dir);
	snprintf(path, sizeof(path), "%s/rocmd.db", f->dir);
	if (rocmd_db_open(path, &f->db, why, sizeof(why)) < 0 ||
	    rocmd_pkg_db_attach(f->db, &f->pdb) < 0 ||
	    rocmd_store_open(f->store, why, sizeof(why)) < 0) {
		fprintf(stderr, "setup: %s\n", why);
		return -1;
	}
	f->limits.max_total = 1ull << 32;
	f->limits.max_file = 1ull << 31;
	f->limits.max_files = 10000;
	if (real != NULL && real[0] != '\0') {
		char probe[4200];
		snprintf(probe, sizeof(probe), "%s" LIBDIR "/TensileLibrary_gfx803.co", real);
		if (access(probe, R_OK) == 0)
			snprintf(f->real, sizeof(f->real), "%s" LIBDIR, real);
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[256];

	rocmd_pkg_db_detach(f->pdb);
	rocmd_db_close(f->db);
	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", f->dir, f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(f);
	return 0;
}

/* Every file and folder under DIR (paths and sizes), one line each, sorted. */
static void
tree(const char *dir, const char *rel, char **buf, size_t *len)
{
	char path[8400];
	struct dirent **names;
	int n;

	snprintf(path, sizeof(path), "%s%s%s", dir, rel[0] ? "/" : "", rel);
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char sub[4096], line[4200];
		struct stat st;
		if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0) {
			snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "",
			         names[i]->d_name);
			snprintf(path, sizeof(path), "%s/%s", dir, sub);
			lstat(path, &st);
			snprintf(line, sizeof(line), "%s %lld\n", sub,
			         S_ISDIR(st.st_mode) ? -1LL : (long long)st.st_size);
			*buf = realloc(*buf, *len + strlen(line) + 1);
			strcpy(*buf + *len, line);
			*len += strlen(line);
			if (S_ISDIR(st.st_mode))
				tree(dir, sub, buf, len);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

/* The store folder and the database's package rows, as one text. */
static char *
snapshot(struct fx *f)
{
	struct rocmd_pkg_db_stats st;
	char *buf = calloc(1, 1), line[256];
	size_t len = 0;

	tree(f->store, "", &buf, &len);
	assert_int_equal(rocmd_pkg_db_stats(f->pdb, &st), 0);
	snprintf(line, sizeof(line), "db %lld %lld %lld\n", (long long)st.packages,
	         (long long)st.files, (long long)st.bytes);
	buf = realloc(buf, len + strlen(line) + 1);
	strcpy(buf + len, line);
	return buf;
}

struct imported {
	int64_t id;
	int existed;
	uint64_t added, added_bytes;
	char digest[ROCMD_SHA256_HEX];
	cJSON *identity;
};

/* What the daemon's import job does, in one call. */
static int
import(struct fx *f, const char *source, const char *sdk, struct imported *out, char *why,
       size_t whylen)
{
	struct rocmd_pkg_read_opts opts = {.limits = f->limits};
	struct rocmd_pkg_contents c;
	struct rocmd_db_pkg row = {0};
	struct rocmd_db_pkg_file *files;
	char staging[4096], (*hex)[ROCMD_SHA256_HEX], archs[256] = "", *identity;
	const cJSON *it;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = rocmd_store_staging_new(f->store, staging, sizeof(staging));
	if (rc < 0)
		return rc;
	rc = rocmd_pkg_read(source, staging, &opts, &c, why, whylen);
	if (rc < 0)
		return rc;
	rc = rocmd_pkg_identify(&c, source, sdk, NULL, NULL, &out->identity, why, whylen);
	if (rc < 0) {
		rocmd_pkg_contents_free(&c);
		return rc;
	}
	rocmd_pkg_digest(&c, out->digest);
	rc = rocmd_store_commit(f->store, &c, &out->added, &out->added_bytes, why, whylen);
	assert_int_equal(rc, 0);
	files = calloc(c.count, sizeof(*files));
	hex = calloc(c.count, sizeof(*hex));
	for (size_t i = 0; i < c.count; i++) {
		files[i].path = c.entries[i].path;
		files[i].kind = c.entries[i].kind;
		files[i].size = (int64_t)c.entries[i].size;
		files[i].link = c.entries[i].link;
		if (c.entries[i].kind == ROCMD_PKG_FILE) {
			rocmd_sha256_hex(c.entries[i].sha256, hex[i]);
			files[i].sha256 = hex[i];
		}
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(out->identity, "archs"))
	{
		if (archs[0])
			strcat(archs, ",");
		strcat(archs, it->valuestring);
	}
	identity = cJSON_PrintUnformatted(out->identity);
	row.digest = out->digest;
	row.name = source;
	row.source = source;
	row.platform = cJSON_GetObjectItem(out->identity, "platform")->valuestring;
	row.archs = archs;
	row.file_count = (int64_t)c.count;
	row.total_size = (int64_t)c.total_size;
	row.identity = identity;
	rc = rocmd_pkg_db_add(f->pdb, &row, files, c.count, &out->id);
	if (rc == ROCMD_EEXISTS) {
		out->existed = 1;
		rc = 0;
	}
	free(identity);
	free(files);
	free(hex);
	rocmd_pkg_contents_free(&c);
	return rc;
}

/* Runs SQL on the test database with a connection of its own. */
static int
sqlite_exec(struct fx *f, const char *fmt, ...)
{
	char path[512], *sql;
	sqlite3 *h = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/rocmd.db", f->dir);
	rc = sqlite3_open(path, &h);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
	sqlite3_free(sql);
	return rc;
}

struct refs {
	char **keep;
	struct rocmd_store_check *chk;
	size_t n;
};

static int
collect_ref(const char *sha, int64_t size, void *arg)
{
	struct refs *r = arg;

	if (r->n == 8)
		return ROCMD_ENOMEM;
	r->keep[r->n] = strdup(sha);
	memset(&r->chk[r->n], 0, sizeof(r->chk[0]));
	snprintf(r->chk[r->n].hex, sizeof(r->chk[0].hex), "%s", sha);
	r->chk[r->n].size = (uint64_t)size;
	r->n++;
	return 0;
}

/* The library files every good package is made of. */
static int
real_entries(struct fx *f, const char *top, struct mk_entry *e, char names[][512],
             char srcs[][4200], const char *manifest, int extra)
{
	static const char *const files[] = {"TensileLibrary_gfx803.co",
	                                    "Kernels.so-000-gfx803.hsaco",
	                                    "Kernels.so-000-gfx1030.hsaco"};
	int n = 0;

	for (int i = 0; i < 2 + extra; i++) {
		snprintf(names[n], 512, "%slibrary/%s", top, files[i]);
		snprintf(srcs[n], 4200, "%s/%s", f->real, files[i]);
		e[n] = (struct mk_entry){.kind = MK_FILE, .name = names[n], .src = srcs[n]};
		n++;
	}
	/* An index for each arch (rocBLAS serves no arch without one): lazy
	 * index files, whose names are what is read of them; their bytes are
	 * the manifest's, so they add no object to the counts below. */
	for (int i = 0; i < 1 + extra; i++) {
		snprintf(names[n], 512, "%slibrary/TensileLibrary_lazy_%s.dat", top,
		         i == 0 ? "gfx803" : "gfx1030");
		e[n] = (struct mk_entry){.kind = MK_FILE, .name = names[n], .src = manifest};
		n++;
	}
	snprintf(names[n], 512, "%slibrary/TensileManifest.txt", top);
	e[n] = (struct mk_entry){.kind = MK_FILE, .name = names[n], .src = manifest};
	n++;
	return n;
}

static void
test_real_archives(void **state)
{
	struct fx *f = *state;
	struct mk_entry e[8];
	char names[8][512], srcs[8][4200], a7z[256], azip[256], atgz[256], manifest[256],
	    why[512] = "";
	struct imported i1, i2, i3;
	struct rocmd_pkg_db_stats st;
	const cJSON *id, *man;
	FILE *m;
	int n;

	if (f->real[0] == '\0') {
		print_message("skip: real rocBLAS files missing (set ROCMD_PKG_FILES; "
		              "tests/fixtures/fetch-files.sh)\n");
		skip();
	}
	snprintf(manifest, sizeof(manifest), "%s/TensileManifest.txt", f->dir);
	m = fopen(manifest, "w");
	fprintf(m, "/build/library/TensileLibrary_gfx803.co\n/build/library/"
	           "Kernels.so-000-gfx803.hsaco\n");
	fclose(m);
	/* The same package three ways. */
	snprintf(a7z, sizeof(a7z), "%s/rocm gfx803 AMD phoenix V3 for hip sdk 5.7.7z", f->dir);
	n = real_entries(f, "", e, names, srcs, manifest, 0);
	assert_int_equal(mkarchive(a7z, "7z-fast", e, n), 0);
	snprintf(azip, sizeof(azip), "%s/rocm.gfx803.V3.for.hip.sdk.5.7.zip", f->dir);
	assert_int_equal(mkarchive(azip, "zip", e, n), 0);
	snprintf(atgz, sizeof(atgz), "%s/gfx803.tar.gz", f->dir);
	n = real_entries(f, "rocBLAS gfx803 + gfx1030 (HIP SDK 5.7) V3/", e, names, srcs, manifest,
	                 1);
	assert_int_equal(mkarchive(atgz, "tar.gz", e, n), 0);

	assert_int_equal(import(f, a7z, NULL, &i1, why, sizeof(why)), 0);
	assert_false(i1.existed);
	assert_int_equal(i1.added, 3);
	id = i1.identity;
	assert_string_equal(cJSON_GetObjectItem(id, "sdk")->valuestring, "5.7");
	assert_string_equal(cJSON_GetObjectItem(id, "sdk_source")->valuestring, "name");
	assert_string_equal(cJSON_GetObjectItem(id, "version_hint")->valuestring, "V3");
	assert_string_equal(cJSON_GetObjectItem(id, "platform")->valuestring, "any");
	assert_string_equal(cJSON_GetObjectItem(id, "library")->valuestring, "library");
	assert_string_equal(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(id, "archs_from_code_objects"), 0)->valuestring,
	    "gfx803");
	man = cJSON_GetObjectItem(id, "tensile_manifest");
	assert_int_equal((int)cJSON_GetObjectItem(man, "entries")->valuedouble, 2);
	assert_int_equal((int)cJSON_GetObjectItem(man, "missing")->valuedouble, 0);

	/* The zip holds the same files: the same package, nothing new stored. */
	assert_int_equal(import(f, azip, NULL, &i2, why, sizeof(why)), 0);
	assert_true(i2.existed);
	assert_int_equal(i2.id, i1.id);
	assert_string_equal(i2.digest, i1.digest);
	assert_int_equal(i2.added, 0);

	/* Under a top folder with spaces and parentheses, plus gfx1030: a new
	 * package sharing the first one's objects. */
	assert_int_equal(import(f, atgz, "5.7.1", &i3, why, sizeof(why)), 0);
	assert_false(i3.existed);
	assert_int_equal(i3.added, 1);
	id = i3.identity;
	assert_string_equal(cJSON_GetObjectItem(id, "root_stripped")->valuestring,
	                    "rocBLAS gfx803 + gfx1030 (HIP SDK 5.7) V3");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(id, "archs"), 0)->valuestring,
	                    "gfx1030");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(id, "archs"), 1)->valuestring,
	                    "gfx803");
	assert_string_equal(cJSON_GetObjectItem(id, "sdk_source")->valuestring, "explicit");
	assert_int_equal(rocmd_pkg_db_stats(f->pdb, &st), 0);
	assert_int_equal(st.packages, 2);
	assert_int_equal(st.objects, 4);
	assert_true(st.object_bytes < st.bytes);

	/* Removing the first package keeps the objects the second one shares. */
	{
		uint64_t removed, removed_bytes;
		char *keep[8];
		size_t nkeep = 0;
		struct rocmd_store_check chk[8];
		size_t nchk = 0;
		int gone = 0;
		assert_int_equal(rocmd_pkg_db_remove(f->pdb, i1.id), 0);
		assert_int_equal(rocmd_pkg_db_stats(f->pdb, &st), 0);
		assert_int_equal(st.packages, 1);
		/* Collect with the remaining references. */
		struct refs refs = {keep, chk, 0};
		assert_int_equal(rocmd_pkg_db_objects(f->pdb, 0, collect_ref, &refs), 0);
		nkeep = nchk = refs.n;
		assert_int_equal(rocmd_store_gc(f->store, keep, nkeep, &removed, &removed_bytes),
		                 0);
		assert_int_equal(removed, 0); /* every object of #1 is in #2 too */
		assert_int_equal(rocmd_store_verify(f->store, chk, nchk, NULL, NULL), 0);
		for (size_t i = 0; i < nchk; i++)
			assert_int_equal(chk[i].status, 0);
		/* Damage one object, lose another: verify names both. */
		{
			char p[4096];
			rocmd_store_object_path(f->store, chk[0].hex, p, sizeof(p));
			chmod(p, 0644);
			FILE *w = fopen(p, "r+");
			assert_non_null(w);
			fputc('X', w);
			fclose(w);
			rocmd_store_object_path(f->store, chk[1].hex, p, sizeof(p));
			assert_int_equal(unlink(p), 0);
		}
		assert_int_equal(rocmd_store_verify(f->store, chk, nchk, NULL, NULL), 0);
		assert_int_equal(chk[0].status, ROCMD_ECORRUPT);
		assert_int_equal(chk[1].status, ROCMD_ENOTFOUND);
		/* A live deployment blocks removal; a replaced one does not. */
		{
			int64_t deployed = -1;
			assert_int_equal(rocmd_pkg_db_deployments(f->pdb, i3.id, &deployed), 0);
			assert_int_equal(deployed, 0);
			assert_int_equal(
			    sqlite_exec(f, "INSERT INTO target (kind, name, platform, library_path, "
			                   "created_ms, updated_ms) VALUES ('app', 't', 'linux', "
			                   "'/x/library', 0, 0)"),
			    0);
			assert_int_equal(
			    sqlite_exec(f,
			                "INSERT INTO deployment (target_id, package_id, state, reason, "
			                "started_ms) VALUES (1, %lld, 'superseded', 'test', 0)",
			                (long long)i3.id),
			    0);
			assert_int_equal(rocmd_pkg_db_deployments(f->pdb, i3.id, &deployed), 0);
			assert_int_equal(deployed, 0);
			assert_int_equal(
			    sqlite_exec(f,
			                "INSERT INTO deployment (target_id, package_id, state, reason, "
			                "started_ms) VALUES (1, %lld, 'live', 'test', 0)",
			                (long long)i3.id),
			    0);
			assert_int_equal(rocmd_pkg_db_deployments(f->pdb, i3.id, &deployed), 0);
			assert_int_equal(deployed, 1);
			assert_int_equal(sqlite_exec(f, "DELETE FROM deployment"), 0);
			assert_int_equal(sqlite_exec(f, "DELETE FROM target"), 0);
		}
		/* Removing the last package empties the store. */
		assert_int_equal(rocmd_pkg_db_remove(f->pdb, i3.id), 0);
		assert_int_equal(rocmd_store_gc(f->store, NULL, 0, &removed, &removed_bytes), 0);
		gone = (int)removed;
		assert_int_equal(gone, 3);
		{
			uint64_t objs, bytes;
			assert_int_equal(rocmd_store_usage(f->store, &objs, &bytes), 0);
			assert_int_equal(objs, 0);
		}
		for (size_t i = 0; i < nkeep; i++)
			free(keep[i]);
	}
	cJSON_Delete(i1.identity);
	cJSON_Delete(i2.identity);
	cJSON_Delete(i3.identity);
}

static int
cancel_now(const struct rocmd_pkg_progress *pr, void *ctx)
{
	(void)pr;
	(void)ctx;
	return 1;
}

/* A canceled import (rocmctl interrupted, shutdown) leaves nothing behind. */
static void
test_cancel(void **state)
{
	struct fx *f = *state;
	struct mk_entry e[] = {{.kind = MK_DATA,
	                        .name = "library/TensileLibrary_gfx1103.dat",
	                        .size = 12 << 20,
	                        .data = "c"}};
	struct rocmd_pkg_read_opts opts = {.limits = f->limits, .progress = cancel_now};
	struct rocmd_pkg_contents c;
	char path[256], staging[4096], why[512] = "", *before, *after;

	snprintf(path, sizeof(path), "%s/big.zip", f->dir);
	assert_int_equal(mkarchive(path, "zip", e, 1), 0);
	before = snapshot(f);
	assert_int_equal(rocmd_store_staging_new(f->store, staging, sizeof(staging)), 0);
	assert_int_equal(rocmd_pkg_read(path, staging, &opts, &c, why, sizeof(why)),
	                 ROCMD_ECANCELED);
	assert_non_null(strstr(why, "canceled"));
	after = snapshot(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* Builds ARCHIVE from ENTRIES (or writes RAW bytes), imports it, and checks it
 * is refused with CODE, WHY containing WANT, and nothing left behind. */
static void
refused(struct fx *f, const char *name, const char *format, const struct mk_entry *entries, int n,
        int code, const char *want)
{
	char path[256], why[512] = "";
	struct imported imp;
	char *before, *after;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if (format != NULL)
		assert_int_equal(mkarchive(path, format, entries, n), 0);
	before = snapshot(f);
	rc = import(f, path, NULL, &imp, why, sizeof(why));
	after = snapshot(f);
	if (rc != code || strstr(why, want) == NULL)
		fail_msg("%s: got %s (%s), wanted %s with \"%s\"", name, rocmd_err_name(rc), why,
		         rocmd_err_name(code), want);
	assert_string_equal(before, after);
	free(before);
	free(after);
	cJSON_Delete(imp.identity);
}

static const struct mk_entry lib_co = {.kind = MK_DATA,
                                       .name = "library/TensileLibrary_gfx1103.dat",
                                       .src = NULL,
                                       .size = 64,
                                       .data = "x"};

static void
test_hostile(void **state)
{
	struct fx *f = *state;
	char path[256];
	FILE *w;

	{
		struct mk_entry e[] = {
		    lib_co,
		    {.kind = MK_DATA, .name = "../evil.dll", .src = NULL, .size = 10, .data = "e"}};
		refused(f, "zip-slip.zip", "zip", e, 2, ROCMD_EUNSAFE, "\"../evil.dll\"");
		refused(f, "zip-slip.tar", "tar", e, 2, ROCMD_EUNSAFE, "'..' leads outside");
	}
	{
		struct mk_entry e[] = {lib_co,
		                       {.kind = MK_DATA,
		                        .name = "library/../../evil",
		                        .src = NULL,
		                        .size = 10,
		                        .data = "e"}};
		refused(f, "slip-deep.7z", "7z", e, 2, ROCMD_EUNSAFE, "outside the package");
	}
	{
		struct mk_entry e[] = {lib_co,
		                       {.kind = MK_DATA,
		                        .name = "/etc/cron.d/evil",
		                        .src = NULL,
		                        .size = 10,
		                        .data = "e"}};
		refused(f, "absolute.tar", "tar", e, 2, ROCMD_EUNSAFE, "absolute path");
	}
	{
		struct mk_entry e[] = {
		    lib_co,
		    {.kind = MK_SYMLINK, .name = "library/escape", .src = "../../../etc/passwd"}};
		refused(f, "symlink-escape.tar", "tar", e, 2, ROCMD_EUNSAFE, "\"library/escape\"");
	}
	{
		struct mk_entry e[] = {
		    lib_co, {.kind = MK_SYMLINK, .name = "library/abs", .src = "/etc/passwd"}};
		refused(f, "symlink-abs.zip", "zip", e, 2, ROCMD_EUNSAFE, "absolute");
	}
	{
		/* A link that is fine, then a file written "through" it. */
		struct mk_entry e[] = {
		    lib_co,
		    {.kind = MK_SYMLINK, .name = "lib", .src = "library"},
		    {.kind = MK_DATA, .name = "lib/x.co", .src = NULL, .size = 10, .data = "e"}};
		refused(f, "through-link.tar", "tar", e, 3, ROCMD_EUNSAFE, "symlink");
	}
	{
		struct mk_entry e[] = {
		    lib_co, {.kind = MK_HARDLINK, .name = "library/h", .src = "../../etc/shadow"}};
		refused(f, "hardlink-escape.tar", "tar", e, 2, ROCMD_EUNSAFE, "\"library/h\"");
	}
	{
		struct mk_entry e[] = {
		    lib_co, {.kind = MK_HARDLINK, .name = "library/h", .src = "library/none"}};
		refused(f, "hardlink-dangling.tar", "tar", e, 2, ROCMD_EUNSAFE, "hardlink");
	}
	{
		struct mk_entry e[] = {lib_co, {.kind = MK_FIFO, .name = "library/fifo"}};
		refused(f, "fifo.tar", "tar", e, 2, ROCMD_EUNSAFE, "FIFO");
	}
	{
		struct mk_entry e[] = {lib_co, {.kind = MK_CHARDEV, .name = "library/null"}};
		refused(f, "device.tar", "tar", e, 2, ROCMD_EUNSAFE, "device file");
	}
	{
		/* libarchive reads a zip's FIFO as a regular file (Info-ZIP's -FI wrote
		 * a pipe's content under the pipe's own mode); refused all the same,
		 * with data or without, as are devices and sockets in every format. */
		struct mk_entry fifo[] = {lib_co, {.kind = MK_FIFO, .name = "library/fifo"}};
		struct mk_entry fifo_data[] = {
		    lib_co, {.kind = MK_FIFO, .name = "library/fifo.co", .size = 100, .data = "f"}};
		struct mk_entry dev[] = {lib_co, {.kind = MK_CHARDEV, .name = "library/null"}};
		struct mk_entry sock[] = {lib_co, {.kind = MK_SOCKET, .name = "library/sock"}};
		refused(f, "fifo.zip", "zip-unix", fifo, 2, ROCMD_EUNSAFE,
		        "entry \"library/fifo\": a FIFO");
		refused(f, "fifo-data.zip", "zip-unix", fifo_data, 2, ROCMD_EUNSAFE,
		        "entry \"library/fifo.co\": a FIFO");
		refused(f, "device.zip", "zip-unix", dev, 2, ROCMD_EUNSAFE, "device file");
		refused(f, "socket.zip", "zip-unix", sock, 2, ROCMD_EUNSAFE, "socket");
		refused(f, "fifo.7z", "7z", fifo, 2, ROCMD_EUNSAFE, "FIFO");
		refused(f, "device.7z", "7z", dev, 2, ROCMD_EUNSAFE, "device file");
	}
	{
		struct mk_entry e[] = {lib_co, lib_co};
		refused(f, "duplicate.tar", "tar", e, 2, ROCMD_EUNSAFE, "twice");
	}
	{
		struct mk_entry e[] = {lib_co,
		                       {.kind = MK_DATA,
		                        .name = "library/tensilelibrary_GFX1103.dat",
		                        .src = NULL,
		                        .size = 1,
		                        .data = "y"}};
		refused(f, "case.zip", "zip", e, 2, ROCMD_EUNSAFE, "only in case");
	}
	{
		/* Windows folds more than ASCII: Latin-1, Latin Extended-A, Cyrillic. */
		static const char *const pairs[][2] = {
		    {"library/\xc3\x84rger.co", "library/\xc3\xa4rger.co"}, /* Ä, ä */
		    {"library/\xc5\x81\xc3\xb3"
		     "d\xc5\xba.co",
		     "library/\xc5\x82\xc3\x93"
		     "D\xc5\xb9.co"}, /* Łódź, łÓDŹ */
		    {"\xd0\x91\xd0\x98\xd0\x91/x.co",
		     "\xd0\xb1\xd0\xb8\xd0\xb1/x.co"}, /* БИБ, биб */
		};
		for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
			struct mk_entry e[] = {lib_co,
			                       {.kind = MK_DATA,
			                        .name = pairs[i][0],
			                        .src = NULL,
			                        .size = 1,
			                        .data = "a"},
			                       {.kind = MK_DATA,
			                        .name = pairs[i][1],
			                        .src = NULL,
			                        .size = 1,
			                        .data = "b"}};
			char out[32];
			snprintf(out, sizeof(out), "case-utf8-%zu.zip", i);
			refused(f, out, "zip", e, 3, ROCMD_EUNSAFE, "only in case");
		}
	}
	{
		/* Names Windows reads as something else: refused on Linux too, since the
		 * package may be deployed on Windows. */
		static const struct {
			const char *name, *expect;
		} win[] = {
		    {"library/CON", "device name"},
		    {"library/nul.txt", "device name"},
		    {"..\\evil.dll", "'..' leads outside"},
		    {"C:\\Windows\\evil.dll", "drive letter"},
		    {"C:evil.dll", "drive letter"},
		    {"library/x.co:hidden", "stream"},
		    {"library/x.co.", "dot or a space"},
		    {"library/TENSIL~1.DAT", "8.3 short name"},
		};
		for (size_t i = 0; i < sizeof(win) / sizeof(win[0]); i++) {
			struct mk_entry e[] = {lib_co,
			                       {.kind = MK_DATA,
			                        .name = win[i].name,
			                        .src = NULL,
			                        .size = 3,
			                        .data = "w"}};
			char out[32];
			snprintf(out, sizeof(out), "windows-%zu.zip", i);
			refused(f, out, "zip", e, 2, ROCMD_EUNSAFE, win[i].expect);
		}
	}
	/* Bombs: highly compressible data past the per-file, total and count limits. */
	f->limits.max_file = 16 << 20;
	f->limits.max_total = 24 << 20;
	f->limits.max_files = 8;
	{
		struct mk_entry e[] = {lib_co,
		                       {.kind = MK_DATA,
		                        .name = "library/bomb.co",
		                        .src = NULL,
		                        .size = 64ull << 20,
		                        .data = NULL}};
		refused(f, "bomb.7z", "7z", e, 2, ROCMD_EUNSAFE, "store.max_file_size");
		refused(f, "bomb.zip", "zip", e, 2, ROCMD_EUNSAFE, "\"library/bomb.co\"");
	}
	{
		struct mk_entry e[] = {lib_co,
		                       {.kind = MK_DATA,
		                        .name = "library/a.co",
		                        .src = NULL,
		                        .size = 12 << 20,
		                        .data = NULL},
		                       {.kind = MK_DATA,
		                        .name = "library/b.co",
		                        .src = NULL,
		                        .size = 12 << 20,
		                        .data = NULL}};
		refused(f, "bomb-total.tar.xz", "tar.xz", e, 3, ROCMD_EUNSAFE,
		        "store.max_total_size");
	}
	{
		struct mk_entry e[12];
		char names[12][32];
		for (int i = 0; i < 12; i++) {
			snprintf(names[i], sizeof(names[i]), "library/f%02d.co", i);
			e[i] = (struct mk_entry){
			    .kind = MK_DATA, .name = names[i], .src = NULL, .size = 1, .data = "z"};
		}
		refused(f, "many.zip", "zip", e, 12, ROCMD_EUNSAFE, "store.max_files");
	}
	f->limits.max_file = 1ull << 31;
	f->limits.max_total = 1ull << 32;
	f->limits.max_files = 10000;
	/* Truncated: a good 7z cut short. */
	{
		struct mk_entry e[] = {lib_co,
		                       {.kind = MK_DATA,
		                        .name = "library/TensileLibrary_gfx1103.co",
		                        .src = NULL,
		                        .size = 1 << 20,
		                        .data = "q"}};
		struct stat st;
		snprintf(path, sizeof(path), "%s/truncated.7z", f->dir);
		assert_int_equal(mkarchive(path, "7z", e, 2), 0);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(truncate(path, st.st_size / 2), 0);
		refused(f, "truncated.7z", NULL, NULL, 0, ROCMD_ECORRUPT, "");
		/* A tar cut exactly after its first entry would read as a shorter package. */
		snprintf(path, sizeof(path), "%s/cut.tar", f->dir);
		assert_int_equal(mkarchive(path, "tar", e, 2), 0);
		assert_int_equal(truncate(path, 1024), 0); /* header + 64 bytes padded */
		refused(f, "cut.tar", NULL, NULL, 0, ROCMD_ECORRUPT, "truncated tar");
		snprintf(path, sizeof(path), "%s/truncated.zip", f->dir);
		assert_int_equal(mkarchive(path, "zip", e, 2), 0);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(truncate(path, st.st_size - 200), 0);
		/* A zip without its central directory falls back to streaming or
		 * fails to open: either way refused. */
		{
			char why[512] = "";
			struct imported imp;
			char *before = snapshot(f), *after;
			assert_true(import(f, path, NULL, &imp, why, sizeof(why)) < 0);
			after = snapshot(f);
			assert_string_equal(before, after);
			free(before);
			free(after);
		}
	}
	/* Wrong magic: a PNG named like a package; an empty file. */
	snprintf(path, sizeof(path), "%s/rocm.gfx1103.V5.0.for.hip.sdk.6.2.4.7z", f->dir);
	w = fopen(path, "wb");
	fwrite("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 1, 16, w);
	for (int i = 0; i < 4096; i++)
		fputc(i * 7, w);
	fclose(w);
	refused(f, "rocm.gfx1103.V5.0.for.hip.sdk.6.2.4.7z", NULL, NULL, 0, ROCMD_EUNSUPPORTED,
	        "not an archive");
	snprintf(path, sizeof(path), "%s/empty.zip", f->dir);
	w = fopen(path, "wb");
	fclose(w);
	{
		char why[512] = "";
		struct imported imp;
		assert_true(import(f, path, NULL, &imp, why, sizeof(why)) < 0);
	}
	/* Not a rocBLAS package at all. */
	{
		struct mk_entry e[] = {
		    {.kind = MK_DATA, .name = "readme.txt", .src = NULL, .size = 10, .data = "r"}};
		refused(f, "notlib.zip", "zip", e, 1, ROCMD_EINVAL,
		        "not a rocBLAS or hipBLASLt library package");
	}
	/* Encrypted: zip -P and 7z -p, when those tools are here. */
	if (system("command -v zip >/dev/null 2>&1") == 0) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd),
		         "cd %s && mkdir -p enc/library && head -c 4096 /dev/urandom > "
		         "enc/library/TensileLibrary_gfx1103.dat && cd enc && zip -q -r -P secret "
		         "../encrypted.zip library",
		         f->dir);
		assert_int_equal(system(cmd), 0);
		refused(f, "encrypted.zip", NULL, NULL, 0, ROCMD_EUNSAFE, "encrypted");
	} else {
		print_message("note: zip not installed; the encrypted zip case is skipped\n");
	}
	if (system("command -v 7z >/dev/null 2>&1") == 0) {
		char cmd[1024];
		snprintf(
		    cmd, sizeof(cmd),
		    "cd %s && mkdir -p enc7/library && head -c 4096 /dev/urandom > "
		    "enc7/library/TensileLibrary_gfx1103.dat && cd enc7 && 7z a -bd -bso0 -psecret "
		    "../encrypted.7z library && 7z a -bd -bso0 -psecret -mhe=on ../encrypted-h.7z "
		    "library",
		    f->dir);
		assert_int_equal(system(cmd), 0);
		refused(f, "encrypted.7z", NULL, NULL, 0, ROCMD_EUNSAFE, "ncrypt");
		{
			/* With encrypted headers libarchive cannot even list it. */
			char why[512] = "";
			struct imported imp;
			char *before = snapshot(f), *after;
			snprintf(cmd, sizeof(cmd), "%s/encrypted-h.7z", f->dir);
			assert_true(import(f, cmd, NULL, &imp, why, sizeof(why)) < 0);
			assert_non_null(strstr(why, "ncrypt"));
			after = snapshot(f);
			assert_string_equal(before, after);
			free(before);
			free(after);
		}
	} else {
		print_message("note: 7z not installed; the encrypted 7z case is skipped\n");
	}
}

struct file_facts {
	const char *path;
	int64_t size;
	char sha256[ROCMD_SHA256_HEX];
};

static int
file_fact(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct file_facts *want = arg;

	if (strcmp(f->path, want->path) == 0) {
		want->size = f->size;
		snprintf(want->sha256, sizeof(want->sha256), "%s", f->sha256 ? f->sha256 : "");
	}
	return 0;
}

/* GNU tar's sparse members (every sparse format tar writes, the file all
 * hole, holes around data, a hole at the end) are stored with their holes:
 * the real size and the bytes a read of the file gives. */
static void
test_sparse(void **state)
{
	struct fx *f = *state;
	static const char *const versions[] = {"0.0", "0.1", "1.0"};
	static const char *const files[] = {"library/hole.co", "library/data-hole.co",
	                                    "library/hole-data-hole.co"};
	char cmd[2048], src[256], path[512], why[512] = "";

	if (system("tar --version 2>/dev/null | grep -q 'GNU tar'") != 0) {
		print_message("skip: GNU tar missing\n");
		skip();
	}
	snprintf(src, sizeof(src), "%s/sparse", f->dir);
	snprintf(cmd, sizeof(cmd),
	         "mkdir -p %s/library && cd %s && echo index > library/TensileLibrary_gfx1103.dat"
	         " && truncate -s 1M library/hole.co"
	         " && head -c 8192 /dev/urandom > library/data-hole.co && truncate -s 3M "
	         "library/data-hole.co"
	         " && truncate -s 2M library/hole-data-hole.co && head -c 4096 /dev/urandom | dd "
	         "of=library/hole-data-hole.co bs=4096 seek=100 conv=notrunc 2>/dev/null",
	         src, src);
	assert_int_equal(system(cmd), 0);
	for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		struct imported imp;
		char tarball[512];
		snprintf(tarball, sizeof(tarball), "%s/sparse-%s.tar", f->dir, versions[v]);
		snprintf(cmd, sizeof(cmd),
		         "cd %s && tar --sparse --sparse-version=%s -cf %s library", src,
		         versions[v], tarball);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(import(f, tarball, NULL, &imp, why, sizeof(why)), 0);
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			struct file_facts got = {.path = files[i], .size = -1};
			char hex[ROCMD_SHA256_HEX];
			uint64_t size;
			snprintf(path, sizeof(path), "%s/%s", src, files[i]);
			assert_int_equal(rocmd_fs_hash_file(path, hex, &size), 0);
			assert_int_equal(rocmd_pkg_db_files(f->pdb, imp.id, 0, 0, file_fact, &got),
			                 0);
			if (got.size != (int64_t)size || strcmp(got.sha256, hex) != 0)
				fail_msg(
				    "sparse %s, %s: stored %lld bytes %s, wanted %llu bytes %s",
				    versions[v], files[i], (long long)got.size, got.sha256,
				    (unsigned long long)size, hex);
		}
		cJSON_Delete(imp.identity);
	}
}

/* Entry names in several scripts, as p7zip, Info-ZIP and GNU tar write them
 * (7z keeps UTF-16; zip, flagged UTF-8 or not, and pax keep UTF-8 bytes),
 * come out as the same UTF-8 names whatever the reading process's locale:
 * this test, like the daemon, never calls setlocale. */
static void
test_utf8_names(void **state)
{
	struct fx *f = *state;
	/* Latin, Greek, Cyrillic, Japanese, Arabic, Devanagari, an emoji. */
	static const char *const names[] = {
	    "\xc3\x84rger-\xc5\x81\xc3\xb3\x64\xc5\xba",
	    "\xce\x95\xce\xbb\xce\xbb\xce\xb7\xce\xbd\xce\xb9\xce\xba\xce\xac",
	    "\xd0\x91\xd0\xb8\xd0\xb1\xd0\xbb\xd0\xb8\xd0\xbe\xd1\x82\xd0\xb5\xd0\xba\xd0\xb0",
	    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
	    "\xd9\x85\xd9\x83\xd8\xaa\xd8\xa8\xd8\xa9",
	    "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\xa8\xe0\xa5\x8d\xe0\xa4\xa6\xe0\xa5\x80",
	    "\xf0\x9f\x9a\x80",
	};
	static const struct {
		const char *file, *cmd; /* run in the source folder, with a UTF-8 locale */
	} archives[] = {
	    {"names.7z", "7z a -bd -bso0 ../names.7z library"},
	    {"names-flagged.zip", NULL}, /* mkarchive zip-unix: the UTF-8 flag */
	    {"names.zip", "zip -q -r ../names.zip library"},
	    {"names.tar", "tar --format=pax -cf ../names.tar library"},
	};
	const size_t nn = sizeof(names) / sizeof(names[0]);
	struct mk_entry e[16];
	char src[256], path[1024], cmd[1024], rel[8][128], why[512] = "";

	snprintf(src, sizeof(src), "%s/names", f->dir);
	snprintf(path, sizeof(path), "%s/library", src);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	e[0] = lib_co;
	for (size_t i = 0; i < nn; i++) {
		FILE *w;
		snprintf(rel[i], sizeof(rel[i]), "library/%s.co", names[i]);
		snprintf(path, sizeof(path), "%s/%s", src, rel[i]);
		assert_non_null(w = fopen(path, "w"));
		fprintf(w, "%zu", i);
		fclose(w);
		e[i + 1] =
		    (struct mk_entry){.kind = MK_DATA, .name = rel[i], .size = 3, .data = "n"};
	}
	snprintf(path, sizeof(path), "%s/library/TensileLibrary_gfx1103.dat", src);
	{
		FILE *w = fopen(path, "w");
		assert_non_null(w);
		fputs("x", w);
		fclose(w);
	}
	for (size_t a = 0; a < sizeof(archives) / sizeof(archives[0]); a++) {
		struct imported imp;
		char archive[512];
		snprintf(archive, sizeof(archive), "%s/%s", f->dir, archives[a].file);
		if (archives[a].cmd == NULL) {
			assert_int_equal(mkarchive(archive, "zip-unix", e, (int)nn + 1), 0);
		} else {
			const char *tool = archives[a].cmd;
			snprintf(cmd, sizeof(cmd), "command -v %.*s >/dev/null 2>&1",
			         (int)strcspn(tool, " "), tool);
			if (system(cmd) != 0) {
				print_message("note: %.*s missing: %s skipped\n",
				              (int)strcspn(tool, " "), tool, archives[a].file);
				continue;
			}
			snprintf(cmd, sizeof(cmd), "cd %s && LC_ALL=C.UTF-8 %s", src, tool);
			assert_int_equal(system(cmd), 0);
		}
		why[0] = '\0';
		if (import(f, archive, NULL, &imp, why, sizeof(why)) != 0)
			fail_msg("%s: %s", archives[a].file, why);
		for (size_t i = 0; i < nn; i++) {
			struct file_facts got = {.path = rel[i], .size = -1};
			assert_int_equal(rocmd_pkg_db_files(f->pdb, imp.id, 0, 0, file_fact, &got),
			                 0);
			if (got.size < 0)
				fail_msg("%s: no entry \"%s\"", archives[a].file, rel[i]);
		}
		cJSON_Delete(imp.identity);
	}
}

/* Hardlinks find their targets by name (a table, not a scan of the entries
 * read so far): a tar of 3,000 links to 1,000 files is read whole, each link
 * with its target's size and hash. */
static void
test_hardlinks(void **state)
{
	struct fx *f = *state;
	static struct mk_entry e[4001];
	static char names[4001][64], targets[4001][64];
	struct rocmd_pkg_db_stats st;
	struct imported imp;
	char path[256], why[512] = "";
	int n = 0;

	e[n++] = lib_co;
	for (int i = 0; i < 1000; i++) {
		snprintf(names[n], sizeof(names[n]), "library/f%04d.co", i);
		e[n] = (struct mk_entry){
		    .kind = MK_DATA, .name = names[n], .size = 100 + i, .data = "h"};
		n++;
	}
	for (int i = 0; i < 3000; i++) {
		snprintf(names[n], sizeof(names[n]), "library/l%04d.co", i);
		snprintf(targets[n], sizeof(targets[n]), "library/f%04d.co", i % 1000);
		e[n] = (struct mk_entry){.kind = MK_HARDLINK, .name = names[n], .src = targets[n]};
		n++;
	}
	snprintf(path, sizeof(path), "%s/hardlinks.tar", f->dir);
	assert_int_equal(mkarchive(path, "tar", e, n), 0);
	if (import(f, path, NULL, &imp, why, sizeof(why)) != 0)
		fail_msg("hardlinks.tar: %s", why);
	assert_int_equal(rocmd_pkg_db_stats(f->pdb, &st), 0);
	assert_int_equal(st.files, 4001);
	assert_int_equal(st.objects, 1001);
	{
		struct file_facts link = {.path = "library/l2999.co", .size = -1},
		                  target = {.path = "library/f0999.co", .size = -1};
		assert_int_equal(rocmd_pkg_db_files(f->pdb, imp.id, 0, 0, file_fact, &link), 0);
		assert_int_equal(rocmd_pkg_db_files(f->pdb, imp.id, 0, 0, file_fact, &target), 0);
		assert_int_equal(link.size, 1099);
		assert_string_equal(link.sha256, target.sha256);
	}
	cJSON_Delete(imp.identity);
}

/* A package's record in the store reads back only when every field holds and
 * its files give its digest again, and is adoptable only while every object
 * it names is there, whole. */
static void
test_records(void **state)
{
	struct fx *f = *state;
	struct mk_entry e[] = {lib_co,
	                       {.kind = MK_DATA, .name = "library/a.co", .size = 300, .data = "a"},
	                       {.kind = MK_SYMLINK, .name = "library/l.co", .src = "a.co"}};
	struct rocmd_pkg_read_opts opts = {.limits = f->limits};
	struct rocmd_pkg_contents c;
	char path[256], staging[4096], digest[ROCMD_SHA256_HEX], why[512] = "", rpath[4200];
	char **list = NULL, *text = NULL;
	uint64_t added, bytes;
	cJSON *id = NULL, *rec, *back = NULL;
	size_t n = 0;
	int created = 0;
	FILE *w;

	snprintf(path, sizeof(path), "%s/rec.tar", f->dir);
	assert_int_equal(mkarchive(path, "tar", e, 3), 0);
	assert_int_equal(rocmd_store_staging_new(f->store, staging, sizeof(staging)), 0);
	assert_int_equal(rocmd_pkg_read(path, staging, &opts, &c, why, sizeof(why)), 0);
	assert_int_equal(rocmd_pkg_identify(&c, path, NULL, NULL, NULL, &id, why, sizeof(why)), 0);
	rocmd_pkg_digest(&c, digest);
	assert_int_equal(rocmd_store_commit(f->store, &c, &added, &bytes, why, sizeof(why)), 0);
	rec = rocmd_store_record_new(&c, digest, "rec.tar", path, 1700000000000, id);
	assert_non_null(rec);
	assert_int_equal(rocmd_store_record_write(f->store, rec, 0, &created, why, sizeof(why)), 0);
	assert_true(created);
	assert_int_equal(rocmd_store_record_write(f->store, rec, 0, &created, why, sizeof(why)), 0);
	assert_false(created);
	assert_int_equal(rocmd_store_records_list(f->store, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0], digest);
	rocmd_store_records_free(list, n);
	assert_int_equal(rocmd_store_record_read(f->store, digest, &back, why, sizeof(why)), 0);
	assert_int_equal(rocmd_store_record_check(f->store, back, NULL, NULL, why, sizeof(why)), 0);
	cJSON_Delete(back);
	/* A record whose files say something else: not read. */
	snprintf(rpath, sizeof(rpath), "%s/packages/%s.json", f->store, digest);
	assert_int_equal(rocmd_fs_read_file(rpath, 1 << 20, &text, NULL), 0);
	{
		char *p = strstr(text, ",300,");
		assert_non_null(p);
		p[3] = '1'; /* 300 -> 310 */
		chmod(rpath, 0644);
		assert_non_null(w = fopen(rpath, "w"));
		fputs(text, w);
		fclose(w);
	}
	assert_int_equal(rocmd_store_record_read(f->store, digest, &back, why, sizeof(why)),
	                 ROCMD_ECORRUPT);
	assert_non_null(strstr(why, "another digest"));
	/* Whole again; then an object it names goes missing: not adoptable. */
	assert_int_equal(rocmd_store_record_remove(f->store, digest), 0);
	assert_int_equal(rocmd_store_record_write(f->store, rec, 0, &created, why, sizeof(why)), 0);
	assert_int_equal(rocmd_store_record_read(f->store, digest, &back, why, sizeof(why)), 0);
	for (size_t i = 0; i < c.count; i++)
		if (strcmp(c.entries[i].path, "library/a.co") == 0) {
			char hex[ROCMD_SHA256_HEX], obj[4200];
			rocmd_sha256_hex(c.entries[i].sha256, hex);
			rocmd_store_object_path(f->store, hex, obj, sizeof(obj));
			assert_int_equal(unlink(obj), 0);
		}
	assert_int_equal(rocmd_store_record_check(f->store, back, NULL, NULL, why, sizeof(why)),
	                 ROCMD_ENOTFOUND);
	assert_non_null(strstr(why, "missing"));
	/* What no record names is set aside, not deleted. */
	{
		uint64_t moved, mbytes, objs, obytes;
		assert_int_equal(rocmd_store_set_aside(f->store, NULL, 0, "t", &moved, &mbytes), 0);
		assert_int_equal(moved, 1); /* the index; a.co is gone already */
		assert_int_equal(rocmd_store_usage(f->store, &objs, &obytes), 0);
		assert_int_equal(objs, 0);
	}
	free(text);
	cJSON_Delete(back);
	cJSON_Delete(rec);
	cJSON_Delete(id);
	rocmd_pkg_contents_free(&c);
}

static void
test_folder(void **state)
{
	struct fx *f = *state;
	char src[256], path[512], why[512] = "";
	struct imported imp;
	char *before, *after;
	FILE *w;

	snprintf(src, sizeof(src), "%s/folder (unpacked) V5.0 for hip sdk 6.2.4", f->dir);
	snprintf(path, sizeof(path), "%s/library", src);
	assert_int_equal(mkdir(src, 0755), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/library/TensileLibrary_lazy_gfx1103.dat", src);
	w = fopen(path, "w");
	fputs("index", w);
	fclose(w);
	snprintf(path, sizeof(path), "%s/library/link.dat", src);
	assert_int_equal(symlink("TensileLibrary_lazy_gfx1103.dat", path), 0);
	assert_int_equal(import(f, src, NULL, &imp, why, sizeof(why)), 0);
	assert_string_equal(cJSON_GetObjectItem(imp.identity, "sdk")->valuestring, "6.2.4");
	assert_string_equal(cJSON_GetObjectItem(imp.identity, "version_hint")->valuestring, "V5.0");
	cJSON_Delete(imp.identity);
	/* A link out of the folder, then a FIFO: refused, nothing written. */
	snprintf(path, sizeof(path), "%s/library/out", src);
	assert_int_equal(symlink("../../../../etc/passwd", path), 0);
	before = snapshot(f);
	assert_int_equal(import(f, src, NULL, &imp, why, sizeof(why)), ROCMD_EUNSAFE);
	assert_non_null(strstr(why, "library/out"));
	after = snapshot(f);
	assert_string_equal(before, after);
	free(after);
	unlink(path);
	snprintf(path, sizeof(path), "%s/library/fifo", src);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(import(f, src, NULL, &imp, why, sizeof(why)), ROCMD_EUNSAFE);
	assert_non_null(strstr(why, "library/fifo is not a file, folder or symlink"));
	after = snapshot(f);
	assert_string_equal(before, after);
	free(before);
	free(after);
	unlink(path);
	/* A subfolder swapped for a link after the walk saw it: the reader opens
	 * each file beneath the folder with no link followed on its path. */
	{
		char outside[256], link[512];
		int fd;
		snprintf(outside, sizeof(outside), "%s/outside", f->dir);
		snprintf(link, sizeof(link), "%s/library", src);
		assert_int_equal(mkdir(outside, 0755), 0);
		snprintf(path, sizeof(path), "%s/TensileLibrary_lazy_gfx1103.dat", outside);
		w = fopen(path, "w");
		fputs("secret", w);
		fclose(w);
		snprintf(path, sizeof(path), "%s/library.real", src);
		assert_int_equal(rename(link, path), 0);
		assert_int_equal(symlink(outside, link), 0);
		fd = rocmd_fs_open_beneath(src, "library/TensileLibrary_lazy_gfx1103.dat", O_RDONLY);
		assert_true(fd == -ELOOP || fd == -EXDEV);
		/* What the path alone would have read. */
		snprintf(path, sizeof(path), "%s/library/TensileLibrary_lazy_gfx1103.dat", src);
		fd = rocmd_fs_open(path, O_RDONLY, 0);
		assert_true(fd >= 0);
		rocmd_fs_close(fd);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_real_archives, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_folder, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sparse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_utf8_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hardlinks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_records, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
