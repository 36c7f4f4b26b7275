/*
 * The tuning parameter space: named parameters, each with an ordered list of
 * values, plus a constraint predicate. Names follow Tensile where they fit:
 *
 *   MT0, MT1   macro tile (rows x columns of C one workgroup computes)
 *   DU         depth U: K-slice loaded per iteration (Tensile DepthU)
 *   WG0, WG1   workgroup shape (threads)
 *   TT0, TT1   thread tile (C entries per thread)
 *   VW         vector width of global reads
 *   PGR        prefetch global read (1) / double-buffered LDS (2)
 *   LDSPAD     LDS padding in elements
 *   GSU        global split-U (split-K)
 *   MC         matrix cores (MFMA / WMMA / mma.sync) on or off
 *   UNROLL     inner loop unroll
 *
 * A point is a value index per parameter; the whole space is enumerated lazily
 * through a mixed-radix index (the first parameter varies fastest), so spaces
 * of 10^6 points cost nothing until a point is asked for. Neighbours of a point
 * change one parameter to an adjacent value. A configuration's key is
 * "NAME=value;NAME=value;..." in parameter order; the JSON form is an object.
 *
 * A space is plain data: it can be copied, restricted (--fix NAME=v) and
 * rebuilt from a landscape file's header.
 */
#ifndef ROCMD_KERNELS_SPACE_H
#define ROCMD_KERNELS_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gemm.h"

#define SPACE_MAX_PARAMS 24
#define SPACE_MAX_VALUES 256 /* a vendor library's candidate list (kernels/vendor.h) is one long parameter */
#define SPACE_NAME_MAX 16
#define SPACE_KEY_MAX 512

struct backend_device_info;

struct space_param {
	char name[SPACE_NAME_MAX];
	int nvalues;
	int64_t values[SPACE_MAX_VALUES]; /* ordered: adjacent values are neighbours */
	int dflt;			  /* index of the default value */
	/* A parameter added after keys were stored: a key that leaves it out means
	 * absent_value (absent_ok 1); otherwise every key names every parameter. */
	int absent_ok;
	int64_t absent_value;
};

/* One point: a value index per parameter. */
struct space_point {
	uint8_t idx[SPACE_MAX_PARAMS];
};

struct space_def;

/*
 * The constraint predicate. V holds the values (not indexes) in parameter
 * order. Returns 1 when the point can run on DEV for P, 0 when ruled out, with
 * a short reason in WHY. DEV or P may be NULL: then only shape-independent
 * rules apply.
 */
typedef int (*space_check_fn)(const struct space_def *s, const int64_t *v,
			      const struct gemm_problem *p, const struct backend_device_info *dev,
			      char *why, size_t whylen);

struct space_def {
	char name[32]; /* "cpu", "gpu-fma", ... */
	int nparams;
	struct space_param params[SPACE_MAX_PARAMS];
	space_check_fn check; /* NULL: everything passes */
	/* Why the default point is what it is for the problem the space was built
	 * for (the backend's shape class), "" when it is fixed. */
	char dflt_why[160];
};

/* A configuration as handed to a backend: the space and the values. */
struct tune_config {
	const struct space_def *space;
	int64_t v[SPACE_MAX_PARAMS];
};

/* The built-in spaces: the CPU backend's and the Tensile-style GPU space that
 * the CUDA and HIP backends may return (or narrow) from their space op. */
const struct space_def *space_cpu(void);
const struct space_def *space_gpu(void);

/* Number of points (product of the value counts), constrained or not. */
uint64_t space_size(const struct space_def *s);
/* Index of a parameter by name, or -1. */
int space_param_index(const struct space_def *s, const char *name);
/* Mixed-radix index <-> point. */
void space_point_from_index(const struct space_def *s, uint64_t index, struct space_point *pt);
uint64_t space_point_index(const struct space_def *s, const struct space_point *pt);
void space_point_default(const struct space_def *s, struct space_point *pt);
/* The default, or when the predicate rules it out for P on DEV, the valid
 * point fewest one-step moves away. 0, or ROCMD_ENOTFOUND. */
int space_default_for(const struct space_def *s, const struct gemm_problem *p,
		      const struct backend_device_info *dev, struct space_point *pt);
void space_point_values(const struct space_def *s, const struct space_point *pt, int64_t *v);
void space_config(const struct space_def *s, const struct space_point *pt, struct tune_config *c);
/* A configuration value by parameter name, or DFLT if the space lacks it. */
int64_t tune_config_get(const struct tune_config *c, const char *name, int64_t dflt);
/* Applies the predicate; 1 valid, 0 ruled out (reason in WHY). */
int space_valid(const struct space_def *s, const struct space_point *pt,
		const struct gemm_problem *p, const struct backend_device_info *dev, char *why,
		size_t whylen);
/*
 * Neighbours: every point that differs in one parameter by one step of its
 * value list (valid or not). Writes at most MAX points, returns the count.
 */
int space_neighbours(const struct space_def *s, const struct space_point *pt,
		     struct space_point *out, int max);
/* "MT0=64;MT1=128;..." and back. Parsing accepts any order and rejects
 * unknown names and values not in the list. */
int space_key(const struct space_def *s, const struct space_point *pt, char *buf, size_t len);
int space_key_parse(const struct space_def *s, const char *key, struct space_point *pt);
/* {"MT0":64,...}, and the parse back (any order, whitespace allowed, every
 * parameter exactly once). */
int space_json(const struct space_def *s, const struct space_point *pt, char *buf, size_t len);
int space_json_parse(const struct space_def *s, const char *json, struct space_point *pt);
/* The compile-time defines for a point: "MT0=64" strings written into STORE
 * (SPACE_MAX_PARAMS entries of 40 bytes), pointers in DEFS. Returns the count. */
int space_defines(const struct space_def *s, const struct space_point *pt,
		  char store[][40], const char **defs);
/* Keeps only VALUE for parameter NAME (its index becomes the default). */
int space_fix(struct space_def *s, const char *name, int64_t value);
/* "NAME=v1,v2,v3" lines as in a landscape header, and the parse back. */
int space_param_line(const struct space_param *sp, char *buf, size_t len);
int space_param_parse_line(const char *line, struct space_param *out);

#endif
