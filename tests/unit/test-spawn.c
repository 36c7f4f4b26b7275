/*
 * Unit tests for this program started again (common/spawn.h rocmd_self_*,
 * rocmd_child_start with no path), on POSIX: the child is this very binary,
 * also once the file at its path was replaced (a package upgrade) and when
 * the parent runs under valgrind, where exec'ing /proc/self/exe runs
 * valgrind's tool instead. The same executable plays the child: with
 * --child it attaches to its pipes and answers with its /proc/self/exe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "common/spawn.h"

#define REPLY_MAX 4096
#define WAIT_MS 120000 /* a guard against a hang, not a figure */

/* The child: answers with its own /proc/self/exe and whether the descriptor
 * it was exec'd through is closed. */
static int
child_main(int argc, char **argv)
{
	struct rocmd_child_chan ch;
	char exe[REPLY_MAX] = "";
	ssize_t n;
	uint32_t len;

	if (rocmd_child_attach(argc, argv, &ch) < 0)
		return 3;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
	exe[n > 0 ? n : 0] = '\0';
	if (fcntl(5, F_GETFD) >= 0)
		strcat(exe, " +fd5");
	len = (uint32_t)strlen(exe);
	if (rocmd_child_chan_write(&ch, &len, sizeof(len)) < 0 ||
	    rocmd_child_chan_write(&ch, exe, len) < 0)
		return 4;
	return 0;
}

/* Starts this program again and reads its answer into OUT: 0 or an error. */
static int
ask_self(char *out, size_t outlen, char *why, size_t whylen)
{
	char *argv[] = {(char *)"test-spawn", (char *)"--child", NULL};
	struct rocmd_child *c;
	uint32_t len = 0;
	int err;

	out[0] = '\0';
	if ((err = rocmd_child_new(&c)) < 0)
		return err;
	err = rocmd_child_start(c, NULL, argv, why, whylen);
	if (err == 0)
		err = rocmd_child_read(c, &len, sizeof(len), rocmd_child_now_ms() + WAIT_MS, NULL);
	if (err == 0 && len >= outlen)
		err = ROCMD_EPROTO;
	if (err == 0)
		err = rocmd_child_read(c, out, len, rocmd_child_now_ms() + WAIT_MS, NULL);
	out[err == 0 ? len : 0] = '\0';
	if (err != 0 && why[0] == '\0')
		snprintf(why, whylen, "no answer: %s", rocmd_strerror(err));
	rocmd_child_free(c);
	return err;
}

/* --ask: prints the child's answer, for a parent under valgrind. */
static int
ask_main(void)
{
	char out[REPLY_MAX], why[512] = "";

	if (ask_self(out, sizeof(out), why, sizeof(why)) < 0) {
		printf("failed: %s\n", why);
		return 1;
	}
	printf("%s\n", out);
	return 0;
}

/* --replaced FILE: renames FILE over this program's path, then asks the
 * child, which must still be this program (its file now deleted). */
static int
replaced_main(const char *file)
{
	char want[REPLY_MAX];

	snprintf(want, sizeof(want), "%s", rocmd_self_exe());
	if (rename(file, want) != 0) {
		printf("rename: %s\n", strerror(errno));
		return 1;
	}
	return ask_main();
}

static void
test_self_again(void **state)
{
	char out[REPLY_MAX], why[512] = "", beside[PATH_MAX];
	const char *self = rocmd_self_exe();
	const char *slash = strrchr(self, '/');

	(void)state;
	assert_true(self[0] == '/');
	assert_int_equal(ask_self(out, sizeof(out), why, sizeof(why)), 0);
	/* The same file, and the descriptor it came through not left open. */
	assert_string_equal(out, self);
	assert_int_equal(rocmd_self_beside(slash + 1, beside, sizeof(beside)), 0);
	assert_string_equal(beside, self);
	assert_int_equal(rocmd_self_beside("no-such-helper", beside, sizeof(beside)),
	                 ROCMD_ENOTFOUND);
	assert_int_equal(strncmp(beside, self, (size_t)(slash - self + 1)), 0);
	assert_string_equal(beside + (slash - self + 1), "no-such-helper");
}

/* Copies the file FROM to TO, executable. */
static void
copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	assert_int_equal(close(out), 0);
}

static void
test_self_replaced(void **state)
{
	char dir[] = "/tmp/rocmd-test-spawn-XXXXXX", copy[PATH_MAX], next[PATH_MAX];
	char out[REPLY_MAX], want[PATH_MAX + 32];
	char *argv[] = {copy, (char *)"--replaced", next, NULL};
	FILE *f;
	int st = -1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/test-spawn", dir);
	snprintf(next, sizeof(next), "%s/next", dir);
	copy_file(rocmd_self_exe(), copy);
	/* The "upgrade": a program that answers nothing and says so. */
	assert_non_null(f = fopen(next, "w"));
	fputs("#!/bin/sh\necho the replacement ran\nexit 7\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(next, 0755), 0);
	assert_int_equal(rocmd_child_run(argv, NULL, WAIT_MS, out, sizeof(out), &st), 0);
	snprintf(want, sizeof(want), "%s (deleted)\n", copy);
	assert_string_equal(out, want);
	assert_int_equal(rocmd_child_exit_code(st), 0);
	unlink(copy);
	rmdir(dir);
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static void
test_self_under_valgrind(void **state)
{
	const char *vg = "/usr/bin/valgrind";
	char out[REPLY_MAX], want[PATH_MAX + 2];
	char *argv[] = {(char *)vg, (char *)"-q", (char *)"--error-exitcode=99",
	                (char *)rocmd_self_exe(), (char *)"--ask", NULL};
	int st = -1;

	(void)state;
#ifdef SANITIZED
	skip(); /* valgrind cannot run a sanitizer's build */
#endif
	if (access(vg, X_OK) != 0)
		skip();
	assert_int_equal(rocmd_child_run(argv, NULL, WAIT_MS, out, sizeof(out), &st), 0);
	snprintf(want, sizeof(want), "%s\n", rocmd_self_exe());
	assert_string_equal(out, want);
	assert_int_equal(rocmd_child_exit_code(st), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_again),
		cmocka_unit_test(test_self_replaced),
		cmocka_unit_test(test_self_under_valgrind),
	};

	rocmd_self_init();
	if (argc >= 2 && strcmp(argv[1], "--child") == 0)
		return child_main(argc - 2, argv + 2);
	if (argc == 2 && strcmp(argv[1], "--ask") == 0)
		return ask_main();
	if (argc == 3 && strcmp(argv[1], "--replaced") == 0)
		return replaced_main(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
