/*
 * doctor's check of running programs on Linux (doctor.h): a process that
 * mapped a target's rocBLAS binary before it was replaced (by a deploy, a
 * rollback or an SDK update) keeps running the old one until it restarts.
 * Its /proc/<pid>/maps names the binary's path with " (deleted)" after it,
 * or with the device and inode of a file that is not the one there now.
 * Processes we may not inspect (another user's, without CAP_SYS_PTRACE) are
 * skipped, as gpu-users-unix.c does.
 */
#include "doctor.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAPPED_SHOWN 20

/* Whether maps line LINE maps PATH as another file than device DEV, inode INO. */
static int
maps_old(const char *line, const char *path, dev_t dev, ino_t ino)
{
	unsigned maj, min;
	unsigned long long inode;
	int off = 0;
	const char *name;
	size_t pl = strlen(path);

	if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &inode, &off) != 3 || off == 0)
		return 0;
	name = line + off;
	while (*name == ' ')
		name++;
	if (strncmp(name, path, pl) != 0)
		return 0;
	if (strcmp(name + pl, " (deleted)\n") == 0 || strcmp(name + pl, " (deleted)") == 0)
		return 1;
	if (name[pl] != '\n' && name[pl] != '\0')
		return 0;
	return makedev(maj, min) != dev || (ino_t)inode != ino;
}

/* Whether process PID maps an old copy of PATH. */
static int
pid_maps_old(const char *pid, const char *path, dev_t dev, ino_t ino)
{
	char p[300], line[PATH_MAX + 256];
	int found = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%s/maps", pid);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = maps_old(line, path, dev, ino);
	fclose(f);
	return found;
}

static void
comm_of(const char *pid, char *out, size_t len)
{
	char p[300];
	FILE *f;

	deploy_copy(out, len, "?");
	snprintf(p, sizeof(p), "/proc/%s/comm", pid);
	if ((f = fopen(p, "re")) == NULL)
		return;
	if (fgets(out, (int)len, f) == NULL)
		deploy_copy(out, len, "?");
	out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

void
doctor_check_old_mapped(struct doctor *d, struct doctor_target *dt)
{
	char real[PATH_MAX], self[24], names[1024] = "";
	struct stat st;
	struct dirent *e;
	cJSON *procs;
	size_t n = 0;
	DIR *dp;

	if (dt->t.host_bin[0] == '\0' || realpath(dt->t.host_bin, real) == NULL ||
	    stat(real, &st) != 0 || (dp = opendir("/proc")) == NULL)
		return;
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	procs = cJSON_CreateArray();
	while ((e = readdir(dp)) != NULL) {
		char comm[64];
		cJSON *o;
		if (!isdigit((unsigned char)e->d_name[0]) || strcmp(e->d_name, self) == 0 ||
		    !pid_maps_old(e->d_name, real, st.st_dev, st.st_ino))
			continue;
		comm_of(e->d_name, comm, sizeof(comm));
		if (n++ >= MAPPED_SHOWN)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", atof(e->d_name));
		cJSON_AddStringToObject(o, "program", comm);
		cJSON_AddItemToArray(procs, o);
		{
			size_t l = strlen(names);
			deploy_fmt(names + l, sizeof(names) - l, "%s%s (%s)", l ? ", " : "",
			           e->d_name, comm);
		}
	}
	closedir(dp);
	if (n == 0) {
		cJSON_Delete(procs);
		return;
	}
	{
		cJSON *ev = doctor_add(
		    d, "old-library-mapped", DOCTOR_WARNING, dt, DOCTOR_FIX_NONE,
		    "restart them: a program loads rocBLAS once, when it starts",
		    "%zu program%s still run%s the rocBLAS that was at %s before it was replaced, "
		    "so %s not use what is there now: %s",
		    n, n == 1 ? "" : "s", n == 1 ? "s" : "", dt->t.sys_bin, n == 1 ? "it does" : "they do",
		    names);
		cJSON_AddStringToObject(ev, "binary", dt->t.sys_bin);
		cJSON_AddItemToObject(ev, "processes", procs);
	}
}
