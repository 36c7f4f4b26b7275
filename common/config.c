/*
 * The daemon's configuration file, driven by one table: every key is a row of
 * config_keys[] with its JSON path, type, range, default, place in struct
 * rocmd_config and a line of documentation. Loading, the defaults,
 * rocmd_config_to_json() and the reference in docs/CONFIG.md all walk that
 * table, so adding a key is adding a row. Validation never stops at the first
 * problem: the user gets every one, one per line, each with its JSON path.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "paths.h"
#include "proto.h"

/* A configuration file is small; anything bigger is a mistake. */
#define CONFIG_MAX_FILE (1 << 20)
/* Longest user text quoted back in a message. */
#define CONFIG_QUOTE_MAX 64

enum key_type {
	KEY_STRING, /* a non-empty string */
	KEY_PATH,   /* an absolute path */
	KEY_LEVEL,  /* a log level name, as rocmd_log_level_parse() takes */
	KEY_INT,    /* an integer in min..max */
	KEY_CHOICE, /* one of the strings in choices */
};

struct config_key {
	const char *path;      /* JSON path: "ipc.max_connections" */
	enum key_type type;
	int nullable;          /* null is allowed (and stored as NULL) */
	int64_t min, max;      /* KEY_INT */
	const char *def_str;   /* string default; NULL means null */
	int64_t def_int;       /* KEY_INT default */
	char *(*def_fn)(void); /* computed string default, or NULL */
	const char *def_doc;   /* the default as docs show it, when computed */
	size_t offset;         /* in struct rocmd_config */
	const char *doc;       /* one line, Markdown, no '|' */
	const char *const *choices; /* KEY_CHOICE: NULL-terminated */
};

static const char *const gpu_busy_choices[] = {"refuse", "defer", NULL};
static const char *const sync_choices[] = {"off", "report", "deploy", NULL};

static char *default_state_dir(void);
static char *default_remotes_dir(void);

#define OFF(field) offsetof(struct rocmd_config, field)

static const struct config_key config_keys[] = {
	{
		.path = "state_dir",
		.type = KEY_PATH,
		.def_fn = default_state_dir,
		.def_doc = "`" ROCMD_SYSTEM_STATE_DIR "` as root, else `$XDG_STATE_HOME/rocmd` or "
			   "`~/.local/state/rocmd`",
		.offset = OFF(state_dir),
		.doc = "Folder for the database, the lock file and the kept SDK originals.",
	},
	{
		.path = "log.level",
		.type = KEY_LEVEL,
		.def_str = "notice",
		.offset = OFF(log_level),
		.doc = "Least important messages logged: `error`, `warning`, `notice`, `info` or "
		       "`debug`.",
	},
	{
		.path = "log.file",
		.type = KEY_PATH,
		.nullable = 1,
		.offset = OFF(log_file),
		.doc = "Also append timestamped lines to this file; `null` logs to stderr (the "
		       "journal under systemd) only, except that a detached rocmd (no "
		       "`--foreground`, no service manager) logs to `<state>/rocmd.log` and not to "
		       "the terminal.",
	},
	{
		.path = "ipc.socket",
		.type = KEY_PATH,
		.nullable = 1,
		.offset = OFF(socket_path),
		.doc = "Socket to listen on; `null` picks the platform default "
		       "(`/run/rocmd/rocmd.sock` as root, `$XDG_RUNTIME_DIR/rocmd.sock` otherwise).",
	},
	{
		.path = "ipc.admin_group",
		.type = KEY_STRING,
		.def_str = "rocm",
		.offset = OFF(admin_group),
		.doc = "Group whose members may change things (import, deploy, tune, config, "
		       "shutdown); root always may.",
	},
	{
		.path = "ipc.max_connections",
		.type = KEY_INT,
		.min = 1,
		.max = 65536,
		.def_int = ROCMD_PROTO_MAX_CONNECTIONS,
		.offset = OFF(max_connections),
		.doc = "Most clients connected at once; further ones are refused.",
	},
	{
		.path = "ipc.max_queued_output",
		.type = KEY_INT,
		.min = 64 << 10,
		.max = 1 << 30,
		.def_int = ROCMD_PROTO_MAX_QUEUED_OUTPUT,
		.offset = OFF(max_queued_output),
		.doc = "Bytes of replies and notifications that may wait for one client; past it "
		       "rocmd stops reading that client, and drops a subscriber that does not read.",
	},
	{
		.path = "ipc.max_connections_per_user",
		.type = KEY_INT,
		.min = 1,
		.max = 65536,
		.def_int = ROCMD_PROTO_MAX_PER_USER,
		.offset = OFF(max_per_user),
		.doc = "Most clients one user other than root and the admin group may have "
		       "connected at once.",
	},
	{
		.path = "ipc.admin_reserved",
		.type = KEY_INT,
		.min = 0,
		.max = 65536,
		.def_int = ROCMD_PROTO_ADMIN_RESERVED,
		.offset = OFF(admin_reserved),
		.doc = "Of `ipc.max_connections`, how many only root and the admin group may "
		       "use, so that other users can never lock them out (at most all but one).",
	},
	{
		.path = "ipc.hello_timeout_ms",
		.type = KEY_INT,
		.min = 100,
		.max = 600000,
		.def_int = ROCMD_PROTO_HELLO_TIMEOUT_MS,
		.offset = OFF(hello_timeout_ms),
		.doc = "A client that has not completed the handshake by then is disconnected.",
	},
	{
		.path = "ipc.idle_timeout_s",
		.type = KEY_INT,
		.min = 0,
		.max = 86400,
		.def_int = ROCMD_PROTO_IDLE_TIMEOUT_S,
		.offset = OFF(idle_timeout_s),
		.doc = "A client of a user other than root and the admin group that sends "
		       "nothing for this long, with no reply owed and no event subscription, is "
		       "disconnected; 0 never.",
	},
	{
		/* The daemon keeps 4 KiB of each reply for the envelope. */
		.path = "ipc.max_frame",
		.type = KEY_INT,
		.min = 64 << 10,
		.max = ROCMD_PROTO_MAX_FRAME,
		.def_int = ROCMD_PROTO_MAX_FRAME,
		.offset = OFF(max_frame),
		.doc = "Largest message in bytes, either way; may lower, never raise, the "
		       "protocol's limit.",
	},
	{
		.path = "store.max_total_size",
		.type = KEY_INT,
		.min = 1 << 20,
		.max = INT64_C(1) << 40,
		.def_int = INT64_C(16) << 30,
		.offset = OFF(store_max_total),
		.doc = "Most bytes one package may hold uncompressed; an import passing it is "
		       "refused (bytes are counted as written, never taken from archive headers).",
	},
	{
		.path = "store.max_file_size",
		.type = KEY_INT,
		.min = 1 << 20,
		.max = INT64_C(1) << 40,
		.def_int = INT64_C(4) << 30,
		.offset = OFF(store_max_file),
		.doc = "Most bytes one file of a package may hold uncompressed.",
	},
	{
		.path = "store.max_files",
		.type = KEY_INT,
		.min = 1,
		.max = 10000000,
		.def_int = 200000,
		.offset = OFF(store_max_files),
		.doc = "Most entries (files, folders, links) one package may hold.",
	},
	{
		.path = "store.drop_folder",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 1,
		.offset = OFF(store_drop_folder),
		.doc = "1: watch `<state_dir>/drop` and import every archive put there once it "
		       "stops growing; 0: do not.",
	},
	{
		.path = "store.match_rules",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(store_match_rules),
		.doc = "Package matching rules tried before the shipped defaults, e.g. "
		       "`6.2=V5.0,V4.0; 5.7@windows/gfx1103=V3,!V2.0; 6.4=#12` (see "
		       "docs/PROTOCOL.md, `pkg.match`); `null` for the defaults only.",
	},
	{
		.path = "pkg.remotes_dir",
		.type = KEY_PATH,
		.def_fn = default_remotes_dir,
		.def_doc = "`remotes.d` beside the default configuration file (`/etc/rocmd/remotes.d` "
			   "as root)",
		.offset = OFF(pkg_remotes_dir),
		.doc = "Folder of remote files, one `NAME.conf` per package feed (docs/FEEDS.md); a "
		       "missing folder is no feeds.",
	},
	{
		.path = "pkg.ca_bundle",
		.type = KEY_PATH,
		.nullable = 1,
		.offset = OFF(pkg_ca_bundle),
		.doc = "CA certificates (PEM) the feeds' https servers are checked against; `null` "
		       "for the system's.",
	},
	{
		.path = "pkg.connect_timeout_s",
		.type = KEY_INT,
		.min = 1,
		.max = 600,
		.def_int = 30,
		.offset = OFF(pkg_connect_timeout_s),
		.doc = "A feed's server that has not accepted the connection by then is given up.",
	},
	{
		.path = "pkg.stall_timeout_s",
		.type = KEY_INT,
		.min = 1,
		.max = 3600,
		.def_int = 60,
		.offset = OFF(pkg_stall_timeout_s),
		.doc = "A transfer slower than 1 KiB/s for this long is cut (a download keeps what "
		       "came and resumes from it at the next `pkg fetch`).",
	},
	{
		.path = "pkg.allow_loopback_http",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 0,
		.offset = OFF(pkg_allow_loopback_http),
		.doc = "1: remotes and packages may use plain `http://127.0.0.1` (tests); 0: https "
		       "only.",
	},
	{
		.path = "pkg.auto_fetch",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 0,
		.offset = OFF(pkg_auto_fetch),
		.doc = "1: with `deploy.sync` = `deploy`, an SDK added or upgraded that no stored "
		       "package fits gets the one the cached feeds offer that fits (never one marked "
		       "bad), fetched, imported and deployed, each step an event; 0: it is only "
		       "reported.",
	},
	{
		.path = "pkg.auto_refresh_s",
		.type = KEY_INT,
		.min = 0,
		.max = 31536000,
		.def_int = 86400,
		.offset = OFF(pkg_auto_refresh_s),
		.doc = "The automatic fetch first refreshes the feeds when a remote's cached metadata "
		       "is older than this many seconds (or missing); a refresh that fails uses the "
		       "last good copy and says so. 0: it always refreshes first.",
	},
	{
		.path = "sdk.extra_roots",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(sdk_extra_roots),
		.doc = "More HIP SDK install folders to watch besides `/opt/rocm*`, `/usr`, "
		       "`$ROCM_PATH` and `$HIP_PATH`, separated by `:` like `PATH` (`;` on Windows); "
		       "`null` for none.",
	},
	{
		.path = "sdk.runtime_roots",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(sdk_runtime_roots),
		.doc = "More folders holding Python environments (venv, conda) or applications with "
		       "a private ROCm runtime (llama.cpp ROCm builds), searched 3 levels deep without "
		       "following symlinks, besides every home's `.venv*`, `venv*`, `.virtualenvs`, "
		       "`miniconda3`, `anaconda3`, `.local/lib/python3*`, ollama's and LM Studio's "
		       "folders; separated by `:` (`;` on Windows); `null` for none.",
	},
	{
		.path = "sdk.rescan_interval_s",
		.type = KEY_INT,
		.min = 0,
		.max = 86400,
		.def_int = 0,
		.offset = OFF(sdk_rescan_interval_s),
		.doc = "Also rescan every this many seconds; `0` (the default) relies on file system "
		       "events alone, so an idle daemon has no timer running.",
	},
	{
		.path = "sdk.debounce_ms",
		.type = KEY_INT,
		.min = 50,
		.max = 600000,
		.def_int = 2000,
		.offset = OFF(sdk_debounce_ms),
		.doc = "A change is scanned once the SDK folders have been quiet this long, so an "
		       "installer writing thousands of files causes one rescan.",
	},
	{
		.path = "sdk.probe_timeout_ms",
		.type = KEY_INT,
		.min = 0,
		.max = 600000,
		.def_int = 15000,
		.offset = OFF(sdk_probe_timeout_ms),
		.doc = "Time limit for loading an SDK's HIP runtime to list GPUs, and for `hipconfig` "
		       "when no other version source exists (both run in a child process); `0` never "
		       "runs them.",
	},
	{
		.path = "deploy.gpu_busy",
		.type = KEY_CHOICE,
		.choices = gpu_busy_choices,
		.def_str = "refuse",
		.offset = OFF(deploy_gpu_busy),
		.doc = "While processes hold the GPU or have a target's rocBLAS files open: `refuse` "
		       "fails the deploy or rollback naming them; `defer` waits and retries until "
		       "they are gone.",
	},
	{
		.path = "deploy.sync",
		.type = KEY_CHOICE,
		.choices = sync_choices,
		.def_str = "report",
		.offset = OFF(deploy_sync),
		.doc = "After an SDK is added or upgraded, or an SDK update overwrote a deployed "
		       "library: `deploy` the matching package again, only `report` it as an event, or "
		       "`off`.",
	},
	{
		.path = "deploy.app_targets",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(deploy_app_targets),
		.doc = "Application-private rocBLAS copies to manage as targets, `NAME=DIR@SDK` "
		       "separated by `;` (library at `DIR/rocblas/library`, binary `DIR/rocblas.dll` "
		       "or `DIR/librocblas.so.N` when present), e.g. "
		       "`ollama=/usr/lib/ollama/rocm@6.1`; `null` for none.",
	},
	{
		.path = "deploy.smoke_timeout_ms",
		.type = KEY_INT,
		.min = 0,
		.max = 600000,
		.def_int = 60000,
		.offset = OFF(deploy_smoke_timeout_ms),
		.doc = "Time limit for the GEMM smoke test of a deployed rocBLAS (a child process); "
		       "`0` never runs it.",
	},
	{
		.path = "deploy.defer_retry_s",
		.type = KEY_INT,
		.min = 1,
		.max = 3600,
		.def_int = 30,
		.offset = OFF(deploy_defer_retry_s),
		.doc = "With `deploy.gpu_busy` = `defer`, how often a waiting deploy checks again.",
	},
	{
		.path = "deploy.keep_generations",
		.type = KEY_INT,
		.min = 2,
		.max = 100,
		.def_int = 3,
		.offset = OFF(deploy_keep_generations),
		.doc = "How many generations of a target's originals rocmd keeps (each SDK update "
		       "that replaced what rocmd deployed makes one): the one in use and the oldest "
		       "(the first originals rocmd backed up) are never removed; the others beyond "
		       "this number go, oldest first, when a new generation is made.",
	},
	{
		.path = "deploy.allow_user_owned_targets",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 0,
		.offset = OFF(deploy_allow_user_owned_targets),
		.doc = "0: a target whose folders (from its root, the SDK's or the application's "
		       "folder, down to the library and the binary) a user other than root owns or "
		       "may write is refused; 1: deployed to all the same (an application folder "
		       "in a user's home). Symlinked folders below the root are refused either way.",
	},
	{
		.path = "tune.enabled",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 1,
		.offset = OFF(tune_enabled),
		.doc = "1: tune the GEMM kernels while the machine is idle (see the other `tune.` "
		       "keys); 0: only when started with `rocmctl tune start`.",
	},
	{
		.path = "tune.idle_s",
		.type = KEY_INT,
		.min = 0,
		.max = 86400,
		.def_int = 300,
		.offset = OFF(tune_idle_s),
		.doc = "Seconds without user input (logind's idle hint, else the input devices) "
		       "before tuning starts; any input stops it within 100 ms.",
	},
	{
		.path = "tune.ac_only",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 1,
		.offset = OFF(tune_ac_only),
		.doc = "1: tune only on mains power (a machine without a battery counts as on AC); "
		       "0: on battery too.",
	},
	{
		.path = "tune.max_cpu_load",
		.type = KEY_INT,
		.min = 1,
		.max = 100000,
		.def_int = 50,
		.offset = OFF(tune_max_cpu_load),
		.doc = "Start tuning only while the 1-minute load average is at most this percentage "
		       "of the CPUs (checked before a job starts: the tuner's own load does not count).",
	},
	{
		.path = "tune.quiet_hours",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(tune_quiet_hours),
		.doc = "Local hours without tuning, `HH:MM-HH:MM` (may wrap midnight, e.g. "
		       "`22:00-07:00`); `null` for none.",
	},
	{
		.path = "tune.backend",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(tune_backend),
		.doc = "Tuner backend: `cpu`, `cuda` or `hip`; `null` takes the first GPU backend that "
		       "opens, else `cpu` (small default shapes).",
	},
	{
		.path = "tune.budget",
		.type = KEY_INT,
		.min = 1,
		.max = 100000,
		.def_int = 60,
		.offset = OFF(tune_budget),
		.doc = "Evaluations per tuning job (its seed set included); `rocmctl tune add "
		       "--budget` sets it per job.",
	},
	{
		.path = "tune.check_ms",
		.type = KEY_INT,
		.min = 100,
		.max = 600000,
		.def_int = 10000,
		.offset = OFF(tune_check_ms),
		.doc = "How often power, GPU users and load are read while tuning is wanted; with "
		       "nothing to tune or tuning off no timer runs. Input is watched by events.",
	},
	{
		.path = "tune.libraries",
		.type = KEY_STRING,
		.nullable = 1,
		.offset = OFF(tune_libraries),
		.doc = "Vendor libraries to tune besides each SDK's rocBLAS and hipBLASLt: "
		       "`KIND:PATH` entries separated by commas, KIND `rocblas`, `hipblaslt` or "
		       "`cublaslt` (targets `lib-KIND-1`, ...); `null` for none.",
	},
	{
		.path = "tune.families",
		.type = KEY_INT,
		.min = 0,
		.max = 1,
		.def_int = 1,
		.offset = OFF(tune_families),
		.doc = "1: queue the built-in LLM shapes (Llama 2/3, Mistral, Qwen 2; decode and "
		       "prefill, TN) for rocmd's GPU kernels and for every vendor library whose GPU "
		       "is the tuning device (rocBLAS, hipBLASLt: hip; cuBLASLt: cuda), after the "
		       "captured ones; 0: only what `rocmctl tune capture`, `import-log` and `add` "
		       "queue.",
	},
};

#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

/* Collects problems, one per line, into the caller's buffer. */
#define PROBLEMS_TAIL 24 /* "\n(and N more)" */
struct problems {
	char *buf;
	size_t cap;
	size_t len;
	int count;
	int dropped;
};

static void
problem(struct problems *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
problem(struct problems *pr, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n;

	pr->count++;
	if (pr->buf == NULL || pr->cap == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	/* Whole lines, in order, leaving room for the "(and N more)" tail. */
	if (pr->dropped == 0 && pr->len + (pr->len > 0) + n + PROBLEMS_TAIL < pr->cap) {
		if (pr->len > 0)
			pr->buf[pr->len++] = '\n';
		memcpy(pr->buf + pr->len, line, n + 1);
		pr->len += n;
	} else if (pr->len == 0) {
		/* Not even one line fits: keep its beginning. */
		snprintf(pr->buf, pr->cap, "%s", line);
		pr->len = strlen(pr->buf);
	} else {
		pr->dropped++;
	}
}

static void
problems_finish(struct problems *pr)
{
	char tail[64];
	size_t n;

	if (pr->dropped == 0 || pr->buf == NULL)
		return;
	n = (size_t)snprintf(tail, sizeof(tail), "\n(and %d more)", pr->dropped);
	if (pr->len + n < pr->cap) {
		memcpy(pr->buf + pr->len, tail, n + 1);
		pr->len += n;
	}
}

/* User text made safe to quote on one line: control bytes become '?', long
 * text is cut with "...". */
static const char *
quote(const char *s, char *buf, size_t buflen)
{
	size_t i = 0;

	for (; s[i] != '\0' && i + 1 < buflen; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	if (s[i] != '\0' && buflen > 4)
		memcpy(buf + buflen - 4, "...", 4);
	return buf;
}

static const char *
json_type_name(const cJSON *item)
{
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsBool(item))
		return "boolean";
	if (cJSON_IsNumber(item))
		return "number";
	if (cJSON_IsString(item))
		return "string";
	if (cJSON_IsArray(item))
		return "array";
	if (cJSON_IsObject(item))
		return "object";
	return "invalid value";
}

static char **
str_slot(struct rocmd_config *cfg, const struct config_key *k)
{
	return (char **)((char *)cfg + k->offset);
}

static int64_t *
int_slot(struct rocmd_config *cfg, const struct config_key *k)
{
	return (int64_t *)((char *)cfg + k->offset);
}

/* The state folder when nothing is configured: the platform layer decides
 * (the system one for root, the user's XDG state folder otherwise). */
static char *
default_state_dir(void)
{
	return rocmd_paths_default_state_dir();
}

/* remotes.d beside the configuration file read when none is given. */
static char *
default_remotes_dir(void)
{
	char buf[4096], out[4096];
	const char *conf = rocmd_paths_default_config(buf, sizeof(buf));
	const char *slash = conf != NULL ? strrchr(conf, '/') : NULL;
#ifdef _WIN32
	const char *bs = conf != NULL ? strrchr(conf, '\\') : NULL;
	if (bs != NULL && (slash == NULL || bs > slash))
		slash = bs;
#endif
	if (slash == NULL)
		return strdup("/etc/rocmd/remotes.d");
	snprintf(out, sizeof(out), "%.*s%cremotes.d", (int)(slash - conf), conf, *slash);
	return strdup(out);
}

void
rocmd_config_free(struct rocmd_config *cfg)
{
	if (cfg == NULL)
		return;
	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		if (config_keys[i].type == KEY_INT)
			continue;
		free(*str_slot(cfg, &config_keys[i]));
		*str_slot(cfg, &config_keys[i]) = NULL;
	}
}

int
rocmd_config_defaults(struct rocmd_config *cfg)
{
	int err = 0;

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		const struct config_key *k = &config_keys[i];
		char *s;

		if (k->type == KEY_INT) {
			*int_slot(cfg, k) = k->def_int;
			continue;
		}
		if (k->def_fn == NULL && k->def_str == NULL)
			continue;
		s = k->def_fn != NULL ? k->def_fn() : strdup(k->def_str);
		if (s == NULL) {
			err = ROCMD_ENOMEM;
			goto out;
		}
		*str_slot(cfg, k) = s;
	}
out:
	if (err != 0)
		rocmd_config_free(cfg);
	return err;
}

/* On Unix a Windows path is a relative name that would land in the daemon's working
 * folder, so only the platform's own absolute forms pass. */
static int
is_absolute(const char *s)
{
#ifdef _WIN32
	/* Drive paths (C:\x, C:/x) and UNC names, pipe names included. */
	return (s[0] == '\\' && s[1] == '\\') ||
	       (isalpha((unsigned char)s[0]) && s[1] == ':' && (s[2] == '\\' || s[2] == '/'));
#else
	return s[0] == '/';
#endif
}

/* Checks ITEM against K and stores it in CFG; returns ROCMD_ENOMEM or 0
 * (a bad value is a problem, not an error). */
static int
apply_key(const struct config_key *k, const cJSON *item, struct rocmd_config *cfg,
	  struct problems *pr)
{
	char q[CONFIG_QUOTE_MAX];
	const char *s;
	char *copy;

	if (k->type == KEY_INT) {
		double d = item->valuedouble;

		if (!cJSON_IsNumber(item)) {
			problem(pr, "%s: expected an integer in %lld..%lld, got %s", k->path,
				(long long)k->min, (long long)k->max, json_type_name(item));
		} else if (!(d >= (double)k->min && d <= (double)k->max) || d != floor(d)) {
			problem(pr, "%s: expected an integer in %lld..%lld, got %.17g", k->path,
				(long long)k->min, (long long)k->max, d);
		} else {
			*int_slot(cfg, k) = (int64_t)d;
		}
		return 0;
	}
	if (cJSON_IsNull(item) && k->nullable) {
		free(*str_slot(cfg, k));
		*str_slot(cfg, k) = NULL;
		return 0;
	}
	if (!cJSON_IsString(item)) {
		problem(pr, "%s: expected %s%s, got %s", k->path,
			k->type == KEY_PATH ? "an absolute path" : "a string",
			k->nullable ? " or null" : "", json_type_name(item));
		return 0;
	}
	s = item->valuestring;
	if (s[0] == '\0') {
		problem(pr, "%s: must not be empty%s", k->path,
			k->nullable ? " (use null for the default)" : "");
		return 0;
	}
	if (k->type == KEY_PATH && !is_absolute(s)) {
		problem(pr, "%s: expected an absolute path, got \"%s\"", k->path,
			quote(s, q, sizeof(q)));
		return 0;
	}
	if (k->type == KEY_CHOICE) {
		int found = 0;
		for (size_t i = 0; k->choices[i] != NULL; i++)
			found |= strcmp(k->choices[i], s) == 0;
		if (!found) {
			char list[128] = "";
			for (size_t i = 0; k->choices[i] != NULL; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 i > 0 ? ", " : "", k->choices[i]);
			problem(pr, "%s: expected one of %s, got \"%s\"", k->path, list,
				quote(s, q, sizeof(q)));
			return 0;
		}
	}
	if (k->type == KEY_LEVEL && rocmd_log_level_parse(s) < 0) {
		problem(pr, "%s: expected one of error, warning, notice, info, debug, got \"%s\"",
			k->path, quote(s, q, sizeof(q)));
		return 0;
	}
	copy = strdup(s);
	if (copy == NULL)
		return ROCMD_ENOMEM;
	free(*str_slot(cfg, k));
	*str_slot(cfg, k) = copy;
	return 0;
}

static const struct config_key *
find_key(const char *path)
{
	for (size_t i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(config_keys[i].path, path) == 0)
			return &config_keys[i];
	return NULL;
}

/* True when PATH names an object that holds keys ("ipc" for "ipc.socket"). */
static int
is_section(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < CONFIG_NKEYS; i++)
		if (strncmp(config_keys[i].path, path, n) == 0 && config_keys[i].path[n] == '.')
			return 1;
	return 0;
}

/* Walks one JSON object whose members live under PREFIX ("" at the top). */
static int
check_object(const cJSON *obj, const char *prefix, struct rocmd_config *cfg,
	     struct problems *pr)
{
	char path[128], q[CONFIG_QUOTE_MAX];
	int err = 0;

	for (const cJSON *it = obj->child; it != NULL && err == 0; it = it->next) {
		const struct config_key *k = NULL;
		const cJSON *prev;
		int n;

		n = snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "",
			     it->string);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			/* Longer than any key: unknown, quoted cut short. */
			problem(pr, "%s: unknown key", quote(path, q, sizeof(q)));
			continue;
		}
		for (prev = obj->child; prev != it; prev = prev->next)
			if (strcmp(prev->string, it->string) == 0)
				break;
		if (prev != it) {
			problem(pr, "%s: duplicate key", quote(path, q, sizeof(q)));
			continue;
		}
		if (strchr(it->string, '.') != NULL) {
			/* "ipc.max_frame" must be nested, not written as one name. */
			problem(pr, "%s: unknown key%s", quote(path, q, sizeof(q)),
				find_key(path) != NULL ? " (nest it: {\"a\": {\"b\": ...}})" : "");
			continue;
		}
		k = find_key(path);
		if (k != NULL) {
			err = apply_key(k, it, cfg, pr);
		} else if (is_section(path)) {
			if (cJSON_IsObject(it))
				err = check_object(it, path, cfg, pr);
			else
				problem(pr, "%s: expected an object, got %s", path,
					json_type_name(it));
		} else {
			problem(pr, "%s: unknown key", quote(path, q, sizeof(q)));
		}
	}
	return err;
}

/* 1-based line and column of byte OFFSET in TEXT. */
static void
line_col(const char *text, size_t offset, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < offset; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* Offset of the first byte that is not well-formed UTF-8, or LEN. */
static size_t
utf8_bad_offset(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n;
		unsigned cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (i + n >= len)
			return i;
		for (size_t j = 1; j <= n; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		/* Overlong forms, surrogates and values past U+10FFFF. */
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += n + 1;
	}
	return len;
}

/* Offset of a "\u0000" escape, which cJSON would turn into a silently cut
 * string, or LEN. Outside strings a backslash is invalid JSON anyway. */
static size_t
nul_escape_offset(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (s[i] != '\\')
			continue;
		if (s[i + 1] == 'u' && i + 5 < len && memcmp(s + i + 2, "0000", 4) == 0)
			return i;
		i++; /* skip the escaped character */
	}
	return len;
}

/* Parses TEXT into a cJSON tree, or reports why not. */
static cJSON *
parse_json(const char *text, size_t len, struct problems *pr)
{
	const char *end = NULL, *nul;
	char *copy = NULL;
	cJSON *root = NULL;
	size_t bad, i;
	int line, col;

	for (i = 0; i < len && isspace((unsigned char)text[i]); i++)
		;
	if (i == len) {
		problem(pr, "empty: expected a JSON object (write {} for all defaults)");
		goto out;
	}
	nul = memchr(text, '\0', len);
	if (nul != NULL) {
		line_col(text, (size_t)(nul - text), &line, &col);
		problem(pr, "invalid JSON at line %d, column %d: a NUL byte", line, col);
		goto out;
	}
	bad = utf8_bad_offset((const unsigned char *)text, len);
	if (bad < len) {
		line_col(text, bad, &line, &col);
		problem(pr, "invalid JSON at line %d, column %d: not UTF-8", line, col);
		goto out;
	}
	bad = nul_escape_offset(text, len);
	if (bad < len) {
		line_col(text, bad, &line, &col);
		problem(pr, "invalid JSON at line %d, column %d: \\u0000 is not allowed", line, col);
		goto out;
	}
	/* cJSON's require_null_terminated wants the terminator inside the
	 * length, so parse a terminated copy. */
	copy = malloc(len + 1);
	if (copy == NULL)
		goto out;
	memcpy(copy, text, len);
	copy[len] = '\0';
	root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
	if (root == NULL) {
		size_t at = end != NULL && end >= copy && end <= copy + len ? (size_t)(end - copy)
									  : len;
		line_col(copy, at, &line, &col);
		problem(pr, "invalid JSON at line %d, column %d", line, col);
	}
out:
	free(copy);
	return root;
}

int
rocmd_config_parse(const char *text, size_t len, struct rocmd_config *cfg, char *why,
		   size_t whylen)
{
	struct problems pr = {why, whylen, 0, 0, 0};
	struct rocmd_config tmp;
	cJSON *root = NULL;
	int err;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	err = rocmd_config_defaults(&tmp);
	if (err != 0)
		goto out;
	if (text == NULL) {
		problem(&pr, "no configuration text");
		goto out;
	}
	root = parse_json(text, len, &pr);
	if (root == NULL) {
		if (pr.count == 0)
			err = ROCMD_ENOMEM;
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		problem(&pr, "expected a JSON object at the top level, got %s", json_type_name(root));
		goto out;
	}
	err = check_object(root, "", &tmp, &pr);
out:
	cJSON_Delete(root);
	if (err == 0 && pr.count > 0)
		err = ROCMD_ECONFIG;
	problems_finish(&pr);
	rocmd_config_free(cfg);
	if (err == 0) {
		*cfg = tmp;
	} else {
		rocmd_config_free(&tmp);
		if (rocmd_config_defaults(cfg) != 0)
			err = ROCMD_ENOMEM;
	}
	return err;
}

int
rocmd_config_load(const char *path, int missing_ok, struct rocmd_config *cfg, char *why,
		  size_t whylen)
{
	struct problems pr = {why, whylen, 0, 0, 0};
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = NULL;
	int err = 0, parsed = 0;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (path == NULL) {
		err = ROCMD_EINVAL;
		goto out;
	}
	fp = fopen(path, "rb");
	if (fp == NULL) {
		if (errno == ENOENT && missing_ok)
			goto out; /* err 0: the defaults */
		problem(&pr, "%s: %s", path, strerror(errno));
		err = ROCMD_ECONFIG;
		goto out;
	}
	if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
		problem(&pr, "%s: not a regular file", path);
		err = ROCMD_ECONFIG;
		goto out;
	}
	if (st.st_size > CONFIG_MAX_FILE) {
		problem(&pr, "%s: larger than %d bytes; not a configuration file", path,
			CONFIG_MAX_FILE);
		err = ROCMD_ECONFIG;
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL) {
		err = ROCMD_ENOMEM;
		goto out;
	}
	len = fread(text, 1, (size_t)st.st_size, fp);
	if (ferror(fp)) {
		problem(&pr, "%s: %s", path, strerror(errno));
		err = ROCMD_ECONFIG;
		goto out;
	}
	err = rocmd_config_parse(text, len, cfg, why, whylen);
	parsed = 1;
out:
	if (fp != NULL)
		fclose(fp);
	free(text);
	if (!parsed) {
		rocmd_config_free(cfg);
		if (rocmd_config_defaults(cfg) != 0)
			err = ROCMD_ENOMEM;
	}
	return err;
}

/* The object that holds the key at PATH inside ROOT, created as needed;
 * *leaf gets the last component. */
static cJSON *
section_for(cJSON *root, const char *path, const char **leaf)
{
	cJSON *obj = root;
	const char *dot;

	while (obj != NULL && (dot = strchr(path, '.')) != NULL) {
		char name[64];
		cJSON *sub;

		snprintf(name, sizeof(name), "%.*s", (int)(dot - path), path);
		sub = cJSON_GetObjectItemCaseSensitive(obj, name);
		if (sub == NULL)
			sub = cJSON_AddObjectToObject(obj, name);
		obj = sub;
		path = dot + 1;
	}
	*leaf = path;
	return obj;
}

cJSON *
rocmd_config_to_json(const struct rocmd_config *cfg)
{
	cJSON *root = cJSON_CreateObject();

	for (size_t i = 0; root != NULL && i < CONFIG_NKEYS; i++) {
		const struct config_key *k = &config_keys[i];
		const char *leaf;
		cJSON *obj = section_for(root, k->path, &leaf), *v;

		if (k->type == KEY_INT) {
			v = cJSON_CreateNumber((double)*(const int64_t *)((const char *)cfg + k->offset));
		} else {
			const char *s = *(char *const *)((const char *)cfg + k->offset);
			v = s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull();
		}
		if (obj == NULL || v == NULL || !cJSON_AddItemToObject(obj, leaf, v)) {
			cJSON_Delete(v);
			cJSON_Delete(root);
			root = NULL;
		}
	}
	return root;
}

static const char *
type_doc(const struct config_key *k, char *buf, size_t buflen)
{
	switch (k->type) {
	case KEY_INT:
		snprintf(buf, buflen, "integer, %lld..%lld", (long long)k->min, (long long)k->max);
		break;
	case KEY_PATH:
		snprintf(buf, buflen, "absolute path%s", k->nullable ? " or null" : "");
		break;
	case KEY_LEVEL:
		snprintf(buf, buflen, "log level");
		break;
	case KEY_CHOICE:
		snprintf(buf, buflen, "one of");
		for (size_t i = 0; k->choices[i] != NULL; i++)
			snprintf(buf + strlen(buf), buflen - strlen(buf), "%s `%s`", i > 0 ? "," : "",
				 k->choices[i]);
		break;
	default:
		snprintf(buf, buflen, "string%s", k->nullable ? " or null" : "");
		break;
	}
	return buf;
}

int
rocmd_config_write_doc(FILE *out)
{
	fprintf(out, "| Key | Type | Default | Meaning |\n");
	fprintf(out, "|-----|------|---------|---------|\n");
	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		const struct config_key *k = &config_keys[i];
		char type[64], def[64];

		if (k->def_doc != NULL)
			def[0] = '\0';
		else if (k->type == KEY_INT)
			snprintf(def, sizeof(def), "`%lld`", (long long)k->def_int);
		else if (k->def_str != NULL)
			snprintf(def, sizeof(def), "`\"%s\"`", k->def_str);
		else
			snprintf(def, sizeof(def), "`null`");
		fprintf(out, "| `%s` | %s | %s | %s |\n", k->path, type_doc(k, type, sizeof(type)),
			k->def_doc != NULL ? k->def_doc : def, k->doc);
	}
	return ferror(out) ? ROCMD_EIO : 0;
}
