/*
 * Watching SDK folders: see sdk.h. One uv_fs_event per folder (inotify on
 * Linux, ReadDirectoryChangesW on Windows), reconciled with the list each
 * scan returns; a folder that does not exist yet is covered by watching its
 * nearest existing ancestor under the root, so /opt appearing in an empty
 * sandbox is noticed too. Every event restarts the debounce timer and adds
 * the changed path to the dirty list the settle check walks.
 *
 * On Windows a watch covers the whole tree below its folder
 * (UV_FS_EVENT_RECURSIVE), so C:\Program Files\AMD\ROCm alone sees every
 * SDK under it: a folder already inside a watched one gets no watch of its
 * own, and an SDK elsewhere (HIP_PATH=D:\ROCm\6.2\) gets one for its root.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/fs.h"
#include "sdk-internal.h"
#include "daemon/core/server.h"
#include "sysroot.h"

#define MAX_DIRTY 64
#define SETTLE_MAX_ENTRIES 200000
#define SETTLE_MAX_DEPTH 32

/* inotify watches one folder; ReadDirectoryChangesW a whole tree. */
#ifdef _WIN32
#define WATCH_RECURSIVE 1
#else
#define WATCH_RECURSIVE 0
#endif

static int
is_dir(const char *path)
{
	struct rocmd_fsinfo st;

	return rocmd_fsinfo_get(path, 1, &st) == 0 && st.type == ROCMD_FS_DIR;
}

/* True when host path PATH is FOLDER or inside it. */
static int
is_under(const char *path, const char *folder)
{
	size_t n = strlen(folder);

	return strncmp(path, folder, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/' || (n > 0 && folder[n - 1] == '/'));
}

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
		    (host_path[n] == '\0' ||
		     (host_path[n] == '/' && (!s->flat || strchr(host_path + n + 1, '/') == NULL))))
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
	/* A recursive watch names "6.4\bin\rocblas.dll"; host paths use '/'. */
	for (char *p = path; WATCH_RECURSIVE && *p != '\0'; p++)
		if (*p == '\\')
			*p = '/';
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
	struct rocmd_fsinfo st;
	int rc;

	if (rocmd_fsinfo_get(host, 1, &st) < 0 || st.type != ROCMD_FS_DIR)
		return;
	if (w != NULL && w->dev == st.dev && w->ino == st.ino) {
		w->wanted = 1;
		return;
	}
	/* New, or the folder was replaced (a deploy swaps whole library
	 * folders): the old watch follows the old inode and is swept. */
	if (w != NULL)
		w->wanted = 0;
	w = calloc(1, sizeof(*w));
	if (w == NULL || (w->host = strdup(host)) == NULL) {
		free(w);
		return;
	}
	w->m = m;
	w->wanted = 1;
	w->dev = st.dev;
	w->ino = st.ino;
	w->h.data = w;
	uv_fs_event_init(m->srv->loop, &w->h);
	rc = uv_fs_event_start(&w->h, on_fs_event, host,
	                       WATCH_RECURSIVE ? UV_FS_EVENT_RECURSIVE : 0);
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
 * ancestor inside the root (never a whole Windows drive). Written to HOST;
 * 0 when there is none. */
static int
watch_host(struct rocmd_sdk *m, const char *sys, char *host, size_t hostlen)
{
	size_t rootlen = strlen(m->root);

	if (rocmd_sysroot_map(m->root, sys, host, hostlen) < 0)
		return 0;
	while (!is_dir(host)) {
		char *slash = strrchr(host, '/');
		if (slash == NULL || (size_t)(slash - host) < rootlen)
			return 0;
		if (slash == host) {
			host[1] = '\0';
			break;
		}
		if (slash == host + 2 && host[1] == ':')
			return 0;
		*slash = '\0';
	}
	return 1;
}

void
rocmd_sdk_watch_update(struct rocmd_sdk *m, char *const *sys_paths)
{
	struct sdk_watch **pp;

	if (m->stopping)
		return;
	size_t n = 0;
	char **hosts;

	for (struct sdk_watch *w = m->watches; w != NULL; w = w->next)
		w->wanted = 0;
	while (sys_paths != NULL && sys_paths[n] != NULL)
		n++;
	hosts = calloc(n + 1, sizeof(*hosts));
	if (hosts == NULL)
		return; /* keep the watches there are */
	for (size_t i = 0; i < n; i++) {
		char host[PATH_MAX];
		if (watch_host(m, sys_paths[i], host, sizeof(host)))
			hosts[i] = strdup(host);
	}
	for (size_t i = 0; i < n; i++) {
		int covered = 0;
		if (hosts[i] == NULL)
			continue;
		/* A recursive watch on an ancestor already sees this folder. */
		for (size_t j = 0; WATCH_RECURSIVE && j < n && !covered; j++)
			covered = j != i && hosts[j] != NULL && strcmp(hosts[i], hosts[j]) != 0 &&
			          is_under(hosts[i], hosts[j]);
		if (!covered)
			want(m, hosts[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(hosts[i]);
	free(hosts);
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
note(struct settle *s, const struct rocmd_fsinfo *st)
{
	if (st->change_ns > s->newest_ns)
		s->newest_ns = st->change_ns;
	s->entries++;
}

static void
settle_walk(struct settle *s, const char *path, int depth)
{
	struct rocmd_dirent *de;
	struct rocmd_fsinfo st;
	struct rocmd_dir *d;

	if (s->entries >= SETTLE_MAX_ENTRIES || rocmd_fsinfo_get(path, 0, &st) != 0)
		return;
	note(s, &st);
	if (st.type != ROCMD_FS_DIR || depth >= SETTLE_MAX_DEPTH)
		return;
	d = rocmd_dir_open(path);
	if (d == NULL)
		return;
	while ((de = rocmd_dir_read(d)) != NULL && s->entries < SETTLE_MAX_ENTRIES) {
		char child[PATH_MAX];
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
		settle_walk(s, child, depth + 1);
	}
	rocmd_dir_close(d);
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
