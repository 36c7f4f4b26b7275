-- A schema-version-2 rocmd database (migrations 1..2, the last "daemon runs"): `sqlite3
-- rocmd.db .dump` plus its user_version. Made by opening an empty file with
-- rocmd_db_open_with(path, rocmd_migrations, 2) (migrations 1..2 are unchanged since they
-- shipped) and inserting rows through the columns version 2 had into every table it had
-- (event, daemon_run): NULLs, JSON details, each state and outcome the CHECKs allow, ids freed
-- by deletes. tests/unit/test-db.c migrates it to the newest schema and checks that every row
-- survived. Never edit: it is history.
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
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('event',6);
INSERT INTO sqlite_sequence VALUES('daemon_run',3);
CREATE INDEX event_kind ON event(kind);
COMMIT;
PRAGMA user_version=2;
