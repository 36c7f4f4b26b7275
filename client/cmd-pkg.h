/*
 * rocmctl's "pkg" command family (cmd-pkg.c): the package store.
 */
#ifndef ROCMD_CMD_PKG_H
#define ROCMD_CMD_PKG_H

struct rocmd_client;

/* Runs "pkg ARGV..."; connects through SOCKET (NULL: the default) into
 * *CLIENT when it is NULL, which the caller closes. Returns the exit code. */
int rocmctl_pkg(struct rocmd_client **client, const char *socket, int json, int argc, char **argv);

#endif
