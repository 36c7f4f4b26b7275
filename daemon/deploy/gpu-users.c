/*
 * What both platforms' holder lists share (gpu-users.h): building the list
 * (each pid once) and the one-line description the errors and events carry.
 */
#include "gpu-users.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

int
rocmd_gpu_users_add(struct rocmd_gpu_users *u, long pid, const char *what,
                    struct rocmd_gpu_user **added)
{
	struct rocmd_gpu_user *n;

	*added = NULL;
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].pid == pid)
			return 0;
	n = realloc(u->v, (u->n + 1) * sizeof(*u->v));
	if (n == NULL)
		return ROCMD_ENOMEM;
	u->v = n;
	n = &u->v[u->n++];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	snprintf(n->name, sizeof(n->name), "?");
	snprintf(n->what, sizeof(n->what), "%s", what);
	*added = n;
	return 0;
}

void
rocmd_gpu_users_free(struct rocmd_gpu_users *u)
{
	free(u->v);
	u->v = NULL;
	u->n = 0;
}

void
rocmd_gpu_users_describe(const struct rocmd_gpu_users *u, char *out, size_t outlen)
{
	size_t len = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	for (size_t i = 0; i < u->n && len < outlen; i++) {
		int n = snprintf(out + len, outlen - len, "%s%ld (%s: %s)", i > 0 ? ", " : "",
		                 u->v[i].pid, u->v[i].name, u->v[i].what);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}
