/*
 * bench-deploy: the deploy engine on a real rocBLAS package, for
 * bench/deploy/deploy.sh (docs/PERF.md, "Deploy").
 *
 *   bench-deploy STATE STORE PKGDIR TARGET_LIB TARGET_BIN ROUNDS
 *
 * PKGDIR holds the package: library/ (the Tensile library folder) and binary
 * (the rocBLAS binary). Its files are put in the content-addressed store
 * STORE (untimed); then:
 *   1. a first deploy into the target (which holds the vendor's originals:
 *      their backup is part of it), watched by an observer thread that lists
 *      the library folder and stats the binary in a tight loop and counts
 *      the samples where the folder is neither exactly the old nor exactly
 *      the new file set, or where the binary does not belong with the folder
 *      seen just before it (old folder + new binary or the reverse);
 *   2. ROUNDS times, alternating: `cp -a` of the package into a fresh folder
 *      + `sync` + `sha256sum` of every copied file, and a redeploy of the
 *      package over the deployed one (stage, swap, verify every hash,
 *      commit, which removes the old tree). Both read a warm source.
 * Prints one line per measurement.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/hash.h"
#include "daemon/deploy/deploy.h"
#include "daemon/pkg/pkg.h"

#define MAXF 256

static struct rocmd_deploy_file files[MAXF];
static char paths[MAXF][256], sources[MAXF][512];
static size_t nfiles;
static struct rocmd_deploy_file binary;
static char binary_src[512];

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) of this process, or of its waited-for children. */
static double
cpu_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Hashes SRC and copies it into the store unless the object is there. */
static int
store_put(const char *store, const char *src, struct rocmd_deploy_file *f, char *objpath,
          size_t len)
{
	uint8_t d[ROCMD_SHA256_LEN];
	char dir[600], cmd[2000];
	struct stat st;
	int rc;

	if ((rc = rocmd_sha256_file(src, d, &f->size)) < 0)
		return rc;
	rocmd_sha256_hex(d, f->sha256);
	rocmd_store_object_path(store, f->sha256, objpath, len);
	if (stat(objpath, &st) == 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", objpath);
	*strrchr(dir, '/') = '\0';
	snprintf(cmd, sizeof(cmd),
	         "mkdir -p '%s' && cp '%s' '%s.tmp' && chmod 444 '%s.tmp' && mv '%s.tmp' '%s'", dir,
	         src, objpath, objpath, objpath, objpath);
	return system(cmd) == 0 ? 0 : -EIO;
}

static int
load_package(const char *store, const char *pkgdir)
{
	char lib[600], src[1200];
	struct dirent *de;
	DIR *d;

	snprintf(lib, sizeof(lib), "%s/library", pkgdir);
	if ((d = opendir(lib)) == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL && nfiles < MAXF) {
		struct rocmd_deploy_file *f = &files[nfiles];
		if (de->d_name[0] == '.')
			continue;
		snprintf(paths[nfiles], sizeof(paths[0]), "%s", de->d_name);
		snprintf(src, sizeof(src), "%s/%s", lib, de->d_name);
		f->path = paths[nfiles];
		f->kind = ROCMD_DEPLOY_FILE;
		if (store_put(store, src, f, sources[nfiles], sizeof(sources[0])) < 0) {
			closedir(d);
			return -EIO;
		}
		f->source = sources[nfiles];
		nfiles++;
	}
	closedir(d);
	snprintf(src, sizeof(src), "%s/binary", pkgdir);
	binary.kind = ROCMD_DEPLOY_FILE;
	binary.exec = 1;
	if (store_put(store, src, &binary, binary_src, sizeof(binary_src)) < 0)
		return -EIO;
	binary.source = binary_src;
	return 0;
}

/* ---- the observer ---- */

static const char *obs_lib, *obs_bin;
static char old_names[8192], new_names[8192];
static ino_t old_bin_ino;
static atomic_int obs_stop;
static uint64_t samples, folder_bad, pair_bad;
static int64_t pair_bad_first, pair_bad_last;

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of folder DIR joined by '/', into OUT; -1 when absent. */
static int
listing(const char *dir, char *out, size_t len)
{
	char *names[MAXF * 2];
	size_t n = 0, used = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	out[0] = '\0';
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && n < MAXF * 2)
		if (de->d_name[0] != '.' || (de->d_name[1] != '\0' && de->d_name[1] != '.'))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s/", names[i]);
		free(names[i]);
	}
	return 0;
}

static void *
observer(void *arg)
{
	char cur[8192];

	(void)arg;
	while (!atomic_load(&obs_stop)) {
		struct stat st;
		int is_old, is_new, bin_old;

		listing(obs_lib, cur, sizeof(cur));
		is_old = strcmp(cur, old_names) == 0;
		is_new = strcmp(cur, new_names) == 0;
		bin_old = stat(obs_bin, &st) == 0 && st.st_ino == old_bin_ino;
		samples++;
		if (!is_old && !is_new)
			folder_bad++;
		else if ((is_old && !bin_old) || (is_new && bin_old)) {
			int64_t t = now_ns();
			if (pair_bad == 0)
				pair_bad_first = t;
			pair_bad_last = t;
			pair_bad++;
		}
	}
	return NULL;
}

static void
print_result(const char *what, double secs, const struct rocmd_deploy_result *r)
{
	printf("%s: %.2f s (stage %.2f, swap %.3f ms, verify %.2f, commit %.2f; %.0f MB placed, "
	       "%s, pair window %.1f us)\n",
	       what, secs, (double)r->stage_us / 1e6, (double)r->swap_us / 1e3,
	       (double)r->verify_us / 1e6, (double)r->commit_us / 1e6, (double)r->bytes / 1e6,
	       r->exchange ? "RENAME_EXCHANGE" : "two renames", (double)r->pair_window_ns / 1e3);
}

int
main(int argc, char **argv)
{
	struct rocmd_deploy_request req = {0};
	struct rocmd_deploy_result res;
	char why[1024], cmd[4096];
	struct stat st;
	pthread_t th;
	double t0, sum_cp = 0, sum_dep = 0, cpu_cp = 0, cpu_dep = 0;
	int rounds, rc;

	if (argc != 7) {
		fprintf(stderr,
		        "usage: bench-deploy STATE STORE PKGDIR TARGET_LIB TARGET_BIN ROUNDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0); /* each figure as it is measured */
	rounds = atoi(argv[6]);
	if (load_package(argv[2], argv[3]) < 0) {
		fprintf(stderr, "cannot load the package from %s\n", argv[3]);
		return 1;
	}
	req.state_dir = argv[1];
	req.target.name = "bench";
	req.target.lib_dir = argv[4];
	req.target.binary = argv[5];
	req.files = files;
	req.nfiles = nfiles;
	req.binary = &binary;
	req.label = "rocBLAS 5.5.1 (trixie)";

	/* 1. First deploy, watched. */
	obs_lib = argv[4];
	obs_bin = argv[5];
	listing(argv[4], old_names, sizeof(old_names));
	{
		char pkglib[1200];
		snprintf(pkglib, sizeof(pkglib), "%s/library", argv[3]);
		listing(pkglib, new_names, sizeof(new_names));
	}
	if (stat(argv[5], &st) < 0) {
		perror(argv[5]);
		return 1;
	}
	old_bin_ino = st.st_ino;
	pthread_create(&th, NULL, observer, NULL);
	t0 = now_s();
	rc = rocmd_deploy_run(&req, &res, why, sizeof(why));
	t0 = now_s() - t0;
	atomic_store(&obs_stop, 1);
	pthread_join(th, NULL);
	if (rc < 0) {
		fprintf(stderr, "deploy: %s\n", why);
		return 1;
	}
	print_result("first deploy (with the backup of the originals)", t0, &res);
	printf("observer: %llu samples of the target during the first deploy; folder neither "
	       "old nor new: %llu; binary not of the folder's package: %llu samples over "
	       "%.1f us\n",
	       (unsigned long long)samples, (unsigned long long)folder_bad,
	       (unsigned long long)pair_bad,
	       pair_bad > 0 ? (double)(pair_bad_last - pair_bad_first) / 1e3 : 0.0);

	/* 2. Alternating rounds, same warm source. */
	for (int r = 0; r < rounds; r++) {
		double tc, td, c0;
		snprintf(
		    cmd, sizeof(cmd),
		    "d=%s/cp-round && rm -rf \"$d\" && mkdir -p \"$d\" && sync && "
		    "t0=$(date +%%s.%%N) && cp -a %s/library \"$d/library\" && cp -a %s/binary "
		    "\"$d/binary\" && sync && (cd \"$d\" && sha256sum library/* binary >/dev/null) "
		    "&& t1=$(date +%%s.%%N) && awk \"BEGIN { print $t1 - $t0 }\" > %s/cp-time && "
		    "rm -rf \"$d\"",
		    argv[1], argv[3], argv[3], argv[1]);
		c0 = cpu_s(RUSAGE_CHILDREN);
		rc = system(cmd);
		c0 = cpu_s(RUSAGE_CHILDREN) - c0;
		if (rc != 0) {
			fprintf(stderr, "the cp round failed\n");
			return 1;
		}
		{
			char p[1200];
			FILE *f;
			snprintf(p, sizeof(p), "%s/cp-time", argv[1]);
			f = fopen(p, "r");
			if (f == NULL || fscanf(f, "%lf", &tc) != 1) {
				fprintf(stderr, "no cp time\n");
				return 1;
			}
			fclose(f);
		}
		if (system("sync") != 0)
			return 1;
		{
			double c1 = cpu_s(RUSAGE_SELF);
			td = now_s();
			rc = rocmd_deploy_run(&req, &res, why, sizeof(why));
			td = now_s() - td;
			c1 = cpu_s(RUSAGE_SELF) - c1;
			cpu_dep += c1;
			printf(
			    "round %d: redeploy CPU %.2f s, cp round CPU %.2f s (its processes)\n",
			    r + 1, c1, c0);
		}
		cpu_cp += c0;
		if (rc < 0) {
			fprintf(stderr, "redeploy: %s\n", why);
			return 1;
		}
		printf("round %d: cp -a + sync + sha256sum %.2f s\n", r + 1, tc);
		print_result("         redeploy", td, &res);
		sum_cp += tc;
		sum_dep += td;
	}
	if (rounds > 0)
		printf("mean over %d rounds: cp -a + sync + sha256sum %.2f s, deploy %.2f s, ratio "
		       "%.2f\n",
		       rounds, sum_cp / rounds, sum_dep / rounds, sum_dep / sum_cp);
	if (rounds > 0)
		printf("CPU: cp round %.2f s, deploy %.2f s, ratio %.2f\n", cpu_cp / rounds,
		       cpu_dep / rounds, cpu_dep / cpu_cp);
	return 0;
}
