/*
 * The error table's lookups: messages, symbolic names and the JSON-RPC codes
 * each rocmd error is reported with. See error.h for the code ranges.
 */
#include "error.h"

#include <errno.h>
#include <string.h>

struct err_entry {
	const char *name;
	int rpc;
	const char *msg;
};

static const struct err_entry err_table[] = {
#define ROCMD_ERR_ROW(name, rpc, msg) {"ROCMD_E" #name, rpc, msg},
	ROCMD_ERROR_MAP(ROCMD_ERR_ROW)
#undef ROCMD_ERR_ROW
};

static const struct err_entry *
err_lookup(int err)
{
	int idx = -err - ROCMD_ERROR_BASE;

	if (idx < 0 || idx >= ROCMD_IDX_COUNT_)
		return NULL;
	return &err_table[idx];
}

const char *
rocmd_strerror(int err)
{
	const struct err_entry *e;

	if (err == 0)
		return "success";
	e = err_lookup(err);
	if (e != NULL)
		return e->msg;
	if (err < 0 && err > -ROCMD_ERROR_BASE)
		return strerror(-err);
	return "unknown error";
}

const char *
rocmd_err_name(int err)
{
	const struct err_entry *e;

	if (err == 0)
		return "OK";
	e = err_lookup(err);
	if (e != NULL)
		return e->name;
	if (err < 0 && err > -ROCMD_ERROR_BASE) {
		const char *n = rocmd_err_errno_name(-err);
		return n != NULL ? n : "ESYSTEM";
	}
	return "EUNKNOWN";
}

int
rocmd_err_rpc_code(int err)
{
	const struct err_entry *e = err_lookup(err);

	if (e != NULL)
		return e->rpc;
	return err_lookup(ROCMD_EINTERNAL)->rpc;
}

int
rocmd_err_from_rpc(int rpc_code)
{
	for (int i = 0; i < ROCMD_IDX_COUNT_; i++)
		if (err_table[i].rpc == rpc_code)
			return -ROCMD_ERROR_BASE - i;
	return ROCMD_EINTERNAL;
}

int
rocmd_err_errno(int errno_value)
{
	switch (errno_value) {
	case 0:
		return 0;
	case ENOMEM:
		return ROCMD_ENOMEM;
	case ENOSPC:
#ifdef EDQUOT /* not in the Windows C runtime */
	case EDQUOT:
#endif
		return ROCMD_ENOSPACE;
	case EIO:
		return ROCMD_EIO;
	case EACCES:
	case EPERM:
		return ROCMD_EPERM;
	default:
		return -errno_value;
	}
}
