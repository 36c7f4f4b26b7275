/*
 * What rocmd itself writes into SDKs, kept from reading as SDK changes: the
 * library folders being written (rocmd_sdk_suppress_begin/_end, with a grace
 * period after) and those written since the last deep pass; and the installs
 * found since that pass, whose libraries are announced by the next.
 */
#include "sdk.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/core/server.h"
#include "sdk-internal.h"
#include "sysroot.h"

#define SUPPRESS_GRACE_MS 2000

/* Whether rocmd itself wrote library folder DIR (system path; NULL: no). */
int
sdk_is_own(struct rocmd_sdk *m, const char *dir)
{
	char h[PATH_MAX];

	if (dir == NULL || rocmd_sysroot_map(m->root, dir, h, sizeof(h)) < 0)
		return 0;
	for (size_t i = 0; i < m->nown; i++)
		if (strncmp(h, m->own[i], strlen(m->own[i])) == 0)
			return 1;
	/* A scan applied while rocmd is still writing there (or within the grace
	 * period after) sees its writes too. */
	for (const struct sdk_suppress *s = m->suppress; s != NULL; s = s->next)
		if (!s->flat && (s->until_ms == 0 || s->until_ms > rocmd_now_ms()) &&
		    strncmp(h, s->host, strlen(s->host)) == 0)
			return 1;
	return 0;
}

/* Whether PATH is an install found since the last deep pass (its library not
 * announced yet). */
int
sdk_is_fresh(struct rocmd_sdk *m, const char *path)
{
	for (size_t i = 0; i < m->nfresh; i++)
		if (strcmp(m->fresh[i], path) == 0)
			return 1;
	return 0;
}

void
sdk_add_fresh(struct rocmd_sdk *m, const char *path)
{
	char **grown = realloc(m->fresh, (m->nfresh + 1) * sizeof(*grown));

	if (grown == NULL)
		return;
	m->fresh = grown;
	m->fresh[m->nfresh] = strdup(path);
	if (m->fresh[m->nfresh] != NULL)
		m->nfresh++;
}

/* Drops the fresh installs that the deep pass SCAN has inspected. One found
 * after that pass had started stays fresh for the next, or its library would
 * never be announced (and auto-sync never hear of it). */
void
sdk_drop_fresh_inspected(struct rocmd_sdk *m, const struct rocmd_sdk_scan *scan)
{
	size_t kept = 0;

	for (size_t i = 0; i < m->nfresh; i++) {
		int seen = 0;
		for (size_t k = 0; k < scan->nsdks && !seen; k++)
			seen = strcmp(scan->sdks[k].path, m->fresh[i]) == 0;
		if (seen)
			free(m->fresh[i]);
		else
			m->fresh[kept++] = m->fresh[i];
	}
	m->nfresh = kept;
}

void
sdk_clear_fresh(struct rocmd_sdk *m)
{
	for (size_t i = 0; i < m->nfresh; i++)
		free(m->fresh[i]);
	free(m->fresh);
	m->fresh = NULL;
	m->nfresh = 0;
}

int
rocmd_sdk_suppress_begin(struct rocmd_sdk *m, const char *sys_path, int flat)
{
	struct sdk_suppress *s = calloc(1, sizeof(*s));
	char h[PATH_MAX];

	if (s == NULL)
		return ROCMD_ENOMEM;
	if (rocmd_sysroot_map(m->root, sys_path, h, sizeof(h)) < 0 ||
	    (s->host = strdup(h)) == NULL) {
		free(s);
		return ROCMD_EINVAL;
	}
	s->token = ++m->next_token;
	s->flat = flat;
	s->next = m->suppress;
	m->suppress = s;
	return s->token;
}

void
rocmd_sdk_suppress_end(struct rocmd_sdk *m, int token)
{
	for (struct sdk_suppress *s = m->suppress; s != NULL; s = s->next) {
		char **grown;
		if (s->token != token || s->until_ms != 0)
			continue;
		s->until_ms = rocmd_now_ms() + SUPPRESS_GRACE_MS;
		/* A flat one (a binary's folder) owns none of the library
		 * folders below it (hipBLASLt's beside rocBLAS's binary). */
		grown = s->flat ? NULL : realloc(m->own, (m->nown + 1) * sizeof(*grown));
		if (grown != NULL) {
			int64_t *ms = realloc(m->own_ms, (m->nown + 1) * sizeof(*ms));
			m->own = grown;
			if (ms != NULL) {
				m->own_ms = ms;
				ms[m->nown] = rocmd_now_ms();
				m->own[m->nown] = strdup(s->host);
				if (m->own[m->nown] != NULL)
					m->nown++;
			}
		}
		rocmd_sdk_schedule(m, 0);
		return;
	}
}
