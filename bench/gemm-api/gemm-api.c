/*
 * bench-gemm-api: what an application gets from the tuned library through
 * the public C API (librocmd-gemm): the same GEMMs timed through a handle
 * opened on a tuned library folder and through one with no library (default
 * configurations), interleaved, median of the rounds. Prints which
 * configuration each handle chose and the speed-up.
 *
 *   bench-gemm-api --lib DIR --shape MxNxK[,MxNxK...] [--backend cpu] [--dtype fp32]
 *                  [--trans NN] [--rounds 15]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/gemm.h"
#include "rocmd/rocmd-gemm.h"

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct bufs {
	void *a, *b, *c;
};

static int
setup(rocmd_gemm_t *h, const struct gemm_problem *p, struct bufs *d)
{
	size_t es = gemm_dtype_size(p->dtype);
	size_t n[3] = {(size_t)gemm_elems_a(p), (size_t)gemm_elems_b(p), (size_t)gemm_elems_c(p)};
	void **dst[3] = {&d->a, &d->b, &d->c};
	int i;

	for (i = 0; i < 3; i++) {
		void *host = malloc(n[i] * es);

		if (host == NULL || rocmd_gemm_malloc(h, n[i] * es, dst[i]) < 0)
			return -1;
		gemm_fill_random(p->dtype, host, (int64_t)n[i], 7 + i);
		if (rocmd_gemm_upload(h, *dst[i], host, n[i] * es) < 0)
			return -1;
		free(host);
	}
	return 0;
}

/* One timed call (synchronized), in ms. */
static double
one(rocmd_gemm_t *h, const struct gemm_problem *p, const struct bufs *d)
{
	double t0 = now_ms();

	if (rocmd_gemm(h, (enum rocmd_gemm_dtype)p->dtype, (enum rocmd_gemm_op)p->ta,
	               (enum rocmd_gemm_op)p->tb, p->m, p->n, p->k, 1.0f, d->a, p->lda, d->b,
	               p->ldb, 0.0f, d->c, p->ldc) < 0 ||
	    rocmd_gemm_synchronize(h) < 0) {
		fprintf(stderr, "bench-gemm-api: %s\n", rocmd_gemm_error(h));
		exit(1);
	}
	return now_ms() - t0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"lib", required_argument, NULL, 'l'},
	    {"shape", required_argument, NULL, 's'},
	    {"backend", required_argument, NULL, 'b'},
	    {"dtype", required_argument, NULL, 'd'},
	    {"trans", required_argument, NULL, 't'},
	    {"rounds", required_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	const char *lib = NULL, *shapes = NULL, *backend = "cpu", *dtype = "fp32", *trans = "NN";
	rocmd_gemm_t *h[2] = {NULL, NULL};
	int rounds = 15, c, i;
	char err[512], *list, *tok, *save = NULL;
	enum gemm_dtype dt;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			lib = optarg;
			break;
		case 's':
			shapes = optarg;
			break;
		case 'b':
			backend = optarg;
			break;
		case 'd':
			dtype = optarg;
			break;
		case 't':
			trans = optarg;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (lib == NULL || shapes == NULL || gemm_dtype_parse(dtype, &dt) < 0 || rounds < 1 ||
	    rounds > 1000 || strlen(trans) != 2 || strspn(trans, "NT") != 2)
		goto usage;
	for (i = 0; i < 2; i++) {
		if (rocmd_gemm_open(i == 0 ? lib : NULL, backend, 0, &h[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "bench-gemm-api: %s\n", err);
			return 3;
		}
	}
	printf("# %s; %d interleaved rounds, median\n", rocmd_gemm_describe(h[0]), rounds);
	printf("# %-22s %-8s %10s %10s %8s  tuned config\n", "problem", "choice", "tuned ms",
	       "default ms", "speed-up");
	list = strdup(shapes);
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		struct gemm_problem p;
		struct rocmd_gemm_choice ch;
		struct bufs d[2];
		double *t[2], med[2];
		int64_t m, n, k, b;
		char key[64];
		int r;

		if (gemm_shape_parse(tok, &m, &n, &k, &b) < 0 || b != 1)
			goto usage;
		gemm_problem_init(&p, dt, trans[0] == 'N' ? GEMM_N : GEMM_T,
		                  trans[1] == 'N' ? GEMM_N : GEMM_T, m, n, k, 1);
		gemm_problem_key(&p, key, sizeof(key));
		for (i = 0; i < 2; i++) {
			t[i] = calloc((size_t)rounds, sizeof(double));
			if (t[i] == NULL || setup(h[i], &p, &d[i]) < 0) {
				fprintf(stderr, "bench-gemm-api: %s\n", rocmd_gemm_error(h[i]));
				return 1;
			}
			one(h[i], &p, &d[i]); /* compile / load, warm up */
			one(h[i], &p, &d[i]);
		}
		for (r = 0; r < rounds; r++)
			for (i = 0; i < 2; i++)
				t[i][r] = one(h[i], &p, &d[i]);
		for (i = 0; i < 2; i++) {
			qsort(t[i], (size_t)rounds, sizeof(double), cmp_dbl);
			med[i] = t[i][rounds / 2];
			rocmd_gemm_free(h[i], d[i].a);
			rocmd_gemm_free(h[i], d[i].b);
			rocmd_gemm_free(h[i], d[i].c);
			free(t[i]);
		}
		rocmd_gemm_query(h[1], (enum rocmd_gemm_dtype)p.dtype, (enum rocmd_gemm_op)p.ta,
		                 (enum rocmd_gemm_op)p.tb, m, n, k, p.lda, p.ldb, p.ldc, &ch);
		printf("%-24s default config %s\n", "#", ch.config);
		rocmd_gemm_query(h[0], (enum rocmd_gemm_dtype)p.dtype, (enum rocmd_gemm_op)p.ta,
		                 (enum rocmd_gemm_op)p.tb, m, n, k, p.lda, p.ldb, p.ldc, &ch);
		printf("%-24s %-8s %10.4f %10.4f %7.2fx  %s\n", key,
		       ch.how == ROCMD_GEMM_EXACT     ? "exact"
		       : ch.how == ROCMD_GEMM_NEAREST ? "nearest"
		                                      : "default",
		       med[0], med[1], med[1] / med[0], ch.config);
		fflush(stdout);
	}
	free(list);
	rocmd_gemm_close(h[0]);
	rocmd_gemm_close(h[1]);
	return 0;
usage:
	fprintf(stderr, "usage: bench-gemm-api --lib DIR --shape MxNxK[,MxNxK...] [--backend cpu] "
	                "[--dtype fp32] [--trans NN] [--rounds 15]\n");
	return 2;
}
