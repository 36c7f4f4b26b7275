/*
 * The program run of `rocmctl tune capture` on POSIX systems (see
 * cmd-tune-vendor.h): a private folder from mkdtemp (0700), the log
 * variables set in the child only, fork and exec (rocmctl has one thread),
 * and under sudo the child drops to the calling user before it execs.
 */
#include "cmd-tune-vendor.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"

int64_t
tune_capture_pid(void)
{
	return (int64_t)getpid();
}

/* The user sudo was called by, when rocmctl runs as root under sudo. */
static int
sudo_user(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	char *end;
	long lu, lg;

	if (geteuid() != 0 || u == NULL || g == NULL)
		return 0;
	lu = strtol(u, &end, 10);
	if (*end != '\0' || lu <= 0)
		return 0;
	lg = strtol(g, &end, 10);
	if (*end != '\0' || lg < 0)
		return 0;
	*uid = (uid_t)lu;
	*gid = (gid_t)lg;
	return 1;
}

/* Appends every regular file of DIR to *BUF, then removes it and DIR. */
static int
collect(const char *dir, char **buf, size_t *len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char path[4400], *text = NULL, *grown;
		size_t n = 0;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (rc == 0 && tune_read_file(path, &text, &n) == 0) {
			grown = realloc(*buf, *len + n + 2);
			if (grown == NULL) {
				rc = ROCMD_ENOMEM;
			} else {
				*buf = grown;
				memcpy(*buf + *len, text, n);
				*len += n;
				(*buf)[(*len)++] = '\n';
				(*buf)[*len] = '\0';
			}
		}
		free(text);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
	return rc;
}

int
tune_capture_run(char **argv, char **logs, size_t *len, int *status, char *why, size_t whylen)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], rb[4200], hb[4200], gb[4200];
	uid_t uid = 0;
	gid_t gid = 0;
	int as_user = sudo_user(&uid, &gid);
	pid_t pid;
	int ws = 0;

	*logs = NULL;
	*len = 0;
	*status = -1;
	snprintf(dir, sizeof(dir), "%s/rocmctl-capture-XXXXXX",
	         tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		snprintf(why, whylen, "cannot make a folder for the logs: %s", strerror(errno));
		return -errno;
	}
	if (as_user && chown(dir, uid, gid) != 0) {
		snprintf(why, whylen, "cannot give %s to uid %u: %s", dir, (unsigned)uid,
		         strerror(errno));
		rmdir(dir);
		return ROCMD_EIO;
	}
	snprintf(rb, sizeof(rb), "%s/rocblas-bench.log", dir);
	snprintf(hb, sizeof(hb), "%s/hipblaslt-%%i.log", dir);
	snprintf(gb, sizeof(gb), "%s/rocmd-gemm.log", dir);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		rmdir(dir);
		return ROCMD_EIO;
	}
	if (pid == 0) {
		setenv("ROCBLAS_LAYER", "2", 1);
		setenv("ROCBLAS_LOG_BENCH_PATH", rb, 1);
		setenv("HIPBLASLT_LOG_MASK", "32", 1);
		setenv("HIPBLASLT_LOG_FILE", hb, 1);
		setenv("ROCMD_GEMM_LOG_PATH", gb, 1);
		if (as_user && (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0)) {
			fprintf(stderr, "rocmctl: cannot become uid %u: %s\n", (unsigned)uid,
			        strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "rocmctl: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* ^C reaches the program; rocmctl waits for it and reads its logs. */
	signal(SIGINT, SIG_IGN);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	signal(SIGINT, SIG_DFL);
	if (WIFEXITED(ws)) {
		*status = WEXITSTATUS(ws);
		snprintf(why, whylen, "exited with %d", *status);
	} else if (WIFSIGNALED(ws)) {
		*status = 128 + WTERMSIG(ws);
		snprintf(why, whylen, "killed by signal %d", WTERMSIG(ws));
	}
	if (as_user)
		snprintf(why + strlen(why), whylen - strlen(why), " (run as uid %u)", (unsigned)uid);
	return collect(dir, logs, len);
}
