-- A schema-version-1 rocmd database (migration 1 "event history" only), as
-- an older rocmd left it: `sqlite3 rocmd.db .dump` plus its user_version.
-- Event 3 was deleted, so AUTOINCREMENT must not hand out id 3 or 5 again.
-- tests/unit/test-db.c loads it and checks that rocmd_db_open migrates it to
-- the newest schema with every event kept. Never edit: it is history.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE event (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	time_ms INTEGER NOT NULL,
	kind TEXT NOT NULL,
	message TEXT NOT NULL,
	detail TEXT CHECK (detail IS NULL OR json_valid(detail))
);
INSERT INTO event VALUES(1,1717000000000,'daemon.start','rocmd 0.0.9 started','{"pid":412,"version":"0.0.9"}');
INSERT INTO event VALUES(2,1717000000250,'sdk.added','HIP SDK 6.1.2 found at /opt/rocm-6.1.2','{"path":"/opt/rocm-6.1.2","version":"6.1.2"}');
INSERT INTO event VALUES(4,1717000200000,'daemon.stop','rocmd stopped',NULL);
INSERT INTO event VALUES(5,1717000300000,'daemon.start','rocmd 0.0.9 started','{"pid":977,"version":"0.0.9"}');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('event',5);
CREATE INDEX event_kind ON event(kind);
COMMIT;
PRAGMA user_version=1;
