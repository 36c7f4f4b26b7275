/*
 * rocmd: the daemon's entry point. Parses flags, loads the configuration,
 * takes the state folder's single-instance lock, opens the database, starts
 * listening and runs the libuv loop until a signal or a client asks it to
 * stop; then it closes the database cleanly. Without --foreground it detaches
 * and the parent exits only once the socket is ready (or with the reason it
 * could not start and the exit code below, as in the foreground), so scripts
 * can rely on its exit status; once it serves, the detached daemon writes
 * nothing to the terminal: its log goes to log.file, else
 * <state>/rocmd.log.
 *
 * Exit codes: 0 clean stop, 1 runtime failure, 2 usage, 3 invalid config,
 * 4 another instance holds the state folder, 5 database cannot be opened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uv.h>

#include "common/cli.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/spawn.h"
#include "db/db.h"
#include "daemon/core/ipc.h"
#include "daemon/deploy/deploy-sync.h"
#include "daemon/core/lockfile.h"
#include "daemon/deploy/deploy-service.h"
#include "daemon/pkg/pkg-service.h"
#include "daemon/sdk/sdk.h"
#include "daemon/core/process.h"
#include "daemon/core/server.h"
#include "service/service.h"
#include "daemon/tune/tune-sched.h"
#include "kernels/tune.h"
#include "version.h"

extern const struct cli_prog rocmd_prog; /* main-table.c */

enum { EXIT_USAGE = 2, EXIT_CONFIG = 3, EXIT_LOCKED = 4, EXIT_DB = 5 };

struct options {
	int foreground;
	const char *state_dir;
	const char *socket;
	const char *config;
	const char *log_level;
	const char *root;   /* --root: system paths resolve under this folder */
	int windows_layout; /* --sdk-layout windows */
};

/* Why start-up failed (fail_start), for the waiting parent. */
static char start_failure[1024];

/* Logs a start-up failure and keeps it for the waiting parent, which prints
 * it when rocmd detached (daemon_main reports it with the exit status): the
 * line goes to the log file alone then, so that the terminal sees it once. */
static void __attribute__((format(printf, 1, 2)))
fail_start(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(start_failure, sizeof(start_failure), fmt, ap);
	va_end(ap);
	if (rocmd_process_detached())
		rocmd_log_set_stderr(0);
	log_err("%s", start_failure);
	rocmd_service_status("Failed to start: %s", start_failure);
}

/* The options from the command table (main-table.c); --help and --version
 * exit here. */
static int
parse_args(int argc, char **argv, struct options *o)
{
	struct cli_args a;
	char why[512];
	int rc = cli_parse(&rocmd_prog, argc, argv, &a, why, sizeof(why));

	if (rc == CLI_USAGE) {
		fprintf(stderr, "rocmd: %s\nSee 'rocmd --help'.\n", why);
		return EXIT_USAGE;
	}
	if (rc == CLI_HELP) {
		cli_help(&a, stdout);
		exit(0);
	}
	if (cli_has(&a, "version")) {
		printf("rocmd %s (protocol %d)\n", ROCMD_VERSION_STRING, ROCMD_PROTO_VERSION);
		exit(0);
	}
	o->foreground = cli_has(&a, "foreground");
	o->state_dir = cli_str(&a, "state-dir", NULL);
	o->socket = cli_str(&a, "socket", NULL);
	o->config = cli_str(&a, "config", NULL);
	o->log_level = cli_str(&a, "log-level", NULL);
	o->root = cli_str(&a, "root", NULL);
	o->windows_layout = strcmp(cli_str(&a, "sdk-layout", "linux"), "windows") == 0;
	if (o->root != NULL && rocmd_fs_kind(o->root, NULL, NULL) != 'd') {
		fprintf(stderr, "rocmd: --root %s is not a folder\n", o->root);
		return EXIT_USAGE;
	}
	return 0;
}

static int
replace_string(char **dst, const char *src)
{
	char *copy = strdup(src);

	if (copy == NULL)
		return ROCMD_ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

static int
load_config(const struct options *o, struct rocmd_config *cfg)
{
	char why[4096] = "", buf[4096];
	const char *path =
		o->config != NULL ? o->config : rocmd_paths_default_config(buf, sizeof(buf));
	int rc;

	rc = rocmd_config_defaults(cfg);
	if (rc == 0 && path != NULL)
		rc = rocmd_config_load(path, o->config == NULL, cfg, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "rocmd: invalid configuration %s:\n%s\n", path != NULL ? path : "",
			why);
		return EXIT_CONFIG;
	}
	if ((o->state_dir != NULL && replace_string(&cfg->state_dir, o->state_dir) < 0) ||
	    (o->socket != NULL && replace_string(&cfg->socket_path, o->socket) < 0) ||
	    (o->log_level != NULL && replace_string(&cfg->log_level, o->log_level) < 0))
		return 1;
	return 0;
}

/* Whether FOLDER (under the state folder) holds anything: a package store's
 * objects or records, or a deploy's state, left by an earlier run. */
static int
holds_anything(const char *state_dir, const char *folder)
{
	char path[4096];
	struct rocmd_dir *d;
	struct rocmd_dirent *de;
	int found = 0;

	snprintf(path, sizeof(path), "%s/%s", state_dir, folder);
	if ((d = rocmd_dir_open(path)) == NULL)
		return 0;
	while (!found && (de = rocmd_dir_read(d)) != NULL)
		found = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	rocmd_dir_close(d);
	return found;
}

static int
run(const struct options *o, struct rocmd_config *cfg)
{
	struct rocmd_server srv;
	struct rocmd_db *db = NULL;
	char path[4096], why[2048] = "";
	uv_loop_t *loop = uv_default_loop();
	int lock_fd = -1, rc, status = 1, previous_clean = 1, db_new, previous_unknown = 0;
	uint64_t db_size = 0;
	int64_t run_id = 0;
	pid_t holder;

	rc = rocmd_paths_mkdir_p(cfg->state_dir, 0755);
	if (rc < 0) {
		fail_start("cannot create state folder %s: %s", cfg->state_dir, strerror(-rc));
		return 1;
	}
	/* Detached, the log goes to log.file, else to the state folder, and not
	 * to the terminal: the waiting parent prints a start-up failure. */
	if (rocmd_process_detached()) {
		rc = 0;
		if (cfg->log_file == NULL) {
			snprintf(path, sizeof(path), "%s/rocmd.log", cfg->state_dir);
			if ((rc = rocmd_log_open_file(path)) < 0)
				log_warn("cannot open log file %s: %s", path, strerror(-rc));
			else if ((rc = replace_string(&cfg->log_file, path)) < 0)
				rocmd_log_close(); /* SIGHUP could not reopen it */
		}
		if (rc == 0)
			rocmd_log_set_stderr(0);
	}
	snprintf(path, sizeof(path), "%s/rocmd.lock", cfg->state_dir);
	lock_fd = rocmd_lockfile_acquire(path, &holder);
	if (lock_fd == ROCMD_ELOCKED) {
		fail_start("another rocmd (pid %ld) is already using state folder %s", (long)holder,
			   cfg->state_dir);
		return EXIT_LOCKED;
	}
	if (lock_fd < 0) {
		fail_start("cannot lock %s: %s", path, rocmd_strerror(lock_fd));
		return 1;
	}

	snprintf(path, sizeof(path), "%s/rocmd.db", cfg->state_dir);
	/* Missing or empty (SQLite makes a new database of either): it cannot
	 * tell how the run before ended. */
	db_new = rocmd_fs_kind(path, &db_size, NULL) != 'f' || db_size == 0;
	rc = rocmd_db_open(path, &db, why, sizeof(why));
	if (rc < 0) {
		fail_start("cannot open database %s: %s", path, why[0] ? why : rocmd_strerror(rc));
		status = EXIT_DB;
		goto out;
	}
	rc = rocmd_db_run_begin(db, getpid(), ROCMD_VERSION_STRING, &run_id, &previous_clean);
	if (rc < 0) {
		fail_start("cannot record the daemon run: %s", rocmd_db_errmsg(db));
		goto out;
	}
	if (db_new && (holds_anything(cfg->state_dir, "store/objects") ||
	               holds_anything(cfg->state_dir, "store/packages") ||
	               holds_anything(cfg->state_dir, "deploy"))) {
		log_warn("database %s was missing or empty at start, but %s holds a package store "
			 "or deploy state of an earlier run: how that run ended is not known",
			 path, cfg->state_dir);
		previous_clean = 0;
		previous_unknown = 1;
	}

	rc = rocmd_server_init(&srv, loop, cfg, db);
	if (rc < 0) {
		fail_start("cannot set up signal handling: %s", uv_strerror(rc));
		goto out;
	}
	rc = rocmd_service_attach(&srv);
	if (rc < 0)
		log_warn("cannot arm the service watchdog: %s", uv_strerror(rc));
	srv.previous_run_clean = previous_clean;
	srv.previous_run_unknown = previous_unknown;
	srv.run_id = run_id;
	rc = rocmd_pkg_start(&srv, &srv.pkg, why, sizeof(why));
	if (rc < 0) {
		fail_start("package store: %s", why);
		goto out_loop;
	}
	rocmd_server_add_engine(&srv, &rocmd_pkg_engine, srv.pkg);
	{
		/* Interrupted deploys are finished or undone before anything is served. */
		struct rocmd_deploy_svc_opts lo = {o->root, NULL};
		if (rocmd_deploy_svc_start(&srv, &lo, &srv.deploy, why, sizeof(why)) < 0) {
			fail_start("deploy: %s", why);
			goto out_loop;
		}
		rocmd_server_add_engine(&srv, &rocmd_deploy_engine, srv.deploy);
	}
	if (cfg->socket_path != NULL) {
		snprintf(path, sizeof(path), "%s", cfg->socket_path);
	} else if (rocmd_paths_daemon_socket(path, sizeof(path)) < 0) {
		fail_start("no socket path: XDG_RUNTIME_DIR is not set; pass --socket PATH");
		goto out_loop;
	}
	rc = rocmd_ipc_listen(&srv, path, why, sizeof(why));
	if (rc < 0) {
		fail_start("%s", why);
		goto out_loop;
	}
	rocmd_server_event(&srv, "daemon.start", NULL, "rocmd %s started (pid %ld)%s",
			   ROCMD_VERSION_STRING, (long)getpid(),
			   previous_unknown ? "; the database is new: how the previous run ended is not known"
			   : previous_clean ? ""
					    : "; the previous run did not shut down cleanly");
	{
		struct rocmd_sdk_start_opts so = {o->root, o->windows_layout, NULL};
		why[0] = '\0';
		if (rocmd_sdk_start(&srv, &so, &srv.sdk, why, sizeof(why)) < 0)
			log_err("SDK discovery is off: %s", why);
		else
			rocmd_server_add_engine(&srv, &rocmd_sdk_engine, srv.sdk);
	}
	rocmd_deploy_sync_start(&srv);
	why[0] = '\0';
	if (rocmd_tune_start(&srv, o->root, &srv.tune, why, sizeof(why)) < 0)
		log_err("idle tuning is off: %s", why);
	else
		rocmd_server_add_engine(&srv, &rocmd_tune_engine, srv.tune);
	rocmd_process_report(0, NULL);
	rocmd_service_ready("Listening on %s", srv.socket_path);
	uv_run(loop, UV_RUN_DEFAULT);
	rocmd_server_event(&srv, "daemon.stop", NULL, "rocmd stopped");
	rc = rocmd_db_run_end(db, run_id);
	if (rc < 0)
		log_err("cannot record the clean stop: %s", rocmd_db_errmsg(db));
	status = rc < 0 ? 1 : 0;
	log_notice("stopped");
out_loop:
	if (status != 0) {
		/* Start-up failed after handles were made: close them and drain the loop. */
		rocmd_server_shutdown(&srv, "start-up failed");
		uv_run(loop, UV_RUN_DEFAULT);
	}
	rocmd_server_close_engines(&srv);
	rocmd_service_detach();
	uv_run(loop, UV_RUN_DEFAULT); /* the handles' close callbacks */
	uv_loop_close(loop);
	rocmd_server_free_engines(&srv);
	free(srv.socket_path);
	free(srv.lock_path);
out:
	rocmd_db_close(db);
	rocmd_lockfile_release(lock_fd);
	return status;
}

static int
daemon_main(int argc, char **argv)
{
	struct options o = {0};
	struct rocmd_config cfg = {0};
	int rc, level;

	rocmd_log_init("rocmd");
	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	rc = load_config(&o, &cfg);
	if (rc != 0)
		goto out;
	level = rocmd_log_level_parse(cfg.log_level);
	rocmd_log_set_level(level >= 0 ? (enum rocmd_log_level)level : ROCMD_LOG_NOTICE);
	if (cfg.log_file != NULL && (rc = rocmd_log_open_file(cfg.log_file)) < 0) {
		fprintf(stderr, "rocmd: cannot open log file %s: %s\n", cfg.log_file,
			strerror(-rc));
		rc = 1;
		goto out;
	}
	rocmd_process_init();
	/* Under a service manager rocmd never detaches: it is the main process. */
	if (!o.foreground && !rocmd_service_managed() && (rc = rocmd_process_detach()) < 0) {
		fprintf(stderr, "rocmd: cannot detach: %s\n", strerror(-rc));
		rc = 1;
		goto out;
	}
	rc = run(&o, &cfg);
	rocmd_process_report(rc, start_failure[0] != '\0' ? start_failure : NULL);
out:
	rocmd_config_free(&cfg);
	rocmd_log_close();
	return rc;
}

int
main(int argc, char **argv)
{
	int rc;

	/* Which file runs, before anything can change what /proc/self/exe or
	 * the current folder say (common/spawn.h). */
	rocmd_self_init();
	/* The tuner's evaluation process is rocmd again, with a hidden first
	 * argument (kernels/measure-proc.c); else this is -1. */
	if ((rc = tune_evaluator_child(argc, argv)) >= 0)
		return rc;
	return rocmd_service_run(argc, argv, daemon_main);
}
