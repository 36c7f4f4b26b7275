/*
 * cli-doc: writes a program's man page or completion script from its
 * command table (common/cli.h), at build time, so neither can drift from
 * what the program parses.
 *
 * Usage: cli-doc rocmctl|rocmd|rocmtune man|bash|zsh|fish|list [VERSION [DATE]]
 */
#include <stdio.h>
#include <string.h>

#include "common/cli.h"

extern const struct cli_prog rocmctl_prog, rocmd_prog, rocmtune_prog;

int
main(int argc, char **argv)
{
	const struct cli_prog *progs[] = {&rocmctl_prog, &rocmd_prog, &rocmtune_prog}, *p = NULL;

	for (size_t i = 0; argc >= 3 && i < sizeof(progs) / sizeof(progs[0]); i++)
		if (strcmp(argv[1], progs[i]->name) == 0)
			p = progs[i];
	if (p == NULL) {
		fprintf(stderr, "usage: cli-doc rocmctl|rocmd|rocmtune man|bash|zsh|fish|list "
		                "[VERSION [DATE]]\n");
		return 2;
	}
	if (strcmp(argv[2], "man") == 0)
		cli_doc_man(p, argc > 3 ? argv[3] : "", argc > 4 ? argv[4] : "", stdout);
	else if (strcmp(argv[2], "bash") == 0)
		cli_doc_bash(p, stdout);
	else if (strcmp(argv[2], "zsh") == 0)
		cli_doc_zsh(p, stdout);
	else if (strcmp(argv[2], "fish") == 0)
		cli_doc_fish(p, stdout);
	else if (strcmp(argv[2], "list") == 0)
		cli_doc_list(p, stdout);
	else {
		fprintf(stderr, "cli-doc: unknown format '%s'\n", argv[2]);
		return 2;
	}
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
