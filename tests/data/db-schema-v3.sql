-- A schema-version-3 rocmd database (migrations 1..3, the last "tuning results"): `sqlite3
-- rocmd.db .dump` plus its user_version. Made by opening an empty file with
-- rocmd_db_open_with(path, rocmd_migrations, 3) (migrations 1..3 are unchanged since they
-- shipped) and inserting rows through the columns version 3 had into every table it had
-- (event, daemon_run, tune_job, tune_eval): NULLs, JSON details, each state and outcome the
-- CHECKs allow, ids freed by deletes. tests/unit/test-db.c migrates it to the newest schema
-- and checks that every row survived. Never edit: it is history.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE event (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	time_ms INTEGER NOT NULL,
	kind TEXT NOT NULL,
	message TEXT NOT NULL,
	detail TEXT CHECK (detail IS NULL OR json_valid(detail))
);
INSERT INTO event VALUES(1,1717000000000,'daemon.start','rocmd 0.1.0 started','{"pid":412,"version":"0.1.0"}');
INSERT INTO event VALUES(2,1717000000250,'sdk.added','HIP SDK 6.1.2 found at /opt/rocm-6.1.2','{"path":"/opt/rocm-6.1.2","version":"6.1.2"}');
INSERT INTO event VALUES(4,1717000200000,'daemon.stop','rocmd stopped',NULL);
INSERT INTO event VALUES(5,1717000300000,'daemon.start','rocmd 0.1.0 started','{"pid":977,"version":"0.1.0"}');
INSERT INTO event VALUES(6,1717000300100,'deploy.done','sdk-1: deployed ''rocblas-gfx1103'' (3 files)','[1,"sdk-1",{"files":3}]');
CREATE TABLE daemon_run (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	pid INTEGER NOT NULL,
	version TEXT NOT NULL,
	started_ms INTEGER NOT NULL,
	ended_ms INTEGER
);
INSERT INTO daemon_run VALUES(1,412,'0.1.0',1717000000000,1717000200000);
INSERT INTO daemon_run VALUES(2,977,'0.1.0',1717000300000,NULL);
INSERT INTO daemon_run VALUES(3,1203,'0.1.1',1717000400000,1717000900000);
CREATE TABLE tune_job (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	backend TEXT NOT NULL,
	arch TEXT NOT NULL,
	device TEXT NOT NULL,
	compute_units INTEGER NOT NULL,
	driver TEXT NOT NULL,
	runtime TEXT NOT NULL,
	compiler TEXT NOT NULL,
	source_hash TEXT NOT NULL,
	problem TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	winner_config TEXT,
	winner_ms REAL,
	default_ms REAL,
	finished_ms INTEGER,
	UNIQUE (backend, arch, device, compute_units, driver, runtime, compiler,
		source_hash, problem)
);
INSERT INTO tune_job VALUES(1,'hip','gfx1100','AMD Radeon RX 7900 XTX',96,'6.7.0','6.1.40093','hiprtc 6.1.40093','3f2a9c1e5b7d4a60','fp32 NN 1024x1024x1024',1717001000000,'MT0=64 MT1=64 DU=16',0.41199999999999997735,0.53000000000000002664,1717001900000);
INSERT INTO tune_job VALUES(2,'hip','gfx1100','AMD Radeon RX 7900 XTX',96,'6.7.0','6.1.40093','hiprtc 6.1.40093','3f2a9c1e5b7d4a60','fp16 NT 4096x4096x64',1717002000000,NULL,NULL,NULL,NULL);
INSERT INTO tune_job VALUES(3,'cpu','x86_64','test cpu',16,'','','cc 13.2.0','3f2a9c1e5b7d4a60','fp32 TN 64x64x64',1717003000000,'MT0=8',0.0625,NULL,1717003100000);
CREATE TABLE tune_eval (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	job_id INTEGER NOT NULL REFERENCES tune_job(id) ON DELETE CASCADE,
	config TEXT NOT NULL,
	outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'compile_failed',
		'launch_failed', 'wrong_result', 'timeout', 'ruled_out', 'crashed')),
	median_ms REAL,
	p20_ms REAL,
	p80_ms REAL,
	runs INTEGER NOT NULL DEFAULT 0,
	gflops REAL,
	detail TEXT,
	time_ms INTEGER NOT NULL,
	UNIQUE (job_id, config)
);
INSERT INTO tune_eval VALUES(1,1,'MT0=64 MT1=64 DU=16','ok',0.41199999999999997735,0.40500000000000002664,0.43099999999999999422,25,5212.5,NULL,1717001100000);
INSERT INTO tune_eval VALUES(2,1,'MT0=128 MT1=128 DU=32','compile_failed',NULL,NULL,NULL,0,NULL,'error: local memory (69632) exceeds limit (65536)',1717001200000);
INSERT INTO tune_eval VALUES(3,1,'MT0=32 MT1=32 DU=8','wrong_result',NULL,NULL,NULL,1,NULL,'max error 0.5 at (3, 7)',1717001300000);
INSERT INTO tune_eval VALUES(4,1,'MT0=16 MT1=16 DU=8','timeout',NULL,NULL,NULL,0,NULL,NULL,1717001400000);
INSERT INTO tune_eval VALUES(5,1,'MT0=8 MT1=8 DU=4','ruled_out',NULL,NULL,NULL,0,NULL,'slower than 2x the best',1717001500000);
INSERT INTO tune_eval VALUES(6,1,'MT0=64 MT1=32 DU=16','crashed',NULL,NULL,NULL,0,NULL,'signal 11',1717001600000);
INSERT INTO tune_eval VALUES(7,1,'MT0=32 MT1=64 DU=16','launch_failed',NULL,NULL,NULL,0,NULL,'launch failed: out of resources',1717001700000);
INSERT INTO tune_eval VALUES(9,2,'MT0=64 MT1=64 DU=16','ok',1.25,1.1999999999999999555,1.3125,9,1717.4999999999999999,NULL,1717002100000);
INSERT INTO tune_eval VALUES(10,3,'MT0=8','ok',0.0625,0.0625,0.0703125,11,8.375,NULL,1717003050000);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('event',6);
INSERT INTO sqlite_sequence VALUES('daemon_run',3);
INSERT INTO sqlite_sequence VALUES('tune_job',3);
INSERT INTO sqlite_sequence VALUES('tune_eval',10);
CREATE INDEX event_kind ON event(kind);
COMMIT;
PRAGMA user_version=3;
