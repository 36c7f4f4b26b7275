/*
 * rocmtune's command-line table (common/cli.h): its commands and options with
 * their help. rocmtune.c parses run, replay and space with it; `rocmtune lib`
 * is checked against it before rocmtune-tunedlib.c reads its values; the
 * build generates rocmtune.1 and the completions from it (tools/cli-doc.c).
 */
#include "common/cli.h"

/* The table is laid out by hand, a row per option. */
/* clang-format off */

extern const struct cli_prog rocmtune_prog;

#define END {NULL, 0, CLI_FLAG, NULL, NULL, NULL, 0, 0, 0}
#define BIG ((long long)1 << 40)

/* run, replay and space share one set, as they always have. */
static const struct cli_opt tune_opts[] = {
	{"backend", 0, CLI_VALUE, "B", "cpu (default), cuda, hip, rocblas, hipblaslt or cublaslt",
	 NULL, 0, 0, 0},
	{"shape", 0, CLI_VALUE, "MxNxK[:bN]", "the GEMM problem (a batch of N after :b)", NULL, 0, 0,
	 0},
	{"dtype", 0, CLI_CHOICE, "TYPE", "the element type (fp32 by default)", "fp32|fp16|bf16", 0,
	 0, 0},
	{"trans", 0, CLI_CHOICE, "TT", "the transposes of A and B (NN by default)", "NN|NT|TN|TT",
	 0, 0, 0},
	{"strategy", 0, CLI_VALUE, "S[,S...]",
	 "the search: exhaustive, random, ls, ga, sa, sar or surr (replay: several)", NULL, 0, 0, 0},
	{"budget", 0, CLI_INT, "N", "the number of evaluations", NULL, 0, BIG, 0},
	{"seconds", 0, CLI_NUMBER, "S", "stop after S seconds", NULL, 0, 0, 0},
	{"seed", 0, CLI_INT, "N", "the random seed (1 by default)", NULL, 0, (long long)1 << 62, 0},
	{"db", 0, CLI_VALUE, "FILE", "the results store (SQLite) to read and write", "@file", 0, 0,
	 0},
	{"record", 0, CLI_VALUE, "FILE.csv", "write every evaluation to a CSV landscape", "@file", 0,
	 0, 0},
	{"landscape", 0, CLI_VALUE, "FILE", "replay: the recorded landscape", "@file", 0, 0, 0},
	{"fix", 0, CLI_VALUE, "NAME=V", "hold a parameter of the space at V (repeatable)", NULL, 0, 0,
	 CLI_OPT_REPEAT},
	{"timeout", 0, CLI_NUMBER, "MS", "an evaluation's time limit", NULL, 0, 0, 0},
	{"runs", 0, CLI_INT, "N", "timed runs per evaluation (replay: replicates)", NULL, 0, BIG, 0},
	{"warmup", 0, CLI_NUMBER, "MS", "warm-up time before timing", NULL, 0, 0, 0},
	{"topk", 0, CLI_INT, "K", "re-time the K best before a winner is declared (3; -1: none)",
	 NULL, -1, BIG, 0},
	{"retime", 0, CLI_INT, "R", "rounds of re-timing", NULL, -1, BIG, 0},
	{"no-isolate", 0, CLI_FLAG, NULL, "evaluate in this process, not a child", NULL, 0, 0, 0},
	{"no-seeds", 0, CLI_FLAG, NULL, "start without the known good configurations", NULL, 0, 0,
	 0},
	{"alpha", 0, CLI_NUMBER, "A", "the GEMM's alpha (1)", NULL, 0, 0, 0},
	{"beta", 0, CLI_NUMBER, "B", "the GEMM's beta (0)", NULL, 0, 0, 0},
	{"device", 0, CLI_INT, "N", "the GPU's index", NULL, 0, 1024, 0},
	{"list", 0, CLI_INT, "N", "space: list the first N valid points", NULL, 0, BIG, 0},
	{"json", 0, CLI_FLAG, NULL, "JSON output", NULL, 0, 0, 0},
	{"quiet", 0, CLI_FLAG, NULL, "no progress lines", NULL, 0, 0, 0},
	{"library", 0, CLI_VALUE, "PATH", "the vendor library to load (rocblas, hipblaslt, cublaslt)",
	 "@file", 0, 0, 0},
	{"tensile-dir", 0, CLI_VALUE, "DIR", "rocBLAS's Tensile library folder", "@dir", 0, 0, 0},
	{"sysroot", 0, CLI_VALUE, "DIR", "find the vendor's files under DIR", "@dir", 0, 0, 0},
	END,
};

/* rocmtune lib's subcommands share one set as well (rocmtune-tunedlib.c). */
static const struct cli_opt lib_opts[] = {
	{"db", 0, CLI_VALUE, "FILE", "the results store", "@file", 0, 0, 0},
	{"backend", 0, CLI_VALUE, "B", "the backend whose results count", NULL, 0, 0, 0},
	{"out", 0, CLI_VALUE, "PATH", "build: the library folder; export: the file", "@file", 0, 0,
	 0},
	{"dir", 0, CLI_VALUE, "DIR", "the tuned library's folder", "@dir", 0, 0, 0},
	{"shape", 0, CLI_VALUE, "MxNxK", "query: the problem", NULL, 0, 0, 0},
	{"dtype", 0, CLI_CHOICE, "TYPE", "query: the element type", "fp32|fp16|bf16", 0, 0, 0},
	{"trans", 0, CLI_CHOICE, "TT", "query: the transposes", "NN|NT|TN|TT", 0, 0, 0},
	{"hiprtc", 0, CLI_VALUE, "PATH", "build: the hiprtc library that compiles the code objects",
	 "@file", 0, 0, 0},
	{"device", 0, CLI_INT, "N", "the GPU's index", NULL, 0, 1024, 0},
	{"no-code", 0, CLI_FLAG, NULL, "build: the index alone, no code objects", NULL, 0, 0, 0},
	{"csv", 0, CLI_FLAG, NULL, "export: CSV instead of JSON", NULL, 0, 0, 0},
	{"json", 0, CLI_FLAG, NULL, "JSON output", NULL, 0, 0, 0},
	END,
};

#define LIB(name, args, min, max, help)                                                            \
	{name, args, min, max, args[0] ? "@file" : NULL, help, NULL, lib_opts, NULL, NULL, NULL, 0}

static const struct cli_cmd lib_cmds[] = {
	LIB("build", "", 0, 0, "build the tuned library from a store's winners (--db, --backend, --out)"),
	LIB("show", "", 0, 0, "what a tuned library holds (--dir)"),
	LIB("query", "", 0, 0, "which kernel the library serves for a shape (--dir, --shape)"),
	LIB("export", "", 0, 0, "a store's winners as JSON or CSV (--db, --backend)"),
	LIB("import", "FILE", 1, 1, "import exported winners into a store (--db, --backend)"),
	{NULL},
};

/* bench-run: one variant of `rocmctl bench`, started by it (rocmtune-bench.c). */
static const struct cli_opt bench_opts[] = {
	{"variant", 0, CLI_VALUE, "NAME", "the variant's name, repeated in the output", NULL, 0, 0,
	 0},
	{"backend", 0, CLI_VALUE, "B", "cpu (default), cuda, rocblas, hipblaslt or cublaslt", NULL,
	 0, 0, 0},
	{"api", 0, CLI_FLAG, NULL, "through librocmd-gemm's C API (backends cpu, cuda)", NULL, 0, 0,
	 0},
	{"tuned", 0, CLI_VALUE, "DIR", "with --api: a tuned library folder, or a folder of them",
	 "@dir", 0, 0, 0},
	{"problems", 0, CLI_VALUE, "KEY,...", "the problems (fp32:NN:64x64x64:b1,...)", NULL, 0, 0,
	 CLI_OPT_REQUIRED},
	{"runs", 0, CLI_INT, "N", "timed runs per problem (9)", NULL, 1, 100000, 0},
	{"warmup", 0, CLI_NUMBER, "MS", "warm-up time before timing", NULL, 0, 0, 0},
	{"energy-ms", 0, CLI_NUMBER, "MS", "how long the energy is measured per problem (200)",
	 NULL, 0, 0, 0},
	{"library", 0, CLI_VALUE, "PATH", "the vendor library to load", "@file", 0, 0, 0},
	{"tensile-dir", 0, CLI_VALUE, "DIR", "rocBLAS's Tensile library folder", "@dir", 0, 0, 0},
	{"sysroot", 0, CLI_VALUE, "DIR", "read /sys under DIR", "@dir", 0, 0, 0},
	{"device", 0, CLI_INT, "N", "the GPU's index", NULL, 0, 1024, 0},
	END,
};

#define TUNE(name, help, about)                                                                    \
	{name, "", 0, 0, NULL, help, about, tune_opts, NULL, NULL, NULL, 0}

static const struct cli_cmd commands[] = {
	TUNE("run", "tune one GEMM problem on a backend",
	     "Tunes one GEMM problem (--shape) on a backend with a search strategy, checking each "
	     "configuration against a reference before its time counts; the results go to --db."),
	TUNE("replay", "replay strategies over a recorded landscape",
	     "Replays search strategies over a landscape --record wrote, to compare them without a "
	     "GPU."),
	TUNE("space", "the search space of a backend for a problem",
	     "Prints a backend's search space for a problem and how many of its points are valid "
	     "on this device."),
	{"lib", "", 0, 0, NULL, "the tuned kernel library: build, show, query, export, import", NULL,
	 NULL, lib_cmds, NULL, NULL, 0},
	{"bench-run", "", 0, 0, NULL, "measure one variant of rocmctl bench in this process (JSON)",
	 "Measures one variant of rocmctl bench: the GEMM problems through librocmd-gemm (--api) "
	 "or a vendor library's own default, timed as the tuner times, with the device memory and "
	 "energy the platform reports; prints one JSON object. rocmctl bench starts it once per "
	 "variant and round.",
	 bench_opts, NULL, NULL, NULL, 0},
	{NULL},
};

static const struct cli_opt globals[] = {
	{"version", 'V', CLI_FLAG, NULL, "print the version and exit", NULL, 0, 0, CLI_OPT_ALONE},
	END,
};

static const struct cli_cmd root = {
	"rocmtune", "", 0, 0, NULL, "rocmd's GEMM tuner without the daemon",
	"rocmd's GEMM tuner without the daemon: tune a problem, replay strategies, inspect a "
	"search space, build and query the tuned kernel library.",
	globals, commands, NULL, NULL, 0,
};

const struct cli_prog rocmtune_prog = {
	"rocmtune",
	1,
	"rocmd's GEMM tuner without the daemon",
	&root,
	"rocmtune runs the tuner of rocmd(8) by hand: it measures the configurations of rocmd's "
	"own GEMM kernels (backends cpu, cuda, hip) or the vendor libraries' solutions (rocblas, "
	"hipblaslt, cublaslt) for one problem, stores every evaluation in a results store, and "
	"builds the tuned library librocmd-gemm serves from the winners.",
	"  0\tdone.\n\n"
	"  1\ta failure.\n\n"
	"  2\ta usage error.\n\n"
	"  3\tthe backend is not available here.",
	NULL,
	NULL,
	"  rocmtune run --backend cpu --shape 512x512x512 --budget 50\ttune one problem on the CPU.\n\n"
	"  rocmtune space --backend cuda --shape 4096x4096x4096 --dtype fp16\tthe space on an "
	"NVIDIA GPU.",
	"rocmd(8), rocmctl(1)",
};
/* clang-format on */
