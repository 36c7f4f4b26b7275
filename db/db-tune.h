/*
 * The tuner's results store (kernels/tune.h, struct tune_store) on rocmd's
 * SQLite database: tables tune_job (one per device + software + problem, with
 * its declared winner) and tune_eval (one row per finished evaluation), from
 * migration 3. Every evaluation is committed before the tuner starts the next
 * one, so a run killed at any instant resumes without repeating finished work.
 */
#ifndef ROCMD_DB_TUNE_H
#define ROCMD_DB_TUNE_H

#include <stddef.h>

#include "kernels/tune.h"

/*
 * Opens (creating and migrating through rocmd_db_open()) the database at PATH
 * and fills OUT. Errors as rocmd_db_open(), with a sentence in WHY.
 */
int tune_db_open(const char *path, struct tune_store *out, char *why, size_t whylen);
/* The same store on the daemon's own connection MAIN (already migrated);
 * tune_db_close frees it and leaves the connection to MAIN. Only the thread
 * that owns MAIN may call the store. */
struct rocmd_db;
int tune_db_attach(struct rocmd_db *main, struct tune_store *out);
void tune_db_close(struct tune_store *st);

#endif
