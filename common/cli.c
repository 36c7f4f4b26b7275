/*
 * The command-line table's parser and --help (see cli.h). The parser walks
 * the words once: a word that names a sub-command of the command reached so
 * far descends into it, an option is looked up in every command on the path
 * (the program's own options first), anything else is an argument.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define MIN3(a, b, c) ((a) < (b) ? ((a) < (c) ? (a) : (c)) : ((b) < (c) ? (b) : (c)))

int
cli_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int d[48][48];

	if (la >= 47 || lb >= 47)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			d[i][j] = MIN3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	return d[la][lb];
}

/* Whether WORD is close enough to NAME to suggest it. */
static int
close_to(const char *word, const char *name, int *best)
{
	int d = cli_distance(word, name), limit = strlen(name) <= 3 ? 1 : 2;

	if (d > limit || d >= *best || d >= (int)strlen(word))
		return 0;
	*best = d;
	return 1;
}

const struct cli_cmd *
cli_cmd_of(const struct cli_args *a)
{
	return a->path[a->depth];
}

void
cli_path_name(const struct cli_args *a, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "%s", a->prog->name);

	for (int i = 1; i <= a->depth && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %s", a->path[i]->name);
}

static const struct cli_cmd *
find_sub(const struct cli_cmd *c, const char *name)
{
	for (const struct cli_cmd *s = c->subs; s != NULL && s->name != NULL; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* The option of the path called NAME (long, or SHORT when NAME is NULL). */
static const struct cli_opt *
find_opt(const struct cli_args *a, const char *name, size_t len, char shortname)
{
	for (int i = 0; i <= a->depth; i++)
		for (const struct cli_opt *o = a->path[i]->opts; o != NULL && o->name != NULL;
		     o++) {
			if (name != NULL && strlen(o->name) == len &&
			    strncmp(o->name, name, len) == 0)
				return o;
			if (name == NULL && shortname != 0 && o->shortname == shortname)
				return o;
		}
	return NULL;
}

static void
suggest_opt(const struct cli_args *a, const char *word, char *why, size_t whylen)
{
	const char *best_name = NULL;
	int best = 99;
	char w[64];

	snprintf(w, sizeof(w), "%.*s", (int)strcspn(word, "="), word);
	for (int i = 0; i <= a->depth; i++)
		for (const struct cli_opt *o = a->path[i]->opts; o != NULL && o->name != NULL; o++)
			if (close_to(w, o->name, &best))
				best_name = o->name;
	/* An option of another command of this group, or of a sub-command. */
	if (best_name == NULL)
		for (const struct cli_cmd *s = a->depth > 0 && cli_cmd_of(a)->subs == NULL
		                                   ? a->path[a->depth - 1]->subs
		                                   : cli_cmd_of(a)->subs;
		     s != NULL && s->name != NULL; s++)
			for (const struct cli_opt *o = s->opts; o != NULL && o->name != NULL; o++)
				if (strcmp(w, o->name) == 0) {
					snprintf(why + strlen(why), whylen - strlen(why),
					         " (--%s is an option of '%s')", o->name, s->name);
					return;
				}
	if (best_name != NULL)
		snprintf(why + strlen(why), whylen - strlen(why), "; did you mean --%s?",
		         best_name);
}

static int
usage_error(const struct cli_args *a, char *why, size_t whylen, const char *fmt, const char *x,
            const char *y)
{
	snprintf(why, whylen, fmt, x, y != NULL ? y : "");
	(void)a;
	return CLI_USAGE;
}

/* Checks VALUE against O's kind. */
static int
check_value(const struct cli_args *a, const struct cli_opt *o, const char *value, char *why,
            size_t whylen)
{
	char *end, opt[80];

	snprintf(opt, sizeof(opt), "--%s", o->name);
	if (o->kind == CLI_INT || o->kind == CLI_NUMBER) {
		const char *s = value[0] == '#' && o->kind == CLI_INT ? value + 1 : value;
		double v = o->kind == CLI_INT ? (double)strtoll(s, &end, 10) : strtod(s, &end);
		if (s[0] == '\0' || *end != '\0' ||
		    (o->min < o->max && (v < o->min || v > o->max))) {
			char range[96] = "";
			if (o->min < o->max)
				snprintf(range, sizeof(range), " from %lld to %lld", o->min,
				         o->max);
			snprintf(why, whylen, "%s takes a %s%s, not '%s'", opt,
			         o->kind == CLI_INT ? "whole number" : "number", range, value);
			return CLI_USAGE;
		}
	}
	if (o->kind == CLI_CHOICE || o->kind == CLI_LIST) {
		const char *s = value;
		do {
			size_t n = o->kind == CLI_LIST ? strcspn(s, ",") : strlen(s);
			const char *c = o->choices;
			int found = 0;
			while (!found && c != NULL && *c != '\0') {
				size_t m = strcspn(c, "|");
				found = m == n && strncmp(c, s, n) == 0;
				c += m + (c[m] == '|');
			}
			if (!found) {
				char bad[64], best_s[96] = "";
				int best = 99;
				snprintf(bad, sizeof(bad), "%.*s", (int)n, s);
				for (c = o->choices; c != NULL && *c != '\0';) {
					size_t m = strcspn(c, "|");
					char name[64];
					snprintf(name, sizeof(name), "%.*s", (int)m, c);
					if (close_to(bad, name, &best))
						snprintf(best_s, sizeof(best_s),
						         "; did you mean %s?", name);
					c += m + (c[m] == '|');
				}
				snprintf(why, whylen, "%s takes %s%s, not '%s'%s", opt,
				         o->kind == CLI_LIST ? "one or more of " : "", o->choices,
				         bad, best_s);
				for (char *p = why; (p = strchr(p, '|')) != NULL;)
					*p = '/';
				return CLI_USAGE;
			}
			s += n + (s[n] == ',');
		} while (o->kind == CLI_LIST && *s != '\0');
	}
	(void)a;
	return CLI_OK;
}

static int
add_value(struct cli_args *a, const struct cli_opt *o, const char *value, char *why, size_t whylen)
{
	if (o->kind != CLI_FLAG && check_value(a, o, value, why, whylen) != CLI_OK)
		return CLI_USAGE;
	if (!(o->flags & CLI_OPT_REPEAT) && o->kind != CLI_LIST)
		for (int i = 0; i < a->nvals; i++)
			if (a->vals[i].opt == o) {
				a->vals[i].value = value; /* the last one given counts */
				return CLI_OK;
			}
	if (a->nvals == CLI_MAX_VALUES)
		return usage_error(a, why, whylen, "too many options", NULL, NULL);
	a->vals[a->nvals].opt = o;
	a->vals[a->nvals].value = value;
	a->nvals++;
	return CLI_OK;
}

/* One option word at ARGV[*I] (and its value after it). */
static int
parse_option(struct cli_args *a, int argc, char **argv, int *i, char *why, size_t whylen)
{
	const char *w = argv[*i];

	if (w[1] == '-') {
		const char *name = w + 2, *eq = strchr(name, '=');
		size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
		const struct cli_opt *o = find_opt(a, name, len, 0);
		if (o == NULL) {
			if (len == 4 && strncmp(name, "help", 4) == 0) {
				a->help = 1;
				return CLI_OK;
			}
			snprintf(why, whylen, "unknown option '--%.*s' for '%s'", (int)len, name,
			         cli_cmd_of(a)->name);
			if (a->depth == 0)
				snprintf(why, whylen, "unknown option '--%.*s'", (int)len, name);
			suggest_opt(a, name, why, whylen);
			return CLI_USAGE;
		}
		if (o->kind == CLI_FLAG) {
			if (eq != NULL)
				return usage_error(a, why, whylen, "--%s takes no value", o->name,
				                   NULL);
			return add_value(a, o, "", why, whylen);
		}
		if (eq != NULL)
			return add_value(a, o, eq + 1, why, whylen);
		if (*i + 1 >= argc)
			return usage_error(a, why, whylen, "--%s needs a value (%s)", o->name,
			                   o->arg);
		return add_value(a, o, argv[++*i], why, whylen);
	}
	for (const char *s = w + 1; *s != '\0'; s++) {
		const struct cli_opt *o = find_opt(a, NULL, 0, *s);
		char one[2] = {*s, '\0'};
		if (o == NULL) {
			if (*s == 'h') {
				a->help = 1;
				continue;
			}
			return usage_error(a, why, whylen, "unknown option '-%s'", one, NULL);
		}
		if (o->kind == CLI_FLAG) {
			if (add_value(a, o, "", why, whylen) != CLI_OK)
				return CLI_USAGE;
			continue;
		}
		if (s[1] != '\0')
			return add_value(a, o, s + 1, why, whylen);
		if (*i + 1 >= argc)
			return usage_error(a, why, whylen, "-%s needs a value (%s)", one, o->arg);
		return add_value(a, o, argv[++*i], why, whylen);
	}
	return CLI_OK;
}

static int
unknown_command(const struct cli_args *a, const char *w, char *why, size_t whylen)
{
	const struct cli_cmd *c = cli_cmd_of(a);
	const char *best_name = NULL;
	int best = 99;
	char where[128];

	for (const struct cli_cmd *s = c->subs; s->name != NULL; s++)
		if (close_to(w, s->name, &best))
			best_name = s->name;
	cli_path_name(a, where, sizeof(where));
	if (a->depth == 0)
		snprintf(why, whylen, "unknown command '%s'", w);
	else
		snprintf(why, whylen, "unknown command '%s %s'", where + strlen(a->prog->name) + 1,
		         w);
	if (best_name != NULL)
		snprintf(why + strlen(why), whylen - strlen(why), "; did you mean '%s'?",
		         best_name);
	return CLI_USAGE;
}

/* The checks once every word is read: a command named, the arguments'
 * count, the required options. */
static int
parse_end(struct cli_args *a, int rest, char *why, size_t whylen)
{
	const struct cli_cmd *c = cli_cmd_of(a);
	char where[128];

	for (int i = 0; i < a->nvals; i++)
		if (a->vals[i].opt->flags & CLI_OPT_ALONE)
			return CLI_OK;
	if (a->help)
		return CLI_HELP;
	if (c->subs != NULL && c->run == NULL && a->npos == 0 && !rest) {
		const struct cli_cmd *d =
		    c->default_sub != NULL ? find_sub(c, c->default_sub) : NULL;
		if (d == NULL)
			return usage_error(a, why, whylen, "%s needs a command (see --help)",
			                   a->depth == 0 ? a->prog->name : c->name, NULL);
		a->path[++a->depth] = d;
		c = d;
	}
	cli_path_name(a, where, sizeof(where));
	if (a->npos < c->min_args)
		return usage_error(a, why, whylen, "%s needs %s", where + strlen(a->prog->name) + 1,
		                   c->args);
	if (c->max_args >= 0 && a->npos > c->max_args) {
		if (c->max_args == 0)
			return usage_error(a, why, whylen, "%s takes no arguments (got '%s')",
			                   where + strlen(a->prog->name) + 1, a->pos[0]);
		return usage_error(a, why, whylen, "unexpected argument '%s' (usage: %s)",
		                   a->pos[c->max_args], c->args);
	}
	for (int d = 0; d <= a->depth; d++)
		for (const struct cli_opt *o = a->path[d]->opts; o != NULL && o->name != NULL; o++)
			if ((o->flags & CLI_OPT_REQUIRED) && !cli_has(a, o->name))
				return usage_error(a, why, whylen, "%s needs --%s",
				                   where + strlen(a->prog->name) + 1, o->name);
	return CLI_OK;
}

int
cli_parse(const struct cli_prog *prog, int argc, char **argv, struct cli_args *a, char *why,
          size_t whylen)
{
	int rest = 0, rc;

	memset(a, 0, sizeof(*a));
	a->prog = prog;
	a->path[0] = prog->root;
	why[0] = '\0';
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		const struct cli_cmd *c = cli_cmd_of(a), *s;

		if (!rest && strcmp(w, "--") == 0) {
			rest = 1;
			continue;
		}
		if (!rest && w[0] == '-' && w[1] != '\0') {
			if ((rc = parse_option(a, argc, argv, &i, why, whylen)) != CLI_OK)
				return rc;
			continue;
		}
		if (!rest && a->npos == 0 && c->subs != NULL) {
			if ((s = find_sub(c, w)) != NULL && a->depth < CLI_MAX_DEPTH) {
				a->path[++a->depth] = s;
				continue;
			}
			if (strcmp(w, "help") == 0) {
				a->help = 1;
				continue;
			}
			if (c->run == NULL)
				return a->help ? CLI_HELP : unknown_command(a, w, why, whylen);
		}
		if (a->npos == CLI_MAX_POS)
			return usage_error(a, why, whylen, "too many arguments", NULL, NULL);
		a->pos[a->npos++] = w;
		if (c->flags & CLI_CMD_REST)
			rest = 1;
	}
	return parse_end(a, rest, why, whylen);
}

int
cli_has(const struct cli_args *a, const char *name)
{
	return cli_nth(a, name, 0) != NULL;
}

const char *
cli_nth(const struct cli_args *a, const char *name, int n)
{
	for (int i = 0; i < a->nvals; i++)
		if (strcmp(a->vals[i].opt->name, name) == 0 && n-- == 0)
			return a->vals[i].value;
	return NULL;
}

const char *
cli_str(const struct cli_args *a, const char *name, const char *def)
{
	const char *v = NULL;

	for (int i = 0; i < a->nvals; i++)
		if (strcmp(a->vals[i].opt->name, name) == 0)
			v = a->vals[i].value;
	return v != NULL ? v : def;
}

long long
cli_int(const struct cli_args *a, const char *name, long long def)
{
	const char *v = cli_str(a, name, NULL);

	return v != NULL ? strtoll(v[0] == '#' ? v + 1 : v, NULL, 10) : def;
}

double
cli_num(const struct cli_args *a, const char *name, double def)
{
	const char *v = cli_str(a, name, NULL);

	return v != NULL ? strtod(v, NULL) : def;
}

/* LEFT, then TEXT in lines of up to 80 columns from column 28 (on the next
 * line when LEFT reaches it). */
static void
help_line(const char *left, const char *text, FILE *f)
{
	int n = (int)strlen(left);

	fprintf(f, "%s", left);
	if (n > 26) {
		fputc('\n', f);
		n = 0;
	}
	for (const char *p = text; *p != '\0';) {
		size_t len = strlen(p), cut = len;
		if (len > 52) {
			cut = 52;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = len;
		}
		fprintf(f, "%*s%.*s\n", 28 - n, "", (int)cut, p);
		n = 0;
		p += cut;
		while (*p == ' ')
			p++;
	}
}

/* "  -t, --target TARGET" and its help, the choices of a CHOICE named. */
static void
help_opts(const struct cli_opt *opts, FILE *f)
{
	for (const struct cli_opt *o = opts; o != NULL && o->name != NULL; o++) {
		char left[96], text[640];
		int n;
		if (o->shortname)
			n = snprintf(left, sizeof(left), "  -%c, --%s", o->shortname, o->name);
		else
			n = snprintf(left, sizeof(left), "      --%s", o->name);
		if (o->kind != CLI_FLAG)
			snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->arg);
		n = snprintf(text, sizeof(text), "%s", o->help);
		if (o->kind == CLI_CHOICE || o->kind == CLI_LIST) {
			n += snprintf(text + n, sizeof(text) - (size_t)n, " (%s", o->choices);
			for (char *p = text; (p = strchr(p, '|')) != NULL;)
				*p = '/';
			snprintf(text + n, sizeof(text) - (size_t)n, ")");
		}
		if (o->flags & CLI_OPT_REQUIRED)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), " (required)");
		help_line(left, text, f);
	}
}

/* TEXT wrapped at 78 columns, each line indented by INDENT. */
static void
wrap(const char *text, int indent, FILE *f)
{
	const char *p = text;

	while (*p != '\0') {
		const char *line = p, *cut = NULL;
		int col = indent;
		if (*p == '\n') {
			fputc('\n', f);
			p++;
			continue;
		}
		while (*p != '\0' && *p != '\n' && (col < 78 || cut == NULL)) {
			if (*p == ' ')
				cut = p;
			p++;
			col++;
		}
		if (*p == '\0' || *p == '\n' || cut == NULL)
			cut = p;
		fprintf(f, "%*s%.*s\n", indent, "", (int)(cut - line), line);
		p = cut;
		if (*p == ' ' || *p == '\n')
			p++;
	}
}

void
cli_help(const struct cli_args *a, FILE *f)
{
	const struct cli_cmd *c = cli_cmd_of(a);
	char where[128];

	cli_path_name(a, where, sizeof(where));
	fprintf(f, "Usage: %s%s%s%s%s\n", where, a->depth == 0 ? " [OPTIONS]" : "",
	        c->subs == NULL ? "" : c->run != NULL ? " [COMMAND]" : " COMMAND", c->args != NULL && c->args[0] ? " " : "",
	        c->args != NULL ? c->args : "");
	if (a->depth > 0 && c->opts != NULL)
		fprintf(f, "       (options may stand anywhere after the command)\n");
	fputc('\n', f);
	wrap(c->about != NULL ? c->about : c->help, 0, f);
	if (c->subs != NULL) {
		fprintf(f, "\nCommands:\n");
		for (const struct cli_cmd *s = c->subs; s->name != NULL; s++) {
			char left[96];
			snprintf(left, sizeof(left), "  %s%s%s", s->name,
			         s->args != NULL && s->args[0] ? " " : "", s->args != NULL ? s->args : "");
			help_line(left, s->help, f);
		}
		if (c->default_sub != NULL)
			fprintf(f, "Without a command: %s.\n", c->default_sub);
	}
	if (a->depth > 0 && c->opts != NULL) {
		fprintf(f, "\nOptions:\n");
		help_opts(c->opts, f);
	}
	for (int d = a->depth - 1; d >= 1; d--)
		if (a->path[d]->opts != NULL) {
			fprintf(f, "\nOptions of '%s':\n", a->path[d]->name);
			help_opts(a->path[d]->opts, f);
		}
	fprintf(f, "\n%s:\n", a->depth == 0 ? "Options" : "Global options");
	help_opts(a->path[0]->opts, f);
	fprintf(f, "  -h, --help                this help\n");
	if (c->subs != NULL)
		fprintf(f, "\n'%s COMMAND --help' says more about each command.\n", where);
}
