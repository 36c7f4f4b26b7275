/* Unit tests for the error table: codes, names, messages and JSON-RPC mapping. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/error.h"

static void
test_codes_distinct_from_errno(void **state)
{
	assert_true(ROCMD_EINTERNAL <= -ROCMD_ERROR_BASE);
	assert_true(ROCMD_EUNSAFE < ROCMD_EINTERNAL);
	assert_string_equal(rocmd_err_name(ROCMD_EPERM), "ROCMD_EPERM");
	assert_string_equal(rocmd_err_name(-ENOENT), "ENOENT");
	assert_string_equal(rocmd_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(rocmd_strerror(ROCMD_EFRAME_TOO_BIG), "frame exceeds the size limit");
}

static void
test_rpc_mapping(void **state)
{
	assert_int_equal(rocmd_err_rpc_code(ROCMD_ENOMETHOD), -32601);
	assert_int_equal(rocmd_err_rpc_code(ROCMD_EPARSE), -32700);
	assert_int_equal(rocmd_err_rpc_code(-ENOENT), -32603);
	assert_int_equal(rocmd_err_from_rpc(-32003), ROCMD_EPERM);
	assert_int_equal(rocmd_err_from_rpc(12345), ROCMD_EINTERNAL);
	assert_int_equal(rocmd_err_errno(ENOSPC), ROCMD_ENOSPACE);
	assert_int_equal(rocmd_err_errno(ENOENT), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes_distinct_from_errno),
		cmocka_unit_test(test_rpc_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
