/*
 * rocmctl's "tune" command family (cmd-tune.c): idle tuning.
 */
#ifndef ROCMD_CMD_TUNE_H
#define ROCMD_CMD_TUNE_H

struct rocmd_client;

/* Runs "tune ARGV..."; connects through SOCKET (NULL: the default) into
 * *CLIENT when it is NULL, which the caller closes. Returns the exit code. */
int rocmctl_tune(struct rocmd_client **client, const char *socket, int json, int argc, char **argv);

#endif
