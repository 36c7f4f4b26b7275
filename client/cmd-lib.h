/*
 * rocmctl's "lib" command family (cmd-lib.c): deploy, verify, roll back and
 * inspect the rocBLAS libraries rocmd manages.
 */
#ifndef ROCMD_CMD_LIB_H
#define ROCMD_CMD_LIB_H

struct rocmd_client;

/* Runs "lib ARGV..."; connects through SOCKET (NULL: the default) into
 * *CLIENT when it is NULL, which the caller closes. Returns the exit code. */
int rocmctl_lib(struct rocmd_client **client, const char *socket, int json, int argc, char **argv);

#endif
