/*
 * Unit tests for the configuration file (common/config.c): the defaults, a
 * full valid file, every kind of wrong value with the message a user sees,
 * several problems reported together, invalid JSON with its position, missing
 * files, the limits at their bounds, and docs/CONFIG.md matching the key
 * table. `test-config --print-doc` prints the generated table, to paste into
 * docs/CONFIG.md after changing a key.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "common/error.h"
#include "common/proto.h"

#ifndef ROCMD_SOURCE_DIR
#error "ROCMD_SOURCE_DIR must name the source tree (set by tests/unit/CMakeLists.txt)"
#endif

#define DOC_BEGIN "<!-- BEGIN rocmd_config_write_doc -->\n"
#define DOC_END "<!-- END rocmd_config_write_doc -->\n"

static int
parse(const char *text, struct rocmd_config *cfg, char *why, size_t whylen)
{
	return rocmd_config_parse(text, strlen(text), cfg, why, whylen);
}

static void
assert_defaults(const struct rocmd_config *cfg)
{
	assert_non_null(cfg->state_dir);
	assert_true(cfg->state_dir[0] == '/');
	assert_null(cfg->socket_path);
	assert_string_equal(cfg->admin_group, "rocm");
	assert_string_equal(cfg->log_level, "notice");
	assert_null(cfg->log_file);
	assert_int_equal(cfg->max_connections, 1024);
	assert_int_equal(cfg->max_queued_output, 8 << 20);
	assert_int_equal(cfg->max_frame, ROCMD_PROTO_MAX_FRAME);
}

/* The state folder for the current euid and environment, as a fresh string. */
static char *
state_dir_now(void)
{
	struct rocmd_config cfg = {0};
	char *s;

	if (rocmd_config_defaults(&cfg) != 0)
		return NULL;
	s = strdup(cfg.state_dir);
	rocmd_config_free(&cfg);
	return s;
}

/* Checks the per-user state folders; returns a failure description or NULL. */
static const char *
check_user_state_dirs(void)
{
	static const char *fail;
	char *s;

	setenv("XDG_STATE_HOME", "/xdg/state", 1);
	s = state_dir_now();
	fail = s == NULL || strcmp(s, "/xdg/state/rocmd") != 0 ? "XDG_STATE_HOME ignored" : NULL;
	free(s);
	if (fail != NULL)
		return fail;
	setenv("XDG_STATE_HOME", "relative/ignored", 1);
	setenv("HOME", "/home/someone", 1);
	s = state_dir_now();
	fail = s == NULL || strcmp(s, "/home/someone/.local/state/rocmd") != 0
		       ? "HOME fallback wrong"
		       : NULL;
	free(s);
	return fail;
}

static void
test_defaults(void **state)
{
	struct rocmd_config cfg = {0};
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *xdg = getenv("XDG_STATE_HOME") ? strdup(getenv("XDG_STATE_HOME")) : NULL;

	assert_int_equal(rocmd_config_defaults(&cfg), 0);
	assert_defaults(&cfg);
	rocmd_config_free(&cfg);
	assert_null(cfg.state_dir);
	rocmd_config_free(&cfg);
	rocmd_config_free(NULL);

	if (geteuid() == 0) {
		char *s = state_dir_now();
		pid_t pid;
		int status;

		assert_string_equal(s, "/var/lib/rocmd");
		free(s);
		/* Check the per-user folders as an ordinary user, in a child. */
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			const char *fail = "cannot drop privileges";
			if (setgid(65534) == 0 && setuid(65534) == 0)
				fail = check_user_state_dirs();
			if (fail != NULL)
				fprintf(stderr, "child: %s\n", fail);
			_exit(fail == NULL ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	} else {
		const char *fail = check_user_state_dirs();
		if (fail != NULL)
			fail_msg("%s", fail);
	}
	home != NULL ? setenv("HOME", home, 1) : unsetenv("HOME");
	xdg != NULL ? setenv("XDG_STATE_HOME", xdg, 1) : unsetenv("XDG_STATE_HOME");
	free(home);
	free(xdg);
}

static void
test_full_valid_file(void **state)
{
	static const char text[] =
		"{\n"
		"  \"state_dir\": \"/srv/rocmd\",\n"
		"  \"log\": {\"level\": \"debug\", \"file\": \"/var/log/rocmd.log\"},\n"
		"  \"ipc\": {\n"
		"    \"socket\": \"/run/rocmd-test/r.sock\",\n"
		"    \"admin_group\": \"gpu-admins\",\n"
		"    \"max_connections\": 77,\n"
		"    \"max_queued_output\": 65536,\n"
		"    \"max_frame\": 100000\n"
		"  }\n"
		"}\n";
	struct rocmd_config cfg = {0};
	char why[1024] = "junk";

	assert_int_equal(parse(text, &cfg, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_string_equal(cfg.state_dir, "/srv/rocmd");
	assert_string_equal(cfg.log_level, "debug");
	assert_string_equal(cfg.log_file, "/var/log/rocmd.log");
	assert_string_equal(cfg.socket_path, "/run/rocmd-test/r.sock");
	assert_string_equal(cfg.admin_group, "gpu-admins");
	assert_int_equal(cfg.max_connections, 77);
	assert_int_equal(cfg.max_queued_output, 65536);
	assert_int_equal(cfg.max_frame, 100000);

	/* Parsing again over a filled configuration frees and replaces it;
	 * keys left out keep their defaults; null restores a nullable one. */
	assert_int_equal(parse("{\"log\": {\"file\": null}, \"ipc\": {}}", &cfg, why, sizeof(why)),
			 0);
	assert_defaults(&cfg);
	assert_int_equal(parse("{}", &cfg, why, sizeof(why)), 0);
	assert_defaults(&cfg);
	rocmd_config_free(&cfg);
}

static void
test_example_file_is_the_defaults(void **state)
{
	struct rocmd_config cfg = {0}, def = {0};
	char why[1024];

	assert_int_equal(rocmd_config_load(ROCMD_SOURCE_DIR "/service/rocmd.json", 0, &cfg, why,
					   sizeof(why)),
			 0);
	assert_int_equal(rocmd_config_defaults(&def), 0);
	/* The example is written for the system daemon. */
	assert_string_equal(cfg.state_dir, "/var/lib/rocmd");
	free(cfg.state_dir);
	cfg.state_dir = strdup(def.state_dir);
	{
		cJSON *a = rocmd_config_to_json(&cfg), *b = rocmd_config_to_json(&def);
		assert_true(cJSON_Compare(a, b, 1));
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	rocmd_config_free(&cfg);
	rocmd_config_free(&def);
}

struct bad_case {
	const char *json;
	const char *message; /* the whole reply */
};

static void
expect_problems(const struct bad_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct rocmd_config cfg = {0};
		char why[2048];
		int err = parse(cases[i].json, &cfg, why, sizeof(why));

		if (err != ROCMD_ECONFIG || strcmp(why, cases[i].message) != 0)
			fail_msg("%s\n  got %s: \"%s\"\n  want: \"%s\"", cases[i].json,
				 rocmd_err_name(err), why, cases[i].message);
		assert_defaults(&cfg);
		rocmd_config_free(&cfg);
	}
}

static void
test_wrong_types(void **state)
{
	static const struct bad_case cases[] = {
		{"{\"state_dir\": 5}", "state_dir: expected an absolute path, got number"},
		{"{\"state_dir\": null}", "state_dir: expected an absolute path, got null"},
		{"{\"state_dir\": \"relative/dir\"}",
		 "state_dir: expected an absolute path, got \"relative/dir\""},
		{"{\"state_dir\": \"\"}", "state_dir: must not be empty"},
		/* A Windows path is a relative name on Unix. */
		{"{\"state_dir\": \"C:\\\\rocmd\"}",
		 "state_dir: expected an absolute path, got \"C:\\rocmd\""},
		{"{\"log\": 3}", "log: expected an object, got number"},
		{"{\"log\": null}", "log: expected an object, got null"},
		{"{\"log\": {\"level\": true}}", "log.level: expected a string, got boolean"},
		{"{\"log\": {\"level\": \"loud\"}}",
		 "log.level: expected one of error, warning, notice, info, debug, got \"loud\""},
		{"{\"log\": {\"file\": [\"/x\"]}}",
		 "log.file: expected an absolute path or null, got array"},
		{"{\"log\": {\"file\": \"\"}}", "log.file: must not be empty (use null for the default)"},
		{"{\"ipc\": []}", "ipc: expected an object, got array"},
		{"{\"ipc\": {\"socket\": {}}}", "ipc.socket: expected an absolute path or null, got object"},
		{"{\"ipc\": {\"admin_group\": null}}", "ipc.admin_group: expected a string, got null"},
		{"{\"ipc\": {\"admin_group\": \"\"}}", "ipc.admin_group: must not be empty"},
		{"{\"ipc\": {\"max_connections\": \"10\"}}",
		 "ipc.max_connections: expected an integer in 1..65536, got string"},
		{"{\"ipc\": {\"max_connections\": null}}",
		 "ipc.max_connections: expected an integer in 1..65536, got null"},
		{"{\"ipc\": {\"max_connections\": 2.5}}",
		 "ipc.max_connections: expected an integer in 1..65536, got 2.5"},
		{"{\"ipc\": {\"max_frame\": false}}",
		 "ipc.max_frame: expected an integer in 65536..1048576, got boolean"},
		{"{\"ipc\": {\"max_queued_output\": 1e300}}",
		 "ipc.max_queued_output: expected an integer in 65536..1073741824, got 1.0000000000000001e+300"},
		{"{\"ipc\": {\"max_queued_output\": -1}}",
		 "ipc.max_queued_output: expected an integer in 65536..1073741824, got -1"},
		/* Quoted user text stays on one line. */
		{"{\"log\": {\"level\": \"a\\nb\"}}",
		 "log.level: expected one of error, warning, notice, info, debug, got \"a?b\""},
	};

	expect_problems(cases, sizeof(cases) / sizeof(cases[0]));
}

static void
test_unknown_keys(void **state)
{
	static const struct bad_case cases[] = {
		{"{\"ipc\": {\"max_conections\": 5}}", "ipc.max_conections: unknown key"},
		{"{\"statedir\": \"/x\"}", "statedir: unknown key"},
		{"{\"log\": {\"level\": \"info\", \"colour\": true}}", "log.colour: unknown key"},
		{"{\"ipc.max_frame\": 65536}",
		 "ipc.max_frame: unknown key (nest it: {\"a\": {\"b\": ...}})"},
		{"{\"ipc\": {\"x.y\": 1}}", "ipc.x.y: unknown key"},
		{"{\"state_dir\": {\"x\": 1}}", "state_dir: expected an absolute path, got object"},
		{"{\"IPC\": {}}", "IPC: unknown key"},
		{"{\"ipc\": {\"max_frame\": 65536, \"max_frame\": 70000}}",
		 "ipc.max_frame: duplicate key"},
		{"{\"a\\u0001b\": 1}", "a?b: unknown key"},
	};

	expect_problems(cases, sizeof(cases) / sizeof(cases[0]));
}

static void
test_all_problems_reported(void **state)
{
	static const char text[] = "{\n"
				   "  \"state_dir\": \"/ok/but/not/kept\",\n"
				   "  \"log\": {\"level\": \"verbose\", \"fiel\": null},\n"
				   "  \"ipc\": {\"max_connections\": 0, \"max_frame\": \"big\"},\n"
				   "  \"extra\": 1\n"
				   "}\n";
	struct rocmd_config cfg = {0};
	char why[2048], small[80];
	int err;

	err = parse(text, &cfg, why, sizeof(why));
	assert_int_equal(err, ROCMD_ECONFIG);
	assert_string_equal(why,
			    "log.level: expected one of error, warning, notice, info, debug, got \"verbose\"\n"
			    "log.fiel: unknown key\n"
			    "ipc.max_connections: expected an integer in 1..65536, got 0\n"
			    "ipc.max_frame: expected an integer in 65536..1048576, got string\n"
			    "extra: unknown key");
	/* Nothing is applied from a file with problems, not even the good key. */
	assert_defaults(&cfg);
	assert_string_not_equal(cfg.state_dir, "/ok/but/not/kept");

	/* A small buffer keeps whole lines and says how many it left out. */
	err = parse(text, &cfg, small, sizeof(small));
	assert_int_equal(err, ROCMD_ECONFIG);
	assert_string_equal(small, "log.level: expected one of error, warning, notice, info, debug, "
				   "got \"verbose\"");
	err = parse(text, &cfg, why, 150);
	assert_string_equal(why,
			    "log.level: expected one of error, warning, notice, info, debug, got \"verbose\"\n"
			    "log.fiel: unknown key\n"
			    "(and 3 more)");
	/* No buffer at all is fine too. */
	assert_int_equal(parse(text, &cfg, NULL, 0), ROCMD_ECONFIG);
	assert_defaults(&cfg);
	rocmd_config_free(&cfg);
}

static void
test_invalid_json(void **state)
{
	static const struct bad_case cases[] = {
		{"{\n  \"log\": {\n    \"level\": \n  }\n}", "invalid JSON at line 4, column 3"},
		/* cJSON places a trailing comma's error at the end of the text. */
		{"{\"state_dir\": \"/x\",}", "invalid JSON at line 1, column 21"},
		{"{\"log\": {\"level\": \"info\",}, \"ipc\": {}}", "invalid JSON at line 1, column 27"},
		{"{\"a\" 1}", "invalid JSON at line 1, column 6"},
		{"{} trailing", "invalid JSON at line 1, column 4"},
		{"{\"a\": 1", "invalid JSON at line 1, column 8"},
		{"", "empty: expected a JSON object (write {} for all defaults)"},
		{" \n\t ", "empty: expected a JSON object (write {} for all defaults)"},
		{"[]", "expected a JSON object at the top level, got array"},
		{"\"text\"", "expected a JSON object at the top level, got string"},
		{"null", "expected a JSON object at the top level, got null"},
		{"{\"log\": {\"file\": \"/a\\u0000b\"}}",
		 "invalid JSON at line 1, column 21: \\u0000 is not allowed"},
		{"{\"ipc\": {\"admin_group\": \"r\xc3\x28\"}}",
		 "invalid JSON at line 1, column 27: not UTF-8"},
	};
	struct rocmd_config cfg = {0};
	char why[256];

	expect_problems(cases, sizeof(cases) / sizeof(cases[0]));

	/* An embedded NUL byte, which strlen-based code would not see. */
	assert_int_equal(rocmd_config_parse("{}\0{\"x\":1}", 10, &cfg, why, sizeof(why)),
			 ROCMD_ECONFIG);
	assert_string_equal(why, "invalid JSON at line 1, column 3: a NUL byte");
	/* Escaped backslash before "u0000" is ordinary text; valid UTF-8 passes. */
	assert_int_equal(parse("{\"ipc\": {\"admin_group\": \"a\\\\u0000 \xc3\xa9\"}}", &cfg, why,
			       sizeof(why)),
			 0);
	assert_string_equal(cfg.admin_group, "a\\u0000 \xc3\xa9");
	rocmd_config_free(&cfg);
}

static void
check_int_bounds(const char *section_key, const char *key, int64_t min, int64_t max)
{
	char text[256], why[512];
	struct rocmd_config cfg = {0};
	const int64_t ok[] = {min, max}, bad[] = {min - 1, max + 1};

	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), "{\"ipc\": {\"%s\": %lld}}", key, (long long)ok[i]);
		if (parse(text, &cfg, why, sizeof(why)) != 0)
			fail_msg("%s refused: %s", text, why);
		if (strcmp(key, "max_connections") == 0)
			assert_int_equal(cfg.max_connections, ok[i]);
		else if (strcmp(key, "max_frame") == 0)
			assert_int_equal(cfg.max_frame, ok[i]);
		else
			assert_int_equal(cfg.max_queued_output, ok[i]);
	}
	for (int i = 0; i < 2; i++) {
		char want[256];

		snprintf(text, sizeof(text), "{\"ipc\": {\"%s\": %lld}}", key, (long long)bad[i]);
		snprintf(want, sizeof(want), "%s: expected an integer in %lld..%lld, got %lld",
			 section_key, (long long)min, (long long)max, (long long)bad[i]);
		assert_int_equal(parse(text, &cfg, why, sizeof(why)), ROCMD_ECONFIG);
		assert_string_equal(why, want);
		assert_defaults(&cfg);
	}
	rocmd_config_free(&cfg);
}

static void
test_limits_at_bounds(void **state)
{
	check_int_bounds("ipc.max_connections", "max_connections", 1, 65536);
	check_int_bounds("ipc.max_queued_output", "max_queued_output", 64 << 10, 1 << 30);
	check_int_bounds("ipc.max_frame", "max_frame", 64 << 10, ROCMD_PROTO_MAX_FRAME);
}

static void
test_missing_file(void **state)
{
	struct rocmd_config cfg = {0};
	const char *path = "/nonexistent-rocmd-test/rocmd.json";
	char why[512];

	assert_int_equal(rocmd_config_load(path, 1, &cfg, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_defaults(&cfg);
	assert_int_equal(rocmd_config_load(path, 0, &cfg, why, sizeof(why)), ROCMD_ECONFIG);
	assert_string_equal(why, "/nonexistent-rocmd-test/rocmd.json: No such file or directory");
	assert_defaults(&cfg);
	/* A folder is not a configuration file, missing_ok or not. */
	assert_int_equal(rocmd_config_load("/", 1, &cfg, why, sizeof(why)), ROCMD_ECONFIG);
	assert_string_equal(why, "/: not a regular file");
	assert_defaults(&cfg);
	rocmd_config_free(&cfg);
}

static void
test_load_file(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char tpl[512], why[512];
	struct rocmd_config cfg = {0};
	FILE *fp;
	int fd;

	snprintf(tpl, sizeof(tpl), "%s/rocmd-test-config-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	fd = mkstemp(tpl);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	fputs("{\"ipc\": {\"max_connections\": 9}}\n", fp);
	fclose(fp);
	assert_int_equal(rocmd_config_load(tpl, 0, &cfg, why, sizeof(why)), 0);
	assert_int_equal(cfg.max_connections, 9);
	fp = fopen(tpl, "w");
	fputs("{\"ipc\": {\"max_connections\": 0}}\n", fp);
	fclose(fp);
	assert_int_equal(rocmd_config_load(tpl, 0, &cfg, why, sizeof(why)), ROCMD_ECONFIG);
	assert_string_equal(why, "ipc.max_connections: expected an integer in 1..65536, got 0");
	assert_defaults(&cfg);
	unlink(tpl);
	rocmd_config_free(&cfg);
}

static void
test_to_json_round_trip(void **state)
{
	static const char text[] = "{\"state_dir\": \"/srv/r\", \"log\": {\"file\": \"/l\"}, "
				   "\"ipc\": {\"max_frame\": 70000, \"socket\": \"/s\"}}";
	struct rocmd_config cfg = {0}, again = {0};
	char why[512], *printed;
	cJSON *j, *j2;

	assert_int_equal(parse(text, &cfg, why, sizeof(why)), 0);
	j = rocmd_config_to_json(&cfg);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ipc"), "admin_group")->valuestring,
			    "rocm");
	printed = cJSON_Print(j);
	assert_int_equal(parse(printed, &again, why, sizeof(why)), 0);
	j2 = rocmd_config_to_json(&again);
	assert_true(cJSON_Compare(j, j2, 1));
	assert_int_equal(again.max_frame, 70000);
	assert_string_equal(again.log_file, "/l");
	free(printed);
	cJSON_Delete(j);
	cJSON_Delete(j2);

	/* Nulls come out as JSON null. */
	assert_int_equal(parse("{}", &cfg, why, sizeof(why)), 0);
	j = rocmd_config_to_json(&cfg);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ipc"), "socket")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "log"), "file")));
	cJSON_Delete(j);
	rocmd_config_free(&cfg);
	rocmd_config_free(&again);
}

static char *
generated_doc(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	assert_non_null(mem);
	assert_int_equal(rocmd_config_write_doc(mem), 0);
	fclose(mem);
	return buf;
}

static void
test_doc_matches_table(void **state)
{
	const char *path = ROCMD_SOURCE_DIR "/docs/CONFIG.md";
	char *want = generated_doc(), *doc, *begin, *end;
	FILE *fp = fopen(path, "rb");
	long n;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	doc = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(doc, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);

	begin = strstr(doc, DOC_BEGIN);
	end = begin != NULL ? strstr(begin, DOC_END) : NULL;
	if (begin == NULL || end == NULL)
		fail_msg("%s: markers %s / %s missing", path, DOC_BEGIN, DOC_END);
	begin += strlen(DOC_BEGIN);
	*end = '\0';
	if (strcmp(begin, want) != 0)
		fail_msg("%s is out of date with common/config.c; regenerate its table with "
			 "`test-config --print-doc`. Expected:\n%s",
			 path, want);
	free(doc);
	free(want);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_valid_file),
		cmocka_unit_test(test_example_file_is_the_defaults),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_all_problems_reported),
		cmocka_unit_test(test_invalid_json),
		cmocka_unit_test(test_limits_at_bounds),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_to_json_round_trip),
		cmocka_unit_test(test_doc_matches_table),
	};

	if (argc > 1 && strcmp(argv[1], "--print-doc") == 0)
		return rocmd_config_write_doc(stdout) == 0 ? 0 : 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
