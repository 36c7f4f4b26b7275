/*
 * The idle monitor's Linux signals (see idle.h).
 *
 * User input. Input devices are read directly: every /dev/input/event* is
 * opened read-only and non-blocking and polled on the loop (uv_poll); the
 * events are read and dropped (no EVIOCGRAB, so the desktop still gets every
 * one: evdev hands each event to every reader). This was chosen over the
 * device nodes' atime or inotify IN_ACCESS because those only move when some
 * other process reads the device: a uinput device with no compositor reading
 * it, or a relatime mount, never shows activity that way, and neither wakes
 * us the moment a key is pressed, which yielding the GPU within 100 ms needs.
 * New devices (hot-plug, a uinput device created later) are found through an
 * inotify watch on the folder. Devices are open only while the scheduler
 * watches (tuning is wanted), so an idle daemon is not woken by typing.
 * Where /dev/input/eventN is a FIFO (tests without /dev/uinput) it is opened
 * read-write, so that it never reports a hang-up when its writer leaves.
 *
 * logind's IdleHint (org.freedesktop.login1.Manager IdleHint and
 * IdleSinceHint) is asked through sd-bus, loaded with dlopen on first use so
 * an idle daemon carries no libsystemd. When IdleSinceHint is 0 and the hint is
 * off, no session has ever set it (a console or a server): it is skipped.
 * It is only consulted for the machine itself, not under --root.
 *
 * Power: every /sys/class/power_supply entry that is not a peripheral's
 * (scope "Device"): a Mains or USB supply that is online means AC; batteries
 * without an online supply mean battery; no entry at all means a desktop, on
 * AC. GPU users: the entries of /sys/class/kfd/kfd/proc (one per process
 * holding the KFD), less rocmd itself and its children (the tuner's isolated
 * evaluator). Load: the first field of /proc/loadavg.
 */
#include "idle.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "daemon/sdk/sysroot.h"

#define MAX_PATH 1024

struct input_dev {
	uv_poll_t poll; /* first: the handle's data is the device */
	struct rocmd_idle *m;
	struct input_dev *next;
	int fd;
	dev_t rdev;
	ino_t ino;
	char path[MAX_PATH + 320];
};

struct rocmd_idle {
	uv_loop_t *loop;
	char root[MAX_PATH]; /* "" for the machine */
	rocmd_idle_activity_fn cb;
	void *ctx;
	int watching;
	uint64_t last_input_ns;
	struct input_dev *devs;
	int ndevs;
	uv_fs_event_t dirwatch;
	int dir_active;
	int handles; /* open handles (devices, the folder watch) */
	int closing;
	/* logind through sd-bus, loaded on first use */
	int bus_tried;
	void *libsystemd;
	sd_bus *bus;
	int (*bus_open_system)(sd_bus **);
	int (*bus_get_property_trivial)(sd_bus *, const char *, const char *, const char *,
	                                const char *, sd_bus_error *, char, void *);
	void (*bus_error_free)(sd_bus_error *);
	sd_bus *(*bus_flush_close_unref)(sd_bus *);
};

static void
sys_path(const struct rocmd_idle *m, const char *sys, char *out, size_t len)
{
	if (rocmd_sysroot_map(m->root[0] ? m->root : NULL, sys, out, len) < 0)
		snprintf(out, len, "%s", sys);
}

static void
maybe_free(struct rocmd_idle *m)
{
	if (m->closing && m->handles == 0) {
		if (m->bus != NULL)
			m->bus_flush_close_unref(m->bus);
		if (m->libsystemd != NULL)
			dlclose(m->libsystemd);
		free(m);
	}
}

static void
on_dev_closed(uv_handle_t *h)
{
	struct input_dev *d = h->data;
	struct rocmd_idle *m = d->m;

	close(d->fd);
	free(d);
	m->handles--;
	maybe_free(m);
}

static void
dev_close(struct input_dev *d)
{
	struct rocmd_idle *m = d->m;

	for (struct input_dev **pp = &m->devs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	m->ndevs--;
	uv_poll_stop(&d->poll);
	uv_close((uv_handle_t *)&d->poll, on_dev_closed);
}

static void
on_input(uv_poll_t *h, int status, int events)
{
	struct input_dev *d = h->data;
	struct rocmd_idle *m = d->m;
	struct input_event ev[32];
	int64_t event_us = 0;
	int got = 0;
	ssize_t n;

	for (;;) {
		n = read(d->fd, ev, sizeof(ev));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (size_t i = 0; i < (size_t)n / sizeof(ev[0]); i++) {
			event_us = (int64_t)ev[i].input_event_sec * 1000000 +
			           (int64_t)ev[i].input_event_usec;
			got = 1;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		log_info("idle: input device %s gone: %s", d->path, strerror(errno));
		dev_close(d);
	} else if (status < 0) {
		log_info("idle: input device %s: %s", d->path, uv_strerror(status));
		dev_close(d);
	}
	if (got) {
		m->last_input_ns = uv_hrtime();
		if (m->cb != NULL)
			m->cb(m->ctx, m->last_input_ns, event_us);
	}
}

static void
dev_open(struct rocmd_idle *m, const char *path)
{
	struct input_dev *d;
	struct stat st;
	int fd, flags = O_RDONLY;

	if (stat(path, &st) < 0)
		return;
	for (d = m->devs; d != NULL; d = d->next)
		if (d->ino == st.st_ino && d->rdev == st.st_rdev)
			return;
	if (S_ISFIFO(st.st_mode))
		flags = O_RDWR;
	else if (!S_ISCHR(st.st_mode))
		return;
	fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		log_debug("idle: cannot open %s: %s", path, strerror(errno));
		return;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL || uv_poll_init(m->loop, &d->poll, fd) < 0) {
		free(d);
		close(fd);
		return;
	}
	d->poll.data = d;
	d->m = m;
	d->fd = fd;
	d->ino = st.st_ino;
	d->rdev = st.st_rdev;
	snprintf(d->path, sizeof(d->path), "%s", path);
	d->next = m->devs;
	m->devs = d;
	m->ndevs++;
	m->handles++;
	uv_poll_start(&d->poll, UV_READABLE | UV_DISCONNECT, on_input);
	log_debug("idle: watching input device %s", path);
}

static void
scan_devices(struct rocmd_idle *m)
{
	char dir[MAX_PATH], path[MAX_PATH + 300];
	struct dirent *e;
	DIR *dp;

	sys_path(m, "/dev/input", dir, sizeof(dir));
	dp = opendir(dir);
	if (dp == NULL)
		return;
	while ((e = readdir(dp)) != NULL) {
		if (strncmp(e->d_name, "event", 5) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		dev_open(m, path);
	}
	closedir(dp);
}

static void
on_dir_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct rocmd_idle *m = h->data;

	if (m->watching)
		scan_devices(m);
}

static void
on_dir_closed(uv_handle_t *h)
{
	struct rocmd_idle *m = h->data;

	m->handles--;
	maybe_free(m);
}

int
rocmd_idle_open(uv_loop_t *loop, const char *root, rocmd_idle_activity_fn cb, void *ctx,
                struct rocmd_idle **out, char *why, size_t whylen)
{
	struct rocmd_idle *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (m == NULL)
		return ROCMD_ENOMEM;
	m->loop = loop;
	snprintf(m->root, sizeof(m->root), "%s", root != NULL && strcmp(root, "/") ? root : "");
	m->cb = cb;
	m->ctx = ctx;
	m->last_input_ns = uv_hrtime();
	uv_fs_event_init(loop, &m->dirwatch);
	m->dirwatch.data = m;
	m->handles = 1;
	*out = m;
	return 0;
}

void
rocmd_idle_watch(struct rocmd_idle *m, int on)
{
	char dir[MAX_PATH];

	if (m == NULL || m->closing || on == m->watching)
		return;
	m->watching = on;
	if (on) {
		m->last_input_ns = uv_hrtime();
		sys_path(m, "/dev/input", dir, sizeof(dir));
		if (uv_fs_event_start(&m->dirwatch, on_dir_event, dir, 0) == 0)
			m->dir_active = 1;
		scan_devices(m);
		log_info("idle: watching %d input device(s) under %s", m->ndevs, dir);
		return;
	}
	if (m->dir_active)
		uv_fs_event_stop(&m->dirwatch);
	m->dir_active = 0;
	while (m->devs != NULL)
		dev_close(m->devs);
}

/* ---- logind ---- */

static int
bus_load(struct rocmd_idle *m)
{
	if (m->bus_tried)
		return m->libsystemd != NULL ? 0 : -1;
	m->bus_tried = 1;
	m->libsystemd = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (m->libsystemd == NULL) {
		log_info("idle: logind not used: %s", dlerror());
		return -1;
	}
	*(void **)&m->bus_open_system = dlsym(m->libsystemd, "sd_bus_open_system");
	*(void **)&m->bus_get_property_trivial =
	    dlsym(m->libsystemd, "sd_bus_get_property_trivial");
	*(void **)&m->bus_error_free = dlsym(m->libsystemd, "sd_bus_error_free");
	*(void **)&m->bus_flush_close_unref = dlsym(m->libsystemd, "sd_bus_flush_close_unref");
	if (m->bus_open_system == NULL || m->bus_get_property_trivial == NULL ||
	    m->bus_error_free == NULL || m->bus_flush_close_unref == NULL) {
		log_info("idle: logind not used: libsystemd.so.0 lacks sd-bus");
		dlclose(m->libsystemd);
		m->libsystemd = NULL;
		return -1;
	}
	return 0;
}

static int
bus_get(struct rocmd_idle *m, const char *member, char type, void *val)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	int rc;

	rc =
	    m->bus_get_property_trivial(m->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
	                                "org.freedesktop.login1.Manager", member, &err, type, val);
	m->bus_error_free(&err);
	return rc;
}

/* logind's hint: 1 idle (and *SINCE_S seconds ago), 0 active, -1 not set by anyone. */
static int
logind_idle(struct rocmd_idle *m, double *since_s)
{
	uint64_t since_us = 0;
	int hint = 0;
	struct timespec ts;

	if (m->root[0] != '\0' || bus_load(m) < 0)
		return -1;
	if (m->bus == NULL && m->bus_open_system(&m->bus) < 0) {
		m->bus = NULL;
		return -1;
	}
	if (bus_get(m, "IdleHint", 'b', &hint) < 0 ||
	    bus_get(m, "IdleSinceHint", 't', &since_us) < 0) {
		m->bus_flush_close_unref(m->bus);
		m->bus = NULL;
		return -1;
	}
	if (!hint && since_us == 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	*since_s = since_us > 0 ? ((double)ts.tv_sec + ts.tv_nsec / 1e9) - since_us / 1e6 : 0;
	if (*since_s < 0)
		*since_s = 0;
	return hint ? 1 : 0;
}

/* ---- sysfs and procfs ---- */

static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (f == NULL)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void
read_power(struct rocmd_idle *m, struct rocmd_idle_signals *s)
{
	char dir[MAX_PATH], path[MAX_PATH + 300], val[64], online_name[64] = "", bat[64] = "";
	int mains = 0, online = 0, batteries = 0;
	struct dirent *e;
	DIR *dp;

	sys_path(m, "/sys/class/power_supply", dir, sizeof(dir));
	dp = opendir(dir);
	if (dp != NULL) {
		while ((e = readdir(dp)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/scope", dir, e->d_name);
			if (read_line(path, val, sizeof(val)) == 0 && !strcmp(val, "Device"))
				continue;
			snprintf(path, sizeof(path), "%s/%s/type", dir, e->d_name);
			if (read_line(path, val, sizeof(val)) < 0)
				continue;
			if (!strcmp(val, "Battery")) {
				batteries++;
				snprintf(bat, sizeof(bat), "%.40s", e->d_name);
				continue;
			}
			if (strcmp(val, "Mains") && strncmp(val, "USB", 3))
				continue;
			mains++;
			snprintf(path, sizeof(path), "%s/%s/online", dir, e->d_name);
			if (read_line(path, val, sizeof(val)) == 0 && atoi(val) == 1 && !online) {
				online = 1;
				snprintf(online_name, sizeof(online_name), "%.40s", e->d_name);
			}
		}
		closedir(dp);
	}
	if (online) {
		s->ac = 1;
		snprintf(s->power, sizeof(s->power), "%s online", online_name);
	} else if (batteries > 0) {
		s->ac = 0;
		snprintf(s->power, sizeof(s->power), "battery %s, no mains supply online", bat);
	} else if (mains > 0) {
		s->ac = 1;
		snprintf(s->power, sizeof(s->power), "mains supply without state, no battery");
	} else {
		s->ac = 1;
		snprintf(s->power, sizeof(s->power), "no power supply listed (desktop)");
	}
}

/* The parent of PID from /proc (the machine's, also under --root: pids are real). */
static long
parent_of(long pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (read_line(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (p == NULL)
		return -1;
	return strtol(p + 3, NULL, 10); /* ") S PPID" */
}

static void
read_gpu_users(struct rocmd_idle *m, struct rocmd_idle_signals *s)
{
	char dir[MAX_PATH];
	long self = (long)getpid(), pid;
	struct dirent *e;
	char *end;
	DIR *dp;

	sys_path(m, "/sys/class/kfd/kfd/proc", dir, sizeof(dir));
	dp = opendir(dir);
	if (dp == NULL) {
		s->gpu_users = -1;
		return;
	}
	s->gpu_users = 0;
	while ((e = readdir(dp)) != NULL) {
		pid = strtol(e->d_name, &end, 10);
		if (e->d_name[0] == '.' || *end != '\0' || pid <= 0)
			continue;
		if (pid == self || parent_of(pid) == self)
			continue;
		s->gpu_users++;
	}
	closedir(dp);
}

static void
read_load(struct rocmd_idle *m, struct rocmd_idle_signals *s)
{
	char path[MAX_PATH], buf[128];
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	s->ncpu = n > 0 ? (int)n : 1;
	s->load1 = -1;
	sys_path(m, "/proc/loadavg", path, sizeof(path));
	if (read_line(path, buf, sizeof(buf)) < 0 &&
	    read_line("/proc/loadavg", buf, sizeof(buf)) < 0)
		return;
	s->load1 = strtod(buf, NULL);
}

void
rocmd_idle_sample(struct rocmd_idle *m, struct rocmd_idle_signals *s)
{
	double evdev_s = -1, logind_s = 0;

	memset(s, 0, sizeof(*s));
	s->background_ok = -1;
	if (m->watching)
		evdev_s = (double)(uv_hrtime() - m->last_input_ns) / 1e9;
	s->input_devices = m->ndevs;
	s->logind_idle = logind_idle(m, &logind_s);
	if (s->logind_idle >= 0) {
		double l = s->logind_idle ? logind_s : 0;

		snprintf(s->input_source, sizeof(s->input_source), "logind+evdev");
		s->input_idle_s = evdev_s >= 0 && evdev_s < l ? evdev_s : l;
	} else if (m->watching && m->ndevs > 0) {
		snprintf(s->input_source, sizeof(s->input_source), "evdev");
		s->input_idle_s = evdev_s;
	} else {
		snprintf(s->input_source, sizeof(s->input_source), "none");
		/* No device to watch: time since watching began still counts, so
		 * idle_s applies from the moment tuning became wanted. */
		s->input_idle_s = evdev_s;
	}
	read_power(m, s);
	read_gpu_users(m, s);
	read_load(m, s);
}

void
rocmd_idle_close(struct rocmd_idle *m)
{
	if (m == NULL || m->closing)
		return;
	rocmd_idle_watch(m, 0);
	m->closing = 1;
	uv_close((uv_handle_t *)&m->dirwatch, on_dir_closed);
}

int
rocmd_idle_report(struct rocmd_idle *m, long session, int64_t idle_ms, char *why, size_t whylen)
{
	(void)m;
	(void)session;
	(void)idle_ms;
	snprintf(why, whylen, "rocmd reads input idleness itself here (evdev and logind)");
	return ROCMD_EUNSUPPORTED;
}
