/*
 * What rocmctl's commands share: the context each one runs in (the one
 * connection, the socket, --json, the progress bar) and every command's
 * handler, which the command table (rocmctl-table.c) names. Each handler
 * takes the parsed arguments (common/cli.h) and returns rocmctl's exit code
 * (output.h).
 */
#ifndef ROCMD_CMD_H
#define ROCMD_CMD_H

#include "client.h"
#include "common/cli.h"
#include "output.h"

struct cmd_ctx {
	struct rocmd_client *client;
	const char *socket;
	int json;
	struct out_bar bar; /* a progress bar on a terminal (output.h) */
};

extern const struct cli_prog rocmctl_prog;

#define CMD(name) int name(void *ctx, const struct cli_args *a)
/* cmd-daemon.c */
CMD(cmd_status);
CMD(cmd_events);
CMD(cmd_config);
CMD(cmd_log_level);
CMD(cmd_shutdown);
CMD(cmd_rpc);
/* cmd-sdk.c */
CMD(cmd_sdk_list);
CMD(cmd_sdk_show);
CMD(cmd_sdk_rescan);
CMD(cmd_gpu_list);
/* cmd-tune.c, cmd-tune-vendor.c */
CMD(cmd_tune_status);
CMD(cmd_tune_control);
CMD(cmd_tune_watch);
CMD(cmd_tune_add);
CMD(cmd_tune_results);
CMD(cmd_tune_export);
CMD(cmd_tune_report);
CMD(cmd_tune_import);
CMD(cmd_tune_capture);
CMD(cmd_tune_import_log);
CMD(cmd_tune_switch);
/* cmd-pkg.c */
CMD(cmd_pkg_import);
CMD(cmd_pkg_list);
CMD(cmd_pkg_show);
CMD(cmd_pkg_rm);
CMD(cmd_pkg_verify);
CMD(cmd_pkg_match);
CMD(cmd_pkg_refresh);
CMD(cmd_pkg_available);
CMD(cmd_pkg_fetch);
/* cmd-lib.c */
CMD(cmd_lib_status);
CMD(cmd_lib_deploy);
CMD(cmd_lib_verify);
CMD(cmd_lib_history);
CMD(cmd_lib_rollback);
CMD(cmd_lib_recover);
CMD(cmd_lib_ack);
CMD(cmd_lib_forget);
/* cmd-doctor.c */
CMD(cmd_doctor);
/* cmd-bench.c */
CMD(cmd_bench);
CMD(cmd_bench_list);
CMD(cmd_bench_compare);
CMD(cmd_bench_report);
#undef CMD

#endif
