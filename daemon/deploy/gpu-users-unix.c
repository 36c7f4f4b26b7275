/*
 * GPU holders and users of a target's files on Linux: see gpu-users.h. The
 * KFD lists each process that opened /dev/kfd as /sys/class/kfd/kfd/proc/<pid>;
 * an entry whose process is gone is ignored. File users come from
 * /proc/<pid>/maps (a loaded librocblas.so, mapped code objects) and the
 * symlinks in /proc/<pid>/fd (a library file being read). Processes we may
 * not inspect (another user's, without CAP_SYS_PTRACE) are skipped silently:
 * the KFD list still names GPU holders of every user.
 */
#include "gpu-users.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "daemon/sdk/sysroot.h"

#define KFD_PROC "/sys/class/kfd/kfd/proc"

static int
is_pid_name(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void
proc_name(long pid, char *out, size_t outlen)
{
	char path[64];
	FILE *f;

	snprintf(out, outlen, "?");
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	if (fgets(out, (int)outlen, f) == NULL)
		snprintf(out, outlen, "?");
	out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* Reads /proc/PID/stat past "pid (comm)" (comm may hold spaces and
 * parentheses): *STATE and *PPID. 0; -1 when PID is gone; 1 when its line
 * does not parse. */
static int
proc_stat(long pid, char *state, long *ppid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %c %ld", state, ppid) != 2)
		return 1;
	return 0;
}

static int
alive(long pid)
{
	char state;
	long ppid;
	int rc = proc_stat(pid, &state, &ppid);

	/* A zombie holds nothing (no GPU, no mappings, no files) until reaped. */
	return rc < 0 ? 0 : rc > 0 ? 1 : state != 'Z' && state != 'X';
}

static const char *
base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s != NULL && s[1] != '\0' ? s + 1 : p;
}

/* Adds PID once; a later reason for the same pid is dropped. */
static int
add(struct rocmd_gpu_users *u, long pid, const char *what)
{
	struct rocmd_gpu_user *n;
	int rc = rocmd_gpu_users_add(u, pid, what, &n);

	if (n != NULL)
		proc_name(pid, n->name, sizeof(n->name));
	return rc;
}

/* True when host path P is one of PATHS or inside one of them. */
static const char *
under(const char *p, const char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < npaths; i++) {
		size_t n = strlen(paths[i]);
		while (n > 1 && paths[i][n - 1] == '/')
			n--;
		if (strncmp(p, paths[i], n) == 0 && (p[n] == '\0' || p[n] == '/'))
			return p;
	}
	return NULL;
}

/*
 * True if PID is SELF or a descendant of it. rocmd's own children are not
 * users a deploy waits for: they never load the target's rocBLAS, and a
 * child caught between clone and exec still shares the daemon's mappings (a
 * TensileLibrary.dat the SDK inspection was reading: when the evaluator was
 * fork()ed, the daemon refused its own rollback, naming "rocmd: maps
 * TensileLibrary.dat").
 */
static int
ours(long pid, long self)
{
	char state;

	for (int depth = 0; depth < 16 && pid > 1; depth++) {
		if (pid == self)
			return 1;
		if (proc_stat(pid, &state, &pid) != 0)
			return 0;
	}
	return 0;
}

static int
kfd_holders(const char *root, long self, struct rocmd_gpu_users *u)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (rocmd_sysroot_map(root, KFD_PROC, dir, sizeof(dir)) < 0)
		return 0;
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		long pid;
		if (!is_pid_name(de->d_name))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (ours(pid, self) || !alive(pid))
			continue;
		rc = add(u, pid, "holds the GPU");
	}
	closedir(d);
	return rc;
}

/* Scans /proc/PID/maps for a mapping of a file under PATHS. */
static int
scan_maps(long pid, const char *const *paths, size_t npaths, struct rocmd_gpu_users *u)
{
	char path[64], line[PATH_MAX + 256], what[96];
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = strchr(line, '/');
		if (p == NULL)
			continue;
		p[strcspn(p, "\n")] = '\0';
		/* " (deleted)" follows a replaced file: it is still in use. */
		if (strlen(p) > 10 && strcmp(p + strlen(p) - 10, " (deleted)") == 0)
			p[strlen(p) - 10] = '\0';
		if (under(p, paths, npaths) != NULL) {
			snprintf(what, sizeof(what), "maps %.80s", base(p));
			rc = add(u, pid, what);
			break;
		}
	}
	fclose(f);
	return rc;
}

static int
scan_fds(long pid, const char *const *paths, size_t npaths, struct rocmd_gpu_users *u)
{
	char dir[64], link[PATH_MAX], what[96];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		ssize_t n;
		if (!is_pid_name(de->d_name))
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (link[0] == '/' && under(link, paths, npaths) != NULL) {
			snprintf(what, sizeof(what), "has %.80s open", base(link));
			rc = add(u, pid, what);
			break;
		}
	}
	closedir(d);
	return rc;
}

int
rocmd_gpu_users_find(const char *root, const char *const *paths, size_t npaths,
                     struct rocmd_gpu_users *out)
{
	long self = (long)getpid();
	struct dirent *de;
	DIR *d;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = kfd_holders(root, self, out);
	if (rc < 0 || npaths == 0)
		goto out;
	d = opendir("/proc");
	if (d == NULL)
		goto out;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		long pid;
		if (!is_pid_name(de->d_name))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (ours(pid, self))
			continue;
		rc = scan_maps(pid, paths, npaths, out);
		if (rc == 0)
			rc = scan_fds(pid, paths, npaths, out);
	}
	closedir(d);
out:
	if (rc < 0)
		rocmd_gpu_users_free(out);
	return rc;
}
