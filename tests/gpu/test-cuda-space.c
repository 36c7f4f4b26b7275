/*
 * The CUDA backend's tuning space as the tuner sees it (no GPU needed): for
 * every dtype, on a device with and without matrix cores, the space stays
 * small enough to enumerate (< 10^7 points), enough of it is valid to sample
 * (> 5 %), the default point is valid, keys round-trip, and on sm_90 the
 * fp16/bf16 problems with M >= 128 get the wgmma space (MC=2), valid there
 * only, and fp32 problems of at most 8 rows with a K-contiguous B get the GEMV
 * space (GV=1). A space of ~10^9
 * points once made `rocmtune space --backend cuda` run for minutes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gpu-gemm/suite.h"
#include "kernels/backend-cuda.h"
#include "kernels/tunedlib.h"
#include "tests/lib/check.h"

/*
 * Every valid GEMM has a configuration (issue 19): on each kind of device,
 * for every dtype and transpose, odd shapes, tight and padded leading
 * dimensions and misaligned operands, the selection the API makes
 * (tunedlib_select() in the backend's space, no library) finds a point the
 * predicate accepts. fp16 NN 1x4096x4096, 333x4096x4096 and 3333x2222x1111
 * on sm_90 once had none ("no configuration of the cuda space is valid"):
 * their lda is not a multiple of 8, which every matrix-core point needs.
 */
/* The H200 as the backend describes it: sm_90, 132 SMs, the opt-in shared memory. */
static void
sm90_device(struct backend_device_info *dev)
{
	memset(dev, 0, sizeof(*dev));
	snprintf(dev->arch, sizeof(dev->arch), "sm_90");
	dev->matrix_cores = 1;
	dev->compute_units = 132;
	dev->max_threads_per_block = 1024;
	dev->shared_mem_per_block = 232448;
	dev->regs_per_block = 65536;
}

/* space_default_for()'s contract by brute force: the valid point fewest
 * one-step moves from the default, the lowest index among those. */
static int
nearest_by_scan(const struct space_def *s, const struct gemm_problem *p,
                const struct backend_device_info *dev, struct space_point *out)
{
	struct space_point dflt, cur;
	uint64_t i, n = space_size(s);
	int best = -1, k, d;

	space_point_default(s, &dflt);
	for (i = 0; i < n; i++) {
		space_point_from_index(s, i, &cur);
		for (k = 0, d = 0; k < s->nparams; k++)
			d += abs((int)cur.idx[k] - (int)dflt.idx[k]);
		if ((best < 0 || d < best) && space_valid(s, &cur, p, dev, NULL, 0)) {
			best = d;
			*out = cur;
		}
	}
	return best;
}

static void
every_problem_runs(void)
{
	static const struct {
		const char *arch;
		int mc, matrix_cores, wave, units;
		int64_t smem;
	} devs[] = {
	    {"sm_90", 2, 1, 32, 132, 232448}, {"sm_80", 1, 1, 32, 108, 166912},
	    {"sm_75", 0, 0, 32, 40, 65536},   {"gfx1103", 1, 1, 32, 12, 65536},
	    {"gfx906", 0, 0, 64, 60, 65536},
	};
	static const int64_t shapes[][3] = {
	    {1, 4096, 4096}, {333, 4096, 4096}, {3333, 2222, 1111}, {1, 1, 1},
	    {7, 5, 3},       {8, 11008, 4096},  {16, 4096, 4096},   {129, 63, 17},
	    {1000, 1000, 1000}, {2, 3, 4097},   {4096, 1, 4096},    {64, 64, 1},
	};
	int d, dt, t, i, v, total = 0, bad = 0;

	/* The three of the issue first, on sm_90, tight: each names its choice. */
	for (i = 0; i < 3; i++) {
		struct backend_device_info dev;
		struct gemm_problem p;
		struct space_def s;
		struct tunedlib_choice ch;

		sm90_device(&dev);
		gemm_problem_init(&p, GEMM_FP16, GEMM_N, GEMM_N, shapes[i][0], shapes[i][1],
		                  shapes[i][2], 1);
		backend_cuda_space_for(&s, &p, 2, 0);
		CHECK(tunedlib_select(NULL, &s, &p, &dev, &ch) == 0 &&
		          space_valid(&s, &ch.pt, &p, &dev, NULL, 0),
		      "fp16 NN %lldx%lldx%lld on sm_90: %s", (long long)shapes[i][0],
		      (long long)shapes[i][1], (long long)shapes[i][2], ch.why);
		printf("fp16 NN %lldx%lldx%lld on sm_90: %s\n", (long long)shapes[i][0],
		       (long long)shapes[i][1], (long long)shapes[i][2], ch.config);
	}
	fflush(stdout);
	for (d = 0; d < (int)(sizeof(devs) / sizeof(devs[0])); d++) {
		struct backend_device_info dev;

		memset(&dev, 0, sizeof(dev));
		snprintf(dev.arch, sizeof(dev.arch), "%s", devs[d].arch);
		dev.matrix_cores = devs[d].matrix_cores;
		dev.wave_size = devs[d].wave;
		dev.compute_units = devs[d].units;
		dev.max_threads_per_block = 1024;
		dev.shared_mem_per_block = devs[d].smem;
		dev.regs_per_block = 65536;
		for (dt = 0; dt < GEMM_DTYPE_COUNT; dt++)
			for (t = 0; t < 4; t++)
				for (i = 0; i < (int)(sizeof(shapes) / sizeof(shapes[0])); i++)
					for (v = 0; v < 3; v++) {
						struct gemm_problem p;
						struct space_def s;
						struct tunedlib_choice ch;
						char key[64], why[160];
						int64_t pad = v == 0 ? 0 : v == 1 ? 1 : 8;
						int r;

						gemm_problem_init(&p, (enum gemm_dtype)dt, (enum gemm_trans)(t >> 1),
						                  (enum gemm_trans)(t & 1), shapes[i][0],
						                  shapes[i][1], shapes[i][2], 1);
						p.lda += pad;
						p.ldb += pad;
						p.ldc += pad;
						p.stride_a = p.lda * gemm_cols_a(&p);
						p.stride_b = p.ldb * gemm_cols_b(&p);
						p.stride_c = p.ldc * p.n;
						p.unaligned = v == 2 && i % 2; /* padded by 8, pointer off */
						backend_cuda_space_for(&s, &p, devs[d].mc, 0);
						r = tunedlib_select(NULL, &s, &p, &dev, &ch);
						total++;
						/* A few where the default is ruled out: the search
						 * finds what a scan of the whole space finds. */
						if (r == 0 && d == 0 && t == 0 && v == 1 && i < 3) {
							struct space_point scan;

							CHECK(nearest_by_scan(&s, &p, &dev, &scan) >= 0 &&
							          !memcmp(&scan, &ch.pt, sizeof(scan)),
							      "shape %d dtype %d: the nearest valid point is not "
							      "the scan's",
							      i, dt);
						}
						if (r == 0 && space_valid(&s, &ch.pt, &p, &dev, why, sizeof(why)))
							continue;
						gemm_problem_key(&p, key, sizeof(key));
						if (bad++ < 10)
							printf("FAIL: %s %s lda %lld ldb %lld%s: %s\n", devs[d].arch, key,
							       (long long)p.lda, (long long)p.ldb,
							       p.unaligned ? " unaligned" : "", r < 0 ? ch.why : why);
					}
	}
	printf("every problem runs: %d of %d problems without a valid configuration\n", bad, total);
	CHECK(bad == 0, "%d problems without a configuration", bad);
}

/*
 * Unaligned 16-bit operands (issue 19): fp16 and bf16 NN 333x4096x4096 and
 * 3333x2222x1111 (odd lda and ldb) once defaulted to the FMA path at a quarter
 * of cuBLAS's speed. Where repacking pays, the default is the matrix-core
 * kernel of the aligned problem (lda rounded up to 8), valid as it is, its
 * reason naming the repack; where it does not (a small problem), the FMA path.
 */
static void
repacked_defaults(void)
{
	static const int64_t shapes[][4] = {
	    {333, 4096, 4096, 1}, {3333, 2222, 1111, 1}, {1000, 1000, 1001, 1}, {333, 64, 96, 0}};
	struct backend_device_info dev;
	size_t i;
	int dt;

	sm90_device(&dev);
	for (dt = GEMM_FP16; dt <= GEMM_BF16; dt++)
		for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			struct gemm_problem p, twin;
			struct space_def s, st;
			struct space_point pt, ptw;
			char key[SPACE_KEY_MAX], tkey[SPACE_KEY_MAX], why[160];

			gemm_problem_init(&p, (enum gemm_dtype)dt, GEMM_N, GEMM_N, shapes[i][0],
			                  shapes[i][1], shapes[i][2], 1);
			CHECK(!backend_cuda_chunks_ok(&p), "shape %zu is aligned", i);
			CHECK(backend_cuda_repack_pays(&p) == (int)shapes[i][3],
			      "shape %zu: repack pays %d", i, backend_cuda_repack_pays(&p));
			backend_cuda_space_dev(&s, &p, 2, 132, 0);
			space_point_default(&s, &pt);
			space_key(&s, &pt, key, sizeof(key));
			CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "shape %zu: default %s ruled out: %s", i, key, why);
			if (!shapes[i][3]) {
				CHECK(strstr(key, "MC=0;") != NULL, "shape %zu: %s is not FMA", i, key);
				continue;
			}
			CHECK(strstr(s.dflt_why, "repacked") != NULL, "shape %zu: reason %s", i,
			      s.dflt_why);
			twin = p;
			twin.lda = (p.lda + 7) / 8 * 8;
			twin.ldb = (p.ldb + 7) / 8 * 8;
			twin.stride_a = twin.lda * gemm_cols_a(&twin);
			twin.stride_b = twin.ldb * gemm_cols_b(&twin);
			backend_cuda_space_dev(&st, &twin, 2, 132, 0);
			space_point_default(&st, &ptw);
			space_key(&st, &ptw, tkey, sizeof(tkey));
			printf("repacked %s %lldx%lldx%lld: %s\n  %s\n", gemm_dtype_name(p.dtype),
			       (long long)p.m, (long long)p.n, (long long)p.k, key, s.dflt_why);
			CHECK(!strcmp(key, tkey), "shape %zu: %s, the aligned twin's %s", i, key, tkey);
		}
}

/*
 * The default of each shape class (issue 19, 3): on sm_90 (132 SMs) the
 * class's own configuration, valid as it is (no search), named in the
 * selection's reason, and no two classes alike; on sm_80 and gfx1103 every
 * class's default valid as it is, in every layout.
 */
static void
class_defaults(void)
{
	static const struct {
		enum gemm_dtype dt;
		enum gemm_trans ta, tb;
		int64_t m, n, k, lda_pad;
		const char *want[3];
	} cls[] = {
	    {GEMM_FP32, GEMM_T, GEMM_N, 1, 4096, 4096, 0, {"GV=1", "MT0=1;", NULL}},
	    {GEMM_FP16, GEMM_T, GEMM_N, 1, 4096, 4096, 0, {"MC=1;MT0=16;MT1=64;", "GSU=8", NULL}},
	    {GEMM_BF16, GEMM_T, GEMM_N, 64, 4096, 4096, 0, {"MC=1;MT0=64;MT1=64;", "PLR=1", NULL}},
	    {GEMM_FP32, GEMM_T, GEMM_N, 16, 4096, 4096, 0, {"GV=0", "MT0=16;MT1=64;", "GSU=8"}},
	    {GEMM_FP32, GEMM_N, GEMM_N, 4096, 16, 4096, 0, {"MT1=16;", "GSU=8", NULL}},
	    {GEMM_FP16, GEMM_T, GEMM_N, 128, 4096, 4096, 0, {"MC=2;MT0=64;MT1=64;", "GSU=2", NULL}},
	    {GEMM_FP16, GEMM_T, GEMM_N, 512, 4096, 4096, 0, {"MC=2;MT0=128;MT1=128;", "STAGES=5", NULL}},
	    {GEMM_FP16, GEMM_N, GEMM_N, 4096, 4096, 4096, 0, {"MC=2;MT0=256;MT1=128;", "GSU=1", NULL}},
	    {GEMM_FP32, GEMM_T, GEMM_N, 128, 4096, 4096, 0, {"MT0=128;MT1=128;", "SK=1", NULL}},
	    {GEMM_FP32, GEMM_N, GEMM_N, 4096, 4096, 4096, 0, {"MT0=256;MT1=128;", "SK=1", NULL}},
	    {GEMM_FP32, GEMM_N, GEMM_N, 200, 200, 200, 0, {"MT0=64;MT1=64;", "GSU=1", NULL}},
	};
	static const struct {
		const char *arch;
		int mc, units;
	} devs[] = {{"sm_90", 2, 132}, {"sm_80", 1, 108}, {"gfx1103", 1, 12}};
	char keys[sizeof(cls) / sizeof(cls[0])][SPACE_KEY_MAX];
	size_t c, d, e;
	int t;

	for (d = 0; d < sizeof(devs) / sizeof(devs[0]); d++) {
		struct backend_device_info dev;

		memset(&dev, 0, sizeof(dev));
		snprintf(dev.arch, sizeof(dev.arch), "%s", devs[d].arch);
		dev.matrix_cores = 1;
		dev.compute_units = devs[d].units;
		dev.max_threads_per_block = 1024;
		dev.shared_mem_per_block = d == 2 ? 65536 : 232448;
		dev.regs_per_block = 65536;
		for (c = 0; c < sizeof(cls) / sizeof(cls[0]); c++)
			for (t = 0; t < 4; t++) {
				struct gemm_problem p;
				struct space_def s;
				struct space_point pt;
				struct tunedlib_choice ch;
				char key[SPACE_KEY_MAX], why[160];
				int listed = (int)cls[c].ta * 2 + (int)cls[c].tb == t;

				gemm_problem_init(&p, cls[c].dt, (enum gemm_trans)(t >> 1),
				                  (enum gemm_trans)(t & 1), cls[c].m, cls[c].n, cls[c].k, 1);
				backend_cuda_space_dev(&s, &p, devs[d].mc, devs[d].units, 0);
				space_point_default(&s, &pt);
				space_key(&s, &pt, key, sizeof(key));
				CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
				      "%s class %zu layout %d: default %s ruled out: %s", devs[d].arch, c,
				      t, key, why);
				CHECK(s.dflt_why[0] != '\0', "%s class %zu: no reason", devs[d].arch, c);
				if (d != 0 || !listed)
					continue;
				printf("class %zu %s: %s\n  %s\n", c, gemm_dtype_name(p.dtype), key,
				       s.dflt_why);
				for (e = 0; e < 3 && cls[c].want[e] != NULL; e++)
					CHECK(strstr(key, cls[c].want[e]) != NULL, "class %zu: %s lacks %s", c,
					      key, cls[c].want[e]);
				CHECK(tunedlib_select(NULL, &s, &p, &dev, &ch) == 0 &&
				          strstr(ch.why, s.dflt_why) != NULL,
				      "class %zu: the selection's reason does not name the class: %s", c,
				      ch.why);
				/* Without the dtype and layout, so that classes compare. */
				snprintf(keys[c], sizeof(keys[c]), "%s", strstr(key, "MC="));
			}
	}
	for (c = 0; c < sizeof(cls) / sizeof(cls[0]); c++)
		for (e = c + 1; e < sizeof(cls) / sizeof(cls[0]); e++)
			CHECK(strcmp(keys[c], keys[e]) != 0, "classes %zu and %zu share the default %s",
			      c, e, keys[c]);
	/* Every problem of the GPU suite (bench/gpu-gemm) runs its class's default on
	 * sm_90 as it is, never the nearest valid point to a ruled-out one. */
	for (d = 0; d < GEMM_DTYPE_COUNT; d++) {
		struct backend_device_info dev;
		struct problem prs[64];
		int n = suite_problems((enum gemm_dtype)d, prs, 64), i;

		sm90_device(&dev);
		for (i = 0; i < n; i++) {
			struct gemm_problem p;
			struct space_def s;
			struct space_point pt;
			char key[SPACE_KEY_MAX], why[160];

			gemm_problem_init(&p, prs[i].dt, prs[i].op[0] == 'T' ? GEMM_T : GEMM_N,
			                  prs[i].op[1] == 'T' ? GEMM_T : GEMM_N, prs[i].m, prs[i].n,
			                  prs[i].k, 1);
			backend_cuda_space_dev(&s, &p, 2, 132, 0);
			space_point_default(&s, &pt);
			space_key(&s, &pt, key, sizeof(key));
			CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "suite %s %s %lldx%lldx%lld: the class default %s is ruled out: %s",
			      gemm_dtype_name(p.dtype), prs[i].op, (long long)p.m, (long long)p.n,
			      (long long)p.k, key, why);
		}
	}
	(void)group_name;
}

/*
 * Nearest tuned shape by predicted time (costmodel.h): a farther entry whose
 * kernel is predicted faster on the problem beats a nearer one (its time
 * scaled by the model, not compared as measured); the class default beats
 * an entry when predicted clearly faster (from the entry's default time);
 * an exact entry is used as it is. Distance alone chose the nearer entry in
 * both cases.
 */
static void
model_selection(void)
{
	static const char wg_big[] = "DT=1;TA=1;TB=0;MC=2;MT0=256;MT1=128;DU=64;TT0=4;TT1=4;VW=1;"
	                             "PGR=1;LDSPAD=0;WM=1;WN=2;STAGES=4;SWZ=1;GSU=1;GROUP=8;PLR=0;"
	                             "WL=0;MINB=1;GV=0;SK=0";
	static const char wg_split[] = "DT=1;TA=1;TB=0;MC=2;MT0=64;MT1=64;DU=64;TT0=4;TT1=4;VW=1;"
	                               "PGR=1;LDSPAD=0;WM=1;WN=1;STAGES=5;SWZ=1;GSU=8;GROUP=1;"
	                               "PLR=0;WL=0;MINB=1;GV=0;SK=0";
	struct backend_device_info dev;
	struct tunedlib *lib = NULL;
	struct tune_key id;
	struct gemm_problem p;
	struct space_def s;
	struct tunedlib_choice ch;
	char why[256];

	sm90_device(&dev);
	memset(&id, 0, sizeof(id));
	snprintf(id.backend, sizeof(id.backend), "cuda");
	snprintf(id.arch, sizeof(id.arch), "sm_90");
	CHECK(tunedlib_new(&id, &lib) == 0, "tunedlib_new");
	/* Nearer (distance 1): 64 x 64 tiles split 8 ways, 0.5 ms (default 0.15 ms);
	 * farther (distance 3): 256 x 128, 1.75 ms at 8192^3, an eighth of the work
	 * and a quarter of the waves at 4096^3. */
	CHECK(tunedlib_add(lib, "fp16:TN:4096x4096x2048:b1", wg_split, 0.5, 0.15, why,
	                   sizeof(why)) == 0,
	      "add: %s", why);
	CHECK(tunedlib_add(lib, "fp16:TN:8192x8192x8192:b1", wg_big, 1.75, 0, why, sizeof(why)) == 0,
	      "add: %s", why);
	gemm_problem_init(&p, GEMM_FP16, GEMM_T, GEMM_N, 4096, 4096, 4096, 1);
	backend_cuda_space_dev(&s, &p, 2, 132, 0);
	CHECK(tunedlib_select(lib, &s, &p, &dev, &ch) == 0 && ch.how == TUNEDLIB_NEAREST &&
	          ch.entry >= 0 &&
	          !strcmp(tunedlib_entry_at(lib, ch.entry)->problem, "fp16:TN:8192x8192x8192:b1") &&
	          strstr(ch.why, "predicted") != NULL,
	      "the farther, faster entry was not chosen: %s", ch.why);
	printf("model: %s\n", ch.why);
	/* The exact shape: its entry, whatever the model says of the others. */
	gemm_problem_init(&p, GEMM_FP16, GEMM_T, GEMM_N, 4096, 4096, 2048, 1);
	backend_cuda_space_dev(&s, &p, 2, 132, 0);
	CHECK(tunedlib_select(lib, &s, &p, &dev, &ch) == 0 && ch.how == TUNEDLIB_EXACT,
	      "the exact entry was not chosen: %s", ch.why);
	tunedlib_free(lib);
	/* Only the nearer entry: its default, measured 3x faster there, is
	 * predicted faster here too. */
	CHECK(tunedlib_new(&id, &lib) == 0, "tunedlib_new");
	CHECK(tunedlib_add(lib, "fp16:TN:4096x4096x2048:b1", wg_split, 0.5, 0.15, why,
	                   sizeof(why)) == 0,
	      "add: %s", why);
	gemm_problem_init(&p, GEMM_FP16, GEMM_T, GEMM_N, 4096, 4096, 4096, 1);
	backend_cuda_space_dev(&s, &p, 2, 132, 0);
	CHECK(tunedlib_select(lib, &s, &p, &dev, &ch) == 0 && ch.how == TUNEDLIB_DEFAULT &&
	          strstr(ch.why, "predicted faster") != NULL,
	      "the default was not chosen over a slow entry: %s", ch.why);
	printf("model: %s\n", ch.why);
	tunedlib_free(lib);
}

/* The space crosses into the evaluation process and back by its name: the
 * HIP backend's ("hip", the CUDA space renamed) was once unknown there, so
 * every HIP tuning run with isolation stopped at the child's hello ("tunes in
 * space 'hip', unknown to this program"). */
static void
hip_space_binds(void)
{
	struct space_def cuda;
	space_check_fn hip = NULL, want = backend_cuda_space_for(&cuda, NULL, 0, 1)->check;

	CHECK(backend_space_check("hip", &hip) == 0,
	      "the hip space is unknown to backend_space_check");
	CHECK(hip == want && hip != NULL, "the hip space binds another predicate than cuda's");
}

int
main(void)
{
	struct backend_device_info dev;
	int dt, mc;

	memset(&dev, 0, sizeof(dev));
	dev.max_threads_per_block = 1024;
	dev.shared_mem_per_block = 232448; /* sm_90 opt-in limit */
	dev.regs_per_block = 65536;
	snprintf(dev.arch, sizeof(dev.arch), "sm_90");
	hip_space_binds();
	every_problem_runs();
	class_defaults();
	repacked_defaults();
	model_selection();
	for (mc = 0; mc <= 1; mc++)
		for (dt = 0; dt < 3; dt++) {
			struct gemm_problem p;
			struct space_def s;
			struct space_point pt, back;
			char key[SPACE_KEY_MAX], why[128];
			uint64_t n, i, valid = 0, step;

			dev.matrix_cores = mc;
			gemm_problem_init(&p, (enum gemm_dtype)dt, GEMM_T, GEMM_N, 512, 4096, 4096,
			                  1);
			backend_cuda_space_for(&s, &p, mc, 0);
			n = space_size(&s);
			/* Every 7th point: a sample that keeps the test quick. */
			step = 7;
			for (i = 0; i < n; i += step) {
				space_point_from_index(&s, i, &pt);
				valid += space_valid(&s, &pt, &p, &dev, why, sizeof(why));
			}
			space_point_default(&s, &pt);
			space_key(&s, &pt, key, sizeof(key));
			printf("%s, matrix cores %d: %llu points, ~%.1f %% valid, default %s\n",
			       gemm_dtype_name((enum gemm_dtype)dt), mc, (unsigned long long)n,
			       100.0 * (double)valid * step / (double)n, key);
			CHECK(n < 10000000ULL, "space of %llu points", (unsigned long long)n);
			CHECK((double)valid * step > 0.05 * (double)n,
			      "only %llu of %llu sampled valid", (unsigned long long)valid,
			      (unsigned long long)(n / step));
			CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "default invalid: %s", why);
			CHECK(strstr(key, (dt != 0 && mc) ? "MC=1" : "MC=0") != NULL,
			      "default path for dtype %d, matrix cores %d: %s", dt, mc, key);
			CHECK(space_key_parse(&s, key, &back) == 0 &&
			          !memcmp(&back, &pt, sizeof(pt)),
			      "key %s does not round-trip", key);
		}
	/*
	 * sm_90 (matrix_cores 2): fp16/bf16 problems with M >= 128 get the wgmma space,
	 * whose default is valid there and not on sm_80; smaller M keeps mma.sync (whose
	 * 128 x 128 default does not fit M = 8: the tuner starts elsewhere there).
	 */
	{
		static const int64_t ms[] = {4096, 128, 8};
		struct gemm_problem p;
		struct space_def s;
		struct space_point pt;
		char key[SPACE_KEY_MAX], why[128];
		uint64_t n, i, valid;
		int k;

		dev.matrix_cores = 1;
		for (k = 0; k < 3; k++) {
			gemm_problem_init(&p, GEMM_BF16, GEMM_N, GEMM_N, ms[k], 4096, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 0);
			n = space_size(&s);
			for (i = 0, valid = 0; i < n; i++) {
				space_point_from_index(&s, i, &pt);
				valid += space_valid(&s, &pt, &p, &dev, why, sizeof(why));
			}
			space_point_default(&s, &pt);
			space_key(&s, &pt, key, sizeof(key));
			printf("bf16 M=%lld on sm_90: %llu points, %llu valid, default %s\n",
			       (long long)ms[k], (unsigned long long)n, (unsigned long long)valid,
			       key);
			CHECK(strstr(key, ms[k] >= 128 ? "MC=2" : "MC=1") != NULL,
			      "M=%lld on sm_90: default %s", (long long)ms[k], key);
			if (ms[k] >= 128) {
				CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
				      "M=%lld on sm_90: default invalid: %s", (long long)ms[k], why);
				CHECK((double)valid > 0.05 * (double)n, "M=%lld: %llu of %llu valid",
				      (long long)ms[k], (unsigned long long)valid,
				      (unsigned long long)n);
				snprintf(dev.arch, sizeof(dev.arch), "sm_80");
				CHECK(!space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
				      "wgmma valid on sm_80");
				snprintf(dev.arch, sizeof(dev.arch), "sm_90");
			}
		}
		/* The full space (benchmark, library keys) holds wgmma points; its rules apply. */
		gemm_problem_init(&p, GEMM_BF16, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
		backend_cuda_space_for(&s, &p, 1, 1);
		CHECK(space_key_parse(&s, "DT=2;TA=0;TB=0;MC=2;MT0=256;MT1=128;DU=64;TT0=4;TT1=4;"
		                         "VW=1;PGR=1;LDSPAD=0;WM=1;WN=2;STAGES=4;SWZ=1;GSU=1;"
		                         "GROUP=1;PLR=0;WL=0;MINB=1;GV=0",
		                         &pt) == 0 &&
		          space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "the wgmma winner is not a valid point of the full space");
		CHECK(space_key_parse(&s, "DT=2;TA=0;TB=0;MC=2;MT0=128;MT1=256;DU=64;TT0=4;TT1=4;"
		                         "VW=1;PGR=1;LDSPAD=0;WM=1;WN=2;STAGES=4;SWZ=1;GSU=1;"
		                         "GROUP=1;PLR=0;WL=0;MINB=1;GV=0",
		                         &pt) == 0 &&
		          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "wgmma with MT1 != 64 x WN accepted");
	}
	/*
	 * A few rows in fp32 (LLM decoding, x * W^T: TN): the GEMV space, its default
	 * valid; MT0 follows M. A transposed B or M = 9 stays on the FMA space.
	 */
	{
		static const int64_t ms[] = {1, 2, 8, 9};
		struct gemm_problem p;
		struct space_def s;
		struct space_point pt;
		char key[SPACE_KEY_MAX], why[128];
		uint64_t n, i, valid;
		int k;

		dev.matrix_cores = 1;
		for (k = 0; k < 4; k++) {
			gemm_problem_init(&p, GEMM_FP32, GEMM_T, GEMM_N, ms[k], 11008, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 0);
			n = space_size(&s);
			for (i = 0, valid = 0; i < n; i++) {
				space_point_from_index(&s, i, &pt);
				valid += space_valid(&s, &pt, &p, &dev, why, sizeof(why));
			}
			space_point_default(&s, &pt);
			space_key(&s, &pt, key, sizeof(key));
			printf("fp32 TN M=%lld: %llu points, %llu valid, default %s\n", (long long)ms[k],
			       (unsigned long long)n, (unsigned long long)valid, key);
			CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "fp32 M=%lld: default invalid: %s", (long long)ms[k], why);
			if (ms[k] <= 8)
				CHECK((double)valid > 0.05 * (double)n, "fp32 M=%lld: %llu of %llu valid",
				      (long long)ms[k], (unsigned long long)valid,
				      (unsigned long long)n);
			CHECK(strstr(key, ms[k] <= 8 ? "GV=1" : "GV=0") != NULL,
			      "fp32 M=%lld: default %s", (long long)ms[k], key);
			if (ms[k] <= 2)
				CHECK(strstr(key, ms[k] == 1 ? "MT0=1;" : "MT0=2;") != NULL,
				      "fp32 M=%lld: default rows %s", (long long)ms[k], key);
		}
		gemm_problem_init(&p, GEMM_FP32, GEMM_T, GEMM_T, 1, 4096, 4096, 1);
		backend_cuda_space_for(&s, &p, 2, 0);
		space_point_default(&s, &pt);
		space_key(&s, &pt, key, sizeof(key));
		CHECK(strstr(key, "GV=0") != NULL, "fp32 M=1 with B transposed: default %s", key);
		/* Large fp32 on sm_90: the H200 winner is the default, and valid. */
		gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
		backend_cuda_space_for(&s, &p, 2, 0);
		space_point_default(&s, &pt);
		space_key(&s, &pt, key, sizeof(key));
		printf("fp32 NN 4096^3 on sm_90: default %s\n", key);
		CHECK(strstr(key, "MT0=256;MT1=128;DU=16;TT0=16;TT1=8;VW=4;PGR=2;LDSPAD=4;") != NULL &&
		          strstr(key, ";STAGES=2;") != NULL && strstr(key, ";PLR=0;WL=1;") != NULL &&
		          strstr(key, ";SK=1") != NULL &&
		          space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "fp32 4096^3 on sm_90: default %s", key);
		/* The cp.async variant (PGR 2): a 3-stage point (72 KiB) is valid on sm_90,
		 * not on an AMD GPU or sm_75, not in fp16; STAGES is not PGR 1's. */
		backend_cuda_space_for(&s, &p, 2, 1);
		CHECK(space_key_parse(&s, "DT=0;TA=0;TB=0;MC=0;MT0=256;MT1=128;DU=16;TT0=8;TT1=16;"
		                         "VW=4;PGR=2;LDSPAD=0;WM=2;WN=2;STAGES=3;SWZ=1;GSU=1;"
		                         "GROUP=8;PLR=1;WL=0;MINB=1;GV=0",
		                         &pt) == 0 &&
		          space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "PGR 2 point invalid on sm_90: %s", why);
		snprintf(dev.arch, sizeof(dev.arch), "gfx1103");
		CHECK(!space_valid(&s, &pt, &p, &dev, why, sizeof(why)), "PGR 2 valid on gfx1103");
		snprintf(dev.arch, sizeof(dev.arch), "sm_75");
		CHECK(!space_valid(&s, &pt, &p, &dev, why, sizeof(why)), "PGR 2 valid on sm_75");
		snprintf(dev.arch, sizeof(dev.arch), "sm_90");
		CHECK(space_key_parse(&s, "DT=0;TA=0;TB=0;MC=0;MT0=256;MT1=128;DU=16;TT0=8;TT1=16;"
		                         "VW=4;PGR=1;LDSPAD=0;WM=2;WN=2;STAGES=4;SWZ=1;GSU=1;"
		                         "GROUP=8;PLR=1;WL=0;MINB=1;GV=0",
		                         &pt) == 0 &&
		          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "STAGES 4 accepted with PGR 1");
		gemm_problem_init(&p, GEMM_FP16, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
		backend_cuda_space_for(&s, &p, 0, 1);
		CHECK(space_key_parse(&s, "DT=1;TA=0;TB=0;MC=0;MT0=256;MT1=128;DU=16;TT0=8;TT1=16;"
		                         "VW=4;PGR=2;LDSPAD=0;WM=2;WN=2;STAGES=3;SWZ=1;GSU=1;"
		                         "GROUP=8;PLR=1;WL=0;MINB=1;GV=0",
		                         &pt) == 0 &&
		          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "PGR 2 accepted in fp16");
		/*
		 * Stream-K (SK 1): the tuner's sm_90 space offers it for large fp32
		 * problems, in place of split-K, and nowhere else; it is the FMA
		 * path's and does not mix with GSU > 1. Keys stored before SK existed
		 * read as SK 0; a value it does not have is an error.
		 */
		{
			static const char base[] = "DT=0;TA=0;TB=0;MC=0;MT0=256;MT1=128;DU=16;TT0=8;"
			                           "TT1=16;VW=4;PGR=2;LDSPAD=4;WM=2;WN=2;STAGES=2;SWZ=1;"
			                           "GSU=1;GROUP=8;PLR=0;WL=0;MINB=1;GV=0";
			struct tune_config cfg;
			int sk, gsu;

			gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 0);
			sk = space_param_index(&s, "SK");
			gsu = space_param_index(&s, "GSU");
			CHECK(sk >= 0 && s.params[sk].nvalues == 2 && s.params[gsu].nvalues == 1 &&
			          s.params[space_param_index(&s, "STAGES")].nvalues == 2,
			      "sm_90 fp32 4096^3: SK, GSU and STAGES not as expected");
			backend_cuda_space_for(&s, &p, 1, 0);
			CHECK(s.params[sk].nvalues == 1 && s.params[sk].values[0] == 0,
			      "SK offered off sm_90");
			gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 64, 4096, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 0);
			CHECK(s.params[sk].nvalues == 1 && s.params[gsu].nvalues > 1,
			      "M=64 on sm_90: SK offered or split-K not");
			gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 128, 4096, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 0);
			CHECK(s.params[sk].nvalues == 2 && s.params[gsu].nvalues == 1,
			      "M=128 on sm_90: SK not offered (it wins fp32 prefill there)");
			gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 1);
			snprintf(key, sizeof(key), "%s", base);
			CHECK(space_key_parse(&s, key, &pt) == 0, "a key without SK does not parse");
			space_config(&s, &pt, &cfg);
			CHECK(tune_config_get(&cfg, "SK", -1) == 0, "a key without SK is not SK 0");
			snprintf(key, sizeof(key), "%s;SK=1", base);
			CHECK(space_key_parse(&s, key, &pt) == 0 &&
			          space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "the stream-K winner tile is not valid: %s", why);
			snprintf(key, sizeof(key), "%s;SK=2", base);
			CHECK(space_key_parse(&s, key, &pt) < 0, "SK=2 parsed");
			snprintf(key, sizeof(key), "%s;SK=1", base);
			memcpy(strstr(key, "GSU=1"), "GSU=2", 5);
			CHECK(space_key_parse(&s, key, &pt) == 0 &&
			          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "SK 1 with GSU 2 accepted");
			/* Register staging at exactly 48 KiB of static stages: stream-K's
			 * flag pushes it over (ptxas refused it in run 27). */
			snprintf(key, sizeof(key), "%s;SK=0", base);
			memcpy(strstr(key, "PGR=2;LDSPAD=4"), "PGR=1;LDSPAD=0", 14);
			memcpy(strstr(key, "TT0=8;TT1=16"), "TT0=16;TT1=8", 12);
			memcpy(strstr(key, "STAGES=2"), "STAGES=3", 8);
			CHECK(space_key_parse(&s, key, &pt) == 0 &&
			          space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "48 KiB of static stages invalid: %s (%s)", why, key);
			memcpy(strstr(key, "SK=0"), "SK=1", 4);
			CHECK(space_key_parse(&s, key, &pt) == 0 &&
			          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "48 KiB of static stages and stream-K's flag accepted");
			gemm_problem_init(&p, GEMM_FP16, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
			backend_cuda_space_for(&s, &p, 2, 1);
			CHECK(space_key_parse(&s, "DT=1;TA=0;TB=0;MC=1;MT0=128;MT1=128;DU=32;TT0=4;TT1=4;"
			                         "VW=1;PGR=1;LDSPAD=0;WM=2;WN=2;STAGES=3;SWZ=1;GSU=1;"
			                         "GROUP=1;PLR=0;WL=0;MINB=1;GV=0;SK=1",
			                         &pt) == 0 &&
			          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "SK 1 accepted on the mma.sync path");
		}
	}
	{
		/* The driver in the tuner's key: the kernel module's version, as the
		 * proprietary and the open modules write it; nothing from other text. */
		static const char *const ok[][2] = {
		    {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 "
		     "06:54:38 UTC 2025\nGCC version:  gcc version 12.2.0\n",
		     "580.65.06"},
		    {"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release "
		     "Build\n",
		     "575.57.08"},
		};
		static const char *const bad[] = {"", "NVRM version: unknown\n",
		                                  "NVRM version: NVIDIA Kernel Module\n580.1\n",
		                                  "Kernel Module 12345 no dot\n"};
		char v[32];
		size_t i;

		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			CHECK(backend_cuda_parse_nvrm(ok[i][0], v, sizeof(v)) == 0 &&
			          strcmp(v, ok[i][1]) == 0,
			      "NVRM line %zu: got '%s'", i, v);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK(backend_cuda_parse_nvrm(bad[i], v, sizeof(v)) < 0, "bad NVRM text %zu parsed",
			      i);
		CHECK(backend_cuda_parse_nvrm(ok[0][0], v, 4) < 0, "NVRM version cut to fit");
	}
	{
		/* Stream-K's grid: the resident blocks shared by the batch, never more
		 * blocks than k-tiles, nor more than the counters hold; the workspace
		 * holds the counters and two tile slots per block of each batch. */
		CHECK(backend_sk_grid(512, 4096, 16, 1, 132) == 132, "4096^3: grid %u",
		      backend_sk_grid(512, 4096, 16, 1, 132));
		CHECK(backend_sk_grid(9, 136, 16, 1, 132) == 81, "9 tiles of 9 k-tiles: grid %u",
		      backend_sk_grid(9, 136, 16, 1, 132));
		CHECK(backend_sk_grid(4, 0, 16, 1, 132) == 4, "K 0: one k-tile per tile");
		CHECK(backend_sk_grid(512, 4096, 16, 4, 132) == 33, "batch 4: grid %u",
		      backend_sk_grid(512, 4096, 16, 4, 132));
		CHECK(backend_sk_grid(512, 4096, 16, 1000, 132) == 1, "batch 1000: grid %u",
		      backend_sk_grid(512, 4096, 16, 1000, 132));
		CHECK(backend_sk_grid(512, 4096, 16, 1, 1000000) * 1ULL <= BACKEND_SK_COUNTERS / 2,
		      "grid past the counters");
		CHECK(backend_sk_grid(512, 4096, 16, 65535, 132) * 65535ULL <= BACKEND_SK_COUNTERS / 2,
		      "batch 65535: counters overrun");
		CHECK(backend_sk_ws_bytes(132, 1, 256, 128) ==
		          (BACKEND_SK_COUNTERS + 2 * 132 * 256 * 128) * sizeof(float),
		      "workspace size");
	}
	return check_report();
}
