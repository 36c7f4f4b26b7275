/*
 * The subcommand families of rocmtune (tools/rocmtune.c) that live in their
 * own files: `rocmtune lib ...` (rocmtune-tunedlib.c), the tuned kernel library;
 * and the results store both open, or its stand-in in a build with only a C
 * compiler (a GPU box without SQLite, ROCMTUNE_NO_DB): no --db there.
 */
#ifndef ROCMD_KERNELS_ROCMTUNE_H
#define ROCMD_KERNELS_ROCMTUNE_H

#ifndef ROCMTUNE_NO_DB
#include "db/db-tune.h"
#else
#include <stdio.h>

#include "common/error.h"
#include "kernels/tune.h"

static inline int
tune_db_open(const char *path, struct tune_store *out, char *why, size_t whylen)
{
	snprintf(why, whylen, "this rocmtune was built without SQLite (ROCMTUNE_NO_DB)");
	return ROCMD_EUNSUPPORTED;
}

static inline void
tune_db_close(struct tune_store *st)
{
}
#endif

/* ARGV[0] is "lib"; returns rocmtune's exit status. */
int rocmtune_lib(int argc, char **argv);
/* `rocmtune bench-run` (rocmtune-bench.c): ARGV as main() got it. */
int rocmtune_bench_run(int argc, char **argv);

#endif
