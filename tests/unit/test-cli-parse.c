/*
 * Unit tests for the command table's parser (common/cli.h) on rocmctl's real
 * table, and for rocmctl's output (client/output.h): tables cut to COLUMNS,
 * the progress bar's percentage, rate and time left within the width.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/cmd.h"
#include "common/spawn.h"

static int
parse(struct cli_args *a, char *why, size_t len, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = "rocmctl";
	va_start(ap, len);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	return cli_parse(&rocmctl_prog, argc, argv, a, why, len);
}

static void
test_options_anywhere(void **state)
{
	struct cli_args a;
	char why[256];

	assert_int_equal(parse(&a, why, sizeof(why), "--json", "lib", "status", NULL), CLI_OK);
	assert_string_equal(cli_cmd_of(&a)->name, "status");
	assert_true(cli_has(&a, "json"));
	assert_int_equal(parse(&a, why, sizeof(why), "lib", "status", "--json", NULL), CLI_OK);
	assert_true(cli_has(&a, "json"));
	assert_int_equal(parse(&a, why, sizeof(why), "lib", "deploy", "sdk-1", "-ny", "--force=sdk",
	                       "-f", "arch", "--package", "#3", NULL),
	                 CLI_OK);
	assert_string_equal(a.pos[0], "sdk-1");
	assert_true(cli_has(&a, "dry-run") && cli_has(&a, "yes"));
	assert_string_equal(cli_nth(&a, "force", 0), "sdk");
	assert_string_equal(cli_nth(&a, "force", 1), "arch");
	assert_int_equal(cli_int(&a, "package", 0), 3);
	/* Everything after the program is its own. */
	assert_int_equal(parse(&a, why, sizeof(why), "tune", "capture", "ls", "-l", "--json", NULL),
	                 CLI_OK);
	assert_int_equal(a.npos, 3);
	assert_false(cli_has(&a, "json"));
	/* A group's default command. */
	assert_int_equal(parse(&a, why, sizeof(why), "tune", NULL), CLI_OK);
	assert_string_equal(cli_cmd_of(&a)->name, "status");
}

static void
test_usage_errors(void **state)
{
	static const struct {
		const char *args[6], *says;
	} cases[] = {
	    {{"statsu"}, "did you mean 'status'?"},
	    {{"lib", "deplyo"}, "did you mean 'deploy'?"},
	    {{"lib", "deploy", "--dryrun"}, "did you mean --dry-run?"},
	    {{"lib", "rollback", "--to", "orignal"}, "did you mean original?"},
	    {{"events", "--limit", "abc"}, "--limit takes a whole number from 1 to 1000"},
	    {{"events", "--limit", "0"}, "not '0'"},
	    {{"status", "extra"}, "status takes no arguments"},
	    {{"tune", "add", "1x2x3", "--trans"}, "--trans needs a value"},
	    {{"tune", "add", "1x2x3", "--trans", "XY"}, "--trans takes NN/NT/TN/TT"},
	    {{"pkg", "match", "--sdk", "6.2"}, "needs --arch"},
	    {{"pkg"}, "pkg needs a command"},
	    {{"lib", "status", "--package", "1"}, "--package is an option of 'deploy'"},
	    {{"--json", "--frobnicate"}, "unknown option '--frobnicate'"},
	};
	struct cli_args a;
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *w = cases[i].args;
		int rc = parse(&a, why, sizeof(why), w[0], w[1], w[2], w[3], w[4], NULL);
		if (rc != CLI_USAGE || strstr(why, cases[i].says) == NULL)
			fail_msg("case %zu (%s %s): rc %d, '%s'", i, w[0], w[1] ? w[1] : "", rc,
			         why);
	}
	assert_int_equal(parse(&a, why, sizeof(why), "lib", "--help", NULL), CLI_HELP);
	assert_string_equal(cli_cmd_of(&a)->name, "lib");
	assert_int_equal(parse(&a, why, sizeof(why), "help", "pkg", "import", NULL), CLI_HELP);
	assert_string_equal(cli_cmd_of(&a)->name, "import");
	assert_int_equal(parse(&a, why, sizeof(why), "--version", NULL), CLI_OK);
}

static void
test_distance(void **state)
{
	assert_int_equal(cli_distance("status", "status"), 0);
	assert_int_equal(cli_distance("statsu", "status"), 1); /* a swap */
	assert_int_equal(cli_distance("deplyo", "deploy"), 1);
	assert_int_equal(cli_distance("rm", "list"), 4);
}

/* What FN printed on stream F (stdout or stderr), read back from a file. */
static char *
capture(FILE *f, void (*fn)(void))
{
	static char buf[8192];
	char path[] = "/tmp/rocmd-test-cli-XXXXXX";
	int fd = mkstemp(path), saved;
	size_t n;
	FILE *in;

	assert_true(fd >= 0);
	fflush(f);
	saved = dup(fileno(f));
	dup2(fd, fileno(f));
	fn();
	fflush(f);
	dup2(saved, fileno(f));
	close(saved);
	in = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, in);
	buf[n] = '\0';
	fclose(in);
	close(fd);
	unlink(path);
	return buf;
}

static void
print_table(void)
{
	static const char *const hdr[] = {"TARGET", "LIBRARY", "STATE"};
	static const char *const row[] = {
	    "sdk-1", "/opt/rocm-6.2.4/lib/rocblas/library/a/long/path", "deployed"};
	struct out_table *t = out_table_new(3, hdr);

	out_table_state_col(t, 2);
	out_table_row(t, row);
	out_table_print(t, stdout);
	out_table_free(t);
}

static void
test_table_width(void **state)
{
	char *s, *line;

	setenv("COLUMNS", "40", 1);
	out_init(0);
	s = capture(stdout, print_table);
	for (line = strtok(s, "\n"); line != NULL; line = strtok(NULL, "\n"))
		assert_true(strlen(line) <= 40);
	unsetenv("COLUMNS");
	out_init(0);
	s = capture(stdout, print_table);
	assert_non_null(strstr(s, "a/long/path")); /* not a terminal: never cut */
	assert_null(strstr(s, "\033["));           /* nor coloured */
}

static struct out_bar bar;

static void
draw(void)
{
	/* An import's bytes unpacked run past the archive's size: 100 % at most. */
	out_bar_draw(&bar, 10, "reading", 546.0 * 1048576, 142.0 * 1048576, "%s",
	             "library/TensileLibrary_lazy_gfx1103.dat and a long tail of text that "
	             "must be cut to the width");
}

static void
draw_hashing(void)
{
	out_bar_draw(&bar, 10, "hashing", 10, 100, "%s", "");
}

static void
test_progress_bar(void **state)
{
	char *s;

	bar.on = 1;
	s = capture(stderr, draw);
	assert_non_null(strstr(s, "100%"));
	assert_null(strstr(s, "546%"));
	assert_true(strlen(s) <= 80 + 4); /* "\r\033[K" and 79 columns */
	/* Measured since the label's first draw: the rate and the time left. */
	bar.t0 -= 10;
	bar.done0 = 0;
	s = capture(stderr, draw);
	assert_non_null(strstr(s, "MiB/s"));
	s = capture(stderr, draw_hashing);
	assert_non_null(strstr(s, " 10%"));
	bar.t0 -= 10;
	bar.done0 = 0;
	s = capture(stderr, draw);
	assert_non_null(strstr(s, "100%"));
}

static void
draw_plain(void)
{
	struct out_bar b = {.plain = 1};

	out_bar_draw(&b, 10, "reading", 1, 100, "%s", "a");
	out_bar_draw(&b, 10, "reading", 50, 100, "%s", "b");
	out_bar_draw(&b, 10, "hashing", 1, 100, "%s", "c");
	out_bar_text(&b, "waiting for %d store job(s) ahead", 1);
	out_bar_text(&b, "waiting for %d store job(s) ahead", 2);
}

/* Off a terminal: a plain line per phase, never a redrawn one. */
static void
test_progress_plain(void **state)
{
	char *s = capture(stderr, draw_plain);

	assert_string_equal(s, "rocmctl: reading: 1 B of 100 B\n"
	                       "rocmctl: hashing: 1 B of 100 B\n"
	                       "rocmctl: waiting for 1 store job(s) ahead\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options_anywhere), cmocka_unit_test(test_usage_errors),
	    cmocka_unit_test(test_distance),         cmocka_unit_test(test_table_width),
	    cmocka_unit_test(test_progress_bar),     cmocka_unit_test(test_progress_plain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
