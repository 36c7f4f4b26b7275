/*
 * The generators of the command table (cli.h): the man page in troff and the
 * bash, zsh and fish completions, each written from the same walk over the
 * commands, so that every command and option the parser takes is in each of
 * them, and nothing else. tools/cli-doc.c runs them at build time.
 *
 * The completions share one model: a command path is a key ("." for the
 * program, ". lib deploy"); per key its sub-commands, its options, the
 * options that take a value with what completes it ("@file", "@dir",
 * "@none" or words), what completes its arguments, and whether every word
 * after the first argument is an argument (a program to run).
 */
#include "cli.h"

#include <string.h>

/* ---- troff ---- */

/* TEXT with troff's special characters escaped. */
static void
roff(const char *s, FILE *f)
{
	int bol = 1;

	for (; *s != '\0'; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = 0;
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* PROSE: paragraphs split at empty lines; "  X\tY" is a tagged entry. */
static void
roff_prose(const char *prose, FILE *f)
{
	const char *p = prose;

	while (p != NULL && *p != '\0') {
		const char *end = strstr(p, "\n\n");
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
		char para[2048];
		snprintf(para, sizeof(para), "%.*s", (int)n, p);
		if (strncmp(para, "  ", 2) == 0 && strchr(para, '\t') != NULL) {
			char *tab = strchr(para, '\t');
			*tab = '\0';
			fputs(".TP\n.B ", f);
			roff(para + 2, f);
			fputc('\n', f);
			roff(tab + 1, f);
		} else {
			fputs(".PP\n", f);
			roff(para, f);
		}
		fputc('\n', f);
		p = end != NULL ? end + 2 : NULL;
	}
}

/* A help line as a sentence: its first letter up, a full stop at its end. */
static void
roff_sentence(const char *s, FILE *f)
{
	char buf[1024];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s", s);

	if (buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	if (n > 0 && n + 1 < sizeof(buf) && buf[n - 1] != '.' && buf[n - 1] != ')')
		buf[n] = '.', buf[n + 1] = '\0';
	else if (n > 0 && n + 1 < sizeof(buf) && buf[n - 1] == ')')
		buf[n] = '.', buf[n + 1] = '\0';
	roff(buf, f);
}

static void
roff_opts(const struct cli_opt *opts, FILE *f)
{
	for (const struct cli_opt *o = opts; o != NULL && o->name != NULL; o++) {
		fputs(".TP\n", f);
		if (o->shortname)
			fprintf(f, "\\fB\\-%c\\fR, ", o->shortname);
		fputs("\\fB\\-\\-", f);
		roff(o->name, f);
		fputs("\\fR", f);
		if (o->kind != CLI_FLAG) {
			fputs(" \\fI", f);
			roff(o->arg, f);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff_sentence(o->help, f);
		if (o->kind == CLI_CHOICE || o->kind == CLI_LIST) {
			fputs(" One", f);
			fputs(o->kind == CLI_LIST ? " or more" : "", f);
			fputs(" of: ", f);
			for (const char *c = o->choices; *c != '\0'; c++)
				fputs(*c == '|' ? ", " : (char[]){*c, '\0'}, f);
			fputc('.', f);
		}
		if (o->flags & CLI_OPT_REQUIRED)
			fputs(" Required.", f);
		fputc('\n', f);
	}
}

/* One command's section and its sub-commands', depth first. */
static void
roff_cmd(const struct cli_prog *prog, const char *path, const struct cli_cmd *c, FILE *f)
{
	char here[256];

	snprintf(here, sizeof(here), "%s%s%s", path, path[0] ? " " : "", c->name);
	fputs(".SS \"", f);
	roff(prog->name, f);
	fputc(' ', f);
	roff(here, f);
	if (c->subs != NULL) {
		/* A group that runs by itself too (rocmctl bench) takes no command. */
		fputs(c->run != NULL ? " [\\fICOMMAND\\fR]" : " \\fICOMMAND\\fR", f);
	} else if (c->args != NULL && c->args[0]) {
		fputs(" \\fI", f);
		roff(c->args, f);
		fputs("\\fR", f);
	}
	fputs("\"\n", f);
	roff_sentence(c->about != NULL ? c->about : c->help, f);
	fputc('\n', f);
	if (c->default_sub != NULL)
		fprintf(f, "Without a command: \\fB%s\\fR.\n", c->default_sub);
	roff_opts(c->opts, f);
	for (const struct cli_cmd *s = c->subs; s != NULL && s->name != NULL; s++)
		roff_cmd(prog, here, s, f);
}

static void
roff_section(const char *title, const char *prose, FILE *f)
{
	if (prose == NULL)
		return;
	fprintf(f, ".SH %s\n", title);
	roff_prose(prose, f);
}

void
cli_doc_man(const struct cli_prog *prog, const char *version, const char *date, FILE *f)
{
	const struct cli_cmd *root = prog->root;
	char upper[64];

	for (size_t i = 0; i < sizeof(upper) - 1 && (upper[i] = prog->name[i]) != '\0'; i++)
		if (upper[i] >= 'a' && upper[i] <= 'z')
			upper[i] = (char)(upper[i] - 'a' + 'A');
	upper[sizeof(upper) - 1] = '\0';
	fprintf(f, ".\\\" %s(%d): generated from the command table by cli-doc; do not edit.\n",
	        prog->name, prog->section);
	fprintf(f, ".TH %s %d \"%s\" \"rocmd %s\" \"%s\"\n", upper, prog->section, date, version,
	        prog->section == 8 ? "System Administration" : "User Commands");
	fputs(".SH NAME\n", f);
	roff(prog->name, f);
	fputs(" \\- ", f);
	roff(prog->summary, f);
	fputs("\n.SH SYNOPSIS\n.B ", f);
	roff(prog->name, f);
	fputs("\n[\\fIOPTIONS\\fR]", f);
	if (root->subs != NULL)
		fputs(" \\fICOMMAND\\fR [\\fIARGS\\fR]", f);
	fputc('\n', f);
	roff_section("DESCRIPTION", prog->description, f);
	fputs(".SH OPTIONS\n", f);
	roff_opts(root->opts, f);
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the help (of the command before it) "
	      "and exit.\n",
	      f);
	if (root->subs != NULL) {
		fputs(".SH COMMANDS\n", f);
		for (const struct cli_cmd *s = root->subs; s->name != NULL; s++)
			roff_cmd(prog, "", s, f);
	}
	roff_section("EXIT STATUS", prog->exit_status, f);
	roff_section("ENVIRONMENT", prog->environment, f);
	roff_section("FILES", prog->files, f);
	roff_section("EXAMPLES", prog->examples, f);
	if (prog->see_also != NULL) {
		fputs(".SH SEE ALSO\n", f);
		roff(prog->see_also, f);
		fputc('\n', f);
	}
}

/* ---- the completions' model ---- */

enum shell { BASH, ZSH, FISH };

/* What completes O's value: "@file", "@dir", the choices as words, "@none". */
static void
value_words(const struct cli_opt *o, char *buf, size_t len)
{
	if ((o->kind == CLI_CHOICE || o->kind == CLI_LIST) && o->choices != NULL) {
		snprintf(buf, len, "%s", o->choices);
		for (char *p = buf; (p = strchr(p, '|')) != NULL;)
			*p = ' ';
	} else {
		snprintf(buf, len, "%s", o->choices != NULL ? o->choices : "@none");
	}
}

/* A fish variable name's part for KEY: ". lib deploy" -> "_lib_deploy". */
static void
fish_key(const char *key, char *buf, size_t len)
{
	size_t n = 0;

	for (const char *s = key + 1; *s != '\0' && n + 1 < len; s++)
		buf[n++] = (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ? *s : '_';
	buf[n] = '\0';
}

/* One assignment of the model in SH's syntax: TABLE[KEY]=VALUE. */
static void
emit(enum shell sh, const char *prog, const char *table, const char *key, const char *value,
     FILE *f)
{
	if (sh == FISH) {
		char k[256];
		fish_key(key, k, sizeof(k));
		fprintf(f, "set -g __%s_%s%s %s\n", prog, table, k, value);
	} else if (sh == ZSH) {
		fprintf(f, "\t%s+=(\"%s\" \"%s\")\n", table, key, value);
	} else {
		fprintf(f, "\t%s[\"%s\"]=\"%s\"\n", table, key, value);
	}
}

static void
model_cmd(enum shell sh, const char *prog, const char *key, const struct cli_cmd *c, FILE *f)
{
	char words[1024] = "", v[512], k[300];

	for (const struct cli_cmd *s = c->subs; s != NULL && s->name != NULL; s++)
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s",
		         words[0] ? " " : "", s->name);
	if (words[0])
		emit(sh, prog, "subs", key, words, f);
	words[0] = '\0';
	for (const struct cli_opt *o = c->opts; o != NULL && o->name != NULL; o++) {
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s--%s",
		         words[0] ? " " : "", o->name);
		if (o->kind == CLI_FLAG)
			continue;
		value_words(o, v, sizeof(v));
		snprintf(k, sizeof(k), "%s|--%s", key, o->name);
		emit(sh, prog, "vals", k, v, f);
		if (o->shortname) {
			snprintf(k, sizeof(k), "%s|-%c", key, o->shortname);
			emit(sh, prog, "vals", k, v, f);
		}
	}
	if (words[0])
		emit(sh, prog, "opts", key, words, f);
	if (c->complete != NULL) {
		snprintf(v, sizeof(v), "%s", c->complete);
		for (char *p = v; (p = strchr(p, '|')) != NULL;)
			*p = ' ';
		emit(sh, prog, "args", key, v, f);
	}
	if (c->flags & CLI_CMD_REST)
		emit(sh, prog, "rest", key, "1", f);
	for (const struct cli_cmd *s = c->subs; s != NULL && s->name != NULL; s++) {
		snprintf(k, sizeof(k), "%s %s", key, s->name);
		model_cmd(sh, prog, k, s, f);
	}
}

/* The walk over the words typed so far, in bash (zsh runs it too: the
 * arrays are its words, 1-based there). */
static const char *const walk_sh =
    "\tlocal cmdpath=. npos=0 restp=0 want= w p i\n"
    "\tfor ((i = FIRST; i < CUR; i++)); do\n"
    "\t\tw=${WORDS[i]}\n"
    "\t\t((restp)) && continue\n"
    "\t\tif [[ $w == -?* ]]; then\n"
    "\t\t\tfor p in \"${(@)PREFIXES}\"; do\n"
    "\t\t\t\tif [[ -n ${vals[$p|$w]+x} ]]; then\n"
    "\t\t\t\t\t((i + 1 == CUR)) && want=${vals[$p|$w]}\n"
    "\t\t\t\t\t((i++))\n"
    "\t\t\t\t\tbreak\n"
    "\t\t\t\tfi\n"
    "\t\t\tdone\n"
    "\t\t\tcontinue\n"
    "\t\tfi\n"
    "\t\tif ((npos == 0)) && [[ \" ${subs[$cmdpath]} \" == *\" $w \"* ]]; then\n"
    "\t\t\tcmdpath=\"$cmdpath $w\"\n"
    "\t\t\tcontinue\n"
    "\t\tfi\n"
    "\t\t((npos++))\n"
    "\t\t[[ -n ${rest[$cmdpath]} ]] && restp=1\n"
    "\tdone\n";

/* WALK with its placeholders filled for SH. */
static void
emit_walk(enum shell sh, FILE *f)
{
	const char *s = walk_sh;

	while (*s != '\0') {
		if (strncmp(s, "FIRST", 5) == 0) {
			fputs(sh == BASH ? "1" : "2", f);
			s += 5;
		} else if (strncmp(s, "CUR", 3) == 0) {
			fputs(sh == BASH ? "COMP_CWORD" : "CURRENT", f);
			s += 3;
		} else if (strncmp(s, "WORDS", 5) == 0) {
			fputs(sh == BASH ? "COMP_WORDS" : "words", f);
			s += 5;
		} else if (strncmp(s, "\"${(@)PREFIXES}\"", 16) == 0) {
			fputs(sh == BASH ? "$(_prefixes \"$cmdpath\")"
			                 : "${(f)\"$(_prefixes $cmdpath)\"}",
			      f);
			s += 16;
		} else {
			fputc(*s++, f);
		}
	}
}

void
cli_doc_bash(const struct cli_prog *prog, FILE *f)
{
	const char *n = prog->name;

	fprintf(f,
	        "# bash completion for %s, generated from its command table by cli-doc: do not "
	        "edit.\n",
	        n);
	fprintf(f,
	        "_%s()\n{\n\tlocal cur=${COMP_WORDS[COMP_CWORD]}\n"
	        "\tlocal -A subs opts vals args rest\n",
	        n);
	model_cmd(BASH, n, ".", prog->root, f);
	fputs("\tlocal IFS=$'\\n'\n"
	      "\t_prefixes() { local IFS=' ' p= w; for w in $1; do p=${p:+$p }$w; echo \"$p\"; "
	      "done; }\n"
	      "\t_words() { COMPREPLY=($(compgen -W \"${1// /$'\\n'}\" -- \"$cur\")); }\n",
	      f);
	emit_walk(BASH, f);
	fputs("\tif ((restp)); then\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\telif [[ -n $want ]]; then\n"
	      "\t\tcase $want in\n"
	      "\t\t@file) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	      "\t\t@dir) COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
	      "\t\t@none) COMPREPLY=() ;;\n"
	      "\t\t*) _words \"$want\" ;;\n"
	      "\t\tesac\n"
	      "\telif [[ $cur == -* ]]; then\n"
	      "\t\tlocal all=\n"
	      "\t\tfor p in $(_prefixes \"$cmdpath\"); do all=\"$all ${opts[$p]}\"; done\n"
	      "\t\t_words \"${all# } --help\"\n"
	      "\telif ((npos == 0)) && [[ -n ${subs[$cmdpath]} ]]; then\n"
	      "\t\t_words \"${subs[$cmdpath]}\"\n"
	      "\telse\n"
	      "\t\tcase ${args[$cmdpath]} in\n"
	      "\t\t@file) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	      "\t\t@dir) COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
	      "\t\t@command) COMPREPLY=($(compgen -c -- \"$cur\")) ;;\n"
	      "\t\t'') COMPREPLY=() ;;\n"
	      "\t\t*) _words \"${args[$cmdpath]}\" ;;\n"
	      "\t\tesac\n"
	      "\tfi\n"
	      "\tunset -f _prefixes _words\n"
	      "}\n",
	      f);
	fprintf(f, "complete -o filenames -F _%s %s\n", n, n);
}

void
cli_doc_zsh(const struct cli_prog *prog, FILE *f)
{
	const char *n = prog->name;

	fprintf(f,
	        "#compdef %s\n# zsh completion for %s, generated from its command table by "
	        "cli-doc: do not edit.\n",
	        n, n);
	fprintf(f, "_%s()\n{\n\tlocal cur=${words[CURRENT]}\n\tlocal -A subs opts vals args rest\n",
	        n);
	model_cmd(ZSH, n, ".", prog->root, f);
	fputs("\t_prefixes() { local p= w; for w in ${=1}; do p=${p:+$p }$w; print -r -- \"$p\"; "
	      "done; }\n",
	      f);
	emit_walk(ZSH, f);
	fputs("\tif ((restp)); then\n"
	      "\t\t_files\n"
	      "\telif [[ -n $want ]]; then\n"
	      "\t\tcase $want in\n"
	      "\t\t@file) _files ;;\n"
	      "\t\t@dir) _files -/ ;;\n"
	      "\t\t@none) _message 'a value' ;;\n"
	      "\t\t*) compadd -- ${=want} ;;\n"
	      "\t\tesac\n"
	      "\telif [[ $cur == -* ]]; then\n"
	      "\t\tlocal all=\n"
	      "\t\tfor p in ${(f)\"$(_prefixes $cmdpath)\"}; do all=\"$all ${opts[$p]}\"; done\n"
	      "\t\tcompadd -- ${=all} --help\n"
	      "\telif ((npos == 0)) && [[ -n ${subs[$cmdpath]} ]]; then\n"
	      "\t\tcompadd -- ${=subs[$cmdpath]}\n"
	      "\telse\n"
	      "\t\tcase ${args[$cmdpath]} in\n"
	      "\t\t@file) _files ;;\n"
	      "\t\t@dir) _files -/ ;;\n"
	      "\t\t@command) ((npos == 0)) && _command_names -e || _files ;;\n"
	      "\t\t'') ;;\n"
	      "\t\t*) compadd -- ${=args[$cmdpath]} ;;\n"
	      "\t\tesac\n"
	      "\tfi\n"
	      "}\n",
	      f);
	fprintf(f, "_%s \"$@\"\n", n);
}

void
cli_doc_fish(const struct cli_prog *prog, FILE *f)
{
	const char *n = prog->name;

	fprintf(f,
	        "# fish completion for %s, generated from its command table by cli-doc: do not "
	        "edit.\n",
	        n);
	model_cmd(FISH, n, ".", prog->root, f);
	/* fish has no maps: a key's table is the variable __PROG_TABLE_KEY. */
	fprintf(f,
	        "function __%s_get\n"
	        "\tset -l v __%s_$argv[1](string replace -ra '[^a-z0-9]' _ -- (string replace -r "
	        "'^[.]' '' -- $argv[2]))\n"
	        "\tset -q $v; and echo $$v\n"
	        "end\n"
	        "function __%s_complete\n"
	        "\tset -l words (commandline -opc)\n"
	        "\tset -l cur (commandline -ct)\n"
	        "\tset -l cmdpath .; set -l npos 0; set -l restp 0; set -l want; set -l skip 0\n"
	        "\tfor i in (seq 2 (count $words))\n"
	        "\t\tset -l w $words[$i]\n"
	        "\t\tif test $skip = 1; set skip 0; continue; end\n"
	        "\t\tif test $restp = 1; continue; end\n"
	        "\t\tif string match -qr -- '^-.' $w\n"
	        "\t\t\tset -l p .\n"
	        "\t\t\tfor part in (string split ' ' -- $cmdpath)\n"
	        "\t\t\t\ttest $part = .; or set p \"$p $part\"\n"
	        "\t\t\t\tset -l v (__%s_get vals \"$p|$w\")\n"
	        "\t\t\t\tif test -n \"$v\"\n"
	        "\t\t\t\t\tset skip 1\n"
	        "\t\t\t\t\ttest $i = (count $words); and set want $v\n"
	        "\t\t\t\t\tbreak\n"
	        "\t\t\t\tend\n"
	        "\t\t\tend\n"
	        "\t\t\tcontinue\n"
	        "\t\tend\n"
	        "\t\tif test $npos = 0; and contains -- $w (string split ' ' -- (__%s_get subs "
	        "$cmdpath))\n"
	        "\t\t\tset cmdpath \"$cmdpath $w\"\n"
	        "\t\t\tcontinue\n"
	        "\t\tend\n"
	        "\t\tset npos (math $npos + 1)\n"
	        "\t\ttest -n \"$(__%s_get rest $cmdpath)\"; and set restp 1\n"
	        "\tend\n"
	        "\tif test $restp = 1\n"
	        "\t\t__fish_complete_path $cur\n"
	        "\telse if test -n \"$want\"\n"
	        "\t\tswitch $want\n"
	        "\t\t\tcase @file @dir; __fish_complete_path $cur\n"
	        "\t\t\tcase @none\n"
	        "\t\t\tcase '*'; string split ' ' -- $want\n"
	        "\t\tend\n"
	        "\telse if string match -qr -- '^-' $cur\n"
	        "\t\tset -l p .\n"
	        "\t\tfor part in (string split ' ' -- $cmdpath)\n"
	        "\t\t\ttest $part = .; or set p \"$p $part\"\n"
	        "\t\t\tstring split ' ' -- (__%s_get opts $p)\n"
	        "\t\tend\n"
	        "\t\techo --help\n"
	        "\telse if test $npos = 0; and test -n \"$(__%s_get subs $cmdpath)\"\n"
	        "\t\tstring split ' ' -- (__%s_get subs $cmdpath)\n"
	        "\telse\n"
	        "\t\tset -l a (__%s_get args $cmdpath)\n"
	        "\t\tswitch \"$a\"\n"
	        "\t\t\tcase @file @dir; __fish_complete_path $cur\n"
	        "\t\t\tcase @command; __fish_complete_command\n"
	        "\t\t\tcase ''\n"
	        "\t\t\tcase '*'; string split ' ' -- $a\n"
	        "\t\tend\n"
	        "\tend\n"
	        "end\n"
	        "complete -c %s -f -a '(__%s_complete)'\n",
	        n, n, n, n, n, n, n, n, n, n, n, n);
}

static void
list_cmd(const char *path, const struct cli_cmd *c, FILE *f)
{
	char here[256];

	snprintf(here, sizeof(here), "%s%s%s", path, path[0] && c->name[0] ? " " : "",
	         path[0] || c->name[0] ? c->name : "");
	if (here[0])
		fprintf(f, "%s\n", here);
	for (const struct cli_opt *o = c->opts; o != NULL && o->name != NULL; o++)
		fprintf(f, "%s%s--%s\n", here, here[0] ? " " : "", o->name);
	for (const struct cli_cmd *s = c->subs; s != NULL && s->name != NULL; s++)
		list_cmd(here, s, f);
}

void
cli_doc_list(const struct cli_prog *prog, FILE *f)
{
	struct cli_cmd root = *prog->root;

	root.name = "";
	list_cmd("", &root, f);
}
