/*
 * Watching SDK folders: see sdk.h. One uv_fs_event per folder (inotify on
 * Linux, ReadDirectoryChangesW on Windows), reconciled with the list each
 * scan returns; a folder that does not exist yet is covered by watching its
 * nearest existing ancestor under the root, so /opt appearing in an empty
 * sandbox is noticed too. Every event restarts the debounce timer and adds
 * the changed path to the dirty list the settle check walks.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/log.h"
#include "sdk-internal.h"
#include "server.h"
#include "sysroot.h"

#define MAX_DIRTY 64
#define SETTLE_MAX_ENTRIES 200000
#define SETTLE_MAX_DEPTH 32

static void
on_watch_close(uv_handle_t *h)
{
	struct sdk_watch *w = h->data;

	free(w->host);
	free(w);
}

int
rocmd_sdk_is_suppressed(struct rocmd_sdk *m, const char *host_path)
{
	int64_t now = rocmd_now_ms();
	struct sdk_suppress **pp = &m->suppress;

	while (*pp != NULL) {
		struct sdk_suppress *s = *pp;
		size_t n = strlen(s->host);
		if (s->until_ms != 0 && s->until_ms < now) {
			/* Grace over: forget it. */
			*pp = s->next;
			free(s->host);
			free(s);
			continue;
		}
		if (strncmp(host_path, s->host, n) == 0 &&
		    (host_path[n] == '\0' || host_path[n] == '/'))
			return 1;
		/* An event on a parent naming the suppressed folder itself. */
		if (strncmp(s->host, host_path, strlen(host_path)) == 0 &&
		    s->host[strlen(host_path)] == '/' &&
		    strchr(s->host + strlen(host_path) + 1, '/') == NULL)
			return 1;
		pp = &s->next;
	}
	return 0;
}

static void
add_dirty(struct rocmd_sdk *m, const char *path)
{
	char **grown;

	for (size_t i = 0; i < m->ndirty; i++) {
		size_t n = strlen(m->dirty[i]);
		/* Already covered by a dirty folder above it. */
		if (strncmp(path, m->dirty[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return;
	}
	if (m->ndirty >= MAX_DIRTY)
		return; /* enough to tell whether things are still moving */
	grown = realloc(m->dirty, (m->ndirty + 2) * sizeof(*grown));
	if (grown == NULL)
		return;
	m->dirty = grown;
	m->dirty[m->ndirty] = strdup(path);
	if (m->dirty[m->ndirty] != NULL)
		m->ndirty++;
	m->dirty[m->ndirty] = NULL;
}

static void
on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct sdk_watch *w = h->data;
	struct rocmd_sdk *m = w->m;
	char path[PATH_MAX];

	if (m->stopping)
		return;
	if (status < 0) {
		log_info("watching %s: %s", w->host, uv_strerror(status));
		return;
	}
	if (filename != NULL && filename[0] != '\0')
		snprintf(path, sizeof(path), "%s/%s", w->host, filename);
	else
		snprintf(path, sizeof(path), "%s", w->host);
	if (rocmd_sdk_is_suppressed(m, path))
		return;
	m->events_seen++;
	add_dirty(m, path);
	/* Restart the quiet window. */
	rocmd_sdk_schedule(m, -(int)rocmd_sdk_window_ms(m));
}

static struct sdk_watch *
find_watch(struct rocmd_sdk *m, const char *host)
{
	for (struct sdk_watch *w = m->watches; w != NULL; w = w->next)
		if (strcmp(w->host, host) == 0)
			return w;
	return NULL;
}

static void
want(struct rocmd_sdk *m, const char *host)
{
	struct sdk_watch *w = find_watch(m, host);
	struct stat st;
	int rc;

	if (w != NULL) {
		w->wanted = 1;
		return;
	}
	if (stat(host, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	w = calloc(1, sizeof(*w));
	if (w == NULL || (w->host = strdup(host)) == NULL) {
		free(w);
		return;
	}
	w->m = m;
	w->wanted = 1;
	w->h.data = w;
	uv_fs_event_init(m->srv->loop, &w->h);
	rc = uv_fs_event_start(&w->h, on_fs_event, host, 0);
	if (rc != 0) {
		log_info("cannot watch %s: %s", host, uv_strerror(rc));
		uv_close((uv_handle_t *)&w->h, on_watch_close);
		return;
	}
	w->next = m->watches;
	m->watches = w;
	m->nwatches++;
}

/* The folder to watch for system path SYS: itself, or its nearest existing
 * ancestor inside the root. */
static void
want_sys(struct rocmd_sdk *m, const char *sys)
{
	char host[PATH_MAX];
	size_t rootlen = strlen(m->root);
	struct stat st;

	if (rocmd_sysroot_map(m->root, sys, host, sizeof(host)) < 0)
		return;
	while (stat(host, &st) != 0 || !S_ISDIR(st.st_mode)) {
		char *slash = strrchr(host, '/');
		if (slash == NULL || (size_t)(slash - host) < rootlen)
			return;
		if (slash == host) {
			host[1] = '\0';
			break;
		}
		*slash = '\0';
	}
	want(m, host);
}

void
rocmd_sdk_watch_update(struct rocmd_sdk *m, char *const *sys_paths)
{
	struct sdk_watch **pp;

	if (m->stopping)
		return;
	for (struct sdk_watch *w = m->watches; w != NULL; w = w->next)
		w->wanted = 0;
	for (size_t i = 0; sys_paths != NULL && sys_paths[i] != NULL; i++)
		want_sys(m, sys_paths[i]);
	pp = &m->watches;
	while (*pp != NULL) {
		struct sdk_watch *w = *pp;
		if (w->wanted) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		m->nwatches--;
		uv_close((uv_handle_t *)&w->h, on_watch_close);
	}
}

void
rocmd_sdk_watch_close_all(struct rocmd_sdk *m)
{
	while (m->watches != NULL) {
		struct sdk_watch *w = m->watches;
		m->watches = w->next;
		uv_close((uv_handle_t *)&w->h, on_watch_close);
	}
	m->nwatches = 0;
}

/* ---- the settle check (worker thread) ---- */

struct settle {
	int64_t newest_ns;
	size_t entries;
};

static void
note(struct settle *s, const struct stat *st)
{
	int64_t c = (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;

	if (c > s->newest_ns)
		s->newest_ns = c;
	s->entries++;
}

static void
settle_walk(struct settle *s, const char *path, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (s->entries >= SETTLE_MAX_ENTRIES || lstat(path, &st) != 0)
		return;
	note(s, &st);
	if (!S_ISDIR(st.st_mode) || depth >= SETTLE_MAX_DEPTH)
		return;
	d = opendir(path);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && s->entries < SETTLE_MAX_ENTRIES) {
		char child[PATH_MAX];
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
		settle_walk(s, child, depth + 1);
	}
	closedir(d);
}

int64_t
rocmd_sdk_settle_check(char *const *paths, int64_t window_ms)
{
	struct settle s = {0};
	struct timespec now;
	int64_t now_ns, quiet_ms;

	for (size_t i = 0; paths != NULL && paths[i] != NULL; i++)
		settle_walk(&s, paths[i], 0);
	if (s.entries == 0)
		return 0; /* all gone: a removal, nothing to wait for */
	clock_gettime(CLOCK_REALTIME, &now);
	now_ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	quiet_ms = (now_ns - s.newest_ns) / 1000000;
	if (quiet_ms >= window_ms)
		return 0;
	return window_ms - quiet_ms;
}
