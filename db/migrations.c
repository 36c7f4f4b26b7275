/*
 * The schema of rocmd's database as an ordered list of migrations. Version N
 * is reached from version N-1 by rocmd_migrations[N-1]; db.c applies each one
 * in its own BEGIN IMMEDIATE transaction together with PRAGMA user_version.
 * Never edit or renumber a migration that has shipped: databases in the field
 * were built by it. Append a new one instead, and add the fixture of the
 * version it upgrades (tests/data/db-schema-vN.sql, rows in every table) with
 * its entry in old_schemas of tests/unit/test-db.c, which fails until every
 * version before the newest has one.
 */
#include "db.h"

const struct rocmd_migration rocmd_migrations[] = {
	{
		1,
		"event history",
		"CREATE TABLE event (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	time_ms INTEGER NOT NULL,\n"
		"	kind TEXT NOT NULL,\n"
		"	message TEXT NOT NULL,\n"
		"	detail TEXT CHECK (detail IS NULL OR json_valid(detail))\n"
		");\n"
		"CREATE INDEX event_kind ON event(kind);\n",
	},
	{
		2,
		"daemon runs",
		"CREATE TABLE daemon_run (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	pid INTEGER NOT NULL,\n"
		"	version TEXT NOT NULL,\n"
		"	started_ms INTEGER NOT NULL,\n"
		"	ended_ms INTEGER\n"
		");\n",
	},
	{
		3,
		"tuning results",
		/* One job per (device, software, problem): the tuning key without the
		 * configuration. Its winner is set when a run declares one. */
		"CREATE TABLE tune_job (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	backend TEXT NOT NULL,\n"
		"	arch TEXT NOT NULL,\n"
		"	device TEXT NOT NULL,\n"
		"	compute_units INTEGER NOT NULL,\n"
		"	driver TEXT NOT NULL,\n"
		"	runtime TEXT NOT NULL,\n"
		"	compiler TEXT NOT NULL,\n"
		"	source_hash TEXT NOT NULL,\n"
		"	problem TEXT NOT NULL,\n"
		"	created_ms INTEGER NOT NULL,\n"
		"	winner_config TEXT,\n"
		"	winner_ms REAL,\n"
		"	default_ms REAL,\n"
		"	finished_ms INTEGER,\n"
		"	UNIQUE (backend, arch, device, compute_units, driver, runtime, compiler,\n"
		"		source_hash, problem)\n"
		");\n"
		/* Every finished evaluation, written before the next one starts. */
		"CREATE TABLE tune_eval (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	job_id INTEGER NOT NULL REFERENCES tune_job(id) ON DELETE CASCADE,\n"
		"	config TEXT NOT NULL,\n"
		"	outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'compile_failed',\n"
		"		'launch_failed', 'wrong_result', 'timeout', 'ruled_out', 'crashed')),\n"
		"	median_ms REAL,\n"
		"	p20_ms REAL,\n"
		"	p80_ms REAL,\n"
		"	runs INTEGER NOT NULL DEFAULT 0,\n"
		"	gflops REAL,\n"
		"	detail TEXT,\n"
		"	time_ms INTEGER NOT NULL,\n"
		"	UNIQUE (job_id, config)\n"
		");\n",
	},
	{
		4,
		"package store",
		/* One row per imported package, identified by the digest of its
		 * manifest; its files name objects of the content-addressed store
		 * by SHA-256 (NULL for symlinks). */
		"CREATE TABLE package (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	digest TEXT NOT NULL UNIQUE,\n"
		"	name TEXT NOT NULL,\n"
		"	source TEXT NOT NULL,\n"
		"	imported_ms INTEGER NOT NULL,\n"
		"	platform TEXT NOT NULL CHECK (platform IN ('windows', 'linux', 'any')),\n"
		"	sdk TEXT,\n"
		"	sdk_source TEXT,\n"
		"	version_hint TEXT,\n"
		"	archs TEXT NOT NULL,\n"
		"	binary TEXT,\n"
		"	binary_version TEXT,\n"
		"	file_count INTEGER NOT NULL,\n"
		"	total_size INTEGER NOT NULL,\n"
		"	identity TEXT NOT NULL CHECK (json_valid(identity))\n"
		");\n"
		"CREATE TABLE package_file (\n"
		"	package_id INTEGER NOT NULL REFERENCES package(id) ON DELETE CASCADE,\n"
		"	path TEXT NOT NULL,\n"
		"	kind TEXT NOT NULL CHECK (kind IN ('f', 'l')),\n"
		"	exec INTEGER NOT NULL DEFAULT 0,\n"
		"	size INTEGER NOT NULL,\n"
		"	sha256 TEXT CHECK ((kind = 'f') = (sha256 IS NOT NULL)),\n"
		"	link TEXT CHECK ((kind = 'l') = (link IS NOT NULL)),\n"
		"	PRIMARY KEY (package_id, path)\n"
		") WITHOUT ROWID;\n"
		"CREATE INDEX package_file_sha256 ON package_file(sha256);\n",
	},
	{
		5,
		"SDK discovery",
		/* One row per install path ever seen; a vanished SDK is marked
		 * removed, never deleted, so its history stays. Each content its
		 * rocBLAS library has had is a row of sdk_library; current = 1 marks
		 * the one on disk now. */
		"CREATE TABLE sdk (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	path TEXT NOT NULL UNIQUE,\n"
		"	layout TEXT NOT NULL,\n"
		"	version TEXT,\n"
		"	version_source TEXT NOT NULL,\n"
		"	version_conflict INTEGER NOT NULL DEFAULT 0,\n"
		"	hip_runtime TEXT,\n"
		"	rocblas_binary TEXT,\n"
		"	state TEXT NOT NULL CHECK (state IN ('present', 'unreadable', 'removed')),\n"
		"	first_seen_ms INTEGER NOT NULL,\n"
		"	last_seen_ms INTEGER NOT NULL,\n"
		"	removed_ms INTEGER,\n"
		"	detail TEXT CHECK (detail IS NULL OR json_valid(detail))\n"
		");\n"
		"CREATE TABLE sdk_library (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	sdk_id INTEGER NOT NULL REFERENCES sdk(id),\n"
		"	path TEXT NOT NULL,\n"
		"	fingerprint TEXT,\n"
		"	archs TEXT NOT NULL,\n"
		"	code_object_archs TEXT NOT NULL,\n"
		"	nfiles INTEGER NOT NULL,\n"
		"	total_size INTEGER NOT NULL,\n"
		"	first_seen_ms INTEGER NOT NULL,\n"
		"	last_seen_ms INTEGER NOT NULL,\n"
		"	current INTEGER NOT NULL DEFAULT 1\n"
		");\n"
		"CREATE UNIQUE INDEX sdk_library_current ON sdk_library(sdk_id) WHERE current = 1;\n"
		"CREATE TABLE gpu (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	key TEXT NOT NULL UNIQUE,\n"
		"	arch TEXT NOT NULL,\n"
		"	name TEXT,\n"
		"	kind TEXT NOT NULL CHECK (kind IN ('igpu', 'dgpu')),\n"
		"	compute_units INTEGER NOT NULL,\n"
		"	vram_bytes INTEGER NOT NULL,\n"
		"	state TEXT NOT NULL CHECK (state IN ('present', 'removed')),\n"
		"	first_seen_ms INTEGER NOT NULL,\n"
		"	last_seen_ms INTEGER NOT NULL,\n"
		"	detail TEXT CHECK (detail IS NULL OR json_valid(detail))\n"
		");\n",
	},
	{
		6,
		"deployments",
		/* A target is one place a rocBLAS lives: an SDK's (kind 'sdk'), an
		 * application's private copy ('app') or rocmd's own overlay folder
		 * for ROCBLAS_TENSILE_LIBPATH ('overlay'). Paths are system paths.
		 * Each deploy is a row of deployment; at most one per target is
		 * 'live'. backup holds the vendor's originals, kept once per
		 * target (I1); deploy_history every action taken on a target. */
		"CREATE TABLE target (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	kind TEXT NOT NULL CHECK (kind IN ('sdk', 'app', 'overlay')),\n"
		"	name TEXT NOT NULL UNIQUE,\n"
		"	sdk_id INTEGER REFERENCES sdk(id),\n"
		"	platform TEXT NOT NULL CHECK (platform IN ('windows', 'linux')),\n"
		"	sdk_version TEXT,\n"
		"	binary_path TEXT,\n"
		"	library_path TEXT NOT NULL,\n"
		"	created_ms INTEGER NOT NULL,\n"
		"	updated_ms INTEGER NOT NULL\n"
		");\n"
		"CREATE TABLE deployment (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	target_id INTEGER NOT NULL REFERENCES target(id),\n"
		"	package_id INTEGER REFERENCES package(id),\n"
		"	state TEXT NOT NULL CHECK (state IN ('live', 'superseded', 'rolled_back',\n"
		"		'failed')),\n"
		"	reason TEXT NOT NULL,\n"
		"	fingerprint TEXT,\n"
		"	started_ms INTEGER NOT NULL,\n"
		"	finished_ms INTEGER,\n"
		"	ended_ms INTEGER,\n"
		"	detail TEXT CHECK (detail IS NULL OR json_valid(detail))\n"
		");\n"
		"CREATE UNIQUE INDEX deployment_live ON deployment(target_id) WHERE state = 'live';\n"
		"CREATE INDEX deployment_package ON deployment(package_id);\n"
		"CREATE TABLE backup (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	target_id INTEGER NOT NULL UNIQUE REFERENCES target(id),\n"
		"	path TEXT NOT NULL,\n"
		"	fingerprint TEXT NOT NULL,\n"
		"	nfiles INTEGER NOT NULL,\n"
		"	total_size INTEGER NOT NULL,\n"
		"	adopted TEXT,\n"
		"	created_ms INTEGER NOT NULL\n"
		");\n"
		"CREATE TABLE deploy_history (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	target_id INTEGER NOT NULL REFERENCES target(id),\n"
		"	deployment_id INTEGER REFERENCES deployment(id),\n"
		"	time_ms INTEGER NOT NULL,\n"
		"	action TEXT NOT NULL CHECK (action IN ('deploy', 'verify', 'rollback',\n"
		"		'drift', 'recover', 'backup')),\n"
		"	outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'refused',\n"
		"		'reported')),\n"
		"	message TEXT NOT NULL,\n"
		"	detail TEXT CHECK (detail IS NULL OR json_valid(detail))\n"
		");\n"
		"CREATE INDEX deploy_history_target ON deploy_history(target_id, id);\n",
	},
	{
		7,
		"tune queue",
		/* The idle tuner's persistent job queue: one row per problem to
		 * tune on one device under one SDK. A job's evaluations live in
		 * tune_eval under the tuner's own key (migration 3); this row holds
		 * what the scheduler needs: state, progress, where it came from
		 * and, for a re-tune after an SDK or driver update, the job whose
		 * winners seeded it. A job keyed to an SDK that is gone is 'stale',
		 * never deleted; at most one job per problem is not stale. */
		"CREATE TABLE tune_queue (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	backend TEXT NOT NULL,\n"
		"	arch TEXT NOT NULL,\n"
		"	device TEXT NOT NULL,\n"
		"	sdk TEXT NOT NULL,\n"
		"	dtype TEXT NOT NULL CHECK (dtype IN ('fp32', 'fp16', 'bf16')),\n"
		"	trans TEXT NOT NULL CHECK (trans IN ('NN', 'NT', 'TN', 'TT')),\n"
		"	m INTEGER NOT NULL CHECK (m > 0),\n"
		"	n INTEGER NOT NULL CHECK (n > 0),\n"
		"	k INTEGER NOT NULL CHECK (k > 0),\n"
		"	batch INTEGER NOT NULL DEFAULT 1 CHECK (batch > 0),\n"
		"	origin TEXT NOT NULL CHECK (origin IN ('default', 'user', 'retune')),\n"
		"	state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'paused', 'done',\n"
		"		'failed', 'stale')),\n"
		"	budget INTEGER NOT NULL CHECK (budget > 0),\n"
		"	evals INTEGER NOT NULL DEFAULT 0,\n"
		"	measured INTEGER NOT NULL DEFAULT 0,\n"
		"	winner TEXT,\n"
		"	best_ms REAL,\n"
		"	default_ms REAL,\n"
		"	seeded_from INTEGER REFERENCES tune_queue(id),\n"
		"	detail TEXT,\n"
		"	created_ms INTEGER NOT NULL,\n"
		"	updated_ms INTEGER NOT NULL,\n"
		"	finished_ms INTEGER\n"
		");\n"
		"CREATE UNIQUE INDEX tune_queue_live ON tune_queue(backend, arch, device, sdk, dtype,\n"
		"	trans, m, n, k, batch) WHERE state <> 'stale';\n"
		"CREATE INDEX tune_queue_state ON tune_queue(state);\n",
	},
	{
		8,
		"tune queue driver",
		/* A tuning job is keyed to the GPU driver as well as the SDK: a
		 * driver update makes its results stale (the tuner's key always
		 * had the driver) and queues a seeded re-tune, as an SDK update
		 * does. Rows from before have driver '': the scheduler adopts them
		 * under the driver it finds (their results were kept under it). */
		"ALTER TABLE tune_queue ADD COLUMN driver TEXT NOT NULL DEFAULT '';\n"
		"DROP INDEX tune_queue_live;\n"
		"CREATE UNIQUE INDEX tune_queue_live ON tune_queue(backend, arch, device, sdk, driver,\n"
		"	dtype, trans, m, n, k, batch) WHERE state <> 'stale';\n",
	},
	{
		9,
		"vendor tuning",
		/* Jobs that tune a vendor library's own solutions (rocBLAS, hipBLASLt,
		 * cuBLASLt) for one deploy target: the problem as the program calls it
		 * (leading dimensions, strides, alpha and beta: the library's override
		 * matches on them), where it came from and how often the program
		 * called it (source, calls), the target and its library file, the
		 * library's digest once a run opened it, the expected time per call
		 * (the queue runs the largest calls x time first) and the spread of
		 * the re-timing that decides whether an override entry is written.
		 * Kernel jobs keep the defaults. tune_override holds, per target and
		 * library, the override file rocmd wrote and what it is keyed to
		 * (the library's digest, the GPU, the driver), and whether it is live. */
		"ALTER TABLE tune_queue ADD COLUMN source TEXT NOT NULL DEFAULT '';\n"
		"ALTER TABLE tune_queue ADD COLUMN calls INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN lda INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN ldb INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN ldc INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN stride_a INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN stride_b INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN stride_c INTEGER NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN alpha REAL NOT NULL DEFAULT 1;\n"
		"ALTER TABLE tune_queue ADD COLUMN beta REAL NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN target TEXT NOT NULL DEFAULT '';\n"
		"ALTER TABLE tune_queue ADD COLUMN library TEXT NOT NULL DEFAULT '';\n"
		"ALTER TABLE tune_queue ADD COLUMN lib_digest TEXT NOT NULL DEFAULT '';\n"
		"ALTER TABLE tune_queue ADD COLUMN est_ms REAL NOT NULL DEFAULT 0;\n"
		"ALTER TABLE tune_queue ADD COLUMN best_hi_ms REAL;\n"
		"ALTER TABLE tune_queue ADD COLUMN default_lo_ms REAL;\n"
		"DROP INDEX tune_queue_live;\n"
		"CREATE UNIQUE INDEX tune_queue_live ON tune_queue(backend, target, arch, device, sdk,\n"
		"	driver, dtype, trans, m, n, k, batch, lda, ldb, ldc, stride_a, stride_b, stride_c,\n"
		"	beta) WHERE state <> 'stale';\n"
		"CREATE TABLE tune_override (\n"
		"	id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
		"	target TEXT NOT NULL,\n"
		"	library TEXT NOT NULL CHECK (library IN ('rocblas', 'hipblaslt')),\n"
		"	lib_path TEXT NOT NULL,\n"
		"	lib_digest TEXT NOT NULL,\n"
		"	arch TEXT NOT NULL,\n"
		"	device TEXT NOT NULL,\n"
		"	compute_units INTEGER NOT NULL DEFAULT 0,\n"
		"	driver TEXT NOT NULL,\n"
		"	path TEXT NOT NULL,\n"
		"	entries INTEGER NOT NULL DEFAULT 0,\n"
		"	state TEXT NOT NULL CHECK (state IN ('live', 'written', 'withdrawn', 'off',\n"
		"		'unsupported')),\n"
		"	variable TEXT,\n"
		"	detail TEXT,\n"
		"	updated_ms INTEGER NOT NULL,\n"
		"	UNIQUE (target, library)\n"
		");\n",
	},
	{
		10,
		"deployment package names",
		/* A deployment keeps the name and digest of its package, so that
		 * the history still says what was deployed after pkg rm removed
		 * the package (its package_id is then NULL). New rows get them
		 * when recorded; older ones when their package is removed. */
		"ALTER TABLE deployment ADD COLUMN package_name TEXT;\n"
		"ALTER TABLE deployment ADD COLUMN package_digest TEXT;\n",
	},
};

const int rocmd_migrations_count = (int)(sizeof(rocmd_migrations) / sizeof(rocmd_migrations[0]));
