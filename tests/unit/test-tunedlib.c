/* Unit tests for the tuned kernel library (kernels/tunedlib.h): the on-disk
 * round trip, refusal of corrupt and truncated folders, a writer killed at
 * every step leaving the previous library intact, the selection rule, and
 * export/import refusing results of another GPU or software. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "kernels/tunedlib.h"

static char tmpdir[256];

static int
setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-tunedlib-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int
teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
make_id(struct tune_key *id)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->backend, sizeof(id->backend), "cpu");
	snprintf(id->arch, sizeof(id->arch), "x86_64");
	snprintf(id->device, sizeof(id->device), "Test CPU (2 threads)");
	id->compute_units = 2;
	snprintf(id->driver, sizeof(id->driver), "linux 6.1");
	snprintf(id->runtime, sizeof(id->runtime), "rocmd-cpu 1");
	snprintf(id->compiler, sizeof(id->compiler), "cc 12.2.0");
	snprintf(id->source_hash, sizeof(id->source_hash), "0123456789abcdef");
}

#define CFG_SMALL "MT0=64;MT1=64;DU=32;TT0=8;TT1=4;UNROLL=4;VW=4;THREADS=1;PAR=0;PGR=0"
#define CFG_BIG "MT0=512;MT1=256;DU=128;TT0=8;TT1=4;UNROLL=4;VW=4;THREADS=1;PAR=0;PGR=0"

static struct tunedlib *
make_lib(int with_code)
{
	struct tune_key id;
	struct tunedlib *lib;
	char why[256];

	make_id(&id);
	assert_int_equal(tunedlib_new(&id, &lib), 0);
	assert_int_equal(
	    tunedlib_add(lib, "fp32:NN:128x128x128:b1", CFG_SMALL, 0.5, 0.9, why, sizeof(why)), 0);
	assert_int_equal(
	    tunedlib_add(lib, "fp32:NN:300x300x300:b1", CFG_BIG, 4.0, 5.5, why, sizeof(why)), 0);
	assert_int_equal(
	    tunedlib_add(lib, "fp16:NT:64x64x64:b1", CFG_SMALL, 0.1, 0, why, sizeof(why)), 0);
	if (with_code) {
		static const char co1[] = "\x7f"
		                          "ELF code object one",
		                  co2[] = "two";

		assert_int_equal(
		    tunedlib_set_code(lib, "fp32:NN:128x128x128:b1", "cubin", co1, sizeof(co1)), 0);
		assert_int_equal(
		    tunedlib_set_code(lib, "fp16:NT:64x64x64:b1", "hsaco", co2, sizeof(co2)), 0);
	}
	return lib;
}

static void
path_of(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/lib/%s", tmpdir, rel);
}

static void
put_file(const char *path, const char *data, size_t len)
{
	FILE *f;

	chmod(path, 0644);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static char *
get_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 20);

	assert_non_null(f);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void
test_round_trip(void **state)
{
	struct tunedlib *lib = make_lib(1), *back = NULL;
	const struct tunedlib_entry *e;
	char dir[300], why[512];

	path_of(dir, sizeof(dir), "");
	assert_int_equal(tunedlib_write(lib, dir, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_generation(lib), 1);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_generation(back), 1);
	assert_int_equal(tunedlib_count(back), 3);
	assert_string_equal(tunedlib_id(back)->device, "Test CPU (2 threads)");
	e = tunedlib_find(back, "fp32:NN:128x128x128:b1");
	assert_non_null(e);
	assert_string_equal(e->config, CFG_SMALL);
	assert_true(e->winner_ms == 0.5 && e->default_ms == 0.9);
	assert_string_equal(e->code_kind, "cubin");
	assert_int_equal(e->code_len, sizeof("\x7f"
	                                     "ELF code object one"));
	assert_memory_equal(e->code,
	                    "\x7f"
	                    "ELF code object one",
	                    e->code_len);
	e = tunedlib_find(back, "fp32:NN:300x300x300:b1");
	assert_null(e->code);
	assert_string_equal(e->code_kind, "");
	tunedlib_free(back);

	/* A second write is generation 2; generation 1 stays one round. */
	assert_int_equal(
	    tunedlib_add(lib, "bf16:TT:32x32x32:b1", CFG_SMALL, 0.01, 0.02, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_write(lib, dir, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_generation(lib), 2);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_count(back), 4);
	tunedlib_free(back);
	path_of(dir, sizeof(dir), "v1/index.json");
	assert_int_equal(access(dir, F_OK), 0);
	path_of(dir, sizeof(dir), "");
	assert_int_equal(tunedlib_write(lib, dir, why, sizeof(why)), 0);
	path_of(dir, sizeof(dir), "v1");
	assert_int_equal(access(dir, F_OK), -1); /* two rounds old: removed */
	tunedlib_free(lib);
}

static void
test_add_validates(void **state)
{
	struct tune_key id;
	struct tunedlib *lib;
	char why[256];

	make_id(&id);
	assert_int_equal(tunedlib_new(&id, &lib), 0);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:0x1x1:b1", CFG_SMALL, 1, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp64:NN:1x1x1:b1", CFG_SMALL, 1, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8", CFG_SMALL, 1, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8:b1", "MT0=;", 1, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8:b1", "MT0=1;\n", 1, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8:b1", CFG_SMALL, 0, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8:b1", CFG_SMALL, NAN, 1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8:b1", CFG_SMALL, 1, -1, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(tunedlib_count(lib), 0);
	assert_int_equal(tunedlib_add(lib, "fp32:NN:8x8x8:b1", CFG_SMALL, 1, 0, why, sizeof(why)),
	                 0);
	assert_int_equal(tunedlib_set_code(lib, "fp32:NN:8x8x8:b1", "exe", "x", 1), ROCMD_EINVAL);
	assert_int_equal(tunedlib_set_code(lib, "fp32:NN:9x8x8:b1", "cubin", "x", 1),
	                 ROCMD_ENOTFOUND);
	tunedlib_free(lib);
}

/* Each damaged form of a good library is refused with a sentence, never read. */
static void
test_corrupt_refused(void **state)
{
	struct tunedlib *lib = make_lib(1), *back = NULL;
	char dir[300], p[400], why[512], *idx, *co, name[100];
	const struct tunedlib_entry *e;
	size_t len, colen;

	path_of(dir, sizeof(dir), "");
	/* Nothing there yet. */
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ENOTFOUND);
	assert_int_equal(tunedlib_write(lib, dir, why, sizeof(why)), 0);
	path_of(p, sizeof(p), "v1/index.json");
	idx = get_file(p, &len);

	/* Truncated index: every cut length is refused. */
	for (size_t cut = 0; cut < len; cut += 1 + len / 40) {
		put_file(p, idx, cut);
		why[0] = '\0';
		assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
		assert_null(back);
		assert_true(strstr(why, "index.json") != NULL);
	}
	/* A newer format version. */
	{
		char *v = strdup(idx), *at = strstr(v, "\"version\":\t1");

		assert_non_null(at);
		at[11] = '9';
		put_file(p, v, len);
		assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_EVERSION);
		free(v);
	}
	/* A field out of range. */
	{
		char *v = strdup(idx), *at = strstr(v, "\"winner_ms\":\t0.5");

		assert_non_null(at);
		memcpy(at + 13, "9e9", 3); /* above TUNEDLIB_MAX_TIME_MS */
		put_file(p, v, len);
		assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
		assert_true(strstr(why, "winner_ms") != NULL);
		free(v);
	}
	put_file(p, idx, len);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
	e = tunedlib_find(back, "fp32:NN:128x128x128:b1");
	snprintf(name, sizeof(name), "v1/co/%s.cubin", e->code_sha256);
	tunedlib_free(back);
	back = NULL;

	/* A code object damaged, cut, or missing. */
	path_of(p, sizeof(p), name);
	co = get_file(p, &colen);
	co[3] ^= 1;
	put_file(p, co, colen);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
	assert_true(strstr(why, "hash") != NULL);
	co[3] ^= 1;
	put_file(p, co, colen - 1);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
	unlink(p);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
	put_file(p, co, colen);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
	tunedlib_free(back);
	back = NULL;

	/* CURRENT garbage, or naming a generation that is not there. */
	path_of(p, sizeof(p), "CURRENT");
	put_file(p, "../etc\n", 7);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
	put_file(p, "v7\n", 3);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
	put_file(p, "", 0);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
	put_file(p, "v1\n", 3);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
	tunedlib_free(back);
	free(co);
	free(idx);
	tunedlib_free(lib);
}

/* A writer killed at each step leaves the previous library readable and whole;
 * the next write cleans up and succeeds. */
static void
test_crash_leaves_previous(void **state)
{
	static const char *const steps[] = {"code", "index", "rename", "current"};
	struct tunedlib *a = make_lib(0), *b = make_lib(1), *back;
	char dir[300], why[512];
	size_t i;

	path_of(dir, sizeof(dir), "");
	assert_int_equal(tunedlib_write(a, dir, why, sizeof(why)), 0);
	assert_int_equal(
	    tunedlib_add(b, "fp32:TN:16x16x16:b1", CFG_SMALL, 0.01, 0.01, why, sizeof(why)), 0);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		pid_t pid = fork();
		int status = 0;

		assert_true(pid >= 0);
		if (pid == 0) {
			setenv("ROCMD_TUNEDLIB_CRASH_AT", steps[i], 1);
			tunedlib_write(b, dir, why, sizeof(why));
			_exit(0); /* the hook did not fire: the parent fails */
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 99);
		back = NULL;
		assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
		assert_int_equal(tunedlib_generation(back), 1);
		assert_int_equal(tunedlib_count(back), 3); /* a, not b */
		assert_null(tunedlib_find(back, "fp32:TN:16x16x16:b1"));
		tunedlib_free(back);
	}
	assert_int_equal(tunedlib_write(b, dir, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_open(dir, &back, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_count(back), 4);
	/* Above every leftover generation, and the leftovers are gone. */
	assert_true(tunedlib_generation(back) > 2);
	tunedlib_free(back);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | grep -c tmp) -eq 0", dir);
		assert_int_equal(system(cmd), 0);
	}
	tunedlib_free(a);
	tunedlib_free(b);
}

static void
test_select(void **state)
{
	struct tunedlib *lib = make_lib(0);
	struct backend_device_info dev;
	struct tunedlib_choice ch;
	struct gemm_problem p;

	memset(&dev, 0, sizeof(dev));
	dev.compute_units = 2;
	/* Exact. */
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 300, 300, 300, 1);
	assert_int_equal(tunedlib_select(lib, space_cpu(), &p, &dev, &ch), 0);
	assert_int_equal(ch.how, TUNEDLIB_EXACT);
	assert_string_equal(ch.config, CFG_BIG);
	/* Nearest: 290x310x300 is closest to 300^3, whose MT0=512 is valid (M <= 512). */
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 290, 310, 300, 1);
	assert_int_equal(tunedlib_select(lib, space_cpu(), &p, &dev, &ch), 0);
	assert_int_equal(ch.how, TUNEDLIB_NEAREST);
	assert_string_equal(ch.config, CFG_BIG);
	assert_true(ch.distance > 0);
	/* 220^3 is nearer 300^3 too, but MT0=512 exceeds M: the next valid one. */
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 220, 220, 220, 1);
	assert_int_equal(tunedlib_select(lib, space_cpu(), &p, &dev, &ch), 0);
	assert_int_equal(ch.how, TUNEDLIB_NEAREST);
	assert_string_equal(ch.config, CFG_SMALL);
	assert_string_equal(tunedlib_entry_at(lib, ch.entry)->problem, "fp32:NN:128x128x128:b1");
	/* Other transposes: nothing tuned, the default. */
	gemm_problem_init(&p, GEMM_FP32, GEMM_T, GEMM_T, 128, 128, 128, 1);
	assert_int_equal(tunedlib_select(lib, space_cpu(), &p, &dev, &ch), 0);
	assert_int_equal(ch.how, TUNEDLIB_DEFAULT);
	assert_int_equal(ch.entry, -1);
	/* No entry valid: fp32 NN 8x8x8 rules out both (MT0 64/512 > 8, DU > 16). */
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 8, 8, 8, 1);
	assert_int_equal(tunedlib_select(lib, space_cpu(), &p, &dev, &ch), 0);
	assert_int_equal(ch.how, TUNEDLIB_DEFAULT);
	assert_true(strstr(ch.why, "ruled out") != NULL);
	/* No library at all. */
	assert_int_equal(tunedlib_select(NULL, space_cpu(), &p, &dev, &ch), 0);
	assert_int_equal(ch.how, TUNEDLIB_DEFAULT);
	tunedlib_free(lib);
}

static void
test_export_import(void **state)
{
	struct tunedlib *lib = make_lib(1), *back = NULL;
	struct tune_key local;
	char *json = NULL, *csv = NULL, why[512];
	size_t jl, cl;
	int fmt;

	make_id(&local);
	assert_int_equal(tunedlib_export_json(lib, &json, &jl), 0);
	assert_int_equal(tunedlib_export_csv(lib, &csv, &cl), 0);
	assert_null(strstr(json, "code_")); /* results only */
	for (fmt = 0; fmt < 2; fmt++) {
		const char *d = fmt ? csv : json;
		size_t l = fmt ? cl : jl;
		const struct tunedlib_entry *e;

		assert_int_equal(tunedlib_import(d, l, &local, &back, why, sizeof(why)), 0);
		assert_int_equal(tunedlib_count(back), 3);
		e = tunedlib_find(back, "fp32:NN:300x300x300:b1");
		assert_non_null(e);
		assert_string_equal(e->config, CFG_BIG);
		assert_true(e->winner_ms == 4.0 && e->default_ms == 5.5);
		tunedlib_free(back);
		back = NULL;
		/* Another GPU, another SDK: refused, naming the field. */
		local.compute_units = 4;
		assert_int_equal(tunedlib_import(d, l, &local, &back, why, sizeof(why)),
		                 ROCMD_EINVAL);
		assert_null(back);
		assert_true(strstr(why, "compute_units") != NULL);
		assert_true(strstr(why, "GPU") != NULL);
		make_id(&local);
		snprintf(local.runtime, sizeof(local.runtime), "HIP 6.4");
		assert_int_equal(tunedlib_import(d, l, &local, &back, why, sizeof(why)),
		                 ROCMD_EINVAL);
		assert_true(strstr(why, "software") != NULL && strstr(why, "runtime") != NULL);
		make_id(&local);
		/* Cut anywhere: refused as corrupt, never half imported. */
		for (size_t cut = 0; cut < l; cut += 1 + l / 30) {
			int err = tunedlib_import(d, cut, &local, &back, why, sizeof(why));

			if (fmt == 1 && cut > 0 && d[cut - 1] == '\n' && err == 0) {
				/* A CSV cut at a line end is a shorter, valid export. */
				tunedlib_free(back);
				back = NULL;
				continue;
			}
			assert_int_equal(err, ROCMD_ECORRUPT);
			assert_null(back);
		}
	}
	/* A CSV row with a bad field. */
	{
		char *bad = strdup(csv), *at = strstr(bad, ",4,");

		assert_non_null(at);
		at[1] = 'x';
		assert_int_equal(tunedlib_import(bad, cl, &local, &back, why, sizeof(why)),
		                 ROCMD_ECORRUPT);
		assert_true(strstr(why, "line") != NULL);
		free(bad);
	}
	free(json);
	free(csv);
	tunedlib_free(lib);
}

/* The library built from a results store: winners of this software only, with
 * the default times declared alongside; and the import path back into a store. */
static void
test_from_store(void **state)
{
	struct tune_store st;
	struct tune_key k, old;
	struct tunedlib *lib = NULL;
	const struct tunedlib_entry *e;
	char why[256];
	int n = 0;

	assert_int_equal(tune_store_mem_new(&st), 0);
	make_id(&k);
	old = k;
	snprintf(old.runtime, sizeof(old.runtime), "rocmd-cpu 0");
	snprintf(k.problem, sizeof(k.problem), "fp32:NN:128x128x128:b1");
	snprintf(old.problem, sizeof(old.problem), "fp32:NN:64x64x64:b1");
	assert_int_equal(st.set_winner(st.ctx, &k, CFG_SMALL, 0.25, 0.75), 0);
	assert_int_equal(st.set_winner(st.ctx, &old, CFG_SMALL, 0.1, 0.2), 0);
	assert_int_equal(tunedlib_from_store(&st, &k, &lib, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_count(lib), 1); /* the other software's winner is stale */
	e = tunedlib_entry_at(lib, 0);
	assert_string_equal(e->problem, "fp32:NN:128x128x128:b1");
	assert_true(e->winner_ms == 0.25 && e->default_ms == 0.75);
	tunedlib_free(lib);
	tune_store_mem_free(&st);

	/* Imported results become the store's winners. */
	assert_int_equal(tune_store_mem_new(&st), 0);
	lib = make_lib(0);
	assert_int_equal(tunedlib_to_store(lib, &st, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	tunedlib_free(lib);
	make_id(&k);
	assert_int_equal(tunedlib_from_store(&st, &k, &lib, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_count(lib), 3);
	e = tunedlib_find(lib, "fp16:NT:64x64x64:b1");
	assert_non_null(e);
	assert_true(e->default_ms == 0); /* unknown stays unknown */
	tunedlib_free(lib);
	tune_store_mem_free(&st);
}

#define VSHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* A vendor's winner replaces rocmd's only where faster; it is kept on disk,
 * selected for its own problem only, never as another shape's nearest, and
 * never declared a winner of rocmd's own key. */
static void
test_vendor_entries(void **state)
{
	struct tunedlib *lib = make_lib(0), *back = NULL;
	struct backend_device_info dev;
	struct tunedlib_choice ch;
	struct gemm_problem p;
	struct tune_store st;
	struct tune_key vk;
	char why[256], *csv = NULL;
	size_t len = 0;
	int n = 0, taken = -1;

	memset(&dev, 0, sizeof(dev));
	dev.compute_units = 2;
	/* Slower than rocmd's 4.0 ms on 300^3: refused; faster on 128^3: taken. */
	assert_int_equal(tunedlib_offer_vendor(lib, "fp32:NN:300x300x300:b1", "cublaslt", VSHA,
	                                       "SOL=77", 4.5, why, sizeof(why)),
	                 0);
	assert_string_equal(tunedlib_find(lib, "fp32:NN:300x300x300:b1")->vendor, "");
	assert_int_equal(tunedlib_offer_vendor(lib, "fp32:NN:128x128x128:b1", "cublaslt", VSHA,
	                                       "SOL=77", 0.25, why, sizeof(why)),
	                 1);
	assert_string_equal(tunedlib_find(lib, "fp32:NN:128x128x128:b1")->vendor, "cublaslt");
	assert_true(tunedlib_find(lib, "fp32:NN:128x128x128:b1")->default_ms == 0.9); /* kept */
	/* rocmd's 4.0 ms against the vendor's 4.1: within the margin, the
	 * vendor's is taken (then 300^3 is put back as rocmd's for the rest). */
	assert_int_equal(tunedlib_offer_vendor(lib, "fp32:NN:300x300x300:b1", "cublaslt", VSHA,
	                                       "SOL=78", 4.1, why, sizeof(why)),
	                 1);
	assert_string_equal(tunedlib_find(lib, "fp32:NN:300x300x300:b1")->vendor, "cublaslt");
	assert_int_equal(tunedlib_add(lib, "fp32:NN:300x300x300:b1", CFG_BIG, 4.0, 5.5, why,
	                              sizeof(why)),
	                 0);
	assert_string_equal(tunedlib_find(lib, "fp32:NN:300x300x300:b1")->vendor, "");
	/* A problem nobody tuned takes the vendor's. Bad offers are refused. */
	assert_int_equal(tunedlib_offer_vendor(lib, "fp32:TN:64x64x64:b1", "cublaslt", VSHA,
	                                       "SOL=5", 0.01, why, sizeof(why)),
	                 1);
	assert_true(tunedlib_offer_vendor(lib, "fp32:TN:64x64x64:b1", "cublaslt", "zz", "SOL=5",
	                                  0.001, why, sizeof(why)) < 0);
	assert_true(tunedlib_offer_vendor(lib, "fp32:TN:64x64x64:b1", "", VSHA, "SOL=5", 0.001,
	                                  why, sizeof(why)) < 0);
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 128, 128, 128, 1);
	assert_int_equal(tunedlib_vendor_entry(lib, &p), 1); /* fp16:NT:64, then fp32:NN:128 */
	/* 120^3 would be nearest to 128^3's entry: a vendor solution is not
	 * another shape's kernel, so 300^3's (valid) one runs. */
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 120, 120, 120, 1);
	assert_int_equal(tunedlib_vendor_entry(lib, &p), -1);
	assert_int_equal(tunedlib_select(lib, space_cpu(), &p, &dev, &ch), 0);
	assert_true(ch.how != TUNEDLIB_EXACT);
	assert_true(ch.entry < 0 || !tunedlib_entry_at(lib, ch.entry)->vendor[0]);
	/* On disk and back. */
	assert_int_equal(tunedlib_write(lib, tmpdir, why, sizeof(why)), 0);
	assert_int_equal(tunedlib_open(tmpdir, &back, why, sizeof(why)), 0);
	assert_string_equal(tunedlib_find(back, "fp32:NN:128x128x128:b1")->vendor, "cublaslt");
	assert_string_equal(tunedlib_find(back, "fp32:NN:128x128x128:b1")->vendor_sha256, VSHA);
	assert_string_equal(tunedlib_find(back, "fp32:NN:128x128x128:b1")->config, "SOL=77");
	/* Not a result of rocmd's: left out of the CSV and of the store. */
	assert_int_equal(tunedlib_export_csv(back, &csv, &len), 0);
	assert_null(strstr(csv, "SOL=77"));
	free(csv);
	assert_int_equal(tune_store_mem_new(&st), 0);
	assert_int_equal(tunedlib_to_store(back, &st, &n, why, sizeof(why)), 0);
	assert_int_equal(n, tunedlib_count(back) - 2);
	/* Merging a store's vendor winners: the faster one only. */
	make_id(&vk);
	snprintf(vk.backend, sizeof(vk.backend), "cublaslt");
	snprintf(vk.problem, sizeof(vk.problem), "fp32:NN:300x300x300:b1");
	assert_int_equal(st.set_winner(st.ctx, &vk, "SOL=9", 3.0, 3.5), 0);
	snprintf(vk.problem, sizeof(vk.problem), "fp16:NT:64x64x64:b1");
	assert_int_equal(st.set_winner(st.ctx, &vk, "SOL=10", 0.5, 0.5), 0); /* slower */
	snprintf(vk.problem, sizeof(vk.problem), "fp16:NT:64x64x64:b1@ld=80.64.64");
	assert_int_equal(st.set_winner(st.ctx, &vk, "SOL=11", 0.01, 0.01), 0); /* a layout */
	vk.problem[0] = '\0';
	assert_int_equal(tunedlib_merge_vendor(lib, &st, &vk, "cublaslt", VSHA, &taken, why,
	                                       sizeof(why)),
	                 0);
	assert_int_equal(taken, 1);
	assert_string_equal(tunedlib_find(lib, "fp32:NN:300x300x300:b1")->config, "SOL=9");
	assert_string_equal(tunedlib_find(lib, "fp16:NT:64x64x64:b1")->vendor, "");
	/* A damaged vendor field is refused as corrupt. */
	{
		char path[300], cmd[1200];

		snprintf(path, sizeof(path), "%s/v1/index.json", tmpdir);
		snprintf(cmd, sizeof(cmd), "chmod u+w '%s' '%s/v1' && sed -i 's/\"%s\"/\"xyz\"/' '%s'",
		         path, tmpdir, VSHA, path);
		assert_int_equal(system(cmd), 0);
		tunedlib_free(back);
		back = NULL;
		assert_int_equal(tunedlib_open(tmpdir, &back, why, sizeof(why)), ROCMD_ECORRUPT);
		assert_non_null(strstr(why, "vendor"));
	}
	tune_store_mem_free(&st);
	tunedlib_free(back);
	tunedlib_free(lib);
}

static void
test_dir_name(void **state)
{
	struct tune_key id;
	char buf[96];

	make_id(&id);
	snprintf(id.backend, sizeof(id.backend), "cuda");
	snprintf(id.arch, sizeof(id.arch), "sm_90");
	snprintf(id.runtime, sizeof(id.runtime), "NVRTC 13.0");
	assert_int_equal(tunedlib_dir_name(&id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "sm_90-NVRTC_13.0");
	snprintf(id.arch, sizeof(id.arch), "../x");
	assert_int_equal(tunedlib_dir_name(&id, buf, sizeof(buf)), 0);
	assert_null(strchr(buf, '/'));
	assert_true(buf[0] != '.');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test(test_add_validates),
	    cmocka_unit_test_setup_teardown(test_corrupt_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_leaves_previous, setup, teardown),
	    cmocka_unit_test(test_select),
	    cmocka_unit_test(test_export_import),
	    cmocka_unit_test(test_from_store),
	    cmocka_unit_test_setup_teardown(test_vendor_entries, setup, teardown),
	    cmocka_unit_test(test_dir_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
