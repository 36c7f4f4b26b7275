/*
 * The subcommand families of rocmtune (kernels/rocmtune.c) that live in their
 * own files: `rocmtune lib ...` (rocmtune-lib.c), the tuned kernel library.
 */
#ifndef ROCMD_KERNELS_ROCMTUNE_H
#define ROCMD_KERNELS_ROCMTUNE_H

/* ARGV[0] is "lib"; returns rocmtune's exit status. */
int rocmtune_lib(int argc, char **argv);

#endif
