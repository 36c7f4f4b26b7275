/*
 * The daemon's configuration: a JSON file whose every key is declared in one
 * table (common/config.c) with its type, range and documentation, so
 * validation, defaults and docs/CONFIG.md come from the same place. Unknown
 * keys and wrong types are reported with their JSON path ("ipc.max_connections:
 * expected an integer in 1..65536"), and an invalid file is refused whole.
 */
#ifndef ROCMD_CONFIG_H
#define ROCMD_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct rocmd_config {
	char *state_dir;   /* state folder: database, lock, store */
	char *socket_path; /* Unix socket / pipe name; NULL = platform default */
	char *admin_group; /* group whose members may change things (default "rocm") */
	char *log_level;   /* "error" .. "debug" */
	char *log_file;    /* NULL = stderr only */
	int64_t max_connections;
	int64_t max_queued_output; /* bytes per connection */
	int64_t max_per_user;      /* connections of one non-admin uid */
	int64_t admin_reserved;    /* of max_connections, kept for root and the admin group */
	int64_t hello_timeout_ms;  /* a connection that sends no hello by then is closed */
	int64_t idle_timeout_s;    /* a non-admin connection silent this long is closed */
	int64_t max_frame;         /* bytes, at most ROCMD_PROTO_MAX_FRAME */
	int64_t store_max_total;   /* bytes of one package, uncompressed */
	int64_t store_max_file;    /* bytes of one file of a package */
	int64_t store_max_files;   /* entries of one package */
	int64_t store_drop_folder; /* 1: import archives put in <state>/drop */
	char *store_match_rules;   /* user's matching rules, or NULL */
	char *pkg_remotes_dir;     /* remotes.d: one file per package feed */
	char *pkg_ca_bundle;       /* CA file for the feeds, or NULL: the system's */
	int64_t pkg_connect_timeout_s;
	int64_t pkg_stall_timeout_s; /* under 1 KiB/s this long cuts a transfer */
	int64_t pkg_allow_loopback_http; /* 1: http://127.0.0.1 remotes (tests) */
	int64_t pkg_auto_fetch;    /* 1: deploy.sync = deploy fetches what no stored package fits */
	int64_t pkg_auto_refresh_s; /* the automatic fetch refreshes a cache older than this */
	char *sdk_extra_roots;     /* more SDK install roots, ':'-separated, or NULL */
	char *sdk_runtime_roots;   /* folders of Python envs and apps, ':'-separated, or NULL */
	int64_t sdk_rescan_interval_s; /* 0: rescan on file system events only */
	int64_t sdk_debounce_ms;   /* quiet time before a rescan */
	int64_t sdk_probe_timeout_ms; /* HIP runtime probe and hipconfig; 0: never run them */
	char *deploy_gpu_busy;     /* "refuse" or "defer" while processes use the GPU/target */
	char *deploy_sync;         /* "off", "report" or "deploy" after SDK changes */
	char *deploy_app_targets;  /* "NAME=DIR@SDK;..." application-private copies, or NULL */
	int64_t deploy_smoke_timeout_ms; /* GEMM smoke test limit; 0: never run it */
	int64_t deploy_defer_retry_s;    /* deferred deploys retry this often */
	int64_t deploy_keep_generations; /* generations of originals kept per target */
	int64_t deploy_allow_user_owned_targets; /* 1: targets a non-admin owns are deployed to */
	int64_t tune_enabled;      /* 1: tune while idle (tune.*: docs/CONFIG.md) */
	int64_t tune_idle_s;       /* seconds without input before tuning starts */
	int64_t tune_ac_only;      /* 1: never on battery */
	int64_t tune_max_cpu_load; /* percent of the CPUs, 1-minute load average */
	char *tune_quiet_hours;    /* "HH:MM-HH:MM" local time without tuning, or NULL */
	char *tune_backend;        /* "cpu", "cuda", "hip", or NULL: the first that opens */
	int64_t tune_budget;       /* evaluations per job */
	int64_t tune_check_ms;     /* signal sampling period while tuning is wanted */
	char *tune_libraries;      /* "rocblas:PATH,hipblaslt:PATH,...": vendor targets besides
	                            * the SDKs' (daemon/tune/tune-vendor.c), or NULL */
	int64_t tune_families;     /* 1: queue the built-in LLM shapes for vendor targets too */
};

/* Fills CFG with the built-in defaults (platform state dir, group "rocm",
 * ...); CFG's previous contents are not freed. Returns 0 or ROCMD_ENOMEM. */
int rocmd_config_defaults(struct rocmd_config *cfg);
/*
 * Loads PATH over the defaults. CFG must be zeroed or hold a configuration:
 * its contents are freed and replaced. A missing file is not an error when
 * MISSING_OK is set (CFG gets the defaults). On error CFG is left as
 * defaults, WHY holds every problem found (one per line, each with its JSON
 * path; a missing or unreadable file is named by PATH), and ROCMD_ECONFIG is
 * returned (ROCMD_ENOMEM when memory ran out). Free CFG in every case.
 */
int rocmd_config_load(const char *path, int missing_ok, struct rocmd_config *cfg, char *why,
		      size_t whylen);
/* Parses a JSON text (for tests and fuzzing); same contract as load. */
int rocmd_config_parse(const char *text, size_t len, struct rocmd_config *cfg, char *why,
		       size_t whylen);
void rocmd_config_free(struct rocmd_config *cfg);
/* The effective configuration as JSON (for `rocmctl config`). */
cJSON *rocmd_config_to_json(const struct rocmd_config *cfg);
/* Writes the key reference (Markdown) used for docs/CONFIG.md. */
int rocmd_config_write_doc(FILE *out);

#endif
