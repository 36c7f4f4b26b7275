/*
 * The tuner: measurement of one configuration, the results store interface,
 * search strategies, landscapes and replay, and the tuning session that ties
 * them together. rocmtune and the daemon's tune scheduler are its users.
 *
 * A tuning session for one (device, software, problem):
 *   1. tune_evaluator_open() opens the backend, normally in a child process
 *      (isolation: a candidate that crashes or hangs kills the child, not us;
 *      the parent never initializes a GPU runtime);
 *   2. the seed set is evaluated: the default configuration, previous winners
 *      of this shape (also under an older driver, SDK or kernel source), the
 *      winners of the nearest shapes;
 *   3. a strategy proposes points; each is checked against the space's
 *      predicate (free), looked up in the store (a finished evaluation is never
 *      repeated), else measured and recorded before the next one starts;
 *   4. the top K and the default are re-timed interleaved and the winner,
 *      never slower than the default, is recorded.
 */
#ifndef ROCMD_KERNELS_TUNE_H
#define ROCMD_KERNELS_TUNE_H

#include <stdint.h>
#include <stdio.h>

#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/space.h"

enum tune_outcome {
	TUNE_OK = 0,
	TUNE_COMPILE_FAILED,
	TUNE_LAUNCH_FAILED,
	TUNE_WRONG_RESULT,
	TUNE_TIMEOUT,
	TUNE_RULED_OUT, /* by the predicate or by the compiled kernel's resources */
	TUNE_CRASHED,
	TUNE_OUTCOME_COUNT
};

const char *tune_outcome_name(enum tune_outcome o); /* "ok", "compile_failed", ... */
/*
 * Outcomes that rocmd's own host code decides as much as the kernel does (the
 * compile options, the loader's resource opt-ins, the space's rules), so that a
 * newer rocmd may decide them otherwise: compile_failed, launch_failed and
 * ruled_out. The tuning key does not name the rocmd build, so a stored one is
 * evaluated again and its new result replaces it. The others (wrong result,
 * timeout, crash) are the kernel's own and stay.
 */
int tune_outcome_retried(enum tune_outcome o);
int tune_outcome_parse(const char *s, enum tune_outcome *out);

struct tune_result {
	enum tune_outcome outcome;
	double median_ms, p20_ms, p80_ms; /* ok only; 0 otherwise */
	int runs;
	double gflops;
	char detail[200]; /* why it failed, or the worst error seen */
};

/* Everything that identifies an evaluation except the configuration. */
struct tune_key {
	char backend[16];
	char arch[32];
	char device[128];
	int compute_units;
	char driver[64];
	char runtime[64];
	char compiler[64];
	char source_hash[17];
	char problem[128]; /* gemm_problem_key(); a vendor job's adds its layout (vendor.h) */
};

void tune_key_init(struct tune_key *k, const struct backend_device_info *dev,
		   const char *source_hash, const struct gemm_problem *p);

/*
 * The results store: how the tuner reaches persistence without knowing it.
 * db/db-tune.c implements it on SQLite; tune_store_mem_*() in memory.
 * lookup returns 0 and fills OUT, or ROCMD_ENOTFOUND. record of a key that
 * exists returns ROCMD_EEXISTS, unless the stored outcome is one that
 * tune_outcome_retried() names: that one is replaced. winners calls CB for the declared winner of
 * every problem on the same device (backend, arch, name, compute units) and,
 * unless ANY_SOFTWARE, the same software; CB returning non-zero stops the walk.
 * With ANY_SOFTWARE the winners of earlier drivers, SDKs and kernel sources
 * come too: stale as results, good as seeds after an upgrade.
 */
typedef int (*tune_winner_cb)(void *cbctx, const char *problem, const char *config,
			      double median_ms);
struct tune_store {
	void *ctx;
	int (*lookup)(void *ctx, const struct tune_key *key, const char *config,
		      struct tune_result *out);
	int (*record)(void *ctx, const struct tune_key *key, const char *config,
		      const struct tune_result *r);
	int (*set_winner)(void *ctx, const struct tune_key *key, const char *config,
			  double median_ms, double default_ms);
	int (*winners)(void *ctx, const struct tune_key *key, int any_software, tune_winner_cb cb,
		       void *cbctx);
	/* Finished evaluations stored for this key (any config). */
	int (*count)(void *ctx, const struct tune_key *key, int64_t *n);
	/* Optional (may be NULL): the default's time given to set_winner with the
	 * winner of KEY's problem, or ROCMD_ENOTFOUND. The tuned library keeps it. */
	int (*winner_default)(void *ctx, const struct tune_key *key, double *default_ms);
};

int tune_store_mem_new(struct tune_store *out);
void tune_store_mem_free(struct tune_store *st);

/* Measurement options; zero fields take the defaults in brackets. */
struct tune_measure_opts {
	double warmup_ms;  /* [30] warm-up by time before the timed runs */
	int runs;	   /* [9] timed runs: median, p20, p80 */
	double timeout_ms; /* [10000] one evaluation, compile included */
	int max_sets;	   /* [16] input sets rotated so timed runs miss the cache */
	int burst;	   /* [by the warm-up's pace] calls a timed run enqueues back to back */
	uint64_t seed;	   /* [1] input data */
	int isolate;	   /* 1: child process with a watchdog (default), -1: in process */
	/* Optional: once non-zero, a wait for the evaluation process (opening
	 * or measuring) ends within 10 ms with ROCMD_ECANCELED and that process
	 * is killed and reaped in the background. A GPU context's teardown takes
	 * ~250 ms (H200) after SIGKILL, with no kernel of ours left to run: the
	 * daemon's yield does not wait for it. NULL: wait as long as it takes. */
	volatile int *cancel;
	/* Vendor-solution backends (kernels/vendor.h): the library file of the
	 * target, its Tensile library folder when not the one beside it, and
	 * where /sys is read; "" for the defaults. */
	char library[512];
	char tensile_dir[512];
	char sysroot[256];
};

#define TUNE_EVAL_TIME_ONLY 1 /* skip the correctness check (re-timing) */

struct tune_evaluator;
/*
 * Opens device INDEX of backend OPS for problem P. *DEV and *SPACE describe
 * what was opened. ROCMD_EUNSUPPORTED with "not available: ..." in WHY when
 * the backend cannot run here.
 */
int tune_evaluator_open(const struct backend_ops *ops, int index, const struct gemm_problem *p,
			const struct tune_measure_opts *o, struct tune_evaluator **out,
			struct backend_device_info *dev, struct space_def *space,
			char source_hash[17], char *why, size_t whylen);
/* Measures the configuration KEY (space_key form). Failures of the candidate
 * are outcomes in R, not errors; errors are the harness's own. */
int tune_evaluator_eval(struct tune_evaluator *ev, const char *key, int flags,
			struct tune_result *r);
/* Kills the evaluation in flight now (safe from another thread or a signal
 * handler): the daemon yields the GPU the moment the user returns. Set the
 * run's cancel flag first, so that the killed evaluation is not recorded. */
void tune_evaluator_abort(struct tune_evaluator *ev);
void tune_evaluator_close(struct tune_evaluator *ev);
/*
 * The evaluation process is the calling program started again with a hidden
 * first argument (measure-proc.c). Every program that opens an
 * isolated evaluator calls this first thing in main(): it returns -1 when ARGV
 * is not such a command line, else the process's exit code once the
 * evaluation process is done. An evaluator opened by a program that did not
 * call it fails to start, saying so.
 */
int tune_evaluator_child(int argc, char **argv);

/* A landscape: every evaluation of one problem, for replay. CSV with a '#'
 * header naming the backend, device, problem and the space's parameters. */
struct tune_landscape;
int tune_landscape_load(const char *path, struct tune_landscape **out, char *why, size_t whylen);
/* The same from memory (fuzzing, tests). */
int tune_landscape_load_buf(const char *data, size_t len, struct tune_landscape **out, char *why,
			    size_t whylen);
void tune_landscape_free(struct tune_landscape *l);
const struct space_def *tune_landscape_space(const struct tune_landscape *l);
const char *tune_landscape_problem(const struct tune_landscape *l);
/* Number of entries, and the best ok median (ms). */
int64_t tune_landscape_count(const struct tune_landscape *l);
double tune_landscape_best(const struct tune_landscape *l);
/* Entry I (0 <= I < count): its key and result; ROCMD_ENOTFOUND past the end. */
int tune_landscape_entry(const struct tune_landscape *l, int64_t i, const char **key,
			 struct tune_result *r);
/* 0 and *R, or ROCMD_ENOTFOUND. */
int tune_landscape_get(const struct tune_landscape *l, const char *key, struct tune_result *r);
/* Writing: the header once, then one line per evaluation (flushed). */
int tune_landscape_write_header(FILE *f, const struct tune_key *key, const struct space_def *s);
int tune_landscape_write_entry(FILE *f, const char *config, const struct tune_result *r);

/* Strategies by name: "exhaustive", "random", "ls" (greedy multi-start local
 * search), "ga" (genetic), "sa" (simulated annealing), "sar" (a line pass,
 * then annealing with wide steps and restarts), "surr" (line passes, a joint
 * search of the short-listed parameters, then a pairwise surrogate model). */
struct tune_search;
typedef int (*tune_strategy_fn)(struct tune_search *s);
tune_strategy_fn tune_strategy_find(const char *name);
/* The strategy to search SPACE with in BUDGET evaluations: "exhaustive" when
 * every point fits in the budget (a vendor library's short candidate list),
 * else PREFERRED. */
const char *tune_strategy_for(const struct space_def *space, int budget, const char *preferred);
const char *const *tune_strategy_names(void);

struct tune_progress {
	int evals, budget;
	const char *config;
	const struct tune_result *r;
	int from_store; /* 1 when the result came from the store, not a measurement */
	double best_ms;
};

struct tune_opts {
	const char *strategy; /* ["ga"] */
	int budget;	      /* evaluations, seed set included [100] */
	double seconds;	      /* wall-clock budget, 0: none */
	uint64_t seed;	      /* [1] */
	int topk;	      /* [3] re-timed before a winner is declared; -1: none */
	int retime_rounds;    /* [4] */
	int no_seeds;	      /* 1: skip the seed set (default config still first) */
	struct tune_store *store;   /* may be NULL */
	FILE *record;		    /* landscape output, may be NULL */
	volatile int *cancel;	    /* set non-zero to stop */
	void (*progress)(void *ctx, const struct tune_progress *pr);
	void *progress_ctx;
};

struct tune_outcome_counts {
	int n[TUNE_OUTCOME_COUNT];
};

struct tune_summary {
	int evals;	/* counted evaluations (store hits included) */
	int measured;	/* of which measured in this run */
	int from_store; /* of which found in the store */
	struct tune_outcome_counts outcomes;
	char best[SPACE_KEY_MAX];
	double best_ms;	   /* winner after re-timing */
	double default_ms; /* the default configuration, re-timed alongside */
	/* The re-timing's spread: p80 of the winner's rounds and p20 of the
	 * default's; the winner beat the default by more than the spread when
	 * best_hi_ms < default_lo_ms (a vendor override is written only then). */
	double best_hi_ms, default_lo_ms;
	char default_key[SPACE_KEY_MAX];
	double gflops;
	int evals_to_best; /* evaluation at which the final best was first seen */
	char first_failure[200]; /* the first failed evaluation's outcome and detail */
};

/* Writes "N evaluated (A compile_failed, B wrong_result, ...); first: DETAIL"
 * for S into BUF: why no configuration of a job ran correctly. */
void tune_summary_failures(const struct tune_summary *s, char *buf, size_t len);

/*
 * Interleaved rounds: which of N items runs I-th in round R, forward in even
 * rounds and backward in odd ones (A B | B A), so that a clock that drifts
 * over the rounds (a GPU warming to its power limit) reaches each item alike;
 * a fixed order gives the later items the slower clock every round.
 */
int tune_round_order(int r, int i, int n);

/* One item's figure from its times T of ROUNDS such rounds: the median of the
 * means of round pairs (0,1), (2,3), ... (a last odd round alone), in which a
 * steady drift cancels. T is not changed. */
double tune_round_figure(const double *t, int rounds);

/* Tunes problem P on the opened evaluator. When O->cancel is set during the
 * run it returns ROCMD_ECANCELED with what was found in *OUT and declares no
 * winner; the evaluations finished before are stored, so the next run resumes. */
int tune_run(struct tune_evaluator *ev, const struct tune_key *key, const struct space_def *space,
	     const struct gemm_problem *p, const struct backend_device_info *dev,
	     const struct tune_opts *o, struct tune_summary *out, char *why, size_t whylen);

/* Replays strategy NAME against landscape L, RUNS times with seeds SEED,
 * SEED+1, ..., BUDGET evaluations each. Fills the medians of evaluations to
 * reach 90/95/99% of the landscape's best (budget+1 when never reached, and
 * the fraction of runs that reached it). Deterministic for a given seed. */
struct tune_replay_stats {
	int runs, budget;
	double median_to[3];   /* 90, 95, 99 % */
	double reached[3];     /* fraction of runs that got there */
	double mean_final;     /* mean of best/final (1 = found the optimum) */
	uint64_t trace_hash;   /* hash of every run's sequence of configs: determinism */
};
int tune_replay(const struct tune_landscape *l, const char *strategy, int runs, int budget,
		uint64_t seed, struct tune_replay_stats *out, char *why, size_t whylen);

/* One replay run with a fixed seed: the best-so-far time after each
 * evaluation is written to TRACE (BUDGET entries, INFINITY before any ok). */
int tune_replay_one(const struct tune_landscape *l, const char *strategy, int budget,
		    uint64_t seed, double *trace, uint64_t *hash, char *best, size_t bestlen);
/* The same as a seeded re-tune runs it: the default, then SEEDS (configuration
 * keys, e.g. the winners before an SDK update; keys the landscape lacks are
 * skipped and cost nothing), then the strategy from the best of them. */
int tune_replay_seeded(const struct tune_landscape *l, const char *strategy, int budget,
		       uint64_t seed, const char *const *seeds, int nseeds, double *trace,
		       uint64_t *hash, char *best, size_t bestlen);

/*
 * A synthetic search: the tests' landscapes with planted structure. COST
 * returns the time of a point (<= 0 or INFINITY: not ok). The best of BUDGET
 * evaluations lands in *BEST_COST / *BEST.
 */
typedef double (*tune_cost_fn)(void *ctx, const struct space_def *s, const struct space_point *pt);
int tune_search_synthetic(const struct space_def *s, tune_cost_fn cost, void *ctx,
			  const char *strategy, int budget, uint64_t seed,
			  struct space_point *best, double *best_cost, int *evals_used);

#endif
