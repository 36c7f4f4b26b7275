/*
 * The command-line table of rocmd's programs (rocmctl, rocmd, rocmtune): one
 * tree of commands and options per program that parses the arguments
 * (cli.c), prints every command's --help (cli.c) and generates the man page
 * and the bash, zsh and fish completions (cli-doc.c, run at build time by
 * tools/cli-doc.c), so none of them can drift from what is parsed.
 *
 * Parsing: options of the program and of every command on the path so far
 * may stand anywhere after it ("rocmctl --json lib status" and "rocmctl lib
 * status --json" alike); "--opt=V", "--opt V", "-o V", "-oV" and bundled
 * short flags; "--" ends the options. A usage error (unknown command or
 * option, a missing or bad value, too many or too few arguments) is
 * CLI_USAGE with one sentence in WHY, "did you mean" included where a name
 * is one or two edits away.
 */
#ifndef ROCMD_CLI_H
#define ROCMD_CLI_H

#include <stdio.h>

/* What an option takes. */
enum cli_kind {
	CLI_FLAG,   /* nothing */
	CLI_VALUE,  /* any text; CHOICES may hint completion: "@file", "@dir" */
	CLI_INT,    /* a whole number from MIN to MAX (a leading '#' is allowed) */
	CLI_CHOICE, /* one of CHOICES, "a|b|c" */
	CLI_LIST,   /* one or more of CHOICES, comma-separated or given again */
	CLI_NUMBER, /* a number (decimal fractions allowed), from MIN to MAX */
};

struct cli_opt {
	const char *name; /* the long name, without "--" */
	char shortname;   /* 0: none */
	enum cli_kind kind;
	const char *arg;  /* the value's name in help: "N" */
	const char *help; /* one sentence or less */
	const char *choices;
	long long min, max;
	unsigned flags; /* CLI_OPT_* */
};

#define CLI_OPT_ALONE 1u    /* an action by itself (--version): no command needed */
#define CLI_OPT_REQUIRED 2u /* the command needs it */
#define CLI_OPT_REPEAT 4u   /* may be given more than once; each value is kept */

struct cli_args;

struct cli_cmd {
	const char *name;
	const char *args;       /* the positional arguments in the synopsis: "[TARGET]" */
	int min_args, max_args; /* max_args -1: any number */
	const char *complete;   /* the positionals' completion: "@file", "@dir", "a|b", NULL */
	const char *help;       /* one line, for the command list */
	const char *about;      /* --help's and the man page's paragraph; NULL: HELP */
	const struct cli_opt *opts;
	const struct cli_cmd *subs; /* terminated by a NULL name */
	const char *default_sub;    /* the sub run when none is named */
	int (*run)(void *ctx, const struct cli_args *a);
	unsigned flags; /* CLI_CMD_* */
};

/* After its first argument every word is an argument (a program to run). */
#define CLI_CMD_REST 1u

/* A program: ROOT's options are the global ones, its subs the commands. */
struct cli_prog {
	const char *name;
	int section;         /* the man page's */
	const char *summary; /* the man page's NAME line */
	const struct cli_cmd *root;
	/* The man page's sections of prose: paragraphs separated by an empty line;
	 * a paragraph "  X\tY" is a tagged entry X with text Y. NULL: none. */
	const char *description, *exit_status, *environment, *files, *examples, *see_also;
};

#define CLI_MAX_DEPTH 4
#define CLI_MAX_VALUES 64
#define CLI_MAX_POS 256

enum { CLI_OK = 0, CLI_HELP = 1, CLI_USAGE = 2 };

struct cli_args {
	const struct cli_prog *prog;
	const struct cli_cmd *path[CLI_MAX_DEPTH + 1]; /* root first */
	int depth;                                     /* path[depth] is the command run */
	struct {
		const struct cli_opt *opt;
		const char *value; /* "" for a flag */
	} vals[CLI_MAX_VALUES];
	int nvals;
	const char *pos[CLI_MAX_POS + 1]; /* NULL after the last */
	int npos;
	int help; /* --help, -h or "help" was given */
};

/*
 * Parses ARGV[1..ARGC) against PROG into A. CLI_OK, CLI_HELP (--help given:
 * print cli_help for A's command) or CLI_USAGE with the reason in WHY; A
 * holds what was parsed up to the error either way.
 */
int cli_parse(const struct cli_prog *prog, int argc, char **argv, struct cli_args *a, char *why,
              size_t whylen);

/* The command A reached. */
const struct cli_cmd *cli_cmd_of(const struct cli_args *a);
/* "rocmctl lib deploy": the program and the command path of A. */
void cli_path_name(const struct cli_args *a, char *buf, size_t len);

/* Whether option NAME was given; its last value (or DEF); its Nth value. */
int cli_has(const struct cli_args *a, const char *name);
const char *cli_str(const struct cli_args *a, const char *name, const char *def);
long long cli_int(const struct cli_args *a, const char *name, long long def);
double cli_num(const struct cli_args *a, const char *name, double def);
const char *cli_nth(const struct cli_args *a, const char *name, int n);

/* The --help of A's command: usage, what it does, its commands and options,
 * and the global options. */
void cli_help(const struct cli_args *a, FILE *f);

/* The edit distance of A and B (insertions, deletions, substitutions and
 * swaps of neighbours), for "did you mean". */
int cli_distance(const char *a, const char *b);

/* Generators (cli-doc.c): the man page in troff, and the completions. */
void cli_doc_man(const struct cli_prog *prog, const char *version, const char *date, FILE *f);
void cli_doc_bash(const struct cli_prog *prog, FILE *f);
void cli_doc_zsh(const struct cli_prog *prog, FILE *f);
void cli_doc_fish(const struct cli_prog *prog, FILE *f);
/* One line per command path and per option of each: "lib deploy" and
 * "lib deploy --target", for the tests that compare the outputs above with
 * the table. */
void cli_doc_list(const struct cli_prog *prog, FILE *f);

#endif
