/*
 * rocmctl: the command-line client of rocmd. The command table
 * (rocmctl-table.c) parses the arguments and prints --help; each command is
 * one or a few protocol calls (cmd-*.c); output is an aligned table or
 * key/value block for people, or the daemon's JSON with --json for scripts.
 *
 * Exit codes: 0 ok, 1 error, 2 usage, 3 daemon unreachable, 4 permission
 * denied, 5 nothing to do.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "version.h"

/* Whether --json stands on the line (before "--"), so that even an error in
 * parsing it is printed as JSON. */
static int
wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct cmd_ctx ctx = {0};
	struct cli_args a;
	char why[512], where[128];
	int rc;

#ifdef SIGPIPE /* Windows has no SIGPIPE: a closed pipe is a write error there */
	signal(SIGPIPE, SIG_IGN);
#endif
	rocmd_client_args_utf8(&argc, &argv);
	out_init(wants_json(argc, argv));
	rc = cli_parse(&rocmctl_prog, argc, argv, &a, why, sizeof(why));
	if (rc == CLI_USAGE) {
		out_error(EXIT_USAGE, why);
		cli_path_name(&a, where, sizeof(where));
		if (!wants_json(argc, argv))
			fprintf(stderr, "See '%s --help'.\n", where);
		return EXIT_USAGE;
	}
	if (rc == CLI_HELP) {
		cli_help(&a, stdout);
		return 0;
	}
	if (cli_has(&a, "version")) {
		printf("rocmctl %s (protocol %d)\n", ROCMD_VERSION_STRING, ROCMD_PROTO_VERSION);
		return 0;
	}
	ctx.socket = cli_str(&a, "socket", NULL);
	ctx.json = cli_has(&a, "json");
	out_init(ctx.json); /* what was parsed: a program's own --json is not ours */
	ctx.bar.on = !ctx.json && isatty(STDERR_FILENO);
	ctx.bar.plain = !ctx.json && !ctx.bar.on;
	rc = cli_cmd_of(&a)->run(&ctx, &a);
	rocmd_client_close(ctx.client);
	return rc;
}
