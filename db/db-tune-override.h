/*
 * The vendor overrides rocmd wrote (table tune_override, migration 9): per
 * deploy target and library (rocBLAS, hipBLASLt), the override file, what it
 * is keyed to (the library's content digest, the GPU, the driver), how many
 * entries it holds and its state:
 *
 *   live         written and named by the machine's environment variable
 *   written      written, but another target holds the machine-wide variable:
 *                an application using this target's library must be pointed at
 *                the file itself
 *   withdrawn    emptied before the library changed (deploy, rollback, SDK or
 *                driver change), until a re-tune writes it again
 *   off          switched off by `rocmctl tune off`
 *   unsupported  the library does not read an override (its binary lacks the
 *                variable's name)
 *
 * The files are the truth programs see (daemon/tune/tune-override.c); these
 * rows say what rocmd believes and are what `rocmctl tune results` shows. Loop
 * thread only, on the daemon's connection.
 */
#ifndef ROCMD_DB_TUNE_OVERRIDE_H
#define ROCMD_DB_TUNE_OVERRIDE_H

#include <stdint.h>

struct rocmd_db;
struct rocmd_tune_override_db;

struct rocmd_tune_override {
	int64_t id;
	char target[64];
	char library[16]; /* "rocblas", "hipblaslt" */
	char lib_path[512];
	char lib_digest[65];
	char arch[32];
	char device[128];
	int64_t compute_units;
	char driver[64];
	char path[1024]; /* the override file */
	int64_t entries;
	char state[16];
	char variable[64]; /* the environment variable that names it, "" none */
	char detail[256];
	int64_t updated_ms;
};

int rocmd_tune_override_attach(struct rocmd_db *main, struct rocmd_tune_override_db **out);
void rocmd_tune_override_detach(struct rocmd_tune_override_db *db);
const char *rocmd_tune_override_errmsg(struct rocmd_tune_override_db *db);

/* Inserts or replaces the row of O->target and O->library. */
int rocmd_tune_override_put(struct rocmd_tune_override_db *db,
                            const struct rocmd_tune_override *o, int64_t now);
/* The row of TARGET and LIBRARY; ROCMD_ENOTFOUND. */
int rocmd_tune_override_get(struct rocmd_tune_override_db *db, const char *target,
                            const char *library, struct rocmd_tune_override *o);
/* Every row, by target; CB's non-zero return stops the walk and is returned. */
int rocmd_tune_override_list(struct rocmd_tune_override_db *db,
                             int (*cb)(const struct rocmd_tune_override *o, void *ctx),
                             void *ctx);

#endif
