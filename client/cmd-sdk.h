/*
 * rocmctl's "sdk" and "gpu" command families (cmd-sdk.c): SDK discovery.
 */
#ifndef ROCMD_CMD_SDK_H
#define ROCMD_CMD_SDK_H

struct rocmd_client;

/* Runs "sdk ARGV..." / "gpu ARGV..."; connects through SOCKET (NULL: the
 * default) into *CLIENT when it is NULL, which the caller closes. Returns the
 * exit code. */
int rocmctl_sdk(struct rocmd_client **client, const char *socket, int json, int argc, char **argv);
int rocmctl_gpu(struct rocmd_client **client, const char *socket, int json, int argc, char **argv);

#endif
