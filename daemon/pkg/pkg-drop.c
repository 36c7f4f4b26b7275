/*
 * The drop folder (<state>/drop), watched with uv_fs_event: an archive put
 * there is imported once its size and mtime stayed the same for two scans a
 * second apart, then moved to drop/imported/ or drop/refused/ (with a .why
 * file), and the outcome is an event (pkg-jobs.c). Nothing scans while the
 * folder is quiet.
 */
#include "pkg-service.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "daemon/core/server.h"

#define DROP_SCAN_MS 1000

struct pkg_drop_file {
	struct pkg_drop_file *next;
	char *name;
	int64_t size, mtime_ns;
	int stable; /* scans without change */
	int queued;
};

void
rocmd_pkg_drop_done(struct rocmd_pkg_service *ps, const char *name, int ok, const char *why)
{
	char from[4096 + 256], to[4096 + 300], dir[4096 + 32];
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", ps->drop, ok ? "imported" : "refused");
	rocmd_paths_mkdir_p(dir, 0755);
	snprintf(from, sizeof(from), "%s/%s", ps->drop, name);
	snprintf(to, sizeof(to), "%s/%s", dir, name);
	if ((rc = rocmd_fs_rename(from, to)) < 0) {
		/* Left where it is, and still marked queued: not imported again in a loop. */
		log_warn("drop folder: cannot move %s to %s: %s", from, to, rocmd_strerror(rc));
		return;
	}
	if (!ok) {
		int fd;
		snprintf(to, sizeof(to), "%s/%s.why", dir, name);
		fd = rocmd_fs_open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			rocmd_fs_write_all(fd, why, strlen(why));
			rocmd_fs_write_all(fd, "\n", 1);
			rocmd_fs_close(fd);
		}
	}
	for (struct pkg_drop_file **pp = &ps->drops; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct pkg_drop_file *d = *pp;
			*pp = d->next;
			free(d->name);
			free(d);
			break;
		}
}

static int
is_archive_name(const char *name)
{
	static const char *const exts[] = {".7z",      ".zip",    ".tar", ".tar.gz",
	                                   ".tgz",     ".tar.xz", ".txz", ".tar.bz2",
	                                   ".tar.zst", ".rar",    NULL};
	size_t n = strlen(name);

	if (name[0] == '.')
		return 0;
	for (int i = 0; exts[i] != NULL; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && strcasecmp(name + n - e, exts[i]) == 0)
			return 1;
	}
	return 0;
}

static void
drop_scan(struct rocmd_pkg_service *ps)
{
	struct rocmd_dir *d = rocmd_dir_open(ps->drop);
	struct rocmd_dirent *de;
	int pending = 0;

	if (d == NULL)
		return;
	while ((de = rocmd_dir_read(d)) != NULL) {
		char path[4096 + 1024];
		struct rocmd_fsinfo st;
		struct pkg_drop_file *f;
		int64_t mt;

		/* A link is never followed: only files put there are imported. */
		snprintf(path, sizeof(path), "%s/%s", ps->drop, de->d_name);
		if (!is_archive_name(de->d_name) || rocmd_fsinfo_get(path, 0, &st) < 0 ||
		    st.type != ROCMD_FS_FILE)
			continue;
		mt = st.mtime_ns;
		for (f = ps->drops; f != NULL && strcmp(f->name, de->d_name) != 0; f = f->next)
			;
		if (f == NULL) {
			f = calloc(1, sizeof(*f));
			if (f == NULL || (f->name = strdup(de->d_name)) == NULL) {
				free(f);
				continue;
			}
			f->size = -1;
			f->next = ps->drops;
			ps->drops = f;
		}
		if (f->queued)
			continue;
		if (f->size == (int64_t)st.size && f->mtime_ns == mt) {
			f->stable++;
		} else {
			f->size = (int64_t)st.size;
			f->mtime_ns = mt;
			f->stable = 0;
		}
		if (f->stable >= 2) {
			char src[4096 + 1024];
			snprintf(src, sizeof(src), "%s/%s", ps->drop, f->name);
			if (rocmd_pkg_queue_import(ps, src, f->name, NULL, NULL, NULL) < 0)
				continue;
			f->queued = 1;
			log_info("drop folder: importing %s", f->name);
		} else {
			pending = 1;
		}
	}
	rocmd_dir_close(d);
	if (!pending)
		uv_timer_stop(&ps->drop_timer);
}

static void
on_drop_timer(uv_timer_t *t)
{
	drop_scan(t->data);
}

static void
on_drop_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct rocmd_pkg_service *ps = h->data;

	if (status < 0 || ps->srv->shutting_down)
		return;
	if (!uv_is_active((uv_handle_t *)&ps->drop_timer))
		uv_timer_start(&ps->drop_timer, on_drop_timer, DROP_SCAN_MS, DROP_SCAN_MS);
}

void
rocmd_pkg_drop_start(struct rocmd_pkg_service *ps)
{
	struct rocmd_server *srv = ps->srv;
	int rc;

	uv_timer_init(srv->loop, &ps->drop_timer);
	ps->drop_timer.data = ps;
	uv_unref((uv_handle_t *)&ps->drop_timer);
	uv_fs_event_init(srv->loop, &ps->drop_ev);
	ps->drop_ev.data = ps;
	if (!srv->cfg->store_drop_folder)
		return;
	rc = rocmd_paths_mkdir_p(ps->drop, 0755);
	if (rc == 0)
		rc = uv_fs_event_start(&ps->drop_ev, on_drop_event, ps->drop, 0);
	if (rc < 0) {
		log_warn("drop folder %s is not watched: %s", ps->drop, rocmd_strerror(rc));
		return;
	}
	ps->watching = 1;
	uv_unref((uv_handle_t *)&ps->drop_ev);
	/* Archives left there while the daemon was down. */
	uv_timer_start(&ps->drop_timer, on_drop_timer, DROP_SCAN_MS, DROP_SCAN_MS);
}

void
rocmd_pkg_drop_close(struct rocmd_pkg_service *ps)
{
	uv_close((uv_handle_t *)&ps->drop_timer, NULL);
	uv_close((uv_handle_t *)&ps->drop_ev, NULL);
	while (ps->drops != NULL) {
		struct pkg_drop_file *d = ps->drops;
		ps->drops = d->next;
		free(d->name);
		free(d);
	}
}
