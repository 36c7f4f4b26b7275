/*
 * The package store inside the daemon: the pkg.* methods, the job queue that
 * runs imports, verification and garbage collection on libuv's thread pool
 * one at a time, and the drop folder watcher. rocmd_pkg_start runs once the
 * server is set up; rocmd_pkg_stop after the loop has ended.
 */
#ifndef ROCMD_PKG_METHODS_H
#define ROCMD_PKG_METHODS_H

#include <stddef.h>

#include "daemon/core/methods.h"
#include "pkg.h"

struct rocmd_server;

extern const struct rocmd_method rocmd_methods_pkg[];

/* Opens the store and its database connection, checks the configured match
 * rules, removes staging leftovers, queues a collection of orphaned objects
 * and starts watching the drop folder. WHY says what failed. */
int rocmd_pkg_start(struct rocmd_server *srv, char *why, size_t whylen);
/* Closes the watcher and the database connection; the loop must have ended
 * (no job in flight). Safe when never started. */
void rocmd_pkg_stop(void);

/* Every stored package as matching sees it (pkg.h), read from DB: for
 * pkg.match and for deploy's choice of a package. WHY says what failed. */
struct rocmd_pkg_candidates {
	struct rocmd_pkg_candidate *c;
	size_t n, cap;
};
struct rocmd_pkg_db;
int rocmd_pkg_candidates_load(struct rocmd_pkg_db *db, struct rocmd_pkg_candidates *out, char *why,
                              size_t whylen);
void rocmd_pkg_candidates_free(struct rocmd_pkg_candidates *l);

#endif
