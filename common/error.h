/*
 * The one error table of rocmd. Library-like code returns 0 on success or a
 * negative code: either a negated errno value (-ENOENT, ...) for plain system
 * failures, or one of the ROCMD_E* codes below for everything rocmd itself
 * decides. rocmd_strerror() names both. Each rocmd code also carries the
 * JSON-RPC error code it is reported with on the wire, so the protocol and the
 * client agree on one mapping.
 */
#ifndef ROCMD_ERROR_H
#define ROCMD_ERROR_H

/* XX(name, json-rpc code, message). Never renumber: append only. */
#define ROCMD_ERROR_MAP(XX)                                                                        \
	XX(INTERNAL, -32603, "internal error")                                                     \
	XX(NOMEM, -32603, "out of memory")                                                         \
	XX(INVAL, -32602, "invalid argument")                                                      \
	XX(PARSE, -32700, "invalid JSON")                                                          \
	XX(REQUEST, -32600, "invalid JSON-RPC request")                                            \
	XX(NOMETHOD, -32601, "method not found")                                                   \
	XX(PARAMS, -32602, "invalid params")                                                       \
	XX(FRAME_TOO_BIG, -32600, "frame exceeds the size limit")                                  \
	XX(TOO_DEEP, -32600, "JSON nesting exceeds the depth limit")                               \
	XX(PROTO, -32600, "protocol violation")                                                    \
	XX(VERSION, -32001, "protocol version not supported")                                      \
	XX(HELLO, -32002, "handshake required: send hello first")                                  \
	XX(PERM, -32003, "permission denied")                                                      \
	XX(NOTFOUND, -32004, "not found")                                                          \
	XX(EXISTS, -32005, "already exists")                                                       \
	XX(BUSY, -32006, "resource busy")                                                          \
	XX(LOCKED, -32007, "another instance holds the lock")                                      \
	XX(DB, -32010, "database error")                                                           \
	XX(MIGRATE, -32011, "database migration failed")                                           \
	XX(CORRUPT, -32012, "data is corrupt")                                                     \
	XX(SCHEMA_NEWER, -32013, "database schema is newer than this rocmd")                       \
	XX(CONFIG, -32020, "invalid configuration")                                                \
	XX(CLOSED, -32030, "connection closed")                                                    \
	XX(TRUNCATED, -32031, "truncated input")                                                   \
	XX(CONNECT, -32032, "daemon unreachable")                                                  \
	XX(OVERLOAD, -32033, "too many connections or queued output")                              \
	XX(SHUTDOWN, -32034, "daemon is shutting down")                                            \
	XX(CANCELED, -32040, "operation canceled")                                                 \
	XX(TIMEDOUT, -32041, "operation timed out")                                                \
	XX(UNSUPPORTED, -32042, "not supported on this platform")                                  \
	XX(IO, -32050, "input/output error")                                                       \
	XX(NOSPACE, -32051, "no space left on device")                                             \
	XX(UNSAFE, -32052, "unsafe path or archive entry")

/* rocmd's own codes live below this base so they never collide with -errno. */
#define ROCMD_ERROR_BASE 4000

#define ROCMD_OK 0

/* Codes as negative constants: ROCMD_EINTERNAL = -4000, ROCMD_ENOMEM = -4001, ... */
enum rocmd_error_code {
#define ROCMD_ERR_IDX(name, rpc, msg) ROCMD_IDX_##name,
	ROCMD_ERROR_MAP(ROCMD_ERR_IDX) ROCMD_IDX_COUNT_
#undef ROCMD_ERR_IDX
};
#define ROCMD_ERR_DEFINE(name) (-ROCMD_ERROR_BASE - ROCMD_IDX_##name)
#define ROCMD_EINTERNAL ROCMD_ERR_DEFINE(INTERNAL)
#define ROCMD_ENOMEM ROCMD_ERR_DEFINE(NOMEM)
#define ROCMD_EINVAL ROCMD_ERR_DEFINE(INVAL)
#define ROCMD_EPARSE ROCMD_ERR_DEFINE(PARSE)
#define ROCMD_EREQUEST ROCMD_ERR_DEFINE(REQUEST)
#define ROCMD_ENOMETHOD ROCMD_ERR_DEFINE(NOMETHOD)
#define ROCMD_EPARAMS ROCMD_ERR_DEFINE(PARAMS)
#define ROCMD_EFRAME_TOO_BIG ROCMD_ERR_DEFINE(FRAME_TOO_BIG)
#define ROCMD_ETOO_DEEP ROCMD_ERR_DEFINE(TOO_DEEP)
#define ROCMD_EPROTO ROCMD_ERR_DEFINE(PROTO)
#define ROCMD_EVERSION ROCMD_ERR_DEFINE(VERSION)
#define ROCMD_EHELLO ROCMD_ERR_DEFINE(HELLO)
#define ROCMD_EPERM ROCMD_ERR_DEFINE(PERM)
#define ROCMD_ENOTFOUND ROCMD_ERR_DEFINE(NOTFOUND)
#define ROCMD_EEXISTS ROCMD_ERR_DEFINE(EXISTS)
#define ROCMD_EBUSY ROCMD_ERR_DEFINE(BUSY)
#define ROCMD_ELOCKED ROCMD_ERR_DEFINE(LOCKED)
#define ROCMD_EDB ROCMD_ERR_DEFINE(DB)
#define ROCMD_EMIGRATE ROCMD_ERR_DEFINE(MIGRATE)
#define ROCMD_ECORRUPT ROCMD_ERR_DEFINE(CORRUPT)
#define ROCMD_ESCHEMA_NEWER ROCMD_ERR_DEFINE(SCHEMA_NEWER)
#define ROCMD_ECONFIG ROCMD_ERR_DEFINE(CONFIG)
#define ROCMD_ECLOSED ROCMD_ERR_DEFINE(CLOSED)
#define ROCMD_ETRUNCATED ROCMD_ERR_DEFINE(TRUNCATED)
#define ROCMD_ECONNECT ROCMD_ERR_DEFINE(CONNECT)
#define ROCMD_EOVERLOAD ROCMD_ERR_DEFINE(OVERLOAD)
#define ROCMD_ESHUTDOWN ROCMD_ERR_DEFINE(SHUTDOWN)
#define ROCMD_ECANCELED ROCMD_ERR_DEFINE(CANCELED)
#define ROCMD_ETIMEDOUT ROCMD_ERR_DEFINE(TIMEDOUT)
#define ROCMD_EUNSUPPORTED ROCMD_ERR_DEFINE(UNSUPPORTED)
#define ROCMD_EIO ROCMD_ERR_DEFINE(IO)
#define ROCMD_ENOSPACE ROCMD_ERR_DEFINE(NOSPACE)
#define ROCMD_EUNSAFE ROCMD_ERR_DEFINE(UNSAFE)

/* A human-readable message for any code: rocmd's own, -errno, or 0. */
const char *rocmd_strerror(int err);
/* The symbolic name ("ROCMD_EPERM", "ENOENT"), for logs and --json output. */
const char *rocmd_err_name(int err);
/* The JSON-RPC error code a failure is reported with on the wire. */
int rocmd_err_rpc_code(int err);
/* The rocmd code for a JSON-RPC error code received from a peer (best match). */
int rocmd_err_from_rpc(int rpc_code);
/* The symbolic name of an errno value ("ENOENT"), or NULL: the platform layer
 * (error-unix.c, error-win.c) provides it. */
const char *rocmd_err_errno_name(int errnum);
/* -errno, folding ENOSPC/EIO/ENOMEM onto rocmd's own codes so callers test one name. */
int rocmd_err_errno(int errno_value);

#endif
