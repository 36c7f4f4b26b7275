/*
 * Unit tests for the idle policy (daemon/tune/idle.c): quiet hours parsing, and
 * the decision with its reason for each signal (input, power, GPU users,
 * CPU load only before a job starts, quiet hours across midnight).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/error.h"
#include "daemon/tune/idle.h"

static void
signals_idle(struct rocmd_idle_signals *s)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->input_source, "evdev");
	s->input_idle_s = 600;
	s->logind_idle = -1;
	s->ac = 1;
	strcpy(s->power, "AC online");
	s->gpu_users = 0;
	s->load1 = 0.1;
	s->ncpu = 4;
	s->background_ok = -1;
}

static void
test_quiet_parse(void **state)
{
	char why[128];
	int from, to;

	assert_int_equal(rocmd_idle_parse_quiet(NULL, &from, &to, why, sizeof(why)), 0);
	assert_int_equal(from, -1);
	assert_int_equal(rocmd_idle_parse_quiet("22:00-07:30", &from, &to, why, sizeof(why)), 0);
	assert_int_equal(from, 22 * 60);
	assert_int_equal(to, 7 * 60 + 30);
	assert_int_equal(rocmd_idle_parse_quiet("25:00-07:00", &from, &to, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_non_null(strstr(why, "tune.quiet_hours"));
	assert_int_equal(rocmd_idle_parse_quiet("10:00-10:00", &from, &to, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(rocmd_idle_parse_quiet("10:00-11:00x", &from, &to, why, sizeof(why)),
	                 ROCMD_EINVAL);
	assert_int_equal(rocmd_idle_parse_quiet("9:00-11:00", &from, &to, why, sizeof(why)),
	                 ROCMD_EINVAL);
}

static void
test_decide(void **state)
{
	struct rocmd_idle_policy p = {300, 1, 50, -1, -1};
	struct rocmd_idle_signals s;
	char why[160];
	double wait;

	signals_idle(&s);
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 600, &wait, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "idle for 600 s"));

	s.input_idle_s = 100;
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 600, &wait, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "user active"));
	assert_true(wait > 199.9 && wait < 200.1);

	signals_idle(&s);
	s.ac = 0;
	strcpy(s.power, "battery BAT0");
	assert_int_equal(rocmd_idle_decide(&p, &s, 1, 600, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "on battery (battery BAT0)"));
	p.ac_only = 0;
	assert_int_equal(rocmd_idle_decide(&p, &s, 1, 600, NULL, why, sizeof(why)), 1);
	p.ac_only = 1;

	signals_idle(&s);
	s.gpu_users = 2;
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 600, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "2 other processes using the GPU"));

	/* Load: 3.0 on 4 CPUs is 75% > 50%: no start, but a running job goes on. */
	signals_idle(&s);
	s.load1 = 3.0;
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 600, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "CPU load 3.00"));
	assert_int_equal(rocmd_idle_decide(&p, &s, 1, 600, NULL, why, sizeof(why)), 1);

	/* Unknown signals do not block. */
	signals_idle(&s);
	s.ac = -1;
	s.gpu_users = -1;
	s.load1 = -1;
	s.input_idle_s = -1;
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 600, NULL, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "no input source"));

	/* Windows' background-task window closed. */
	signals_idle(&s);
	s.background_ok = 0;
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 600, NULL, why, sizeof(why)), 0);
}

static void
test_quiet_hours(void **state)
{
	struct rocmd_idle_policy p = {0, 1, 50, 22 * 60, 7 * 60};
	struct rocmd_idle_signals s;
	char why[160];

	signals_idle(&s);
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 23 * 60, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "quiet hours (22:00-07:00)"));
	assert_int_equal(rocmd_idle_decide(&p, &s, 1, 3 * 60, NULL, why, sizeof(why)), 0);
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 7 * 60, NULL, why, sizeof(why)), 1);
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 12 * 60, NULL, why, sizeof(why)), 1);
	p.quiet_from = 9 * 60;
	p.quiet_to = 17 * 60;
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 12 * 60, NULL, why, sizeof(why)), 0);
	assert_int_equal(rocmd_idle_decide(&p, &s, 0, 17 * 60, NULL, why, sizeof(why)), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quiet_parse),
	    cmocka_unit_test(test_decide),
	    cmocka_unit_test(test_quiet_hours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
