/*
 * rocmctl's command table (common/cli.h): every command, sub-command and
 * option with its help. It parses rocmctl's arguments, prints each
 * command's --help, and the build generates rocmctl.1 and the bash, zsh and
 * fish completions from it (tools/cli-doc.c).
 */
#include "cmd.h"

#include "common/paths.h"

/* The table is laid out by hand, a row per option. */
/* clang-format off */

#define END {NULL, 0, CLI_FLAG, NULL, NULL, NULL, 0, 0, 0}
#define NOOPTS NULL
#define LEAF(name, args, min, max, complete, help, about, opts, fn)                                 \
	{name, args, min, max, complete, help, about, opts, NULL, NULL, fn, 0}

static const struct cli_opt globals[] = {
	{"socket", 'S', CLI_VALUE, "PATH",
	 "the daemon's socket (default: $ROCMD_SOCKET, your own daemon's, else "
	 ROCMD_SYSTEM_SOCKET ")", "@file", 0, 0, 0},
	{"json", 'j', CLI_FLAG, NULL,
	 "machine-readable JSON output; an error is one JSON object on stderr", NULL, 0, 0, 0},
	{"version", 'V', CLI_FLAG, NULL, "print the version and exit", NULL, 0, 0, CLI_OPT_ALONE},
	END,
};

static const struct cli_opt events_opts[] = {
	{"follow", 'f', CLI_FLAG, NULL, "keep streaming new events", NULL, 0, 0, 0},
	{"limit", 'n', CLI_INT, "N", "show N events (1 to 1000; 20 by default)", NULL, 1, 1000, 0},
	{"kind", 'k', CLI_VALUE, "KIND", "only events whose kind starts with KIND (daemon., lib.)",
	 NULL, 0, 0, 0},
	{"after", 'a', CLI_INT, "ID", "the events after event ID, oldest first", NULL, 0,
	 (long long)1 << 53, 0},
	{"all", 'A', CLI_FLAG, NULL, "every event from the first", NULL, 0, 0, 0},
	END,
};

static const struct cli_cmd sdk_cmds[] = {
	LEAF("list", "", 0, 0, NULL, "every HIP SDK install seen, its version, rocBLAS archs and GPU coverage",
	     "Every HIP SDK install seen (removed ones too), its version and where the version came "
	     "from, its rocBLAS archs and whether each GPU's arch is covered.",
	     NOOPTS, cmd_sdk_list),
	LEAF("show", "ID|PATH", 1, 1, "@dir", "one install in detail: version sources, library, problems",
	     NULL, NOOPTS, cmd_sdk_show),
	LEAF("rescan", "", 0, 0, NULL, "scan now and wait for the result (admin)", NULL, NOOPTS,
	     cmd_sdk_rescan),
	{NULL},
};

static const struct cli_cmd gpu_cmds[] = {
	LEAF("list", "", 0, 0, NULL, "the GPUs found: arch, name, kind, compute units, memory", NULL,
	     NOOPTS, cmd_gpu_list),
	{NULL},
};

static const struct cli_opt tune_add_opts[] = {
	{"dtype", 0, CLI_CHOICE, "TYPE", "the element type (fp32 by default)", "fp32|fp16|bf16", 0,
	 0, 0},
	{"trans", 0, CLI_CHOICE, "TT", "the transposes of A and B (NN by default)", "NN|NT|TN|TT",
	 0, 0, 0},
	{"batch", 0, CLI_INT, "B", "the batch count", NULL, 1, 1 << 16, 0},
	{"budget", 0, CLI_INT, "N", "the number of evaluations", NULL, 1, 100000, 0},
	END,
};

static const struct cli_opt tune_results_opts[] = {
	{"all", 0, CLI_FLAG, NULL, "stale results too (their software has changed since)", NULL,
	 0, 0, 0},
	END,
};

static const struct cli_opt tune_export_opts[] = {
	{"format", 0, CLI_CHOICE, "FORMAT", "json (default) or csv", "json|csv", 0, 0, 0},
	{"output", 'o', CLI_VALUE, "FILE", "write to FILE instead of standard output", "@file", 0, 0,
	 0},
	END,
};

static const struct cli_opt tune_report_opts[] = {
	{"html", 0, CLI_VALUE, "FILE", "write the page to FILE (without it: the report's JSON)", "@file", 0, 0, 0},
	{"all", 0, CLI_FLAG, NULL, "stale jobs too (superseded by a re-tune)", NULL, 0, 0, 0},
	END,
};

static const struct cli_cmd tune_cmds[] = {
	LEAF("status", "", 0, 0, NULL, "idle signals, the decision and why, the queue",
	     "Every idle signal next to the policy, the decision with its reason, the running "
	     "job's progress, the preemption latencies and the queue.",
	     NOOPTS, cmd_tune_status),
	LEAF("watch", "", 0, 0, NULL, "follow the tuning with a progress bar until the queue is empty",
	     "Shows the running job's evaluations as a progress bar (percentage, rate, time left; "
	     "a line per job when not on a terminal) and what tuning waits for, until the queue is "
	     "empty. Exit 0 when it emptied, 1 when a job failed meanwhile, 5 when nothing would "
	     "run (the queue empty, tuning paused, or off: rocmctl tune start). Ctrl-C stops the "
	     "watch, not the tuning.",
	     NOOPTS, cmd_tune_watch),
	LEAF("start", "", 0, 0, NULL, "tune now, idle or not (admin)", NULL, NOOPTS,
	     cmd_tune_control),
	LEAF("pause", "", 0, 0, NULL, "stop tuning until resumed (admin)", NULL, NOOPTS,
	     cmd_tune_control),
	LEAF("resume", "", 0, 0, NULL, "tune when idle again (admin)", NULL, NOOPTS,
	     cmd_tune_control),
	LEAF("add", "MxNxK", 1, 1, NULL, "queue a GEMM shape for tuning (admin)", NULL,
	     tune_add_opts, cmd_tune_add),
	LEAF("results", "[TARGET]", 0, 1, NULL, "tuned shapes: vendor libraries per target, rocmd's kernels",
	     "The vendor libraries' tuned shapes per deploy target (calls, the library's own time, "
	     "the tuned time, which library won, whether the override is live) and rocmd's own "
	     "kernels' (winner, time, default, speed-up, evaluations).",
	     tune_results_opts, cmd_tune_results),
	LEAF("export", "", 0, 0, NULL, "the tuned shapes as JSON or CSV", NULL, tune_export_opts,
	     cmd_tune_export),
	LEAF("report", "", 0, 0, NULL, "one self-contained HTML page of plots of the tuning results",
	     "Writes one self-contained HTML page (inline SVG, nothing fetched) with --html FILE: "
	     "tuned against default per shape, the roofline position, each job's convergence.",
	     tune_report_opts, cmd_tune_report),
	LEAF("import", "FILE", 1, 1, "@file", "import tuned shapes exported elsewhere (admin; - reads stdin)",
	     NULL, NOOPTS, cmd_tune_import),
	{"capture", "PROGRAM [ARGS...]", 1, -1, "@command",
	 "run a program and queue the GEMMs it calls (admin to queue)",
	 "Runs PROGRAM here, as you, with rocBLAS's and hipBLASLt's own logging on (and "
	 "librocmd-gemm's, ROCMD_GEMM_LOG_PATH), and queues the distinct GEMMs it called with "
	 "their call counts for tuning: the vendors' for their overrides, librocmd-gemm's as "
	 "jobs of rocmd's kernels. Every word after PROGRAM is its own.",
	 NULL, NULL, NULL, cmd_tune_capture, CLI_CMD_REST},
	LEAF("import-log", "FILE", 1, 1, "@file",
	     "queue the GEMMs of a rocblas-bench, hipblaslt-bench or TunableOp log (admin)", NULL,
	     NOOPTS, cmd_tune_import_log),
	LEAF("off", "TARGET", 1, 1, NULL, "withdraw a target's overrides and stop tuning it (admin)",
	     NULL, NOOPTS, cmd_tune_switch),
	LEAF("on", "TARGET", 1, 1, NULL, "tune a target again and apply its overrides (admin)", NULL,
	     NOOPTS, cmd_tune_switch),
	{NULL},
};

static const struct cli_opt pkg_import_opts[] = {
	{"sdk", 0, CLI_VALUE, "X.Y[.Z]", "the SDK version the package is for, when its name does not say",
	 NULL, 0, 0, 0},
	END,
};

static const struct cli_opt pkg_show_opts[] = {
	{"files", 0, CLI_FLAG, NULL, "list every file with its hash and size", NULL, 0, 0, 0},
	END,
};

static const struct cli_opt pkg_match_opts[] = {
	{"sdk", 0, CLI_VALUE, "X.Y.Z", "the SDK version", NULL, 0, 0, CLI_OPT_REQUIRED},
	{"arch", 0, CLI_VALUE, "GFX", "the GPU arch (gfx1103)", NULL, 0, 0, CLI_OPT_REQUIRED},
	{"platform", 0, CLI_CHOICE, "OS", "windows or linux (this machine's by default)",
	 "windows|linux", 0, 0, 0},
	END,
};

static const struct cli_opt pkg_available_opts[] = {
	{"sdk", 0, CLI_VALUE, "X.Y.Z", "match for this SDK version (with --arch)", NULL, 0, 0, 0},
	{"arch", 0, CLI_VALUE, "GFX", "match for this GPU arch (with --sdk)", NULL, 0, 0, 0},
	{"platform", 0, CLI_CHOICE, "OS", "windows or linux (this machine's by default)",
	 "windows|linux", 0, 0, 0},
	END,
};

static const struct cli_cmd pkg_cmds[] = {
	LEAF("import", "PATH", 1, 1, "@file", "import an archive (7z, zip, tar.*) or folder (admin)",
	     NULL, pkg_import_opts, cmd_pkg_import),
	LEAF("list", "", 0, 0, NULL, "the stored packages and the store's size", NULL, NOOPTS,
	     cmd_pkg_list),
	LEAF("show", "ID", 1, 1, NULL, "one package: identity, warnings, files", NULL, pkg_show_opts,
	     cmd_pkg_show),
	LEAF("rm", "ID", 1, 1, NULL, "remove a package not deployed (admin)", NULL, NOOPTS,
	     cmd_pkg_rm),
	LEAF("verify", "[ID]", 0, 1, NULL, "re-hash the store, or one package's files (admin)", NULL,
	     NOOPTS, cmd_pkg_verify),
	LEAF("match", "", 0, 0, NULL, "which package fits an SDK and arch, and why each other does not",
	     NULL, pkg_match_opts, cmd_pkg_match),
	LEAF("refresh", "", 0, 0, NULL, "fetch every feed's metadata, checked, into the cache (admin)",
	     NULL, NOOPTS, cmd_pkg_refresh),
	LEAF("available", "", 0, 0, NULL, "what the feeds offer, and what would match an SDK and arch",
	     NULL, pkg_available_opts, cmd_pkg_available),
	LEAF("fetch", "[NAME]", 0, 1, NULL,
	     "download a feed's package, verify it and import it (admin)", NULL, pkg_available_opts,
	     cmd_pkg_fetch),
	{NULL},
};

#define OVERLAY                                                                                    \
	{"overlay", 0, CLI_FLAG, NULL,                                                             \
	 "the overlay target (ROCBLAS_TENSILE_LIBPATH) instead of the SDK", NULL, 0, 0, 0}
#define TARGET                                                                                     \
	{"target", 't', CLI_VALUE, "TARGET", "the target (the same as the argument)", NULL, 0, 0, 0}

static const struct cli_opt lib_deploy_opts[] = {
	TARGET,
	OVERLAY,
	{"package", 'p', CLI_INT, "ID", "deploy this package instead of the matching one", NULL, 1,
	 (long long)1 << 53, 0},
	{"force", 'f', CLI_LIST, "CHECK,...", "skip these checks (platform is never skipped)",
	 "sdk|binary|arch|platform",
	 0, 0, 0},
	{"no-merge", 0, CLI_FLAG, NULL,
	 "replace the whole library folder: no merged library keeps a GPU's arch the package lacks",
	 NULL, 0, 0, 0},
	{"dry-run", 'n', CLI_FLAG, NULL, "say what would change and change nothing", NULL, 0, 0, 0},
	{"yes", 'y', CLI_FLAG, NULL,
	 "do not ask before a forced or --no-merge deploy loses a GPU's arch (a --no-merge "
	 "deploy that loses one needs it when not on a terminal)",
	 NULL, 0, 0, 0},
	END,
};

static const struct cli_opt lib_target_opts[] = {TARGET, OVERLAY, END};
static const struct cli_opt lib_recover_opts[] = {TARGET, END};

static const struct cli_opt lib_history_opts[] = {
	TARGET,
	{"limit", 'l', CLI_INT, "N", "the newest N steps", NULL, 1, 100000, 0},
	END,
};

static const struct cli_opt lib_rollback_opts[] = {
	TARGET,
	OVERLAY,
	{"to", 'T', CLI_CHOICE, "WHERE", "previous (one step back, the default) or original",
	 "original|previous", 0, 0, 0},
	{"generation", 'g', CLI_INT, "N", "with --to original: an older generation of the originals",
	 NULL, 1, 1000000, 0},
	END,
};

static const struct cli_opt lib_forget_opts[] = {
	TARGET,
	{"yes", 'y', CLI_FLAG, NULL, "do not ask (needed when not on a terminal)", NULL, 0, 0, 0},
	END,
};

static const struct cli_cmd lib_cmds[] = {
	LEAF("status", "", 0, 0, NULL, "every target: what is deployed, backups, drift, the matching package",
	     NULL, NOOPTS, cmd_lib_status),
	LEAF("deploy", "[TARGET]", 0, 1, NULL, "deploy the matching (or given) package (admin)",
	     "Deploys the package that matches the target's SDK and every GPU's arch, or the one "
	     "--package names, after backing up the vendor's originals (admin). A package that "
	     "fails a check (sdk, binary, arch, platform) is refused; --force skips the checks it "
	     "names, never platform. A GPU's arch the package lacks that the library in place "
	     "serves is kept: the package's files plus that library's files for it (a merged "
	     "library), when the rocBLAS binary is built for it; --no-merge replaces the whole "
	     "folder after confirmation: on a terminal a forced or --no-merge deploy that leaves "
	     "a GPU without its kernels asks first unless -y, and off a terminal a --no-merge "
	     "deploy that would needs -y. TARGET is sdk-N, overlay-N, app-NAME, or an SDK's path "
	     "or id; it may be left out when one SDK is present.",
	     lib_deploy_opts, cmd_lib_deploy),
	LEAF("verify", "[TARGET]", 0, 1, NULL, "re-check hashes, arch, pairing and the GEMM smoke test (admin)",
	     "Re-checks the deployed files' hashes, every GPU's arch, that binary and library come "
	     "from one package, and runs the GEMM smoke test where a GPU is present (admin); a "
	     "failure rolls back to the originals.",
	     lib_target_opts, cmd_lib_verify),
	LEAF("history", "[TARGET]", 0, 1, NULL, "what was done to each target", NULL,
	     lib_history_opts, cmd_lib_history),
	LEAF("rollback", "[TARGET]", 0, 1, NULL, "one step back along the history, or the originals (admin)",
	     "One step back along the target's history, or to the vendor's originals with --to "
	     "original (admin). With nothing to roll back it says so and exits 5.",
	     lib_rollback_opts, cmd_lib_rollback),
	LEAF("recover", "[TARGET]", 0, 1, NULL, "finish or undo a deploy left unfinished (admin)",
	     "Finishes or undoes a deploy left unfinished (every target with one when TARGET is "
	     "left out), or says what stands in the way (admin).",
	     lib_recover_opts, cmd_lib_recover),
	LEAF("ack", "[ID]", 0, 1, NULL, "mark the problems rocmd reported seen, up to event ID (admin)",
	     NULL, NOOPTS, cmd_lib_ack),
	LEAF("forget", "[TARGET]", 0, 1, NULL, "remove a target whose SDK is gone, with its backups (admin)",
	     "Removes a target whose SDK is gone: its backups of the originals and its history "
	     "(admin). Asks first on a terminal; needs --yes otherwise.",
	     lib_forget_opts, cmd_lib_forget),
	{NULL},
};

static const struct cli_opt doctor_opts[] = {
	{"fix", 0, CLI_FLAG, NULL,
	 "apply the fixes rocmd can make safely (deploys: admin), wait for them, check again",
	 NULL, 0, 0, 0},
	END,
};

static const struct cli_opt bench_opts[] = {
	{"shapes", 0, CLI_VALUE, "WHICH",
	 "captured (the default: your programs' GEMMs the daemon knows, else the families), "
	 "families (the LLM shape families), or [TT:]MxNxK[,...]", NULL, 0, 0, 0},
	{"dtype", 0, CLI_CHOICE, "TYPE", "the element type of given shapes and families (fp32); "
	 "only this type of the captured ones", "fp32|fp16|bf16", 0, 0, 0},
	{"rounds", 'r', CLI_INT, "N", "rounds, each variant once per round in its own process (5)",
	 NULL, 1, 100, 0},
	{"runs", 0, CLI_INT, "N", "timed runs per shape in each process (9)", NULL, 1, 1000, 0},
	END,
};

static const struct cli_opt bench_report_opts[] = {
	{"html", 0, CLI_VALUE, "FILE", "write the page to FILE (without it: the runs' JSON)", "@file",
	 0, 0, 0},
	END,
};

static const struct cli_cmd bench_cmds[] = {
	LEAF("list", "", 0, 0, NULL, "your stored bench runs", NULL, NOOPTS, cmd_bench_list),
	LEAF("compare", "A B", 2, 2, NULL, "the change per shape from run A to run B, with the spread",
	     "Prints, for every shape and variant both runs measured, A's and B's time (the median "
	     "of the rounds, and the lowest and highest round) and the change from A to B, which "
	     "is called within the noise when the two spreads overlap. A and B are ids from "
	     "rocmctl bench list, or paths of stored runs. Exits 5 when the runs share no shape.",
	     NOOPTS, cmd_bench_compare),
	LEAF("report", "", 0, 0, NULL, "one self-contained HTML page of your bench runs",
	     "Writes one self-contained HTML page (inline SVG, nothing fetched) with --html FILE: "
	     "each run's speed-up over time and the newest run's variants per shape, with their "
	     "spread. Exits 5 when no run is stored.",
	     bench_report_opts, cmd_bench_report),
	{NULL},
};

#define GROUP(name, args, help, about, subs, def)                                                  \
	{name, args, 0, 0, NULL, help, about, NULL, subs, def, NULL, 0}

static const struct cli_cmd commands[] = {
	LEAF("status", "", 0, 0, NULL, "daemon version, uptime, state and counts", NULL, NOOPTS,
	     cmd_status),
	LEAF("events", "", 0, 0, NULL, "the newest events (20 by default), or pages from an id", NULL,
	     events_opts, cmd_events),
	LEAF("config", "", 0, 0, NULL, "the daemon's effective configuration (JSON)", NULL, NOOPTS,
	     cmd_config),
	LEAF("log-level", "LEVEL", 1, 1, "error|warning|notice|info|debug",
	     "set the daemon's log level: error, warning, notice, info or debug (admin)", NULL,
	     NOOPTS, cmd_log_level),
	LEAF("shutdown", "", 0, 0, NULL, "stop the daemon (admin)", NULL, NOOPTS, cmd_shutdown),
	GROUP("sdk", "", "HIP SDK installs (rescan: admin)", NULL, sdk_cmds, "list"),
	GROUP("gpu", "", "the GPUs found", NULL, gpu_cmds, "list"),
	GROUP("tune", "", "idle tuning: signals, decision, queue, results",
	      "Idle tuning: the signals and the decision, the queue, the results and the "
	      "overrides that apply them (start, pause, resume, add, import, capture, off, on: "
	      "admin).",
	      tune_cmds, "status"),
	GROUP("pkg", "", "the package store: import, list, show, rm, verify, match; feeds: refresh, available, fetch", NULL, pkg_cmds,
	      NULL),
	GROUP("lib", "", "deployed rocBLAS libraries: status, deploy, verify, history, rollback",
	      "The rocBLAS (and hipBLASLt) libraries rocmd manages: each SDK's, application "
	      "copies and overlays; deploy, verify, roll back and inspect them.",
	      lib_cmds, NULL),
	LEAF("doctor", "", 0, 0, NULL, "find what breaks rocBLAS here, with the evidence and the fix",
	     "Looks for what makes rocBLAS fail or slow here, and prints each finding with its "
	     "severity (error, warning, info), a plain explanation, the evidence (paths, versions, "
	     "archs) and the fix: a deployed package built for another SDK; an SDK upgraded since "
	     "the deploy; a library lacking a GPU's arch (every GPU); a missing or damaged backup "
	     "of the originals; stale files in a library folder; a binary not deployed with the "
	     "library beside it; application copies that are not the deployed package; programs "
	     "still running a replaced "
	     "rocBLAS (Linux), named with their pid; a HIP runtime older than the SDK it serves; a "
	     "deployed package a feed's catalogue marks bad, or bad for the running amdgpu driver; "
	     "a tuned override in the machine's environment that is missing or was measured on "
	     "another library; and this shell's HSA_OVERRIDE_GFX_VERSION, HIP_VISIBLE_DEVICES, "
	     "ROCBLAS_TENSILE_LIBPATH, ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH and "
	     "HIPBLASLT_TUNING_OVERRIDE_FILE. --fix (admin) applies the fixes rocmd can make "
	     "safely: each deploy with its backup, verification and rollback (the matching "
	     "package, or the one in place again), and rocmd's override recovery for its own "
	     "stale overrides; it waits for the deploys, says how each ended and checks again; "
	     "with --json the daemon's result is printed at once, the fixes queued. "
	     "On a terminal the lines are wrapped to its width. Exits 6 when an error-severity "
	     "finding remains.",
	     doctor_opts, cmd_doctor),
	{"bench", "", 0, 0, NULL, "measure GEMMs: the vendor's library against rocmd's, stored per user",
	 "Measures GEMM latency (median and spread), throughput, device memory and energy per "
	 "GEMM (where the platform reports them: NVML, amdgpu's hwmon) for the shapes chosen, "
	 "for two variants, each round in a process of its own, the variants interleaved: "
	 "original (rocBLAS with the vendor's files from the deploy's backup) and deployed "
	 "wherever a deploy with a backup exists; else on an NVIDIA GPU cublas (cuBLASLt's own "
	 "choice) and rocmd (librocmd-gemm with the daemon's tuned library), and on the CPU "
	 "default (librocmd-gemm's CPU backend) and tuned (with the daemon's tuned library). It "
	 "says which variants ran and why others did "
	 "not, records the environment (device, driver, runtime, clocks, load) and stores the run "
	 "under your state folder ($XDG_STATE_HOME/rocmd/bench). The daemon is only read. Exits "
	 "5 when --shapes captured finds nothing captured.",
	 bench_opts, bench_cmds, NULL, cmd_bench, 0},
	LEAF("call", "METHOD [PARAMS-JSON]", 1, 2, NULL, "send one raw JSON-RPC request", NULL,
	     NOOPTS, cmd_rpc),
	{NULL},
};

static const struct cli_cmd root = {
	"rocmctl", "", 0, 0, NULL, "talk to rocmd, the HIP SDK and rocBLAS library manager",
	"Talks to rocmd, the HIP SDK / rocBLAS library manager: one request per command, the "
	"answer as a table or key/value block for people, or the daemon's JSON with --json.",
	globals, commands, NULL, NULL, 0,
};

const struct cli_prog rocmctl_prog = {
	"rocmctl",
	1,
	"talk to rocmd, the HIP SDK and rocBLAS library manager",
	&root,
	"rocmctl sends requests to rocmd(8) and prints the answer as a table, or as JSON with "
	"--json. Reading is open to every local user; changing anything (the commands marked "
	"admin) needs root or the admin group (ipc.admin_group, default rocm), or an elevated "
	"Administrator on Windows.\n\n"
	"Options may stand anywhere after the command they belong to: rocmctl --json lib status "
	"and rocmctl lib status --json are the same. Every command and sub-command takes --help.\n\n"
	"On a terminal, tables are cut to its width (COLUMNS overrides it; a table piped "
	"elsewhere is never cut), states and severities are coloured unless NO_COLOR is set, "
	"and long jobs (import, deploy, verify, rollback) draw a progress bar with the rate and "
	"the time left; elsewhere progress is not drawn.",
	"  0\tdone.\n\n"
	"  1\tan error: the daemon refused or failed the request, or a check failed.\n\n"
	"  2\ta usage error: an unknown command or option, a missing or bad value, too many or "
	"too few arguments.\n\n"
	"  3\tthe daemon is unreachable (not running, or no access to its socket).\n\n"
	"  4\tpermission denied: the command needs an admin.\n\n"
	"  5\tnothing to do: the request was valid and nothing needed changing (lib rollback "
	"with nothing to roll back, lib recover with nothing unfinished, bench with nothing "
	"captured, bench compare of runs with no shape in common, bench report with no run).\n\n"
	"  6\tdoctor found a problem of severity error (after --fix: one that remains).",
	"  ROCMD_SOCKET\tthe daemon's socket when --socket is not given.\n\n"
	"  ROCMD_ROCMTUNE\tthe rocmtune that bench starts for each variant (the one beside rocmctl "
	"by default).\n\n"
	"  XDG_STATE_HOME\twhere bench stores your runs ($XDG_STATE_HOME/rocmd/bench, else "
	"~/.local/state/rocmd/bench).\n\n"
	"  ROCMD_CLIENT_TIMEOUT_S\thow long to wait for a silent daemon (60 s; 0 waits for ever).\n\n"
	"  COLUMNS\tthe width tables are cut to.\n\n"
	"  NO_COLOR\twhen set (to anything), no colour.",
	"  " ROCMD_SYSTEM_SOCKET "\tthe system daemon's socket (\\\\.\\pipe\\rocmd on Windows).",
	"  rocmctl status\tis the daemon running, and what does it hold?\n\n"
	"  rocmctl pkg import ~/rocm.gfx1103.for.hip.6.2.4.7z\tstore a community package.\n\n"
	"  rocmctl lib deploy --dry-run\twhat a deploy of the matching package would change.\n\n"
	"  sudo rocmctl lib deploy\tdeploy it, with a backup of the originals.\n\n"
	"  rocmctl lib rollback --to original\tput the vendor's files back.\n\n"
	"  rocmctl tune capture -- ollama run llama3\tqueue the GEMMs a program calls.\n\n"
	"  rocmctl doctor\twhat is wrong here, and how to fix it.\n\n"
	"  sudo rocmctl doctor --fix\tapply the fixes rocmd can make safely.\n\n"
	"  rocmctl bench --rounds 5\tthe vendor's library against rocmd's on your workload.\n\n"
	"  rocmctl bench compare 20261203-101500 20261203-141200\twhat changed between two runs.\n\n"
	"  rocmctl --json lib status | jq '.targets[].drift'\tfor scripts.",
	"rocmd(8), rocmtune(1)",
};
/* clang-format on */
