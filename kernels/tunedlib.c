/*
 * The tuned kernel library (tunedlib.h): the in-memory table of winners, its
 * generations on disk (written as dpkg writes files: new beside old, fsync,
 * rename, fsync the folder, through the file layer, common/fs.h), the strict reader that refuses any damaged or
 * truncated file, shape selection, and the JSON/CSV export and import.
 *
 * Test hook: ROCMD_TUNEDLIB_CRASH_AT=<step> makes tunedlib_write() _exit(99)
 * at that step ("code", "index", "rename", "current"), so a test can kill a
 * writer half-way and check that readers still see the previous library.
 */
#include "kernels/tunedlib.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/hash.h"
#include "common/text.h"
#include "kernels/costmodel.h"

#ifdef ROCMD_BACKEND_CUDA
#include "kernels/backend-cuda.h"
#endif

struct tunedlib {
	struct tune_key id;
	uint64_t gen;
	struct tunedlib_entry *e; /* sorted by problem */
	int n, cap;
};

/* ---- the table ---- */

int
tunedlib_new(const struct tune_key *id, struct tunedlib **out)
{
	struct tunedlib *lib = calloc(1, sizeof(*lib));

	*out = NULL;
	if (lib == NULL)
		return ROCMD_ENOMEM;
	lib->id = *id;
	lib->id.problem[0] = '\0';
	*out = lib;
	return 0;
}

void
tunedlib_free(struct tunedlib *lib)
{
	int i;

	if (lib == NULL)
		return;
	for (i = 0; i < lib->n; i++)
		free((void *)lib->e[i].code);
	free(lib->e);
	free(lib);
}

const struct tune_key *
tunedlib_id(const struct tunedlib *lib)
{
	return &lib->id;
}

uint64_t
tunedlib_generation(const struct tunedlib *lib)
{
	return lib->gen;
}

int
tunedlib_count(const struct tunedlib *lib)
{
	return lib->n;
}

const struct tunedlib_entry *
tunedlib_entry_at(const struct tunedlib *lib, int i)
{
	return i >= 0 && i < lib->n ? &lib->e[i] : NULL;
}

static int
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/* Whether S is exactly N hex digits. */
static int
valid_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return s[n] == '\0';
}

/* Index of PROBLEM, or -(insertion point) - 1. */
static int
entry_search(const struct tunedlib *lib, const char *problem)
{
	int lo = 0, hi = lib->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2, c = strcmp(lib->e[mid].problem, problem);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -lo - 1;
}

const struct tunedlib_entry *
tunedlib_find(const struct tunedlib *lib, const char *problem)
{
	int i = entry_search(lib, problem);

	return i >= 0 ? &lib->e[i] : NULL;
}

static int
valid_problem(const char *problem, struct gemm_problem *p, char *why, size_t whylen)
{
	char back[64];

	if (problem == NULL || strlen(problem) >= sizeof(back) ||
	    gemm_problem_parse(problem, p) < 0 || gemm_problem_key(p, back, sizeof(back)) < 0 ||
	    strcmp(back, problem) != 0 || gemm_problem_check(p, NULL, 0) < 0) {
		snprintf(why, whylen, "invalid problem '%.64s'", problem ? problem : "(none)");
		return ROCMD_EINVAL;
	}
	return 0;
}

/* NAME=int;NAME=int;... with names of letters, digits and '_'. */
static int
valid_config(const char *c)
{
	size_t n;
	const char *p = c;

	if (c == NULL || (n = strlen(c)) == 0 || n >= SPACE_KEY_MAX)
		return 0;
	while (*p != '\0') {
		const char *name = p;

		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (p == name || p - name >= SPACE_NAME_MAX || *p++ != '=')
			return 0;
		if (*p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == ';' && p[1] != '\0')
			p++;
		else if (*p != '\0')
			return 0;
	}
	return 1;
}

static int
valid_time(double t, int zero_ok)
{
	return isfinite(t) && t <= TUNEDLIB_MAX_TIME_MS && (t > 0 || (zero_ok && t == 0));
}

int
tunedlib_add(struct tunedlib *lib, const char *problem, const char *config, double winner_ms,
             double default_ms, char *why, size_t whylen)
{
	struct tunedlib_entry *e;
	struct gemm_problem p;
	int i, err;

	if ((err = valid_problem(problem, &p, why, whylen)) < 0)
		return err;
	if (!valid_config(config)) {
		snprintf(why, whylen, "%s: invalid configuration '%.80s'", problem,
		         config ? config : "(none)");
		return ROCMD_EINVAL;
	}
	if (!valid_time(winner_ms, 0) || !valid_time(default_ms, 1)) {
		snprintf(why, whylen, "%s: invalid time (winner %g ms, default %g ms)", problem,
		         winner_ms, default_ms);
		return ROCMD_EINVAL;
	}
	i = entry_search(lib, problem);
	if (i >= 0) {
		e = &lib->e[i];
		free((void *)e->code);
	} else {
		if (lib->n >= TUNEDLIB_MAX_ENTRIES) {
			snprintf(why, whylen, "more than %d entries", TUNEDLIB_MAX_ENTRIES);
			return ROCMD_EINVAL;
		}
		if (lib->n == lib->cap) {
			int cap = lib->cap ? lib->cap * 2 : 16;
			struct tunedlib_entry *ne = realloc(lib->e, (size_t)cap * sizeof(*ne));

			if (ne == NULL)
				return ROCMD_ENOMEM;
			lib->e = ne;
			lib->cap = cap;
		}
		i = -i - 1;
		memmove(&lib->e[i + 1], &lib->e[i], (size_t)(lib->n - i) * sizeof(*e));
		lib->n++;
		e = &lib->e[i];
	}
	memset(e, 0, sizeof(*e));
	snprintf(e->problem, sizeof(e->problem), "%s", problem);
	e->p = p;
	snprintf(e->config, sizeof(e->config), "%s", config);
	e->winner_ms = winner_ms;
	e->default_ms = default_ms;
	return 0;
}

int
tunedlib_offer_vendor(struct tunedlib *lib, const char *problem, const char *vendor,
                      const char *sha256, const char *config, double winner_ms, char *why,
                      size_t whylen)
{
	const struct tunedlib_entry *old = tunedlib_find(lib, problem);
	double dflt = old != NULL ? old->default_ms : 0;
	struct tunedlib_entry *e;
	int err;

	if (vendor == NULL || !vendor[0] || strlen(vendor) >= sizeof(old->vendor) ||
	    !printable(vendor) || sha256 == NULL || !valid_hex(sha256, 64)) {
		snprintf(why, whylen, "%s: invalid vendor solution (backend '%.20s')", problem,
		         vendor ? vendor : "(none)");
		return ROCMD_EINVAL;
	}
	/* rocmd's winner stays only when clearly faster: within the measurement's
	 * spread the vendor's solution is the one known to be no slower. */
	if (old != NULL && old->winner_ms < winner_ms * (1.0 - TUNEDLIB_VENDOR_MARGIN))
		return 0;
	if ((err = tunedlib_add(lib, problem, config, winner_ms, dflt, why, whylen)) < 0)
		return err;
	e = &lib->e[entry_search(lib, problem)];
	snprintf(e->vendor, sizeof(e->vendor), "%s", vendor);
	snprintf(e->vendor_sha256, sizeof(e->vendor_sha256), "%s", sha256);
	return 1;
}

int
tunedlib_vendor_entry(const struct tunedlib *lib, const struct gemm_problem *p)
{
	char key[64];
	int i;

	if (lib == NULL)
		return -1;
	gemm_problem_key(p, key, sizeof(key));
	i = entry_search(lib, key);
	return i >= 0 && lib->e[i].vendor[0] ? i : -1;
}

static int
valid_kind(const char *kind)
{
	return kind != NULL && (!strcmp(kind, "cubin") || !strcmp(kind, "hsaco"));
}

static int
sha256_hex(const void *data, size_t len, char out[65])
{
	uint8_t d[ROCMD_SHA256_LEN];
	struct rocmd_sha256 *h = NULL;
	int err;

	if ((err = rocmd_sha256_new(&h)) < 0)
		return err;
	err = rocmd_sha256_update(h, data, len);
	if (err < 0) {
		rocmd_sha256_free(h);
		return err;
	}
	err = rocmd_sha256_final(h, d); /* frees H */
	if (err == 0)
		rocmd_sha256_hex(d, out);
	return err;
}

int
tunedlib_set_code(struct tunedlib *lib, const char *problem, const char *kind, const void *code,
                  size_t len)
{
	int i = entry_search(lib, problem), err;
	struct tunedlib_entry *e;
	void *copy;
	char hex[65];

	if (i < 0)
		return ROCMD_ENOTFOUND;
	if (!valid_kind(kind) || len == 0 || len > TUNEDLIB_MAX_CODE)
		return ROCMD_EINVAL;
	if ((err = sha256_hex(code, len, hex)) < 0)
		return err;
	copy = malloc(len);
	if (copy == NULL)
		return ROCMD_ENOMEM;
	memcpy(copy, code, len);
	e = &lib->e[i];
	free((void *)e->code);
	e->code = copy;
	e->code_len = len;
	snprintf(e->code_kind, sizeof(e->code_kind), "%s", kind);
	memcpy(e->code_sha256, hex, sizeof(e->code_sha256));
	return 0;
}

/* ---- from a results store ---- */

struct vendor_walk {
	struct tunedlib *lib;
	const char *vendor, *sha256;
	char *why;
	size_t whylen;
	int err, taken;
};

static int
vendor_cb(void *ctx, const char *problem, const char *config, double median_ms)
{
	struct vendor_walk *w = ctx;
	int r;

	if (strchr(problem, '@') != NULL)
		return 0; /* a program's own layout: no library entry has it */
	r = tunedlib_offer_vendor(w->lib, problem, w->vendor, w->sha256, config, median_ms,
	                              w->why, w->whylen);

	if (r < 0)
		w->err = r;
	w->taken += r > 0;
	return r < 0;
}

int
tunedlib_merge_vendor(struct tunedlib *lib, struct tune_store *st, const struct tune_key *vkey,
                      const char *vendor, const char *sha256, int *taken, char *why,
                      size_t whylen)
{
	struct vendor_walk w = {lib, vendor, sha256, why, whylen, 0, 0};
	int err = st->winners(st->ctx, vkey, 0, vendor_cb, &w);

	if (taken != NULL)
		*taken = w.taken;
	if (w.err < 0)
		return w.err;
	if (err < 0)
		snprintf(why, whylen, "cannot read the vendor's winners from the results store");
	return err;
}

struct store_walk {
	struct tunedlib *lib;
	struct tune_store *st;
	char *why;
	size_t whylen;
	int err;
};

static int
store_cb(void *ctx, const char *problem, const char *config, double median_ms)
{
	struct store_walk *w = ctx;
	struct tune_key k = w->lib->id;
	double dflt = 0;

	snprintf(k.problem, sizeof(k.problem), "%s", problem);
	if (w->st->winner_default != NULL && w->st->winner_default(w->st->ctx, &k, &dflt) < 0)
		dflt = 0;
	if (!valid_time(dflt, 1))
		dflt = 0;
	w->err = tunedlib_add(w->lib, problem, config, median_ms, dflt, w->why, w->whylen);
	return w->err < 0;
}

int
tunedlib_from_store(struct tune_store *st, const struct tune_key *id, struct tunedlib **out,
                    char *why, size_t whylen)
{
	struct store_walk w;
	int err;

	*out = NULL;
	memset(&w, 0, sizeof(w));
	if ((err = tunedlib_new(id, &w.lib)) < 0)
		return err;
	w.st = st;
	w.why = why;
	w.whylen = whylen;
	err = st->winners(st->ctx, id, 0, store_cb, &w);
	if (w.err < 0)
		err = w.err;
	if (err < 0) {
		if (w.err == 0)
			snprintf(why, whylen, "cannot read the winners from the results store");
		tunedlib_free(w.lib);
		return err;
	}
	*out = w.lib;
	return 0;
}

/* ---- code objects ---- */

int
tunedlib_compile(struct tunedlib *lib, const char *hiprtc_path, char *why, size_t whylen)
{
	if (!strcmp(lib->id.backend, "cpu"))
		return 0; /* the configuration is the compiled-in kernel's parameters */
#ifdef ROCMD_BACKEND_CUDA
	if (!strcmp(lib->id.backend, "cuda")) {
		struct backend_ctx *ctx = NULL;
		char *src = NULL, hash[17], defs[SPACE_MAX_PARAMS][40], log[4096];
		const char *dp[SPACE_MAX_PARAMS];
		size_t len = 0;
		int err, i;

		src = backend_cuda_source(&len);
		if (src == NULL)
			return ROCMD_ENOMEM;
		snprintf(hash, sizeof(hash), "%016llx",
		         (unsigned long long)backend_hash(src, len, BACKEND_HASH_INIT));
		if (strcmp(hash, lib->id.source_hash) != 0) {
			snprintf(why, whylen,
			         "the library was tuned on kernel source %s, this build has %s: "
			         "re-tune before compiling",
			         lib->id.source_hash, hash);
			err = ROCMD_EINVAL;
			goto out;
		}
		if ((err = backend_cuda_open_nvrtc(lib->id.arch, &ctx, why, whylen)) < 0)
			goto out;
		for (i = 0; i < lib->n; i++) {
			struct tunedlib_entry *e = &lib->e[i];
			struct space_def sd;
			struct space_point pt;
			char *cubin = NULL;
			size_t n = 0;
			int nd;

			if (e->code != NULL || e->vendor[0])
				continue; /* compiled, or the vendor library's own code */
			backend_cuda_space_for(&sd, &e->p, 1, 1);
			if (space_key_parse(&sd, e->config, &pt) < 0) {
				snprintf(why, whylen,
				         "%s: configuration not in the CUDA space: %.200s",
				         e->problem, e->config);
				err = ROCMD_EINVAL;
				goto out;
			}
			nd = space_defines(&sd, &pt, defs, dp);
			err =
			    backend_cuda_nvrtc(ctx, src, len, dp, nd, &cubin, &n, log, sizeof(log));
			if (err < 0) {
				snprintf(why, whylen, "%s: NVRTC: %.400s", e->problem, log);
				goto out;
			}
			err = tunedlib_set_code(lib, e->problem, "cubin", cubin, n);
			free(cubin);
			if (err < 0)
				goto out;
		}
	out:
		if (ctx != NULL)
			backend_cuda_close_nvrtc(ctx);
		free(src);
		return err;
	}
#endif
	if (!strcmp(lib->id.backend, "hip"))
		snprintf(why, whylen,
		         "HIP code objects for the tuned library are not built yet (hiprtc %s)",
		         hiprtc_path ? hiprtc_path : "not given");
	else
		snprintf(why, whylen, "no code objects for backend '%s' in this build",
		         lib->id.backend);
	return ROCMD_EUNSUPPORTED;
}

/* ---- the on-disk form ---- */

static void
crash_at(const char *step)
{
	const char *s = getenv("ROCMD_TUNEDLIB_CRASH_AT");

	if (s != NULL && !strcmp(s, step))
		_exit(99);
}

/* Reads at most MAX bytes of PATH, NUL-terminated: ROCMD_ENOTFOUND when it is
 * missing, ROCMD_ECORRUPT when larger or not a regular file. */
static int
read_file(const char *path, size_t max, char **out, size_t *len)
{
	int err = rocmd_fs_read_file(path, max, out, len);

	return err == -ENOENT ? ROCMD_ENOTFOUND : err;
}

static int
mkdir_p(const char *dir)
{
	struct rocmd_fsinfo fi;
	char tmp[4096];
	size_t i, n = strlen(dir);
	int err;

	if (n == 0 || n >= sizeof(tmp))
		return ROCMD_EINVAL;
	memcpy(tmp, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		err = rocmd_fs_mkdir(tmp, 0755);
		/* "C:" and the like cannot be made: what exists as a folder is fine. */
		if (err < 0 && err != -EEXIST &&
		    !(rocmd_fsinfo_get(tmp, 1, &fi) == 0 && fi.type == ROCMD_FS_DIR))
			return err;
		tmp[i] = dir[i];
	}
	return 0;
}

/* "v123" -> 123; 0 for anything else. */
static uint64_t
gen_of(const char *name)
{
	char *end;
	unsigned long long v;

	if (name[0] != 'v' || !isdigit((unsigned char)name[1]))
		return 0;
	errno = 0;
	v = strtoull(name + 1, &end, 10);
	return *end == '\0' && errno == 0 ? (uint64_t)v : 0;
}

/* The generation CURRENT names: 0 and *GEN, ROCMD_ENOTFOUND, or ROCMD_ECORRUPT. */
static int
read_current(const char *dir, uint64_t *gen, char *why, size_t whylen)
{
	char path[4096], *buf = NULL;
	size_t len = 0;
	int err;

	*gen = 0;
	rocmd_pathf(path, sizeof(path), "%s/CURRENT", dir);
	err = read_file(path, 64, &buf, &len);
	if (err == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "%s holds no tuned library (no CURRENT)", dir);
		return err;
	}
	if (err < 0) {
		snprintf(why, whylen, "%s: cannot read (%s)", path, rocmd_strerror(err));
		return err == ROCMD_ECORRUPT ? err : ROCMD_ECORRUPT;
	}
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	*gen = gen_of(buf);
	free(buf);
	if (*gen == 0) {
		snprintf(why, whylen, "%s: not a generation name", path);
		return ROCMD_ECORRUPT;
	}
	return 0;
}

static cJSON *
id_json(const struct tune_key *id)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "backend", id->backend);
	cJSON_AddStringToObject(o, "arch", id->arch);
	cJSON_AddStringToObject(o, "device", id->device);
	cJSON_AddNumberToObject(o, "compute_units", id->compute_units);
	cJSON_AddStringToObject(o, "driver", id->driver);
	cJSON_AddStringToObject(o, "runtime", id->runtime);
	cJSON_AddStringToObject(o, "compiler", id->compiler);
	cJSON_AddStringToObject(o, "source_hash", id->source_hash);
	return o;
}

/* The index or an export. WITH_CODE: code object fields (the index). */
static char *
lib_json(const struct tunedlib *lib, const char *format, int with_code)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	char *text = NULL;
	int i;

	if (root == NULL)
		return NULL;
	cJSON_AddStringToObject(root, "format", format);
	cJSON_AddNumberToObject(root, "version", TUNEDLIB_VERSION);
	cJSON_AddItemToObject(root, "id", id_json(&lib->id));
	arr = cJSON_AddArrayToObject(root, "entries");
	for (i = 0; arr != NULL && i < lib->n; i++) {
		const struct tunedlib_entry *e = &lib->e[i];
		cJSON *o = cJSON_CreateObject();

		if (o == NULL)
			goto out;
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "problem", e->problem);
		cJSON_AddStringToObject(o, "config", e->config);
		cJSON_AddNumberToObject(o, "winner_ms", e->winner_ms);
		cJSON_AddNumberToObject(o, "default_ms", e->default_ms);
		if (e->vendor[0]) {
			cJSON_AddStringToObject(o, "vendor", e->vendor);
			cJSON_AddStringToObject(o, "vendor_sha256", e->vendor_sha256);
		}
		if (with_code && e->code != NULL) {
			cJSON_AddStringToObject(o, "code_kind", e->code_kind);
			cJSON_AddStringToObject(o, "code_sha256", e->code_sha256);
			cJSON_AddNumberToObject(o, "code_size", (double)e->code_len);
		}
	}
	text = cJSON_Print(root);
out:
	cJSON_Delete(root);
	return text;
}

int
tunedlib_write(struct tunedlib *lib, const char *dir, char *why, size_t whylen)
{
	char tmp[4096], path[4096], gdir[4096], name[64];
	char *index = NULL;
	uint64_t cur = 0, maxgen = 0, gen;
	struct rocmd_dir *d = NULL;
	struct rocmd_dirent *de;
	int err, i;

	/* Every path below is DIR plus at most ~120 bytes: check once. */
	if (strlen(dir) > 3800) {
		snprintf(why, whylen, "folder name too long");
		return ROCMD_EINVAL;
	}
	if ((err = mkdir_p(dir)) < 0) {
		snprintf(why, whylen, "%s: cannot create (%s)", dir, rocmd_strerror(err));
		return err;
	}
	/* The next number: above every generation present, crash leftovers included. */
	read_current(dir, &cur, path, sizeof(path));
	d = rocmd_dir_open(dir);
	if (d == NULL) {
		err = -errno;
		snprintf(why, whylen, "%s: %s", dir, rocmd_strerror(err));
		return err;
	}
	while ((de = rocmd_dir_read(d)) != NULL) {
		uint64_t g = gen_of(de->d_name);

		if (g > maxgen)
			maxgen = g;
	}
	rocmd_dir_close(d);
	d = NULL;
	gen = (cur > maxgen ? cur : maxgen) + 1;

	if (rocmd_pathf(tmp, sizeof(tmp), "%s/.tmp-v%" PRIu64 "-%ld", dir, gen, (long)getpid()) <
	        0 ||
	    rocmd_pathf(gdir, sizeof(gdir), "%s/v%" PRIu64, dir, gen) < 0) {
		snprintf(why, whylen, "%s: path too long", dir);
		return ROCMD_EINVAL;
	}
	rocmd_fs_remove_tree(tmp);
	rocmd_pathf(path, sizeof(path), "%s/co", tmp);
	if ((err = rocmd_fs_mkdir(tmp, 0755)) < 0 || (err = rocmd_fs_mkdir(path, 0755)) < 0) {
		snprintf(why, whylen, "%s: cannot create (%s)", tmp, rocmd_strerror(err));
		goto fail;
	}
	for (i = 0; i < lib->n; i++) {
		const struct tunedlib_entry *e = &lib->e[i];

		if (e->code == NULL)
			continue;
		rocmd_pathf(path, sizeof(path), "%s/co/%s.%s", tmp, e->code_sha256, e->code_kind);
		err = rocmd_fs_write_new(path, e->code, e->code_len, ROCMD_FS_MODE_SEALED);
		if (err == -EEXIST) /* two shapes, one kernel: content-addressed */
			err = 0;
		if (err < 0) {
			snprintf(why, whylen, "%s: cannot write (%s)", path, rocmd_strerror(err));
			goto fail;
		}
		crash_at("code");
	}
	rocmd_pathf(path, sizeof(path), "%s/co", tmp);
	if ((err = rocmd_fs_fsync_dir(path)) < 0)
		goto fail_sync;
	index = lib_json(lib, TUNEDLIB_FORMAT, 1);
	if (index == NULL) {
		err = ROCMD_ENOMEM;
		goto fail;
	}
	rocmd_pathf(path, sizeof(path), "%s/index.json", tmp);
	if (getenv("ROCMD_TUNEDLIB_CRASH_AT") &&
	    !strcmp(getenv("ROCMD_TUNEDLIB_CRASH_AT"), "index")) {
		/* Half an index on disk, then the crash. */
		rocmd_fs_write_new(path, index, strlen(index) / 2, ROCMD_FS_MODE_SEALED);
		crash_at("index");
	}
	if ((err = rocmd_fs_write_new(path, index, strlen(index), ROCMD_FS_MODE_SEALED)) < 0) {
		snprintf(why, whylen, "%s: cannot write (%s)", path, rocmd_strerror(err));
		goto fail;
	}
	if ((err = rocmd_fs_fsync_dir(tmp)) < 0)
		goto fail_sync;
	crash_at("rename");
	if ((err = rocmd_fs_rename_sync(tmp, gdir)) < 0) {
		snprintf(why, whylen, "%s: cannot rename into place (%s)", gdir,
		         rocmd_strerror(err));
		goto fail;
	}
	crash_at("current");
	/* The switch: CURRENT names the new generation. */
	snprintf(name, sizeof(name), "v%" PRIu64 "\n", gen);
	rocmd_pathf(tmp, sizeof(tmp), "%s/.CURRENT.tmp-%ld", dir, (long)getpid());
	rocmd_pathf(path, sizeof(path), "%s/CURRENT", dir);
	if ((err = rocmd_fs_replace(path, tmp, name, strlen(name), ROCMD_FS_MODE_SEALED)) < 0) {
		snprintf(why, whylen, "%s: cannot replace (%s)", path, rocmd_strerror(err));
		goto out;
	}
	lib->gen = gen;
	/* Keep the new and the previous generation (a reader may have read CURRENT
	 * just before the switch); drop older ones and crash leftovers. */
	d = rocmd_dir_open(dir);
	while (d != NULL && (de = rocmd_dir_read(d)) != NULL) {
		uint64_t g = gen_of(de->d_name);

		if ((g != 0 && g != gen && g != cur) || !strncmp(de->d_name, ".tmp-v", 6)) {
			rocmd_pathf(path, sizeof(path), "%s/%s", dir, de->d_name);
			rocmd_fs_remove_tree(path);
		}
	}
	rocmd_dir_close(d);
	err = 0;
	goto out;
fail_sync:
	snprintf(why, whylen, "%s: fsync failed (%s)", dir, rocmd_strerror(err));
fail:
	rocmd_fs_remove_tree(tmp);
out:
	free(index);
	return err;
}

/* ---- reading ---- */


static int
get_str(const cJSON *o, const char *name, char *dst, size_t len, int empty_ok, char *why,
        size_t whylen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsString(v) || v->valuestring == NULL || strlen(v->valuestring) >= len ||
	    (!empty_ok && v->valuestring[0] == '\0') || !printable(v->valuestring)) {
		snprintf(why, whylen, "field '%s' is missing or invalid", name);
		return ROCMD_ECORRUPT;
	}
	snprintf(dst, len, "%s", v->valuestring);
	return 0;
}

static int
get_num(const cJSON *o, const char *name, double lo, double hi, double *out, char *why,
        size_t whylen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi) {
		snprintf(why, whylen, "field '%s' is missing or out of range", name);
		return ROCMD_ECORRUPT;
	}
	*out = v->valuedouble;
	return 0;
}


static int
parse_id(const cJSON *o, struct tune_key *id, char *why, size_t whylen)
{
	double cu;
	int err;

	memset(id, 0, sizeof(*id));
	if (!cJSON_IsObject(o)) {
		snprintf(why, whylen, "field 'id' is missing");
		return ROCMD_ECORRUPT;
	}
	if ((err = get_str(o, "backend", id->backend, sizeof(id->backend), 0, why, whylen)) < 0 ||
	    (err = get_str(o, "arch", id->arch, sizeof(id->arch), 0, why, whylen)) < 0 ||
	    (err = get_str(o, "device", id->device, sizeof(id->device), 0, why, whylen)) < 0 ||
	    (err = get_num(o, "compute_units", 0, 1 << 20, &cu, why, whylen)) < 0 ||
	    (err = get_str(o, "driver", id->driver, sizeof(id->driver), 1, why, whylen)) < 0 ||
	    (err = get_str(o, "runtime", id->runtime, sizeof(id->runtime), 1, why, whylen)) < 0 ||
	    (err = get_str(o, "compiler", id->compiler, sizeof(id->compiler), 1, why, whylen)) <
	        0 ||
	    (err = get_str(o, "source_hash", id->source_hash, sizeof(id->source_hash), 0, why,
	                   whylen)) < 0)
		return err;
	if (cu != floor(cu)) {
		snprintf(why, whylen, "field 'compute_units' is not an integer");
		return ROCMD_ECORRUPT;
	}
	id->compute_units = (int)cu;
	if (!valid_hex(id->source_hash, 16)) {
		snprintf(why, whylen, "field 'source_hash' is not 16 hex digits");
		return ROCMD_ECORRUPT;
	}
	return 0;
}

/* Parses a whole JSON document (index or export) of FORMAT into a library.
 * DIR != NULL: code objects are read from DIR/co and checked. */
static int
parse_json(const char *text, size_t len, const char *format, const char *dir, struct tunedlib **out,
           char *why, size_t whylen)
{
	cJSON *root = NULL;
	const cJSON *arr, *it;
	struct tunedlib *lib = NULL;
	struct tune_key id;
	char fmt[32], msg[200];
	double ver;
	int err, i = 0;

	*out = NULL;
	msg[0] = '\0';
	if (len > TUNEDLIB_MAX_INDEX) {
		snprintf(why, whylen, "larger than %d bytes", TUNEDLIB_MAX_INDEX);
		return ROCMD_ECORRUPT;
	}
	root = cJSON_ParseWithLength(text, len);
	if (!cJSON_IsObject(root)) {
		snprintf(why, whylen, "not a JSON object (truncated or damaged)");
		err = ROCMD_ECORRUPT;
		goto out;
	}
	if ((err = get_str(root, "format", fmt, sizeof(fmt), 0, why, whylen)) < 0)
		goto out;
	if (strcmp(fmt, format) != 0) {
		snprintf(why, whylen, "format '%s', expected '%s'", fmt, format);
		err = ROCMD_ECORRUPT;
		goto out;
	}
	if ((err = get_num(root, "version", 1, 1e9, &ver, why, whylen)) < 0)
		goto out;
	if (ver > TUNEDLIB_VERSION || ver != floor(ver)) {
		snprintf(why, whylen, "format version %g, this build reads up to %d", ver,
		         TUNEDLIB_VERSION);
		err = ROCMD_EVERSION;
		goto out;
	}
	if ((err = parse_id(cJSON_GetObjectItemCaseSensitive(root, "id"), &id, why, whylen)) < 0)
		goto out;
	if ((err = tunedlib_new(&id, &lib)) < 0)
		goto out;
	arr = cJSON_GetObjectItemCaseSensitive(root, "entries");
	if (!cJSON_IsArray(arr)) {
		snprintf(why, whylen, "field 'entries' is missing");
		err = ROCMD_ECORRUPT;
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		char problem[64], config[SPACE_KEY_MAX], kind[8], sha[65];
		double wms, dms, size;
		const cJSON *ck;

		if (!cJSON_IsObject(it)) {
			snprintf(msg, sizeof(msg), "not an object");
			err = ROCMD_ECORRUPT;
			goto bad_entry;
		}
		if ((err = get_str(it, "problem", problem, sizeof(problem), 0, msg, sizeof(msg))) <
		        0 ||
		    (err = get_str(it, "config", config, sizeof(config), 0, msg, sizeof(msg))) <
		        0 ||
		    (err = get_num(it, "winner_ms", 0, TUNEDLIB_MAX_TIME_MS, &wms, msg,
		                   sizeof(msg))) < 0 ||
		    (err = get_num(it, "default_ms", 0, TUNEDLIB_MAX_TIME_MS, &dms, msg,
		                   sizeof(msg))) < 0)
			goto bad_entry;
		if (tunedlib_find(lib, problem) != NULL) {
			snprintf(msg, sizeof(msg), "problem %s listed twice", problem);
			err = ROCMD_ECORRUPT;
			goto bad_entry;
		}
		if ((err = tunedlib_add(lib, problem, config, wms, dms, msg, sizeof(msg))) < 0) {
			err = err == ROCMD_ENOMEM ? err : ROCMD_ECORRUPT;
			goto bad_entry;
		}
		if (cJSON_GetObjectItemCaseSensitive(it, "vendor") != NULL) {
			char vendor[16], vsha[65];
			struct tunedlib_entry *ve;

			if ((err = get_str(it, "vendor", vendor, sizeof(vendor), 0, msg,
			                   sizeof(msg))) < 0 ||
			    (err = get_str(it, "vendor_sha256", vsha, sizeof(vsha), 0, msg,
			                   sizeof(msg))) < 0)
				goto bad_entry;
			if (!valid_hex(vsha, 64) || !printable(vendor)) {
				snprintf(msg, sizeof(msg), "invalid vendor or vendor_sha256");
				err = ROCMD_ECORRUPT;
				goto bad_entry;
			}
			ve = &lib->e[entry_search(lib, problem)];
			snprintf(ve->vendor, sizeof(ve->vendor), "%s", vendor);
			snprintf(ve->vendor_sha256, sizeof(ve->vendor_sha256), "%s", vsha);
		}
		ck = cJSON_GetObjectItemCaseSensitive(it, "code_kind");
		if (ck == NULL)
			goto next;
		if (dir == NULL) {
			snprintf(msg, sizeof(msg), "an export carries no code objects");
			err = ROCMD_ECORRUPT;
			goto bad_entry;
		}
		if ((err = get_str(it, "code_kind", kind, sizeof(kind), 0, msg, sizeof(msg))) < 0 ||
		    (err = get_str(it, "code_sha256", sha, sizeof(sha), 0, msg, sizeof(msg))) < 0 ||
		    (err = get_num(it, "code_size", 1, TUNEDLIB_MAX_CODE, &size, msg,
		                   sizeof(msg))) < 0)
			goto bad_entry;
		{
			uint8_t dg[ROCMD_SHA256_LEN];
			char path[4096], hex[65], *code = NULL;
			size_t clen = 0;

			if (!valid_kind(kind) || strlen(sha) != 64 ||
			    rocmd_sha256_parse(sha, dg) < 0) {
				snprintf(msg, sizeof(msg), "invalid code object kind or hash");
				err = ROCMD_ECORRUPT;
				goto bad_entry;
			}
			rocmd_pathf(path, sizeof(path), "%s/co/%s.%s", dir, sha, kind);
			err = read_file(path, TUNEDLIB_MAX_CODE, &code, &clen);
			if (err == 0 && (clen != (size_t)size || sha256_hex(code, clen, hex) < 0 ||
			                 strcmp(hex, sha) != 0))
				err = ROCMD_ECORRUPT;
			if (err == 0)
				err = tunedlib_set_code(lib, problem, kind, code, clen);
			free(code);
			if (err < 0) {
				snprintf(msg, sizeof(msg), "code object co/%.16s....%s: %s", sha,
				         kind,
				         err == ROCMD_ECORRUPT ? "size or hash does not match"
				                               : rocmd_strerror(err));
				err = err == ROCMD_ENOMEM ? err : ROCMD_ECORRUPT;
				goto bad_entry;
			}
		}
	next:
		i++;
		continue;
	bad_entry:
		snprintf(why, whylen, "entry %d: %s", i, msg);
		goto out;
	}
	*out = lib;
	lib = NULL;
	err = 0;
out:
	tunedlib_free(lib);
	cJSON_Delete(root);
	return err;
}

int
tunedlib_open(const char *dir, struct tunedlib **out, char *why, size_t whylen)
{
	char path[4096], gdir[4096], sub[300];
	char *text = NULL;
	size_t len = 0;
	uint64_t gen;
	int err;

	*out = NULL;
	if (strlen(dir) > 3800) {
		snprintf(why, whylen, "folder name too long");
		return ROCMD_EINVAL;
	}
	if ((err = read_current(dir, &gen, why, whylen)) < 0)
		return err;
	if (rocmd_pathf(gdir, sizeof(gdir), "%s/v%" PRIu64, dir, gen) < 0 ||
	    rocmd_pathf(path, sizeof(path), "%s/index.json", gdir) < 0) {
		snprintf(why, whylen, "%s: path too long", dir);
		return ROCMD_EINVAL;
	}
	err = read_file(path, TUNEDLIB_MAX_INDEX, &text, &len);
	if (err < 0) {
		snprintf(why, whylen, "%s: %s", path,
		         err == ROCMD_ENOTFOUND ? "missing" : rocmd_strerror(err));
		return ROCMD_ECORRUPT;
	}
	err = parse_json(text, len, TUNEDLIB_FORMAT, gdir, out, sub, sizeof(sub));
	free(text);
	if (err < 0) {
		snprintf(why, whylen, "%s: %s", path, sub);
		return err;
	}
	(*out)->gen = gen;
	return 0;
}

int
tunedlib_dir_name(const struct tune_key *id, char *buf, size_t len)
{
	const char *sdk = !strcmp(id->backend, "cpu") ? id->compiler : id->runtime;
	char *p;
	int n;

	n = snprintf(buf, len, "%s-%s", id->arch[0] ? id->arch : "unknown",
	             sdk[0] ? sdk : "unknown");
	if (n < 0 || (size_t)n >= len)
		return ROCMD_EINVAL;
	for (p = buf; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			*p = '_';
	/* Never "." or "..": the folder must stay inside <state>/tuned. */
	if (buf[0] == '.')
		buf[0] = '_';
	return 0;
}

/* ---- selection ---- */

const char *
tunedlib_how_name(enum tunedlib_how how)
{
	switch (how) {
	case TUNEDLIB_EXACT:
		return "exact";
	case TUNEDLIB_NEAREST:
		return "nearest";
	case TUNEDLIB_DEFAULT:
		return "default";
	}
	return "?";
}

/* As the tuner's seed set measures it (tune.c): Σ|log2 ratio|. */
static double
shape_distance(const struct gemm_problem *a, const struct gemm_problem *b)
{
	if (a->dtype != b->dtype || a->ta != b->ta || a->tb != b->tb)
		return INFINITY;
	return fabs(log2((double)a->m / b->m)) + fabs(log2((double)a->n / b->n)) +
	       fabs(log2((double)a->k / b->k)) + fabs(log2((double)a->batch / b->batch));
}

/* Whether entry E's configuration parses in SPACE and is valid for P on DEV
 * (the point in *PT); else the reason in REASON. */
static int
entry_usable(const struct tunedlib_entry *e, const struct space_def *space,
             const struct gemm_problem *p, const struct backend_device_info *dev,
             struct space_point *pt, char *reason, size_t rlen)
{
	char w[160];

	if (space_key_parse(space, e->config, pt) < 0) {
		snprintf(reason, rlen, "%s's configuration is not in the %s space", e->problem,
		         space->name);
		return 0;
	}
	if (!space_valid(space, pt, p, dev, w, sizeof(w))) {
		snprintf(reason, rlen, "%.40s's configuration is ruled out: %.120s", e->problem, w);
		return 0;
	}
	return 1;
}

/* A candidate: an entry (or -1, the default), its point, its distance and,
 * with the cost model, its predicted ms on the problem. */
struct pick {
	int entry;
	struct space_point pt;
	double distance, pred;
};

/*
 * Among the usable entries of P's dtype and transposes: the exact one, else
 * the nearest (*NEAR) and, where the cost model applies, the one predicted
 * fastest on P (*BEST: its measured time scaled by the model's ratio between
 * the two shapes; else *BEST is *NEAR). Returns the entries skipped.
 */
static int
pick_entries(const struct tunedlib *lib, const struct space_def *space,
             const struct gemm_problem *p, const struct backend_device_info *dev, int model,
             struct pick *best, struct pick *near, char *reason, size_t rlen)
{
	struct space_point pt;
	int i, skipped = 0;

	memset(best, 0, sizeof(*best));
	memset(near, 0, sizeof(*near));
	best->entry = near->entry = -1;
	near->distance = INFINITY;
	for (i = 0; lib != NULL && i < lib->n; i++) {
		const struct tunedlib_entry *e = &lib->e[i];
		double d = shape_distance(p, &e->p), pred = 0;

		if (e->vendor[0])
			continue; /* runs through its vendor's backend, on its own shape only */
		if (!isfinite(d) || (!model && (d > near->distance || (d == near->distance &&
		                                                       near->entry >= 0))))
			continue;
		/* The kernel must be valid for this problem: the space's predicate. */
		if (!entry_usable(e, space, p, dev, &pt, reason, rlen)) {
			skipped++;
			continue;
		}
		if (model)
			pred = e->winner_ms * costmodel_ms(space, &pt, p, dev) /
			       costmodel_ms(space, &pt, &e->p, dev);
		if (near->entry < 0 || d < near->distance)
			*near = (struct pick){i, pt, d, pred};
		if (model && (best->entry < 0 || pred < best->pred ||
		              (pred == best->pred && d < best->distance)))
			*best = (struct pick){i, pt, d, pred};
	}
	if (!model || (near->entry >= 0 && near->distance == 0))
		*best = *near;
	return skipped;
}

/* The default's predicted ms on P, from the nearest entry NEAR: its
 * default's time there (or, unknown, its winner's) scaled by the model. */
static double
default_pred(const struct tunedlib *lib, const struct space_def *space,
             const struct gemm_problem *p, const struct backend_device_info *dev,
             const struct space_point *dpt, const struct pick *near)
{
	const struct tunedlib_entry *e = &lib->e[near->entry];

	if (e->default_ms > 0)
		return e->default_ms * costmodel_ms(space, dpt, p, dev) /
		       costmodel_ms(space, dpt, &e->p, dev);
	return e->winner_ms * costmodel_ms(space, dpt, p, dev) /
	       costmodel_ms(space, &near->pt, &e->p, dev);
}

/* Fills OUT for the default point (DPT, found by space_default_for). */
static void
choose_default(const struct tunedlib *lib, const struct space_def *space, const char *key,
               const struct space_point *dpt, int skipped, const char *reason,
               struct tunedlib_choice *out)
{
	char dwhy[200] = "";
	struct space_point d;

	out->how = TUNEDLIB_DEFAULT;
	out->entry = -1;
	out->pt = *dpt;
	space_key(space, dpt, out->config, sizeof(out->config));
	/* The default's own reason: the shape class, or that it was ruled out. */
	space_point_default(space, &d);
	if (memcmp(&d, dpt, sizeof(d)) != 0)
		snprintf(dwhy, sizeof(dwhy), "; %s's default is ruled out, the nearest valid "
		         "point runs", space->dflt_why[0] ? "the class" : "the space");
	else if (space->dflt_why[0])
		snprintf(dwhy, sizeof(dwhy), ": %.150s", space->dflt_why);
	if (lib == NULL)
		snprintf(out->why, sizeof(out->why), "no tuned library: default configuration%s",
		         dwhy);
	else if (skipped > 0)
		snprintf(out->why, sizeof(out->why),
		         "no tuned shape of the same dtype and transposes is valid for %.40s "
		         "(%.40s): default configuration%.80s",
		         key, reason, dwhy);
	else
		snprintf(out->why, sizeof(out->why),
		         "no shape with %.40s's dtype and transposes was tuned: default "
		         "configuration%.140s",
		         key, dwhy);
}

int
tunedlib_select(const struct tunedlib *lib, const struct space_def *space,
                const struct gemm_problem *p, const struct backend_device_info *dev,
                struct tunedlib_choice *out)
{
	char key[64], reason[200] = "";
	int model = costmodel_applies(space), skipped, have_dflt;
	struct pick best, near;
	struct space_point dpt;
	const struct tunedlib_entry *e;
	double dpred = 0;

	memset(out, 0, sizeof(*out));
	out->entry = -1;
	gemm_problem_key(p, key, sizeof(key));
	skipped = pick_entries(lib, space, p, dev, model, &best, &near, reason, sizeof(reason));
	have_dflt = space_default_for(space, p, dev, &dpt) == 0;
	if (best.entry < 0) {
		if (!have_dflt) {
			out->how = TUNEDLIB_DEFAULT;
			snprintf(out->why, sizeof(out->why),
			         "no configuration of the %s space is valid for %s", space->name, key);
			return ROCMD_ENOTFOUND;
		}
		choose_default(lib, space, key, &dpt, skipped, reason, out);
		return 0;
	}
	e = &lib->e[best.entry];
	if (model && best.distance > 0 && have_dflt) {
		/* The class default where the model predicts it clearly faster. */
		dpred = default_pred(lib, space, p, dev, &dpt, &near);
		if (dpred < 0.9 * best.pred) {
			choose_default(lib, space, key, &dpt, 0, "", out);
			snprintf(out->why, sizeof(out->why),
			         "%.40s was not tuned; the default is predicted faster (%.4f ms) than "
			         "the best tuned kernel (%.40s's, %.4f ms): %.60s",
			         key, dpred, e->problem, best.pred, space->dflt_why);
			return 0;
		}
	}
	out->entry = best.entry;
	out->pt = best.pt;
	out->distance = best.distance;
	out->how = best.distance == 0 ? TUNEDLIB_EXACT : TUNEDLIB_NEAREST;
	snprintf(out->config, sizeof(out->config), "%s", e->config);
	if (out->how == TUNEDLIB_EXACT)
		snprintf(out->why, sizeof(out->why), "%s was tuned: %.3f ms (default %.3f ms)", key,
		         e->winner_ms, e->default_ms);
	else if (model)
		snprintf(out->why, sizeof(out->why),
		         "%.40s was not tuned; %.40s's kernel is predicted fastest: %.4f ms (%.4f ms "
		         "measured there, distance %.2f; the default %.4f ms)",
		         key, e->problem, best.pred, e->winner_ms, best.distance, dpred);
	else
		snprintf(out->why, sizeof(out->why),
		         "%s was not tuned; the nearest tuned shape whose kernel is valid "
		         "for it is %s (distance %.2f)",
		         key, e->problem, best.distance);
	return 0;
}

/* ---- export and import ---- */

int
tunedlib_export_json(const struct tunedlib *lib, char **out, size_t *len)
{
	*out = lib_json(lib, TUNEDLIB_EXPORT_FORMAT, 0);
	*len = *out ? strlen(*out) : 0;
	return *out ? 0 : ROCMD_ENOMEM;
}

/* CSV: '#' lines name the format and the key, then a header row, then
 * problem,config,winner_ms,default_ms (configurations hold no commas). */
static const char *const csv_id_fields[] = {"backend", "arch",    "device",   "compute_units",
                                            "driver",  "runtime", "compiler", "source_hash"};

static const char *
id_field(const struct tune_key *id, int i, char *num, size_t numlen)
{
	switch (i) {
	case 0:
		return id->backend;
	case 1:
		return id->arch;
	case 2:
		return id->device;
	case 3:
		snprintf(num, numlen, "%d", id->compute_units);
		return num;
	case 4:
		return id->driver;
	case 5:
		return id->runtime;
	case 6:
		return id->compiler;
	default:
		return id->source_hash;
	}
}

/* A growing string (open_memstream is not in every C library). */
struct strbuf {
	char *buf;
	size_t len, cap;
	int oom;
};

static void __attribute__((format(printf, 2, 3)))
sb_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *g = realloc(b->buf, cap);

		if (g == NULL) {
			b->oom = 1;
			return;
		}
		b->buf = g;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

int
tunedlib_export_csv(const struct tunedlib *lib, char **out, size_t *len)
{
	struct strbuf b = {NULL, 0, 0, 0};
	char num[16];
	int i;

	*out = NULL;
	*len = 0;
	sb_addf(&b, "# format=%s\n# version=%d\n", TUNEDLIB_EXPORT_FORMAT, TUNEDLIB_VERSION);
	for (i = 0; i < 8; i++)
		sb_addf(&b, "# %s=%s\n", csv_id_fields[i], id_field(&lib->id, i, num, sizeof(num)));
	sb_addf(&b, "problem,config,winner_ms,default_ms\n");
	for (i = 0; i < lib->n; i++)
		if (!lib->e[i].vendor[0]) /* a vendor's solution is not a result of ours */
			sb_addf(&b, "%s,%s,%.9g,%.9g\n", lib->e[i].problem, lib->e[i].config,
			        lib->e[i].winner_ms, lib->e[i].default_ms);
	if (b.oom || b.buf == NULL) {
		free(b.buf);
		return ROCMD_ENOMEM;
	}
	*out = b.buf;
	*len = b.len;
	return 0;
}

/* Strict decimal: the whole field, finite. */
static int
parse_double(const char *s, double *out)
{
	char *end;

	if (*s == '\0')
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return *end == '\0' && errno == 0 && isfinite(*out) ? 0 : -1;
}

/* What parse_csv has read so far. */
struct csv_state {
	struct tune_key id;
	struct tunedlib *lib; /* made at the column header */
	int seen;             /* bit i: csv_id_fields[i] given */
	int header, have_format, have_version;
};

/* One identity field NAME=VALUE ("#" lines): 0, or an error with WHY. */
static int
csv_id_field(struct csv_state *st, const char *name, const char *value, int lineno, char *why,
             size_t whylen)
{
	struct tune_key *id = &st->id;
	static const size_t sizes[8] = {sizeof(id->backend),  sizeof(id->arch),
	                                sizeof(id->device),   0,
	                                sizeof(id->driver),   sizeof(id->runtime),
	                                sizeof(id->compiler), sizeof(id->source_hash)};
	char *dst[8] = {id->backend, id->arch,    id->device,   NULL,
	                id->driver,  id->runtime, id->compiler, id->source_hash};

	for (int i = 0; i < 8; i++) {
		if (strcmp(name, csv_id_fields[i]) != 0)
			continue;
		if (st->seen & (1 << i)) {
			snprintf(why, whylen, "line %d: '%s' given twice", lineno, name);
			return ROCMD_ECORRUPT;
		}
		st->seen |= 1 << i;
		if (i == 3) {
			double cu;

			if (parse_double(value, &cu) < 0 || cu < 0 || cu > (1 << 20) ||
			    cu != floor(cu)) {
				snprintf(why, whylen, "line %d: invalid compute_units", lineno);
				return ROCMD_ECORRUPT;
			}
			id->compute_units = (int)cu;
		} else if (strlen(value) >= sizes[i]) {
			snprintf(why, whylen, "line %d: '%s' too long", lineno, name);
			return ROCMD_ECORRUPT;
		} else {
			snprintf(dst[i], sizes[i], "%s", value);
		}
		return 0;
	}
	snprintf(why, whylen, "line %d: unknown field '%.40s'", lineno, name);
	return ROCMD_ECORRUPT;
}

/* A "# name=value" line before the column header. */
static int
csv_meta(struct csv_state *st, char *line, int lineno, char *why, size_t whylen)
{
	char *eq, *name = line + 1;
	double v;

	while (*name == ' ')
		name++;
	eq = strchr(name, '=');
	if (eq == NULL || st->header) {
		snprintf(why, whylen, "line %d: misplaced or malformed '#' line", lineno);
		return ROCMD_ECORRUPT;
	}
	*eq++ = '\0';
	if (!strcmp(name, "format")) {
		if (strcmp(eq, TUNEDLIB_EXPORT_FORMAT) != 0) {
			snprintf(why, whylen, "format '%.60s', expected '%s'", eq,
			         TUNEDLIB_EXPORT_FORMAT);
			return ROCMD_ECORRUPT;
		}
		st->have_format = 1;
		return 0;
	}
	if (!strcmp(name, "version")) {
		if (parse_double(eq, &v) < 0 || v < 1 || v != floor(v)) {
			snprintf(why, whylen, "line %d: invalid version", lineno);
			return ROCMD_ECORRUPT;
		}
		if (v > TUNEDLIB_VERSION) {
			snprintf(why, whylen, "format version %g, this build reads up to %d", v,
			         TUNEDLIB_VERSION);
			return ROCMD_EVERSION;
		}
		st->have_version = 1;
		return 0;
	}
	return csv_id_field(st, name, eq, lineno, why, whylen);
}

/* The column header: the identity is complete; the library is made. */
static int
csv_header(struct csv_state *st, const char *line, int lineno, char *why, size_t whylen)
{
	const struct tune_key *id = &st->id;

	if (strcmp(line, "problem,config,winner_ms,default_ms") != 0) {
		snprintf(why, whylen, "line %d: expected the column header", lineno);
		return ROCMD_ECORRUPT;
	}
	if (!st->have_format || !st->have_version || st->seen != 0xff) {
		snprintf(why, whylen,
		         "the '#' lines lack the format, version or a device/software field");
		return ROCMD_ECORRUPT;
	}
	if (id->backend[0] == '\0' || id->arch[0] == '\0' || id->device[0] == '\0' ||
	    !valid_hex(id->source_hash, 16)) {
		snprintf(why, whylen, "invalid backend, arch, device or source_hash");
		return ROCMD_ECORRUPT;
	}
	st->header = 1;
	return tunedlib_new(id, &st->lib);
}

/* One entry: problem,config,winner_ms,default_ms. */
static int
csv_entry(struct csv_state *st, char *line, int lineno, char *why, size_t whylen)
{
	char *f[4], *p = line, *c, msg[200];
	double wms, dms;
	int nf = 0, err;

	while (nf < 4) {
		f[nf++] = p;
		c = strchr(p, ',');
		if (c == NULL)
			break;
		*c = '\0';
		p = c + 1;
	}
	if (nf != 4 || strchr(f[3], ',') != NULL) {
		snprintf(why, whylen, "line %d: expected 4 fields", lineno);
		return ROCMD_ECORRUPT;
	}
	if (parse_double(f[2], &wms) < 0 || parse_double(f[3], &dms) < 0) {
		snprintf(why, whylen, "line %d: invalid time", lineno);
		return ROCMD_ECORRUPT;
	}
	if (tunedlib_find(st->lib, f[0]) != NULL) {
		snprintf(why, whylen, "line %d: problem %.64s listed twice", lineno, f[0]);
		return ROCMD_ECORRUPT;
	}
	if ((err = tunedlib_add(st->lib, f[0], f[1], wms, dms, msg, sizeof(msg))) < 0) {
		snprintf(why, whylen, "line %d: %s", lineno, msg);
		return err == ROCMD_ENOMEM ? err : ROCMD_ECORRUPT;
	}
	return 0;
}

static int
parse_csv(const char *data, size_t len, struct tunedlib **out, char *why, size_t whylen)
{
	struct csv_state st;
	char *text = NULL, *line, *save = NULL;
	int lineno = 0, err = ROCMD_ECORRUPT;

	*out = NULL;
	memset(&st, 0, sizeof(st));
	if (len > TUNEDLIB_MAX_INDEX || memchr(data, '\0', len) != NULL) {
		snprintf(why, whylen, "not a text file of at most %d bytes", TUNEDLIB_MAX_INDEX);
		return ROCMD_ECORRUPT;
	}
	text = malloc(len + 1);
	if (text == NULL)
		return ROCMD_ENOMEM;
	memcpy(text, data, len);
	text[len] = '\0';
	if (len == 0 || text[len - 1] != '\n') {
		snprintf(why, whylen, "the last line is cut (no final newline)");
		goto out;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);

		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (!printable(line)) {
			snprintf(why, whylen, "line %d: control characters", lineno);
			goto out;
		}
		if (line[0] == '#')
			err = csv_meta(&st, line, lineno, why, whylen);
		else if (!st.header)
			err = csv_header(&st, line, lineno, why, whylen);
		else
			err = csv_entry(&st, line, lineno, why, whylen);
		if (err < 0)
			goto out;
		err = ROCMD_ECORRUPT;
	}
	if (!st.header) {
		snprintf(why, whylen, "no column header");
		goto out;
	}
	*out = st.lib;
	st.lib = NULL;
	err = 0;
out:
	tunedlib_free(st.lib);
	free(text);
	return err;
}

/* Which identity field differs: 0 when none. */
static int
id_mismatch(const struct tune_key *a, const struct tune_key *b, char *why, size_t whylen)
{
	char na[16], nb[16];
	int i;

	for (i = 0; i < 8; i++) {
		const char *x = id_field(a, i, na, sizeof(na)), *y = id_field(b, i, nb, sizeof(nb));

		if (strcmp(x, y) != 0) {
			snprintf(why, whylen,
			         "these results are for another %s: %s '%.60s', this machine has "
			         "'%.60s'",
			         i < 4 ? "GPU" : "software", csv_id_fields[i], x, y);
			return 1;
		}
	}
	return 0;
}

int
tunedlib_import(const char *data, size_t len, const struct tune_key *local, struct tunedlib **out,
                char *why, size_t whylen)
{
	struct tunedlib *lib = NULL;
	size_t i = 0;
	int err;

	*out = NULL;
	while (i < len && isspace((unsigned char)data[i]))
		i++;
	if (i < len && data[i] == '{')
		err = parse_json(data, len, TUNEDLIB_EXPORT_FORMAT, NULL, &lib, why, whylen);
	else
		err = parse_csv(data, len, &lib, why, whylen);
	if (err < 0)
		return err;
	if (id_mismatch(&lib->id, local, why, whylen)) {
		tunedlib_free(lib);
		return ROCMD_EINVAL;
	}
	*out = lib;
	return 0;
}

int
tunedlib_to_store(const struct tunedlib *lib, struct tune_store *st, int *stored, char *why,
                  size_t whylen)
{
	struct tune_key k = lib->id;
	int i, err;

	if (stored != NULL)
		*stored = 0;
	for (i = 0; i < lib->n; i++) {
		if (lib->e[i].vendor[0])
			continue; /* its results live under the vendor backend's key */
		snprintf(k.problem, sizeof(k.problem), "%s", lib->e[i].problem);
		err = st->set_winner(st->ctx, &k, lib->e[i].config, lib->e[i].winner_ms,
		                     lib->e[i].default_ms > 0 ? lib->e[i].default_ms : INFINITY);
		if (err < 0) {
			snprintf(why, whylen, "%s: cannot store the winner (%s)", lib->e[i].problem,
			         rocmd_strerror(err));
			return err;
		}
		if (stored != NULL)
			(*stored)++;
	}
	return 0;
}
