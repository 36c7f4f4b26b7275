/*
 * The checks of the tests that run without cmocka (tests/gpu/): CHECK counts
 * a failure and prints what failed, with printf-style words, and carries on;
 * check_report prints the verdict and returns main's exit status.
 */
#ifndef ROCMD_TESTS_CHECK_H
#define ROCMD_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: " __VA_ARGS__);                                              \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static inline int
check_report(void)
{
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

#endif
