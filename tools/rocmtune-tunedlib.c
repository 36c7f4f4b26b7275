/*
 * `rocmtune lib ...`: the tuned kernel library offline (tunedlib.h), the
 * same code the daemon runs after a tuning job:
 *
 *   rocmtune lib build  --db FILE --backend B [--device N] --out DIR [--no-code] [--hiprtc PATH]
 *   rocmtune lib show   --dir DIR [--json]
 *   rocmtune lib query  --dir DIR --shape MxNxK [--dtype fp32] [--trans NN] [--backend B]
 *   rocmtune lib export --db FILE --backend B [--device N] [--csv] [--out FILE]
 *   rocmtune lib import FILE --db FILE --backend B [--device N]
 *
 * build/export/import open the backend's device to learn the key (device and
 * software, kernel source hash) the results belong to; query opens it to get
 * the space whose predicate decides which tuned shapes are valid.
 * Exit status: 0 done, 1 failure, 2 usage, 3 backend not available.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "rocmtune.h"
#include "kernels/tunedlib.h"

struct lib_args {
	const char *cmd;
	const char *db, *backend, *out, *dir, *shape, *dtype, *trans, *hiprtc, *file;
	int device, no_code, csv, json;
};

static void
lib_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: rocmtune lib build  --db FILE --backend B [--device N] --out DIR [--no-code]\n"
	    "                           [--hiprtc PATH]\n"
	    "       rocmtune lib show   --dir DIR [--json]\n"
	    "       rocmtune lib query  --dir DIR --shape MxNxK [--dtype fp32] [--trans NN]\n"
	    "                           [--backend B]\n"
	    "       rocmtune lib export --db FILE --backend B [--device N] [--csv] [--out FILE]\n"
	    "       rocmtune lib import FILE --db FILE --backend B [--device N]\n");
}

static int
lib_parse(int argc, char **argv, struct lib_args *a)
{
	enum {
		O_DB = 256,
		O_BACKEND,
		O_OUT,
		O_DIR,
		O_SHAPE,
		O_DTYPE,
		O_TRANS,
		O_HIPRTC,
		O_DEVICE,
		O_NOCODE,
		O_CSV,
		O_JSON
	};
	static const struct option opts[] = {
	    {"db", required_argument, NULL, O_DB},
	    {"backend", required_argument, NULL, O_BACKEND},
	    {"out", required_argument, NULL, O_OUT},
	    {"dir", required_argument, NULL, O_DIR},
	    {"shape", required_argument, NULL, O_SHAPE},
	    {"dtype", required_argument, NULL, O_DTYPE},
	    {"trans", required_argument, NULL, O_TRANS},
	    {"hiprtc", required_argument, NULL, O_HIPRTC},
	    {"device", required_argument, NULL, O_DEVICE},
	    {"no-code", no_argument, NULL, O_NOCODE},
	    {"csv", no_argument, NULL, O_CSV},
	    {"json", no_argument, NULL, O_JSON},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->dtype = "fp32";
	a->trans = "NN";
	if (argc < 2)
		return -1;
	a->cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_DB:
			a->db = optarg;
			break;
		case O_BACKEND:
			a->backend = optarg;
			break;
		case O_OUT:
			a->out = optarg;
			break;
		case O_DIR:
			a->dir = optarg;
			break;
		case O_SHAPE:
			a->shape = optarg;
			break;
		case O_DTYPE:
			a->dtype = optarg;
			break;
		case O_TRANS:
			a->trans = optarg;
			break;
		case O_HIPRTC:
			a->hiprtc = optarg;
			break;
		case O_DEVICE:
			a->device = atoi(optarg);
			break;
		case O_NOCODE:
			a->no_code = 1;
			break;
		case O_CSV:
			a->csv = 1;
			break;
		case O_JSON:
			a->json = 1;
			break;
		default:
			return -1;
		}
	}
	if (!strcmp(a->cmd, "import") && optind < argc)
		a->file = argv[optind++];
	return optind == argc ? 0 : -1;
}

/* The key (device + software) of BACKEND's device INDEX; problem empty. */
static int
device_key(const char *backend, int index, struct tune_key *key)
{
	const struct backend_ops *ops = backend ? backend_find(backend) : NULL;
	struct backend_ctx *ctx = NULL;
	struct backend_device_info dev;
	struct gemm_problem p;
	char why[512] = "", hash[17];
	int err;

	if (ops == NULL) {
		fprintf(stderr, "rocmtune: --backend is required (cpu, cuda, hip)\n");
		return 2;
	}
	err = ops->open(index, &ctx, &dev, why, sizeof(why));
	if (err < 0) {
		fprintf(stderr, "rocmtune: backend %s: %s\n", backend, why);
		return err == ROCMD_EUNSUPPORTED ? 3 : 1;
	}
	backend_source_hash(ops, ctx, hash);
	ops->close(ctx);
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 1, 1, 1, 1);
	tune_key_init(key, &dev, hash, &p);
	key->problem[0] = '\0';
	return 0;
}

static int
open_db(const char *path, struct tune_store *st)
{
	char why[512] = "";
	int err;

	if (path == NULL) {
		fprintf(stderr, "rocmtune: --db FILE is required\n");
		return 2;
	}
	err = tune_db_open(path, st, why, sizeof(why));
	if (err < 0) {
		fprintf(stderr, "rocmtune: %s\n", why[0] ? why : rocmd_strerror(err));
		return 1;
	}
	return 0;
}

static int
lib_build(const struct lib_args *a)
{
	struct tune_store st;
	struct tune_key key;
	struct tunedlib *lib = NULL;
	char why[1024] = "";
	int rc, err, i, code = 0;

	if (a->out == NULL) {
		fprintf(stderr, "rocmtune: --out DIR is required\n");
		return 2;
	}
	if ((rc = device_key(a->backend, a->device, &key)) != 0)
		return rc;
	if ((rc = open_db(a->db, &st)) != 0)
		return rc;
	rc = 1;
	err = tunedlib_from_store(&st, &key, &lib, why, sizeof(why));
	tune_db_close(&st);
	if (err < 0)
		goto fail;
	if (tunedlib_count(lib) == 0) {
		snprintf(why, sizeof(why),
		         "no winners in %s for this device and software (tune first, or the "
		         "results are stale after an update)",
		         a->db);
		goto fail;
	}
	if (!a->no_code && (err = tunedlib_compile(lib, a->hiprtc, why, sizeof(why))) < 0)
		goto fail;
	if ((err = tunedlib_write(lib, a->out, why, sizeof(why))) < 0)
		goto fail;
	for (i = 0; i < tunedlib_count(lib); i++)
		code += tunedlib_entry_at(lib, i)->code != NULL;
	printf("%s: generation %" PRIu64 ", %d shapes, %d code objects%s\n", a->out,
	       tunedlib_generation(lib), tunedlib_count(lib), code,
	       !strcmp(key.backend, "cpu") ? " (cpu: the configuration is the kernel's parameters)"
	                                   : "");
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "rocmtune: %s\n", why[0] ? why : rocmd_strerror(err));
out:
	tunedlib_free(lib);
	return rc;
}

static int
lib_show(const struct lib_args *a)
{
	struct tunedlib *lib = NULL;
	const struct tune_key *id;
	char why[1024] = "";
	int i, err;

	if (a->dir == NULL) {
		fprintf(stderr, "rocmtune: --dir DIR is required\n");
		return 2;
	}
	if ((err = tunedlib_open(a->dir, &lib, why, sizeof(why))) < 0) {
		fprintf(stderr, "rocmtune: %s\n", why);
		return 1;
	}
	id = tunedlib_id(lib);
	if (a->json) {
		char *text = NULL;
		size_t len = 0;

		if (tunedlib_export_json(lib, &text, &len) == 0)
			printf("%s\n", text);
		free(text);
		tunedlib_free(lib);
		return 0;
	}
	printf("library %s generation %" PRIu64 "\n  device   %s %s %s (%d CUs)\n"
	       "  software %s | %s | %s | source %s\n",
	       a->dir, tunedlib_generation(lib), id->backend, id->arch, id->device,
	       id->compute_units, id->driver, id->runtime, id->compiler, id->source_hash);
	for (i = 0; i < tunedlib_count(lib); i++) {
		const struct tunedlib_entry *e = tunedlib_entry_at(lib, i);

		printf("  %-28s %10.4f ms", e->problem, e->winner_ms);
		if (e->default_ms > 0)
			printf(" (default %.4f ms, x%.2f)", e->default_ms,
			       e->default_ms / e->winner_ms);
		printf("  %s%s%s\n", e->config, e->code ? "  " : "", e->code ? e->code_kind : "");
	}
	tunedlib_free(lib);
	return 0;
}

static int
lib_query(const struct lib_args *a)
{
	const struct backend_ops *ops;
	struct backend_ctx *ctx = NULL;
	struct backend_device_info dev;
	struct tunedlib *lib = NULL;
	struct tunedlib_choice ch;
	struct gemm_problem p;
	enum gemm_dtype dt;
	int64_t m, n, k, b;
	char why[1024] = "";
	int err, rc = 1;

	if (a->dir == NULL || a->shape == NULL || gemm_shape_parse(a->shape, &m, &n, &k, &b) < 0 ||
	    gemm_dtype_parse(a->dtype, &dt) < 0 || strlen(a->trans) != 2 ||
	    strspn(a->trans, "NT") != 2) {
		fprintf(stderr,
		        "rocmtune: lib query needs --dir, --shape MxNxK, a dtype and NN..TT\n");
		return 2;
	}
	if ((err = tunedlib_open(a->dir, &lib, why, sizeof(why))) < 0) {
		fprintf(stderr, "rocmtune: %s\n", why);
		return 1;
	}
	ops = backend_find(a->backend ? a->backend : tunedlib_id(lib)->backend);
	if (ops == NULL || ops->open(a->device, &ctx, &dev, why, sizeof(why)) < 0) {
		fprintf(stderr, "rocmtune: backend: %s\n", ops ? why : "not in this build");
		tunedlib_free(lib);
		return 3;
	}
	gemm_problem_init(&p, dt, a->trans[0] == 'N' ? GEMM_N : GEMM_T,
	                  a->trans[1] == 'N' ? GEMM_N : GEMM_T, m, n, k, b);
	if (tunedlib_select(lib, ops->space(ctx, &p), &p, &dev, &ch) == 0) {
		printf("%s\t%s\n%s\n", tunedlib_how_name(ch.how), ch.config, ch.why);
		rc = 0;
	} else {
		fprintf(stderr, "rocmtune: %s\n", ch.why);
	}
	ops->close(ctx);
	tunedlib_free(lib);
	return rc;
}

static int
lib_export(const struct lib_args *a)
{
	struct tune_store st;
	struct tune_key key;
	struct tunedlib *lib = NULL;
	char why[1024] = "", *text = NULL;
	size_t len = 0;
	FILE *f = stdout;
	int rc, err;

	if ((rc = device_key(a->backend, a->device, &key)) != 0)
		return rc;
	if ((rc = open_db(a->db, &st)) != 0)
		return rc;
	err = tunedlib_from_store(&st, &key, &lib, why, sizeof(why));
	tune_db_close(&st);
	if (err == 0)
		err = a->csv ? tunedlib_export_csv(lib, &text, &len)
		             : tunedlib_export_json(lib, &text, &len);
	if (err == 0 && a->out != NULL && (f = fopen(a->out, "w")) == NULL)
		err = ROCMD_EIO;
	if (err == 0) {
		fwrite(text, 1, len, f);
		if (!a->csv)
			fputc('\n', f);
		if (f != stdout && fclose(f) != 0)
			err = ROCMD_EIO;
	}
	if (err < 0)
		fprintf(stderr, "rocmtune: %s\n", why[0] ? why : rocmd_strerror(err));
	else
		fprintf(stderr, "rocmtune: exported %d results\n", tunedlib_count(lib));
	free(text);
	tunedlib_free(lib);
	return err < 0 ? 1 : 0;
}

static int
lib_import(const struct lib_args *a)
{
	struct tune_store st;
	struct tune_key key;
	struct tunedlib *lib = NULL;
	char why[1024] = "", *data = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int rc, err, n = 0;

	if (a->file == NULL) {
		fprintf(stderr, "rocmtune: lib import FILE\n");
		return 2;
	}
	if ((rc = device_key(a->backend, a->device, &key)) != 0)
		return rc;
	f = fopen(a->file, "r");
	if (f == NULL) {
		perror(a->file);
		return 1;
	}
	for (;;) {
		size_t r;

		if (len == cap) {
			char *nd;

			cap = cap ? cap * 2 : 65536;
			if (cap > (size_t)TUNEDLIB_MAX_INDEX + 1 ||
			    (nd = realloc(data, cap)) == NULL)
				break;
			data = nd;
		}
		r = fread(data + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);
	err = tunedlib_import(data ? data : "", len, &key, &lib, why, sizeof(why));
	free(data);
	if (err < 0) {
		fprintf(stderr, "rocmtune: %s: %s\n", a->file, why);
		return 1;
	}
	if ((rc = open_db(a->db, &st)) != 0) {
		tunedlib_free(lib);
		return rc;
	}
	err = tunedlib_to_store(lib, &st, &n, why, sizeof(why));
	tune_db_close(&st);
	tunedlib_free(lib);
	if (err < 0) {
		fprintf(stderr, "rocmtune: %s\n", why);
		return 1;
	}
	printf("imported %d results into %s\n", n, a->db);
	return 0;
}

int
rocmtune_lib(int argc, char **argv)
{
	struct lib_args a;

	if (lib_parse(argc, argv, &a) < 0) {
		lib_usage(stderr);
		return 2;
	}
	if (!strcmp(a.cmd, "build"))
		return lib_build(&a);
	if (!strcmp(a.cmd, "show"))
		return lib_show(&a);
	if (!strcmp(a.cmd, "query"))
		return lib_query(&a);
	if (!strcmp(a.cmd, "export"))
		return lib_export(&a);
	if (!strcmp(a.cmd, "import"))
		return lib_import(&a);
	lib_usage(!strcmp(a.cmd, "help") ? stdout : stderr);
	return !strcmp(a.cmd, "help") ? 0 : 2;
}
