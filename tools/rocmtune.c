/*
 * rocmtune: the tuner without the daemon, as fwupdtool is to fwupd.
 *
 *   rocmtune run --backend cpu --shape 1024x1024x1024 --dtype fp32 --strategy ga --budget 200
 *            [--trans NN] [--db FILE] [--seconds S] [--seed N] [--record FILE.csv]
 *            [--fix NAME=V]... [--timeout MS] [--runs N] [--warmup MS] [--topk K] [--retime R]
 *            [--no-isolate] [--no-seeds] [--json] [--quiet]
 *   rocmtune replay --landscape FILE --strategy S[,S...] [--runs 50] [--budget B] [--seed N] [--json]
 *   rocmtune space --backend cpu [--shape ...] [--dtype ...] [--fix NAME=V]... [--list N] [--json]
 *   rocmtune lib build|show|query|export|import ...   the tuned kernel library (rocmtune-tunedlib.c)
 *
 * Progress goes to stderr, results to stdout (a JSON object with --json).
 * Exit status: 0 done, 1 failure, 2 usage, 3 backend not available.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/spawn.h"
#include "kernels/backend.h"
#include "rocmtune.h"
#include "kernels/tune.h"
#include "version.h"

extern const struct cli_prog rocmtune_prog; /* rocmtune-table.c */

#define MAX_FIX 16

struct args {
	const char *cmd;
	const char *backend;
	const char *shape;
	const char *dtype;
	const char *trans;
	const char *strategy;
	const char *db;
	const char *record;
	const char *landscape;
	const char *fix[MAX_FIX];
	int nfix;
	int budget;
	double seconds;
	uint64_t seed;
	int runs;
	double timeout_ms;
	double warmup_ms;
	int topk;
	int retime;
	int isolate;
	int no_seeds;
	int json;
	int quiet;
	int list;
	int device;
	double alpha, beta;
	const char *library, *tensile_dir, *sysroot; /* vendor-solution backends */
};

static volatile int cancel_flag;

static void
on_signal(int sig)
{
	cancel_flag = 1;
}

/* The arguments from the command table (rocmtune-table.c): 0, or the exit
 * code of a usage error (2) or of --help and --version (0, printed) as
 * 1000 + code. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	static const struct {
		const char *name;
		int kind; /* 0 string, 1 int, 2 double */
		size_t off;
	} map[] = {
	    {"backend", 0, offsetof(struct args, backend)},
	    {"shape", 0, offsetof(struct args, shape)},
	    {"dtype", 0, offsetof(struct args, dtype)},
	    {"trans", 0, offsetof(struct args, trans)},
	    {"strategy", 0, offsetof(struct args, strategy)},
	    {"db", 0, offsetof(struct args, db)},
	    {"record", 0, offsetof(struct args, record)},
	    {"landscape", 0, offsetof(struct args, landscape)},
	    {"library", 0, offsetof(struct args, library)},
	    {"tensile-dir", 0, offsetof(struct args, tensile_dir)},
	    {"sysroot", 0, offsetof(struct args, sysroot)},
	    {"budget", 1, offsetof(struct args, budget)},
	    {"runs", 1, offsetof(struct args, runs)},
	    {"topk", 1, offsetof(struct args, topk)},
	    {"retime", 1, offsetof(struct args, retime)},
	    {"list", 1, offsetof(struct args, list)},
	    {"device", 1, offsetof(struct args, device)},
	    {"seconds", 2, offsetof(struct args, seconds)},
	    {"timeout", 2, offsetof(struct args, timeout_ms)},
	    {"warmup", 2, offsetof(struct args, warmup_ms)},
	    {"alpha", 2, offsetof(struct args, alpha)},
	    {"beta", 2, offsetof(struct args, beta)},
	};
	struct cli_args c;
	char why[512];
	const char *v;
	int rc = cli_parse(&rocmtune_prog, argc, argv, &c, why, sizeof(why));

	memset(a, 0, sizeof(*a));
	a->backend = "cpu";
	a->dtype = "fp32";
	a->trans = "NN";
	a->seed = 1;
	a->alpha = 1.0;
	a->beta = 0.0;
	if (rc == CLI_USAGE) {
		fprintf(stderr, "rocmtune: %s\nSee 'rocmtune --help'.\n", why);
		return 2;
	}
	if (rc == CLI_HELP || cli_has(&c, "version")) {
		if (rc == CLI_HELP)
			cli_help(&c, stdout);
		else
			printf("rocmtune %s\n", ROCMD_VERSION_STRING);
		return 1000;
	}
	a->cmd = cli_cmd_of(&c)->name;
	if (c.depth > 1) /* rocmtune lib ...: rocmtune-tunedlib.c reads its own */
		return 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		char *field = (char *)a + map[i].off;
		if ((v = cli_str(&c, map[i].name, NULL)) == NULL)
			continue;
		if (map[i].kind == 0)
			memcpy(field, &v, sizeof(v));
		else if (map[i].kind == 1)
			*(int *)(void *)field = atoi(v);
		else
			*(double *)(void *)field = atof(v);
	}
	a->seed = strtoull(cli_str(&c, "seed", "1"), NULL, 10);
	a->isolate = cli_has(&c, "no-isolate") ? -1 : 0;
	a->no_seeds = cli_has(&c, "no-seeds");
	a->json = cli_has(&c, "json");
	a->quiet = cli_has(&c, "quiet");
	for (int i = 0; (v = cli_nth(&c, "fix", i)) != NULL; i++) {
		if (a->nfix >= MAX_FIX) {
			fprintf(stderr, "rocmtune: at most %d --fix\n", MAX_FIX);
			return 2;
		}
		a->fix[a->nfix++] = v;
	}
	return 0;
}

static int
build_problem(const struct args *a, struct gemm_problem *p)
{
	enum gemm_dtype dt;
	int64_t m, n, k, b;

	if (a->shape == NULL) {
		fprintf(stderr, "rocmtune: --shape MxNxK is required\n");
		return ROCMD_EINVAL;
	}
	if (gemm_shape_parse(a->shape, &m, &n, &k, &b) < 0) {
		fprintf(stderr, "rocmtune: bad --shape '%s' (want MxNxK or MxNxK:bBATCH)\n",
			a->shape);
		return ROCMD_EINVAL;
	}
	if (gemm_dtype_parse(a->dtype, &dt) < 0) {
		fprintf(stderr, "rocmtune: bad --dtype '%s' (fp32, fp16 or bf16)\n", a->dtype);
		return ROCMD_EINVAL;
	}
	if (strlen(a->trans) != 2 || strspn(a->trans, "NT") != 2) {
		fprintf(stderr, "rocmtune: bad --trans '%s' (NN, NT, TN or TT)\n", a->trans);
		return ROCMD_EINVAL;
	}
	gemm_problem_init(p, dt, a->trans[0] == 'N' ? GEMM_N : GEMM_T,
			  a->trans[1] == 'N' ? GEMM_N : GEMM_T, m, n, k, b);
	p->alpha = (float)a->alpha;
	p->beta = (float)a->beta;
	return 0;
}

static int
apply_fixes(const struct args *a, struct space_def *s)
{
	int i;

	for (i = 0; i < a->nfix; i++) {
		char name[SPACE_NAME_MAX];
		const char *eq = strchr(a->fix[i], '=');
		int err;

		if (eq == NULL || eq - a->fix[i] >= SPACE_NAME_MAX) {
			fprintf(stderr, "rocmtune: bad --fix '%s' (want NAME=VALUE)\n", a->fix[i]);
			return ROCMD_EINVAL;
		}
		memcpy(name, a->fix[i], eq - a->fix[i]);
		name[eq - a->fix[i]] = '\0';
		err = space_fix(s, name, strtoll(eq + 1, NULL, 10));
		if (err < 0) {
			fprintf(stderr, "rocmtune: --fix %s: %s\n", a->fix[i],
				err == ROCMD_ENOTFOUND ? "no such parameter in this space"
						       : "value not in the parameter's list");
			return err;
		}
	}
	return 0;
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
progress(void *ctx, const struct tune_progress *pr)
{
	const struct args *a = ctx;

	if (a->quiet)
		return;
	if (pr->r->outcome == TUNE_OK)
		fprintf(stderr, "[%4d/%d]%s ok %10.4f ms %8.2f GFLOP/s  %s  (best %.4f ms)\n",
			pr->evals, pr->budget, pr->from_store ? " (stored)" : "", pr->r->median_ms,
			pr->r->gflops, pr->config, pr->best_ms);
	else
		fprintf(stderr, "[%4d/%d]%s %s  %s: %s\n", pr->evals, pr->budget,
			pr->from_store ? " (stored)" : "", tune_outcome_name(pr->r->outcome),
			pr->config, pr->r->detail);
}

/* The result of a run as one JSON object on stdout (rocmtune run --json). */
static void
print_run_json(const struct tune_key *key, const struct backend_device_info *dev,
               const struct tune_opts *o, const struct tune_summary *sum, int64_t stored_before)
{
	int i;

	printf("{\"problem\":");
	json_str(stdout, key->problem);
	printf(",\"backend\":");
	json_str(stdout, dev->backend);
	printf(",\"device\":");
	json_str(stdout, dev->name);
	printf(",\"arch\":");
	json_str(stdout, dev->arch);
	printf(",\"source_hash\":\"%s\",\"strategy\":", key->source_hash);
	json_str(stdout, o->strategy ? o->strategy : "ga");
	printf(",\"evaluations\":%d,\"measured\":%d,\"from_store\":%d,\"stored_before\":%" PRId64,
	       sum->evals, sum->measured, sum->from_store, stored_before);
	printf(",\"outcomes\":{");
	for (i = 0; i < TUNE_OUTCOME_COUNT; i++)
		printf("%s\"%s\":%d", i ? "," : "", tune_outcome_name(i), sum->outcomes.n[i]);
	printf("},\"best\":");
	json_str(stdout, sum->best);
	printf(",\"best_ms\":%.6g,\"gflops\":%.4g,\"default\":",
	       isfinite(sum->best_ms) ? sum->best_ms : -1.0, sum->gflops);
	json_str(stdout, sum->default_key);
	printf(",\"default_ms\":%.6g,\"speedup\":%.4g,\"evals_to_best\":%d,\"cancelled\":%s",
	       isfinite(sum->default_ms) ? sum->default_ms : -1.0,
	       isfinite(sum->default_ms) && isfinite(sum->best_ms) ? sum->default_ms / sum->best_ms
								 : -1.0,
	       sum->evals_to_best, cancel_flag ? "true" : "false");
	/* The winner beat the default by more than the re-timing's spread. */
	printf(",\"beats_spread\":%s", strcmp(sum->best, sum->default_key) != 0 &&
					   sum->best_hi_ms < sum->default_lo_ms
				       ? "true"
				       : "false");
	if (dev->library_digest[0]) {
		printf(",\"library\":");
		json_str(stdout, dev->library);
		printf(",\"library_digest\":\"%s\"", dev->library_digest);
	}
	printf("}\n");
}

static int
cmd_run(const struct args *a)
{
	const struct backend_ops *ops = backend_find(a->backend);
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev = NULL;
	struct backend_device_info dev;
	struct space_def space;
	struct tune_key key;
	struct tune_store store;
	struct tune_opts o;
	struct tune_summary sum;
	char hash[17], why[512] = "";
	FILE *rec = NULL;
	int err, have_store = 0, i, ret = 1;
	int64_t stored_before = 0;

	if (ops == NULL) {
		fprintf(stderr, "rocmtune: unknown backend '%s' (this build has:", a->backend);
		for (i = 0; backend_list()[i] != NULL; i++)
			fprintf(stderr, " %s", backend_list()[i]->name);
		fprintf(stderr, ")\n");
		return 2;
	}
	if (build_problem(a, &p) < 0)
		return 2;
	if (gemm_problem_check(&p, why, sizeof(why)) < 0) {
		fprintf(stderr, "rocmtune: %s\n", why);
		return 2;
	}
	if (a->strategy != NULL && tune_strategy_find(a->strategy) == NULL) {
		fprintf(stderr, "rocmtune: unknown strategy '%s'\n", a->strategy);
		return 2;
	}
	memset(&mo, 0, sizeof(mo));
	mo.runs = a->runs;
	mo.timeout_ms = a->timeout_ms;
	mo.warmup_ms = a->warmup_ms;
	mo.isolate = a->isolate;
	mo.seed = 1;
	snprintf(mo.library, sizeof(mo.library), "%s", a->library ? a->library : "");
	snprintf(mo.tensile_dir, sizeof(mo.tensile_dir), "%s", a->tensile_dir ? a->tensile_dir : "");
	snprintf(mo.sysroot, sizeof(mo.sysroot), "%s", a->sysroot ? a->sysroot : "");
	err = tune_evaluator_open(ops, a->device, &p, &mo, &ev, &dev, &space, hash, why,
				  sizeof(why));
	if (err < 0) {
		fprintf(stderr, "rocmtune: backend %s: %s\n", a->backend,
			why[0] ? why : rocmd_strerror(err));
		return err == ROCMD_EUNSUPPORTED ? 3 : 1;
	}
	if (apply_fixes(a, &space) < 0) {
		ret = 2;
		goto out;
	}
	tune_key_init(&key, &dev, hash, &p);
	if (!a->quiet)
		fprintf(stderr, "rocmtune: %s on %s (%s, %d CUs), space %s of %" PRIu64 " points\n",
			key.problem, dev.name, dev.arch, dev.compute_units, space.name,
			space_size(&space));
	if (a->db != NULL) {
		err = tune_db_open(a->db, &store, why, sizeof(why));
		if (err < 0) {
			fprintf(stderr, "rocmtune: %s: %s\n", a->db, why[0] ? why : rocmd_strerror(err));
			goto out;
		}
		have_store = 1;
		if (store.count(store.ctx, &key, &stored_before) == 0 && stored_before > 0 &&
		    !a->quiet)
			fprintf(stderr, "rocmtune: resuming: %" PRId64 " evaluations stored\n",
				stored_before);
	}
	if (a->record != NULL) {
		struct stat stt;
		int fresh = stat(a->record, &stt) != 0 || stt.st_size == 0;

		rec = fopen(a->record, "a");
		if (rec == NULL) {
			fprintf(stderr, "rocmtune: %s: %s\n", a->record, strerror(errno));
			goto out;
		}
		if (fresh)
			tune_landscape_write_header(rec, &key, &space);
	}
	memset(&o, 0, sizeof(o));
	/* A vendor library's short candidate list is searched exhaustively. */
	o.strategy = a->strategy != NULL ? a->strategy
	             : ops->vendor      ? tune_strategy_for(&space, a->budget > 0 ? a->budget : 100, "sar")
	                                : NULL;
	o.budget = a->budget;
	o.seconds = a->seconds;
	o.seed = a->seed;
	o.topk = a->topk;
	o.retime_rounds = a->retime;
	o.no_seeds = a->no_seeds;
	o.store = have_store ? &store : NULL;
	o.record = rec;
	o.cancel = &cancel_flag;
	o.progress = progress;
	o.progress_ctx = (void *)a;
	err = tune_run(ev, &key, &space, &p, &dev, &o, &sum, why, sizeof(why));
	if (err == ROCMD_ECANCELED && !a->quiet)
		fprintf(stderr, "rocmtune: %s; run again to resume\n", why);
	if (err < 0 && err != ROCMD_ECANCELED) {
		fprintf(stderr, "rocmtune: %s (%s)\n", why[0] ? why : "tuning failed",
			rocmd_strerror(err));
		goto out;
	}
	if (a->json) {
		print_run_json(&key, &dev, &o, &sum, stored_before);
	} else {
		printf("problem   %s\ndevice    %s (%s)\nevaluated %d (%d measured, %d from the store)\n",
		       key.problem, dev.name, dev.arch, sum.evals, sum.measured, sum.from_store);
		printf("outcomes ");
		for (i = 0; i < TUNE_OUTCOME_COUNT; i++)
			if (sum.outcomes.n[i])
				printf(" %s=%d", tune_outcome_name(i), sum.outcomes.n[i]);
		printf("\nbest      %s\n          %.4f ms, %.2f GFLOP/s (found at evaluation %d)\n",
		       sum.best, sum.best_ms, sum.gflops, sum.evals_to_best);
		if (isfinite(sum.default_ms) && isfinite(sum.best_ms))
			printf("default   %s\n          %.4f ms: tuned is %.2fx faster\n",
			       sum.default_key, sum.default_ms, sum.default_ms / sum.best_ms);
	}
	ret = cancel_flag ? 130 : 0;
out:
	if (rec != NULL)
		fclose(rec);
	if (have_store)
		tune_db_close(&store);
	tune_evaluator_close(ev);
	return ret;
}

static int
cmd_replay(const struct args *a)
{
	struct tune_landscape *l = NULL;
	char why[512] = "", list[256];
	char *save = NULL, *name;
	int budget, first = 1, ret = 0;

	if (a->landscape == NULL) {
		fprintf(stderr, "rocmtune: --landscape FILE is required\n");
		return 2;
	}
	if (tune_landscape_load(a->landscape, &l, why, sizeof(why)) < 0) {
		fprintf(stderr, "rocmtune: %s\n", why);
		return 1;
	}
	budget = a->budget > 0 ? a->budget : 500;
	snprintf(list, sizeof(list), "%s", a->strategy ? a->strategy : "random,ls,ga,sa");
	if (!a->quiet)
		fprintf(stderr,
			"rocmtune: %s: %" PRId64 " entries, best %.4f ms; %d runs of %d evaluations\n",
			tune_landscape_problem(l), tune_landscape_count(l), tune_landscape_best(l),
			a->runs > 0 ? a->runs : 50, budget);
	if (a->json)
		printf("{\"landscape\":\"%s\",\"problem\":\"%s\",\"entries\":%" PRId64
		       ",\"best_ms\":%.6g,\"runs\":%d,\"budget\":%d,\"seed\":%" PRIu64
		       ",\"strategies\":[",
		       a->landscape, tune_landscape_problem(l), tune_landscape_count(l),
		       tune_landscape_best(l), a->runs > 0 ? a->runs : 50, budget, a->seed);
	else
		printf("%-10s %8s %8s %8s %9s %10s %18s\n", "strategy", "to90%", "to95%", "to99%",
		       "reach95", "final", "trace hash");
	for (name = strtok_r(list, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
		struct tune_replay_stats st;
		int err = tune_replay(l, name, a->runs > 0 ? a->runs : 50, budget, a->seed, &st,
				      why, sizeof(why));

		if (err < 0) {
			fprintf(stderr, "rocmtune: %s\n", why);
			ret = err == ROCMD_EINVAL ? 2 : 1;
			break;
		}
		if (a->json) {
			printf("%s{\"strategy\":\"%s\",\"median_evals_to\":{\"90\":%g,\"95\":%g,"
			       "\"99\":%g},\"reached\":{\"90\":%.3f,\"95\":%.3f,\"99\":%.3f},"
			       "\"mean_final\":%.4f,\"trace_hash\":\"%016" PRIx64 "\"}",
			       first ? "" : ",", name, st.median_to[0], st.median_to[1],
			       st.median_to[2], st.reached[0], st.reached[1], st.reached[2],
			       st.mean_final, st.trace_hash);
		} else {
			printf("%-10s %8g %8g %8g %8.0f%% %10.4f   %016" PRIx64 "\n", name,
			       st.median_to[0], st.median_to[1], st.median_to[2],
			       st.reached[1] * 100, st.mean_final, st.trace_hash);
		}
		first = 0;
	}
	if (a->json)
		printf("]}\n");
	tune_landscape_free(l);
	return ret;
}

static int
cmd_space(const struct args *a)
{
	const struct backend_ops *ops = backend_find(a->backend);
	struct backend_ctx *ctx = NULL;
	struct backend_device_info dev;
	struct gemm_problem p;
	struct space_def space;
	struct space_point pt;
	char why[512] = "", key[SPACE_KEY_MAX], reason[160];
	uint64_t size, i, valid = 0;
	int listed = 0, err, k;
	struct args b = *a;

	if (ops == NULL) {
		fprintf(stderr, "rocmtune: unknown backend '%s'\n", a->backend);
		return 2;
	}
	if (b.shape == NULL)
		b.shape = "1024x1024x1024";
	if (build_problem(&b, &p) < 0)
		return 2;
	err = ops->open(a->device, &ctx, &dev, why, sizeof(why));
	if (err < 0) {
		fprintf(stderr, "rocmtune: backend %s: %s\n", a->backend, why);
		return err == ROCMD_EUNSUPPORTED ? 3 : 1;
	}
	space = *ops->space(ctx, &p);
	if (apply_fixes(a, &space) < 0) {
		ops->close(ctx);
		return 2;
	}
	size = space_size(&space);
	if (a->json)
		printf("{\"backend\":\"%s\",\"space\":\"%s\",\"params\":{", a->backend, space.name);
	else
		printf("space %s (backend %s, device %s)\n", space.name, a->backend, dev.name);
	for (k = 0; k < space.nparams; k++) {
		char line[512];

		space_param_line(&space.params[k], line, sizeof(line));
		if (a->json) {
			int v;

			printf("%s\"%s\":[", k ? "," : "", space.params[k].name);
			for (v = 0; v < space.params[k].nvalues; v++)
				printf("%s%" PRId64, v ? "," : "", space.params[k].values[v]);
			printf("]");
		} else {
			printf("  %s\n", line);
		}
	}
	if (a->json)
		printf("},\"list\":[");
	for (i = 0; i < size; i++) {
		space_point_from_index(&space, i, &pt);
		if (!space_valid(&space, &pt, &p, &dev, reason, sizeof(reason)))
			continue;
		valid++;
		if (listed < a->list) {
			space_key(&space, &pt, key, sizeof(key));
			if (a->json)
				printf("%s\"%s\"", listed ? "," : "", key);
			else
				printf("%s\n", key);
			listed++;
		}
	}
	if (a->json)
		printf("],\"points\":%" PRIu64 ",\"valid\":%" PRIu64 "}\n", size, valid);
	else
		printf("points %" PRIu64 ", valid for %s on this device: %" PRIu64 "\n", size,
		       b.shape, valid);
	ops->close(ctx);
	return 0;
}

int
main(int argc, char **argv)
{
	struct args a;
	int rc;

	/* The evaluation process is this program again (kernels/measure-proc.c),
	 * the file that runs now (common/spawn.h). */
	rocmd_self_init();
	if ((rc = tune_evaluator_child(argc, argv)) >= 0)
		return rc;
	if ((rc = parse_args(argc, argv, &a)) != 0)
		return rc >= 1000 ? rc - 1000 : rc;
	if (argc >= 2 && !strcmp(argv[1], "lib"))
		return rocmtune_lib(argc - 1, argv + 1);
	if (!strcmp(a.cmd, "bench-run"))
		return rocmtune_bench_run(argc, argv);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!strcmp(a.cmd, "run"))
		return cmd_run(&a);
	if (!strcmp(a.cmd, "replay"))
		return cmd_replay(&a);
	if (!strcmp(a.cmd, "space"))
		return cmd_space(&a);
	return 2; /* the table has no other command */
}
