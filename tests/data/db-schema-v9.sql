-- A schema-version-9 rocmd database (migrations 1..9, the last "vendor tuning"): `sqlite3
-- rocmd.db .dump` plus its user_version. Made from tests/data/db-schema-v8.sql loaded into an
-- empty file, migration 9's statements (they are unchanged since they shipped) and
-- PRAGMA user_version = 9, then two tune_override rows through the columns version 9 had (a
-- live rocBLAS override and a withdrawn hipBLASLt one). Every table version 9 has holds rows.
-- tests/unit/test-db.c migrates it to the newest schema and checks that every row survived.
-- Never edit: it is history.
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
CREATE TABLE package (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	digest TEXT NOT NULL UNIQUE,
	name TEXT NOT NULL,
	source TEXT NOT NULL,
	imported_ms INTEGER NOT NULL,
	platform TEXT NOT NULL CHECK (platform IN ('windows', 'linux', 'any')),
	sdk TEXT,
	sdk_source TEXT,
	version_hint TEXT,
	archs TEXT NOT NULL,
	binary TEXT,
	binary_version TEXT,
	file_count INTEGER NOT NULL,
	total_size INTEGER NOT NULL,
	identity TEXT NOT NULL CHECK (json_valid(identity))
);
INSERT INTO package VALUES(1,'9e1c4b7a0d2f6e8c1a3b5d7f9e0c2a4b6d8f0e1c3a5b7d9f1e2c4a6b8d0f2e4c','rocblas-gfx1103-6.1.2','/home/u/Downloads/rocblas-gfx1103-6.1.2.7z',1717000100000,'windows','6.1.2','binary','6.1.2','gfx1103','rocblas.dll','4.1.2',3,4259840,'{"kind":"tensile","archs":["gfx1103"],"sdk":"6.1.2"}');
INSERT INTO package VALUES(3,'0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b','librocblas-gfx1150','/srv/drop/librocblas-gfx1150.tar.gz',1717000150000,'linux',NULL,NULL,NULL,'gfx1150,gfx1151',NULL,NULL,2,1052672,'{}');
CREATE TABLE package_file (
	package_id INTEGER NOT NULL REFERENCES package(id) ON DELETE CASCADE,
	path TEXT NOT NULL,
	kind TEXT NOT NULL CHECK (kind IN ('f', 'l')),
	exec INTEGER NOT NULL DEFAULT 0,
	size INTEGER NOT NULL,
	sha256 TEXT CHECK ((kind = 'f') = (sha256 IS NOT NULL)),
	link TEXT CHECK ((kind = 'l') = (link IS NOT NULL)),
	PRIMARY KEY (package_id, path)
) WITHOUT ROWID;
INSERT INTO package_file VALUES(1,'library/Kernels.so-000-gfx1103.hsaco','f',0,3145728,'cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23',NULL);
INSERT INTO package_file VALUES(1,'library/TensileLibrary_lazy_gfx1103.dat','f',0,65536,'ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01',NULL);
INSERT INTO package_file VALUES(1,'rocblas.dll','f',1,1048576,'ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45',NULL);
INSERT INTO package_file VALUES(3,'lib/librocblas.so.4','l',0,17,NULL,'librocblas.so.4.1');
INSERT INTO package_file VALUES(3,'lib/librocblas.so.4.1','f',1,1048576,'ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45',NULL);
INSERT INTO package_file VALUES(3,'lib/rocblas/library/TensileLibrary_lazy_gfx1150.dat','f',0,4096,'1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef',NULL);
CREATE TABLE sdk (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	path TEXT NOT NULL UNIQUE,
	layout TEXT NOT NULL,
	version TEXT,
	version_source TEXT NOT NULL,
	version_conflict INTEGER NOT NULL DEFAULT 0,
	hip_runtime TEXT,
	rocblas_binary TEXT,
	state TEXT NOT NULL CHECK (state IN ('present', 'unreadable', 'removed')),
	first_seen_ms INTEGER NOT NULL,
	last_seen_ms INTEGER NOT NULL,
	removed_ms INTEGER,
	detail TEXT CHECK (detail IS NULL OR json_valid(detail))
);
INSERT INTO sdk VALUES(1,'/opt/rocm-6.1.2','opt','6.1.2','.info/version',0,'6.1.40093','/opt/rocm-6.1.2/lib/librocblas.so.4','present',1717000000250,1717000900000,NULL,'{"origin":"/opt","problems":[]}');
INSERT INTO sdk VALUES(2,'/opt/rocm-5.7.1','opt','5.7.1','.hipVersion',1,'5.7.31921',NULL,'removed',1717000000300,1717000500000,1717000600000,NULL);
INSERT INTO sdk VALUES(3,'/usr','distro',NULL,'none',0,NULL,NULL,'unreadable',1717000000400,1717000900000,NULL,'{"problems":["cannot read /usr/lib/x86_64-linux-gnu/rocblas"]}');
CREATE TABLE sdk_library (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	sdk_id INTEGER NOT NULL REFERENCES sdk(id),
	path TEXT NOT NULL,
	fingerprint TEXT,
	archs TEXT NOT NULL,
	code_object_archs TEXT NOT NULL,
	nfiles INTEGER NOT NULL,
	total_size INTEGER NOT NULL,
	first_seen_ms INTEGER NOT NULL,
	last_seen_ms INTEGER NOT NULL,
	current INTEGER NOT NULL DEFAULT 1
);
INSERT INTO sdk_library VALUES(1,1,'/opt/rocm-6.1.2/lib/rocblas/library','5d41402abc4b2a76','gfx1030,gfx1100','gfx1030,gfx1100',120,734003200,1717000000250,1717000300000,0);
INSERT INTO sdk_library VALUES(2,1,'/opt/rocm-6.1.2/lib/rocblas/library','7d793037a0760186','gfx1030,gfx1100,gfx1103','gfx1030,gfx1100,gfx1103',123,738197504,1717000300100,1717000900000,1);
INSERT INTO sdk_library VALUES(3,2,'/opt/rocm-5.7.1/lib/rocblas/library',NULL,'','',0,0,1717000000300,1717000500000,1);
CREATE TABLE gpu (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	key TEXT NOT NULL UNIQUE,
	arch TEXT NOT NULL,
	name TEXT,
	kind TEXT NOT NULL CHECK (kind IN ('igpu', 'dgpu')),
	compute_units INTEGER NOT NULL,
	vram_bytes INTEGER NOT NULL,
	state TEXT NOT NULL CHECK (state IN ('present', 'removed')),
	first_seen_ms INTEGER NOT NULL,
	last_seen_ms INTEGER NOT NULL,
	detail TEXT CHECK (detail IS NULL OR json_valid(detail))
);
INSERT INTO gpu VALUES(1,'kfd:13372036854775807','gfx1100','AMD Radeon RX 7900 XTX','dgpu',96,25753026560,'present',1717000000200,1717000900000,'{"node":1,"source":"kfd"}');
INSERT INTO gpu VALUES(2,'kfd-loc:3:gfx1103','gfx1103',NULL,'igpu',12,536870912,'removed',1717000000200,1717000500000,NULL);
CREATE TABLE target (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	kind TEXT NOT NULL CHECK (kind IN ('sdk', 'app', 'overlay')),
	name TEXT NOT NULL UNIQUE,
	sdk_id INTEGER REFERENCES sdk(id),
	platform TEXT NOT NULL CHECK (platform IN ('windows', 'linux')),
	sdk_version TEXT,
	binary_path TEXT,
	library_path TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL
);
INSERT INTO target VALUES(1,'sdk','sdk-1',1,'linux','6.1.2','/opt/rocm-6.1.2/lib/librocblas.so.4','/opt/rocm-6.1.2/lib/rocblas/library',1717000300000,1717000800000);
INSERT INTO target VALUES(2,'app','app-ollama',NULL,'linux','6.1.2',NULL,'/usr/lib/ollama/rocblas/library',1717000400000,1717000400000);
INSERT INTO target VALUES(3,'overlay','overlay-1',1,'linux',NULL,NULL,'/var/lib/rocmd/overlay/1/library',1717000500000,1717000500000);
CREATE TABLE deployment (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	target_id INTEGER NOT NULL REFERENCES target(id),
	package_id INTEGER REFERENCES package(id),
	state TEXT NOT NULL CHECK (state IN ('live', 'superseded', 'rolled_back',
		'failed')),
	reason TEXT NOT NULL,
	fingerprint TEXT,
	started_ms INTEGER NOT NULL,
	finished_ms INTEGER,
	ended_ms INTEGER,
	detail TEXT CHECK (detail IS NULL OR json_valid(detail))
);
INSERT INTO deployment VALUES(1,1,1,'superseded','user','7d793037a0760186',1717000300000,1717000300100,1717000700000,'{"files":3}');
INSERT INTO deployment VALUES(2,1,3,'live','sync','9b74c9897bac770f',1717000700000,1717000700500,NULL,NULL);
INSERT INTO deployment VALUES(3,2,1,'failed','user',NULL,1717000400000,1717000400900,1717000400900,'{"error":"smoke test failed"}');
INSERT INTO deployment VALUES(4,2,1,'rolled_back','user','3c59dc048e885024',1717000450000,1717000450800,1717000460000,NULL);
CREATE TABLE backup (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	target_id INTEGER NOT NULL UNIQUE REFERENCES target(id),
	path TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	nfiles INTEGER NOT NULL,
	total_size INTEGER NOT NULL,
	adopted TEXT,
	created_ms INTEGER NOT NULL
);
INSERT INTO backup VALUES(1,1,'/var/lib/rocmd/backup/sdk-1','5d41402abc4b2a76',120,734003200,NULL,1717000300050);
INSERT INTO backup VALUES(2,2,'/var/lib/rocmd/backup/app-ollama','c4ca4238a0b92382',54,61440000,'/usr/lib/ollama/rocblas/library.orig',1717000400100);
CREATE TABLE deploy_history (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	target_id INTEGER NOT NULL REFERENCES target(id),
	deployment_id INTEGER REFERENCES deployment(id),
	time_ms INTEGER NOT NULL,
	action TEXT NOT NULL CHECK (action IN ('deploy', 'verify', 'rollback',
		'drift', 'recover', 'backup')),
	outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'refused',
		'reported')),
	message TEXT NOT NULL,
	detail TEXT CHECK (detail IS NULL OR json_valid(detail))
);
INSERT INTO deploy_history VALUES(1,1,NULL,1717000300050,'backup','ok','originals backed up (120 files)',NULL);
INSERT INTO deploy_history VALUES(2,1,1,1717000300100,'deploy','ok','deployed rocblas-gfx1103-6.1.2','{"files":3}');
INSERT INTO deploy_history VALUES(3,2,3,1717000400900,'deploy','failed','smoke test failed','{"exit":1}');
INSERT INTO deploy_history VALUES(4,2,4,1717000450800,'deploy','ok','deployed rocblas-gfx1103-6.1.2',NULL);
INSERT INTO deploy_history VALUES(5,2,NULL,1717000460000,'rollback','ok','originals restored',NULL);
INSERT INTO deploy_history VALUES(6,1,1,1717000650000,'drift','reported','library changed outside rocmd',NULL);
INSERT INTO deploy_history VALUES(7,1,2,1717000700500,'deploy','ok','deployed librocblas-gfx1150 after an SDK update','{"files":2,"reason":"sync"}');
INSERT INTO deploy_history VALUES(8,1,2,1717000800000,'verify','ok','verified',NULL);
CREATE TABLE tune_queue (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	backend TEXT NOT NULL,
	arch TEXT NOT NULL,
	device TEXT NOT NULL,
	sdk TEXT NOT NULL,
	dtype TEXT NOT NULL CHECK (dtype IN ('fp32', 'fp16', 'bf16')),
	trans TEXT NOT NULL CHECK (trans IN ('NN', 'NT', 'TN', 'TT')),
	m INTEGER NOT NULL CHECK (m > 0),
	n INTEGER NOT NULL CHECK (n > 0),
	k INTEGER NOT NULL CHECK (k > 0),
	batch INTEGER NOT NULL DEFAULT 1 CHECK (batch > 0),
	origin TEXT NOT NULL CHECK (origin IN ('default', 'user', 'retune')),
	state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'paused', 'done',
		'failed', 'stale')),
	budget INTEGER NOT NULL CHECK (budget > 0),
	evals INTEGER NOT NULL DEFAULT 0,
	measured INTEGER NOT NULL DEFAULT 0,
	winner TEXT,
	best_ms REAL,
	default_ms REAL,
	seeded_from INTEGER REFERENCES tune_queue(id),
	detail TEXT,
	created_ms INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL,
	finished_ms INTEGER
, driver TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '', calls INTEGER NOT NULL DEFAULT 0, lda INTEGER NOT NULL DEFAULT 0, ldb INTEGER NOT NULL DEFAULT 0, ldc INTEGER NOT NULL DEFAULT 0, stride_a INTEGER NOT NULL DEFAULT 0, stride_b INTEGER NOT NULL DEFAULT 0, stride_c INTEGER NOT NULL DEFAULT 0, alpha REAL NOT NULL DEFAULT 1, beta REAL NOT NULL DEFAULT 0, target TEXT NOT NULL DEFAULT '', library TEXT NOT NULL DEFAULT '', lib_digest TEXT NOT NULL DEFAULT '', est_ms REAL NOT NULL DEFAULT 0, best_hi_ms REAL, default_lo_ms REAL);
INSERT INTO tune_queue VALUES(1,'hip','gfx1100','AMD Radeon RX 7900 XTX','6.1.2','fp32','NN',1024,1024,1024,1,'default','stale',200,200,180,'MT0=64 MT1=64 DU=16',0.41199999999999997735,0.53000000000000002664,NULL,NULL,1717001000000,1717001900000,1717001900000,'HIP driver 60241134','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
INSERT INTO tune_queue VALUES(2,'hip','gfx1100','AMD Radeon RX 7900 XTX','6.1.2','fp16','NT',4096,4096,64,1,'user','running',300,57,50,NULL,1.25,NULL,NULL,NULL,1717002000000,1717002100000,NULL,'HIP driver 60241134','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
INSERT INTO tune_queue VALUES(3,'hip','gfx1100','AMD Radeon RX 7900 XTX','5.7.1','bf16','TN',512,512,512,4,'default','stale',100,100,90,'MT0=32 MT1=32 DU=8',0.087499999999999994448,0.10000000000000000555,NULL,NULL,1716990000000,1717000600000,1716990900000,'','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
INSERT INTO tune_queue VALUES(4,'hip','gfx1100','AMD Radeon RX 7900 XTX','6.1.2','bf16','TN',512,512,512,4,'retune','queued',100,0,0,NULL,NULL,NULL,3,'SDK 5.7.1 -> 6.1.2',1717000600000,1717000600000,NULL,'','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
INSERT INTO tune_queue VALUES(5,'cpu','x86_64','test cpu','none','fp32','TT',8,8,8,1,'user','failed',5,5,0,NULL,NULL,NULL,NULL,'no configuration ran',1717003000000,1717003010000,1717003010000,'linux 6.1.0-28-amd64','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
INSERT INTO tune_queue VALUES(6,'cpu','x86_64','test cpu','none','fp16','NN',64,64,64,2,'default','paused',50,12,12,NULL,0.03125,NULL,NULL,NULL,1717003100000,1717003200000,NULL,'linux 6.1.0-28-amd64','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
INSERT INTO tune_queue VALUES(7,'hip','gfx1100','AMD Radeon RX 7900 XTX','6.1.2','fp32','NN',1024,1024,1024,1,'retune','queued',200,0,0,NULL,NULL,NULL,1,'re-tune after driver HIP driver 60241134 -> HIP driver 60342000',1717004000000,1717004000000,NULL,'HIP driver 60342000','',0,0,0,0,0,0,0,1.0,0.0,'','','',0.0,NULL,NULL);
CREATE TABLE tune_override (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	target TEXT NOT NULL,
	library TEXT NOT NULL CHECK (library IN ('rocblas', 'hipblaslt')),
	lib_path TEXT NOT NULL,
	lib_digest TEXT NOT NULL,
	arch TEXT NOT NULL,
	device TEXT NOT NULL,
	compute_units INTEGER NOT NULL DEFAULT 0,
	driver TEXT NOT NULL,
	path TEXT NOT NULL,
	entries INTEGER NOT NULL DEFAULT 0,
	state TEXT NOT NULL CHECK (state IN ('live', 'written', 'withdrawn', 'off',
		'unsupported')),
	variable TEXT,
	detail TEXT,
	updated_ms INTEGER NOT NULL,
	UNIQUE (target, library)
);
INSERT INTO tune_override VALUES(1,'sdk-1','rocblas','/opt/rocm-6.1.2/lib/rocblas/library','ab12','gfx1100','AMD Radeon RX 7900 XTX',48,'HIP driver 60342000','/var/lib/rocmd/tune/sdk-1/rocblas-override.csv',3,'live','ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH',NULL,1717005000000);
INSERT INTO tune_override VALUES(2,'sdk-1','hipblaslt','/opt/rocm-6.1.2/lib/hipblaslt/library','cd34','gfx1100','AMD Radeon RX 7900 XTX',48,'HIP driver 60342000','/var/lib/rocmd/tune/sdk-1/hipblaslt-override.txt',0,'withdrawn',NULL,'{"why": "a deploy"}',1717005100000);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('event',6);
INSERT INTO sqlite_sequence VALUES('daemon_run',3);
INSERT INTO sqlite_sequence VALUES('tune_job',3);
INSERT INTO sqlite_sequence VALUES('tune_eval',10);
INSERT INTO sqlite_sequence VALUES('package',3);
INSERT INTO sqlite_sequence VALUES('sdk',3);
INSERT INTO sqlite_sequence VALUES('sdk_library',3);
INSERT INTO sqlite_sequence VALUES('gpu',2);
INSERT INTO sqlite_sequence VALUES('target',3);
INSERT INTO sqlite_sequence VALUES('deployment',4);
INSERT INTO sqlite_sequence VALUES('backup',2);
INSERT INTO sqlite_sequence VALUES('deploy_history',8);
INSERT INTO sqlite_sequence VALUES('tune_queue',7);
INSERT INTO sqlite_sequence VALUES('tune_override',2);
CREATE INDEX event_kind ON event(kind);
CREATE INDEX package_file_sha256 ON package_file(sha256);
CREATE UNIQUE INDEX sdk_library_current ON sdk_library(sdk_id) WHERE current = 1;
CREATE UNIQUE INDEX deployment_live ON deployment(target_id) WHERE state = 'live';
CREATE INDEX deployment_package ON deployment(package_id);
CREATE INDEX deploy_history_target ON deploy_history(target_id, id);
CREATE INDEX tune_queue_state ON tune_queue(state);
CREATE UNIQUE INDEX tune_queue_live ON tune_queue(backend, target, arch, device, sdk,
	driver, dtype, trans, m, n, k, batch, lda, ldb, ldc, stride_a, stride_b, stride_c,
	beta) WHERE state <> 'stale';
COMMIT;
PRAGMA user_version=9;
