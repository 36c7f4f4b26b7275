/*
 * The schema of rocmd's database as an ordered list of migrations. Version N
 * is reached from version N-1 by rocmd_migrations[N-1]; db.c applies each one
 * in its own BEGIN IMMEDIATE transaction together with PRAGMA user_version.
 * Never edit or renumber a migration that has shipped: databases in the field
 * were built by it. Append a new one instead, and add a fixture under
 * tests/data/ for the old version so the upgrade path stays tested.
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
};

const int rocmd_migrations_count = (int)(sizeof(rocmd_migrations) / sizeof(rocmd_migrations[0]));
