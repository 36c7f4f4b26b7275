/*
 * Deploy's rows (db/db-deploy.c) on a real database migrated to the current
 * schema: targets inserted and updated by name, one live deployment per
 * target with the previous one superseded, a failed attempt leaving the live
 * one alone, a rollback to the originals, the backup of the originals never
 * replaced (I1), the history newest first with paging, the status counts and
 * the package store's "deployed" check following live deployments only, and
 * a database of schema 5 (before deploy) upgraded with its rows kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/error.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"
#include "db/db.h"

struct fx {
	char dir[64];
	char path[128];
	struct rocmd_db *db;
	struct rocmd_deploy_db *ddb;
	struct rocmd_pkg_db *pdb;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char why[256];

	strcpy(f->dir, "/tmp/rocmd-test-dbdeploy-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/rocmd.db", f->dir);
	if (rocmd_db_open(f->path, &f->db, why, sizeof(why)) < 0 ||
	    rocmd_deploy_db_attach(f->db, &f->ddb) < 0 || rocmd_pkg_db_attach(f->db, &f->pdb) < 0) {
		fprintf(stderr, "setup: %s\n", why);
		return -1;
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[256];

	rocmd_deploy_db_detach(f->ddb);
	rocmd_pkg_db_detach(f->pdb);
	rocmd_db_close(f->db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static int64_t
add_package(struct fx *f, const char *digest)
{
	struct rocmd_db_pkg p = {
	    .digest = digest,
	    .name = digest,
	    .source = "/tmp/x.7z",
	    .platform = "linux",
	    .sdk = "5.7",
	    .archs = "gfx1103",
	    .file_count = 1,
	    .total_size = 10,
	};
	struct rocmd_db_pkg_file file = {
	    .path = "library/a.co", .kind = 'f', .size = 10, .sha256 = digest};
	int64_t id = 0;

	assert_int_equal(rocmd_pkg_db_add(f->pdb, &p, &file, 1, &id), 0);
	return id;
}

struct seen {
	int n;
	int64_t ids[16];
	char states[16][16];
	int64_t live_id, live_pkg;
	char backup[256];
	char adopted[64];
};

static int
on_target(const struct rocmd_db_target *t, void *ctx)
{
	struct seen *s = ctx;

	s->ids[s->n++] = t->id;
	s->live_id = t->live_id;
	s->live_pkg = t->live_package_id;
	snprintf(s->backup, sizeof(s->backup), "%s", t->backup_path ? t->backup_path : "");
	snprintf(s->adopted, sizeof(s->adopted), "%s", t->backup_adopted ? t->backup_adopted : "");
	return 0;
}

static int
on_deployment(const struct rocmd_db_deployment *d, void *ctx)
{
	struct seen *s = ctx;

	s->ids[s->n] = d->id;
	snprintf(s->states[s->n], sizeof(s->states[0]), "%s", d->state);
	s->n++;
	return 0;
}

/* Every deployment's package was removed: no id, its name and digest kept. */
static int
on_removed_pkg(const struct rocmd_db_deployment *d, void *ctx)
{
	(void)ctx;
	assert_int_equal(d->package_id, 0);
	assert_non_null(d->package_name);
	assert_non_null(d->package_digest);
	assert_string_equal(d->package_name, d->package_digest); /* add_package names it so */
	return 0;
}

static int
on_history(const struct rocmd_db_history *h, void *ctx)
{
	struct seen *s = ctx;

	s->ids[s->n] = h->id;
	snprintf(s->states[s->n], sizeof(s->states[0]), "%s/%s", h->action, h->outcome);
	s->n++;
	return 0;
}

static int64_t
put_sdk_target(struct fx *f, const char *libpath)
{
	struct rocmd_db_target t = {
	    .kind = "sdk",
	    .name = "sdk-1",
	    .platform = "linux",
	    .sdk_version = "5.7.1",
	    .binary_path = "/opt/rocm-5.7.1/lib/librocblas.so.3",
	    .library_path = libpath,
	};
	int64_t id = 0;

	assert_int_equal(rocmd_deploy_db_target_put(f->ddb, &t, 1000, &id), 0);
	return id;
}

static void
test_targets_by_name(void **state)
{
	struct fx *f = *state;
	struct seen s = {0};
	int64_t a = put_sdk_target(f, "/opt/rocm-5.7.1/lib/rocblas/library");
	int64_t b = put_sdk_target(f, "/opt/rocm-5.7.1/lib/rocblas/library2");
	struct rocmd_db_target app = {.kind = "app",
	                              .name = "app-ollama",
	                              .platform = "linux",
	                              .sdk_version = "6.1",
	                              .library_path = "/usr/lib/ollama/rocm"};
	int64_t c = 0;

	assert_true(a > 0);
	assert_int_equal(a, b); /* the same name is the same target, updated */
	assert_int_equal(rocmd_deploy_db_target_put(f->ddb, &app, 2000, &c), 0);
	assert_int_not_equal(c, a);
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, 0, NULL, on_target, &s), 0);
	assert_int_equal(s.n, 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, 0, "app-ollama", on_target, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ids[0], c);
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, 99, NULL, on_target, &s), ROCMD_ENOTFOUND);
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, 0, "app-none", on_target, &s),
	                 ROCMD_ENOTFOUND);
}

static void
test_live_superseded_failed_rollback(void **state)
{
	struct fx *f = *state;
	int64_t t = put_sdk_target(f, "/opt/rocm-5.7.1/lib/rocblas/library");
	int64_t p1 = add_package(f, "aa"), p2 = add_package(f, "bb");
	struct rocmd_db_deployment d = {.target_id = t,
	                                .package_id = p1,
	                                .state = "live",
	                                .reason = "user",
	                                .fingerprint = "f1",
	                                .started_ms = 10,
	                                .finished_ms = 20};
	struct rocmd_db_counts counts;
	int64_t d1, d2, d3, n;
	struct seen s = {0};

	assert_int_equal(rocmd_deploy_db_record(f->ddb, &d, NULL, "deploy", "ok", "deployed", &d1),
	                 0);
	assert_int_equal(rocmd_pkg_db_deployments(f->pdb, p1, &n), 0);
	assert_int_equal(n, 1);
	/* A package in place does not go. */
	assert_int_equal(rocmd_pkg_db_remove(f->pdb, p1), ROCMD_EBUSY);
	d.package_id = p2;
	d.fingerprint = "f2";
	d.started_ms = 30;
	d.finished_ms = 40;
	assert_int_equal(
	    rocmd_deploy_db_record(f->ddb, &d, "superseded", "deploy", "ok", "again", &d2), 0);
	/* A failed attempt leaves the live one in place. */
	d.package_id = p1;
	d.state = "failed";
	d.detail = "{\"why\": \"verify failed\"}";
	assert_int_equal(rocmd_deploy_db_record(f->ddb, &d, NULL, "deploy", "failed", "no", &d3),
	                 0);
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, t, NULL, on_target, &s), 0);
	assert_int_equal(s.live_id, d2);
	assert_int_equal(s.live_pkg, p2);
	assert_int_equal(rocmd_pkg_db_deployments(f->pdb, p2, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rocmd_pkg_db_deployments(f->pdb, p1, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(rocmd_db_counts(f->db, &counts), 0);
	assert_int_equal(counts.deployments, 1);

	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_deployments(f->ddb, t, 0, on_deployment, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.states[0], "failed");
	assert_string_equal(s.states[1], "live");
	assert_string_equal(s.states[2], "superseded");

	/* Back to the originals: nothing live, the row says rolled back. */
	assert_int_equal(
	    rocmd_deploy_db_end_live(f->ddb, t, 50, "rolled back to the originals", NULL), 0);
	assert_int_equal(rocmd_deploy_db_end_live(f->ddb, t, 60, "again", NULL), ROCMD_ENOTFOUND);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, t, NULL, on_target, &s), 0);
	assert_int_equal(s.live_id, 0);
	assert_int_equal(rocmd_db_counts(f->db, &counts), 0);
	assert_int_equal(counts.deployments, 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_deployments(f->ddb, t, 1, on_deployment, &s), 0);
	assert_int_equal(s.n, 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_deployments(f->ddb, t, 0, on_deployment, &s), 0);
	assert_string_equal(s.states[1], "rolled_back");

	/* Nothing in place: both packages may go; the deployments keep their
	 * names and digests (issue 17: pkg rm failed for any package ever
	 * deployed). */
	assert_int_equal(rocmd_pkg_db_remove(f->pdb, p1), 0);
	assert_int_equal(rocmd_pkg_db_remove(f->pdb, p2), 0);
	assert_int_equal(rocmd_deploy_db_deployments(f->ddb, t, 0, on_removed_pkg, NULL), 0);

	/* History: newest first, paged with before_id. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_history(f->ddb, t, 0, 0, on_history, &s), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.states[0], "rollback/ok");
	assert_string_equal(s.states[1], "deploy/failed");
	assert_string_equal(s.states[3], "deploy/ok");
	{
		int64_t newest = s.ids[0];
		memset(&s, 0, sizeof(s));
		assert_int_equal(rocmd_deploy_db_history(f->ddb, t, newest, 2, on_history, &s), 0);
		assert_int_equal(s.n, 2);
		assert_string_equal(s.states[0], "deploy/failed");
	}
	/* Bad states are refused, not written. */
	d.state = "stale";
	assert_int_equal(rocmd_deploy_db_record(f->ddb, &d, NULL, "deploy", "ok", "x", &d3),
	                 ROCMD_EINVAL);
	d.state = "live";
	assert_int_equal(rocmd_deploy_db_record(f->ddb, &d, "gone", "deploy", "ok", "x", &d3),
	                 ROCMD_EINVAL);
	/* An unknown action violates the schema's CHECK: nothing is half-written. */
	assert_int_not_equal(rocmd_deploy_db_record(f->ddb, &d, NULL, "explode", "ok", "x", &d3),
	                     0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, t, NULL, on_target, &s), 0);
	assert_int_equal(s.live_id, 0);
	assert_int_equal(rocmd_deploy_db_set_fingerprint(f->ddb, d2, "f2b"), 0);
	assert_int_equal(rocmd_deploy_db_set_fingerprint(f->ddb, 999, "x"), ROCMD_ENOTFOUND);
}

static void
test_backup_never_replaced(void **state)
{
	struct fx *f = *state;
	int64_t t = put_sdk_target(f, "/opt/rocm-5.7.1/lib/rocblas/library");
	struct seen s = {0};

	assert_int_equal(rocmd_deploy_db_backup_put(f->ddb, t, "/state/backup/1", "fp-orig", 22,
	                                            1000, "rocblas_backup", 5),
	                 0);
	assert_int_equal(
	    rocmd_deploy_db_backup_put(f->ddb, t, "/state/backup/other", "fp-new", 1, 1, NULL, 6),
	    ROCMD_EEXISTS);
	assert_int_equal(rocmd_deploy_db_targets(f->ddb, t, NULL, on_target, &s), 0);
	assert_string_equal(s.backup, "/state/backup/1");
	assert_string_equal(s.adopted, "rocblas_backup");
}

/* A database written before deploy existed (schema 5) upgrades with its rows. */
static void
test_upgrade_from_schema_5(void **state)
{
	struct fx *f = *state;
	char path[160], why[256];
	struct rocmd_db *db = NULL;
	struct rocmd_pkg_db *pdb = NULL;
	struct rocmd_deploy_db *ddb = NULL;
	struct rocmd_db_counts counts;
	int64_t n = -1, t = 0;

	snprintf(path, sizeof(path), "%s/old.db", f->dir);
	assert_int_equal(rocmd_db_open_with(path, rocmd_migrations, 5, &db, why, sizeof(why)), 0);
	assert_int_equal(rocmd_pkg_db_attach(db, &pdb), 0);
	{
		struct rocmd_db_pkg p = {.digest = "cc",
		                         .name = "n",
		                         .source = "s",
		                         .platform = "any",
		                         .archs = "gfx803"};
		assert_int_equal(rocmd_pkg_db_add(pdb, &p, NULL, 0, &n), 0);
	}
	rocmd_pkg_db_detach(pdb);
	rocmd_db_close(db);
	db = NULL;
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	assert_true(rocmd_db_schema_version(db) >= 6);
	assert_int_equal(rocmd_pkg_db_attach(db, &pdb), 0);
	assert_int_equal(rocmd_deploy_db_attach(db, &ddb), 0);
	assert_int_equal(rocmd_db_counts(db, &counts), 0);
	assert_int_equal(counts.packages, 1);
	assert_int_equal(counts.deployments, 0);
	assert_int_equal(rocmd_pkg_db_deployments(pdb, n, &n), 0);
	assert_int_equal(n, 0);
	{
		struct rocmd_db_target tt = {.kind = "overlay",
		                             .name = "overlay-1",
		                             .platform = "linux",
		                             .library_path = "/state/overlay/1"};
		assert_int_equal(rocmd_deploy_db_target_put(ddb, &tt, 1, &t), 0);
		assert_true(t > 0);
	}
	rocmd_deploy_db_detach(ddb);
	rocmd_pkg_db_detach(pdb);
	rocmd_db_close(db);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_targets_by_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_live_superseded_failed_rollback, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_backup_never_replaced, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_from_schema_5, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
